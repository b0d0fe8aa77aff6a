//! Issue 24: link settings that silently did nothing. Each test fails on the model before the
//! fix (an unlimited link send buffer by default, AQMs without a default packet limit).
//!
//! The links run at 10 Mbit/s with 1500-byte packets: each takes 1500·8/10^7 s = 1.2 ms to
//! send.

use lasthop_core::Time;
use lasthop_link::spec::{LINUX_CODEL_PIE_LIMIT, LINUX_FQ_CODEL_LIMIT};
use lasthop_link::{Cause, Dir, Event, EventKind, LinkSpec};

mod common;

use common::{link, ms, run, udp, MS};

fn us(n: u64) -> Time {
    Time(n * 1_000)
}

/// (time in µs, packet id) of the events of `kind`.
fn of_kind(ev: &[Event], kind: EventKind) -> Vec<(u64, u64)> {
    ev.iter()
        .filter(|e| e.kind == kind)
        .map(|e| (e.time.0 / 1_000, e.packet.unwrap().id))
        .collect()
}

#[test]
fn without_lsb_the_link_holds_only_the_packet_being_sent() {
    // Five packets at 0 into a router queue of 2 packets. Packet 0 finds the link idle and is
    // sent at once (0 to 1.2 ms); packets 1 and 2 wait in the router queue (sent 1.2 to 2.4 and
    // 2.4 to 3.6 ms); packets 3 and 4 find it full and are dropped with cause `queue`. With
    // 10 ms of propagation they leave at 11.2, 12.4 and 13.6 ms. (Before: the unlimited LSB
    // took all five at 0, the queue limit never acted, and five left.)
    let mut l = link(
        "[both]\nrate = \"10Mbit\"\ndelay = \"10ms\"\n[down.queue]\npackets = 2\n[up.queue]\npackets = 2\n",
    );
    for _ in 0..5 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (out, ev) = run(&mut l, Time::MAX);
    let at: Vec<Time> = out.iter().map(|o| o.at).collect();
    assert_eq!(at, [us(11_200), us(12_400), us(13_600)]);
    assert_eq!(
        of_kind(&ev, EventKind::Drop(Cause::Queue)),
        [(0, 3), (0, 4)]
    );
    assert_eq!(
        of_kind(&ev, EventKind::TxStart),
        [(0, 0), (1_200, 1), (2_400, 2)]
    );
    // The LSB holds the one packet being sent, and nothing once it is sent.
    let enq: Vec<u64> = ev
        .iter()
        .filter(|e| e.kind == EventKind::Lsb)
        .map(|e| e.lsb_bytes)
        .collect();
    assert_eq!(enq, [1500, 1500, 1500]);
    let ends: Vec<u64> = ev
        .iter()
        .filter(|e| e.kind == EventKind::TxEnd)
        .map(|e| e.lsb_bytes)
        .collect();
    assert_eq!(ends, [0, 0, 0]);
    assert_eq!(l.meter(Dir::Down).queue_max, 2);
    let d = &l.config().dirs[0];
    assert_eq!((d.lsb, d.link_ack), (None, false));
}

#[test]
fn fq_codel_at_10mbit_without_lsb_sees_its_queue() {
    // The researcher's case: FQ-CoDel (defaults: target 5 ms, interval 100 ms) on a 10 Mbit/s
    // link, nothing else given. A burst of 200 packets of one flow at 0: packet 0 is sent at
    // once; packet k leaves the router queue at 1.2k ms after waiting 1.2k ms there. Packet 5
    // (6 ms, the first above 5 ms) sets first_above_time = 106 ms; the first dequeue at or
    // after it, packet 89 at 106.8 ms, is dropped and packet 90 leaves in its place; from then
    // packet k leaves at 1.2(k - 1) ms. drop_next = 106.8 + 100/sqrt(1) = 206.8 ms: packet 174
    // at 1.2 · 173 = 207.6 ms is the second drop. (Before: all 200 moved into the unlimited LSB
    // at 0, the router queue never held a packet and FQ-CoDel dropped nothing.)
    let mut l = link("[both]\nrate = \"10Mbit\"\n[down.queue]\npolicy = \"fq_codel\"\n");
    for _ in 0..200 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (out, ev) = run(&mut l, Time::MAX);
    let drops = of_kind(&ev, EventKind::Drop(Cause::Codel));
    assert_eq!(&drops[..2], &[(106_800, 89), (207_600, 174)]);
    assert_eq!(l.stats(Dir::Down).drops_aqm, drops.len() as u64);
    assert_eq!(out.len() + drops.len(), 200);
    // 199 packets waited in the router queue behind packet 0.
    assert_eq!(l.meter(Dir::Down).queue_max, 199);
    let _ = MS;
}

#[test]
fn aqm_queues_take_linux_default_packet_limits() {
    for (policy, limit) in [
        ("codel", LINUX_CODEL_PIE_LIMIT),
        ("pie", LINUX_CODEL_PIE_LIMIT),
        ("fq_codel", LINUX_FQ_CODEL_LIMIT),
    ] {
        let cfg =
            LinkSpec::config_from_str(&format!("[down.queue]\npolicy = \"{policy}\"\n")).unwrap();
        assert_eq!(cfg.dirs[0].queue.packets, Some(limit), "{policy}");
        // An explicit limit still wins, and drop-tail keeps no limit.
        let cfg = LinkSpec::config_from_str(&format!(
            "[down.queue]\npolicy = \"{policy}\"\npackets = 7\n"
        ))
        .unwrap();
        assert_eq!(cfg.dirs[0].queue.packets, Some(7), "{policy}");
    }
    assert_eq!((LINUX_CODEL_PIE_LIMIT, LINUX_FQ_CODEL_LIMIT), (1000, 10240));
    let cfg = LinkSpec::config_from_str("[down.queue]\npolicy = \"droptail\"\n").unwrap();
    assert_eq!(cfg.dirs[0].queue.packets, None);

    // CoDel without `packets`: 1005 packets at 0, packet 0 sent at once, packets 1..=1000 fill
    // Linux's 1000, packets 1001..=1004 are dropped with cause `queue`. (Before: no limit, no
    // drop at 0.)
    let mut l = link("[both]\nrate = \"10Mbit\"\n[down.queue]\npolicy = \"codel\"\n");
    for _ in 0..1005 {
        l.push(ms(0), Dir::Down, udp(1500, 1, 0));
    }
    let (_, ev) = run(&mut l, ms(0));
    assert_eq!(
        of_kind(&ev, EventKind::Drop(Cause::Queue)),
        [(0, 1001), (0, 1002), (0, 1003), (0, 1004)]
    );
}

#[test]
fn link_ack_and_lsb_admit_need_an_lsb() {
    // Link-layer ACK emulation without a link send buffer would be stop-and-wait: refused,
    // naming the key and what to give.
    let e = LinkSpec::config_from_str("[both]\nrate = \"10Mbit\"\nlink_ack = true\n").unwrap_err();
    assert_eq!(e.key, "both.link_ack", "{e}");
    assert!(e.message.contains("lsb = "), "{e}");
    assert!(e.message.contains("stop-and-wait"), "{e}");
    let e = LinkSpec::config_from_str("[down]\nlsb_admit = \"below\"\n").unwrap_err();
    assert_eq!(e.key, "down.lsb_admit", "{e}");
    // With `lsb` link_ack stays Seawind's default, on.
    let cfg = LinkSpec::config_from_str("[both]\nlsb = \"9600B\"\n").unwrap();
    assert!(cfg.dirs[0].link_ack);
    // `check` says what the LSB holds.
    let cfg = LinkSpec::config_from_str("[both]\nrate = \"10Mbit\"\n").unwrap();
    assert!(
        cfg.describe()
            .contains("link send buffer of the packet being sent"),
        "{}",
        cfg.describe()
    );
}
