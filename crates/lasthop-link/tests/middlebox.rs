//! Middleboxes at the router, before the queue: small test middleboxes for each action, with
//! times worked out by hand.
//!
//! The link: 64 kbit/s, 300 ms one-way, no limits. A 576-byte packet takes 72 ms to send, a
//! 40-byte ACK 5 ms; so a lone packet pushed at t leaves at t + 372 ms, a lone ACK at t + 305 ms.

use lasthop_core::{Dur, Packet, Seeds, Time};
use lasthop_link::middlebox::{set_tcp_window, Action, Inject, Middlebox};
use lasthop_link::{Cause, Dir, Event, EventKind, Link, LinkSpec, LogLevel};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> Time {
    Time(n * MS)
}

const LINK: &str = "[both]\nrate = \"64kbit\"\ndelay = \"300ms\"\n";

fn link() -> Link {
    let cfg = LinkSpec::config_from_str(LINK).unwrap();
    Link::new(cfg, Seeds::new(1, 0), LogLevel::All)
}

/// A TCP segment of `len` bytes on the wire (real payload), advertising `window`.
fn tcp(len: usize, window: u16, sport: u16) -> Packet {
    let b = etherparse::PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
        .tcp(sport, 80, 1000, window)
        .ack(1);
    let mut v = Vec::new();
    b.write(&mut v, &vec![7u8; len - 40]).unwrap();
    Packet::from_bytes(v)
}

/// (direction, id, release time, packet) of each output.
type Out = (Dir, u64, Time, Packet);

fn run(l: &mut Link) -> (Vec<Out>, Vec<Event>) {
    let (mut out, mut ev) = (vec![], vec![]);
    loop {
        while let Some(o) = l.poll_output() {
            out.push((o.dir, o.id, o.at, o.packet));
        }
        let Some(t) = l.poll_timeout() else { break };
        l.handle_timeout(t);
    }
    l.drain_events(&mut ev);
    (out, ev)
}

fn mbox_events(ev: &[Event]) -> Vec<(&'static str, Time, Option<u64>, Option<u64>)> {
    ev.iter()
        .filter(|e| e.kind.name().starts_with("mbox_"))
        .map(|e| (e.kind.name(), e.time, e.packet.map(|p| p.id), e.delay_ns))
        .collect()
}

/// Rewrites the advertised window of every TCP segment to `window`.
struct WindowClamp(u16);

impl Middlebox for WindowClamp {
    fn on_packet(&mut self, _: Time, _: Dir, mut pkt: Packet, _: &mut Inject) -> Action {
        match pkt.tcp() {
            Some(t) if t.window != self.0 && set_tcp_window(&mut pkt, self.0) => {
                Action::Rewrite(pkt)
            }
            _ => Action::Pass(pkt),
        }
    }
}

#[test]
fn a_window_rewriter_fixes_the_tcp_checksum() {
    let mut l = link();
    l.add_middlebox(Dir::Up, Box::new(WindowClamp(1000)));
    let id = l.push(Time::ZERO, Dir::Up, tcp(40, 65535, 5001));
    let (out, ev) = run(&mut l);
    assert_eq!(
        mbox_events(&ev),
        [("mbox_rewrite", Time::ZERO, Some(id), None)]
    );
    let rewrite = ev
        .iter()
        .find(|e| e.kind == EventKind::MboxRewrite)
        .unwrap();
    assert_eq!(rewrite.cause(), Some(Cause::Middlebox));
    // 40 B at 64 kbit/s: 5 ms, then 300 ms.
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].1, out[0].2), (id, ms(305)));
    let p = etherparse::SlicedPacket::from_ip(&out[0].3.data).unwrap();
    let (Some(etherparse::NetSlice::Ipv4(ip)), Some(etherparse::TransportSlice::Tcp(t))) =
        (p.net, p.transport)
    else {
        panic!("not TCP/IPv4");
    };
    assert_eq!(t.window_size(), 1000);
    let want = t
        .to_header()
        .calc_checksum_ipv4(&ip.header().to_header(), t.payload())
        .unwrap();
    assert_eq!(t.checksum(), want);
    // A data segment with a payload too (the checksum covers it).
    let mut seg = tcp(576, 4096, 5001);
    assert!(set_tcp_window(&mut seg, 512));
    let p = etherparse::SlicedPacket::from_ip(&seg.data).unwrap();
    let (Some(etherparse::NetSlice::Ipv4(ip)), Some(etherparse::TransportSlice::Tcp(t))) =
        (p.net, p.transport)
    else {
        panic!("not TCP/IPv4");
    };
    let want = t
        .to_header()
        .calc_checksum_ipv4(&ip.header().to_header(), t.payload())
        .unwrap();
    assert_eq!((t.window_size(), t.checksum()), (512, want));
}

/// Holds every packet 100 ms.
struct Delayer;

impl Middlebox for Delayer {
    fn on_packet(&mut self, _: Time, _: Dir, pkt: Packet, _: &mut Inject) -> Action {
        Action::Delay(pkt, Dur::from_millis(100))
    }
}

#[test]
fn a_100ms_delayer_holds_packets_before_the_queue() {
    let mut l = link();
    l.add_middlebox(Dir::Down, Box::new(Delayer));
    let a = l.push(Time::ZERO, Dir::Down, tcp(576, 100, 1));
    let b = l.push(ms(10), Dir::Down, tcp(576, 100, 2));
    // Nothing reached the queue yet; the link wakes for the first packet at 100 ms.
    assert_eq!(l.queue_len(Dir::Down), (0, 0));
    assert_eq!(l.poll_timeout(), Some(ms(100)));
    let (out, ev) = run(&mut l);
    assert_eq!(
        mbox_events(&ev),
        [
            ("mbox_delay", ms(0), Some(a), Some(100 * MS)),
            ("mbox_delay", ms(10), Some(b), Some(100 * MS)),
        ]
    );
    // A enters at 100 ms: sent 100..172, leaves at 472. B enters at 110, waits for A, is sent
    // 172..244 and leaves at 544.
    let enq: Vec<Time> = ev
        .iter()
        .filter(|e| e.kind == EventKind::Enqueue)
        .map(|e| e.time)
        .collect();
    assert_eq!(enq, [ms(100), ms(110)]);
    let got: Vec<(u64, Time)> = out.iter().map(|o| (o.1, o.2)).collect();
    assert_eq!(got, [(a, ms(472)), (b, ms(544))]);
    assert!(l.is_empty());
}

/// Drops every second packet it sees.
#[derive(Default)]
struct EverySecond(u64);

impl Middlebox for EverySecond {
    fn on_packet(&mut self, _: Time, _: Dir, pkt: Packet, _: &mut Inject) -> Action {
        self.0 += 1;
        if self.0 % 2 == 0 {
            Action::Drop(pkt)
        } else {
            Action::Pass(pkt)
        }
    }
}

#[test]
fn a_dropper_of_every_second_packet() {
    let mut l = link();
    l.add_middlebox(Dir::Down, Box::new(EverySecond::default()));
    let ids: Vec<u64> = (0..4)
        .map(|i| l.push(Time::ZERO, Dir::Down, tcp(576, 100, i)))
        .collect();
    let (out, ev) = run(&mut l);
    assert_eq!(
        mbox_events(&ev),
        [
            ("mbox_drop", ms(0), Some(ids[1]), None),
            ("mbox_drop", ms(0), Some(ids[3]), None),
        ]
    );
    // Packets 1 and 3 are sent back to back: they leave at 372 and 444 ms.
    let got: Vec<(u64, Time)> = out.iter().map(|o| (o.1, o.2)).collect();
    assert_eq!(got, [(ids[0], ms(372)), (ids[2], ms(444))]);
    let st = l.stats(Dir::Down);
    assert_eq!((st.arrived, st.drops_middlebox, st.released), (2, 2, 2));
    // The other direction has no middlebox.
    l.push(ms(1000), Dir::Up, tcp(40, 100, 9));
    l.push(ms(1000), Dir::Up, tcp(40, 100, 9));
    let (out, _) = run(&mut l);
    assert_eq!(out.len(), 2);
}

/// Answers each data packet with a 40-byte ACK in the other direction, and sends one packet of
/// its own at 1 s.
struct Injector {
    timer: Option<Time>,
}

impl Middlebox for Injector {
    fn on_packet(&mut self, _: Time, dir: Dir, pkt: Packet, inject: &mut Inject) -> Action {
        let back = match dir {
            Dir::Down => Dir::Up,
            Dir::Up => Dir::Down,
        };
        inject.push(back, tcp(40, 100, 7));
        Action::Pass(pkt)
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timer
    }

    fn handle_timeout(&mut self, now: Time, inject: &mut Inject) {
        assert_eq!(Some(now), self.timer);
        self.timer = None;
        inject.push(Dir::Down, tcp(576, 100, 8));
    }
}

#[test]
fn an_injector_adds_packets_now_and_at_its_own_timeout() {
    let mut l = link();
    l.add_middlebox(
        Dir::Down,
        Box::new(Injector {
            timer: Some(ms(1000)),
        }),
    );
    let data = l.push(Time::ZERO, Dir::Down, tcp(576, 100, 1));
    let (out, ev) = run(&mut l);
    // The ACK injected upstream at 0 takes 5 + 300 ms; the packet injected at 1 s downstream
    // skips the middlebox (no second ACK) and leaves at 1372 ms.
    let inj: Vec<(Time, Dir, u64)> = ev
        .iter()
        .filter(|e| e.kind == EventKind::MboxInject)
        .map(|e| (e.time, e.dir.unwrap(), e.packet.unwrap().id))
        .collect();
    assert_eq!(inj, [(ms(0), Dir::Up, 1), (ms(1000), Dir::Down, 2)]);
    let got: Vec<(Dir, u64, Time)> = out.iter().map(|o| (o.0, o.1, o.2)).collect();
    assert_eq!(
        got,
        [
            (Dir::Up, 1, ms(305)),
            (Dir::Down, data, ms(372)),
            (Dir::Down, 2, ms(1372)),
        ]
    );
    assert_eq!(l.poll_timeout(), None);
}

#[test]
fn a_chain_runs_in_order_and_a_delayed_packet_continues_with_the_next_box() {
    // Delayer, then the dropper: the dropper sees the packets when their delay ends.
    let mut l = link();
    l.add_middlebox(Dir::Down, Box::new(Delayer));
    l.add_middlebox(Dir::Down, Box::new(EverySecond::default()));
    let a = l.push(Time::ZERO, Dir::Down, tcp(576, 100, 1));
    let b = l.push(ms(20), Dir::Down, tcp(576, 100, 2));
    let (out, ev) = run(&mut l);
    assert_eq!(
        mbox_events(&ev),
        [
            ("mbox_delay", ms(0), Some(a), Some(100 * MS)),
            ("mbox_delay", ms(20), Some(b), Some(100 * MS)),
            ("mbox_drop", ms(120), Some(b), None),
        ]
    );
    let got: Vec<(u64, Time)> = out.iter().map(|o| (o.1, o.2)).collect();
    assert_eq!(got, [(a, ms(472))]);
}
