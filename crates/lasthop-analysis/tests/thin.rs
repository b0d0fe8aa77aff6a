//! Thin streams as seed 003's analyseTCP saw them, worked out by hand: 120-byte writes every
//! 30 ms over a path of 75 ms each way (RTT 150 ms), one packet lost; once repaired by redundant
//! data bundling (the next packet carries the lost bytes), once by a retransmission. Both the
//! sender's (client) and the receiver's (server) captures are built here.

mod common;

use common::{pcap_bytes, seg, Format, Seg, CLIENT, SERVER};
use lasthop_analysis::latency::{self, hist_percentile};
use lasthop_analysis::{analyse_run, write_run_files, AnalysisOptions, Capture, StreamStats};

fn opts(streams: bool) -> AnalysisOptions {
    AnalysisOptions {
        streams,
        ..Default::default()
    }
}
use std::net::{IpAddr, Ipv4Addr};

const ONE_WAY: u64 = 75;

/// Both captures, the receiver's 75 ms after the sender's.
fn captures(packets: &[(Seg, bool)], fmt: Format) -> (Vec<u8>, Vec<u8>) {
    common::two_captures(packets, ONE_WAY, fmt)
}

fn c(t: u64, seq: u32) -> Seg {
    seg(t, true, seq)
}
fn s(t: u64, seq: u32) -> Seg {
    seg(t, false, seq)
}

/// The handshake: SYN at 0, SYN-ACK at 75, the client's ACK at 150 (arriving at 225).
fn handshake() -> Vec<(Seg, bool)> {
    vec![
        (c(0, 0).syn(), false),
        (s(75, 1000).syn().ack(1), false),
        (c(150, 1).ack(1001), false),
    ]
}

fn run(packets: &[(Seg, bool)], fmt: Format) -> Vec<StreamStats> {
    let (client, server) = captures(packets, fmt);
    let hosts = [
        (
            IpAddr::V4(Ipv4Addr::from(CLIENT.0)),
            Capture::Bytes(&client),
        ),
        (
            IpAddr::V4(Ipv4Addr::from(SERVER.0)),
            Capture::Bytes(&server),
        ),
    ];
    analyse_run(&hosts, None, &opts(true)).unwrap().streams
}

fn close(a: Option<f64>, b: f64) {
    assert!(a.is_some_and(|a| (a - b).abs() < 1e-6), "{a:?} != {b}");
}

/// P1 (bytes 1..121) at 200, P2 (121..241) at 230 lost, P3 at 260 carrying 121..361 (P2's 120
/// bytes again and 120 new), P4 at 290 carrying 241..481 (P3's new bytes again and 120 new).
/// The receiver gets P1 at 275 (ACK 121, back at 350), P3 at 335 (ACK 361, back at 410: P3's
/// redundant bytes filled the hole, an RDB hit), P4 at 365 (ACK 481, back at 440: its redundant
/// bytes had arrived in P3, a miss).
fn rdb() -> Vec<(Seg, bool)> {
    let mut v = handshake();
    v.extend([
        (c(200, 1).ack(1001).len(120), false),
        (c(230, 121).ack(1001).len(120), true),
        (c(260, 121).ack(1001).len(240), false),
        (c(290, 241).ack(1001).len(240), false),
        (s(275, 1001).ack(121), false),
        (s(335, 1001).ack(361), false),
        (s(365, 1001).ack(481), false),
    ]);
    v
}

#[test]
fn rdb_hit_and_miss_by_hand() {
    for fmt in [Format::SimHeaderOnly, Format::EthernetMicro] {
        let st = run(&rdb(), fmt);
        assert_eq!(st.len(), 1, "one stream: the server sent no data");
        let x = &st[0];
        assert_eq!(x.sender.unwrap().port(), CLIENT.1);
        // 4 data packets, all with new bytes; P3 and P4 bundle 120 old bytes each.
        assert_eq!(
            (x.data_pkts, x.new_pkts, x.retr_pkts, x.rdb_pkts),
            (4, 4, 0, 2)
        );
        // payload 120 + 120 + 240 + 240 = 720; unique 480 (bytes 1..481); redundant 240.
        assert_eq!(
            (x.payload_bytes, x.unique_bytes, x.redundant_bytes),
            (720, 480, 240)
        );
        assert_eq!((x.retr_bytes, x.rdb_bytes, x.dupacks), (0, 240, 0));
        close(x.itt_avg_ms(), 30.0); // new data at 200, 230, 260, 290
        close(x.payload_avg(), 180.0); // 720 / 4
                                       // Ranges as first sent: [1,121) 200 → ACK 121 at 350: 150 ms; [121,241) 230 → ACK 361
                                       // at 410: 180 ms; [241,361) 260 → 410: 150 ms; [361,481) 290 → ACK 481 at 440: 150 ms.
        let l = &x.latency;
        assert_eq!(l.hist, vec![(150, 3), (180, 1)]);
        close(l.mean_ms(), 157.5);
        assert_eq!((l.min_ns, l.max_ns), (150_000_000, 180_000_000));
        assert_eq!(x.unacked_ranges, 0);
        let r = x.received.unwrap();
        // P2 lost (1 packet, 120 bytes); P3 filled its hole (hit), P4's old bytes were there.
        assert_eq!((r.pkts, r.lost_pkts, r.lost_bytes), (3, 1, 120));
        assert_eq!((r.rdb_hits, r.rdb_misses), (1, 1));
        // At the receiver: SYN (40 + 8 option bytes) at 75, ACK (40) at 225, P1 (160) at 275,
        // P3 (280) at 335, P4 (280) at 365: 808 bytes in 290 ms; goodput 480 new bytes.
        assert_eq!(
            (r.ip_bytes, r.goodput_bytes, r.duration_ns),
            (808, 480, 290_000_000)
        );
        close(r.throughput_bytes_per_s(), 808.0 / 0.29);
        close(r.goodput_bytes_per_s(), 480.0 / 0.29);
    }
}

/// The RDB middlebox's case: the sender sends 120-byte packets only (P1 1..121 at 200, P2
/// 121..241 at 230, P3 241..361 at 260, P4 361..481 at 290) and P2 is lost after the router;
/// the router rewrote P3 to carry 121..361 and P4 to carry 241..481 (the previous segment in
/// front, the same end). The receiver's packets match the sender's by their end: P2 lost, P3's
/// added bytes filled its hole (a hit), P4's had arrived in P3 (a miss).
#[test]
fn a_middlebox_rewrite_matches_by_the_end() {
    for fmt in [Format::SimHeaderOnly, Format::EthernetMicro] {
        let mut client = vec![];
        let mut server = vec![];
        for (x, _) in handshake() {
            let mut y = x.clone();
            y.t_ms += ONE_WAY;
            if x.from_client {
                client.push(x);
                server.push(y);
            } else {
                server.push(x);
                client.push(y);
            }
        }
        for (t, seq) in [(200, 1), (230, 121), (260, 241), (290, 361)] {
            client.push(c(t, seq).ack(1001).len(120));
        }
        // At the receiver (75 ms later): P1 as sent, P3 and P4 rewritten, P2 never.
        server.push(c(275, 1).ack(1001).len(120));
        server.push(c(335, 121).ack(1001).len(240));
        server.push(c(365, 241).ack(1001).len(240));
        for (t, ack) in [(275, 121), (335, 361), (365, 481)] {
            let a = s(t, 1001).ack(ack);
            let mut back = a.clone();
            back.t_ms += ONE_WAY;
            server.push(a);
            client.push(back);
        }
        client.sort_by_key(|x| x.t_ms);
        server.sort_by_key(|x| x.t_ms);
        let (cb, sb) = (pcap_bytes(&client, fmt), pcap_bytes(&server, fmt));
        let hosts = [
            (IpAddr::V4(Ipv4Addr::from(CLIENT.0)), Capture::Bytes(&cb)),
            (IpAddr::V4(Ipv4Addr::from(SERVER.0)), Capture::Bytes(&sb)),
        ];
        let st = analyse_run(&hosts, None, &opts(true)).unwrap().streams;
        let x = &st[0];
        // The sender bundled nothing: 4 new packets of 120 bytes.
        assert_eq!((x.data_pkts, x.rdb_pkts, x.payload_bytes), (4, 0, 480));
        // Latencies as in the RDB case: 150, 180 (P2's bytes acknowledged at 410), 150, 150.
        assert_eq!(x.latency.hist, vec![(150, 3), (180, 1)]);
        let r = x.received.unwrap();
        assert_eq!((r.pkts, r.lost_pkts, r.lost_bytes), (3, 1, 120));
        assert_eq!((r.rdb_hits, r.rdb_misses), (1, 1));
        assert_eq!(r.goodput_bytes, 480);
    }
}

/// A real stack's retransmission may carry two segments at once (Linux collapses them): P1
/// (1..121) at 200 and P2 (121..241) at 230 are both lost, then 1..241 is retransmitted in one
/// packet at 500. It ends where P2 did and starts before P2, like a bundled packet, but it is a
/// retransmission: no RDB hit.
#[test]
fn a_collapsed_retransmission_is_not_a_hit() {
    let mut v = handshake();
    v.extend([
        (c(200, 1).ack(1001).len(120), true),
        (c(230, 121).ack(1001).len(120), true),
        (c(500, 1).ack(1001).len(240), false),
        (s(575, 1001).ack(241), false),
    ]);
    let st = run(&v, Format::SimHeaderOnly);
    let x = &st[0];
    assert_eq!((x.data_pkts, x.retr_pkts, x.rdb_pkts), (3, 1, 0));
    let r = x.received.unwrap();
    // P1 and P2 lost: 2 packets, 240 bytes (the retransmission arrived: its end is P2's).
    assert_eq!((r.pkts, r.lost_pkts, r.lost_bytes), (1, 2, 240));
    assert_eq!((r.rdb_hits, r.rdb_misses), (0, 0));
}

/// Without bundling: P3 (241..361) at 260 carries only new bytes; the receiver's ACK for it
/// repeats 121 (a duplicate ACK, back at 410); P2 is retransmitted at 500 and arrives at 575,
/// ACK 361 back at 650.
#[test]
fn retransmission_by_hand() {
    let mut v = handshake();
    v.extend([
        (c(200, 1).ack(1001).len(120), false),
        (c(230, 121).ack(1001).len(120), true),
        (c(260, 241).ack(1001).len(120), false),
        (c(500, 121).ack(1001).len(120), false),
        (s(275, 1001).ack(121), false),
        (s(335, 1001).ack(121), false),
        (s(575, 1001).ack(361), false),
    ]);
    let st = run(&v, Format::SimHeaderOnly);
    let x = &st[0];
    assert_eq!(
        (x.data_pkts, x.new_pkts, x.retr_pkts, x.rdb_pkts),
        (4, 3, 1, 0)
    );
    assert_eq!(
        (
            x.payload_bytes,
            x.unique_bytes,
            x.redundant_bytes,
            x.retr_bytes
        ),
        (480, 360, 120, 120)
    );
    assert_eq!(x.dupacks, 1);
    close(x.itt_avg_ms(), 30.0); // the retransmission carries no new data: 200, 230, 260
                                 // [1,121): 350 − 200 = 150; [121,241): 650 − 230 = 420; [241,361): 650 − 260 = 390.
    assert_eq!(x.latency.hist, vec![(150, 1), (390, 1), (420, 1)]);
    close(x.latency.mean_ms(), 320.0);
    assert_eq!(hist_percentile(&x.latency.hist, 50.0), Some(390.0));
    let r = x.received.unwrap();
    // P2 was sent twice and received once: 1 packet and 120 bytes lost, no RDB packet.
    assert_eq!(
        (r.pkts, r.lost_pkts, r.lost_bytes, r.rdb_hits, r.rdb_misses),
        (3, 1, 120, 0, 0)
    );
    assert_eq!(r.goodput_bytes, 360);
}

#[test]
fn files_and_single_capture() {
    let (client, server) = captures(&rdb(), Format::SimHeaderOnly);
    let dir = tempfile::tempdir().unwrap();
    let hosts = [
        (
            IpAddr::V4(Ipv4Addr::from(CLIENT.0)),
            Capture::Bytes(&client),
        ),
        (
            IpAddr::V4(Ipv4Addr::from(SERVER.0)),
            Capture::Bytes(&server),
        ),
    ];
    write_run_files(dir.path(), &analyse_run(&hosts, None, &opts(true)).unwrap()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("streams.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0].split(',').count(), 35);
    // Without the scenario's flows the flow columns are empty.
    assert_eq!(
        lines[1],
        "1,198.18.0.1:5001,198.19.0.1:80,0.200000,0.290000,4,4,0,2,720,480,240,0,240,0,30.000,180.000,4,157.500,150.000,180.000,0,3,1,120,25.000,16.667,1,1,2786.207,1655.172,,,,"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("latency.csv")).unwrap(),
        "stream,ms,count,flow_index,flow_name\n1,150,3,,\n1,180,1,,\n"
    );
    // With them, each stream and its latency rows name the flow, as connections.csv does.
    let named = tempfile::tempdir().unwrap();
    let flow = lasthop_analysis::FlowId {
        index: 3,
        name: "flows[1]#2".into(),
        client: IpAddr::V4(Ipv4Addr::from(CLIENT.0)),
        server: IpAddr::V4(Ipv4Addr::from(SERVER.0)),
        port: 80,
        client_host: "thin2".into(),
        server_host: "sink".into(),
    };
    let other = lasthop_analysis::FlowId {
        index: 0,
        port: 81,
        name: "flows[0]".into(),
        ..flow.clone()
    };
    let with_flows = AnalysisOptions {
        streams: true,
        flows: vec![other, flow],
        ..Default::default()
    };
    write_run_files(
        named.path(),
        &analyse_run(&hosts, None, &with_flows).unwrap(),
    )
    .unwrap();
    let rows = lasthop_analysis::files::streams::read(&named.path().join("streams.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].flow_index,
            rows[0].flow_name.as_str(),
            rows[0].sender_host.as_str(),
            rows[0].receiver_host.as_str()
        ),
        (Some(3), "flows[1]#2", "thin2", "sink")
    );
    assert_eq!(
        std::fs::read_to_string(named.path().join("latency.csv")).unwrap(),
        "stream,ms,count,flow_index,flow_name\n1,150,3,3,flows[1]#2\n1,180,1,3,flows[1]#2\n"
    );
    // connections.csv names the same flow.
    let conns =
        lasthop_analysis::files::connections::read(&named.path().join("connections.csv")).unwrap();
    assert_eq!(conns[0].flow_index, Some(3));
    // Without streams asked for: no stream files.
    let plain = tempfile::tempdir().unwrap();
    write_run_files(
        plain.path(),
        &analyse_run(&hosts, None, &opts(false)).unwrap(),
    )
    .unwrap();
    assert!(!plain.path().join("streams.csv").exists());
    assert!(!plain.path().join("latency.csv").exists());
    // The sender's capture alone: the same sender numbers, no receiver ones.
    let one = analyse_run(&hosts[..1], None, &opts(true)).unwrap().streams;
    assert_eq!(one[0].latency.hist, vec![(150, 3), (180, 1)]);
    assert!(one[0].received.is_none());
    assert!(latency::streams_csv(&one)
        .lines()
        .nth(1)
        .unwrap()
        .ends_with(",0,,,,,,,,,,,,,"));
}

/// A connection whose receiver sends a little data back (10 bytes at 300 ms, acknowledged at
/// 375 + 75): one stream, the busier direction, with the same numbers.
#[test]
fn the_busier_direction_is_the_stream() {
    let mut v = rdb();
    v.push((s(300, 1001).ack(121).len(10), false));
    v.push((c(375, 481).ack(1011), false));
    let st = run(&v, Format::SimHeaderOnly);
    assert_eq!(st.len(), 1);
    assert_eq!(st[0].sender.unwrap().port(), CLIENT.1);
    assert_eq!(st[0].latency.hist, vec![(150, 3), (180, 1)]);
    assert_eq!(st[0].unique_bytes, 480);
}
