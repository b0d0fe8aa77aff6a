//! Bad inputs give clear errors; the event log join; merging two captures of one run.

mod common;

use common::*;
use lasthop_analysis::{self as la, Error, EventLog};

#[test]
fn missing_file_names_it() {
    let e = la::analyze_pcap("/nonexistent/x.pcap").unwrap_err();
    assert!(matches!(e, Error::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/x.pcap"), "{e}");
}

#[test]
fn not_a_pcap() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("text.pcap", b"time_ns,event,dir\n1,2,3\n".to_vec()),
        ("empty.pcap", vec![]),
        ("short.pcap", vec![0xd4, 0xc3]),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        let e = la::analyze_pcap(&p).unwrap_err();
        assert!(matches!(e, Error::NotPcap { .. }), "{name}: {e:?}");
        assert!(e.to_string().contains(name), "{e}");
        assert!(e.to_string().contains("not a pcap"), "{e}");
    }
    let p = dir.path().join("ng.pcapng");
    std::fs::write(&p, [0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0]).unwrap();
    let e = la::analyze_pcap(&p).unwrap_err();
    assert!(e.to_string().contains("pcapng"), "{e}");
}

#[test]
fn unsupported_link_type() {
    let mut bytes = pcap_bytes(&hand_script(), Format::RawMicro);
    // the link type is the last field of the 24-byte header, in the file's byte order
    let lt = if bytes[0] == 0xa1 {
        105u32.to_be_bytes()
    } else {
        105u32.to_le_bytes()
    };
    bytes[20..24].copy_from_slice(&lt); // IEEE 802.11
    let e = la::analyze_reader(&bytes[..]).unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedLinkType { linktype: 105, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("unsupported link type 105"), "{e}");
}

#[test]
fn capture_cut_mid_record_keeps_what_was_read() {
    let bytes = pcap_bytes(&hand_script(), Format::RawMicro);
    let cut = &bytes[..bytes.len() - 7];
    let a = la::analyze_reader_with(cut, "cut.pcap", la::Options::default()).unwrap();
    assert_eq!(a.summary.records, 29);
    assert_eq!(a.summary.warnings.len(), 1);
    assert!(a.summary.warnings[0].contains("cut.pcap"));
    assert_eq!(a.conns.len(), 1);
    assert!(!a.conns[0].complete());
}

#[test]
fn non_tcp_records_are_counted_not_fatal() {
    let mut bytes = pcap_bytes(&hand_script()[..3], Format::RawMicro);
    // an ICMP-ish IPv4 packet and a record of garbage
    let mut icmp = hand_script()[0].ip_bytes();
    icmp[9] = 1;
    let big = bytes[0] == 0xa1;
    let w = |x: u32| {
        if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    };
    for rec in [icmp, vec![0xff; 9]] {
        bytes.extend_from_slice(&w(1_700_000_000));
        bytes.extend_from_slice(&w(0));
        bytes.extend_from_slice(&w(rec.len() as u32));
        bytes.extend_from_slice(&w(rec.len() as u32));
        bytes.extend_from_slice(&rec);
    }
    let a = la::analyze_reader_with(&bytes[..], "x", la::Options::default()).unwrap();
    assert_eq!(a.summary.records, 5);
    assert_eq!(a.summary.other, 2);
    assert_eq!(a.conns.len(), 1);
}

const HEADER: &str = "time_ns,event,dir,packet,flow,ip_id,tcp_seq,tcp_ack,tcp_len,bytes,queue_pkts,queue_bytes,lsb_bytes,lrb_bytes,cause,attempt,state,delay_ns,actual_ns\n";
const S2C: &str = "tcp:198.19.0.1:80>198.18.0.1:5001";
const C2S: &str = "tcp:198.18.0.1:5001>198.19.0.1:80";

#[allow(clippy::too_many_arguments)]
fn row(
    t_ms: u64,
    event: &str,
    dir: &str,
    packet: u64,
    flow: &str,
    seq: u32,
    len: u32,
    cause: &str,
) -> String {
    format!(
        "{},{event},{dir},{packet},{flow},0,{seq},0,{len},{},0,0,0,0,{cause},,,,\n",
        t_ms * 1_000_000,
        len + 40
    )
}

/// An event log for the hand script: D2's first copy lost to a link error, D6's first copy to
/// the queue, an ACK to RED, a CE mark, and D8 delivered twice (the second copy spurious).
fn hand_events() -> String {
    let mut s = String::from(HEADER);
    s += &row(321, "arrive", "down", 10, S2C, 5101, 100, "");
    s += &row(322, "error", "down", 10, S2C, 5101, 100, "");
    s += &row(900, "drop", "down", 10, S2C, 5101, 100, "error");
    s += &row(425, "arrive", "down", 11, S2C, 5101, 100, "");
    s += &row(470, "release", "down", 11, S2C, 5101, 100, "");
    s += &row(530, "arrive", "down", 20, S2C, 5501, 100, "");
    s += &row(530, "drop", "down", 20, S2C, 5501, 100, "queue");
    s += &row(1530, "arrive", "down", 21, S2C, 5501, 100, "");
    s += &row(1580, "release", "down", 21, S2C, 5501, 100, "");
    s += &row(1732, "arrive", "down", 30, S2C, 5701, 100, "");
    s += &row(1782, "release", "down", 30, S2C, 5701, 100, "");
    s += &row(1833, "arrive", "down", 31, S2C, 5701, 100, "");
    s += &row(1883, "release", "down", 31, S2C, 5701, 100, "");
    s += &row(423, "arrive", "up", 40, C2S, 1051, 0, "");
    s += &row(423, "drop", "up", 40, C2S, 1051, 0, "red");
    s += &row(424, "mark", "up", 41, C2S, 1051, 0, "");
    // another flow, and a state change row without a packet
    s += &row(
        10,
        "drop",
        "up",
        50,
        "tcp:10.0.0.1:1>10.0.0.2:2",
        1,
        10,
        "queue",
    );
    s += "100,state,,,,,,,,,0,0,0,0,,,bad,,\n";
    s
}

#[test]
fn event_log_join_drops_and_spurious() {
    let mut conns =
        la::analyze_reader(&pcap_bytes(&hand_script(), Format::SimHeaderOnly)[..]).unwrap();
    let log = EventLog::from_reader(hand_events().as_bytes(), "events.csv").unwrap();
    assert!(log.has_deliveries);
    log.join(&mut conns);
    let c = &conns[0];
    assert!(c.events_joined);
    assert_eq!(
        (c.s2c.drops.queue, c.s2c.drops.error, c.s2c.drops.red),
        (1, 1, 0)
    );
    assert_eq!(
        (c.c2s.drops.queue, c.c2s.drops.error, c.c2s.drops.red),
        (0, 0, 1)
    );
    assert_eq!(c.c2s.drops.marks, 1);
    assert_eq!(c.drops().total(), 3);
    assert_eq!(c.s2c.spurious_rexmt, Some(1));
    assert_eq!(c.c2s.spurious_rexmt, Some(0));
    // The one timeout resent D6, whose first copy the queue dropped: not spurious.
    assert_eq!((c.s2c.rtos, c.s2c.spurious_rtos), (1, Some(0)));

    let text = {
        let mut v = Vec::new();
        la::write_csv_to(&mut v, &conns).unwrap();
        String::from_utf8(v).unwrap()
    };
    let mut lines = text.lines();
    let cols: Vec<&str> = lines.next().unwrap().split(',').collect();
    let vals: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |n: &str| vals[cols.iter().position(|c| *c == n).unwrap()];
    assert_eq!(get("drops_queue"), "1");
    assert_eq!(get("drops_error"), "1");
    assert_eq!(get("drops_red"), "1");
    assert_eq!(get("drops_red_c2s"), "1");
    assert_eq!(get("drops_error_s2c"), "1");
    assert_eq!(get("ecn_marks"), "1");
    assert_eq!(get("spurious_rexmt"), "1");
    // 4 retransmissions, 2 data-direction drops
    assert_eq!(get("rexmt_minus_drops"), "2");
    assert_eq!(get("spurious_rtos"), "0");
}

/// The same run had D6's first copy been held back (by ARQ, say) and delivered at 1.4 s instead
/// of dropped: the timeout that resent it at 1.53 s was spurious, and so was the resent D6.
#[test]
fn a_timeout_that_resent_a_delivered_segment_is_spurious() {
    let events = hand_events().replace(
        &row(530, "drop", "down", 20, S2C, 5501, 100, "queue"),
        &row(1400, "release", "down", 20, S2C, 5501, 100, ""),
    );
    assert_ne!(events, hand_events());
    let mut conns =
        la::analyze_reader(&pcap_bytes(&hand_script(), Format::SimHeaderOnly)[..]).unwrap();
    EventLog::from_reader(events.as_bytes(), "events.csv")
        .unwrap()
        .join(&mut conns);
    let c = &conns[0];
    assert_eq!(c.s2c.drops.queue, 0);
    assert_eq!(c.s2c.spurious_rexmt, Some(2), "D6 and D8");
    assert_eq!((c.s2c.rtos, c.s2c.spurious_rtos), (1, Some(1)));
    assert_eq!(c.c2s.spurious_rtos, Some(0));
}

#[test]
fn codel_and_pie_drops_have_their_own_column() {
    // Issue 24: CoDel's and PIE's drops were counted in `drops_red`. Two of them on the ACK
    // direction beside RED's one: drops_red stays 1, drops_aqm is 2.
    let mut conns =
        la::analyze_reader(&pcap_bytes(&hand_script(), Format::SimHeaderOnly)[..]).unwrap();
    let mut ev = hand_events();
    ev += &row(425, "drop", "up", 42, C2S, 1051, 0, "codel");
    ev += &row(426, "drop", "up", 43, C2S, 1051, 0, "pie");
    let log = EventLog::from_reader(ev.as_bytes(), "events.csv").unwrap();
    log.join(&mut conns);
    let c = &conns[0];
    assert_eq!((c.c2s.drops.red, c.c2s.drops.aqm), (1, 2));
    assert_eq!(c.drops().total(), 5);
    let text = {
        let mut v = Vec::new();
        la::write_csv_to(&mut v, &conns).unwrap();
        String::from_utf8(v).unwrap()
    };
    let mut lines = text.lines();
    let cols: Vec<&str> = lines.next().unwrap().split(',').collect();
    let vals: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |n: &str| vals[cols.iter().position(|c| *c == n).unwrap()];
    assert_eq!(get("drops_red"), "1");
    assert_eq!(get("drops_aqm"), "2");
    assert_eq!(get("drops_red_c2s"), "1");
    assert_eq!(get("drops_aqm_c2s"), "2");
    assert_eq!(get("drops_aqm_s2c"), "0");
}

#[test]
fn drops_only_log_has_no_spurious_count() {
    let mut conns = la::analyze_reader(&pcap_bytes(&hand_script(), Format::RawMicro)[..]).unwrap();
    let text: String = hand_events()
        .lines()
        .filter(|l| !l.contains(",arrive,") && !l.contains(",release,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let log = EventLog::from_reader(text.as_bytes(), "e").unwrap();
    assert!(!log.has_deliveries);
    log.join(&mut conns);
    assert_eq!(conns[0].s2c.spurious_rexmt, None);
    assert_eq!(conns[0].s2c.drops.error, 1);
}

#[test]
fn bad_event_logs_are_errors_with_line_numbers() {
    let e = EventLog::from_reader("a,b\n".as_bytes(), "ev.csv").unwrap_err();
    assert!(e.to_string().starts_with("ev.csv:1:"), "{e}");
    let e = EventLog::from_reader(format!("{HEADER}1,drop\n").as_bytes(), "ev.csv").unwrap_err();
    assert!(e.to_string().starts_with("ev.csv:2:"), "{e}");
    let bad = format!(
        "{HEADER}{}",
        row(1, "drop", "up", 1, C2S, 1, 1, "queue").replacen("1000000", "x", 1)
    );
    let e = EventLog::from_reader(bad.as_bytes(), "ev.csv").unwrap_err();
    assert!(e.to_string().contains("time_ns"), "{e}");
    let e = EventLog::load("/nonexistent/events.csv").unwrap_err();
    assert!(e.to_string().contains("/nonexistent/events.csv"));
}

#[test]
fn merge_takes_elapsed_from_client_and_counts_from_sender() {
    // The server-side capture sees everything 10 ms later than the client sends it, and sees
    // its own lost segments; the client-side capture misses the three lost segments.
    let full = hand_script();
    let lost = [321u64, 530, 531];
    let client: Vec<Seg> = full
        .iter()
        .filter(|s| !lost.contains(&s.t_ms))
        .cloned()
        .collect();
    let server: Vec<Seg> = full
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.t_ms += 10;
            s
        })
        .collect();
    let c = la::analyze_reader(&pcap_bytes(&client, Format::SimHeaderOnly)[..]).unwrap();
    let s = la::analyze_reader(&pcap_bytes(&server, Format::SimHeaderOnly)[..]).unwrap();
    // alone, the client's view misses retransmissions whose originals it never saw
    assert_eq!(c[0].s2c.rexmt_pkts, 1);
    assert_eq!(s[0].s2c.rexmt_pkts, 4);
    let mut s_joined = s.clone();
    EventLog::from_reader(hand_events().as_bytes(), "e")
        .unwrap()
        .join(&mut s_joined);
    let m = la::merge_sides(&c, &s_joined);
    assert_eq!(m.len(), 1);
    let m = &m[0];
    assert!(m.merged);
    assert_eq!(m.start.0, 0);
    assert_eq!(m.elapsed().0, 2_141_000_000);
    assert_eq!(m.s2c.rexmt_pkts, 4);
    assert_eq!(m.s2c.rtos, 1);
    assert_eq!(m.s2c.dupacks, 5);
    assert_eq!(m.c2s.sack_blocks, 4);
    assert!(m.events_joined);
    assert_eq!(m.s2c.spurious_rexmt, Some(1));
    assert_eq!(m.bytes(), 800);
    assert!((m.throughput_bytes_per_s() - 800.0 / 2.141).abs() < 1e-9);

    // the same 4-tuple with another ISN is another connection
    let mut other = s.clone();
    other[0].client_isn = Some(4242);
    let m3 = la::merge_sides(&c, &other);
    assert_eq!(m3.len(), 2);
    assert!(!m3[0].merged);

    // a connection on one side only is kept
    let mut extra = s.clone();
    extra[0].client.set_port(7777);
    let m2 = la::merge_sides(&c, &extra);
    assert_eq!(m2.len(), 2);
    assert_eq!((m2[0].id, m2[1].id), (1, 2));
    assert!(!m2[0].merged && !m2[1].merged);
}
