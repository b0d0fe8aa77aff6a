//! One endpoint driven by hand-made segments: SACK block generation (RFC 2018 order, 4 blocks or
//! 3 with timestamps), D-SACK (RFC 2883), timestamps, window clamp, FACK vs RFC 3517 triggers,
//! the NewReno Careful variant, quick ACKs, adaptive delayed ACK, Linux's share of the free
//! receive buffer (`adv_win_scale`) and the Host demultiplexer.

mod common;

use common::addrs;
use lasthop_core::{Dur, Packet, Time};
use lasthop_tcp::wire::{Segment, ACK, CWR, ECE, FIN, SYN};
use lasthop_tcp::{CaState, Connection, DelayedAck, Event, Host, TcpConfig};

const PEER_ISS: u32 = 7000;
const ISS: u32 = 1000;

fn t(ms: u64) -> Time {
    Time(ms * 1_000_000)
}

/// The remote side, writing segments by hand.
struct Peer {
    mss: u32,
    ts: bool,
}

impl Peer {
    fn seg(&self, flags: u8, seq_off: u32, ack_off: u32, payload: u32) -> Segment {
        let (c, s) = addrs();
        Segment {
            src: Some(s),
            dst: Some(c),
            seq: PEER_ISS.wrapping_add(seq_off),
            ack: ISS.wrapping_add(ack_off),
            flags,
            window: 65535,
            payload,
            ts: self.ts.then_some((1, 1)),
            ..Segment::default()
        }
    }
    /// Data segment k (0-based) of the peer.
    fn data(&self, k: u32) -> Packet {
        self.seg(ACK, 1 + k * self.mss, 1, self.mss).encode()
    }
    /// An ACK of our data: `acked` segments cumulatively, SACK blocks as segment ranges.
    fn ack(&self, acked: u32, mss: u32, sacks: &[(u32, u32)]) -> Packet {
        let mut s = self.seg(ACK, 1, 1 + acked * mss, 0);
        s.sacks = sacks
            .iter()
            .map(|&(a, b)| (ISS + 1 + (a - 1) * mss, ISS + 1 + b * mss))
            .collect();
        s.encode()
    }
}

/// An ACK echoing TSecr `ecr`.
fn ack_ts(peer: &Peer, acked: u32, mss: u32, ecr: u32) -> Packet {
    let mut s = Segment::decode(&peer.ack(acked, mss, &[])).unwrap();
    s.ts = Some((5000, ecr));
    s.encode()
}

/// Data segment numbers (1-based) in the packets sent now, with their retransmission flag.
fn drain(c: &mut Connection, now: Time, mss: u32) -> Vec<u32> {
    let mut v = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        let s = Segment::decode(&p).unwrap();
        if s.payload > 0 {
            v.push(s.seq.wrapping_sub(ISS + 1) / mss + 1);
        }
    }
    v
}

/// A client connected at 0 by a SYN-ACK arriving at 600 ms.
/// The next segment `c` sends at `now`, decoded (there must be one).
fn next_segment(c: &mut Connection, now: Time) -> Segment {
    Segment::decode(&c.poll_transmit(now).unwrap()).unwrap()
}

fn client(cfg: TcpConfig) -> (Connection, Peer) {
    let (c, s) = addrs();
    let ts = cfg.timestamps;
    let ecn = cfg.ecn;
    let mut conn = Connection::connect(Time::ZERO, c, s, cfg, ISS);
    let syn = next_segment(&mut conn, Time::ZERO);
    assert_eq!(syn.flags, if ecn { SYN | ECE | CWR } else { SYN });
    let peer = Peer { mss: 536, ts };
    let mut sa = peer.seg(SYN | ACK, 0, 1, 0);
    sa.mss = Some(536);
    sa.sack_permitted = true;
    if ecn {
        sa.flags |= ECE;
    }
    conn.handle_packet(t(600), &sa.encode());
    assert_eq!(conn.poll_event(), Some(Event::Connected));
    let ack = next_segment(&mut conn, t(600));
    assert_eq!(ack.flags, ACK);
    assert!(conn.poll_transmit(t(600)).is_none());
    let mss = conn.mss();
    (conn, Peer { mss, ts })
}

/// SACK blocks of the next packet, as 0-based peer segment ranges [first, last].
fn sacks_of(conn: &mut Connection, now: Time, mss: u32) -> (u32, Vec<(u32, u32)>) {
    let p = conn.poll_transmit(now).expect("an ACK");
    let s = Segment::decode(&p).unwrap();
    let off = |x: u32| x.wrapping_sub(PEER_ISS + 1) / mss;
    let blocks = s.sacks.iter().map(|&(l, r)| (off(l), off(r) - 1)).collect();
    (off(s.ack), blocks)
}

#[test]
fn sack_blocks_most_recent_first_at_most_four() {
    let (mut c, peer) = client(TcpConfig::default());
    let mut now = t(1000);
    let mut seen = Vec::new();
    for k in [1, 3, 5, 7, 9] {
        now += Dur::from_millis(10);
        c.handle_packet(now, &peer.data(k));
        seen.push(sacks_of(&mut c, now, peer.mss));
    }
    assert_eq!(seen[0], (0, vec![(1, 1)]));
    assert_eq!(seen[1], (0, vec![(3, 3), (1, 1)]));
    assert_eq!(seen[4], (0, vec![(9, 9), (7, 7), (5, 5), (3, 3)]));
    // Segment 4 joins 3 and 5 into one block, which moves to the front.
    c.handle_packet(now, &peer.data(4));
    assert_eq!(
        sacks_of(&mut c, now, peer.mss),
        (0, vec![(3, 5), (9, 9), (7, 7), (1, 1)])
    );
    // Segment 0 fills the first hole: immediate ACK of 0..1, blocks above it remain.
    c.handle_packet(now, &peer.data(0));
    assert_eq!(
        sacks_of(&mut c, now, peer.mss),
        (2, vec![(3, 5), (9, 9), (7, 7)])
    );
    assert_eq!(c.stats().bytes_delivered, 2 * 536);
}

#[test]
fn three_blocks_with_timestamps_and_mss_524() {
    let cfg = TcpConfig {
        timestamps: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    assert_eq!(c.mss(), 524);
    let now = t(1000);
    for k in [1, 3, 5, 7] {
        c.handle_packet(now, &peer.data(k));
        let _ = c.poll_transmit(now);
    }
    c.handle_packet(now, &peer.data(9));
    let p = c.poll_transmit(now).unwrap();
    assert_eq!(
        p.wire_len,
        40 + 12 + 4 + 3 * 8,
        "TS + 3 SACK blocks = 40 option bytes"
    );
    let s = Segment::decode(&p).unwrap();
    assert_eq!(s.sacks.len(), 3);
    assert_eq!(s.ts.unwrap().1, 1, "echoes the peer's TSval");
}

#[test]
fn dsack_reports_duplicates_first() {
    let cfg = TcpConfig {
        dsack: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    let now = t(1000);
    c.handle_packet(now, &peer.data(0));
    c.handle_packet(now, &peer.data(1));
    assert_eq!(sacks_of(&mut c, now, peer.mss), (2, vec![]));
    // A duplicate below rcv_nxt: D-SACK block below the cumulative ACK (RFC 2883 §4.1.1).
    c.handle_packet(now, &peer.data(0));
    assert_eq!(sacks_of(&mut c, now, peer.mss), (2, vec![(0, 0)]));
    // A duplicate of held out-of-order data: D-SACK block, then its containing block (4.1.2).
    c.handle_packet(now, &peer.data(4));
    c.handle_packet(now, &peer.data(5));
    let _ = sacks_of(&mut c, now, peer.mss);
    c.handle_packet(now, &peer.data(7));
    let _ = sacks_of(&mut c, now, peer.mss);
    c.handle_packet(now, &peer.data(4));
    assert_eq!(
        sacks_of(&mut c, now, peer.mss),
        (2, vec![(4, 4), (4, 5), (7, 7)])
    );
    // Reported once only.
    c.handle_packet(now, &peer.data(8));
    assert_eq!(sacks_of(&mut c, now, peer.mss), (2, vec![(7, 8), (4, 5)]));
    assert_eq!(c.stats().dsack_blocks_sent, 2);
    // Without D-SACK, a duplicate only draws a plain duplicate ACK.
    let (mut c, peer) = client(TcpConfig::default());
    c.handle_packet(now, &peer.data(0));
    c.handle_packet(now, &peer.data(1));
    let _ = c.poll_transmit(now);
    c.handle_packet(now, &peer.data(0));
    assert_eq!(sacks_of(&mut c, now, peer.mss), (2, vec![]));
}

/// A client with `n` full segments outstanding (the SYN-ACK opened a window big enough).
fn sender(cfg: TcpConfig, iw: u32, n: usize) -> (Connection, Peer, Vec<Segment>) {
    let cfg = TcpConfig {
        initial_window: lasthop_tcp::InitialWindow::Segments(iw),
        ..cfg
    };
    let (mut c, peer) = client(cfg);
    c.send(100 * 536);
    let now = t(600);
    let mut out = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        out.push(Segment::decode(&p).unwrap());
    }
    assert_eq!(out.len(), n.min(iw as usize));
    (c, peer, out)
}

#[test]
fn fack_enters_recovery_on_one_sack_far_above_the_hole() {
    // 4 segments out; one ACK SACKs segment 4 only. RFC 3517: one SACKed segment is not enough
    // (Disorder, and limited transmit sends segment 5). FACK: segment 4 lies 3 above segment 1,
    // so 1 is lost: fast retransmit at once.
    let (mut c, peer, _) = sender(TcpConfig::default(), 4, 4);
    c.handle_packet(t(1300), &peer.ack(0, 536, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    let s = next_segment(&mut c, t(1300));
    assert_eq!(s.seq, ISS + 1 + 4 * 536, "limited transmit: new segment 5");

    let fack = TcpConfig {
        fack: true,
        ..TcpConfig::default()
    };
    let (mut c, peer, _) = sender(fack, 4, 4);
    c.handle_packet(t(1300), &peer.ack(0, 536, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    let s = next_segment(&mut c, t(1300));
    assert_eq!(s.seq, ISS + 1, "fast retransmit of segment 1");
    assert_eq!(c.stats().retransmits, 1);
    assert_eq!((c.ssthresh(), c.cwnd()), (2, 2));
}

#[test]
fn sack_loss_marking_head_repairs_one_hole_per_round_trip() {
    // Segments 1-4, each ACKed alone: cwnd 4 -> 8, two new segments per ACK: 5-12 go out.
    // Then one ACK of 4 SACKs 6 and 8-12: holes at 5 and 7. RFC 3517 marks both lost (6 and 5
    // SACKed segments above them); ssthresh = 8/2 = 4, in_flight = 8 - 6 SACKed - 2 lost = 0, so
    // both are retransmitted at once. Linux 2.4 without FACK marks only the head: 5 goes, 7
    // waits until the cumulative ACK reaches it.
    let holes = |marking: lasthop_tcp::SackLossMarking| -> (Vec<u32>, Vec<u32>) {
        let cfg = TcpConfig {
            sack_loss_marking: marking,
            ..TcpConfig::default()
        };
        let (mut c, peer, mut first) = two_holes(cfg, 100 * 536);
        // Only segments 1-12: what is repaired, not the new data.
        let rtx = |c: &mut Connection, now| {
            let mut v = sent_segments(c, now);
            v.retain(|&k| k <= 12);
            v
        };
        first.retain(|&k| k <= 12);
        // The retransmission of 5 arrives: ACK of 6, 8-12 still SACKed.
        c.handle_packet(t(2600), &peer.ack(6, 536, &[(8, 12)]));
        (first, rtx(&mut c, t(2600)))
    };
    use lasthop_tcp::SackLossMarking::{Head, Rfc3517};
    assert_eq!(holes(Rfc3517), (vec![5, 7], vec![]));
    assert_eq!(holes(Head), (vec![5], vec![7]));
    let e = TcpConfig::from_toml("fack = true\nsack_loss_marking = \"head\"").unwrap_err();
    assert_eq!(e.key, "sack_loss_marking");
}

/// cwnd 8 with segments 5-12 out (1-4 each ACKed alone, two new segments per ACK), then one
/// ACK of 4 SACKing 6 and 8-12: holes at 5 and 7. Returns the connection after that ACK and
/// what it sent on it.
fn two_holes(cfg: TcpConfig, bytes: u64) -> (Connection, Peer, Vec<u32>) {
    let cfg = TcpConfig {
        initial_window: lasthop_tcp::InitialWindow::Segments(4),
        ..cfg
    };
    let (mut c, peer) = client(cfg);
    c.send(bytes);
    while c.poll_transmit(t(600)).is_some() {}
    for k in 1..=4 {
        c.handle_packet(t(1200 + k), &peer.ack(k as u32, 536, &[]));
        while c.poll_transmit(t(1200 + k)).is_some() {}
    }
    assert_eq!(c.cwnd(), 8);
    c.handle_packet(t(1900), &peer.ack(4, 536, &[(6, 6), (8, 12)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!((c.ssthresh(), c.cwnd()), (4, 4));
    let first = sent_segments(&mut c, t(1900));
    (c, peer, first)
}

/// `marking` with ssthresh from cwnd, as Linux 2.4 takes it.
fn marking_cfg(marking: lasthop_tcp::SackLossMarking) -> TcpConfig {
    TcpConfig {
        sack_loss_marking: marking,
        ssthresh_from: lasthop_tcp::SsthreshFrom::Cwnd,
        ..TcpConfig::default()
    }
}

/// Segment numbers (1 = the first data segment) of everything `c` sends now.
fn sent_segments(c: &mut Connection, now: Time) -> Vec<u32> {
    let mut v = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        let s = Segment::decode(&p).unwrap();
        v.push((s.seq - ISS - 1) / 536 + 1);
    }
    v
}

#[test]
fn linux24_marking_counts_unmarked_holes_in_flight_until_sacks_pass_high_seq() {
    // After `two_holes`: fackets_out = 8 > 3, Recovery, ssthresh = cwnd = 4. Linux 2.4 without
    // FACK marks only the head, so hole 7 still counts in flight: in_flight = 8 - 6 SACKed - 1
    // lost = 1. Segment 5 goes (2), then new data 13 and 14 (4). RFC 3517 marks 7 as well
    // (in_flight 0): 5, 7, 13, 14. Next, a duplicate ACK SACKs 13, data sent after Recovery
    // began ("Event B"): Linux marks every untagged hole among the first fackets_out - 3 = 6
    // segments, so 7 is lost: in_flight = 10 - 7 - 2 + 1 = 2, and 7 and new 15 go. "head" never
    // marks 7 before the cumulative ACK reaches it: in_flight = 10 - 7 - 1 + 1 = 3, only 15.
    let run = |marking, bytes| {
        let (mut c, peer, first) = two_holes(marking_cfg(marking), bytes);
        c.handle_packet(t(2000), &peer.ack(4, 536, &[(13, 13), (8, 12), (6, 6)]));
        (first, sent_segments(&mut c, t(2000)))
    };
    use lasthop_tcp::SackLossMarking::{Head, Linux24, Rfc3517};
    let bulk = 100 * 536;
    assert_eq!(run(Linux24, bulk), (vec![5, 13, 14], vec![7, 15]));
    assert_eq!(run(Head, bulk), (vec![5, 13, 14], vec![15]));
    assert_eq!(run(Rfc3517, bulk), (vec![5, 7, 13, 14], vec![15]));
    // The trace shows that scoreboard (Linux's packets_out, sacked_out, lost_out, retrans_out):
    // at the SACK of 13, before sending, 10 out, 7 SACKed, 5 and 7 lost, 5 retransmitted (in
    // flight 2); after 7 and 15 have gone, 11 out and both retransmitted (in flight 4 = cwnd).
    let (mut c, peer, _) = two_holes(marking_cfg(Linux24), bulk);
    c.drain_trace();
    c.handle_packet(t(2000), &peer.ack(4, 536, &[(13, 13), (8, 12), (6, 6)]));
    sent_segments(&mut c, t(2000));
    let board: Vec<_> = c
        .drain_trace()
        .iter()
        .map(|r| {
            let board = (r.packets_out, r.sacked_out, r.lost_out, r.retrans_out);
            (board, r.in_flight(), r.cwnd)
        })
        .collect();
    assert_eq!(board, vec![((10, 7, 2, 1), 2, 4), ((11, 7, 2, 2), 4, 4)]);
    // Only 12 segments written: no new data may go, so Linux retransmits the untagged hole
    // below the highest SACK ("forward retransmission"): 5 (in_flight 2), then 7, which
    // counts twice while its original is not known lost (in_flight 3 < 4; nothing else is
    // untagged). "head" sends 5 alone.
    assert_eq!(two_holes(marking_cfg(Linux24), 12 * 536).2, vec![5, 7]);
    assert_eq!(two_holes(marking_cfg(Head), 12 * 536).2, vec![5]);
    let e = TcpConfig::from_toml("fack = true\nsack_loss_marking = \"linux24\"").unwrap_err();
    assert_eq!(e.key, "sack_loss_marking");
}

#[test]
fn linux24_marking_resends_a_retransmission_lost_again() {
    // Continuing the test above (Linux 2.4 marking): 5 was retransmitted when snd_nxt was the
    // end of 12, 7 when it was the end of 14. Neither retransmission arrives; the receiver
    // SACKs 13, 14, 15, 16, 17 one by one. Linux's "Event C": a retransmission is lost once a
    // SACK reaches 3 segments beyond the snd_nxt it was sent at.
    //   SACK 14: in_flight = 11 - 8 - 2 + 2 = 3: new 16.
    //   SACK 15 (end of 12 + 3 segments): 5's retransmission is lost, L again:
    //            in_flight = 12 - 9 - 2 + 1 = 2: 5 again, then new 17.
    //   SACK 16: in_flight = 13 - 10 - 2 + 2 = 3: new 18.
    //   SACK 17 (end of 14 + 3 segments): 7's retransmission is lost: 7 again, then new 19.
    let (mut c, peer, first) = two_holes(
        marking_cfg(lasthop_tcp::SackLossMarking::Linux24),
        100 * 536,
    );
    assert_eq!(first, vec![5, 13, 14]);
    c.handle_packet(t(2000), &peer.ack(4, 536, &[(13, 13), (8, 12), (6, 6)]));
    assert_eq!(sent_segments(&mut c, t(2000)), vec![7, 15]);
    let mut sent = Vec::new();
    for (k, hi) in (14..=17).enumerate() {
        let now = t(2100 + 100 * k as u64);
        c.handle_packet(now, &peer.ack(4, 536, &[(13, hi), (8, 12), (6, 6)]));
        sent.push(sent_segments(&mut c, now));
    }
    assert_eq!(sent, vec![vec![16], vec![5, 17], vec![18], vec![7, 19]]);
    assert_eq!(c.stats().retransmits, 4);
}

#[test]
fn rto_timer_from_the_oldest_segment_sent() {
    // Four segments sent at 600 ms; the ACK of the first comes at 1300 ms. Linux 2.4 rearms the
    // timer to 1300 ms + RTO; Linux 2.2/2.3 (seed 001's stack) to the send time of the oldest
    // outstanding segment, segment 2 at 600 ms, + RTO: 700 ms sooner with the same RTO.
    let deadline = |timer| {
        let cfg = TcpConfig {
            rto_timer: timer,
            ..TcpConfig::default()
        };
        let (mut c, peer, _) = sender(cfg, 4, 4);
        c.handle_packet(t(1300), &peer.ack(1, 536, &[]));
        (c.poll_timeout().unwrap(), c.rto())
    };
    use lasthop_tcp::RtoTimer::{Ack, OldestSent};
    let ((a, rto_a), (o, rto_o)) = (deadline(Ack), deadline(OldestSent));
    assert_eq!(rto_a, rto_o);
    assert_eq!(a, t(1300) + rto_a);
    assert_eq!(o, t(600) + rto_o);
}

/// RTO, then an ACK of everything sent before it, then new data and three duplicate ACKs at
/// exactly send_high: the Less Careful variant retransmits, the Careful one does not.
fn careful_case(careful: bool) -> Connection {
    let cfg = TcpConfig {
        newreno_careful: careful,
        sack: false,
        ..TcpConfig::default()
    };
    let (mut c, peer, _) = sender(cfg, 4, 4);
    let deadline = c.poll_timeout().unwrap();
    assert_eq!(
        deadline,
        t(600) + Dur::from_millis(1800),
        "RTO = 3 x 600 ms"
    );
    c.handle_timeout(deadline);
    assert_eq!(c.ca_state(), CaState::Loss);
    let rtx = next_segment(&mut c, deadline);
    assert_eq!(rtx.seq, ISS + 1);
    assert!(c.poll_transmit(deadline).is_none(), "cwnd 1");
    // The original segments were only delayed: their ACK covers all four (send_high).
    let now = deadline + Dur::from_millis(100);
    c.handle_packet(now, &peer.ack(4, 536, &[]));
    assert_eq!(c.ca_state(), CaState::Open);
    let mut sent = 0;
    while c.poll_transmit(now).is_some() {
        sent += 1;
    }
    assert_eq!(sent, 2, "cwnd 2 after one ACK in slow start");
    for _ in 0..3 {
        c.handle_packet(now, &peer.ack(4, 536, &[]));
    }
    c
}

#[test]
fn newreno_careful_and_less_careful() {
    let c = careful_case(false);
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(c.stats().fast_retransmits, 1);
    let c = careful_case(true);
    assert_ne!(c.ca_state(), CaState::Recovery);
    assert_eq!(c.stats().fast_retransmits, 0);
    assert_eq!(c.stats().dupacks_rcvd, 3);
}

#[test]
fn window_clamp_limits_whole_segments() {
    // A 2048-byte window (seed 001's smallest shared window) lets 3 full 536-byte segments out.
    let cfg = TcpConfig {
        initial_window: lasthop_tcp::InitialWindow::Segments(4),
        ..TcpConfig::default()
    };
    let (c_addr, s_addr) = addrs();
    let mut c = Connection::connect(Time::ZERO, c_addr, s_addr, cfg, ISS);
    let _ = c.poll_transmit(Time::ZERO);
    let peer = Peer {
        mss: 536,
        ts: false,
    };
    let mut sa = peer.seg(SYN | ACK, 0, 1, 0);
    sa.mss = Some(536);
    sa.window = 2048;
    c.handle_packet(t(600), &sa.encode());
    let _ = c.poll_transmit(t(600));
    c.send(10 * 536);
    let mut n = 0;
    while c.poll_transmit(t(600)).is_some() {
        n += 1;
    }
    assert_eq!(n, 3);
    // And our own advertisement follows window_clamp.
    let cfg = TcpConfig {
        window_clamp: Some(lasthop_core::Bytes(2048)),
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    c.handle_packet(t(700), &peer.data(0));
    c.handle_packet(t(700), &peer.data(1));
    let a = next_segment(&mut c, t(700));
    assert_eq!(a.window, 2048);
}

#[test]
fn adv_win_scale_offers_half_the_free_buffer() {
    // Seed 001's receiver (Linux 2.3.99): a 64 KB socket buffer of which half is offered
    // (tcp_space = (rcvbuf - rmem_alloc) / 2), so at most 32767 bytes, and data held out of
    // order costs the window half its size.
    let cfg = TcpConfig {
        rcvbuf: lasthop_core::Bytes(65535),
        adv_win_scale: Some(-1),
        delayed_ack: DelayedAck::Off,
        ..TcpConfig::default()
    };
    let (c_addr, s_addr) = addrs();
    let mut c = Connection::connect(Time::ZERO, c_addr, s_addr, cfg.clone(), ISS);
    let syn = next_segment(&mut c, Time::ZERO);
    assert_eq!(syn.window, 32767, "65535 / 2, rounded down");
    let (mut c, peer) = client(cfg);
    // Segment 0 in order: nothing held, 32767; the right edge is now 537 + 32767 = 33304.
    c.handle_packet(t(700), &peer.data(0));
    assert_eq!(next_segment(&mut c, t(700)).window, 32767);
    // Segments 2 and 4 out of order (1072 bytes held): (65535 - 1072) / 2 = 32231 would pull
    // the edge back, so the window stays at 33304 - 537 = 32767.
    c.handle_packet(t(800), &peer.data(2));
    assert_eq!(next_segment(&mut c, t(800)).window, 32767);
    c.handle_packet(t(900), &peer.data(4));
    assert_eq!(next_segment(&mut c, t(900)).window, 32767);
    // Segment 1 fills the first hole: rcv_nxt = 1 + 3 * 536 = 1609, segment 4 (536 bytes) is
    // still held: (65535 - 536) / 2 = 32499, edge 1609 + 32499 = 34108 > 33304.
    c.handle_packet(t(1000), &peer.data(1));
    assert_eq!(next_segment(&mut c, t(1000)).window, 32499);
    // Without adv_win_scale a 32767-byte buffer would offer 32767 - 536 = 32231 here.
    let cfg = TcpConfig {
        rcvbuf: lasthop_core::Bytes(32767),
        delayed_ack: DelayedAck::Off,
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    for (k, now) in [(0, 700), (2, 800), (4, 900), (1, 1000)] {
        c.handle_packet(t(now), &peer.data(k));
        let w = next_segment(&mut c, t(now)).window;
        if k == 1 {
            assert_eq!(w, 32231);
        }
    }
}

#[test]
fn quickacks_at_the_start() {
    // Seed 001's stack quick-ACKs the first two segments, then delays.
    let cfg = TcpConfig {
        quickacks: 2,
        ..TcpConfig::default()
    };
    let (mut c2, peer) = client(cfg);
    c2.handle_packet(t(1000), &peer.data(0));
    assert!(
        c2.poll_transmit(t(1000)).is_some(),
        "first segment ACKed at once"
    );
    c2.handle_packet(t(1300), &peer.data(1));
    assert!(c2.poll_transmit(t(1300)).is_some(), "second too");
    c2.handle_packet(t(1600), &peer.data(2));
    assert!(c2.poll_transmit(t(1600)).is_none(), "third waits");
    assert_eq!(c2.poll_timeout(), Some(t(1800)));
}

#[test]
fn adaptive_delayed_ack_follows_interarrival_times() {
    let cfg = TcpConfig {
        delayed_ack: DelayedAck::Adaptive,
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    // The client's RTT (600 ms) caps nothing here; ato starts at 40 ms.
    c.handle_packet(t(1000), &peer.data(0));
    assert_eq!(c.poll_timeout(), Some(t(1040)));
    c.handle_timeout(t(1040));
    assert!(c.poll_transmit(t(1040)).is_some());
    // The timer fired: ato doubles to 80 ms. The next segment comes 70 ms after the first
    // (less than ato): ato = 80/2 + 70 = 110 ms (Linux tcp_event_data_recv).
    c.handle_packet(t(1070), &peer.data(1));
    assert_eq!(c.poll_timeout(), Some(t(1180)));
}

#[test]
fn ack_pushed_acks_small_segments_at_once_unless_interactive() {
    // The peer's MSS is 536 (its SYN-ACK); our estimate of its segment size starts at
    // min(536, TCP_MSS_DEFAULT) = 536. A 120-byte segment is shorter: "pushed".
    let cfg = |pushed| TcpConfig {
        delayed_ack: DelayedAck::Adaptive,
        ack_pushed: pushed,
        ..TcpConfig::default()
    };
    let small = |peer: &Peer, k: u32| peer.seg(ACK, 1 + k * 120, 1, 120).encode();
    // Off (Linux 2.4): the small segment waits for the delayed-ACK timer (ato 40 ms).
    let (mut c, peer) = client(cfg(false));
    c.handle_packet(t(1000), &small(&peer, 0));
    assert!(c.poll_transmit(t(1000)).is_none());
    assert_eq!(c.poll_timeout(), Some(t(1040)));
    // On (Linux 2.6+ tcp_cleanup_rbuf): ACKed as soon as it is read, which is at once.
    let (mut c, peer) = client(cfg(true));
    for k in 0..3 {
        c.handle_packet(t(1000 + 30 * u64::from(k)), &small(&peer, k));
        let a = next_segment(&mut c, t(1000 + 30 * u64::from(k)));
        assert_eq!(
            a.ack,
            PEER_ISS + 1 + 120 * (k + 1),
            "segment {k} ACKed at once"
        );
    }
    // A full-sized segment (536 bytes, not shorter than the estimate) is not pushed: it waits
    // for a second one or the timer, as before.
    c.handle_packet(t(1100), &peer.seg(ACK, 361, 1, 536).encode());
    assert!(c.poll_transmit(t(1100)).is_none());
    // Interactive: we answer with data 5 ms after a segment arrived (less than ato, 40 ms):
    // pingpong. Then one pushed segment waits for the timer, a second goes at once (PUSHED2).
    let (mut c, peer) = client(cfg(true));
    c.handle_packet(t(1000), &small(&peer, 0));
    assert!(c.poll_transmit(t(1000)).is_some());
    c.send(100);
    assert_eq!(next_segment(&mut c, t(1005)).payload, 100);
    c.handle_packet(t(1200), &small(&peer, 1));
    assert!(
        c.poll_transmit(t(1200)).is_none(),
        "interactive: one pushed segment waits"
    );
    c.handle_packet(t(1210), &small(&peer, 2));
    let a = next_segment(&mut c, t(1210));
    assert_eq!(
        a.ack,
        PEER_ISS + 1 + 360,
        "the second pushed segment is ACKed at once"
    );
}

#[test]
fn peer_fin_and_close() {
    let (mut c, peer) = client(TcpConfig::default());
    let mut fin = peer.seg(ACK | FIN, 1, 1, 100);
    fin.ts = None;
    c.handle_packet(t(1000), &fin.encode());
    assert_eq!(c.poll_event(), Some(Event::Delivered(100)));
    assert_eq!(c.poll_event(), Some(Event::PeerFin));
    c.close();
    let f = next_segment(&mut c, t(1000));
    assert_eq!(f.flags & (FIN | ACK), FIN | ACK);
    assert_eq!(f.ack, PEER_ISS + 1 + 100 + 1);
    assert!(
        c.poll_transmit(t(1000)).is_none(),
        "one FIN|ACK, no separate ACK"
    );
    c.handle_packet(t(1600), &peer.seg(ACK, 102, 2, 0).encode());
    assert!(c.is_closed());
    assert_eq!(c.poll_event(), Some(Event::Closed));
}

#[test]
fn host_demultiplexes_and_accepts() {
    let (c_addr, s_addr) = addrs();
    let mut server = Host::new(*s_addr.ip(), TcpConfig::default());
    server.listen(80);
    let mut client = Host::new(*c_addr.ip(), TcpConfig::default());
    let ck = client.connect(Time::ZERO, c_addr.port(), s_addr, ISS);
    let syn = client.poll_transmit(Time::ZERO).unwrap();
    let sk = server.handle_packet(t(300), &syn).unwrap();
    assert_eq!(sk, (s_addr, c_addr));
    let synack = server.poll_transmit(t(300)).unwrap();
    assert_eq!(client.handle_packet(t(600), &synack), Some(ck));
    let ack = client.poll_transmit(t(600)).unwrap();
    server.handle_packet(t(900), &ack);
    assert_eq!(
        server.conn_mut(&sk).unwrap().poll_event(),
        Some(Event::Connected)
    );
    // A SYN to a port nobody listens on is not taken.
    let mut other = Segment::decode(&syn).unwrap();
    other.dst = Some(std::net::SocketAddrV4::new(*s_addr.ip(), 81));
    assert_eq!(server.handle_packet(t(900), &other.encode()), None);
    assert_eq!(server.poll_timeout(), None);
}

/// Four segments out at 600 ms (RTT 600 ms from the handshake, so RTO 1800 ms): the RTO fires
/// at 2400 and segment 1 is retransmitted.
fn after_rto(cfg: TcpConfig) -> (Connection, Peer) {
    let (mut c, peer, _) = sender(cfg, 4, 4);
    assert_eq!(c.poll_timeout(), Some(t(2400)));
    c.handle_timeout(t(2400));
    let mss = c.mss();
    assert_eq!(drain(&mut c, t(2400), mss), vec![1]);
    (c, peer)
}

#[test]
fn timestamps_undo_a_spurious_rto() {
    // The ACK of the originals echoes TSval 600 < 2400 (the retransmission's): the RTO was
    // spurious. Lost marks are cleared, cwnd = max(cwnd, 2·ssthresh) = 4, ssthresh back to
    // "infinite": new segments 5, 6 go instead of retransmissions of 3, 4.
    let cfg = TcpConfig {
        timestamps: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = after_rto(cfg.clone());
    let mss = c.mss();
    c.handle_packet(t(2500), &ack_ts(&peer, 2, mss, 600));
    assert_eq!(c.ca_state(), CaState::Open);
    assert_eq!(
        (c.cwnd(), c.ssthresh()),
        (4, lasthop_tcp::SSTHRESH_INFINITE)
    );
    assert_eq!(drain(&mut c, t(2500), mss), vec![5, 6]);
    assert_eq!(c.stats().undos, 1);
    // The ACK of the retransmission echoes 2400: genuine, go-back-N goes on.
    let (mut c, peer) = after_rto(cfg.clone());
    c.handle_packet(t(3000), &ack_ts(&peer, 1, mss, 2400));
    assert_eq!(c.ca_state(), CaState::Loss);
    assert_eq!(drain(&mut c, t(3000), mss), vec![2, 3]);
    // Without undo, the same spurious case retransmits 3 and 4.
    let (mut c, peer) = after_rto(TcpConfig { undo: false, ..cfg });
    c.handle_packet(t(2500), &ack_ts(&peer, 2, mss, 600));
    assert_eq!(c.ca_state(), CaState::Loss);
    assert_eq!(drain(&mut c, t(2500), mss), vec![3, 4]);
}

#[test]
fn dsack_undoes_after_the_retransmission_is_reported_duplicate() {
    // The receiver had segment 1: its ACK of all four D-SACKs the retransmission. Every
    // retransmission is accounted for, so the reduction is undone: cwnd 2 -> max(2, 2·2) = 4,
    // ssthresh back; then tcp_moderate_cwnd (the ACK carried SACK information) cuts cwnd to
    // in_flight 0 + 3.
    let cfg = TcpConfig {
        dsack: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = after_rto(cfg);
    c.handle_packet(t(3000), &peer.ack(4, 536, &[(1, 1)]));
    assert_eq!(c.stats().dsacks_rcvd, 1);
    assert_eq!(c.ca_state(), CaState::Open);
    assert_eq!(
        (c.cwnd(), c.ssthresh()),
        (3, lasthop_tcp::SSTHRESH_INFINITE)
    );
    assert_eq!(c.stats().undos, 1);
    // Without the D-SACK: slow start from cwnd 2 with ssthresh 2.
    let (mut c, peer) = after_rto(TcpConfig::default());
    c.handle_packet(t(3000), &peer.ack(4, 536, &[]));
    assert_eq!((c.cwnd(), c.ssthresh(), c.stats().undos), (2, 2, 0));
}

#[test]
fn frto_detects_a_spurious_rto() {
    // First ACK after the RTO advances (2): two new segments (5, 6), no retransmission.
    // Second ACK advances (3): spurious; continue with cwnd = ssthresh = 2 (no undo).
    let cfg = TcpConfig {
        frto: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = after_rto(cfg.clone());
    c.handle_packet(t(2500), &peer.ack(2, 536, &[]));
    assert_eq!(drain(&mut c, t(2500), 536), vec![5, 6]);
    c.handle_packet(t(2600), &peer.ack(3, 536, &[]));
    assert_eq!(c.ca_state(), CaState::Open);
    assert_eq!((c.cwnd(), c.ssthresh()), (2, 2));
    assert_eq!(drain(&mut c, t(2600), 536), Vec::<u32>::new());
    assert_eq!((c.stats().spurious_rtos, c.stats().retransmits), (1, 1));

    // A duplicate ACK second: genuine; cwnd 3 and go-back-N from segment 3.
    let (mut c, peer) = after_rto(cfg);
    c.handle_packet(t(2500), &peer.ack(2, 536, &[]));
    assert_eq!(drain(&mut c, t(2500), 536), vec![5, 6]);
    c.handle_packet(t(2600), &peer.ack(2, 536, &[]));
    assert_eq!(c.ca_state(), CaState::Loss);
    assert_eq!(c.cwnd(), 3);
    assert_eq!(drain(&mut c, t(2600), 536), vec![3]);
    assert_eq!(c.stats().spurious_rtos, 0);
}

#[test]
fn ecn_sender_halves_once_per_window_and_signals_cwr() {
    let cfg = TcpConfig {
        ecn: true,
        ..TcpConfig::default()
    };
    let (mut c, peer, out) = sender(cfg, 4, 4);
    assert!(out.iter().all(|s| s.ecn == 2), "new data is ECT(0)");
    // ACK of segment 1 with ECE: cwnd first grows in slow start (4 -> 5, allowed while
    // cwnd < ssthresh), then CWR: ssthresh = max(3 outstanding / 2, 2) = 2 = cwnd.
    let mut a = Segment::decode(&peer.ack(1, 536, &[])).unwrap();
    a.flags |= ECE;
    c.handle_packet(t(1300), &a.encode());
    assert_eq!(c.ca_state(), CaState::Cwr);
    assert_eq!(
        (c.cwnd(), c.ssthresh(), c.stats().ecn_reductions),
        (2, 2, 1)
    );
    // A second ECE in the same window changes nothing.
    a.ack += 536;
    c.handle_packet(t(1310), &a.encode());
    assert_eq!((c.cwnd(), c.stats().ecn_reductions), (2, 1));
    assert!(c.poll_transmit(t(1310)).is_none());
    // ACK of 3: one segment out, cwnd 2: new segment 5 goes, with CWR.
    c.handle_packet(t(1320), &peer.ack(3, 536, &[]));
    let p = c.poll_transmit(t(1320)).unwrap();
    let s = Segment::decode(&p).unwrap();
    assert_eq!((s.seq, s.flags & CWR, s.ecn), (ISS + 1 + 4 * 536, CWR, 2));
    // CWR ends once something above the window of the reduction (segment 4) is acknowledged.
    c.handle_packet(t(1330), &peer.ack(4, 536, &[]));
    assert_eq!(c.ca_state(), CaState::Cwr);
    c.handle_packet(t(1340), &peer.ack(5, 536, &[]));
    assert_eq!(c.ca_state(), CaState::Open);
}

#[test]
fn ecn_receiver_echoes_ce_until_cwr() {
    let cfg = TcpConfig {
        ecn: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    let mut p = peer.data(0);
    p.set_ce();
    c.handle_packet(t(1000), &p);
    let a = Segment::decode(&c.poll_transmit(t(1000)).expect("CE is ACKed at once")).unwrap();
    assert_eq!(a.flags & ECE, ECE);
    assert_eq!(a.ecn, 0, "pure ACKs are not ECT");
    c.handle_packet(t(1100), &peer.data(1));
    assert!(
        c.poll_transmit(t(1100)).is_none(),
        "an ordinary segment is delayed"
    );
    c.handle_timeout(t(1300));
    let a = next_segment(&mut c, t(1300));
    assert_eq!(a.flags & ECE, ECE, "still echoing");
    let mut d = Segment::decode(&peer.data(2)).unwrap();
    d.flags |= CWR;
    c.handle_packet(t(1200), &d.encode());
    c.handle_packet(t(1210), &peer.data(3));
    let a = next_segment(&mut c, t(1210));
    assert_eq!(a.flags & ECE, 0, "CWR stops the echo");
    assert_eq!(c.stats().ce_rcvd, 1);
    // Without ECN negotiated, CE is ignored.
    let (mut c, peer) = client(TcpConfig::default());
    let mut p = peer.data(0);
    p.set_ce();
    c.handle_packet(t(1000), &p);
    assert!(c.poll_transmit(t(1000)).is_none(), "delayed as usual");
}

/// Two hosts joined by a wire with a fixed 100 ms delay and no serialization.
fn run_hosts(
    a: &mut Host,
    b: &mut Host,
    from: Time,
    until: Time,
    mut app: impl FnMut(&mut Host, &mut Host),
) {
    let mut now = from;
    let mut wire: Vec<(Time, bool, Packet)> = Vec::new();
    loop {
        app(a, b);
        while let Some(p) = a.poll_transmit(now) {
            wire.push((now + Dur::from_millis(100), true, p));
        }
        while let Some(p) = b.poll_transmit(now) {
            wire.push((now + Dur::from_millis(100), false, p));
        }
        let next = wire
            .iter()
            .map(|w| w.0)
            .chain(a.poll_timeout())
            .chain(b.poll_timeout())
            .min();
        let Some(t) = next.filter(|&t| t <= until) else {
            break;
        };
        now = t;
        let (due, rest): (Vec<_>, Vec<_>) = wire.into_iter().partition(|w| w.0 == t);
        wire = rest;
        for (_, to_b, p) in due {
            if to_b {
                b.handle_packet(now, &p);
            } else {
                a.handle_packet(now, &p);
            }
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
}

#[test]
fn host_saves_metrics_for_the_next_connection() {
    let cfg = TcpConfig {
        timestamps: true,
        cbi: true,
        ..TcpConfig::default()
    };
    let (c_addr, s_addr) = addrs();
    let mut client = Host::new(*c_addr.ip(), cfg.clone());
    let mut server = Host::new(*s_addr.ip(), cfg);
    server.listen(80);
    // An HTTP/1.0-like exchange: the server writes 20 segments and closes on connect, the
    // client closes on the server's FIN.
    let app = |client: &mut Host, server: &mut Host| {
        let keys: Vec<_> = server.conns().map(|(k, _)| *k).collect();
        for k in keys {
            let c = server.conn_mut(&k).unwrap();
            while let Some(e) = c.poll_event() {
                if e == Event::Connected {
                    c.send(20 * 524);
                    c.close();
                }
            }
        }
        let keys: Vec<_> = client.conns().map(|(k, _)| *k).collect();
        for k in keys {
            let c = client.conn_mut(&k).unwrap();
            while let Some(e) = c.poll_event() {
                if e == Event::PeerFin {
                    c.close();
                }
            }
        }
    };
    client.connect(Time::ZERO, 1025, s_addr, 1);
    run_hosts(&mut client, &mut server, Time::ZERO, t(30_000), app);
    let m = server.metrics(*c_addr.ip()).expect("saved at TIME-WAIT");
    // 20 segments in slow start: no loss, so ssthresh is unknown and cwnd is the last one.
    assert_eq!(m.ssthresh, 0);
    assert!(m.cwnd > 4 && m.srtt >= Dur::from_millis(200), "{m:?}");
    assert!(client.metrics(*s_addr.ip()).is_some());
    // The next connection starts with Linux's initial window, 4 segments.
    let k2 = client.connect(t(30_000), 1026, s_addr, 2);
    // SYN 30000 -> 30100, SYN-ACK -> 30200, ACK -> 30300: 4 segments at once.
    run_hosts(&mut client, &mut server, t(30_000), t(30_350), app);
    let srv = server.conn(&(k2.1, k2.0)).unwrap();
    assert_eq!(srv.stats().data_pkts_sent, 4);
}

#[test]
fn moderate_cwnd_limits_bursts_on_dubious_acks() {
    // 4 out; one ACK covers 3 and SACKs the 4th (a reordered or burst release): slow start
    // makes cwnd 5, then Linux tcp_moderate_cwnd cuts it to in_flight (0) + 3.
    let (mut c, peer, _) = sender(TcpConfig::default(), 4, 4);
    c.handle_packet(t(1300), &peer.ack(3, 536, &[(4, 4)]));
    assert_eq!((c.ca_state(), c.cwnd()), (CaState::Disorder, 3));
    assert_eq!(drain(&mut c, t(1300), 536), vec![5, 6, 7]);
    let cfg = TcpConfig {
        max_burst: 0,
        ..TcpConfig::default()
    };
    let (mut c, peer, _) = sender(cfg, 4, 4);
    c.handle_packet(t(1300), &peer.ack(3, 536, &[(4, 4)]));
    assert_eq!(c.cwnd(), 5);
}

#[test]
fn window_scaling_negotiated_and_applied() {
    // rcvbuf 256 KiB needs a shift of 3 (Linux tcp_select_initial_window). The SYN offers it;
    // the SYN window itself is never scaled.
    let cfg = TcpConfig {
        window_scaling: true,
        rcvbuf: lasthop_core::Bytes(262_144),
        ..TcpConfig::default()
    };
    let (c_addr, s_addr) = addrs();
    let mut c = Connection::connect(Time::ZERO, c_addr, s_addr, cfg.clone(), ISS);
    let syn = next_segment(&mut c, Time::ZERO);
    assert_eq!((syn.wscale, syn.window), (Some(3), 65535));
    // A server that answers with shift 2 and a 1000-unit window field: 4000 bytes usable once
    // scaling applies (not to the SYN-ACK itself: 1000 bytes there).
    let peer = Peer {
        mss: 536,
        ts: false,
    };
    let mut sa = peer.seg(SYN | ACK, 0, 1, 0);
    sa.mss = Some(536);
    sa.wscale = Some(2);
    sa.window = 1000;
    c.handle_packet(t(600), &sa.encode());
    let _ = c.poll_transmit(t(600));
    c.send(20 * 536);
    assert_eq!(
        drain(&mut c, t(600), 536),
        vec![1],
        "1000-byte window: one segment"
    );
    let mut a = peer.seg(ACK, 1, 1 + 536, 0);
    a.window = 1000; // 4000 bytes
    c.handle_packet(t(1200), &a.encode());
    // cwnd is still 2: it did not grow, the window (not cwnd) limited the first flight.
    assert_eq!(drain(&mut c, t(1200), 536), vec![2, 3]);
    // Our advertisement is scaled down by 3: 256 KiB -> 32768.
    c.handle_packet(t(1300), &peer.data(0));
    c.handle_packet(t(1300), &peer.data(1));
    let ack = next_segment(&mut c, t(1300));
    assert_eq!(ack.window, 32768);
    // A server that does not answer the offer: no scaling either way.
    let mut c = Connection::connect(Time::ZERO, c_addr, s_addr, cfg, ISS);
    let _ = c.poll_transmit(Time::ZERO);
    let mut sa = peer.seg(SYN | ACK, 0, 1, 0);
    sa.mss = Some(536);
    c.handle_packet(t(600), &sa.encode());
    let _ = c.poll_transmit(t(600));
    c.handle_packet(t(1300), &peer.data(0));
    c.handle_packet(t(1300), &peer.data(1));
    let ack = next_segment(&mut c, t(1300));
    assert_eq!(ack.window, 65535);
}

#[test]
fn thin_stream_linear_timeouts() {
    // Two segments out (a thin stream), RTT 600 ms from the handshake so RTO 1800 ms. With
    // linear timeouts the first six RTOs stay at srtt + rttvar = 1800 ms; the seventh doubles.
    let cfg = TcpConfig {
        thin_linear_timeouts: true,
        ..TcpConfig::default()
    };
    let (mut c, _) = client(cfg);
    c.send(2 * 536);
    assert_eq!(drain(&mut c, t(600), 536), vec![1, 2]);
    let mut deadlines = Vec::new();
    for _ in 0..8 {
        let d = c.poll_timeout().unwrap();
        deadlines.push(d);
        c.handle_timeout(d);
        let _ = drain(&mut c, d, 536);
    }
    let gaps: Vec<u64> = deadlines
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) / 1_000_000)
        .collect();
    assert_eq!(deadlines[0], t(2400));
    assert_eq!(gaps, vec![1800, 1800, 1800, 1800, 1800, 1800, 3600]);
    // Without: 3600, 7200, ...
    let (mut c, _) = client(TcpConfig::default());
    c.send(2 * 536);
    let _ = drain(&mut c, t(600), 536);
    c.handle_timeout(t(2400));
    assert_eq!(c.poll_timeout(), Some(t(2400 + 3600)));
}

#[test]
fn thin_stream_fast_retransmit_on_one_dupack() {
    // A stream past its first slow start (an RTO set ssthresh 2) with two segments out and
    // nothing unsent: one SACKed segment above the hole is enough with thin_dupack.
    fn setup(thin_dupack: bool) -> (Connection, Peer) {
        let cfg = TcpConfig {
            thin_dupack,
            ..TcpConfig::default()
        };
        let (mut c, peer) = client(cfg);
        c.send(2 * 536);
        let _ = drain(&mut c, t(600), 536);
        c.handle_timeout(t(2400));
        assert_eq!(drain(&mut c, t(2400), 536), vec![1]);
        c.handle_packet(t(3000), &peer.ack(2, 536, &[])); // all acknowledged, Loss ends
        c.send(2 * 536);
        assert_eq!(drain(&mut c, t(3000), 536), vec![3, 4]);
        (c, peer)
    }
    let (mut c, peer) = setup(true);
    c.handle_packet(t(3700), &peer.ack(2, 536, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(drain(&mut c, t(3700), 536), vec![3]);
    let (mut c, peer) = setup(false);
    c.handle_packet(t(3700), &peer.ack(2, 536, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(3700), 536), Vec::<u32>::new());
}

#[test]
fn recovery_exit_flight_plus_one() {
    // Reno, 4 out: dupacks 1 and 2 send 5 and 6 (limited transmit), the third starts recovery
    // with ssthresh = cwnd = (6 - 2) / 2 = 2. The ACK of everything ends it: Linux keeps
    // min(cwnd, ssthresh) = 2; seed 001's stack sets FlightSize (0) + 1.
    fn case(exit: lasthop_tcp::RecoveryExit) -> u32 {
        let cfg = TcpConfig {
            sack: false,
            recovery_exit: exit,
            ..TcpConfig::default()
        };
        let (mut c, peer, _) = sender(cfg, 4, 4);
        for k in 0..3 {
            c.handle_packet(t(1300 + k), &peer.ack(0, 536, &[]));
            let _ = drain(&mut c, t(1300 + k), 536);
        }
        assert_eq!((c.ca_state(), c.ssthresh()), (CaState::Recovery, 2));
        c.handle_packet(t(2000), &peer.ack(6, 536, &[]));
        assert_eq!(c.ca_state(), CaState::Open);
        c.cwnd()
    }
    assert_eq!(case(lasthop_tcp::RecoveryExit::Ssthresh), 2);
    assert_eq!(case(lasthop_tcp::RecoveryExit::FlightPlusOne), 1);
}

#[test]
fn seed001_keeps_a_cwnd_of_four_through_its_recovery() {
    // Seed 001 C.1.1 on the 2.3.99 baseline (no limited transmit): IW segments out, the first
    // lost; duplicate ACKs for 2, 3 and 4. The third starts recovery with ssthresh
    // max(cwnd / 2, 2) = 2 and resends 1; nothing new goes (cwnd ssthresh + 3 = 5 covers the
    // flight). The ACK of everything ends recovery with nothing out: FlightSize + 1 = 1, except
    // that a cwnd of exactly four at the third duplicate ACK is kept ("the cwnd is not lowered
    // beyond four segments"), and congestion avoidance follows (4 > ssthresh 2).
    fn case(iw: u32) -> (u32, u32) {
        let (mut c, peer, _) = sender(TcpConfig::linux_2_3_99(), iw, iw as usize);
        for k in 0..3 {
            c.handle_packet(t(1300 + k), &peer.ack(0, 536, &[]));
            let _ = drain(&mut c, t(1300 + k), 536);
        }
        assert_eq!((c.ca_state(), c.ssthresh()), (CaState::Recovery, 2));
        c.handle_packet(t(2000), &peer.ack(iw, 536, &[]));
        assert_eq!(c.ca_state(), CaState::Open);
        (c.cwnd(), c.ssthresh())
    }
    assert_eq!(
        case(4),
        (4, 2),
        "cwnd four at the third duplicate ACK: kept"
    );
    assert_eq!(case(5), (1, 2), "cwnd five: FlightSize + 1");
    assert_eq!(
        TcpConfig::linux_2_3_99().recovery_exit,
        lasthop_tcp::RecoveryExit::FlightPlusOneKeepFour
    );
}

#[test]
fn shared_advertised_window_splits_between_connections() {
    // Seed 001: 2048 bytes shared by the connections from the server's address.
    let (c_addr, s_addr) = addrs();
    let mut client = Host::new(*c_addr.ip(), TcpConfig::default());
    client.set_shared_window(*s_addr.ip(), 2048);
    client.connect(Time::ZERO, 1025, s_addr, 1);
    let syn = Segment::decode(&client.poll_transmit(Time::ZERO).unwrap()).unwrap();
    assert_eq!(syn.window, 2048, "alone: the whole pool");
    client.connect(Time::ZERO, 1026, s_addr, 2);
    let syn2 = Segment::decode(&client.poll_transmit(Time::ZERO).unwrap()).unwrap();
    assert_eq!(syn2.window, 1024, "two connections: half each");
    // A third: 682 for the newcomer.
    client.connect(Time::ZERO, 1027, s_addr, 3);
    let syn3 = Segment::decode(&client.poll_transmit(Time::ZERO).unwrap()).unwrap();
    assert_eq!(syn3.window, 682);
}

#[test]
fn delayed_ack_echoes_the_earliest_unacknowledged_tsval() {
    // RFC 1323 §4.2 / Linux: two segments with TSval 10 and 20 acknowledged together echo 10.
    let cfg = TcpConfig {
        timestamps: true,
        ..TcpConfig::default()
    };
    let (mut c, peer) = client(cfg);
    let mut d0 = Segment::decode(&peer.data(0)).unwrap();
    d0.ts = Some((10, 1));
    let mut d1 = Segment::decode(&peer.data(1)).unwrap();
    d1.ts = Some((20, 1));
    c.handle_packet(t(1000), &d0.encode());
    c.handle_packet(t(1050), &d1.encode());
    let a = next_segment(&mut c, t(1050));
    assert_eq!(a.ts.unwrap().1, 10);
}

#[test]
fn flight_cap_keeps_cwnd_at_in_flight_plus_one_in_recovery() {
    // As in `sack_loss_marking_head_repairs_one_hole_per_round_trip`: cwnd 8, segments 5-12 out,
    // then one ACK of 4 SACKs 6 and 8-12. Holes 5 and 7 are lost (RFC 3517), ssthresh = cwnd =
    // 8/2 = 4 and in_flight = 8 - 6 SACKed - 2 lost = 0.
    // Without the cap: 5, 7 and new 13, 14 go (in_flight 0 -> 4). The ACK of 6 (5 repaired)
    // leaves 7-14 out, 8-12 SACKed, 7 lost and retransmitted: in_flight = 8 - 5 - 1 + 1 = 3 < 4,
    // so new 15 goes.
    // With the cap (Linux 2.4 `tcp_cwnd_down`'s last line, run at entry too): cwnd = min(4, 0 +
    // 1) = 1, so only 5 goes. At the ACK of 6: 7-12 out, 5 SACKed, 7 lost: in_flight = 0, cwnd
    // = 1, so only 7 goes: one hole per round trip, seed 000 §5.1.1's category 2.
    let run = |cap: bool| -> (Vec<u32>, u32, Vec<u32>, u32) {
        let cfg = TcpConfig {
            flight_cap: cap,
            ..TcpConfig::default()
        };
        let (mut c, peer, _) = sender(cfg, 4, 4);
        for k in 1..=4 {
            c.handle_packet(t(1200 + k), &peer.ack(k as u32, 536, &[]));
            while c.poll_transmit(t(1200 + k)).is_some() {}
        }
        assert_eq!(c.cwnd(), 8);
        c.handle_packet(t(1900), &peer.ack(4, 536, &[(6, 6), (8, 12)]));
        assert_eq!((c.ca_state(), c.ssthresh()), (CaState::Recovery, 4));
        let first = drain(&mut c, t(1900), 536);
        let cwnd1 = c.cwnd();
        c.handle_packet(t(2600), &peer.ack(6, 536, &[(8, 12)]));
        (first, cwnd1, drain(&mut c, t(2600), 536), c.cwnd())
    };
    assert_eq!(run(false), (vec![5, 7, 13, 14], 4, vec![15], 4));
    assert_eq!(run(true), (vec![5], 1, vec![7], 1));
    let cfg = TcpConfig::from_toml("flight_cap = true").unwrap();
    assert!(cfg.flight_cap);
}

#[test]
fn head_timedout_marks_segments_older_than_one_rto_lost() {
    // As in `sack_loss_marking_head_repairs_one_hole_per_round_trip` (head-only marking): cwnd
    // 8, segments 5-12 out (5 sent at 1201 ms, 7 at 1202 ms), then one ACK of 4 SACKs 6 and
    // 8-12: 5 is retransmitted at 1900 ms, 7 waits. A further duplicate ACK with nothing new
    // marks nothing by the head rule. With `head_timedout` (Linux 2.4 `tcp_head_timedout`), once
    // the head (5, last sent at 1900 ms) is older than one RTO, every segment not SACKed, not
    // lost and not retransmitted that was last sent more than one RTO ago (7) is lost and goes.
    // One millisecond earlier the head is not yet timed out and nothing happens.
    let run = |timedout: bool, late: bool| -> Vec<u32> {
        let cfg = TcpConfig {
            sack_loss_marking: lasthop_tcp::SackLossMarking::Head,
            head_timedout: timedout,
            ..TcpConfig::default()
        };
        let (mut c, peer, mut first) = two_holes(cfg, 100 * 536);
        // Only segments 1-12: what is repaired, not the new data.
        let rtx = |c: &mut Connection, now| {
            let mut v = sent_segments(c, now);
            v.retain(|&k| k <= 12);
            v
        };
        first.retain(|&k| k <= 12);
        assert_eq!(first, vec![5]);
        let rto_ms = c.rto().0 / 1_000_000;
        let at = if late {
            1900 + rto_ms + 1
        } else {
            1900 + rto_ms
        };
        c.handle_packet(t(at), &peer.ack(4, 536, &[(6, 6), (8, 12)]));
        assert_eq!(c.ca_state(), CaState::Recovery);
        rtx(&mut c, t(at))
    };
    assert_eq!(run(false, true), Vec::<u32>::new());
    assert_eq!(run(true, false), Vec::<u32>::new());
    assert_eq!(run(true, true), vec![7]);
    let cfg = TcpConfig::from_toml("head_timedout = true").unwrap();
    assert!(cfg.head_timedout);
}

/// Seed 001's SACK sender, Linux 2.2/2.3's FACK (`sack_loss_marking = "linux23"`). Segments
/// 1-4 each ACKed alone take cwnd from 4 to 8 and put 5-12 out; one ACK of 4 SACKs 6 and 8-12:
/// fackets_out = 8 > 3, Recovery. ssthresh = 8/2 = 4 but cwnd = ssthresh + 3 = 7 (2.2/2.3
/// `tcp_fast_retrans`); both holes below the highest SACK are lost, in_flight = 8 out - 6
/// SACKed - 2 lost = 0, so 5 and 7 are retransmitted and five new segments (13-17) follow until
/// in_flight = 7. RFC 3517 with cwnd = ssthresh = 4 sends 5, 7, 13, 14. The full ACK (12)
/// ends Recovery with cwnd = ssthresh = 4 (`clear_fast_retransmit`), whatever
/// `recovery_exit` says.
#[test]
fn linux23_fack_sender_does_not_reduce_cwnd_in_recovery() {
    let run = |cfg: TcpConfig| {
        let cfg = TcpConfig {
            initial_window: lasthop_tcp::InitialWindow::Segments(4),
            limited_transmit: false,
            ..cfg
        };
        let (mut c, peer) = client(cfg);
        c.send(100 * 536);
        while c.poll_transmit(t(600)).is_some() {}
        for k in 1..=4 {
            c.handle_packet(t(1200 + k), &peer.ack(k as u32, 536, &[]));
            while c.poll_transmit(t(1200 + k)).is_some() {}
        }
        assert_eq!(c.cwnd(), 8);
        c.handle_packet(t(1900), &peer.ack(4, 536, &[(6, 6), (8, 12)]));
        assert_eq!(c.ca_state(), CaState::Recovery);
        let sent = sent_segments(&mut c, t(1900));
        (c, peer, sent)
    };
    let (_, _, rfc) = run(marking_cfg(lasthop_tcp::SackLossMarking::Rfc3517));
    assert_eq!(rfc, [5, 7, 13, 14]);
    let cfg = TcpConfig {
        recovery_exit: lasthop_tcp::RecoveryExit::FlightPlusOne,
        ..marking_cfg(lasthop_tcp::SackLossMarking::Linux23)
    };
    let (mut c, peer, sent) = run(cfg);
    assert_eq!((c.ssthresh(), c.cwnd()), (4, 7));
    assert_eq!(sent, [5, 7, 13, 14, 15, 16, 17]);
    // Everything up to 12 arrives: Recovery ends at cwnd = ssthresh.
    c.handle_packet(t(2600), &peer.ack(12, 536, &[]));
    assert_eq!((c.ca_state(), c.cwnd()), (CaState::Open, 4));
}

/// The profile `linux-2.3.99` (seed 001's Baseline TCP) and what may be written beside it.
#[test]
fn linux_2_3_99_profile() {
    let c = TcpConfig::from_toml("profile = \"linux-2.3.99\"").unwrap();
    assert!(!c.sack && !c.limited_transmit && !c.newreno_careful);
    assert_eq!(c.rto_estimator, lasthop_tcp::RtoEstimator::Linux22);
    assert_eq!(c.rto_timer, lasthop_tcp::RtoTimer::OldestSent);
    assert_eq!(
        c.recovery_exit,
        lasthop_tcp::RecoveryExit::FlightPlusOneKeepFour
    );
    assert_eq!(c.sack_loss_marking, lasthop_tcp::SackLossMarking::Linux23);
    assert_eq!(c.handshake_rtt, lasthop_tcp::HandshakeRtt::TimestampsOnly);
    assert_eq!(
        (c.delayed_ack, c.adv_win_scale),
        (DelayedAck::Off, Some(-1))
    );
    let sack = TcpConfig::from_toml("profile = \"linux-2.3.99\"\nsack = true").unwrap();
    assert!(sack.sack && sack.rto_estimator == lasthop_tcp::RtoEstimator::Linux22);
    let e = TcpConfig::from_toml("profile = \"linux-2.3\"").unwrap_err();
    assert!(e.message.contains("linux-2.3.99"), "{e}");
}
