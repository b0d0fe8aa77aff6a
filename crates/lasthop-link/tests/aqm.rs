//! CoDel, PIE, FQ-CoDel and adaptive RED against values worked out by hand from RFC 8289,
//! RFC 8033, RFC 8290 and Floyd, Gummadi and Shenker (2001), first on the algorithms' state,
//! then end to end through the [`Link`].
//!
//! The links below run at 1 Mbit/s with 1500-byte packets, so each takes 1500·8/10^6 = 12 ms to
//! send; the link send buffer holds the packet being sent and frees it when its transmission
//! ends (`lsb = "1500B"`, `link_ack = false`), so packet k of a burst pushed at 0 leaves the
//! router queue at 12k ms after waiting 12k ms there.

use lasthop_core::{Dur, Seeds, Time};
use lasthop_link::codel::{control_law, CodelVars};
use lasthop_link::pie::{Early, Pie};
use lasthop_link::queue::Verdict;
use lasthop_link::red::Red;
use lasthop_link::spec::{CodelConfig, PieConfig, RedMode, RedSpec};
use lasthop_link::{Cause, Dir, Event, EventKind, Link, LinkSpec, Output};

mod common;

use common::{link, ms, run, udp, MS};

/// (time in ms, packet id) of the events of `kind` in direction down.
fn of_kind(ev: &[Event], kind: EventKind) -> Vec<(f64, u64)> {
    ev.iter()
        .filter(|e| e.kind == kind)
        .map(|e| (e.time.0 as f64 / MS as f64, e.packet.unwrap().id))
        .collect()
}

fn base(queue: &str) -> String {
    format!(
        r#"
mtu = "1500B"
[both]
rate = "1Mbit"
delay = "10ms"
lsb = "1500B"
link_ack = false
[down.queue]
{queue}
"#
    )
}

// ---- CoDel ------------------------------------------------------------------------------------

#[test]
fn codel_drop_times_follow_the_control_law() {
    // Dequeues every ms from a queue whose sojourn stays at 20 ms and whose backlog stays large.
    let c = CodelConfig::default();
    let mut v = CodelVars::default();
    let mut drops = vec![];
    let mut next = vec![];
    for t in 0..=500u64 {
        // As the model does: after a drop, the next packet is dequeued at once.
        let mut dropped = false;
        while v.on_dequeue(&c, 1500, ms(t), Dur::from_millis(20), 30_000, false)
            == Verdict::Drop(Cause::Codel)
        {
            drops.push(t);
            dropped = true;
        }
        if dropped {
            next.push(v.drop_next);
        }
    }
    // Above target from 0: first_above_time = 100 ms; the first drop at the first dequeue at
    // or after it (RFC 8289 §5.4), count 1, drop_next = 100 + 100/sqrt(1) = 200 ms; then
    // drop_next += 100/sqrt(count) after each drop: 200 + 70.710678 = 270.710678 (first
    // dequeue after: 271), + 57.735026 = 328.445704 (329), + 50 = 378.445704 (379),
    // + 44.721359 = 423.167063 (424), + 40.824829 = 463.991892 (464).
    assert_eq!(drops, vec![100, 200, 271, 329, 379, 424, 464]);
    assert_eq!(next[0], ms(200));
    assert_eq!(next[1], Time(270_710_678));
    assert_eq!(next[2], Time(270_710_678 + 57_735_026));
    assert_eq!(next[3], Time(328_445_704 + 50_000_000));
    assert_eq!(v.count, 7);
    // One packet under target leaves the drop state; re-entering 30 ms later (< 16 intervals
    // after drop_next) restarts at count - lastcount = 7 - 1 = 6, so the next drop comes
    // 100/sqrt(6) = 40.824829 ms later, not 100 ms.
    v.on_dequeue(&c, 1500, ms(501), Dur::from_millis(1), 30_000, false);
    assert!(!v.dropping);
    let mut t = 502;
    while v.on_dequeue(&c, 1500, ms(t), Dur::from_millis(20), 30_000, false) == Verdict::Pass {
        t += 1;
    }
    // Above target again from 502: first_above_time = 602, the re-entry drop at 602.
    assert_eq!(t, 602);
    assert_eq!((v.count, v.lastcount), (6, 6));
    assert_eq!(v.drop_next, control_law(ms(602), Dur::from_millis(100), 6));
    assert_eq!(v.drop_next, Time(602_000_000 + 40_824_829));
}

#[test]
fn codel_leaves_a_queue_of_one_mtu_alone() {
    // The sojourn is far above target, but at most one MTU stays behind: no drop ever.
    let c = CodelConfig::default();
    let mut v = CodelVars::default();
    for t in 0..1000u64 {
        let verdict = v.on_dequeue(&c, 1500, ms(t), Dur::from_millis(200), 1500, false);
        assert_eq!(verdict, Verdict::Pass);
    }
    assert_eq!(v.first_above_time, None);
}

const CODEL: &str = r#"packets = 1000
policy = "codel"
codel = { target = "5ms", interval = "100ms" }"#;

#[test]
fn codel_drops_at_dequeue_through_the_link() {
    // 60 packets at 0: packet k leaves the router queue at 12k ms. Packet 1 (sojourn 12 ms) sets
    // first_above_time = 112 ms; packet 10 at 120 ms is the first dequeue after: dropped, and
    // packet 11 leaves at once. drop_next = 220 -> packet 20 at 228 (count 2, next 290.71) ->
    // packet 27 at 300 (count 3, next 348.45) -> packet 33 at 360 (next 398.45) -> packet 38
    // at 408 (next 443.17) -> packet 42 at 444.
    let mut l = link(&base(CODEL));
    for _ in 0..60 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (out, ev) = run(&mut l, Time::MAX);
    let drops = of_kind(&ev, EventKind::Drop(Cause::Codel));
    assert_eq!(
        &drops[..6],
        &[
            (120.0, 10),
            (228.0, 20),
            (300.0, 27),
            (360.0, 33),
            (408.0, 38),
            (444.0, 42)
        ]
    );
    // The packet after a drop leaves in the same dequeue: packet 11 starts at 120 ms.
    let tx11 = ev
        .iter()
        .find(|e| e.kind == EventKind::TxStart && e.packet.unwrap().id == 11)
        .unwrap();
    assert_eq!(tx11.time, ms(120));
    assert_eq!(out.len() + drops.len(), 60);
    assert_eq!(l.stats(Dir::Down).drops_aqm, drops.len() as u64);
    assert_eq!(l.stats(Dir::Down).drops_queue, 0);
}

#[test]
fn codel_marks_ect_packets_instead() {
    // Same burst, ECT(0) and ecn = true: a mark does not remove the packet, so packet k still
    // leaves at 12k ms. Marks at 120 (packet 10), then at the first dequeue at or after 220
    // (228: packet 19), 290.71 (300: packet 25), 348.45 (360: packet 30).
    let q = CODEL.replace("interval = \"100ms\"", "interval = \"100ms\", ecn = true");
    let mut l = link(&base(&q));
    for _ in 0..60 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 2));
    }
    let (out, ev) = run(&mut l, Time::MAX);
    let marks = of_kind(&ev, EventKind::Mark);
    assert_eq!(
        &marks[..4],
        &[(120.0, 10), (228.0, 19), (300.0, 25), (360.0, 30)]
    );
    assert_eq!(out.len(), 60);
    assert!(!out
        .iter()
        .find(|o| o.id == 10)
        .unwrap()
        .packet
        .ecn()
        .is_ect());
    // A non-ECT packet is dropped even with ecn = true.
    let mut l = link(&base(&q));
    for _ in 0..60 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (_, ev) = run(&mut l, Time::MAX);
    assert_eq!(of_kind(&ev, EventKind::Drop(Cause::Codel))[0], (120.0, 10));
    assert!(of_kind(&ev, EventKind::Mark).is_empty());
}

// ---- PIE --------------------------------------------------------------------------------------

fn pie(cfg: PieConfig) -> Pie {
    Pie::new(cfg, 1500, Seeds::new(1, 0).stream("test"))
}

#[test]
fn pie_first_updates_by_hand() {
    let mut p = pie(PieConfig::default());
    p.qdelay = Dur::from_millis(30);
    p.update(15_000);
    // p = alpha (0.030 - 0.015) + beta (0.030 - 0) = 0.125·0.015 + 1.25·0.030 = 0.039375,
    // scaled by 1/2048 as drop_prob < 0.000001 (RFC 8033 §4.2): 1.922607421875e-5.
    assert!((p.prob - 0.039375 / 2048.0).abs() < 1e-15, "{}", p.prob);
    assert_eq!(p.burst_allowance, Dur::from_millis(135));
    // Delay unchanged: p = 0.125·0.015 = 0.001875, now scaled by 1/128 (1e-5 <= prob < 1e-4).
    p.update(15_000);
    let want = 0.039375 / 2048.0 + 0.001875 / 128.0;
    assert!((p.prob - want).abs() < 1e-15, "{} vs {want}", p.prob);
    // Above 10 %: no scaling, but the step is capped at 2 %; above 250 ms, 2 % more.
    p.prob = 0.5;
    p.qdelay = Dur::from_millis(300);
    p.qdelay_old = Dur::from_millis(100);
    p.update(15_000);
    // 0.125·0.285 + 1.25·0.2 = 0.285625 -> capped 0.02, + 0.02: 0.54.
    assert!((p.prob - 0.54).abs() < 1e-12, "{}", p.prob);
    // Both delays 0 and the queue empty: the probability decays by 1/64 after the update
    // (0.54 + 0.125·(0 - 0.015) - 1.25·0.3 -> 0.163125, then · 63/64).
    p.qdelay = Dur::ZERO;
    p.qdelay_old = Dur::ZERO;
    p.prob = 0.5;
    p.update(0);
    let want = (0.5 - 0.125 * 0.015) * 63.0 / 64.0;
    assert!((p.prob - want).abs() < 1e-12, "{} vs {want}", p.prob);
}

#[test]
fn pie_enqueue_rules() {
    let mut p = pie(PieConfig::default());
    p.prob = 0.3;
    p.qdelay = Dur::from_millis(30);
    // The burst allowance protects the first 150 ms.
    assert_eq!(p.drop_early(30_000, 1500), Early::Pass);
    p.burst_allowance = Dur::ZERO;
    // Fewer than 2 MTUs queued: no drop (§4.1).
    assert_eq!(p.drop_early(2999, 1500), Early::Pass);
    // Derandomization (§5.1): 0.3, 0.6 < 0.85 pass; 0.9 draws with p = 0.3.
    assert_eq!(p.drop_early(3000, 1500), Early::Pass);
    assert_eq!(p.drop_early(3000, 1500), Early::Pass);
    assert_eq!(p.drop_early(3000, 1500), Early::Draw(0.3));
    // Delay under target/2 and prob under 20 %: no drop.
    p.prob = 0.19;
    p.qdelay = Dur::from_micros(7499);
    assert_eq!(p.drop_early(30_000, 1500), Early::Pass);
}

const PIE: &str = r#"packets = 1000
policy = "pie"
pie = { target = "15ms", tupdate = "15ms", alpha = 0.125, beta = 1.25, max_burst = "150ms" }"#;

/// UDP at 2 Mbit/s (a 1500-byte packet every 6 ms) into the 1 Mbit/s link for `secs` seconds.
fn overload(l: &mut Link, secs: u64, ecn: u8) -> (Vec<Output>, Vec<Event>) {
    stream(l, secs, 6000, ecn)
}

/// A 1500-byte UDP packet every `every_us` microseconds for `secs` seconds.
fn stream(l: &mut Link, secs: u64, every_us: u64, ecn: u8) -> (Vec<Output>, Vec<Event>) {
    let (mut out, mut ev) = (vec![], vec![]);
    for i in 0..secs * 1_000_000 / every_us {
        let t = Time(every_us * i * 1000);
        let (o, e) = run(l, t);
        out.extend(o);
        ev.extend(e);
        l.push(t, Dir::Down, udp(1500, 1, ecn));
    }
    let (o, e) = run(l, Time::MAX);
    out.extend(o);
    ev.extend(e);
    (out, ev)
}

#[test]
fn pie_controls_the_delay_of_an_overload_through_the_link() {
    let mut l = link(&base(PIE));
    let (out, ev) = overload(&mut l, 30, 0);
    let drops = of_kind(&ev, EventKind::Drop(Cause::Pie));
    // Nothing is dropped while the burst allowance lasts: the first 150 ms (10 updates).
    assert!(drops[0].0 > 150.0, "{:?}", drops[0]);
    // 2x the link rate: in the long run the link carries half of the 5000 packets a 30 s run
    // sends, and PIE drops the rest (none reach the 1000-packet limit).
    assert_eq!(l.stats(Dir::Down).drops_queue, 0);
    assert_eq!(out.len() + drops.len(), 5000);
    let late = drops.iter().filter(|d| d.0 >= 10_000.0).count() as f64;
    // 20 s of arrivals after 10 s: 3333 packets, of which the link sends 20 s / 12 ms = 1667.
    assert!((late / 3333.0 - 0.5).abs() < 0.03, "{late}");
    // And the delay is held near target: a droptail queue would hold ~1000 packets (12 s);
    // under PIE, after 10 s the sojourn of the packets leaving the router queue stays within
    // a few targets.
    let mut enq = std::collections::HashMap::new();
    let mut worst = 0u64;
    for e in &ev {
        let id = e.packet.map(|p| p.id);
        match e.kind {
            EventKind::Enqueue => {
                enq.insert(id.unwrap(), e.time);
            }
            EventKind::Lsb if e.time >= ms(10_000) => {
                worst = worst.max(e.time.saturating_since(enq[&id.unwrap()]).0);
            }
            _ => {}
        }
    }
    assert!(worst < 100 * MS, "{} ms", worst / MS);
}

#[test]
fn pie_marks_ect_packets_below_ten_percent() {
    // ECT with ecn = true: PIE marks while its probability is at most 10 %. A stream 1 % above
    // the link rate (a packet every 11.88 ms) is not slowed by marks, so the delay keeps growing
    // and the probability passes 10 %, from where PIE drops ECT packets too.
    let q = PIE.replace("max_burst = \"150ms\"", "max_burst = \"150ms\", ecn = true");
    let mut l = link(&base(&q));
    let (_, ev) = stream(&mut l, 120, 11_880, 2);
    let marks = of_kind(&ev, EventKind::Mark);
    let drops = of_kind(&ev, EventKind::Drop(Cause::Pie));
    assert!(
        !marks.is_empty() && !drops.is_empty(),
        "{} marks, {} drops, {} queue drops",
        marks.len(),
        drops.len(),
        l.stats(Dir::Down).drops_queue
    );
    // The first signal is a mark (the probability climbs from 0).
    assert!(marks[0].0 < drops[0].0);
}

// ---- FQ-CoDel ---------------------------------------------------------------------------------

#[test]
fn fq_codel_serves_a_sparse_flow_before_a_bulk_backlog() {
    // Flow A (port 1) pushes 20 packets at 0: A0 at 0, A1 at 12, A2 at 24 ms. Flow B (port 2)
    // sends one packet at 30 ms: it joins new_flows, which are served before old_flows (A went
    // to old_flows when its first quantum was spent), so B0 leaves at 36 ms, not after A's 17
    // packets still queued (240 ms in a FIFO).
    let mut l = link(&base("policy = \"fq_codel\""));
    for _ in 0..20 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (_, mut ev) = run(&mut l, ms(30));
    let b = l.push(ms(30), Dir::Down, udp(1500, 2, 0));
    let (out, ev2) = run(&mut l, Time::MAX);
    ev.extend(ev2);
    let starts = of_kind(&ev, EventKind::TxStart);
    assert_eq!(starts[3], (36.0, b));
    assert_eq!(starts[4], (48.0, 3));
    // B0 left the link at 36 + 12 + 10 ms.
    assert_eq!(out.iter().find(|o| o.id == b).unwrap().at, ms(58));
    // With a FIFO (drop-tail) it leaves after every A packet: at 240 ms.
    let mut l = link(&base(""));
    for _ in 0..20 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    run(&mut l, ms(30));
    let b = l.push(ms(30), Dir::Down, udp(1500, 2, 0));
    let (_, ev) = run(&mut l, Time::MAX);
    assert_eq!(of_kind(&ev, EventKind::TxStart).last(), Some(&(240.0, b)));
}

#[test]
fn fq_codel_round_robin_uses_the_quantum() {
    // Two backlogged flows, quantum 3000B = two packets. A0 passes at once (A's deficit 3000 ->
    // 1500) and the scheduler does not run again until the LSB has room (12 ms): A is still
    // first in new_flows with 1500 left: A1. Then A's deficit is spent: it gets 3000 more and
    // goes to old_flows; new flow B sends B0, B1; then old flows in turn, two packets each:
    // A2 A3, B2 B3, A4 A5, B4 B5.
    let mut l = link(&base(
        "policy = \"fq_codel\"\nfq_codel = { quantum = \"3000B\" }",
    ));
    let mut a = vec![];
    let mut b = vec![];
    for _ in 0..6 {
        a.push(l.push(ms(0), Dir::Down, udp(1500, 1, 0)));
        b.push(l.push(ms(0), Dir::Down, udp(1500, 2, 0)));
    }
    let (out, _) = run(&mut l, Time::MAX);
    let order: Vec<u64> = out.iter().map(|o| o.id).collect();
    assert_eq!(
        order,
        vec![a[0], a[1], b[0], b[1], a[2], a[3], b[2], b[3], a[4], a[5], b[4], b[5]]
    );
}

#[test]
fn fq_codel_drops_half_the_fattest_flow_when_full() {
    // Limit 10 packets. A pushes 8 at 0 (A0 goes straight to the LSB, 7 wait: 10500 bytes).
    // B pushes 4 at 1 ms: B3 makes 11 > 10. The fattest flow is A: drop from its head until half
    // its backlog (5250 bytes) is gone: A1, A2, A3, A4 (6000 bytes), with cause `queue`.
    let q = "packets = 10\npolicy = \"fq_codel\"";
    let mut l = link(&base(q));
    let a: Vec<u64> = (0..8)
        .map(|_| l.push(ms(0), Dir::Down, udp(1500, 1, 0)))
        .collect();
    for _ in 0..4 {
        l.push(ms(1), Dir::Down, udp(1500, 2, 0));
    }
    let (_, ev) = run(&mut l, ms(1));
    let drops = of_kind(&ev, EventKind::Drop(Cause::Queue));
    assert_eq!(
        drops,
        vec![(1.0, a[1]), (1.0, a[2]), (1.0, a[3]), (1.0, a[4])]
    );
    assert_eq!(l.queue_len(Dir::Down), (7, 7 * 1500));
    // drop_batch = 1: only A1.
    let q = "packets = 10\npolicy = \"fq_codel\"\nfq_codel = { drop_batch = 1 }";
    let mut l = link(&base(q));
    let a: Vec<u64> = (0..8)
        .map(|_| l.push(ms(0), Dir::Down, udp(1500, 1, 0)))
        .collect();
    for _ in 0..4 {
        l.push(ms(1), Dir::Down, udp(1500, 2, 0));
    }
    let (_, ev) = run(&mut l, ms(1));
    assert_eq!(
        of_kind(&ev, EventKind::Drop(Cause::Queue)),
        vec![(1.0, a[1])]
    );
}

#[test]
fn fq_codel_with_one_flow_drops_like_codel() {
    // One flow: DRR changes nothing, and its CoDel sees the whole queue's backlog, so the drops
    // are CoDel's above (ECN off to compare, as ecn defaults to true in fq_codel).
    let q = "packets = 1000\npolicy = \"fq_codel\"\nfq_codel = { ecn = false }";
    let mut l = link(&base(q));
    for _ in 0..60 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (_, ev) = run(&mut l, Time::MAX);
    let drops = of_kind(&ev, EventKind::Drop(Cause::Codel));
    assert_eq!(
        &drops[..4],
        &[(120.0, 10), (228.0, 20), (300.0, 27), (360.0, 33)]
    );
    // ECN on (the default) and ECT packets: marks at the same times as CoDel's marks.
    let mut l = link(&base("packets = 1000\npolicy = \"fq_codel\""));
    for _ in 0..60 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 2));
    }
    let (_, ev) = run(&mut l, Time::MAX);
    assert_eq!(
        &of_kind(&ev, EventKind::Mark)[..4],
        &[(120.0, 10), (228.0, 19), (300.0, 25), (360.0, 30)]
    );
}

// ---- adaptive RED -------------------------------------------------------------------------------

fn red_spec() -> RedSpec {
    RedSpec {
        min_th: 5.0,
        max_th: 15.0,
        max_p: 0.1,
        w_q: 1e-12,
        mode: RedMode::Packets,
        gentle: true,
        ecn: false,
        harddrop: false,
        mean_packet: None,
        adaptive: true,
        ns2: false,
    }
}

#[test]
fn adaptive_red_moves_max_p_every_500ms() {
    // Target band: 5 + 0.4·10 = 9 to 5 + 0.6·10 = 11 packets.
    let mut r = Red::new(red_spec(), 1500);
    r.avg = 14.0;
    // An arrival at 1.2 s (queue non-empty) first runs the adaptations of 0.5 s and 1 s (the
    // discipline calls `adapt` before RED's arrival):
    // 0.1 + min(0.01, 0.1/4) = 0.11, then 0.12.
    r.adapt(Time(1_200 * MS), Dur::from_millis(12));
    r.on_arrival(Time(1_200 * MS), 14, 0, 1500, Dur::from_millis(12), 0.99);
    assert!((r.spec.max_p - 0.12).abs() < 1e-12, "{}", r.spec.max_p);
    assert_eq!(r.next_adapt, ms(1500));
    // Below the band: max_p · 0.9 each time (at 1.5 s and 2 s).
    r.avg = 6.0;
    r.adapt(ms(2_000), Dur::from_millis(12));
    r.on_arrival(ms(2_000), 6, 0, 1500, Dur::from_millis(12), 0.99);
    assert!(
        (r.spec.max_p - 0.12 * 0.81).abs() < 1e-12,
        "{}",
        r.spec.max_p
    );
    // In the band: unchanged, however long.
    r.avg = 10.0;
    r.adapt(ms(60_000), Dur::from_millis(12));
    r.on_arrival(ms(60_000), 10, 0, 1500, Dur::from_millis(12), 0.99);
    assert!((r.spec.max_p - 0.12 * 0.81).abs() < 1e-12);
    assert_eq!(r.next_adapt, ms(60_500));
    // The bounds: an increase only from max_p <= 0.5, a decrease only from max_p >= 0.01.
    r.spec.max_p = 0.5;
    r.avg = 14.0;
    r.adapt(ms(62_000), Dur::from_millis(12));
    r.on_arrival(ms(62_000), 14, 0, 1500, Dur::from_millis(12), 0.99);
    assert!((r.spec.max_p - 0.51).abs() < 1e-12, "{}", r.spec.max_p);
    r.spec.max_p = 0.0105;
    r.avg = 6.0;
    r.adapt(ms(64_000), Dur::from_millis(12));
    r.on_arrival(ms(64_000), 6, 0, 1500, Dur::from_millis(12), 0.99);
    assert!(
        (r.spec.max_p - 0.0105 * 0.9).abs() < 1e-12,
        "{}",
        r.spec.max_p
    );
}

#[test]
fn adaptive_red_holds_the_average_in_its_band() {
    // 2x overload into RED 5/15 (w_q 0.002, gentle) starting at max_p 0.02. Plain RED has to
    // shed half the packets with p_b <= 0.02 below max_th, so its average sits above max_th in
    // the gentle region; adaptive RED raises max_p by 0.01 every 500 ms while the average is
    // above 11 and settles it in the band [9, 11].
    let red = "packets = 100\npolicy = \"red\"\nred = { min_th = 5.0, max_th = 15.0, max_p = 0.02, w_q = 0.002, gentle = true";
    let plain = format!("{red} }}");
    let adaptive = format!("{red}, adaptive = true }}");
    let mean_queue = |q: &str| {
        let mut l = link(&base(q));
        let (_, ev) = overload(&mut l, 60, 0);
        let found: Vec<f64> = ev
            .iter()
            .filter(|e| e.kind == EventKind::Arrive && e.time >= ms(40_000))
            .map(|e| f64::from(e.queue_pkts))
            .collect();
        found.iter().sum::<f64>() / found.len() as f64
    };
    let (p, a) = (mean_queue(&plain), mean_queue(&adaptive));
    assert!(p > 15.0, "plain {p}");
    assert!((8.0..=12.0).contains(&a), "adaptive {a}");
}

// ---- spec keys ----------------------------------------------------------------------------------

/// The spec's error names every fragment.
fn refused(spec: &str, fragments: &[&str]) {
    let e = LinkSpec::config_from_str(spec)
        .err()
        .unwrap_or_else(|| panic!("accepted: {spec}"))
        .to_string();
    for f in fragments {
        assert!(e.contains(f), "{e:?} does not mention {f:?}");
    }
}

#[test]
fn out_of_range_parameters_are_refused_with_the_key() {
    let q = |body: &str| format!("[down.queue]\n{body}\n");
    refused(
        &q("policy = \"codel\"\ncodel = { target = \"0ms\" }"),
        &["down.queue.codel.target", "above 0", "5ms"],
    );
    refused(
        &q("policy = \"codel\"\ncodel = { target = \"-5ms\" }"),
        &["down.queue.codel.target", "-5ms"],
    );
    refused(
        &q("policy = \"codel\"\ncodel = { interval = \"0s\" }"),
        &["down.queue.codel.interval", "above 0", "100ms"],
    );
    refused(
        &q("policy = \"codel\"\ncodel = { target = \"5ms\", intervall = \"1s\" }"),
        &["down.queue.codel.intervall", "interval"],
    );
    refused(
        &q("policy = \"pie\"\npie = { target = \"0ms\" }"),
        &["down.queue.pie.target", "above 0"],
    );
    refused(
        &q("policy = \"pie\"\npie = { tupdate = \"0ms\" }"),
        &["down.queue.pie.tupdate", "above 0"],
    );
    refused(
        &q("policy = \"pie\"\npie = { alpha = 0.0 }"),
        &["down.queue.pie.alpha", "0", "(0, 2]"],
    );
    refused(
        &q("policy = \"pie\"\npie = { beta = 2.5 }"),
        &["down.queue.pie.beta", "2.5", "(0, 2]"],
    );
    refused(
        &q("policy = \"fq_codel\"\nfq_codel = { flows = 0 }"),
        &["down.queue.fq_codel.flows", "0", "1 to 65536"],
    );
    refused(
        &q("policy = \"fq_codel\"\nfq_codel = { quantum = \"0B\" }"),
        &["down.queue.fq_codel.quantum", "0B"],
    );
    refused(
        &q("policy = \"fq_codel\"\nfq_codel = { target = \"0ms\" }"),
        &["down.queue.fq_codel.target", "above 0"],
    );
    refused(
        &q("policy = \"fq_codel\"\nfq_codel = { drop_batch = 0 }"),
        &["down.queue.fq_codel.drop_batch", "1 or more"],
    );
    // A table for another policy, and an unknown policy naming the new ones.
    refused(
        &q("policy = \"red\"\nred = { min_th = 5.0, max_th = 15.0, max_p = 0.1, w_q = 0.002 }\ncodel = {}"),
        &["down.queue.codel", "policy is \"red\"", "policy = \"codel\""],
    );
    refused(
        &q("codel = { target = \"5ms\" }"),
        &["down.queue.codel", "policy is \"droptail\""],
    );
    refused(
        &q("policy = \"codle\""),
        &["down.queue.policy", "codle", "codel", "pie", "fq_codel"],
    );
}

#[test]
fn defaults_and_descriptions() {
    use lasthop_link::spec::{Aqm, FqCodelConfig};
    let cfg = LinkSpec::config_from_str("[both.queue]\npolicy = \"codel\"\n").unwrap();
    assert_eq!(
        cfg.dirs[0].queue.aqm,
        Some(Aqm::Codel(CodelConfig::default()))
    );
    assert!(cfg
        .describe()
        .contains("CoDel target 5ms interval 100ms (at dequeue)"));
    let cfg = LinkSpec::config_from_str("[down.queue]\npolicy = \"pie\"\npie = { ecn = true }\n")
        .unwrap();
    assert_eq!(
        cfg.dirs[0].queue.aqm,
        Some(Aqm::Pie(PieConfig {
            ecn: true,
            ..PieConfig::default()
        }))
    );
    assert!(cfg.describe().contains(
        "PIE target 15ms tupdate 15ms alpha 0.125 beta 1.25 max_burst 150ms (queue delay from timestamps, ECN marking)"
    ));
    let cfg =
        LinkSpec::config_from_str("mtu = \"576B\"\n[down.queue]\npolicy = \"fq_codel\"\n").unwrap();
    let f = FqCodelConfig::default();
    assert_eq!((f.flows, f.drop_batch, f.codel.ecn), (1024, 64, true));
    assert_eq!(cfg.dirs[0].queue.aqm, Some(Aqm::FqCodel(f)));
    let d = cfg.describe();
    assert!(d.contains("FQ-CoDel 1024 flows, quantum 576B"), "{d}");
    let cfg = LinkSpec::config_from_str(
        "[down.queue]\npolicy = \"red\"\nred = { min_th = 5.0, max_th = 15.0, max_p = 0.1, w_q = 0.002, adaptive = true, gentle = true }\n",
    )
    .unwrap();
    assert!(cfg.describe().contains("adaptive RED min_th 5"));
}

// ---- events.csv and per-flow state --------------------------------------------------------------

#[test]
fn aqm_causes_are_written_and_read_back_by_name() {
    use lasthop_link::event::{read_events, RowCause};
    use lasthop_link::EventCsv;
    let mut rows = vec![];
    for (q, cause) in [(CODEL, RowCause::Codel), (PIE, RowCause::Pie)] {
        let mut l = link(&base(q));
        let (_, ev) = overload(&mut l, 2, 0);
        let mut csv = EventCsv::new(Vec::new()).unwrap();
        for e in &ev {
            csv.write(e, None).unwrap();
        }
        let text = String::from_utf8(csv.into_inner()).unwrap();
        assert!(
            text.contains(&format!(",{},", cause.name())),
            "{}",
            cause.name()
        );
        let drops: Vec<_> = read_events(text.as_bytes())
            .map(|r| r.unwrap())
            .filter(|r| r.cause == Some(cause))
            .collect();
        assert_eq!(
            drops.len(),
            ev.iter()
                .filter(|e| matches!(e.kind, EventKind::Drop(Cause::Codel | Cause::Pie)))
                .count()
        );
        rows.push(drops.len());
    }
    assert!(rows.iter().all(|&n| n > 0));
}

#[test]
fn fq_codel_keeps_codel_state_per_flow() {
    // Bulk flow A: 60 packets at 0. Flow B: one packet every 48 ms from 6 ms, never more than
    // one queued. Each round B, a new flow again (its queue emptied), goes first: its packets
    // wait at most one transmission (12 ms) and none is dropped, while A's CoDel drops as its
    // own sojourn stays above target.
    let q = "packets = 1000\npolicy = \"fq_codel\"\nfq_codel = { ecn = false }";
    let mut l = link(&base(q));
    for _ in 0..60 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (mut out, mut ev) = (vec![], vec![]);
    let mut b = vec![];
    for k in 0..15u64 {
        let t = ms(6 + 48 * k);
        let (o, e) = run(&mut l, t);
        out.extend(o);
        ev.extend(e);
        b.push(l.push(t, Dir::Down, udp(1500, 2, 0)));
    }
    let (o, e) = run(&mut l, Time::MAX);
    out.extend(o);
    ev.extend(e);
    let drops = of_kind(&ev, EventKind::Drop(Cause::Codel));
    assert!(!drops.is_empty());
    assert!(drops.iter().all(|d| !b.contains(&d.1)), "{drops:?}");
    // B's packets: pushed at 6 + 48k, sent by 6 + 48k + 12 at the latest (the transmission
    // running when it arrives), so released by + 12 + 12 + 10 ms.
    for (k, id) in b.iter().enumerate() {
        let at = out.iter().find(|o| o.id == *id).unwrap().at;
        assert!(at <= ms(6 + 48 * k as u64 + 34), "B{k} at {at:?}");
    }
}
