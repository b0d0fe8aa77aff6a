//! Seed 004's workload and middlebox emulated with real Linux: repeated short transfers
//! (`lasthop app repeat-send` / `repeat-recv`) and the TCP rate controller rewriting the windows
//! of real ACKs. Needs root; without it the test says SKIPPED and why (and fails when
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use pcap_file::pcap::PcapReader;
use std::path::Path;

const LINK: &str = r#"
mtu = "1500B"
[both]
rate = "2Mbit"
delay = "10ms"
lsb = "1500B"
link_ack = false
[down.queue]
packets = 500
"#;

/// Two pairs across a 2 Mbit/s, 10 ms link: a greedy transfer s0 -> r0 and repeated 10 KB
/// transfers s1 -> r1 with 250 ms pauses, behind the rate controller (windows only).
const SCENARIO: &str = r#"
name = "emu-seed004"
duration = "4s"
link = "link.toml"
[hosts.s]
side = "fixed"
count = 2
[hosts.r]
side = "mobile"
count = 2
[[flows]]
kind = "bulk"
from = "s0"
to = "r0"
bytes = 4000000
[[flows]]
kind = "repeat"
from = "s1"
to = "r1"
bytes = 10240
pause = "250ms"
[[middleboxes]]
kind = "rate_control"
pace_acks = false
"#;

/// One TCP segment of a capture.
struct Seg {
    /// Capture time, ns (the emulator's clock: when it read or wrote the packet at the TUN).
    t: u64,
    src: [u8; 4],
    flags: u8,
    window: u16,
    /// The window scale option, if the segment carries one.
    ws: Option<u8>,
    seq: u32,
    ack: u32,
    len: u32,
}

fn tcp_packets(path: &Path) -> Vec<Seg> {
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let d = &p.data;
        if d.len() < 40 || d[9] != 6 {
            continue;
        }
        let ihl = usize::from(d[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([d[2], d[3]]));
        let t = &d[ihl..];
        let word = |i: usize| u32::from_be_bytes([t[i], t[i + 1], t[i + 2], t[i + 3]]);
        let (flags, window) = (t[13], u16::from_be_bytes([t[14], t[15]]));
        let doff = usize::from(t[12] >> 4) * 4;
        let mut ws = None;
        let mut o = &t[20..doff.min(t.len())];
        while let Some((&k, rest)) = o.split_first() {
            match k {
                0 => break,
                1 => o = rest,
                _ => {
                    let Some(&len) = rest.first() else { break };
                    let len = usize::from(len);
                    if len < 2 || len > o.len() {
                        break;
                    }
                    if k == 3 && len == 3 {
                        ws = Some(o[2]);
                    }
                    o = &o[len..];
                }
            }
        }
        out.push(Seg {
            t: p.timestamp.as_nanos() as u64,
            src: [d[12], d[13], d[14], d[15]],
            flags,
            window,
            ws,
            seq: word(4),
            ack: word(8),
            len: (total - ihl - doff) as u32,
        });
    }
    out
}

/// The base round trip the rate controller measures for the flow from `sender`, from that
/// host's capture (taken where the router sees its packets): the handshake's sender side (the
/// SYN-ACK to the sender's ACK of it) plus the smallest receiver-side sample (a data segment to
/// the first ACK covering it, the newest segment it covers), as `rate_control.rs` takes them,
/// over the ACKs captured before `until` ns.
fn router_base_rtt_ns(capture: &[Seg], sender: [u8; 4], until: u64) -> (u64, u64) {
    let synack = capture
        .iter()
        .position(|p| p.src != sender && p.flags & 0x12 == 0x12)
        .expect("a SYN-ACK");
    let sender_side = capture[synack..]
        .iter()
        .find(|p| p.src == sender)
        .map(|p| p.t - capture[synack].t)
        .expect("the sender's ACK of the SYN-ACK");
    let mut probes: std::collections::VecDeque<(u32, u64)> = Default::default();
    let mut receiver_side = u64::MAX;
    for p in capture[synack..].iter().take_while(|p| p.t < until) {
        if p.src == sender {
            if p.len > 0 {
                probes.push_back((p.seq.wrapping_add(p.len), p.t));
            }
            continue;
        }
        let mut newest = None;
        while let Some(&(end, t)) = probes.front() {
            if (p.ack.wrapping_sub(end) as i32) < 0 {
                break;
            }
            newest = Some(t);
            probes.pop_front();
        }
        if let Some(t) = newest {
            receiver_side = receiver_side.min(p.t - t);
        }
    }
    (sender_side, receiver_side)
}

#[test]
fn emu_repeated_transfers_and_rate_control_on_real_linux() {
    if !common::can_emulate("emu_repeated_transfers_and_rate_control_on_real_linux") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("link.toml"), LINK).unwrap();
    let spec = tmp.path().join("scenario.toml");
    std::fs::write(&spec, SCENARIO).unwrap();
    let out = tmp.path().join("out");
    let stdout = common::lasthop_ok(&[
        "emu",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    println!("{stdout}");

    // Repeated transfers: each a complete connection from s1 (198.18.0.2), one after another
    // with at least the 250 ms pause between one's end and the next one's SYN. Each takes
    // about 2 round trips of 20 ms plus 10 KB at up to 2 Mbit/s (41 ms): at least 6 fit in 4 s.
    let rows = std::fs::read_to_string(out.join("connections.csv")).unwrap();
    let mut header = rows.lines().next().unwrap().split(',');
    let col = |name: &str| header.clone().position(|c| c == name).unwrap();
    let (client, start, end, complete) =
        (col("client"), col("start_s"), col("end_s"), col("complete"));
    header.next();
    let transfers: Vec<(f64, f64, bool)> = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[client].starts_with("198.18.0.2:"))
        .map(|r| {
            (
                r[start].parse().unwrap(),
                r[end].parse().unwrap(),
                r[complete] == "1",
            )
        })
        .collect();
    assert!(transfers.len() >= 6, "{transfers:?}");
    assert!(
        transfers[..transfers.len() - 1].iter().all(|t| t.2),
        "{transfers:?}"
    );
    for w in transfers.windows(2) {
        assert!(w[1].0 - w[0].1 >= 0.249, "pause too short: {w:?}");
    }

    // Rate control: the router rewrote r0's ACKs to the share times the flow's base round trip
    // as the router measured it, in whole 1460-byte segments of 1500 bytes on the wire. That
    // round trip is about 26 ms (a 1500-byte packet takes 6 ms at 2 Mbit/s, plus 10 ms each way
    // and r0's quick ACK), but it is measured on real hosts and a late handshake ACK or a first
    // segment queued behind the other flow's burst lengthens it for the flow's life (the window
    // built on it keeps that queue standing), so the window is worked out from the capture. Two
    // open flows share 2 Mbit/s: 125 000 bytes/s each, at 26 ms 2.2 packets: the floor of 2
    // segments; while the short flow pauses, r0's flow has the whole 250 000 bytes/s, 4.3
    // packets: 4 segments. So the ACKs r0 (198.19.0.1) sent after the first second offer s0 at
    // most the lone flow's window (rounded down to r0's window scale, and an edge already
    // offered kept), where Linux's own would offer tens of kilobytes.
    let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
    assert!(events.contains(",mbox_rewrite,up,"), "no ACK was rewritten");
    let s0 = tcp_packets(&out.join("s0.pcap"));
    // As the router knew it at 1 s: the windows checked below come after, from that round trip
    // or a shorter one it measured later.
    let (sender_side, receiver_side) = router_base_rtt_ns(&s0, [198, 18, 0, 1], 1_000_000_000);
    let rtt = sender_side + receiver_side;
    println!("base round trip at the router at 1 s: {sender_side} + {receiver_side} ns");
    assert!(
        (25_000_000..100_000_000).contains(&rtt),
        "base round trip {rtt} ns: the link alone gives about 26 ms"
    );
    // The window at 250 000 bytes/s, with 0.5 ms of slack for where the router's clock read
    // the packets against the capture's.
    let segments = |rtt_ns: u64| (250_000 * rtt_ns / 1_500 / 1_000_000_000).max(2);
    let lone = segments(rtt + 500_000) * 1460;
    let scale = s0
        .iter()
        .find(|p| p.src == [198, 19, 0, 1] && p.flags & 0x12 == 0x12)
        .and_then(|p| p.ws)
        .unwrap_or(0);
    let after_1s =
        |p: &&Seg| p.src == [198, 19, 0, 1] && p.t > 1_000_000_000 && p.flags & 0x02 == 0;
    let windows: Vec<u64> = s0
        .iter()
        .filter(after_1s)
        .map(|p| u64::from(p.window) << scale)
        .collect();
    assert!(windows.len() > 50, "{} ACKs after 1 s", windows.len());
    let mut sorted = windows.clone();
    sorted.sort_unstable();
    let (median, max) = (sorted[sorted.len() / 2], sorted[sorted.len() - 1]);
    assert!(
        max <= lone,
        "largest window {max} (scale {scale}), above the lone flow's {lone} at {rtt} ns"
    );
    // Never below the floor of 2 segments (r0 itself offers far more), rounded to the scale.
    let floor = ((2 * 1460) >> scale) << scale;
    assert!(
        sorted[0] >= floor,
        "smallest window {} (scale {scale}), under the floor {floor}",
        sorted[0]
    );
    // What r0 itself offered: the rewriting cut it at least tenfold.
    let mut own: Vec<u64> = tcp_packets(&out.join("r0.pcap"))
        .iter()
        .filter(after_1s)
        .map(|p| u64::from(p.window) << scale)
        .collect();
    own.sort_unstable();
    assert!(
        own[own.len() / 2] >= 10 * median,
        "r0 offered {} (median)",
        own[own.len() / 2]
    );
}
