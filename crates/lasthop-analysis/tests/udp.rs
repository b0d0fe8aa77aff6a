//! UDP flow metrics worked out by hand: 10 datagrams of 512 payload bytes every 128 ms from
//! 198.18.0.1:7000 to 198.19.0.1:7001, seq 4 lost, seq 6 delayed 100 ms more, seq 2 received
//! twice; the sender's and the receiver's captures built here, as the simulator writes them
//! (headers + the 16-byte record, wire length = the whole datagram) and as the emulator does
//! (whole datagrams).

use lasthop_analysis::udp::{self, Record};
use lasthop_analysis::{
    analyse_run, write_run_files, AnalysisOptions, Capture, Error, RunAnalysis,
};

fn analyze_run(
    hosts: &[(IpAddr, Capture)],
    events: Option<&std::path::Path>,
) -> Result<RunAnalysis, Error> {
    analyse_run(hosts, events, &AnalysisOptions::default())
}

fn write_run_analysis(
    dir: &std::path::Path,
    hosts: &[(IpAddr, Capture)],
    events: Option<&std::path::Path>,
) -> Result<RunAnalysis, Error> {
    let r = analyze_run(hosts, events)?;
    write_run_files(dir, &r)?;
    Ok(r)
}
use lasthop_core::output::PcapSink;
use lasthop_core::{wire, Time};
use std::net::{IpAddr, Ipv4Addr, SocketAddrV4};

const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
const FLOW: &str = "udp:198.18.0.1:7000>198.19.0.1:7001";
const MS: u64 = 1_000_000;

fn datagram(seq: u32, whole: bool) -> lasthop_core::Packet {
    let rec = Record {
        seq,
        sent_ns: u64::from(seq) * 128 * MS,
    }
    .encode();
    let mut head = rec.to_vec();
    if whole {
        head.resize(512, 0);
    }
    wire::build_ipv4_udp(
        SocketAddrV4::new(A, 7000),
        SocketAddrV4::new(B, 7001),
        seq as u16,
        0,
        &head,
        540,
    )
}

/// (sender capture, receiver capture).
fn captures(whole: bool) -> (Vec<u8>, Vec<u8>) {
    let mut tx = PcapSink::new(Vec::new(), 65535).unwrap();
    let mut rx = PcapSink::new(Vec::new(), 65535).unwrap();
    for seq in 0..10u32 {
        tx.write(Time(u64::from(seq) * 128 * MS), &datagram(seq, whole))
            .unwrap();
    }
    // Receive times: send + 200 ms, seq 6 + 300 ms, seq 4 never, seq 2 again at 600 ms.
    let mut arrivals: Vec<(u64, u32)> = (0..10u32)
        .filter(|&s| s != 4)
        .map(|s| (u64::from(s) * 128 + if s == 6 { 300 } else { 200 }, s))
        .collect();
    arrivals.push((600, 2));
    arrivals.sort();
    for (t, s) in arrivals {
        rx.write(Time(t * MS), &datagram(s, whole)).unwrap();
    }
    (tx.into_inner(), rx.into_inner())
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn check_by_hand(whole: bool) {
    let (tx, rx) = captures(whole);
    let hosts = [
        (IpAddr::V4(A), Capture::Bytes(&tx)),
        (IpAddr::V4(B), Capture::Bytes(&rx)),
    ];
    let run = analyze_run(&hosts, None).unwrap();
    assert!(run.conns.is_empty());
    assert_eq!(run.udp.len(), 1);
    let f = &run.udp[0];
    assert_eq!(f.flow.to_string(), FLOW);
    // 10 sent, 9 distinct received (seq 2's copy counted once), 1 lost
    assert_eq!((f.sent, f.received, f.duplicates), (Some(10), 9, 1));
    assert_eq!((f.lost(), f.loss_rate()), (Some(1), Some(0.1)));
    // 9 × (512 + 8) bytes over 1352 − 200 ms: 4680 / 1.152 = 4062.5 B/s (seed 000's nominal)
    assert_eq!(f.bytes, 4680);
    assert_eq!(f.duration_ns(), Some(1152 * MS));
    assert!(close(f.throughput_bytes_per_s(), 4062.5));
    // Gaps of consecutive pairs, receive order 0 1 2 3 5 6 7 8 9 (3→5 left out):
    // 128 128 128 228 28 128 128 → sorted 28 128 128 128 128 128 228 (n = 7)
    // p50: h = 3 → 128; p75: h = 4.5 → 128; p90: h = 5.4 → 128 + 0.4·100 = 168; max 228
    let g = f.gaps_ms();
    assert_eq!(g, vec![128.0, 128.0, 128.0, 228.0, 28.0, 128.0, 128.0]);
    let sp = f.spacing_ms();
    assert!(close(sp.p50, 128.0) && close(sp.p75, 128.0), "{sp:?}");
    assert!(close(sp.p90, 168.0) && close(sp.max, 228.0), "{sp:?}");
    // Delays: eight of 200 ms and seq 6's 300 ms (n = 9): p50 h = 4 → 200; p75 h = 6 → 200;
    // p90 h = 7.2 → 220; p99 h = 7.92 → 292; max 300
    let de = f.delay_ms();
    assert!(close(de.p50, 200.0) && close(de.p75, 200.0), "{de:?}");
    assert!(close(de.p90, 220.0) && close(de.p99, 292.0), "{de:?}");
    assert!(close(de.max, 300.0), "{de:?}");
    let series: Vec<(u32, i64)> = f
        .packets
        .iter()
        .map(|p| (p.seq, p.delay_ns().unwrap() / MS as i64))
        .collect();
    assert_eq!(
        series,
        [
            (0, 200),
            (1, 200),
            (2, 200),
            (3, 200),
            (5, 200),
            (6, 300),
            (7, 200),
            (8, 200),
            (9, 200)
        ]
    );
}

#[test]
fn udp_flow_by_hand_header_only_captures() {
    check_by_hand(false);
}

#[test]
fn udp_flow_by_hand_whole_datagrams() {
    check_by_hand(true);
}

/// An events.csv row with the columns of `lasthop_link::CSV_HEADER`.
fn ev(t_ms: u64, event: &str, flow: &str, cause: &str) -> String {
    format!(
        "{},{event},down,1,{flow},0,,,,540,,,,,{cause},,,,\n",
        t_ms * MS
    )
}

#[test]
fn udp_files_and_drops_by_cause() {
    let (tx, rx) = captures(false);
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.csv");
    let tcp = "tcp:198.18.0.1:7000>198.19.0.1:7001"; // same 4-tuple, TCP: not this flow's
    let other = "udp:198.18.0.1:7002>198.19.0.1:7001";
    let text = String::from(lasthop_link::event::CSV_HEADER)
        + &ev(1, "arrive", FLOW, "")
        + &ev(520, "drop", FLOW, "error")
        + &ev(530, "drop", FLOW, "queue")
        + &ev(540, "drop", FLOW, "queue")
        + &ev(550, "drop", FLOW, "red")
        + &ev(560, "mark", FLOW, "")
        + &ev(565, "drop", FLOW, "codel")
        + &ev(566, "drop", FLOW, "pie")
        + &ev(570, "drop", FLOW, "mtu")
        + &ev(580, "drop", tcp, "queue")
        + &ev(590, "drop", other, "error");
    std::fs::write(&events, text).unwrap();
    let hosts = [
        (IpAddr::V4(A), Capture::Bytes(&tx)),
        (IpAddr::V4(B), Capture::Bytes(&rx)),
    ];
    let run = write_run_analysis(dir.path(), &hosts, Some(&events)).unwrap();
    let d = run.udp[0].drops.unwrap();
    // queue 2; red = 1 drop + 1 ECN mark; aqm = CoDel's and PIE's drops (issue 24: they were
    // counted as red); error 1; mtu 1; the TCP and the other UDP rows not
    assert_eq!((d.queue, d.red, d.aqm, d.error, d.mtu), (2, 2, 2, 1, 1));
    let csv = std::fs::read_to_string(dir.path().join("udp_flows.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), udp::UDP_CSV_COLUMNS.join(","));
    assert_eq!(
        lines.next().unwrap(),
        "1,198.18.0.1:7000,198.19.0.1:7001,10,9,1,0.100000,1,4680,0.200000,1.352000,4062.500,\
         2,2,2,1,1,128.000,128.000,168.000,228.000,200.000,200.000,220.000,292.000,300.000,,,,"
    );
    assert!(lines.next().is_none());
    let pk = std::fs::read_to_string(dir.path().join("udp_packets.csv")).unwrap();
    let rows: Vec<&str> = pk.lines().collect();
    assert_eq!(rows[0], "flow,seq,sent_s,received_s,delay_ms");
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[6], "1,6,0.768000,1.068000,300.000");
    // connections.csv is written too (no TCP connection: the header alone)
    let conns = std::fs::read_to_string(dir.path().join("connections.csv")).unwrap();
    assert_eq!(conns.lines().count(), 1);
}

#[test]
fn no_udp_flow_no_udp_files() {
    // Only the sender's capture of a datagram without our record (not a UDP flow of ours).
    let mut tx = PcapSink::new(Vec::new(), 65535).unwrap();
    let p = wire::build_ipv4_udp(
        SocketAddrV4::new(A, 53),
        SocketAddrV4::new(B, 53),
        1,
        0,
        b"not a record at all",
        100,
    );
    tx.write(Time(0), &p).unwrap();
    let tx = tx.into_inner();
    let dir = tempfile::tempdir().unwrap();
    let run =
        write_run_analysis(dir.path(), &[(IpAddr::V4(A), Capture::Bytes(&tx))], None).unwrap();
    assert!(run.udp.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["connections.csv"]);
}

#[test]
fn sender_capture_missing_or_one_datagram() {
    let (_, rx) = captures(false);
    // Without the sender's capture: sent, lost and delays are unknown, the rest is there.
    let run = analyze_run(&[(IpAddr::V4(B), Capture::Bytes(&rx))], None).unwrap();
    let f = &run.udp[0];
    assert_eq!(
        (f.sent, f.lost(), f.loss_rate(), f.received),
        (None, None, None, 9)
    );
    assert!(f.delay_ms().p50.is_none());
    assert!(close(f.spacing_ms().p50, 128.0));
    let row = udp::udp_csv_row(1, f);
    assert!(
        row.starts_with("1,198.18.0.1:7000,198.19.0.1:7001,,9,,,1,4680,"),
        "{row}"
    );
    // drops are empty (unknown) without an event log, not 0
    assert!(row.contains(",4062.500,,,,,,128.000,"), "{row}");
    // One datagram received: no throughput, no spacing.
    let mut one = PcapSink::new(Vec::new(), 65535).unwrap();
    one.write(Time(5 * MS), &datagram(0, false)).unwrap();
    let one = one.into_inner();
    let run = analyze_run(&[(IpAddr::V4(B), Capture::Bytes(&one))], None).unwrap();
    assert_eq!(run.udp[0].throughput_bytes_per_s(), None);
    assert_eq!(run.udp[0].spacing_ms().max, None);
}

#[test]
fn bad_event_rows_name_file_and_line() {
    let (tx, rx) = captures(false);
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.csv");
    let text = String::from(lasthop_link::event::CSV_HEADER)
        + &ev(1, "drop", "tcp:1.2.3.4:1>5.6.7.8:2", "queue")
        + "later,drop,down,1,udp:198.18.0.1:7000>198.19.0.1:7001,0,,,,540,,,,,queue,,,,\n";
    std::fs::write(&events, text).unwrap();
    let hosts = [
        (IpAddr::V4(A), Capture::Bytes(&tx)),
        (IpAddr::V4(B), Capture::Bytes(&rx)),
    ];
    let e = analyze_run(&hosts, Some(&events)).unwrap_err();
    assert!(matches!(e, Error::Events { line: 3, .. }), "{e}");
    assert!(
        e.to_string().contains("events.csv:3: column `time_ns`"),
        "{e}"
    );
    let e = analyze_run(&hosts, Some(&dir.path().join("missing.csv"))).unwrap_err();
    assert!(e.to_string().contains("missing.csv"), "{e}");
}
