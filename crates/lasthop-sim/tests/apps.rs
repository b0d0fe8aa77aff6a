//! Applications on the simulated hosts: a CBR UDP stream worked out by hand on seed 000's
//! optimal link, and UDP beside TCP.

mod common;

use common::tcp_data;
use lasthop_apps::cbr::Record;
use lasthop_core::{Dur, Time};
use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;
use pcap_file::pcap::PcapReader;
use std::path::Path;

fn scenario(flows: &str) -> Scenario {
    let links = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links");
    let text = format!(
        "name = \"apps\"\nduration = \"600s\"\nlink = \"seed000-e0.toml\"\n[hosts.fixed]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n{flows}"
    );
    Scenario::from_str_in(&text, &links).unwrap_or_else(|e| panic!("{e}"))
}

/// (time, wire length, record) of every UDP packet in a capture.
fn udp_in(pcap: &Path) -> Vec<(Time, u32, Record)> {
    let mut r = PcapReader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        if p.data[9] != 17 {
            continue;
        }
        let t = Time(p.timestamp.as_nanos() as u64);
        out.push((t, p.orig_len, Record::decode(&p.data[28..]).unwrap()));
    }
    out
}

const CBR: &str = "[[flows]]\nkind = \"cbr\"\nfrom = \"fixed\"\nto = \"mobile\"\npayload = \"512B\"\ninterval = \"128ms\"\nduration = \"1280ms\"\n";

#[test]
fn a_cbr_stream_on_e0_arrives_one_serialization_and_one_delay_later() {
    // 512 B of payload + 8 B UDP + 20 B IP = 540 B, 67.5 ms at 64 kbit/s, then 300 ms of
    // propagation: datagram k leaves at k·128 ms and arrives at k·128 + 367.5 ms. 1280 ms of
    // sending is 10 datagrams (0 to 1152 ms); the receiver stops 10 s (JTG's -e 10) after the
    // sending ends, at 11.28 s, and so does the run.
    let s = scenario(CBR);
    let d = tempfile::tempdir().unwrap();
    let opts = OutputOptions::all(d.path());
    let r = lasthop_sim::run(&s, &opts).unwrap();
    assert_eq!(r.end, Time::ZERO + Dur::from_millis(11_280));
    let f = &r.flows[0];
    assert_eq!((f.kind, f.reliable), ("cbr", false));
    assert_eq!((f.bytes, f.delivered), (5120, 5120));
    assert_eq!(f.first_byte, Some(Time(367_500_000)));
    assert_eq!(f.last_byte, Some(Time(9 * 128_000_000 + 367_500_000)));
    let sent = udp_in(&d.path().join("fixed.pcap"));
    let got = udp_in(&d.path().join("mobile.pcap"));
    assert_eq!((sent.len(), got.len()), (10, 10));
    for (k, ((ts, len, rec), (tr, len_r, rec_r))) in sent.iter().zip(&got).enumerate() {
        let k = k as u64;
        assert_eq!(*ts, Time(k * 128_000_000));
        assert_eq!(*tr, Time(k * 128_000_000 + 367_500_000));
        assert_eq!((*len, *len_r), (540, 540));
        assert_eq!(rec.seq as u64, k);
        assert_eq!(rec, rec_r);
        assert_eq!(rec.sent_ns, ts.0);
    }
    // The analysis of the captures agrees: 10 sent, 10 received, 128 ms apart, 367.5 ms late;
    // 10 × 520 B (payload + UDP header) over the 1152 ms between the first and the last arrival.
    let u = &r.udp[0];
    assert_eq!((u.sent, u.received, u.lost()), (Some(10), 10, Some(0)));
    assert_eq!(u.spacing_ms().p50, Some(128.0));
    assert_eq!(u.delay_ms().max, Some(367.5));
    let tput = u.throughput_bytes_per_s().unwrap();
    assert!((tput - 5200.0 / 1.152).abs() < 1e-6, "{tput}");
    let table = lasthop_analysis::format_udp_table(&r.udp);
    assert!(
        table.contains("198.19.0.1:5000") && table.contains("4513.9"),
        "{table}"
    );
    // The event log knows the datagrams as UDP flows.
    let events = std::fs::read_to_string(d.path().join("events.csv")).unwrap();
    assert!(events.contains("udp:198.18.0.1:1024>198.19.0.1:5000"));
}

#[test]
fn udp_and_tcp_share_the_link_and_the_transfer_still_completes() {
    // A 20 000-byte transfer beside the stream: flow 0's client starts first, so datagram 0
    // waits behind the SYN (well under one 576-byte segment, 72 ms) on the link, and no
    // datagram is lost (e0's 20-packet router queue holds this small window), and the transfer
    // completes.
    let bulk = "[[flows]]\nkind = \"bulk\"\nfrom = \"fixed\"\nto = \"mobile\"\nbytes = 20000\n";
    let s = scenario(&format!("{bulk}{CBR}"));
    let r = lasthop_sim::run(&s, &OutputOptions::ANALYSIS).unwrap();
    assert_eq!(r.flows[0].delivered, 20_000);
    assert_eq!(r.flows[1].delivered, 5120);
    let first = r.flows[1].first_byte.unwrap();
    assert!(
        first > Time(367_500_000) && first < Time(367_500_000 + 72_000_000),
        "{first}"
    );
    assert_eq!(r.connections.len(), 1, "the stream is no TCP connection");
}

/// A wired link worked out by hand: 8 Mbit/s (a 1064-byte packet takes 1.064 ms), 5 ms one
/// way, a link send buffer of one packet; hosts without access links.
fn wired(flows: &str, duration: &str) -> (tempfile::TempDir, Scenario) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("l.toml"),
        "mtu = \"1064B\"\n[both]\nrate = \"8Mbit\"\ndelay = \"5ms\"\nlsb = \"1064B\"\nlink_ack = false\n",
    )
    .unwrap();
    let tcp = "tcp = { sack = false, initial_window = 1, delayed_ack = \"off\" }";
    let text = format!(
        "name = \"wired\"\nduration = \"{duration}\"\nlink = \"l.toml\"\n[hosts.s]\nside = \"fixed\"\n{tcp}\n[hosts.r]\nside = \"mobile\"\n{tcp}\n{flows}"
    );
    let s = Scenario::from_str_in(&text, d.path()).unwrap_or_else(|e| panic!("{e}"));
    (d, s)
}

#[test]
fn repeated_transfers_each_on_a_fresh_connection_after_the_pause() {
    // One 1024-byte segment per transfer (MSS 1024): SYN, SYN-ACK, data with FIN, the server's
    // ACK of the FIN: two round trips of 10 ms, plus 1.064 ms for the data segment and well
    // under 0.1 ms for each of the three small ones. The client's close completes when the
    // server's FIN arrives; 250 ms later the next transfer starts from the next client port.
    // In 1 s: starts at 0 and then every (close + 250 ms), about 271 ms: 4 transfers (the fifth
    // would start after 1 s).
    let flows =
        "[[flows]]\nkind = \"repeat\"\nfrom = \"s\"\nto = \"r\"\nbytes = 1024\npause = \"250ms\"\n";
    let (d, s) = wired(flows, "1s");
    let opts = OutputOptions::all(d.path().join("out"));
    let r = lasthop_sim::run(&s, &opts).unwrap();
    let c = &r.connections;
    assert_eq!(c.len(), 4, "{c:#?}");
    let ms = |t: Time| t.as_nanos() as f64 / 1e6;
    for (k, conn) in c.iter().enumerate() {
        assert!(conn.complete(), "transfer {k}");
        assert_eq!(
            conn.client.port(),
            1024 + k as u16,
            "a new port per transfer"
        );
        assert_eq!(conn.c2s.unique_bytes, 1024);
        let e = conn.elapsed().as_nanos() as f64 / 1e6;
        assert!((21.064..21.5).contains(&e), "transfer {k}: {e} ms");
        // Every transfer starts afresh (initial window, no cached state): the same timeline.
        assert_eq!(conn.elapsed(), c[0].elapsed(), "transfer {k}");
    }
    for w in c.windows(2) {
        let gap = ms(w[1].start) - ms(w[0].end());
        // The pause runs from the client's close, at or after the ACK of its FIN.
        assert!((250.0..250.5).contains(&gap), "{gap} ms");
        assert_eq!(w[1].start - w[0].start, c[1].start - c[0].start);
    }
    assert_eq!(r.flows[0].bytes, 4 * 1024);
}

#[test]
fn repeat_parameters_are_checked() {
    let bad = |extra: &str, key: &str, says: &str| {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("l.toml"), "[both]\nrate = \"8Mbit\"\n").unwrap();
        let text = format!("duration = \"10s\"\nlink = \"l.toml\"\n[hosts.s]\nside = \"fixed\"\n[hosts.r]\nside = \"mobile\"\n[[flows]]\nkind = \"repeat\"\nfrom = \"s\"\nto = \"r\"\n{extra}");
        let e = Scenario::from_str_in(&text, d.path()).unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    bad(
        "bytes = 0\npause = \"250ms\"\n",
        "flows[0].bytes",
        "1 or more",
    );
    bad(
        "bytes = 10240\npause = \"0s\"\n",
        "flows[0].pause",
        "longer than 0",
    );
    bad(
        "bytes = 10240\npause = \"250ms\"\ncount = 0\n",
        "flows[0].count",
        "1 or more",
    );
    bad(
        "bytes = 10240\npause = \"1us\"\n",
        "flows[0].pause",
        "at most 16384",
    );
    bad("bytes = 10240\n", "flows[0]", "pause");
}

#[test]
fn a_greedy_flow_sends_until_the_run_ends() {
    // 8 Mbit/s for 1 s: at most 1 000 000 bytes on the wire; after the handshake and slow start
    // (initial window 1, 10 ms round trips) the link is full well before the end, so more than
    // half of it arrives. The run ends at its duration, the connection unfinished.
    let flows = "[[flows]]\nkind = \"bulk\"\nfrom = \"s\"\nto = \"r\"\nbytes = \"unlimited\"\n";
    let (d, s) = wired(flows, "1s");
    assert_eq!(s.flows[0].app.describe(), "greedy (unlimited bytes)");
    let opts = OutputOptions::all(d.path().join("out"));
    let r = lasthop_sim::run(&s, &opts).unwrap();
    // (`end` is the last event's time, within the last packet's 1.064 ms.)
    assert!(
        (998_900_000..=1_000_000_000).contains(&r.end.as_nanos()),
        "{:?}",
        r.end
    );
    let f = &r.flows[0];
    assert_eq!(f.bytes, lasthop_apps::bulk::UNLIMITED);
    assert!(
        (500_000..1_000_000).contains(&f.delivered),
        "{}",
        f.delivered
    );
    assert!(!r.connections[0].complete());
    // Bad byte counts name the key and the forms allowed.
    for (v, says) in [
        ("\"lots\"", "unlimited"),
        ("0", "1 to"),
        ("2251799813685248", "1 PiB"),
    ] {
        let text = flows.replace("\"unlimited\"", v);
        let e = Scenario::from_str_in(
            &format!("duration = \"1s\"\nlink = \"l.toml\"\n[hosts.s]\nside = \"fixed\"\n[hosts.r]\nside = \"mobile\"\n{text}"),
            d.path(),
        )
        .unwrap_err();
        assert_eq!(e.key, "flows[0].bytes", "{e}");
        assert!(e.message.contains(says), "{v}: {e}");
    }
}

#[test]
fn thin_streams_write_small_payloads_every_itt() {
    // Three streams of 120 bytes every 30 ms for 1 s, each started at a random offset within the
    // first 30 ms (the default spread: one ITT), Nagle off, on the 8 Mbit/s,
    // 5 ms link: each write is one 120-byte segment, 30 ms after the last, from the stream's
    // own port (1024, 1025, 1026); nothing queues (160 bytes per 30 ms per stream).
    let flows = "[[flows]]\nkind = \"thin\"\nfrom = \"s\"\nto = \"r\"\nstreams = 3\npayload = \"120:0\"\nitt = \"30:0\"\nduration = \"1s\"\n";
    let (d, mut s) = wired(flows, "2s");
    for h in &mut s.hosts {
        h.tcp.nagle = false;
    }
    let opts = OutputOptions::all(d.path().join("out"));
    let r = lasthop_sim::run(&s, &opts).unwrap();
    let data = tcp_data(&d.path().join("out/s.pcap"));
    for port in 1024..1027u16 {
        let mine: Vec<&(Time, u16, usize)> = data.iter().filter(|x| x.1 == port).collect();
        assert!(mine.iter().all(|x| x.2 == 120), "port {port}");
        // Connected within the first 30 ms + one round trip; writes every 30 ms until 1 s.
        let first = mine[0].0.as_nanos();
        assert!(first < 41_000_000, "port {port} first write at {first}");
        let expect = (1_000_000_000 - first).div_ceil(30_000_000);
        assert_eq!(mine.len() as u64, expect, "port {port}");
        for w in mine.windows(2) {
            assert_eq!(w[1].0 - w[0].0, Dur::from_millis(30), "port {port}");
        }
    }
    assert_eq!(r.flows[0].delivered, r.flows[0].bytes);
    assert_eq!(r.connections.len(), 3);
    assert!(r.connections.iter().all(|c| c.complete()));
}

#[test]
fn thin_stream_draws_repeat_per_replication() {
    // payload 120:30 and ITT 30:3: the draws come from the run's seeds, so a replication
    // repeats exactly and another differs; over ~1000 writes the mean payload is near 120.
    let flows = "[[flows]]\nkind = \"thin\"\nfrom = \"s\"\nto = \"r\"\nstreams = 30\npayload = \"120:30\"\nitt = \"30:3\"\nduration = \"1s\"\n";
    let (_d, s) = wired(flows, "2s");
    let opts = OutputOptions::default();
    let a = lasthop_sim::run(&s, &opts).unwrap().flows[0].bytes;
    let b = lasthop_sim::run(&s, &opts).unwrap().flows[0].bytes;
    let mut s2 = s.clone();
    s2.replication = 1;
    let c = lasthop_sim::run(&s2, &opts).unwrap().flows[0].bytes;
    assert_eq!(a, b);
    assert_ne!(a, c);
    // 30 streams x about 33 writes x 120 bytes = about 119 000.
    assert!((105_000..135_000).contains(&a), "{a}");
}

#[test]
fn thin_parameters_are_checked() {
    let bad = |extra: &str, key: &str, says: &str| {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("l.toml"),
            "mtu = \"1500B\"\n[both]\nrate = \"8Mbit\"\n",
        )
        .unwrap();
        let text = format!("duration = \"10s\"\nlink = \"l.toml\"\n[hosts.s]\nside = \"fixed\"\n[hosts.r]\nside = \"mobile\"\n[[flows]]\nkind = \"thin\"\nfrom = \"s\"\nto = \"r\"\nduration = \"5s\"\n{extra}");
        let e = Scenario::from_str_in(&text, d.path()).unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    bad(
        "payload = \"1461:0\"\nitt = \"30:3\"\n",
        "flows[0].payload",
        "up to 1460",
    );
    bad("payload = 120\nitt = \"0:3\"\n", "flows[0].itt", "above 0");
    bad(
        "payload = 120\nitt = \"-30:3\"\n",
        "flows[0].itt",
        "above 0",
    );
    bad(
        "payload = 120\nitt = \"30:x\"\n",
        "flows[0].itt",
        "mean:stdev",
    );
    bad(
        "payload = 120\nitt = \"30:-1\"\n",
        "flows[0].itt",
        "0 or more",
    );
    bad(
        "payload = 120\nitt = 30\nstreams = 0\n",
        "flows[0].streams",
        "1 or more",
    );
}

const PING: &str = "[[flows]]\nkind = \"ping\"\nfrom = \"mobile\"\nto = \"fixed\"\ninterval = \"500ms\"\nduration = \"20s\"\n";

#[test]
fn a_probe_on_idle_e0_takes_two_serializations_and_two_delays() {
    // ping's 56-byte payload + 8 B ICMP + 20 B IP = 84 B, 10.5 ms at 64 kbit/s each way, and
    // 300 ms of propagation each way: 621 ms. The host's stack answers at once. 20 s of
    // probing every 500 ms is 40 probes; the run ends at the last reply, 19.5 s + 621 ms.
    let s = scenario(PING);
    let d = tempfile::tempdir().unwrap();
    let r = lasthop_sim::run(&s, &OutputOptions::all(d.path())).unwrap();
    assert_eq!(r.end, Time::ZERO + Dur::from_millis(19_500 + 621));
    let p = &r.analysis.pings;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!((p[0].sent(), p[0].replied()), (40, 40));
    assert!(p[0].rtts_ms().iter().all(|&r| r == 621.0), "{p:?}");
    let f = &r.flows[0];
    assert_eq!(
        (f.kind, f.reliable, f.bytes, f.delivered),
        ("ping", false, 40 * 56, 40 * 56)
    );
    // The files: one flow named by the scenario, 40 probes of 621 ms.
    let flows =
        lasthop_analysis::files::pings::read_flows(&d.path().join("ping_flows.csv")).unwrap();
    assert_eq!(flows.len(), 1);
    assert_eq!(
        (flows[0].flow_index, flows[0].flow_name.as_str()),
        (Some(0), "flows[0]")
    );
    assert_eq!(
        (flows[0].ident, flows[0].src_host.as_str()),
        (5000, "mobile")
    );
    assert_eq!(
        (flows[0].rtt_min_ms, flows[0].rtt_max_ms),
        (Some(621.0), Some(621.0))
    );
    let probes = lasthop_analysis::files::pings::read(&d.path().join("pings.csv")).unwrap();
    assert_eq!(probes.len(), 40);
    assert_eq!(
        (probes[3].seq, probes[3].sent_s, probes[3].replied_s),
        (3, 1.5, Some(2.121))
    );
}

#[test]
fn probes_behind_a_bulk_transfer_wait_in_the_queue_and_are_lost_with_it() {
    // A 200 kB transfer down the link fills the 20-packet router queue and the 17-packet link
    // send buffer in front of the probes' replies. Before the queue builds a probe takes the
    // idle 621 ms; none can take longer than 621 ms + 37 full packets (72 ms each) ahead of its
    // reply, 3285 ms; a reply that finds the queue full is dropped there, and the event log's
    // ICMP drops are the probes without a reply.
    let s = scenario(&format!(
        "[[flows]]\nkind = \"bulk\"\nfrom = \"fixed\"\nto = \"mobile\"\nbytes = 200000\n{PING}"
    ));
    let d = tempfile::tempdir().unwrap();
    let r = lasthop_sim::run(&s, &OutputOptions::all(d.path())).unwrap();
    let p = &r.analysis.pings[0];
    let rtts = p.rtts_ms();
    assert_eq!(p.sent(), 40);
    assert_eq!(&rtts[..4], &[621.0; 4]);
    let max = rtts.iter().cloned().fold(0.0, f64::max);
    assert!(
        max > 621.0 + 20.0 * 72.0 && max <= 621.0 + 37.0 * 72.0,
        "{rtts:?}"
    );
    let events = std::fs::read_to_string(d.path().join("events.csv")).unwrap();
    let icmp_drops = events
        .lines()
        .filter(|l| l.contains(",drop,") && l.contains("icmp:"))
        .count() as u64;
    assert!(icmp_drops > 0, "no probe lost: {rtts:?}");
    assert_eq!(p.sent() - p.replied(), icmp_drops);
}
