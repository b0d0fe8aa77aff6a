//! The link model against timelines worked out by hand from the seeds' numbers.
//!
//! Seed 000's link: 64 kbit/s, so a 576-byte packet takes 576·8/64000 = 72 ms to send; 300 ms
//! one-way propagation; 9600-byte link buffers hold 16 such packets (16·576 = 9216).

use lasthop_core::{Dur, Packet, Seeds, Time};
use lasthop_link::{Cause, Dir, Event, EventKind, Link, LinkSpec, LogLevel, Output};

mod common;

use common::{link, ms, run, udp, MS};

fn push(l: &mut Link, t: Time, dir: Dir, p: Packet) -> u64 {
    l.push(t, dir, p)
}

const E0: &str = r#"
mtu = "576B"
[both]
rate = "64kbit"
delay = "300ms"
lsb = "9600B"
lrb = "9600B"
[down.queue]
packets = 20
[up.queue]
packets = 1
"#;

#[test]
fn one_packet_leaves_372ms_after_it_arrives() {
    let mut l = link(E0);
    push(&mut l, ms(1000), Dir::Down, udp(576, 1, 0));
    let (out, ev) = run(&mut l, Time::MAX);
    assert_eq!(out.len(), 1);
    // 72 ms serialization + 300 ms propagation.
    assert_eq!(out[0].at, ms(1372));
    assert_eq!(out[0].dir, Dir::Down);
    let kinds: Vec<&str> = ev
        .iter()
        .filter(|e| e.packet.is_some())
        .map(|e| e.kind.name())
        .collect();
    assert_eq!(
        kinds,
        ["arrive", "enqueue", "lsb", "tx_start", "tx_end", "release"]
    );
    let tx_end = ev.iter().find(|e| e.kind == EventKind::TxEnd).unwrap();
    assert_eq!(tx_end.time, ms(1072));
    // The uplink is independent: a 40-byte ACK takes 5 ms + 300 ms.
    push(&mut l, ms(2000), Dir::Up, udp(40, 2, 0));
    let (out, _) = run(&mut l, Time::MAX);
    assert_eq!(out[0].at, ms(2305));
}

/// Pushes `n` packets of `size` bytes down at once; returns their ids, what left the link, the
/// events, and the ids of the packets the router queue dropped.
fn burst(l: &mut Link, n: u16, size: usize) -> (Vec<u64>, Vec<Output>, Vec<Event>, Vec<u64>) {
    let ids: Vec<u64> = (0..n)
        .map(|i| push(l, ms(0), Dir::Down, udp(size, i, 0)))
        .collect();
    let (out, ev) = run(l, Time::MAX);
    let dropped = ev
        .iter()
        .filter(|e| e.kind == EventKind::Drop(Cause::Queue))
        .map(|e| e.packet.unwrap().id)
        .collect();
    (ids, out, ev, dropped)
}

#[test]
fn burst_of_40_drops_exactly_what_does_not_fit() {
    let mut l = link(E0);
    let (ids, out, ev, dropped) = burst(&mut l, 40, 576);
    // 16 packets fit the 9600-byte LSB, 20 wait in the router queue, the last 4 are dropped.
    assert_eq!(dropped, ids[36..]);
    assert_eq!(l.stats(Dir::Down).drops_queue, 4);
    // The queue peaked at 20 packets, the LSB at 16 · 576 bytes.
    assert_eq!(ev.iter().map(|e| e.queue_pkts).max(), Some(20));
    assert_eq!(ev.iter().map(|e| e.lsb_bytes).max(), Some(9216));
    // The serializer never idles: packet k leaves at 372 + 72 k ms.
    assert_eq!(out.len(), 36);
    for (k, o) in out.iter().enumerate() {
        assert_eq!(o.id, ids[k]);
        assert_eq!(o.at, ms(372 + 72 * k as u64), "packet {k}");
    }
}

#[test]
fn lsb_admit_below_lets_one_more_packet_into_the_link_send_buffer() {
    // Seawind's rule (lsb_admit = "below"): a packet enters while the LSB holds less than its
    // size. 16 · 576 = 9216 < 9600, so a 17th packet enters (9792 bytes) and no 18th: of the
    // 40-packet burst 17 go to the LSB, 20 wait in the router queue, 3 are dropped.
    let mut l = link(&E0.replace("lrb = \"9600B\"", "lrb = \"9600B\"\nlsb_admit = \"below\""));
    let (ids, out, ev, dropped) = burst(&mut l, 40, 576);
    assert_eq!(dropped, ids[37..]);
    assert_eq!(ev.iter().map(|e| e.lsb_bytes).max(), Some(17 * 576));
    assert_eq!(out.len(), 37);
    // Seed 001's buffer: 1220 bytes hold four 303-byte packets whole (1212), and a fifth
    // enters under "below" (1212 < 1220). At 9600 bit/s nothing leaves the LSB during the burst.
    let gsm = |admit: &str| {
        let spec = format!(
            "[down]\nrate = \"9600bit\"\ndelay = \"200ms\"\nlsb = \"1220B\"\nlsb_admit = \"{admit}\"\n[down.queue]\npackets = 7\n"
        );
        let (_, out, ev, _) = burst(&mut link(&spec), 20, 303);
        (ev.iter().map(|e| e.lsb_bytes).max().unwrap(), out.len())
    };
    assert_eq!(gsm("fits"), (4 * 303, 4 + 7));
    assert_eq!(gsm("below"), (5 * 303, 5 + 7));
}

/// States: bad for 400 ms, good for 600 ms, then bad for good. In the bad states every packet
/// fails (error = 1), so outcomes are exact.
fn arq_link(limit: &str) -> String {
    format!(
        r#"
mtu = "576B"
initial_state = "bad1"
[both]
rate = "64kbit"
delay = "300ms"
lsb = "9600B"
lrb = "9600B"
[states.bad1]
duration = "400ms"
next = "good"
down = {{ error = 1.0, handling = "arq", error_delay = "700ms", {limit} }}
[states.good]
duration = "600ms"
next = "bad2"
[states.bad2]
down = {{ error = 1.0, handling = "arq", error_delay = "700ms", {limit} }}
"#
    )
}

#[test]
fn arq_retry_is_700ms_late_or_dropped_and_holds_the_packets_behind() {
    for limit in ["retries = 1", "drop_threshold = \"701ms\""] {
        let mut l = link(&arq_link(limit));
        let a = push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
        let b = push(&mut l, ms(0), Dir::Down, udp(576, 2, 0));
        let c = push(&mut l, ms(0), Dir::Down, udp(576, 3, 0));
        let (out, ev) = run(&mut l, ms(5000));
        // A reaches the far end at 372 ms in bad1: error, retry at 1072 ms, which falls in bad2:
        // error again, and a second retry would pass the limit, so A is dropped at 1072 ms.
        let errs: Vec<(Time, u32)> = ev
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Error(n) => Some((e.time, n)),
                _ => None,
            })
            .collect();
        assert_eq!(errs, [(ms(372), 1), (ms(1072), 2)], "{limit}");
        let drop = ev
            .iter()
            .find(|e| e.kind == EventKind::Drop(Cause::Error))
            .unwrap();
        assert_eq!((drop.time, drop.packet.unwrap().id), (ms(1072), a));
        // B and C arrive at 444 and 516 ms in the good state, intact, and wait in the LRB.
        let holds: Vec<Time> = ev
            .iter()
            .filter(|e| e.kind == EventKind::Hold)
            .map(|e| e.time)
            .collect();
        assert_eq!(holds, [ms(444), ms(516)]);
        assert_eq!(ev.iter().map(|e| e.lrb_bytes).max(), Some(2 * 576));
        // They leave together when A's recovery ends.
        let got: Vec<(u64, Time)> = out.iter().map(|o| (o.id, o.at)).collect();
        assert_eq!(got, [(b, ms(1072)), (c, ms(1072))], "{limit}");
    }
    // With the good state reached by the retry, A is delivered exactly 700 ms late.
    let spec = arq_link("retries = 1").replace("duration = \"600ms\"\nnext = \"bad2\"", "");
    let mut l = link(&spec);
    push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
    push(&mut l, ms(0), Dir::Down, udp(576, 2, 0));
    let (out, _) = run(&mut l, ms(5000));
    let got: Vec<Time> = out.iter().map(|o| o.at).collect();
    assert_eq!(got, [ms(1072), ms(1072)]);
}

#[test]
fn long_recovery_fills_the_lsb_and_backs_packets_into_the_router_queue() {
    // The first packet is held 2.1 s (three 700 ms link retransmissions), as in seed 000's r3.
    let spec = format!("{E0}\n[[down.delays]]\nnth = 1\ndelay = \"2100ms\"\n");
    let mut l = link(&spec);
    let ids: Vec<u64> = (0..30)
        .map(|i| push(&mut l, ms(0), Dir::Down, udp(576, i, 0)))
        .collect();
    let (out, ev) = run(&mut l, Time::MAX);
    // 16 packets fill the LSB; 14 wait in the router queue while the first is in recovery.
    let q_at = |t: Time| {
        ev.iter()
            .rfind(|e| e.time <= t && e.dir == Some(Dir::Down))
            .unwrap()
            .queue_pkts
    };
    assert_eq!(q_at(ms(0)), 14);
    assert_eq!(q_at(ms(2471)), 14);
    // All 16 sent packets were transmitted by 16 · 72 = 1152 ms and sit in the LSB (and, once
    // arrived, in the LRB), so the serializer idles from 1152 ms until the release.
    let last_tx = ev
        .iter()
        .rfind(|e| e.kind == EventKind::TxEnd && e.time < ms(2472))
        .unwrap();
    assert_eq!(last_tx.time, ms(1152));
    // The first arrives at 72 + 300 + 2100 = 2472 ms and releases all 16 at once.
    for (k, o) in out.iter().take(16).enumerate() {
        assert_eq!((o.id, o.at), (ids[k], ms(2472)));
    }
    // The router queue then drains into the free LSB: packet 16 + j leaves at 2472 + 372 + 72 j.
    for (j, o) in out.iter().skip(16).enumerate() {
        assert_eq!((o.id, o.at), (ids[16 + j], ms(2472 + 372 + 72 * j as u64)));
    }
    assert_eq!(out.len(), 30);
    let delay = ev.iter().find(|e| e.kind == EventKind::Delay).unwrap();
    assert_eq!(delay.delay_ns, Some(2100 * MS));
}

#[test]
fn ecn_marks_ect_packets_where_non_ect_are_dropped() {
    // avg = q exactly (w_q = 1); above max_th = 2 every packet is chosen.
    let spec = r#"
[down]
rate = "64kbit"
lsb = "576B"
[down.queue]
packets = 100
policy = "red"
red = { min_th = 1.0, max_th = 2.0, max_p = 0.1, w_q = 1.0, ecn = true }
"#;
    for (ecn, want_marks, want_drops) in [(2u8, 3, 0), (0u8, 0, 3)] {
        let mut l = link(spec);
        for i in 0..6 {
            push(&mut l, ms(0), Dir::Down, udp(576, i, ecn));
        }
        let (out, ev) = run(&mut l, Time::MAX);
        // Arrivals see q = 0 (to the LSB), 0, 1 (avg at min_th: p_b = 0), then 2, 3, 4: chosen.
        let marks = ev.iter().filter(|e| e.kind == EventKind::Mark).count();
        let drops = ev
            .iter()
            .filter(|e| e.kind == EventKind::Drop(Cause::Red))
            .count();
        assert_eq!((marks, drops), (want_marks, want_drops), "ecn bits {ecn}");
        let ce = out
            .iter()
            .filter(|o| o.packet.ecn() == lasthop_core::Ecn::Ce)
            .count();
        assert_eq!(ce, want_marks);
        assert_eq!(out.len(), 6 - want_drops);
        // Marked packets keep a valid IPv4 header checksum.
        for o in &out {
            let h = etherparse::Ipv4HeaderSlice::from_slice(&o.packet.data)
                .unwrap()
                .to_header();
            assert_eq!(h.header_checksum, h.calc_header_checksum());
        }
    }
    // harddrop: above max_th even ECT packets are dropped.
    let mut l = link(&spec.replace("ecn = true", "ecn = true, harddrop = true"));
    for i in 0..6 {
        push(&mut l, ms(0), Dir::Down, udp(576, i, 2));
    }
    let (_, ev) = run(&mut l, Time::MAX);
    assert_eq!(
        ev.iter()
            .filter(|e| e.kind == EventKind::Drop(Cause::Red))
            .count(),
        3
    );
}

#[test]
fn red_average_and_drops_follow_the_formulas_over_a_long_run() {
    // Seed 000's RED (min_th 2, max_th 7, max_p 0.1, w_q 0.002) behind a one-packet LSB, fed
    // 20 % faster than the link drains: the queue builds, RED starts dropping.
    let spec = r#"
mtu = "576B"
[down]
rate = "64kbit"
lsb = "576B"
[down.queue]
packets = 60
policy = "red"
red = { min_th = 2.0, max_th = 7.0, max_p = 0.1, w_q = 0.002 }
"#;
    let mut l = link(spec);
    let mut t = Time::ZERO;
    let mut ev = vec![];
    for i in 0..20_000u64 {
        // 60 ms apart for 2000 packets, then 500 at 150 ms (slower than the link's 72 ms: once
        // the queue has drained each passes straight into the LSB, ending an idle period and
        // starting the next), with an idle gap of 10 s every 5000 packets.
        t += Dur::from_millis(match i % 5000 {
            4999 => 10_000,
            j if j % 2500 >= 2000 => 150,
            _ => 60,
        });
        let (_, mut e) = run(&mut l, t);
        ev.append(&mut e);
        push(&mut l, t, Dir::Down, udp(576, 1, 0));
    }
    let mut rest = vec![];
    l.drain_events(&mut rest);
    ev.append(&mut rest);
    // Replay the paper's formulas over the logged arrivals (queue length seen at arrival, and
    // when the queue last emptied) and add up the drop probabilities p_a.
    let (w, s) = (0.002f64, 72e6);
    let (mut avg, mut count, mut idle_since) = (0.0f64, -1i64, Some(0u64));
    let (mut expected, mut var, mut drops) = (0.0, 0.0, 0u64);
    for e in &ev {
        match e.kind {
            EventKind::Arrive => {
                let q = e.queue_pkts as f64;
                // Every arrival ends the idle period; the queue found empty again starts one.
                match idle_since.take() {
                    Some(since) if e.queue_pkts == 0 => {
                        avg *= (1.0 - w).powf((e.time.0 - since) as f64 / s)
                    }
                    _ => avg = (1.0 - w) * avg + w * q,
                }
                let pb = if avg < 2.0 {
                    count = -1;
                    continue;
                } else if avg < 7.0 {
                    0.1 * (avg - 2.0) / 5.0
                } else {
                    1.0
                };
                count += 1;
                let denom = 1.0 - count as f64 * pb;
                let pa = if denom <= 0.0 {
                    1.0
                } else {
                    (pb / denom).min(1.0)
                };
                expected += pa;
                var += pa * (1.0 - pa);
            }
            EventKind::Drop(Cause::Red) => {
                drops += 1;
                count = 0;
            }
            _ => {}
        }
        if e.dir == Some(Dir::Down)
            && e.queue_pkts == 0
            && idle_since.is_none()
            && e.kind != EventKind::Arrive
        {
            idle_since = Some(e.time.0);
        }
    }
    assert!(drops > 200, "RED should have dropped: {drops}");
    let sigma = var.sqrt();
    assert!(
        (drops as f64 - expected).abs() < 4.0 * sigma + 1.0,
        "drops {drops}, expected {expected:.1} ± {sigma:.1}"
    );
    assert_eq!(
        l.stats(Dir::Down).drops_queue,
        0,
        "the 60-packet limit is never reached"
    );
}

#[test]
fn the_state_timeline_does_not_depend_on_the_traffic() {
    let spec = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/links/seed000-r1.toml"
    ))
    .unwrap();
    let cfg = LinkSpec::config_from_str(&spec).unwrap();
    let timeline = |seeds: Seeds, traffic: u64| {
        let mut l = Link::new(cfg.clone(), seeds, LogLevel::Drops);
        let mut ev = vec![];
        for i in 0..traffic {
            let t = Time(i * 37 * MS);
            let (_, mut e) = run(&mut l, t);
            ev.append(&mut e);
            l.push(
                t,
                if i % 3 == 0 { Dir::Up } else { Dir::Down },
                udp(576, 1, 0),
            );
        }
        let (_, mut e) = run(&mut l, Time(600_000 * MS));
        ev.append(&mut e);
        let errors = ev
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Error(_)))
            .count();
        let states: Vec<(Time, String)> = ev
            .iter()
            .filter(|e| e.kind == EventKind::State && e.time <= Time(600_000 * MS))
            .map(|e| (e.time, e.state.as_deref().unwrap().to_string()))
            .collect();
        (states, errors)
    };
    let (quiet, e0) = timeline(Seeds::new(7, 3), 0);
    let (busy, e1) = timeline(Seeds::new(7, 3), 16_000);
    assert_eq!(e0, 0);
    assert!(e1 > 100, "bad states hit the traffic: {e1} errors");
    assert!(quiet.len() > 40, "{} state changes in 600 s", quiet.len());
    assert_eq!(quiet, busy);
    // Alternating good and bad, good first, bad lasting 0.2 to 1.5 s.
    for (i, w) in quiet.windows(2).enumerate() {
        let want = if i % 2 == 0 { "good" } else { "bad" };
        assert_eq!(w[0].1, want);
        if w[0].1 == "bad" {
            let len = w[1].0 - w[0].0;
            assert!(len >= Dur::from_millis(200) && len <= Dur::from_millis(1500));
        }
    }
    let (other, _) = timeline(Seeds::new(7, 4), 0);
    assert_ne!(quiet, other, "another replication gets another timeline");
}

#[test]
fn delay_handling_and_probabilistic_scripted_delays() {
    // Seawind DELAY: an errored packet is delayed once by error_delay, never dropped.
    let spec = r#"
[down]
rate = "64kbit"
delay = "300ms"
error = 1.0
handling = "delay"
error_delay = "6s"
"#;
    let mut l = link(spec);
    push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
    let (out, _) = run(&mut l, Time::MAX);
    assert_eq!(out[0].at, ms(6372));

    // Each packet delayed by 6 s with probability 0.01 (seed 001): about 1 % of them are.
    let spec =
        "[down]\nrate = \"unlimited\"\n[[down.delays]]\nprobability = 0.01\ndelay = \"6s\"\n";
    let mut l = link(spec);
    for i in 0..20_000 {
        push(&mut l, Time(i * MS), Dir::Down, udp(100, 1, 0));
    }
    let (_, ev) = run(&mut l, Time::MAX);
    let n = ev.iter().filter(|e| e.kind == EventKind::Delay).count();
    // Binomial(20000, 0.01): mean 200, sd 14.
    assert!((140..=260).contains(&n), "{n} delays");
}

#[test]
fn rate_schedule_and_state_rate_override() {
    let spec = r#"
[down]
rate = "64kbit"
schedule = [{ at = "1s", rate = "32kbit" }]
"#;
    let mut l = link(spec);
    push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
    push(&mut l, ms(1000), Dir::Down, udp(576, 1, 0));
    let (out, _) = run(&mut l, Time::MAX);
    assert_eq!(out[0].at, ms(72));
    assert_eq!(out[1].at, ms(1144), "576 B at 32 kbit/s take 144 ms");

    let spec = r#"
initial_state = "fast"
[down]
rate = "64kbit"
[states.fast]
duration = "500ms"
next = "slow"
[states.slow]
down = { rate = "9600bit" }
"#;
    let mut l = link(spec);
    push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
    push(&mut l, ms(600), Dir::Down, udp(576, 1, 0));
    let (out, _) = run(&mut l, Time::MAX);
    assert_eq!(out[1].at, ms(600 + 480), "576 B at 9600 bit/s take 480 ms");
}

#[test]
fn sojourn_limit_and_byte_limit() {
    let spec = r#"
[down]
rate = "64kbit"
lsb = "576B"
[down.queue]
sojourn = "100ms"
"#;
    let mut l = link(spec);
    for i in 0..3 {
        push(&mut l, ms(0), Dir::Down, udp(576, i, 0));
    }
    let (out, ev) = run(&mut l, Time::MAX);
    // The first goes straight to the LSB; the second reaches the head at 72 ms (waited 72 ms,
    // fine); the third would reach it at 144 ms after waiting 144 ms: dropped.
    assert_eq!(out.len(), 2);
    let d = ev
        .iter()
        .find(|e| e.kind == EventKind::Drop(Cause::Queue))
        .unwrap();
    assert_eq!(d.time, ms(144));

    let spec = "[down]\nrate = \"64kbit\"\nlsb = \"576B\"\n[down.queue]\nbytes = \"1000B\"\n";
    let mut l = link(spec);
    for i in 0..4 {
        push(&mut l, ms(0), Dir::Down, udp(576, i, 0));
    }
    // One in the LSB, one (576 B) in the queue; a second 576 B would make 1152 > 1000.
    assert_eq!(l.stats(Dir::Down).drops_queue, 2);
}

#[test]
fn mtu_and_log_levels() {
    let mut l = link(E0);
    push(&mut l, ms(0), Dir::Down, udp(600, 1, 0));
    assert_eq!(l.stats(Dir::Down).drops_mtu, 1);

    let cfg = LinkSpec::config_from_str(E0).unwrap();
    let mut quiet = Link::new(cfg.clone(), Seeds::new(1, 0), LogLevel::Drops);
    let mut none = Link::new(cfg, Seeds::new(1, 0), LogLevel::None);
    for i in 0..40 {
        quiet.push(ms(0), Dir::Down, udp(576, i, 0));
        none.push(ms(0), Dir::Down, udp(576, i, 0));
    }
    let (_, ev) = run(&mut quiet, Time::MAX);
    let kinds: std::collections::BTreeSet<&str> = ev.iter().map(|e| e.kind.name()).collect();
    assert_eq!(kinds, ["drop", "state"].into_iter().collect());
    let (out, ev) = run(&mut none, Time::MAX);
    assert!(ev.is_empty());
    assert_eq!(out.len(), 36);
}

#[test]
fn events_csv_rows() {
    let mut l = link(E0);
    push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
    let (_, ev) = run(&mut l, Time::MAX);
    let mut csv = lasthop_link::EventCsv::new(Vec::new()).unwrap();
    for e in &ev {
        let actual = (e.kind == EventKind::Release).then_some(Time(372_000_123));
        csv.write(e, actual).unwrap();
    }
    let text = String::from_utf8(csv.into_inner()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cols = lines[0].split(',').count();
    assert_eq!(cols, 19);
    assert!(lines.iter().all(|l| l.split(',').count() == cols), "{text}");
    assert_eq!(lines[1], "0,state,,,,,,,,,0,0,0,0,,,steady,,");
    assert_eq!(
        *lines.last().unwrap(),
        "372000000,release,down,0,udp:198.18.0.1:1>198.19.0.1:9,0,,,,576,0,0,0,0,,,,,372000123"
    );
}

#[test]
fn is_empty_tells_when_nothing_is_in_the_link() {
    let mut l = link(&arq_link("retries = 1"));
    assert!(l.is_empty());
    push(&mut l, ms(0), Dir::Down, udp(576, 1, 0));
    assert!(!l.is_empty());
    // In recovery from 372 ms to its drop at 1072 ms: still in the link.
    let _ = run(&mut l, ms(800));
    assert!(!l.is_empty());
    let _ = run(&mut l, ms(1100));
    assert!(l.is_empty());
}

#[test]
fn link_ack_delay_holds_lsb_space_until_the_link_level_ack_is_back() {
    // 64 kbit/s, 300 ms, an LSB of two 576-byte packets (72 ms each on the wire), three packets
    // at 0. p1 is sent 0-72 ms and p2 72-144 ms; p3 waits in the router queue for LSB space.
    // Without a return delay p1's space is freed when p1 leaves the LRB, at 72 + 300 = 372 ms:
    // p3 is sent 372-444 ms and released at 744 ms. With `link_ack_delay = "300ms"` the
    // link-level ACK of p1 is back at 372 + 300 = 672 ms: p3 is sent 672-744 ms, released at
    // 1044 ms. p1 and p2 are released at 372 and 444 ms either way.
    let spec = "[down]\nrate = \"64kbit\"\ndelay = \"300ms\"\nlsb = \"1152B\"\n[down.queue]\npackets = 20\n";
    for (extra, p3_start, p3_out) in [("", 372, 744), ("link_ack_delay = \"300ms\"\n", 672, 1044)] {
        let mut l = link(&spec.replace("[down.queue]", &format!("{extra}[down.queue]")));
        for i in 0..3 {
            push(&mut l, ms(0), Dir::Down, udp(576, i, 0));
        }
        let (out, ev) = run(&mut l, Time::MAX);
        let at: Vec<Time> = out.iter().map(|o| o.at).collect();
        assert_eq!(at, [ms(372), ms(444), ms(p3_out)], "{extra}");
        let starts: Vec<Time> = ev
            .iter()
            .filter(|e| e.kind == EventKind::TxStart)
            .map(|e| e.time)
            .collect();
        assert_eq!(starts, [ms(0), ms(72), ms(p3_start)], "{extra}");
        // The LSB still counts p1 and p2 after their release, until their ACKs are back.
        let last = ev.iter().rfind(|e| e.kind == EventKind::Release).unwrap();
        let held = if extra.is_empty() { 0 } else { 576 };
        assert_eq!(last.lsb_bytes, held, "{extra}");
    }
    // Only with link-layer ACK emulation, and bounded.
    for (text, key, what) in [
        (
            "[both]\nlink_ack = false\nlink_ack_delay = \"300ms\"\n",
            "both.link_ack_delay",
            "link_ack = true",
        ),
        (
            "[down]\nlsb = \"9600B\"\nlink_ack_delay = \"2min\"\n",
            "down.link_ack_delay",
            "0s..=60s",
        ),
    ] {
        let e = LinkSpec::config_from_str(text).unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(what), "{e}");
    }
}

#[test]
fn no_queue_grows_past_its_ceiling() {
    use lasthop_link::spec::MAX_QUEUE_PACKETS;
    // 64 kbit/s with no queue limit, fed 250 000 packets at once (far faster than the link):
    // a queue of 10^9 packets would have grown without bound. Without `lsb` the link send
    // buffer holds only the packet being sent, so the first packet goes on the wire, the router
    // queue takes the next MAX_QUEUE_PACKETS = 100 000, and the remaining 149 999 are queue
    // drops.
    let n = 250_000u64;
    let fill = |text: &str| {
        let cfg = LinkSpec::config_from_str(text).unwrap();
        let mut l = Link::new(cfg, Seeds::new(1, 0), LogLevel::None);
        for i in 0..n {
            push(&mut l, ms(0), Dir::Down, udp(40, i as u16, 0));
        }
        let (q, _) = l.queue_len(Dir::Down);
        let s = l.stats(Dir::Down);
        assert_eq!((q as u64, s.arrived), (MAX_QUEUE_PACKETS, n), "{text}");
        s.drops_queue
    };
    assert_eq!(
        fill("[both]\nrate = \"64kbit\"\ndelay = \"300ms\"\n"),
        149_999
    );
    // A link send buffer too large to fill (1 GB) takes 100 000 waiting packets beside the one
    // being sent, then the router queue its 100 000: 49 999 drops.
    let big = "[both]\nrate = \"64kbit\"\ndelay = \"300ms\"\nlsb = \"1GB\"\nlink_ack = false\n";
    assert_eq!(fill(big), n - 1 - 2 * MAX_QUEUE_PACKETS);
    // An explicit limit past the ceiling is refused, naming the allowed range.
    let e = LinkSpec::config_from_str("[down.queue]\npackets = 1000000000\n").unwrap_err();
    assert_eq!(e.key, "down.queue.packets");
    assert!(
        e.message.starts_with(
            "1000000000 packets: allowed 1..=100000 (a queue holds at most 100000 packets"
        ),
        "{e}"
    );
}
