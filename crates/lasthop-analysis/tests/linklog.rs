//! The join reads exactly what `lasthop-link` writes: events of the hand-built connection are
//! written with the link's own `EventCsv` writer and joined with the capture.

mod common;

use common::*;
use lasthop_analysis::{self as la, EventLog};
use lasthop_core::{Packet, Time};
use lasthop_link::event::PacketFields;
use lasthop_link::{Cause, Dir, Event, EventCsv, EventKind};

fn packet_of(s: &Seg) -> Packet {
    let full = s.ip_bytes();
    Packet::with_wire_len(full[..s.header_len()].to_vec(), full.len() as u32)
}

fn event(t_ms: u64, kind: EventKind, dir: Dir, id: u64, p: &Packet) -> Event {
    Event {
        time: Time(t_ms * 1_000_000),
        kind,
        dir: Some(dir),
        packet: Some(PacketFields::of(id, p)),
        queue_pkts: 0,
        queue_bytes: 0,
        lsb_bytes: 0,
        lrb_bytes: 0,
        state: None,
        delay_ns: None,
    }
}

#[test]
fn join_reads_the_link_event_writer() {
    let script = hand_script();
    let mut w = EventCsv::new(Vec::new()).unwrap();
    // every packet arrives; some are dropped, the others released
    for (id, s) in script.iter().enumerate() {
        let id = id as u64;
        let p = packet_of(s);
        let dir = if s.from_client { Dir::Up } else { Dir::Down };
        w.write(&event(s.t_ms, EventKind::Arrive, dir, id, &p), None)
            .unwrap();
        let fate = match s.t_ms {
            321 => EventKind::Drop(Cause::Error),
            530 | 531 => EventKind::Drop(Cause::Queue),
            423 => EventKind::Drop(Cause::Red),
            _ => EventKind::Release,
        };
        if s.t_ms == 422 {
            w.write(&event(s.t_ms, EventKind::Mark, dir, id, &p), None)
                .unwrap();
        }
        w.write(
            &event(s.t_ms + 20, fate, dir, id, &p),
            Some(Time(s.t_ms * 1_000_000 + 20_000_123)),
        )
        .unwrap();
    }
    let csv = String::from_utf8(w.into_inner()).unwrap();
    let log = EventLog::from_reader(csv.as_bytes(), "events.csv").unwrap();
    assert!(log.has_deliveries);
    let mut conns = la::analyze_reader(&pcap_bytes(&script, Format::SimHeaderOnly)[..]).unwrap();
    log.join(&mut conns);
    let c = &conns[0];
    assert_eq!(
        (c.s2c.drops.error, c.s2c.drops.queue, c.s2c.drops.red),
        (1, 2, 0)
    );
    assert_eq!(
        (c.c2s.drops.error, c.c2s.drops.queue, c.c2s.drops.red),
        (0, 0, 1)
    );
    assert_eq!(c.c2s.drops.marks, 1);
    // D8's second copy: its first was delivered. The retransmissions of D2, D6 and D7 are not
    // spurious (their first copies were dropped).
    assert_eq!(c.s2c.spurious_rexmt, Some(1));
    assert_eq!(c.c2s.spurious_rexmt, Some(0));
}
