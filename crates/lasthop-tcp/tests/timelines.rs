//! Segment timelines worked out by hand on seed 000's e0 link (64 kbit/s, 300 ms one way,
//! 576-byte MTU): a 576-byte segment takes 72 ms to serialize, a 40-byte ACK 5 ms, a SYN with
//! MSS and SACK-permitted (48 bytes) 6 ms, an ACK with one SACK block (52 bytes) 6.5 ms and with
//! two (60 bytes) 7.5 ms. The client connects at 0; the server writes when it is established.
//!
//! Common prefix, baseline configuration (IW 2, delayed ACK 200 ms, SACK, limited transmit):
//! ```text
//!     0      C SYN          -> S 306
//!   306      S SYN-ACK      -> C 612    (client RTT 612 ms -> RTO 1836 ms)
//!   612      C ACK          -> S 917    (server RTT 611 ms -> RTO 1833 ms)
//!   917/989  S seg1, seg2   -> C 1289, 1361
//!  1361      C ACK 2 (second full segment: at once) -> S 1666; cwnd 2 -> 3
//!  1666..    S seg3, seg4, seg5 (1666, 1738, 1810) -> C 2038, 2110, 2182
//!  2110      C ACK 4 -> S 2415; cwnd 4; seg6, 7, 8 at 2415, 2487, 2559 -> C 2787, 2859, 2931
//!  2182+200  C ACK 5 (delayed) at 2382 -> S 2687; cwnd 5; seg9, 10 at 2687, 2759 -> C 3059, 3131
//! ```

mod common;

use common::*;
use lasthop_core::Dur;
use lasthop_tcp::wire::{FIN, SYN};
use lasthop_tcp::{CaState, Event, TcpConfig};

const MSS: u64 = 536;

fn base() -> TcpConfig {
    TcpConfig::default()
}

fn no_sack() -> TcpConfig {
    TcpConfig {
        sack: false,
        ..TcpConfig::default()
    }
}

fn check(sim: &Sim, ok: bool, what: &str) {
    assert!(ok, "{what}\n{}", sim.dump());
}

#[test]
fn handshake_and_first_data_segments() {
    let mut sim = Sim::new(base(), base(), 10 * MSS);
    sim.run(ms(1700.0));
    let syn = &sim.log[0];
    assert_eq!(
        (syn.start, syn.arrive, syn.flags, syn.wire_len),
        (ms(0.0), ms(306.0), SYN, 48)
    );
    let synack = &sim.log[1];
    assert_eq!(
        (synack.start, synack.arrive, synack.wire_len),
        (ms(306.0), ms(612.0), 48)
    );
    assert_eq!(sim.client_events[0], (ms(612.0), Event::Connected));
    assert_eq!(sim.server_events[0], (ms(917.0), Event::Connected));
    assert_eq!(sim.client.mss(), 536);
    // The first RTT sample of each side comes from the handshake: RTO = 3·RTT.
    assert_eq!(sim.client.rto(), Dur::from_millis(1836));
    let d = sim.data(Dir::Down);
    check(
        &sim,
        d[..5]
            == [
                (ms(917.0), 1, 1),
                (ms(989.0), 2, 1),
                (ms(1666.0), 3, 1),
                (ms(1738.0), 4, 1),
                (ms(1810.0), 5, 1),
            ],
        "IW 2, then 3 segments after the first ACK",
    );
    let ack2 = sim
        .log
        .iter()
        .find(|t| t.dir == Dir::Up && t.ack_no == 2)
        .unwrap();
    assert_eq!((ack2.start, ack2.wire_len), (ms(1361.0), 40));
    // Nothing was acked on the delayed-ACK timer at 1489: the second segment came first.
    assert!(!sim.log.iter().any(|t| t.dir == Dir::Up && t.ack_no == 1));
}

#[test]
fn slow_start_with_delayed_acks() {
    let mut sim = Sim::new(base(), base(), 40 * MSS);
    sim.run(ms(2800.0));
    let starts: Vec<_> = (6..=10).map(|n| sim.sent(n)).collect();
    check(
        &sim,
        starts == [ms(2415.0), ms(2487.0), ms(2559.0), ms(2687.0), ms(2759.0)],
        "cwnd 4 after ACK 4, 5 after the delayed ACK 5",
    );
    let ack5 = sim
        .log
        .iter()
        .find(|t| t.dir == Dir::Up && t.ack_no == 5)
        .unwrap();
    assert_eq!(ack5.start, ms(2382.0), "delayed ACK 200 ms after segment 5");
    assert_eq!(sim.srv().cwnd(), 5);
}

#[test]
fn delayed_ack_fires_after_200ms() {
    // One segment only: the client acknowledges it when the 200 ms timer expires.
    let mut sim = Sim::new(base(), base(), MSS);
    sim.run(ms(3000.0));
    let ack = sim
        .log
        .iter()
        .find(|t| t.dir == Dir::Up && t.ack_no == 1)
        .unwrap();
    assert_eq!((ack.start, ack.arrive), (ms(1489.0), ms(1794.0)));
    assert_eq!(sim.client_events[1], (ms(1289.0), Event::Delivered(536)));
}

#[test]
fn nagle_holds_the_small_tail_until_the_ack() {
    // 600 bytes: 536 + 64. Nagle keeps the 64-byte segment until segment 1 is acknowledged
    // (delayed ACK at 1489, arriving 1794).
    let mut sim = Sim::new(base(), base(), 600);
    sim.run(ms(3000.0));
    let d = sim.data(Dir::Down);
    assert_eq!(
        d,
        vec![(ms(917.0), 1, 1), (ms(1794.0), 2, 1)],
        "{}",
        sim.dump()
    );
    // Without Nagle the tail follows at once (989, 104 bytes = 13 ms, arriving 1302), and the
    // client acknowledges both at 1302: 600 unacknowledged bytes exceed one MSS.
    let cfg = TcpConfig {
        nagle: false,
        ..base()
    };
    let mut sim = Sim::new(base(), cfg, 600);
    sim.run(ms(3000.0));
    let d = sim.data(Dir::Down);
    assert_eq!(d, vec![(ms(917.0), 1, 1), (ms(989.0), 2, 1)]);
    let ack = sim
        .log
        .iter()
        .find(|t| t.dir == Dir::Up && t.ack_no == 1)
        .unwrap();
    assert_eq!(ack.start, ms(1302.0), "{}", sim.dump());
}

#[test]
fn lost_syn_is_retransmitted_after_3s_then_6s() {
    let mut sim = Sim::new(base(), base(), MSS);
    sim.drop_syn = vec![1, 2];
    sim.run(ms(20000.0));
    let syns: Vec<_> = sim
        .log
        .iter()
        .filter(|t| t.dir == Dir::Up && t.flags & SYN != 0)
        .map(|t| t.start)
        .collect();
    assert_eq!(syns, vec![ms(0.0), ms(3000.0), ms(9000.0)]);
    assert_eq!(sim.client_events[0], (ms(9612.0), Event::Connected));
    assert_eq!(sim.client.stats().syn_retransmits, 2);
    // No RTT sample from a retransmitted SYN (Karn): the RTO is back at 3 s, and cwnd is 1.
    assert_eq!(sim.client.rto(), Dur::from_secs(3));
    assert_eq!(sim.client.srtt(), None);
    assert_eq!(sim.client.cwnd(), 1);
}

#[test]
fn fast_retransmit_on_third_dupack_with_limited_transmit() {
    // Segment 6 is lost. Segments 7, 8, 9, 10 each draw an immediate duplicate ACK with one SACK
    // block (6.5 ms): sent 2859, 2931, 3059, 3131, arriving 3165.5, 3237.5, 3365.5, 3437.5.
    // Dupacks 1 and 2: limited transmit sends segments 11 and 12. Dupack 3: fast retransmit of 6
    // at 3365.5; ssthresh = (7 outstanding - 2 limited-transmit) / 2 -> 2 = cwnd.
    // Then in_flight = 7 - 3 SACKed - 1 lost + 1 retransmitted = 4 > cwnd: nothing more until
    // the SACKs of 11 (3844) and 12 (3916) bring in_flight to 2 and 1: segment 13 at 3916.
    // The retransmission reaches the client at 3737.5, which acknowledges up to 12 at once
    // (40 bytes) -> 4042.5: recovery ends with cwnd = ssthresh = 2 and segment 14 goes.
    let mut sim = Sim::new(base(), base(), 40 * MSS);
    sim.drops = vec![(Dir::Down, 6, 1)];
    sim.run(ms(4050.0));
    let dupacks: Vec<_> = sim
        .log
        .iter()
        .filter(|t| t.dir == Dir::Up && t.ack_no == 5 && !t.sacks.is_empty())
        .map(|t| (t.start, t.wire_len))
        .collect();
    check(
        &sim,
        dupacks[..4]
            == [
                (ms(2859.0), 52),
                (ms(2931.0), 52),
                (ms(3059.0), 52),
                (ms(3131.0), 52),
            ],
        "dupacks",
    );
    check(&sim, sim.sent(11) == ms(3165.5), "limited transmit 1");
    check(&sim, sim.sent(12) == ms(3237.5), "limited transmit 2");
    check(
        &sim,
        sim.retransmissions(Dir::Down) == [(ms(3365.5), 6)],
        "one fast retransmit at the third dupack",
    );
    check(
        &sim,
        sim.sent(13) == ms(3916.0),
        "new data once in_flight < cwnd",
    );
    check(&sim, sim.sent(14) == ms(4042.5), "after the full ACK");
    let s = sim.srv();
    assert_eq!(
        (s.cwnd(), s.ssthresh(), s.ca_state()),
        (2, 2, CaState::Open)
    );
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.stats().rtos, 0);
}

#[test]
fn newreno_partial_ack_retransmits_the_next_hole() {
    // No SACK: the SYNs are 44 bytes (5.5 ms), so the handshake ends 1 ms earlier (server
    // established at 916, RTT 610.5 ms) and every server time below is the SACK timeline's
    // minus 1 ms; dupacks are 40 bytes. Segments 6 and 8 are lost. Dupacks from 7, 9, 10 arrive
    // at 3163, 3363, 3435: limited transmit sends 11 (3163) and 12 (3363); the third dupack
    // retransmits 6 at 3435 (ssthresh = cwnd = 2, 3 dupacks counted as "sacked"). Dupacks from
    // 11 and 12 (3840, 4040) do not open the window (in_flight 3, 2). The retransmitted 6
    // reaches the client at 3807 and draws an immediate ACK of 7 (a hole is still open) -> 4112:
    // a partial ACK. It acknowledges 2 segments, so 1 dupack is forgotten; segment 8 is marked
    // lost and retransmitted at 4112 and one new segment (13) follows at 4184 (Linux's fix:
    // deflate by the ACKed amount and add one). 8 reaches the client at 4484 -> ACK 12 -> 4789:
    // full ACK, recovery ends with cwnd = ssthresh = 2.
    let mut sim = Sim::new(no_sack(), no_sack(), 40 * MSS);
    sim.drops = vec![(Dir::Down, 6, 1), (Dir::Down, 8, 1)];
    sim.run(ms(4800.0));
    check(&sim, sim.sent(11) == ms(3163.0), "limited transmit 1");
    check(&sim, sim.sent(12) == ms(3363.0), "limited transmit 2");
    check(
        &sim,
        sim.retransmissions(Dir::Down) == [(ms(3435.0), 6), (ms(4112.0), 8)],
        "NewReno retransmissions",
    );
    check(
        &sim,
        sim.sent(13) == ms(4184.0),
        "one new segment with the partial ACK",
    );
    check(&sim, sim.sent(14) == ms(4789.0), "after the full ACK");
    let s = sim.srv();
    assert_eq!(
        (s.cwnd(), s.ssthresh(), s.ca_state()),
        (2, 2, CaState::Open)
    );
    assert_eq!((s.stats().fast_retransmits, s.stats().rtos), (1, 0));
}

#[test]
fn sack_recovery_retransmits_only_the_holes() {
    // SACK; segments 6 and 8 are lost. Dupacks: from 7 with [7] (52 B), from 9 with [9],[7]
    // (60 B, most recent block first), from 10 with [9-10],[7]; arriving 3165.5, 3366.5,
    // 3438.5. Limited transmit: 11 at 3165.5, 12 at 3366.5. Third dupack: retransmit 6 at
    // 3438.5; 8 has only 2 SACKed segments above it, so it is not yet lost (RFC 3517).
    // The SACK of 11 (3845) makes 8 lost but in_flight = 7 - 4 - 2 + 1 = 2 = cwnd; the SACK of
    // 12 (4046) lets the retransmission of 8 go at 4046. The partial ACK of 7 (4117) lets new
    // segment 13 go, queued behind the retransmission of 8 (4046-4118). 7, 9, 10, 11, 12 are
    // never retransmitted.
    let mut sim = Sim::new(base(), base(), 40 * MSS);
    sim.drops = vec![(Dir::Down, 6, 1), (Dir::Down, 8, 1)];
    sim.run(ms(4800.0));
    let dupack9 = sim
        .log
        .iter()
        .find(|t| t.dir == Dir::Up && t.start == ms(3059.0))
        .unwrap();
    assert_eq!(
        dupack9.sacks,
        vec![(9, 9), (7, 7)],
        "most recent block first"
    );
    assert_eq!(dupack9.wire_len, 60);
    check(&sim, sim.sent(11) == ms(3165.5), "limited transmit 1");
    check(&sim, sim.sent(12) == ms(3366.5), "limited transmit 2");
    check(
        &sim,
        sim.retransmissions(Dir::Down) == [(ms(3438.5), 6), (ms(4046.0), 8)],
        "only the holes",
    );
    check(
        &sim,
        sim.sent(13) == ms(4118.0),
        "new data on the partial ACK",
    );
    check(&sim, sim.sent(14) == ms(4723.0), "after the full ACK");
    let s = sim.srv();
    assert_eq!(
        (s.cwnd(), s.ssthresh(), s.ca_state()),
        (2, 2, CaState::Open)
    );
}

#[test]
fn rto_doubles_and_ssthresh_is_kept() {
    // Two segments; segment 1 and its first retransmission are lost. The client SACKs 2 at
    // 1361 (one dupack, no new data to send). RTO = 1833 ms from the handshake, armed at 917:
    // expiry at 2750, retransmission, RTO doubled to 3666 ms: second expiry at 6416, RTO
    // 7332 ms. The second retransmission reaches the client at 6788, ACK -> 7093; no RTT sample
    // (Karn), so the backed-off RTO stays.
    let mut sim = Sim::new(base(), base(), 2 * MSS);
    sim.drops = vec![(Dir::Down, 1, 1), (Dir::Down, 1, 2)];
    sim.run(ms(7100.0));
    check(
        &sim,
        sim.retransmissions(Dir::Down) == [(ms(2750.0), 1), (ms(6416.0), 1)],
        "RTO at 2750, then 3666 ms later",
    );
    let s = sim.srv();
    assert_eq!(s.stats().rtos, 2);
    assert_eq!(s.ssthresh(), 2);
    assert_eq!(s.rto(), Dur::from_millis(7332));
    assert_eq!(s.unacked_bytes(), 0);
    assert_eq!(s.ca_state(), CaState::Open);
    let trace = sim.server.as_mut().unwrap().drain_trace();
    // The trace also records scoreboard changes; keep the changes of cwnd and RTO.
    let mut loss: Vec<_> = trace
        .iter()
        .filter(|r| r.ca_state == CaState::Loss)
        .map(|r| (r.time, r.cwnd, r.rto))
        .collect();
    loss.dedup_by_key(|r| (r.1, r.2));
    assert_eq!(
        loss[..2],
        [
            (ms(2750.0), 1, Dur::from_millis(3666)),
            (ms(6416.0), 1, Dur::from_millis(7332))
        ]
    );
}

#[test]
fn go_back_n_after_rto_without_sack() {
    // IW 3, no SACK (44-byte SYNs: server established at 916 with RTT 610.5 ms, RTO
    // 1831.5 ms); segments 1 and 2 are lost, 3 arrives (1432) and draws a dupack. RTO at
    // 916 + 1831.5 = 2747.5: cwnd 1, ssthresh 2, all three marked lost, 1 retransmitted. The
    // client ACKs 1 at once (3119.5, a hole remains) -> 3424.5: cwnd 2 (slow start), so 2 and 3
    // are retransmitted at 3424.5 and 3496.5, although the client holds 3 (go-back-N). 2 fills
    // the hole (ACK 3 at 3796.5 -> 4101.5, Loss ends, cwnd 3); the duplicate 3 draws a
    // duplicate ACK at 3868.5.
    let cfg = TcpConfig {
        sack: false,
        initial_window: lasthop_tcp::InitialWindow::Segments(3),
        ..TcpConfig::default()
    };
    let mut sim = Sim::new(no_sack(), cfg, 3 * MSS);
    sim.drops = vec![(Dir::Down, 1, 1), (Dir::Down, 2, 1)];
    sim.run(ms(5000.0));
    check(
        &sim,
        sim.retransmissions(Dir::Down) == [(ms(2747.5), 1), (ms(3424.5), 2), (ms(3496.5), 3)],
        "go-back-N",
    );
    let dup = sim
        .log
        .iter()
        .filter(|t| t.dir == Dir::Up && t.ack_no == 3)
        .map(|t| t.start)
        .collect::<Vec<_>>();
    assert_eq!(dup, vec![ms(3796.5), ms(3868.5)]);
    assert_eq!(sim.client.stats().dup_data_pkts_rcvd, 1);
    let s = sim.srv();
    assert_eq!(
        (s.cwnd(), s.ssthresh(), s.ca_state()),
        (3, 2, CaState::Open)
    );
    assert_eq!((s.stats().rtos, s.stats().retransmits), (1, 3));
    assert_eq!(
        s.rto(),
        Dur::from_micros(3_663_000),
        "backed off, no sample (Karn)"
    );
}

#[test]
fn http10_close_both_ways() {
    // The server sends one segment with its FIN (piggybacked: close() came with the write);
    // the client acknowledges data and FIN at once (FIN is ACKed immediately) and, closing on
    // the FIN, sends its own FIN with that ACK.
    let mut sim = Sim::new(base(), base(), 300);
    sim.server_closes = true;
    sim.client_closes_on_fin = true;
    sim.run(ms(100_000.0));
    let d = &sim.log[3];
    assert_eq!((d.start, d.flags & FIN, d.payload), (ms(917.0), FIN, 300));
    // 340-byte segment: 42.5 ms -> client at 1259.5; FIN|ACK back, 40 bytes.
    let fin = &sim.log[4];
    assert_eq!(
        (fin.dir, fin.start, fin.flags & FIN),
        (Dir::Up, ms(1259.5), FIN)
    );
    assert_eq!(sim.log.len(), 6, "{}", sim.dump());
    assert_eq!(sim.log[5].start, ms(1564.5));
    assert!(sim.client_events.contains(&(ms(1259.5), Event::PeerFin)));
    assert!(sim.client_events.contains(&(ms(1869.5), Event::Closed)));
    assert!(sim.server_events.contains(&(ms(1564.5), Event::Closed)));
    assert!(sim.client.is_closed());
    // The server leaves TIME-WAIT 60 s later.
    assert!(sim.srv().is_closed());
}

#[test]
fn timestamps_handshake_and_rtt_from_the_echo() {
    // With timestamps, SYN and SYN-ACK are 56 bytes (7 ms), ACKs 52 bytes (6.5 ms) and the MSS
    // is 524 (576-byte packets). SYN 0 -> 307, SYN-ACK 307 -> 614, ACK 614 -> 920.5: server RTT
    // 613.5 ms. Segments 1, 2 at 920.5, 992.5 -> client 1292.5, 1364.5; ACK at 1364.5 -> 1671.
    // Its echo is the TSval of segment 2 (920 ms clock): sample 1671 - 920 = 751 ms, so
    // srtt = 613.5 + (751 - 613.5)/8 = 630.6875 ms.
    let cfg = TcpConfig {
        timestamps: true,
        ..base()
    };
    let mut sim = Sim::new(cfg.clone(), cfg, 10 * 524);
    sim.run(ms(1671.0));
    assert_eq!((sim.log[0].wire_len, sim.log[0].arrive), (56, ms(307.0)));
    assert_eq!((sim.log[2].wire_len, sim.log[2].arrive), (52, ms(920.5)));
    assert_eq!(sim.srv().mss(), 524);
    let d = sim.data(Dir::Down);
    assert_eq!(d[..2], [(ms(920.5), 1, 1), (ms(992.5), 2, 1)]);
    assert!(sim
        .log
        .iter()
        .filter(|t| t.payload > 0)
        .all(|t| t.wire_len == 576));
    assert_eq!(sim.srv().srtt(), Some(Dur(630_687_500)));
}

#[test]
fn counters_and_trace_of_a_fast_retransmit() {
    let mut sim = Sim::new(base(), base(), 40 * MSS);
    sim.drops = vec![(Dir::Down, 6, 1)];
    sim.run(ms(4050.0));
    let s = sim.srv();
    assert_eq!(s.stats().dupacks_rcvd, 6, "from segments 7..12");
    assert_eq!(s.stats().retransmits, 1);
    assert_eq!(sim.client.stats().ooo_pkts_rcvd, 6);
    assert_eq!(sim.client.stats().sack_blocks_sent, 6);
    let trace = sim.server.as_mut().unwrap().drain_trace();
    let states: Vec<_> = trace.iter().map(|r| (r.time, r.ca_state, r.cwnd)).collect();
    assert!(
        states.contains(&(ms(3165.5), CaState::Disorder, 5)),
        "{states:?}"
    );
    assert!(
        states.contains(&(ms(3365.5), CaState::Recovery, 2)),
        "{states:?}"
    );
    assert!(
        states.contains(&(ms(4042.5), CaState::Open, 2)),
        "{states:?}"
    );
}

#[test]
fn rate_halving_spreads_the_reduction() {
    // As fast_retransmit_on_third_dupack_with_limited_transmit, with Linux rate halving: at the
    // third dupack (3365.5) ssthresh = 2 but cwnd stays 5, then tcp_cwnd_down: no decrement on
    // the first ACK, cwnd = min(5, in_flight 3 + 1) = 4, and 6 is retransmitted. Dupack from 10
    // (3437.5): cwnd 4 - 1 = 3 = in_flight: nothing. SACK of 11 (3844): in_flight 2 < cwnd 3:
    // segment 13 goes, 72 ms earlier than without rate halving. SACK of 12 (3916): cwnd 2.
    // The full ACK (4042.5) ends recovery with cwnd = min(2, ssthresh 2).
    let cfg = TcpConfig {
        rate_halving: true,
        ..base()
    };
    let mut sim = Sim::new(base(), cfg, 40 * MSS);
    sim.drops = vec![(Dir::Down, 6, 1)];
    sim.run(ms(4050.0));
    check(
        &sim,
        sim.retransmissions(Dir::Down) == [(ms(3365.5), 6)],
        "fast retransmit",
    );
    check(
        &sim,
        sim.sent(13) == ms(3844.0),
        "rate halving lets 13 out earlier",
    );
    check(&sim, sim.sent(14) == ms(4042.5), "after the full ACK");
    let trace = sim.server.as_mut().unwrap().drain_trace();
    let mut cw: Vec<_> = trace
        .iter()
        .filter(|r| r.ca_state == CaState::Recovery)
        .map(|r| (r.time, r.cwnd))
        .collect();
    cw.dedup_by_key(|r| r.1);
    assert_eq!(cw, [(ms(3365.5), 4), (ms(3437.5), 3), (ms(3916.0), 2)]);
}

#[test]
fn linux_forgets_the_handshake_rtt_without_timestamps() {
    // handshake_rtt = "timestamps_only": no sample from the handshake, so the server's first
    // RTO is still 3 s when segments 1 and 2 leave at 917; the first sample (ACK 2 at 1666,
    // 749 ms) gives RTO = 3 × 749 ms.
    let cfg = TcpConfig {
        handshake_rtt: lasthop_tcp::HandshakeRtt::TimestampsOnly,
        ..base()
    };
    let mut sim = Sim::new(cfg.clone(), cfg, 2 * MSS);
    sim.drops = vec![(Dir::Down, 1, 1)];
    sim.run(ms(1000.0));
    assert_eq!(sim.srv().srtt(), None);
    assert_eq!(sim.srv().poll_timeout(), Some(ms(917.0 + 3000.0)));
    let mut sim = Sim::new(
        TcpConfig {
            handshake_rtt: lasthop_tcp::HandshakeRtt::TimestampsOnly,
            ..base()
        },
        TcpConfig {
            handshake_rtt: lasthop_tcp::HandshakeRtt::TimestampsOnly,
            ..base()
        },
        10 * MSS,
    );
    sim.run(ms(1666.0));
    assert_eq!(sim.srv().srtt(), Some(Dur::from_millis(749)));
    assert_eq!(sim.srv().rto(), Dur::from_millis(3 * 749));
}

#[test]
fn cbi_starts_from_cached_metrics() {
    // Cached for the client's host: srtt 900 ms, deviation (×4) 800 ms, ssthresh 3, cwnd 6.
    // With timestamps the handshake sample (613.5 ms, mdev×4 1227 ms) is raised to srtt 900;
    // the deviation stays 1227: RTO 2127 ms. The initial window is Linux's 4 segments at MSS
    // 524, capped by the cached ssthresh: 3 segments at 920.5, 992.5, 1064.5.
    let m = lasthop_tcp::Metrics {
        srtt: Dur::from_millis(900),
        mdev4: Dur::from_millis(800),
        ssthresh: 3,
        cwnd: 6,
    };
    let cfg = TcpConfig {
        timestamps: true,
        cbi: true,
        ..base()
    };
    let mut sim = Sim::new(cfg.clone(), cfg, 10 * 524);
    sim.server_metrics = Some(m);
    sim.run(ms(1100.0));
    assert_eq!(
        sim.data(Dir::Down),
        [(ms(920.5), 1, 1), (ms(992.5), 2, 1), (ms(1064.5), 3, 1)]
    );
    let s = sim.srv();
    assert_eq!(
        (s.srtt(), s.rto(), s.ssthresh()),
        (Some(Dur::from_millis(900)), Dur::from_millis(2127), 3)
    );
    // Without timestamps Linux distrusts an RTO below 3 s: all RTT state is forgotten (RTO
    // 3 s) and the initial window stays 2; the cached ssthresh is still used.
    let cfg = TcpConfig {
        cbi: true,
        ..base()
    };
    let mut sim = Sim::new(cfg.clone(), cfg, 10 * MSS);
    sim.server_metrics = Some(m);
    sim.run(ms(1000.0));
    assert_eq!(sim.data(Dir::Down), [(ms(917.0), 1, 1), (ms(989.0), 2, 1)]);
    let s = sim.srv();
    assert_eq!(
        (s.srtt(), s.rto(), s.ssthresh()),
        (None, Dur::from_secs(3), 3)
    );
}
