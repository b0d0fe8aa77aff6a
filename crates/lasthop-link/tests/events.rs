//! `events.csv` written by `EventCsv` and read back by the one typed reader, `read_events`.

use lasthop_core::{Dur, Packet, Seeds, Time};
use lasthop_link::event::{read_events, read_events_where, RowCause, RowKind, CSV_HEADER};
use lasthop_link::middlebox::{Action, Inject, Middlebox};
use lasthop_link::{Dir, EventCsv, Link, LinkSpec, LogLevel};

fn tcp(len: usize, seq: u32) -> Packet {
    let b = etherparse::PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
        .tcp(5001, 80, seq, 1000)
        .ack(1);
    let mut v = Vec::new();
    b.write(&mut v, &vec![0u8; len - 40]).unwrap();
    Packet::from_bytes(v)
}

struct Hold50;

impl Middlebox for Hold50 {
    fn on_packet(&mut self, _: Time, _: Dir, pkt: Packet, _: &mut Inject) -> Action {
        Action::Delay(pkt, Dur::from_millis(50))
    }
}

#[test]
fn every_row_written_reads_back_typed() {
    // Two states (so `state` rows), a one-packet up queue (a queue drop), errors dropped in
    // `bad`, and a middlebox upstream (an `mbox_delay` row).
    let spec = r#"
initial_state = "good"
[both]
rate = "64kbit"
delay = "300ms"
[up.queue]
packets = 1
[states.good]
duration = "400ms"
next = "bad"
[states.bad]
duration = "10s"
next = "good"
down = { error = 1.0 }
"#;
    let cfg = LinkSpec::config_from_str(spec).unwrap();
    let mut l = Link::new(cfg, Seeds::new(1, 0), LogLevel::All);
    l.add_middlebox(Dir::Up, Box::new(Hold50));
    for i in 0..3 {
        l.push(Time::ZERO, Dir::Down, tcp(576, 1 + 536 * i));
    }
    l.push(Time::ZERO, Dir::Up, tcp(40, 1));
    while let Some(t) = l.poll_timeout().filter(|&t| t < Time(2_000_000_000)) {
        l.handle_timeout(t);
    }
    let mut events = vec![];
    l.drain_events(&mut events);
    let mut csv = EventCsv::new(Vec::new()).unwrap();
    for e in &events {
        csv.write(e, None).unwrap();
    }
    let text = csv.into_inner();
    let rows: Vec<_> = read_events(&text[..]).collect::<Result<_, _>>().unwrap();
    assert_eq!(rows.len(), events.len());
    for (e, r) in events.iter().zip(&rows) {
        assert_eq!(r.time_ns, e.time.as_nanos());
        assert_eq!(r.dir, e.dir);
        assert_eq!(r.packet, e.packet.map(|p| p.id));
        assert_eq!(r.cause, e.cause().map(RowCause::from));
        assert_eq!(r.state.as_deref(), e.state.as_deref());
        assert_eq!(r.delay_ns, e.delay_ns);
        assert_eq!(r.queue_pkts, Some(e.queue_pkts));
        assert_eq!(e.kind.name(), serde_name(r.event));
    }
    // The rows worked out by hand: the chain starts in good and enters bad at 400 ms; packet 1
    // arrives at 372 ms (good, released), packets 2 and 3 at 444 and 516 ms (bad: lost); the
    // ACK is held 50 ms by the middlebox.
    let pick = |k: RowKind| -> Vec<(u64, Option<u64>)> {
        rows.iter()
            .filter(|r| r.event == k)
            .map(|r| (r.time_ns / 1_000_000, r.packet))
            .collect()
    };
    assert_eq!(pick(RowKind::State), [(0, None), (400, None)]);
    assert_eq!(pick(RowKind::Drop), [(444, Some(1)), (516, Some(2))]);
    assert_eq!(pick(RowKind::MboxDelay), [(0, Some(3))]);
    let delay = rows.iter().find(|r| r.event == RowKind::MboxDelay).unwrap();
    assert_eq!(
        (delay.cause, delay.delay_ns),
        (Some(RowCause::Middlebox), Some(50_000_000))
    );
    // The ACK reaches the queue at 50 ms, is sent in 5 ms and leaves at 355 ms.
    assert_eq!(pick(RowKind::Release), [(355, Some(3)), (372, Some(0))]);
    let states: Vec<&str> = rows.iter().filter_map(|r| r.state.as_deref()).collect();
    assert_eq!(states, ["good", "bad"]);
}

fn serde_name(k: RowKind) -> &'static str {
    match k {
        RowKind::Arrive => "arrive",
        RowKind::Enqueue => "enqueue",
        RowKind::Unread => "unread",
        RowKind::Drop => "drop",
        RowKind::Mark => "mark",
        RowKind::Lsb => "lsb",
        RowKind::Alloc => "alloc",
        RowKind::TxStart => "tx_start",
        RowKind::TxEnd => "tx_end",
        RowKind::Delay => "delay",
        RowKind::Jitter => "jitter",
        RowKind::Reorder => "reorder",
        RowKind::Duplicate => "duplicate",
        RowKind::Error => "error",
        RowKind::Corrupt => "corrupt",
        RowKind::Hold => "hold",
        RowKind::Release => "release",
        RowKind::State => "state",
        RowKind::MboxRewrite => "mbox_rewrite",
        RowKind::MboxDelay => "mbox_delay",
        RowKind::MboxDrop => "mbox_drop",
        RowKind::MboxInject => "mbox_inject",
        RowKind::Other => "?",
    }
}

#[test]
fn bad_files_are_errors_with_line_numbers_and_columns() {
    let first = |text: &str| read_events(text.as_bytes()).find_map(|r| r.err()).unwrap();
    let e = first("");
    assert_eq!(e.line, 1);
    assert!(e.message.contains("empty"), "{e}");
    let e = first("a,b\n1,2\n");
    assert_eq!(e.line, 1);
    assert!(e.message.contains("time_ns"), "{e}");
    let e = first(&format!("{CSV_HEADER}1,drop\n"));
    assert_eq!(e.line, 2);
    assert!(e.message.contains("2 fields, the header has 19"), "{e}");
    let e = first(&format!("{CSV_HEADER}x,state,,,,,,,,,0,0,0,0,,,good,,\n"));
    assert_eq!(e.line, 2);
    assert!(e.message.contains("time_ns"), "{e}");
    // Added columns and unknown kinds or causes still read.
    let text = format!(
        "{}extra\n5,teleport,up,1,other,,,,,40,0,0,0,0,gremlin,,,,,x\n",
        CSV_HEADER.trim_end().to_string() + ","
    );
    let rows: Vec<_> = read_events(text.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        (rows[0].event, rows[0].cause, rows[0].dir),
        (RowKind::Other, Some(RowCause::Other), Some(Dir::Up))
    );
}

#[test]
fn a_filtered_read_keeps_the_kinds_asked_for_with_their_lines() {
    let text = format!(
        "{CSV_HEADER}0,arrive,down,0,tcp:a,,,,,576,0,0,0,0,,,,,\n\
         0,enqueue,down,0,tcp:a,,,,,576,1,576,0,0,,,,,\n\
         5,drop,down,1,tcp:a,,,,,576,20,11520,0,0,queue,,,,\n\
         7,release,down,0,tcp:a,,,,,576,0,0,0,0,,,,,\n"
    );
    let rows: Vec<_> = read_events_where(text.as_bytes(), |k| k == "drop" || k == "release")
        .collect::<Result<_, _>>()
        .unwrap();
    let got: Vec<_> = rows.iter().map(|(l, r)| (*l, r.event, r.time_ns)).collect();
    assert_eq!(got, [(4, RowKind::Drop, 5), (5, RowKind::Release, 7)]);
    assert_eq!(rows[0].1.cause, Some(RowCause::Queue));
    // A bad row among the skipped kinds is not parsed, so not an error; among the kept it is.
    let bad = format!("{CSV_HEADER}x,enqueue,down,0,tcp:a,,,,,576,1,576,0,0,,,,,\n");
    assert_eq!(
        read_events_where(bad.as_bytes(), |k| k == "drop").count(),
        0
    );
    let e = read_events_where(bad.as_bytes(), |_| true)
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.line, 2);
}

#[test]
fn state_names_that_would_break_the_csv_are_refused() {
    for (name, shown) in [("a,b", "','"), ("say \\\"hi\\\"", "'\"'")] {
        let spec = format!("[states.\"{name}\"]\n");
        let e = LinkSpec::config_from_str(&spec).unwrap_err().to_string();
        assert!(e.contains("states."), "{e}");
        assert!(e.contains(shown), "{e}");
        assert!(e.contains("comma, a double quote or a line break"), "{e}");
    }
}

#[test]
fn a_state_name_is_written_as_one_field() {
    // The spec refuses names that need quoting; an event built by hand shows the writer quotes
    // what needs it, so a row never gains a column.
    use lasthop_link::Event;
    let e = Event {
        time: Time(5),
        kind: lasthop_link::EventKind::State,
        dir: None,
        packet: None,
        queue_pkts: 0,
        queue_bytes: 0,
        lsb_bytes: 0,
        lrb_bytes: 0,
        state: Some("bad, \"very\"".into()),
        delay_ns: None,
    };
    let mut w = EventCsv::new(Vec::new()).unwrap();
    w.write(&e, None).unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "5,state,,,,,,,,,0,0,0,0,,,\"bad, \"\"very\"\"\",,"
    );
    let rows: Vec<_> = read_events(text.as_bytes()).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].as_ref().unwrap().state.as_deref(),
        Some("bad, \"very\"")
    );
}
