//! Seed 001's shared advertised window at the router, against windows worked out by hand.
//!
//! The receiver is 198.19.0.1 (the mobile side, its packets go up), the peer 198.18.0.1; the
//! pool is 2048 bytes (seed 001's "2 KB", 8 segments of 256 bytes). The receiver writes a
//! window of 32 767 in every segment (Linux 2.3.99's half of a 64 KB buffer), so every window
//! the peer sees is the rule's: min(32 767, (2048 − held) / open connections), never moving a
//! right edge already offered back.

use lasthop_core::{Packet, Seeds, Time};
use lasthop_link::shared_window::{install, SharedWindowConfig};
use lasthop_link::{Dir, Link, LinkSpec, LogLevel};
use std::net::Ipv4Addr;

const MSS: u32 = 256;
const OFFERED: u16 = 32_767;

/// A segment of connection `port` (the peer's port; the receiver listens on 5000): `down` from
/// the peer, else from the receiver. `sack`: one SACK block.
fn seg(
    port: u16,
    down: bool,
    flags: &str,
    seq: u32,
    ack: u32,
    len: usize,
    sack: Option<(u32, u32)>,
) -> Packet {
    let (peer, recv) = ([198, 18, 0, 1], [198, 19, 0, 1]);
    let (src, dst, sp, dp, window) = if down {
        (peer, recv, port, 5000, 65535)
    } else {
        (recv, peer, 5000, port, OFFERED)
    };
    let mut t = etherparse::PacketBuilder::ipv4(src, dst, 64).tcp(sp, dp, seq, window);
    let mut opts = vec![];
    if flags.contains('S') {
        t = t.syn();
        opts.push(etherparse::TcpOptionElement::MaximumSegmentSize(MSS as u16));
    }
    if let Some((l, r)) = sack {
        opts.push(etherparse::TcpOptionElement::Noop);
        opts.push(etherparse::TcpOptionElement::Noop);
        opts.push(etherparse::TcpOptionElement::SelectiveAcknowledgement(
            (l, r),
            [None, None, None],
        ));
    }
    if !opts.is_empty() {
        t = t.options(&opts).unwrap();
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

fn shared(size: u64) -> Link {
    let cfg = LinkSpec::config_from_str("[both]\nrate = \"10Mbit\"\n").unwrap();
    let mut l = Link::new(cfg, Seeds::new(1, 0), LogLevel::All);
    install(
        &mut l,
        &SharedWindowConfig {
            receiver: Ipv4Addr::new(198, 19, 0, 1),
            peer: Ipv4Addr::new(198, 18, 0, 1),
            size,
        },
    );
    l
}

/// Pushes `p` at `t` ms and returns the window of what the link releases (the link is fast
/// and empty, so the one packet comes out before the next push).
fn through(l: &mut Link, t: &mut u64, dir: Dir, p: Packet) -> u16 {
    *t += 10;
    l.push(Time(*t * 1_000_000), dir, p);
    loop {
        if let Some(o) = l.poll_output() {
            let tcp = o.packet.tcp().unwrap();
            // The checksum stays right after a rewrite.
            let d = &o.packet.data;
            let (src, dst) = (
                Ipv4Addr::new(d[12], d[13], d[14], d[15]),
                Ipv4Addr::new(d[16], d[17], d[18], d[19]),
            );
            let sum = lasthop_core::wire::tcp_checksum_ipv4(src, dst, &d[20..]);
            assert_eq!(sum, 0, "the TCP checksum holds after the rewrite");
            return tcp.window;
        }
        let at = l.poll_timeout().expect("the packet is on its way");
        l.handle_timeout(at);
    }
}

/// The peer opens connection `port`; returns the SYN-ACK's window as the peer sees it.
fn open(l: &mut Link, t: &mut u64, port: u16) -> u16 {
    through(l, t, Dir::Down, seg(port, true, "S", 0, 0, 0, None));
    through(l, t, Dir::Up, seg(port, false, "SA", 0, 1, 0, None))
}

/// The receiver's ACK `ack` (no SACK) on connection `port`.
fn ack(l: &mut Link, t: &mut u64, port: u16, ack: u32) -> u16 {
    through(l, t, Dir::Up, seg(port, false, "A", 1, ack, 0, None))
}

#[test]
fn one_connection_gets_the_whole_pool() {
    let (mut l, mut t) = (shared(2048), 0);
    assert_eq!(
        open(&mut l, &mut t, 1024),
        2048,
        "the SYN-ACK is capped too"
    );
    // A data segment of 256 bytes, then its ACK: nothing held, 2048 / 1.
    through(
        &mut l,
        &mut t,
        Dir::Down,
        seg(1024, true, "A", 1, 1, 256, None),
    );
    assert_eq!(ack(&mut l, &mut t, 1024, 257), 2048);
}

#[test]
fn a_second_connection_halves_the_share_and_the_first_decays() {
    let (mut l, mut t) = (shared(2048), 0);
    assert_eq!(open(&mut l, &mut t, 1024), 2048);
    // The second connection opens: 2048 / 2 = 1024.
    assert_eq!(open(&mut l, &mut t, 1025), 1024);
    // The first offered 2048 from 1, right edge 2049; its share is now 1024, but the edge
    // stays: after ack 257 the window is 2049 - 257 = 1792, after 513 1536, ..., and from ack
    // 1025 on (2049 - 1025 = 1024) the share.
    for (a, w) in [
        (257, 1792),
        (513, 1536),
        (769, 1280),
        (1025, 1024),
        (1281, 1024),
    ] {
        assert_eq!(ack(&mut l, &mut t, 1024, a), w, "ack {a}");
    }
    // The second closes (the receiver's FIN): the first gets the pool again.
    through(
        &mut l,
        &mut t,
        Dir::Up,
        seg(1025, false, "FA", 1, 1, 0, None),
    );
    assert_eq!(ack(&mut l, &mut t, 1024, 1537), 2048);
}

#[test]
fn duplicate_acks_count_held_segments_and_a_repair_releases_them() {
    let (mut l, mut t) = (shared(2048), 0);
    open(&mut l, &mut t, 1024);
    through(
        &mut l,
        &mut t,
        Dir::Down,
        seg(1024, true, "A", 1, 1, 256, None),
    );
    assert_eq!(ack(&mut l, &mut t, 1024, 257), 2048);
    // Segment 257 is lost; 513 and 769 arrive: two duplicate ACKs, each one more segment held:
    // 2048 - 256 = 1792 and 2048 - 512 = 1536. The right edge offered, 257 + 2048 = 2305,
    // would keep 2048 open; but a duplicate ACK does not move the edge back either: the edge
    // holds the window at 2048 until the ACK moves.
    assert_eq!(ack(&mut l, &mut t, 1024, 257), 2048);
    assert_eq!(ack(&mut l, &mut t, 1024, 257), 2048);
    // The repair arrives: the ACK moves 768 bytes (the hole and the two held); held = 512 +
    // 256 - 768 = 0, and the window is the whole pool again.
    assert_eq!(ack(&mut l, &mut t, 1024, 1025), 2048);
    // A second connection opens (1024 each) and the first sends two duplicate ACKs at 1025:
    // 512 held. The first's edge (1025 + 2048 = 3073) keeps its window at 2048.
    assert_eq!(open(&mut l, &mut t, 1025), 1024);
    assert_eq!(ack(&mut l, &mut t, 1024, 1025), 2048, "edge 3073 kept");
    assert_eq!(ack(&mut l, &mut t, 1024, 1025), 2048, "edge 3073 kept");
    // The second's share is (2048 - 512) / 2 = 768: at ack 257 its edge 1025 gives 768 too,
    // at ack 513 the edge alone would give 512, the share 768.
    assert_eq!(ack(&mut l, &mut t, 1025, 257), 768);
    assert_eq!(ack(&mut l, &mut t, 1025, 513), 768);
}

#[test]
fn sack_blocks_say_exactly_what_is_held() {
    let (mut l, mut t) = (shared(2048), 0);
    open(&mut l, &mut t, 1024);
    open(&mut l, &mut t, 1025);
    // Connection 1025 holds 257..769 out of order (512 bytes, one SACK block): the share is
    // (2048 - 512) / 2 = 768, but its SYN-ACK's edge (1 + 1024) still gives 1024.
    let w = through(
        &mut l,
        &mut t,
        Dir::Up,
        seg(1025, false, "A", 1, 1, 0, Some((257, 769))),
    );
    assert_eq!(w, 1024);
    // Connection 1024 (edge 1 + 2048): at ack 1025 the edge gives 1024; at 1537 the edge alone
    // would give 512, the share 768.
    assert_eq!(ack(&mut l, &mut t, 1024, 1025), 1024);
    assert_eq!(ack(&mut l, &mut t, 1024, 1537), 768);
}

#[test]
fn connections_with_other_hosts_pass_unchanged() {
    let (mut l, mut t) = (shared(2048), 0);
    // The receiver's SYN-ACK to 198.18.0.9, which is not the peer.
    let b = etherparse::PacketBuilder::ipv4([198, 19, 0, 1], [198, 18, 0, 9], 64)
        .tcp(5000, 1024, 0, OFFERED)
        .syn()
        .ack(1);
    let mut v = Vec::new();
    b.write(&mut v, &[]).unwrap();
    assert_eq!(
        through(&mut l, &mut t, Dir::Up, Packet::from_bytes(v)),
        OFFERED
    );
}
