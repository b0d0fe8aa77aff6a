//! Seed 003's redundant data bundling done by the `rdb` middlebox at the router, for senders
//! whose kernels have no RDB: thin streams over the seed's testbed link (5000 kbit/s, pfifo 63,
//! 150 ms RTT) with 10 % uniform loss on the data direction, once plain and once with the
//! middlebox. With it, the bytes of a lost packet reach the receiver in the next packet (an RDB
//! hit) instead of in a retransmission, and the ACK latency's 99th percentile falls from a
//! retransmission's to about one RTT plus one ITT.
//!
//! The emulated test runs real Linux senders and receivers (needs root; without it the test says
//! SKIPPED and why, and fails under `LASTHOP_ROOT_TESTS=1`): the receiving kernel must take the
//! rewritten segments (no resets, every byte delivered and checked by `thin-recv`, which
//! compares each byte with the sender's pattern). The simulated test runs the same scenario
//! with virtual payloads.

mod common;

use pcap_file::pcap::PcapReader;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

const SENDER: [u8; 4] = [198, 18, 0, 1];

/// Four thin streams of 120 B every 30:3 ms for 15 s from s to r, Nagle off and linear timeouts
/// on the streams' own sockets; `MBOX` becomes the middlebox (or nothing).
const SCENARIO: &str = r#"
name = "rdb"
duration = "21s"
link = "LINK"
link_set = { down = { loss = { probability = 0.1 } } }
[hosts.s]
side = "fixed"
[hosts.r]
side = "mobile"
# An ACK for every segment in both modes (RDBv2 asks the receiver for quick ACKs too).
tcp = { delayed_ack = "off" }
route = { quickack = true }
[[flows]]
kind = "thin"
from = "s"
to = "r"
streams = 4
payload = "120:0"
itt = "30:3"
duration = "15s"
tcp = { nagle = false, thin_linear_timeouts = true }
MBOX
"#;

/// SPIFL 8, the seed's "RDB 8" (extract §3.4): at 150 ms and 30 ms a stream has about 5
/// packets in flight, so it bundles on every packet.
const RDB: &str = "[[middleboxes]]\nkind = \"rdb\"\nhosts = [\"s\"]\npif_limit = 8\n";

/// One TCP packet of a capture.
struct Seg {
    t: u64,
    from_sender: bool,
    /// The sender's port (its source port for data, destination for ACKs).
    port: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    len: u32,
    ip_id: u16,
    /// The TCP checksum verifies (true when the payload was not all captured).
    checksum_ok: bool,
}

fn segments(pcap: &Path) -> Vec<Seg> {
    let mut r = PcapReader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let d = &p.data;
        if d[9] != 6 {
            continue;
        }
        let ihl = usize::from(d[0] & 0x0f) * 4;
        let tcp = &d[ihl..];
        let doff = usize::from(tcp[12] >> 4) * 4;
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let from_sender = d[12..16] == SENDER;
        let ports = (
            u16::from_be_bytes([tcp[0], tcp[1]]),
            u16::from_be_bytes([tcp[2], tcp[3]]),
        );
        let whole = p.orig_len as usize == d.len();
        let checksum_ok = !whole || {
            let mut pseudo = d[12..20].to_vec();
            pseudo.extend_from_slice(&[0, 6]);
            pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
            pseudo.extend_from_slice(tcp);
            ones_sum(&pseudo) == 0xffff
        };
        out.push(Seg {
            t: p.timestamp.as_nanos() as u64,
            from_sender,
            port: if from_sender { ports.0 } else { ports.1 },
            seq: be32(&tcp[4..]),
            ack: be32(&tcp[8..]),
            flags: tcp[13],
            len: p.orig_len - (ihl + doff) as u32,
            ip_id: u16::from_be_bytes([d[4], d[5]]),
            checksum_ok,
        });
    }
    out
}

/// The ones'-complement sum of 16-bit words (0xffff over a segment with a right checksum).
fn ones_sum(b: &[u8]) -> u16 {
    let mut s: u64 = b
        .chunks(2)
        .map(|c| u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// What the two captures of one run show.
#[derive(Debug)]
struct Outcome {
    /// New-data packets the sender sent (sender capture).
    data_packets: usize,
    /// Data packets the sender sent again (sender capture).
    retransmissions: usize,
    /// Retransmissions that brought the receiver bytes it had not had: the only copy.
    retransmission_only_copy: usize,
    /// Packets that brought the receiver bytes from before their own original start: a lost
    /// packet's bytes bundled into a later one.
    rdb_hits: usize,
    /// Packets arriving with more than the 120 B written.
    bundled: usize,
    /// ACK latency (sender capture: first sending to the first ACK covering it), ms.
    p99_ms: f64,
    resets: usize,
    bad_checksums: usize,
    /// Every stream's bytes all arrived.
    complete: bool,
}

fn outcome(dir: &Path) -> Outcome {
    let sent = segments(&dir.join("s.pcap"));
    let got = segments(&dir.join("r.pcap"));
    // Sender side, per stream: its first data sequence, which packets were retransmissions,
    // and each new segment's first sending and end.
    let mut nxt: HashMap<u16, u32> = HashMap::new();
    let mut isn: HashMap<u16, u32> = HashMap::new();
    let mut retx: HashSet<(u16, u16)> = HashSet::new();
    let mut original: HashMap<(u16, u16), u32> = HashMap::new();
    let mut pending: BTreeMap<u16, Vec<(u32, u64)>> = BTreeMap::new();
    let mut lat = vec![];
    let mut data_packets = 0;
    for s in &sent {
        if s.from_sender && s.len > 0 {
            let n = nxt.entry(s.port).or_insert(s.seq);
            isn.entry(s.port).or_insert(s.seq);
            original.insert((s.port, s.ip_id), s.seq);
            if (s.seq.wrapping_sub(*n) as i32) < 0 {
                retx.insert((s.port, s.ip_id));
            } else {
                *n = s.seq.wrapping_add(s.len);
                data_packets += 1;
                pending.entry(s.port).or_default().push((*n, s.t));
            }
        } else if !s.from_sender && s.flags & 0x10 != 0 {
            let p = pending.entry(s.port).or_default();
            let covered = p
                .iter()
                .take_while(|(end, _)| (s.ack.wrapping_sub(*end) as i32) >= 0)
                .count();
            lat.extend(p.drain(..covered).map(|(_, t)| (s.t - t) as f64 / 1e6));
        }
    }
    lat.sort_by(f64::total_cmp);
    let p99 = lat[(lat.len() * 99).div_ceil(100) - 1];
    // Receiver side: which bytes of each stream arrived, packet by packet.
    let mut have: HashMap<u16, Vec<bool>> = HashMap::new();
    let (mut only, mut hits, mut bundled) = (0, 0, 0);
    for s in got.iter().filter(|s| s.from_sender && s.len > 0) {
        let Some(&base) = isn.get(&s.port) else {
            continue;
        };
        let from = s.seq.wrapping_sub(base) as usize;
        let h = have.entry(s.port).or_default();
        if h.len() < from + s.len as usize {
            h.resize(from + s.len as usize, false);
        }
        let new = h[from..from + s.len as usize].iter().any(|b| !b);
        let orig = original.get(&(s.port, s.ip_id)).copied().unwrap_or(s.seq);
        let own = orig.wrapping_sub(base) as usize;
        if s.len > 120 {
            bundled += 1;
        }
        if retx.contains(&(s.port, s.ip_id)) {
            only += usize::from(new);
        } else if own > from && h[from..own].iter().any(|b| !b) {
            hits += 1;
        }
        h[from..from + s.len as usize].fill(true);
    }
    let complete = nxt.iter().all(|(port, &end)| {
        let n = end.wrapping_sub(isn[port]) as usize;
        have.get(port)
            .is_some_and(|h| h.len() >= n && h[..n].iter().all(|&b| b))
    });
    Outcome {
        data_packets,
        retransmissions: retx.len(),
        retransmission_only_copy: only,
        rdb_hits: hits,
        bundled,
        p99_ms: p99,
        resets: sent
            .iter()
            .chain(&got)
            .filter(|s| s.flags & 0x04 != 0)
            .count(),
        bad_checksums: got
            .iter()
            .filter(|s| s.from_sender && s.len > 0 && !s.checksum_ok)
            .count(),
        complete,
    }
}

fn write_scenario(dir: &Path, name: &str, mbox: &str) -> std::path::PathBuf {
    let link =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links/seed003-testbed.toml");
    let text = SCENARIO
        .replace("LINK", link.to_str().unwrap())
        .replace("MBOX", mbox);
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// What a log of `lasthop app` says: the sum of its rows of `event`, and whether it has an error.
fn log_sum(path: &Path, event: &str) -> (u64, bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sum = 0;
    let mut error = false;
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f[1] == event {
            sum += f[2].parse::<u64>().unwrap();
        }
        error |= f[1] == "error";
    }
    (sum, error)
}

/// The expectations of both modes, worked out from the seed's parameters:
/// - 4 streams × 15 s / 30 ms ≈ 2000 writes; 10 % uniform loss drops one data packet in ten.
/// - Without RDB each lost packet's bytes can only come in a retransmission: about one data
///   packet in ten (fewer packets when a stall makes the sender put several writes in one).
/// - With RDB (SPIFL 8: ~5 packets in flight, always thin) every new packet carries all the
///   unacknowledged bytes before it (at most 11 × 120 B fit the 1448 B MSS), so a lost packet's
///   bytes arrive 30 ms later in the next packet, unless that is lost too (10 %: then the one
///   after): about one hit per ten packets. Only a stream's last packet has no next one, so
///   at most a few retransmissions remain the only copy.
fn compare(tcp: &Outcome, rdb: &Outcome) {
    assert!(
        tcp.complete && rdb.complete,
        "all bytes arrived: {tcp:?} {rdb:?}"
    );
    assert_eq!((tcp.resets, rdb.resets), (0, 0), "no resets");
    let tenth =
        |n: usize, o: &Outcome| (o.data_packets / 20..=o.data_packets * 3 / 20).contains(&n);
    assert!(
        tenth(tcp.retransmission_only_copy, tcp),
        "without RDB a lost packet's bytes come by retransmission: {tcp:?}"
    );
    assert!(
        tenth(rdb.rdb_hits, rdb)
            && rdb.retransmission_only_copy * 10 <= tcp.retransmission_only_copy
            && rdb.retransmissions * 10 <= tcp.retransmissions,
        "with RDB the next packet brings them: {rdb:?} against {tcp:?}"
    );
    // Nine packets in ten arrive, and nearly each carries earlier bytes (all but a stream's
    // first, and any sent with nothing unacknowledged before it).
    assert!(
        rdb.bundled * 10 > rdb.data_packets * 8,
        "nearly every packet bundles: {rdb:?}"
    );
    // ACK latency: a lost segment waits a retransmission (≥ 150 ms more) without RDB, one ITT
    // (30 ms, 60 ms for two losses in a row) with it: 99th percentiles about 330+ and 180 ms.
    assert!(
        rdb.p99_ms < 250.0 && tcp.p99_ms > 280.0,
        "ACK latency p99: RDB {} ms, TCP {} ms",
        rdb.p99_ms,
        tcp.p99_ms
    );
}

#[test]
fn sim_rdb_bundles_virtual_payloads() {
    let tmp = tempfile::tempdir().unwrap();
    let mut out = vec![];
    for (name, mbox) in [("tcp", ""), ("rdb", RDB)] {
        let spec = write_scenario(tmp.path(), name, mbox);
        let dir = tmp.path().join(format!("sim-{name}"));
        common::lasthop_ok(&[
            "sim",
            spec.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        out.push(outcome(&dir));
    }
    println!("sim: TCP {:?}\nsim: RDB {:?}", out[0], out[1]);
    compare(&out[0], &out[1]);
}

#[test]
fn emu_rdb_middlebox_repairs_losses_with_the_next_packet() {
    if !common::can_emulate("emu_rdb_middlebox_repairs_losses_with_the_next_packet") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut out = vec![];
    for (name, mbox) in [("tcp", ""), ("rdb", RDB)] {
        let spec = write_scenario(tmp.path(), name, mbox);
        let dir = tmp.path().join(format!("emu-{name}"));
        let o = common::lasthop_ok(&[
            "emu",
            spec.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        println!("{o}");
        // The real receiver checked every byte against the sender's pattern and read them all.
        let (sent, e1) = log_sum(&dir.join("flow0-send.csv"), "sent");
        let (read, e2) = log_sum(&dir.join("flow0-recv.csv"), "eof");
        assert!(!e1 && !e2, "{name}: a program logged an error");
        assert_eq!(read, sent, "{name}: bytes read by the receiver");
        // 4 streams × ~500 writes × 120 B.
        assert!((220_000..260_000).contains(&sent), "{name}: {sent} bytes");
        out.push(outcome(&dir));
    }
    println!("emu: TCP {:?}\nemu: RDB {:?}", out[0], out[1]);
    compare(&out[0], &out[1]);
    // Real bytes: every data segment the receiver got, rewritten or not, has a right checksum.
    assert_eq!((out[0].bad_checksums, out[1].bad_checksums), (0, 0));
}

#[test]
fn emu_refuses_a_flow_tcp_key_without_a_socket_option() {
    if !common::can_emulate("emu_refuses_a_flow_tcp_key_without_a_socket_option") {
        return;
    }
    // `delayed_ack` is a model key (fine in simulation) that Linux sets per host, not per
    // socket: the emulator stops before it creates anything, naming the key.
    let tmp = tempfile::tempdir().unwrap();
    let spec = write_scenario(tmp.path(), "bad", "");
    let text = std::fs::read_to_string(&spec).unwrap().replace(
        "tcp = { nagle = false, thin_linear_timeouts = true }",
        "tcp = { nagle = false, delayed_ack = \"off\" }",
    );
    std::fs::write(&spec, text).unwrap();
    let dir = tmp.path().join("out");
    let e = common::lasthop_err(&[
        "emu",
        spec.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        e.contains("flows[0].tcp.delayed_ack") && e.contains("set it on the host"),
        "{e}"
    );
}
