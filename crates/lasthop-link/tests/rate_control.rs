//! Seed 004's TCP rate control against numbers worked out by hand. The bottleneck is 8 Mbit/s
//! (10^6 bytes/s) down; segments carry 1000 bytes (MSS 1000, 1040 bytes on the wire).
//!
//! One flow: its share is 10^6 B/s. The router sees the SYN-ACK at 10 ms and the sender's ACK
//! of it at 30 ms (a 20 ms sender-side round trip), a data segment at 40 ms and the ACK
//! covering it at 50 ms (10 ms receiver side): a 30 ms base round trip, so a window of
//! ⌊10^6 · 0.030 / 1040⌋ = 28 segments = 28 000 bytes. An ACK newly acknowledging 2000 bytes
//! (2080 on the wire) moves the flow's next ACK time on by 2.08 ms.

use lasthop_core::{Packet, Seeds, Time};
use lasthop_link::rate_control::{install, RateControlConfig};
use lasthop_link::{Dir, Link, LinkSpec, LogLevel};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn ms(n: u64) -> Time {
    Time(n * MS)
}

/// A TCP segment from `src` to `dst` (198.18.0.x:1024 ↔ 198.19.0.1:5000 by flow number).
fn seg(flow: u8, down: bool, flags: &str, seq: u32, ack: u32, window: u16, len: usize) -> Packet {
    let (a, b) = ([198, 18, 0, flow], [198, 19, 0, 1]);
    let (src, dst, sp, dp) = if down {
        (a, b, 1024, 5000)
    } else {
        (b, a, 5000, 1024)
    };
    let mut t = etherparse::PacketBuilder::ipv4(src, dst, 64).tcp(sp, dp, seq, window);
    if flags.contains('S') {
        t = t.syn();
        t = t
            .options(&[etherparse::TcpOptionElement::MaximumSegmentSize(1000)])
            .unwrap();
    }
    if flags.contains('A') {
        t = t.ack(ack);
    }
    if flags.contains('F') {
        t = t.fin();
    }
    let mut v = Vec::new();
    t.write(&mut v, &vec![0u8; len]).unwrap();
    Packet::from_bytes(v)
}

fn window(p: &Packet) -> u16 {
    p.tcp().unwrap().window
}

fn controlled(pace: bool) -> Link {
    let cfg =
        LinkSpec::config_from_str("[both]\nrate = \"8Mbit\"\nlsb = \"1040B\"\nlink_ack = false\n")
            .unwrap();
    let mut l = Link::new(cfg, Seeds::new(1, 0), LogLevel::All);
    let mut t = toml::Table::new();
    t.insert("pace_acks".into(), toml::Value::Boolean(pace));
    let rc = RateControlConfig::parse(t, "middleboxes[0]").unwrap();
    install(&mut l, &rc, lasthop_core::Rate(8_000_000));
    l
}

/// Pushes at `t` and runs the link for 0.5 ms, returning the up-direction packets released.
fn step(l: &mut Link, t: Time, dir: Dir, p: Packet) -> Vec<(Time, Packet)> {
    l.push(t, dir, p);
    drain(l, Time(t.0 + 500 * US))
}

fn drain(l: &mut Link, until: Time) -> Vec<(Time, Packet)> {
    let mut out = vec![];
    while let Some(at) = l.poll_timeout().filter(|&x| x <= until) {
        l.handle_timeout(at);
        while let Some(o) = l.poll_output() {
            if o.dir == Dir::Up {
                out.push((o.at, o.packet));
            }
        }
    }
    out
}

/// The handshake and one data segment of flow `f`, as the router sees them.
fn open(l: &mut Link, f: u8) {
    open_at(l, f, 0);
}

/// `open` starting `base` ms into the run (the link's clock only moves forward).
fn open_at(l: &mut Link, f: u8, base: u64) {
    step(l, ms(base), Dir::Down, seg(f, true, "S", 0, 0, 65535, 0));
    step(
        l,
        ms(base + 10),
        Dir::Up,
        seg(f, false, "SA", 0, 1, 65535, 0),
    );
    step(
        l,
        ms(base + 30),
        Dir::Down,
        seg(f, true, "A", 1, 1, 65535, 0),
    );
    step(
        l,
        ms(base + 40),
        Dir::Down,
        seg(f, true, "A", 1, 1, 65535, 1000),
    );
}

#[test]
fn the_window_is_the_share_times_the_base_round_trip() {
    let mut l = controlled(false);
    open(&mut l, 1);
    let out = step(
        &mut l,
        ms(50),
        Dir::Up,
        seg(1, false, "A", 1, 1001, 65535, 0),
    );
    assert_eq!(out.len(), 1);
    assert_eq!(window(&out[0].1), 28_000);
    // A second flow halves the share: ⌊0.5·10^6 · 0.030 / 1040⌋ = 14 segments, but the first
    // flow's right edge (1001 + 28 000) never moves back: an ACK for 2001 offers 27 000.
    open_at(&mut l, 2, 51);
    let out = step(
        &mut l,
        ms(101),
        Dir::Up,
        seg(2, false, "A", 1, 1001, 65535, 0),
    );
    assert_eq!(window(&out[0].1), 14_000);
    let out = step(
        &mut l,
        ms(102),
        Dir::Up,
        seg(1, false, "A", 1, 2001, 65535, 0),
    );
    assert_eq!(window(&out[0].1), 27_000);
    let out = step(
        &mut l,
        ms(103),
        Dir::Up,
        seg(1, false, "A", 1, 20001, 65535, 0),
    );
    assert_eq!(
        window(&out[0].1),
        14_000,
        "past the old right edge: the new share"
    );
    // The window only ever lowers what the receiver offers.
    let out = step(
        &mut l,
        ms(104),
        Dir::Up,
        seg(1, false, "A", 1, 21001, 5000, 0),
    );
    assert_eq!(window(&out[0].1), 5000);
    // The sender's FIN closes flow 2: flow 1 has the whole share again.
    step(
        &mut l,
        ms(105),
        Dir::Down,
        seg(2, true, "AF", 1001, 1, 65535, 0),
    );
    let out = step(
        &mut l,
        ms(106),
        Dir::Up,
        seg(1, false, "A", 1, 40001, 65535, 0),
    );
    assert_eq!(window(&out[0].1), 28_000);
}

#[test]
fn acks_are_paced_at_the_share() {
    let mut l = controlled(true);
    open(&mut l, 1);
    // The first ACK leaves at once (40 bytes at 8 Mbit/s: 40 us on the link).
    let out = step(
        &mut l,
        ms(50),
        Dir::Up,
        seg(1, false, "A", 1, 1001, 65535, 0),
    );
    assert_eq!(out[0].0, Time(50 * MS + 40 * US));
    // It acknowledged 1000 new bytes (1040 on the wire): the next may leave 1.04 ms later. One
    // at 50.5 ms waits until 51.04 ms; it acknowledges 2000 bytes, so the one after that waits
    // until 51.04 + 2.08 = 53.12 ms.
    let out = step(
        &mut l,
        Time(50 * MS + 500 * US),
        Dir::Up,
        seg(1, false, "A", 1, 3001, 65535, 0),
    );
    assert!(out.is_empty());
    l.push(
        Time(51 * MS),
        Dir::Up,
        seg(1, false, "A", 1, 4001, 65535, 0),
    );
    let out = drain(&mut l, ms(60));
    let times: Vec<u64> = out.iter().map(|(t, _)| t.0 / US).collect();
    assert_eq!(times, [51_040 + 40, 53_120 + 40]);
    // The window is rewritten in held ACKs too.
    assert!(out.iter().all(|(_, p)| window(p) == 28_000));
}

#[test]
fn bad_parameters_name_the_key() {
    let bad = |k: &str, v: toml::Value, says: &str| {
        let mut t = toml::Table::new();
        t.insert(k.into(), v);
        let e = RateControlConfig::parse(t, "middleboxes[0]").unwrap_err();
        assert_eq!(e.key, format!("middleboxes[0].{k}"), "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    bad("utilisation", toml::Value::Float(1.5), "at most 1");
    bad("utilisation", toml::Value::Float(0.0), "above 0");
    bad("min_window", toml::Value::Integer(0), "1 or more");
    bad("rate", toml::Value::String("0kbit".into()), "");
    bad("data_dir", toml::Value::String("sideways".into()), "down");
    bad("bogus", toml::Value::Integer(1), "bogus");
}
