//! Linux 6.18 in the model, worked by hand: internal pacing (`tcp_update_pacing_rate`, the
//! earliest-departure schedule of `tcp_update_skb_after_send`), BBR in a connection, and the
//! keys' errors. (BBR's state changes one by one: `src/cc/bbr.rs`; delivery-rate samples:
//! `src/conn/rate.rs`.)
//!
//! One endpoint (the client) sends; the peer is written by hand. The SYN-ACK arrives at 600 ms,
//! so srtt is 600 ms. MSS 536.

mod common;

use common::addrs;
use lasthop_core::{Bytes, Dur, Packet, Time};
use lasthop_tcp::wire::{Segment, ACK, PSH, SYN};
use lasthop_tcp::{
    CaState, CongestionControl, Connection, Event, InitialWindow, Pacing, SsthreshFrom, TcpConfig,
};

const PEER_ISS: u32 = 7000;
const ISS: u32 = 1000;
const MSS: u32 = 536;

fn t(ms: u64) -> Time {
    Time(ms * 1_000_000)
}

/// An ACK from the peer: `acked` of our segments cumulatively, SACK blocks as 1-based segment
/// ranges.
fn ack(acked: u32, sacks: &[(u32, u32)]) -> Packet {
    let (c, s) = addrs();
    Segment {
        src: Some(s),
        dst: Some(c),
        seq: PEER_ISS + 1,
        ack: ISS + 1 + acked * MSS,
        flags: ACK,
        window: 65535,
        sacks: sacks
            .iter()
            .map(|&(a, b)| (ISS + 1 + (a - 1) * MSS, ISS + 1 + b * MSS))
            .collect(),
        ..Segment::default()
    }
    .encode()
}

/// The peer's SYN-ACK (MSS 536, SACK, timestamps `ts` if any).
fn synack(ts: Option<(u32, u32)>) -> Packet {
    let (c, s) = addrs();
    Segment {
        src: Some(s),
        dst: Some(c),
        seq: PEER_ISS,
        ack: ISS + 1,
        flags: SYN | ACK,
        window: 65535,
        mss: Some(MSS as u16),
        sack_permitted: true,
        ts,
        ..Segment::default()
    }
    .encode()
}

/// A client connected by a SYN-ACK at 600 ms that has written `segments` full segments.
fn client(cfg: TcpConfig, segments: u32) -> Connection {
    let (c, s) = addrs();
    let mut conn = Connection::connect(Time::ZERO, c, s, cfg, ISS);
    let syn = Segment::decode(&conn.poll_transmit(Time::ZERO).unwrap()).unwrap();
    assert_eq!(syn.flags, SYN);
    conn.handle_packet(t(600), &synack(None));
    assert_eq!(conn.poll_event(), Some(Event::Connected));
    conn.send(u64::from(segments * MSS));
    conn
}

/// Data segments (1-based numbers) sent now.
fn drain(c: &mut Connection, now: Time) -> Vec<u32> {
    let mut v = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        let s = Segment::decode(&p).unwrap();
        if s.payload > 0 {
            v.push(s.seq.wrapping_sub(ISS + 1) / MSS + 1);
        }
    }
    v
}

fn paced_reno() -> TcpConfig {
    TcpConfig {
        initial_window: InitialWindow::Segments(10),
        ssthresh_from: SsthreshFrom::Cwnd,
        pacing: Pacing::Always,
        ..TcpConfig::default()
    }
}

fn pacing_rate(c: &mut Connection) -> Option<u64> {
    c.drain_trace().last().unwrap().pacing_rate
}

// ---------------------------------------------------------------------------------------------
// Pacing.

/// Slow start paces at 200 % of cwnd · mss / srtt and the schedule moves by each skb: the
/// first 10 segments go at once, then two-segment skbs (the rate's millisecond is under one
/// segment) at 536 B / 19 653 B/s = 27.27319 ms per segment, half of it forgiven to an skb that
/// starts late.
#[test]
fn slow_start_pacing_by_hand() {
    let mut c = client(paced_reno(), 20);
    // At the handshake: cwnd 10, srtt 600 ms: 536 · 80 000 · 200 · 10 / (600 000 · 8) = 17 866.
    assert_eq!(pacing_rate(&mut c), Some(17_866));
    assert_eq!(drain(&mut c, t(600)), (1..=10).collect::<Vec<_>>());
    // The 10th segment was the first paced one: the next could leave 30.001 ms later, but cwnd
    // is full. An ACK of two segments at 1200 ms: cwnd 11 (2.4's Reno adds one per ACK),
    // 8 out, srtt still 600 ms: rate 536 · 80 000 · 200 · 11 / 4 800 000 = 19 653.
    c.handle_packet(t(1200), &ack(2, &[]));
    assert_eq!(pacing_rate(&mut c), Some(19_653));
    // Three may go; an skb holds two (19 653 >> 10 = 19 B is under a segment: the minimum, 2).
    // The skb starts 570 ms behind the schedule (credit 570 ms, of which half the skb's
    // 1072e9 / 19 653 = 54 546 379 ns is forgiven, 27 273 189): the next skb waits until
    // 1200 ms + 27 273 190 ns.
    assert_eq!(drain(&mut c, t(1200)), vec![11, 12]);
    let skb2 = Time(1_200_000_000 + 27_273_190);
    assert_eq!(c.poll_timeout(), Some(skb2));
    c.handle_timeout(skb2);
    assert_eq!(drain(&mut c, skb2), vec![13]);
    // It left on time: no credit, the schedule moves by its whole 536e9 / 19 653 =
    // 27 273 189 ns (the pacing timer is armed for it although cwnd, 11 out of 11, holds the
    // next segment anyway, as `tcp_write_xmit` checks the pacing first).
    assert_eq!(c.poll_timeout(), Some(skb2 + Dur(27_273_189)));
}

/// After a loss (ssthresh halved, cwnd at or above ssthresh / 2) the rate is 120 % of
/// max(cwnd, packets_out) · mss / srtt.
#[test]
fn congestion_avoidance_pacing_is_120_percent() {
    let mut c = client(paced_reno(), 10);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    // Segments 2..4 SACKed at 1200 ms: segment 1 is lost (three SACKed above it), Recovery:
    // ssthresh = cwnd / 2 = 5, cwnd 5 (no PRR), 10 still out. 5 is not below 5 / 2:
    // 536 · 80 000 · 120 · 10 / 4 800 000 = 10 720 = 1.2 · 10 · 536 / 0.6.
    c.handle_packet(t(1200), &ack(0, &[(2, 4)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!((c.cwnd(), c.ssthresh()), (5, 5));
    assert_eq!(pacing_rate(&mut c), Some(10_720));
}

/// Without pacing the same connection sends its window at once and the trace has no rate.
#[test]
fn unpaced_sends_the_window_at_once() {
    let cfg = TcpConfig {
        pacing: Pacing::None,
        ..paced_reno()
    };
    let mut c = client(cfg, 20);
    assert_eq!(pacing_rate(&mut c), None);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    c.handle_packet(t(1200), &ack(2, &[]));
    assert_eq!(drain(&mut c, t(1200)), vec![11, 12, 13]);
}

// ---------------------------------------------------------------------------------------------
// BBR.

fn bbr() -> TcpConfig {
    TcpConfig {
        initial_window: InitialWindow::Segments(10),
        congestion_control: CongestionControl::Bbr,
        pacing: Pacing::WhenNeeded,
        hz: 250,
        ..TcpConfig::default()
    }
}

/// BBR starts pacing at 2/ln 2 times IW over the handshake's RTT, and its samples, ACK by
/// ACK, take it out of startup only when the bandwidth stops growing.
#[test]
fn bbr_paces_from_the_handshake_at_high_gain() {
    let mut c = client(bbr(), 40);
    let tr = c.drain_trace();
    let last = tr.last().unwrap();
    assert_eq!(last.cc_mode, Some("startup"));
    // bbr_init_pacing_rate_from_rtt: bw = 10 · 2^24 / 600 000 µs = 279; 279 · 536 · 739 >> 8 =
    // 431 691; · 990 000 >> 24 = 25 473 B/s (2.887 · 10 · 536 B / 0.6 s, 1 % below).
    assert_eq!(last.pacing_rate, Some(25_473));
    // The first 10 segments go at once (unpaced), in startup cwnd grows by what is ACKed.
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    c.handle_packet(t(1200), &ack(2, &[]));
    assert_eq!(c.cwnd(), 12);
    // 2 delivered over max(0 send phase, 600 ms ACK phase): bw 2 · 2^24 / 600 000 = 55, below
    // the pacing rate: startup never lowers it.
    assert_eq!(pacing_rate(&mut c), Some(25_473));
}

/// BBR where the host cannot pace, and the other keys' errors, name the key and what works.
#[test]
fn bbr_needs_a_host_that_paces() {
    let e = TcpConfig::from_toml("congestion_control = \"bbr\"").unwrap_err();
    assert_eq!(e.key, "congestion_control");
    assert!(e.message.contains("pacing"), "{e}");
    assert!(e.message.contains("linux-6.18"), "{e}");
    let e =
        TcpConfig::from_toml("profile = \"linux-3.16\"\ncongestion_control = \"bbr\"").unwrap_err();
    assert_eq!(e.key, "congestion_control");
    TcpConfig::from_toml("congestion_control = \"bbr\"\npacing = \"when_needed\"").unwrap();
    let e = TcpConfig::from_toml("congestion_control = \"vegas\"").unwrap_err();
    assert_eq!(e.key, "congestion_control");
    assert!(
        e.message.contains("bbr") && e.message.contains("cubic"),
        "{e}"
    );
    let e = TcpConfig::from_toml(
        "congestion_control = \"bbr\"\npacing = \"always\"\nkernel = \"linux-3.16\"",
    )
    .unwrap_err();
    assert_eq!(e.key, "kernel");
    let e = TcpConfig::from_toml("hz = 200").unwrap_err();
    assert_eq!(e.key, "hz");
    assert!(e.message.contains("250"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Keys.

#[test]
fn pacing_keys_and_their_errors() {
    let c = TcpConfig::from_toml("pacing = \"always\"\npacing_ca_ratio = 150").unwrap();
    assert_eq!(
        (c.pacing, c.pacing_ss_ratio, c.pacing_ca_ratio),
        (Pacing::Always, 200, 150)
    );
    let e = TcpConfig::from_toml("pacing_ss_ratio = 3001").unwrap_err();
    assert_eq!(e.key, "pacing_ss_ratio");
    assert!(e.message.contains("0..=3000"), "{e}");
    let e = TcpConfig::from_toml("pacing = \"sometimes\"").unwrap_err();
    assert_eq!(e.key, "pacing");
    assert!(e.message.contains("when_needed"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// The linux-6.18 profile.

/// Linux 6.18 with Reno (no HyStart), RACK and TLP off and an initial window of `iw`.
fn reno_618(iw: u32) -> TcpConfig {
    TcpConfig {
        congestion_control: CongestionControl::Reno,
        hystart: false,
        rack: false,
        tlp: false,
        initial_window: InitialWindow::Segments(iw),
        ..TcpConfig::linux_6_18()
    }
}

/// [`reno_618`] without PRR: cwnd moves only by slow start and the ACKs, as the tests below
/// work it by hand.
fn reno_618_no_prr(iw: u32) -> TcpConfig {
    TcpConfig {
        prr: false,
        ..reno_618(iw)
    }
}

/// A Linux 6.18 host set as seed 000's emulated ones (Reno, PRR, RACK and TLP off, IW 2) grows
/// cwnd in slow start like any other: with two segments out, the ACK of one raises cwnd from 2
/// to 3 (2 < 2 · max_packets_out 2) and lets two new segments go, and so on. The 6.x growth gate
/// reads state that was kept only when PRR, RACK, TLP or CUBIC was on: without them cwnd stayed
/// at 2 and each ACK let one segment go.
#[test]
fn linux6_reno_without_prr_rack_or_tlp_grows_in_slow_start() {
    let cfg = reno_618_no_prr(2);
    let mut c = client(cfg, 20);
    assert_eq!(drain(&mut c, t(600)), vec![1, 2]);
    c.handle_packet(t(1200), &ack(1, &[]));
    assert_eq!(drain(&mut c, t(1200)), vec![3, 4]);
    c.handle_packet(t(1210), &ack(2, &[]));
    assert_eq!(drain(&mut c, t(1210)), vec![5, 6]);
    c.handle_packet(t(1800), &ack(4, &[]));
    assert_eq!(drain(&mut c, t(1800)), vec![7, 8, 9, 10]);
}

/// Data segments (1-based numbers) sent now, and whether each carries PSH.
fn drain_psh(c: &mut Connection, now: Time) -> Vec<(u32, bool)> {
    let mut v = Vec::new();
    while let Some(p) = c.poll_transmit(now) {
        let s = Segment::decode(&p).unwrap();
        if s.payload > 0 {
            v.push((s.seq.wrapping_sub(ISS + 1) / MSS + 1, s.flags & PSH != 0));
        }
    }
    v
}

/// Where a 6.x sender puts PSH (`conn/gso.rs`), as the emulated 6.18 hosts do on seed 000's
/// link: skbs of two segments (srtt 600 ms makes the pacing rate 2 · 2 · 536 B / 0.6 s, far
/// below the 2 · 536 B per ms that would make them larger), each sent as one GSO packet of at
/// most min(cwnd / 2, cwnd − in flight) segments, PSH forced on a packet of more than one. cwnd
/// 2 and 3 allow one segment per packet: segments 1–4 go unpushed. At cwnd 4 with 2 in flight
/// the pair 5–6 goes together: PSH on 6; at cwnd 6 with 2 in flight the quota is 3, so the
/// skbs 7–8 and 9–10 go whole, PSH on 8 and 10. The last segment written is pushed alone.
#[test]
fn linux6_sender_pushes_the_last_segment_of_each_gso_packet() {
    let cfg = reno_618_no_prr(2);
    let mut c = client(cfg, 11);
    assert_eq!(drain_psh(&mut c, t(600)), vec![(1, false), (2, false)]);
    c.handle_packet(t(1200), &ack(1, &[]));
    assert_eq!(drain_psh(&mut c, t(1200)), vec![(3, false), (4, false)]);
    c.handle_packet(t(1210), &ack(2, &[]));
    assert_eq!(drain_psh(&mut c, t(1210)), vec![(5, false), (6, true)]);
    c.handle_packet(t(1800), &ack(4, &[]));
    assert_eq!(
        drain_psh(&mut c, t(1800)),
        vec![(7, false), (8, true), (9, false), (10, true)]
    );
    // cwnd 8, 6 in flight: quota min(4, 2) = 2, but one segment is left, the write's last.
    c.handle_packet(t(1810), &ack(5, &[]));
    assert_eq!(drain_psh(&mut c, t(1810)), vec![(11, true)]);
}

/// The 6.x writer (`conn/sndbuf.rs`) copies 188 640 B written in calls of 64 KiB, as the
/// emulator's bulk sender writes them, into a 46 080 B send buffer (2 x 10 x 2304 at IW 10).
/// Skbs of 61 segments (half the 65 535 B window), each refilled as its first packets go:
/// skb 1 takes 61 segments, sends a pair and takes the pair's room again; at 32 768 B past the
/// last mark it is full and ends beyond half the window, so it is pushed (`forced_push`), the
/// window's ten segments go, and it grows by eight more, to 71 segments (38 056 B), its PSH
/// moving with its end. Skb 2 takes the rest of the first call (27 480 B, pushed as the call
/// ends); the second call's first copy appends 5 216 B to it, clearing that PSH, and then the
/// queues' 70 752 B and 7 skbs (832 B each) exceed the buffer: the writer sleeps, its skb
/// pushed. Segment 71 ends skb 1: when it goes alone it carries PSH. The buffer grows when an
/// ACK finds fewer than cwnd segments in flight once its first packet has gone.
#[test]
fn linux6_writer_fills_the_send_buffer_and_pushes_where_the_kernel_does() {
    let cfg = reno_618_no_prr(10);
    let (c, s) = addrs();
    let mut conn = Connection::connect(Time::ZERO, c, s, cfg, ISS);
    conn.poll_transmit(Time::ZERO).unwrap();
    conn.handle_packet(t(600), &synack(None));
    assert_eq!(conn.poll_event(), Some(Event::Connected));
    conn.send_calls(188_640, 65_536);
    conn.close();
    assert_eq!(conn.unacked_bytes(), 70_752);
    let first: Vec<_> = (1..=10).map(|k| (k, k % 2 == 0)).collect();
    assert_eq!(drain_psh(&mut conn, t(600)), first);
    conn.handle_packet(t(1200), &ack(10, &[]));
    assert_eq!(drain_psh(&mut conn, t(1200)).len(), 20);
    conn.handle_packet(t(1800), &ack(30, &[]));
    let sent = drain_psh(&mut conn, t(1800));
    assert_eq!((sent[0], sent[39]), ((31, false), (70, true)));
    // That ACK let 20 pairs go; after the first, 38 segments were in flight against a cwnd
    // of 40, so the buffer grew to 2 x 40 x 2304 B and the writer, woken, copied the rest.
    assert_eq!(conn.unacked_bytes(), 188_640 - 30 * 536);
    // cwnd 41, 39 in flight: segment 71 alone (skb 1 ends there), then 72 opens skb 2.
    conn.handle_packet(t(1810), &ack(31, &[]));
    assert_eq!(drain_psh(&mut conn, t(1810)), vec![(71, true), (72, false)]);
}

/// 6.x TSO deferral (`tcp_tso_should_defer`): Reno, IW 10, srtt 600 ms (the handshake); ten
/// segments at 600 ms. At 1300 ms the ACK of two segments comes 700 ms after segment 3 went, so
/// the oldest outstanding segment's ACK is overdue (due by srtt). cwnd 12, 8 in flight, and the
/// peer's window of 11 segments ends after segment 13: the pair 11-12 goes; then one segment
/// fits, less than a GSO packet and under a third of min(window, cwnd), in the same millisecond,
/// with more than one segment left in the skb: segment 13 waits. Nothing wakes the connection
/// at 1350 ms; the next ACK finds the last send 100 ms old, and 13 leads the next pair.
#[test]
fn linux6_sender_defers_a_lone_segment_while_the_heads_ack_is_due() {
    let cfg = reno_618_no_prr(10);
    let mut c = client(cfg, 30);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    let mut a = Segment::decode(&ack(2, &[])).unwrap();
    a.window = 11 * MSS as u16;
    c.handle_packet(t(1300), &a.encode());
    assert_eq!(drain_psh(&mut c, t(1300)), vec![(11, false), (12, true)]);
    assert_eq!(drain_psh(&mut c, t(1350)), vec![]);
    c.handle_packet(t(1400), &ack(3, &[]));
    assert_eq!(drain_psh(&mut c, t(1400))[..2], [(13, false), (14, true)]);
}

// ---------------------------------------------------------------------------------------------
// F-RTO as 6.x has it (RFC 5682's SACK-enhanced version, `tcp_process_loss`).

/// Linux 6.18 with Reno, IW 4, no RACK or TLP (so that only the RTO fires): segments 1–4 go at
/// 600 ms and nothing comes back until the retransmission timer fires and resends 1.
fn frto_client() -> (Connection, Time) {
    let mut c = client(reno_618(4), 20);
    assert_eq!(drain(&mut c, t(600)), vec![1, 2, 3, 4]);
    let rto = c.poll_timeout().unwrap();
    c.handle_timeout(rto);
    assert_eq!(c.ca_state(), CaState::Loss);
    assert_eq!(
        drain(&mut c, rto),
        vec![1],
        "the RTO resends the head alone (cwnd 1)"
    );
    (c, rto)
}

/// A spurious RTO (the originals were only delayed): the ACK of segment 1 (which was resent,
/// so it proves nothing) lets two new segments out instead of resending 2 and 3 (step 2b:
/// slow start makes cwnd 2 and the three still out are all marked lost, so none is in
/// flight); the ACK of segment 2, never resent and sent before the RTO, shows the timeout
/// spurious (step 3b): the marks go, cwnd comes back to the 4 it had, ssthresh to what it
/// was (none yet), and 3 and 4 are never resent. The seeds' F-RTO (RFC 4138) would leave cwnd
/// at the halved ssthresh and keep it.
#[test]
fn linux6_frto_undoes_a_spurious_timeout() {
    let (mut c, rto) = frto_client();
    let a1 = rto + Dur::from_millis(100);
    c.handle_packet(a1, &ack(1, &[]));
    assert_eq!(c.ca_state(), CaState::Loss);
    assert_eq!(
        drain(&mut c, a1),
        vec![5, 6],
        "step 2b: new data, not 2 and 3"
    );
    let a2 = a1 + Dur::from_millis(10);
    c.handle_packet(a2, &ack(2, &[]));
    assert_eq!(c.ca_state(), CaState::Open, "step 3b: spurious");
    assert_eq!(c.stats().spurious_rtos, 1);
    assert!(c.ssthresh() > 1000, "ssthresh restored: {}", c.ssthresh());
    // cwnd max(2, prior 4) = 4, then +1 in slow start for the ACK of 2; out: 3, 4, 5, 6.
    assert_eq!(c.cwnd(), 5);
    assert_eq!(
        drain(&mut c, a2),
        vec![7],
        "3 and 4 stay in flight, unsent again"
    );
}

/// The same RTO when the loss was real: after step 2b (5 and 6 sent), a duplicate ACK that
/// SACKs segment 5 means the originals did not arrive (step 3a): F-RTO ends and the
/// retransmissions go on in slow start, segment 2 first (cwnd 2, segment 6 in flight).
#[test]
fn linux6_frto_goes_back_when_the_loss_was_real() {
    let (mut c, rto) = frto_client();
    let a1 = rto + Dur::from_millis(100);
    c.handle_packet(a1, &ack(1, &[]));
    assert_eq!(drain(&mut c, a1), vec![5, 6]);
    let a2 = a1 + Dur::from_millis(300);
    c.handle_packet(a2, &ack(1, &[(5, 5)]));
    assert_eq!(c.ca_state(), CaState::Loss);
    assert_eq!(drain(&mut c, a2), vec![2]);
    assert_eq!(c.stats().spurious_rtos, 0);
}

/// With SACK the proof can come before anything is acknowledged: a duplicate ACK that SACKs
/// segment 2 (sent before the RTO, never resent) shows the timeout spurious at once. Loss ends
/// and, segment 2 being SACKed, the state is Disorder (`tcp_try_to_open`), not Loss.
#[test]
fn linux6_frto_takes_a_sacked_original_as_proof() {
    let (mut c, rto) = frto_client();
    let a1 = rto + Dur::from_millis(100);
    c.handle_packet(a1, &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(c.stats().spurious_rtos, 1);
    assert_eq!(
        c.cwnd(),
        4,
        "max(1, prior 4); nothing acknowledged, so no growth"
    );
}

/// Window scaling off does not limit the receive buffer, only the window field: Linux 6.18 with
/// `tcp_window_scaling = 0` keeps its 128 KiB `tcp_rmem[1]` (the seed 000 emulated hosts), so
/// the profile's buffer is accepted, and the SYN offers rounddown(131 072 / 2, 536) = 65 392
/// bytes, under the field's 65 535.
#[test]
fn linux6_without_window_scaling_keeps_its_buffer() {
    let cfg = TcpConfig {
        window_scaling: false,
        ..TcpConfig::linux_6_18()
    };
    cfg.validate().unwrap();
    let (c, s) = addrs();
    let mut conn = Connection::connect(Time::ZERO, c, s, cfg, ISS);
    let syn = Segment::decode(&conn.poll_transmit(Time::ZERO).unwrap()).unwrap();
    assert_eq!(syn.window, 65_392);
}

/// The profile's values, each the default of the kernel the emulated hosts run (the kernel
/// function behind each: docs/tcp-model.md, *Linux 6.18*).
#[test]
fn linux_6_18_profile_is_the_kernels_defaults() {
    use lasthop_tcp::{CwndLimited, DelayedAck, EarlyRetransmit, Kernel};
    let c = TcpConfig::from_toml("profile = \"linux-6.18\"").unwrap();
    assert_eq!(c, TcpConfig::linux_6_18());
    // tcp_sack, tcp_dsack, tcp_timestamps, tcp_window_scaling = 1; TCP_INIT_CWND 10.
    assert!(c.sack && c.dsack && c.timestamps && c.window_scaling);
    assert_eq!(c.initial_window, InitialWindow::Segments(10));
    // tcp_congestion_control "cubic" with hystart = 1 (the fidelity hosts choose it).
    assert_eq!(c.congestion_control, CongestionControl::Cubic);
    assert!(c.hystart);
    // tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP, no early retransmit), no FACK.
    assert!(c.rack && c.tlp && !c.fack);
    assert_eq!(c.early_retransmit, EarlyRetransmit::Off);
    // PRR (tcp_cwnd_reduction), tcp_frto = 2, undo; 6.x's tcp_is_cwnd_limited.
    assert!(c.prr && c.frto && c.undo);
    assert_eq!(c.cwnd_limited, CwndLimited::Linux618);
    // TCP_TIMEOUT_INIT 1 s, TCP_RTO_MIN 200 ms, TCP_RTO_MAX 120 s; CONFIG_HZ = 250.
    assert_eq!(
        (c.rto_initial, c.rto_min, c.rto_max),
        (
            Dur::from_secs(1),
            Dur::from_millis(200),
            Dur::from_secs(120)
        )
    );
    assert_eq!(c.hz, 250);
    // The adaptive delayed ACK with TCP_MAX_QUICKACKS 16; ECN off (tcp_ecn = 2 only answers).
    assert_eq!((c.delayed_ack, c.quickacks), (DelayedAck::Adaptive, 16));
    assert!(!c.ecn);
    // Pacing only when the algorithm asks for it (BBR): CUBIC leaves it to fq, and the
    // hosts' qdisc is pfifo_fast.
    assert_eq!(c.pacing, Pacing::WhenNeeded);
    assert_eq!(c.kernel, Some(Kernel::Linux618));
    // BBR is accepted with it (it can pace).
    TcpConfig::from_toml("profile = \"linux-6.18\"\ncongestion_control = \"bbr\"").unwrap();
}

/// `tcp_schedule_loss_probe` of 6.6+: PTO = usecs_to_jiffies(2·srtt + 2 ms), at HZ 250 in 4 ms
/// jiffies: 2 · 600 + 2 = 1202 ms, rounded up to 301 jiffies; the RTO (3 · 600 ms = 1.8 s after
/// the send) is later. Armed at 600 ms (jiffy 150), it expires at jiffy 451, which the timer
/// wheel keeps in its second level (8-jiffy buckets, 63 to 503 jiffies ahead): it fires at the
/// bucket's end, ((451 >> 3) + 1) << 3 = jiffy 456, 1824 ms. The probe sends new data, segment
/// 11.
#[test]
fn linux618_loss_probe_after_two_rtts_and_2ms_in_jiffies() {
    let mut c = client(TcpConfig::linux_6_18(), 20);
    assert_eq!(drain(&mut c, t(600)), (1..=10).collect::<Vec<_>>());
    assert_eq!(c.poll_timeout(), Some(t(1824)));
    c.handle_timeout(t(1824));
    assert_eq!(drain(&mut c, t(1824)), vec![11]);
}

/// RACK alone finds losses (`tcp_recovery = 1`): three SACKed segments make the reordering
/// window 0 (`tcp_rack_reo_wnd`: sacked_out ≥ reordering 3), so segment 1, sent with them 600
/// ms ago (RACK.rtt 600 ms), is lost at once: Recovery, ssthresh = 10 · 717 / 1024 = 7, and PRR
/// (5.x `tcp_cwnd_reduction`): in flight 10 − 3 − 1 = 6 is under ssthresh by 1, delivered 3:
/// sndcnt = min(1, max(3 − 0, 3)) = 1, cwnd 7; segment 1 goes again.
#[test]
fn linux618_rack_three_sacks_start_recovery_with_prr() {
    let mut c = client(TcpConfig::linux_6_18(), 20);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    c.handle_packet(t(1200), &ack(0, &[(2, 4)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!((c.cwnd(), c.ssthresh()), (7, 7));
    assert_eq!(drain(&mut c, t(1200)), vec![1]);
}

/// Two SACKed segments are not enough: the reordering window is min_rtt / 4 = 150 ms, so
/// segment 1 is due at 600 + 600 + 150 = 1350 ms and the reordering timer is armed for
/// usecs_to_jiffies(150 ms + 2 ms) = 38 jiffies (6.6+): from jiffy 300 (1200 ms) it expires at
/// 338, in the wheel's first level, and fires a jiffy after, at 339 (1356 ms). Meanwhile
/// (Disorder) the SACKed two leave the flight: 8 of cwnd 10, so segments 11 and 12 go. At 1356 ms
/// `tcp_rack_reo_timeout` marks segment 1 lost and starts Recovery with
/// `tcp_cwnd_reduction(sk, 1, 1, 0)`: in flight 12 − 2 − 1 = 9 is above ssthresh 7, so
/// sndcnt = ⌈7 · 1 / 10⌉ − 0 = 1, cwnd 10.
#[test]
fn linux618_rack_reordering_timer_in_jiffies() {
    let mut c = client(TcpConfig::linux_6_18(), 20);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    c.handle_packet(t(1200), &ack(0, &[(2, 3)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(1200)), vec![11, 12]);
    assert_eq!(c.poll_timeout(), Some(t(1356)));
    c.handle_timeout(t(1356));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!((c.cwnd(), c.ssthresh()), (10, 7));
    assert_eq!(drain(&mut c, t(1356)), vec![1]);
}

/// RACK.rtt as Linux keeps it: `tcp_rack_advance` runs for each newly delivered skb, the
/// SACKed ones first (`tcp_sacktag_write_queue`), then the cumulatively ACKed ones
/// (`tcp_clean_rtx_queue`), and each overwrites RACK.rtt, so the last one taken sets it (RFC
/// 8985 takes the newest sent). And `tcp_min_rtt` holds the SYN's 600 ms, below every data
/// RTT here. Segments 1-10 go at 600 ms; the ACK of 1 at 1400 (RTT 800) sends 11 and 12, the ACK
/// of 2 at 1500 sends 13 and 14. At 2200 an ACK takes 3-11 and SACKs 13: 13 (RTT 700) moves
/// RACK.xmit_ts to 1500, then 3-10 and 11 (sent 1400, RTT 800) leave RACK.rtt at 800. Segment
/// 12, sent with 11, is due at 1400 + 800 + reo_wnd, reo_wnd = min_rtt / 4 = 150 ms: the
/// reordering timer is armed for usecs_to_jiffies(150 + 2 ms) = 38 jiffies from jiffy 550
/// (2200 ms), expires 588 and fires at 589, 2356 ms. (With RACK.rtt from 13, 700 ms, and the
/// min RTT of the data, 700 ms, 12 would be due 75 ms after the ACK and the timer fire at
/// 2284 ms.) A 6.18 sender over seed 000's e0 link armed its first reordering timer 39
/// jiffies out on such an ACK (traced with `timer:timer_start`, docs/tcp-model.md).
#[test]
fn linux618_rack_rtt_is_the_last_segment_taken_and_min_rtt_the_syns() {
    let mut c = client(TcpConfig::linux_6_18(), 40);
    assert_eq!(drain(&mut c, t(600)), (1..=10).collect::<Vec<_>>());
    c.handle_packet(t(1400), &ack(1, &[]));
    assert_eq!(drain(&mut c, t(1400)), vec![11, 12]);
    c.handle_packet(t(1500), &ack(2, &[]));
    assert_eq!(drain(&mut c, t(1500)), vec![13, 14]);
    c.handle_packet(t(2200), &ack(11, &[(13, 13)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    let _ = drain(&mut c, t(2200));
    assert_eq!(c.poll_timeout(), Some(t(2356)));
    c.handle_timeout(t(2356));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(drain(&mut c, t(2356)), vec![12]);
}

/// A client that connects at `start`, loses its first SYN and sends it again on the timer; the
/// SYN-ACK (timestamps `ts` if any) arrives at `synack_at`. Returns the connection, established.
fn client_after_a_lost_syn(
    cfg: TcpConfig,
    start: Time,
    synack_at: Time,
    ts: Option<(u32, u32)>,
) -> Connection {
    let (c, s) = addrs();
    let mut conn = Connection::connect(start, c, s, cfg, ISS);
    let syn = Segment::decode(&conn.poll_transmit(start).unwrap()).unwrap();
    assert_eq!(syn.flags, SYN);
    let again = conn.poll_timeout().unwrap();
    conn.handle_timeout(again);
    let syn2 = Segment::decode(&conn.poll_transmit(again).unwrap()).unwrap();
    assert_eq!(syn2.flags, SYN);
    assert!(again < synack_at);
    conn.handle_packet(synack_at, &synack(ts));
    assert_eq!(conn.poll_event(), Some(Event::Connected));
    conn
}

/// RFC 6298 §5.7 as Linux 3.1+ does it (`tcp_init_metrics`, TCP_TIMEOUT_FALLBACK): a handshake
/// whose SYN was retransmitted gives no RTT sample (Karn), and the RTO then starts from 3 s,
/// not from the 1 s initial one. With timestamps the SYN-ACK's echo of the first SYN's TSval
/// is a sample (`tcp_ack_update_rtt`: TSecr on an ACK of the SYN): SYN at 100 ms (TSval 100),
/// SYN-ACK at 1700 ms echoing 100: RTT 1.6 s, RTO 3 · 1.6 = 4.8 s (srtt + 4 · srtt / 2).
#[test]
fn linux618_rto_after_a_retransmitted_syn_is_3s_or_the_timestamps_sample() {
    let cfg = TcpConfig::linux_6_18();
    let c = client_after_a_lost_syn(cfg.clone(), t(100), t(1700), None);
    assert_eq!((c.srtt(), c.rto()), (None, Dur::from_secs(3)));
    let c = client_after_a_lost_syn(cfg, t(100), t(1700), Some((5000, 100)));
    assert_eq!(c.srtt(), Some(Dur::from_millis(1600)));
    assert_eq!(c.rto(), Dur::from_millis(4800));
}

/// A Linux 6.18 server on a 1500-byte path accepting a 6.x peer's SYN (window 64 240, MSS 1460,
/// SACK, timestamps, window scale 10), and its SYN-ACK.
fn accept_1500_timestamped() -> (Connection, Segment) {
    let cfg = TcpConfig {
        mtu: Bytes(1500),
        ..TcpConfig::linux_6_18()
    };
    accept_timestamped(cfg, 64240, 1460, Some(10))
}

/// A server with `cfg` accepting the peer's SYN (window `syn_window`, MSS `mss`, SACK,
/// timestamps, window scale `wscale`), and the SYN-ACK it sends.
fn accept_timestamped(
    cfg: TcpConfig,
    syn_window: u16,
    mss: u16,
    wscale: Option<u8>,
) -> (Connection, Segment) {
    accept_syn(cfg, syn_window, mss, wscale, Some((100, 0)))
}

/// A server with `cfg` accepting the peer's SYN, with timestamps `ts` if any, and its SYN-ACK.
fn accept_syn(
    cfg: TcpConfig,
    syn_window: u16,
    mss: u16,
    wscale: Option<u8>,
    ts: Option<(u32, u32)>,
) -> (Connection, Segment) {
    let (c, s) = addrs();
    let syn = Segment {
        src: Some(c),
        dst: Some(s),
        seq: PEER_ISS,
        flags: SYN,
        window: syn_window,
        mss: Some(mss),
        sack_permitted: true,
        ts,
        wscale,
        ..Segment::default()
    };
    let mut srv = Connection::accept(Time::ZERO, &syn.encode(), cfg, ISS).unwrap();
    let sa = Segment::decode(&srv.poll_transmit(Time::ZERO).unwrap()).unwrap();
    (srv, sa)
}

/// The peer's segment `seq_off` bytes into its data (0 bytes: the handshake's ACK), carrying
/// `payload` bytes, offering `window` and echoing `tsecr`.
fn peer_data_ts(seq_off: u32, payload: u32, window: u16, tsecr: u32) -> Packet {
    peer_segment(seq_off, payload, window, Some((200, tsecr)))
}

/// The peer's segment `seq_off` bytes into its data, with timestamps `ts` if any.
fn peer_segment(seq_off: u32, payload: u32, window: u16, ts: Option<(u32, u32)>) -> Packet {
    let (c, s) = addrs();
    Segment {
        src: Some(c),
        dst: Some(s),
        seq: PEER_ISS + 1 + seq_off,
        ack: ISS + 1,
        flags: ACK,
        window,
        payload,
        ts,
        ..Segment::default()
    }
    .encode()
}

/// Linux 6.x's receive window (`conn/rcvbuf.rs`), as the emulated 6.18 receiver showed it on a
/// 1500-byte path: the SYN-ACK offers rounddown(131 072 / 2, 1448) = 65 160; the first data
/// segment sets the scaling ratio to 1448 · 256 / 2304 = 160, and the window then grows by
/// 2 · 1448 per segment to (131 072 − 2304) · 160/256 = 80 480 (six growths). Each growth
/// sets the quick-ACK count's low bit, so the first 6 segments leave it at 16 and 16 more
/// follow: 22 segments are ACKed one by one, then every second one.
#[test]
fn linux6_receiver_acks_22_segments_at_once_while_its_window_grows() {
    let (mut srv, sa) = accept_1500_timestamped();
    assert_eq!(sa.window, 65160);
    // Our shift is the smallest that fits tcp_rmem[2] (32 MiB): 10, the emulated hosts'.
    assert_eq!(sa.wscale, Some(10));
    let tsecr = sa.ts.unwrap().0;
    let peer = |seq_off: u32, payload: u32| peer_data_ts(seq_off, payload, 63, tsecr);
    // The handshake's ACK and the data come 100 ms after the SYN-ACK: the receiver's RTT is
    // 100 ms, longer than the 30 segments (1.2 ms apart at 10 Mbit/s), so the buffer itself
    // does not grow yet (`tcp_rcv_space_adjust` waits an RTT).
    srv.handle_packet(t(100), &peer(0, 0));
    assert_eq!(srv.poll_event(), Some(Event::Connected));
    let mut acked_at = Vec::new();
    let mut windows = Vec::new();
    for k in 0..30u32 {
        let now = Time(100_000_000 + u64::from(k) * 1_200_000);
        srv.handle_packet(now, &peer(k * 1448, 1448));
        while let Some(p) = srv.poll_transmit(now) {
            let a = Segment::decode(&p).unwrap();
            acked_at.push(k + 1);
            windows.push(u64::from(a.window) << 10);
        }
    }
    let mut want: Vec<u32> = (1..=22).collect();
    want.extend([24, 26, 28, 30]);
    assert_eq!(acked_at, want);
    // 65 160 + 2896 k and the plateau, rounded up to the 1024-byte scale unit: the windows the
    // emulated receiver offered, 67, 70, 73, 75, 78 and 79 (× 1024).
    assert_eq!(
        &windows[..7],
        &[68_608, 71_680, 74_752, 76_800, 79_872, 80_896, 80_896]
    );
}

/// Without window scaling on a 576-byte MTU (seed 000's emulated hosts) the SYN-ACK offers
/// rounddown(65 535, 524) = 65 500 with timestamps, but once established Linux 6.x clamps the
/// window to the buffer's full window less one advmss (`tcp_init_buffer_space`: 65 536 − 524 =
/// 65 012) and offers whole rcv_mss of it (`__tcp_select_window`): 124 · 524 = 64 976, as the
/// emulated 6.18 receivers do. Without timestamps: 65 392 (122 · 536), then 65 536 − 536 =
/// 65 000 rounded to 121 · 536 = 64 856.
#[test]
fn linux6_receiver_without_window_scaling_keeps_a_segment_of_its_buffer() {
    let cfg = TcpConfig {
        mtu: Bytes(576),
        window_scaling: false,
        ..TcpConfig::linux_6_18()
    };
    let (mut srv, sa) = accept_timestamped(cfg.clone(), 65535, 536, None);
    assert_eq!((sa.window, sa.wscale), (65_500, None));
    let tsecr = sa.ts.unwrap().0;
    srv.handle_packet(t(100), &peer_data_ts(0, 0, 65535, tsecr));
    let mut windows = Vec::new();
    for k in 0..4u32 {
        let now = t(172 + 72 * u64::from(k));
        srv.handle_packet(now, &peer_data_ts(k * 524, 524, 65535, tsecr));
        while let Some(p) = srv.poll_transmit(now) {
            windows.push(Segment::decode(&p).unwrap().window);
        }
    }
    // Quick ACKs, one per segment, sent before the application reads it: the first keeps the
    // SYN-ACK's right edge (65 500 − 524), the next find the free space less the unread
    // segment, (131 072 − 1280) / 2 = 64 896, and offer it in whole rcv_mss: 123 · 524 =
    // 64 452. The emulated 6.18 receivers (seed 000 2tcp1udp, 2026-11-29) offered exactly
    // 64 976, 64 452, 64 452, 64 452.
    assert_eq!(windows, vec![64_976, 64_452, 64_452, 64_452]);

    let cfg = TcpConfig {
        timestamps: false,
        ..cfg
    };
    let (mut srv, sa) = accept_syn(cfg, 65535, 536, None, None);
    assert_eq!(sa.window, 65_392);
    srv.handle_packet(t(100), &peer_segment(0, 0, 65535, None));
    srv.handle_packet(t(172), &peer_segment(0, 536, 65535, None));
    let ack = Segment::decode(&srv.poll_transmit(t(172)).unwrap()).unwrap();
    // 65 392 − 536 = 64 856 is also what is left of the SYN-ACK's offer.
    assert_eq!(ack.window, 64_856);
    srv.handle_packet(t(244), &peer_segment(536, 536, 65535, None));
    let ack = Segment::decode(&srv.poll_transmit(t(244)).unwrap()).unwrap();
    assert_eq!(
        ack.window, 64_856,
        "not 64 856 − 536: the clamp's 65 000 offers 121 segments"
    );
}

/// Eight full segments (524 bytes with timestamps on seed 000's 576-byte MTU) arrive 1 ms apart
/// at a Linux 6.18 receiver without quick ACKs or window growth, those numbered in `pushed`
/// (1-based) with PSH: the segments after which it ACKs at once.
fn acks_of_eight_full_segments(pushed: &[u32]) -> Vec<u32> {
    let cfg = TcpConfig {
        mtu: Bytes(576),
        quickacks: 0,
        rcvbuf_initial: None,
        ..TcpConfig::linux_6_18()
    };
    let (mut srv, sa) = accept_timestamped(cfg, 65535, 536, None);
    let tsecr = sa.ts.unwrap().0;
    srv.handle_packet(t(100), &peer_data_ts(0, 0, 65535, tsecr));
    assert_eq!(srv.poll_event(), Some(Event::Connected));
    let mut acked_at = Vec::new();
    for k in 1..=8u32 {
        let now = t(100 + u64::from(k));
        let mut seg = Segment::decode(&peer_data_ts((k - 1) * 524, 524, 65535, tsecr)).unwrap();
        if pushed.contains(&k) {
            seg.flags |= PSH;
        }
        srv.handle_packet(now, &seg.encode());
        while srv.poll_transmit(now).is_some() {
            acked_at.push(k);
        }
    }
    acked_at
}

/// With timestamps on a 576-byte MTU (seed 000's link) a full segment carries 536 − 12 = 524
/// bytes, and `tcp_initialize_rcv_mss` starts rcv_mss at min(advmss, mss_cache) = 524, so full
/// segments are not short "pushed" ones (`tcp_measure_rcv_mss`) and the receiver, with no
/// quick ACKs and a window that does not grow, ACKs every second one (`__tcp_ack_snd_check`:
/// more than one full segment unacknowledged). With rcv_mss at 536 every segment looked pushed
/// and was ACKed at once.
#[test]
fn linux6_receiver_with_timestamps_acks_every_second_full_segment() {
    assert_eq!(acks_of_eight_full_segments(&[]), vec![2, 4, 6, 8]);
}

/// Linux 6.6+ (`tcp_measure_rcv_mss`, "tcp: fix delayed ACKs for MSS boundary condition"): a
/// full-sized segment with PSH is ACKed as soon as the application has read it; the others as
/// before, every second one. With PSH on segments 3 and 6 of 8 the ACKs follow segments 2, 3,
/// 5, 6 and 8 (without PSH: 2, 4, 6, 8, the test above).
#[test]
fn linux6_receiver_acks_a_full_pushed_segment_at_once() {
    assert_eq!(acks_of_eight_full_segments(&[3, 6]), vec![2, 3, 5, 6, 8]);
}

/// `tcp_slow_start_after_idle` (RFC 2861, `tcp_cwnd_restart`): data written with nothing
/// outstanding after more than an RTO without sending halves cwnd once per RTO beyond the
/// first, down to the initial window; ssthresh keeps max(ssthresh, 3/4 cwnd).
#[test]
fn linux6_restarts_the_window_after_an_idle_rto() {
    let mut c = client(TcpConfig::linux_6_18(), 10);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    // All ten ACKed at 1200 ms: slow start to 20; twenty more go at once.
    c.handle_packet(t(1200), &ack(10, &[]));
    assert_eq!(c.cwnd(), 20);
    c.send(u64::from(20 * MSS));
    assert_eq!(drain(&mut c, t(1200)).len(), 20);
    c.handle_packet(t(1800), &ack(30, &[]));
    assert_eq!((c.cwnd(), c.unacked_bytes()), (40, 0));
    let rto = c.rto();
    // Written 1.5 RTOs after the last send (1200 ms): one halving, to 20.
    let now = t(1200) + Dur(rto.0 * 3 / 2);
    c.send(u64::from(40 * MSS));
    assert_eq!(drain(&mut c, now).len(), 20);
    assert_eq!(c.cwnd(), 20);
    // A write within an RTO of the last send restarts nothing.
    c.handle_packet(now + Dur::from_millis(600), &ack(50, &[]));
    let cwnd = c.cwnd();
    assert_eq!(drain(&mut c, now + Dur::from_millis(600)).len(), 20);
    assert_eq!(c.cwnd(), cwnd);
}

/// 3.5 idle RTOs halve 40 three times but not below the initial window: 40, 20, 10.
#[test]
fn linux6_idle_restart_stops_at_the_initial_window() {
    let mut c = client(TcpConfig::linux_6_18(), 10);
    drain(&mut c, t(600));
    c.handle_packet(t(1200), &ack(10, &[]));
    c.send(u64::from(20 * MSS));
    drain(&mut c, t(1200));
    c.handle_packet(t(1800), &ack(30, &[]));
    assert_eq!(c.cwnd(), 40);
    let now = t(1200) + Dur(c.rto().0 * 7 / 2);
    c.send(u64::from(40 * MSS));
    assert_eq!(drain(&mut c, now).len(), 10);
    assert_eq!(c.cwnd(), 10);
}

/// A Linux 6.18 receiver on the seeds' slow path (MSS 536, no timestamps or window scaling)
/// whose handshake completes 600 ms after its SYN-ACK: its RTO is 3 · 600 = 1800 ms
/// (`tcp_rtt_estimator`'s first sample: rttvar = 2 · RTT).
fn slow_path_receiver() -> Connection {
    let (c, s) = addrs();
    let cfg = TcpConfig {
        mtu: Bytes(576),
        timestamps: false,
        window_scaling: false,
        ..TcpConfig::linux_6_18()
    };
    let syn = Segment {
        src: Some(c),
        dst: Some(s),
        seq: PEER_ISS,
        flags: SYN,
        window: 65392,
        mss: Some(MSS as u16),
        sack_permitted: true,
        ..Segment::default()
    };
    let mut srv = Connection::accept(Time::ZERO, &syn.encode(), cfg, ISS).unwrap();
    srv.poll_transmit(Time::ZERO).unwrap();
    srv.handle_packet(t(600), &peer_data(0));
    assert_eq!(srv.poll_event(), Some(Event::Connected));
    assert_eq!(srv.rto(), Dur::from_millis(1800));
    srv
}

/// The peer's data segment `k` (1-based; 0: the handshake's ACK).
fn peer_data(k: u32) -> Packet {
    let (c, s) = addrs();
    Segment {
        src: Some(c),
        dst: Some(s),
        seq: PEER_ISS + 1 + k.saturating_sub(1) * MSS,
        ack: ISS + 1,
        flags: ACK,
        window: 65392,
        payload: if k == 0 { 0 } else { MSS },
        ..Segment::default()
    }
    .encode()
}

/// Segment `k` arrives at `now` (the delayed-ACK timers due before run first): the ACKs sent at
/// once, as the number of segments each acknowledges cumulatively.
fn arrive(srv: &mut Connection, k: u32, now: Time) -> Vec<u32> {
    while let Some(due) = srv.poll_timeout().filter(|&d| d <= now) {
        srv.handle_timeout(due);
        while srv.poll_transmit(due).is_some() {}
    }
    srv.handle_packet(now, &peer_data(k));
    let mut acks = Vec::new();
    while let Some(p) = srv.poll_transmit(now) {
        let a = Segment::decode(&p).unwrap();
        acks.push(a.ack.wrapping_sub(PEER_ISS + 1) / MSS);
    }
    acks
}

/// `tcp_event_data_recv`: in-order data after a gap longer than the receiver's RTO (here
/// 1800 ms) re-enters quick-ACK mode ("Too long gap. Apparently sender failed to restart
/// window, so that we send ACKs quickly": `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`), and
/// `tcp_dec_quickack_mode` spends one quick ACK per ACK sent. This is why Linux 6.18 ACKs every
/// segment for a while after each stall of seed 000's r6 link (the 2.3.99–3.16 profiles keep
/// the older model without the gap rule).
#[test]
fn linux618_a_gap_longer_than_the_rto_restarts_quick_acks() {
    let mut srv = slow_path_receiver();
    let mut at_once = Vec::new();
    let feed = |srv: &mut Connection, k: u32, ms: u64, at_once: &mut Vec<u32>| {
        if !arrive(srv, k, t(ms)).is_empty() {
            at_once.push(k);
        }
    };
    // Segments 1..=18 10 ms apart from 610 ms: the first 16 are the first data's quick ACKs
    // (rcv_wnd / (2 · 536) ≥ 16, capped at TCP_MAX_QUICKACKS); then one ACK per two segments
    // (18: two full segments unacknowledged).
    for k in 1..=18 {
        feed(&mut srv, k, 600 + 10 * u64::from(k), &mut at_once);
    }
    let mut want: Vec<u32> = (1..=16).collect();
    want.push(18);
    assert_eq!(at_once, want);
    // A gap of 2000 ms > 1800 ms: segment 19 (at 2780 ms) re-enters quick-ACK mode, 16 quick
    // ACKs for 19..=34, then every second segment again (36, 38, 40).
    at_once.clear();
    for k in 19..=40 {
        feed(&mut srv, k, 2780 + 10 * u64::from(k - 19), &mut at_once);
    }
    let mut want: Vec<u32> = (19..=34).collect();
    want.extend([36, 38, 40]);
    assert_eq!(at_once, want);
    // A gap of 1500 ms < 1800 ms (from 2990 ms): segment 41 waits for the delayed-ACK timer.
    at_once.clear();
    feed(&mut srv, 41, 4490, &mut at_once);
    assert!(at_once.is_empty());
}

/// `tcp_dec_quickack_mode` (from `tcp_event_ack_sent`): every ACK sent while one was scheduled
/// spends a quick ACK, whatever sent it — the duplicate ACKs for out-of-order data and the ACK
/// of a filled hole too, not only the ACKs sent because of quick-ACK mode.
#[test]
fn linux618_every_ack_sent_spends_a_quick_ack() {
    let mut srv = slow_path_receiver();
    let mut at_once = Vec::new();
    let mut k_at = 0u64;
    let mut feed = |srv: &mut Connection, k: u32, at_once: &mut Vec<(u32, Vec<u32>)>| {
        k_at += 10;
        let acks = arrive(srv, k, t(600 + k_at));
        if !acks.is_empty() {
            at_once.push((k, acks));
        }
    };
    // 16 quick ACKs from the first data. Segments 1..=3 in order: 3 spent (13 left).
    // Segments 5..=14 out of order: 10 duplicate ACKs (of 3), 10 spent (3 left).
    // Segment 4 fills the hole: ACKed at once (ICSK_ACK_NOW) with 14, 1 spent (2 left).
    // Segments 15 and 16: the last 2 quick ACKs. 17 waits, 18 is the second full segment.
    for k in (1..=3).chain(5..=14).chain([4]).chain(15..=18) {
        feed(&mut srv, k, &mut at_once);
    }
    let mut want: Vec<(u32, Vec<u32>)> = (1..=3).map(|k| (k, vec![k])).collect();
    want.extend((5..=14).map(|k| (k, vec![3])));
    want.extend([
        (4, vec![14]),
        (15, vec![15]),
        (16, vec![16]),
        (18, vec![18]),
    ]);
    assert_eq!(at_once, want);
}

/// The windows the receiver offers for `segs` in-order full segments (1448 bytes) arriving
/// 1.2 ms apart from `from` ms, `first` segments into the data, echoing `tsecr` if any.
fn windows_for(
    srv: &mut Connection,
    from: u64,
    first: u32,
    segs: u32,
    tsecr: Option<u32>,
) -> Vec<u64> {
    let mut windows = Vec::new();
    for k in 0..segs {
        let now = Time(from * 1_000_000 + u64::from(k) * 1_200_000);
        let ts = tsecr.map(|e| (300, e));
        srv.handle_packet(now, &peer_segment((first + k) * 1448, 1448, 63, ts));
        while let Some(p) = srv.poll_transmit(now) {
            windows.push(u64::from(Segment::decode(&p).unwrap().window) << 10);
        }
    }
    windows
}

/// Linux takes the receiver's timestamp RTT sample (`tcp_rcv_rtt_measure_ts`) for every data
/// segment, out-of-order ones too, before `tcp_data_queue` (checked on the emulated 6.18
/// receiver with the `tcp:tcp_rcvbuf_grow` tracepoint, docs/sim-vs-emu.md). 1500-byte path:
/// ten segments in order from 100 ms echo the SYN-ACK's TSval 0, so the receiver's RTT is
/// 100 ms and its window reaches the plateau of (131 072 − 2304) · 160/256 = 80 480 (80 896
/// offered, aligned up to 1024). Segment 10 is lost; 11–30 arrive from 120 ms echoing the
/// receiver's TSval 110: a 10 ms sample, which the estimate latches (`tcp_rcv_rtt_update`
/// keeps a smaller sample at once). Segment 10 fills the hole at 150 ms echoing TSval 0 again,
/// new against the last echo (110): a 150 ms sample, smoothed to 10 · 7/8 + 150/8 = 27.5 ms.
/// 50 ms have passed since the buffer's count began at 100 ms, more than that RTT: the 31
/// segments read (44 888 B) against the 14 480 B of the first RTT grow the buffer, and the
/// next segments grow the window past the plateau by 2 · 1448 each (80 480 + 2896 = 83 376 →
/// 83 968, 86 272 → 87 040, 89 168 → 90 112), each ACKed at once. Without the out-of-order
/// samples the RTT stays at 100 ms at the filled hole (its echo equals the in-order segments'
/// last), the buffer grows only when segment 31 brings a new echo, after that segment's window
/// was computed, and 31 waits for the delayed ACK.
#[test]
fn linux6_receiver_takes_rtt_samples_from_out_of_order_segments() {
    let (mut srv, sa) = accept_1500_timestamped();
    let tsecr0 = sa.ts.unwrap().0;
    assert_eq!(tsecr0, 0);
    srv.handle_packet(t(100), &peer_data_ts(0, 0, 63, tsecr0));
    let before = windows_for(&mut srv, 100, 0, 10, Some(tsecr0));
    assert_eq!(*before.last().unwrap(), 80_896);
    // Segments 11-30, out of order, echoing the receiver's clock at 110 ms.
    windows_for(&mut srv, 120, 11, 20, Some(110));
    let hole = windows_for(&mut srv, 150, 10, 1, Some(tsecr0));
    assert_eq!(hole, vec![80_896]);
    let after = windows_for(&mut srv, 160, 31, 3, Some(150));
    assert_eq!(after, vec![83_968, 87_040, 90_112]);
}

/// Linux's window-based receiver RTT sample (`tcp_rcv_rtt_measure`, the only one without
/// timestamps) runs in `tcp_event_data_recv`, before `tcp_ofo_queue` moves what a hole's
/// filling completes: a filled hole does not count the out-of-order data toward the window
/// the sample waits for. 1500-byte path without timestamps: the SYN-ACK offers 64 240; the
/// first segment at 100 ms starts the sample, which ends when rcv_nxt passes 1460 + 64 240 =
/// 65 700. Segment 6 is lost and 7–48 are held; when 6 arrives at 150 ms, rcv_nxt at its end
/// is 10 220, so no sample (moving the held data first would reach 71 540 and take a 50 ms
/// sample, which would grow the buffer at once). The window had reached its plateau,
/// (131 072 − 2304) · 162/256 = 81 486 (a 1460-byte payload in a 2304-byte buffer: ratio 162),
/// offered as 81 920; without an RTT the buffer cannot grow until the next segment takes the
/// sample.
#[test]
fn linux6_receiver_window_rtt_sample_ignores_the_data_a_filled_hole_releases() {
    let cfg = TcpConfig {
        mtu: Bytes(1500),
        timestamps: false,
        ..TcpConfig::linux_6_18()
    };
    let (mut srv, sa) = accept_syn(cfg, 64240, 1460, Some(10), None);
    assert_eq!(sa.window, 64240);
    srv.handle_packet(t(100), &peer_segment(0, 0, 63, None));
    let send = |srv: &mut Connection, at: Time, k: u32| {
        srv.handle_packet(at, &peer_segment(k * 1460, 1460, 63, None));
        let mut w = Vec::new();
        while let Some(p) = srv.poll_transmit(at) {
            w.push(u64::from(Segment::decode(&p).unwrap().window) << 10);
        }
        w
    };
    for k in 0..6 {
        send(&mut srv, Time(100_000_000 + u64::from(k) * 1_200_000), k);
    }
    for k in 7..49 {
        send(&mut srv, Time(110_000_000 + u64::from(k) * 1_200_000), k);
    }
    // Its ACK goes at once and finds the 43 segments it completed unread: (131 072 − 43 ·
    // 2304) · 162/256 = 20 250, aligned up to 20 480 (above what is left of the last right
    // edge, 81 920 + 8761 − 71 541 = 19 140).
    assert_eq!(send(&mut srv, t(150), 6), vec![20_480]);
    let mut after = Vec::new();
    for k in 49..52 {
        after.extend(send(
            &mut srv,
            Time(160_000_000 + u64::from(k) * 1_200_000),
            k,
        ));
    }
    // The next segment (49, at 218.8 ms) takes the sample: 118.8 ms, the buffer's first
    // RTT has passed, and it grows after that segment's window growth was tried, so 49 waits
    // for the delayed ACK; 50 and 51 then grow the window by 2920 each and are ACKed at once:
    // 81 486 + 2920 = 84 406 → 84 992, 87 326 → 88 064. Had the filled hole taken its 50 ms
    // sample, the buffer would have grown at 150 ms and 49 would be ACKed at once at 84 992.
    assert_eq!(after, vec![84_992, 88_064]);
}
