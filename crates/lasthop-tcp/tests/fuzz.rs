//! Whatever arrives, the endpoint must not panic: random bytes, and well-formed segments with
//! random fields (sequence numbers, ACKs, flags, SACK blocks, timestamps) for this 4-tuple.

mod common;

use common::*;
use lasthop_core::{Packet, Time};
use lasthop_tcp::wire::Segment;
use lasthop_tcp::{Connection, Host, TcpConfig};
use proptest::prelude::*;

/// A client and server with some data exchanged, so that every state has something in it.
fn established() -> Sim {
    let cfg = TcpConfig {
        timestamps: true,
        dsack: true,
        ..TcpConfig::default()
    };
    let mut sim = Sim::new(cfg.clone(), cfg, 20 * 524);
    sim.drops = vec![(Dir::Down, 3, 1)];
    sim.run(ms(2500.0));
    sim
}

fn exercise(c: &mut Connection, now: Time, p: &Packet) {
    c.handle_packet(now, p);
    for _ in 0..200 {
        if c.poll_transmit(now).is_none() {
            break;
        }
    }
    if let Some(t) = c.poll_timeout() {
        c.handle_timeout(t.max(now));
        while c.poll_transmit(t.max(now)).is_some() {}
    }
    while c.poll_event().is_some() {}
    let _ = c.drain_trace();
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), wire in 0u32..3000) {
        let mut sim = established();
        let p = Packet::with_wire_len(bytes, wire);
        let now = sim.now;
        exercise(&mut sim.client, now, &p);
        exercise(sim.server.as_mut().unwrap(), now, &p);
        let mut h = Host::new(std::net::Ipv4Addr::new(198, 19, 0, 1), TcpConfig::default());
        h.listen(80);
        let _ = h.handle_packet(now, &p);
    }

    #[test]
    fn random_segments_never_panic(
        segs in proptest::collection::vec(
            (any::<u32>(), any::<u32>(), any::<u8>(), any::<u16>(), 0u32..1500,
             proptest::collection::vec((any::<u32>(), any::<u32>()), 0..4),
             proptest::option::of((any::<u32>(), any::<u32>())), any::<bool>()),
            1..20),
    ) {
        let mut sim = established();
        let (c, s) = addrs();
        let mut now = sim.now;
        for (seq, ack, flags, window, payload, sacks, ts, near) in segs {
            // Half of the segments near the real sequence numbers, where the logic is.
            let (seq, ack) = if near {
                (SERVER_ISS.wrapping_add(seq % 20_000), CLIENT_ISS.wrapping_add(ack % 4000))
            } else {
                (seq, ack)
            };
            let seg = Segment { src: Some(s), dst: Some(c), seq, ack, flags, window, payload,
                sacks: sacks.clone(), ts, ..Segment::default() };
            now += lasthop_core::Dur::from_millis(7);
            exercise(&mut sim.client, now, &seg.encode());
            let seg = Segment { src: Some(c), dst: Some(s), seq: ack, ack: seq, flags, window,
                payload, sacks, ts, ..Segment::default() };
            exercise(sim.server.as_mut().unwrap(), now, &seg.encode());
        }
    }
}

/// Transfers always complete, whatever packets are lost (below the retry limits), for every
/// combination of the main switches: no deadlock, no lost byte, both sides closed.
fn transfer(cfg: TcpConfig, drops: &[(bool, usize)], marks: &[usize], bytes: u64) {
    let mut sim = Sim::new(cfg.clone(), cfg, bytes);
    sim.server_closes = true;
    sim.client_closes_on_fin = true;
    sim.mark_idx = marks.iter().map(|&i| (1, i)).collect();
    sim.drop_idx = drops
        .iter()
        .map(|&(up, i)| (if up { 0 } else { 1 }, i))
        .collect();
    sim.run(ms(3_000_000.0));
    let aborted = |ev: &[(lasthop_core::Time, lasthop_tcp::Event)]| {
        ev.iter()
            .any(|(_, e)| matches!(e, lasthop_tcp::Event::Aborted(_)))
    };
    if aborted(&sim.server_events) || aborted(&sim.client_events) {
        return; // retry limits reached: a legitimate end (the other side may hang, as in TCP)
    }
    let delivered: u64 = sim
        .client_events
        .iter()
        .filter_map(|(_, e)| match e {
            lasthop_tcp::Event::Delivered(n) => Some(*n),
            _ => None,
        })
        .sum();
    assert_eq!(delivered, bytes, "{}", sim.dump());
    assert!(sim.client.is_closed(), "{}", sim.dump());
    assert!(sim.srv().is_closed(), "{}", sim.dump());
    assert_eq!(sim.srv().unacked_bytes(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn transfers_complete_despite_losses(
        drops in proptest::collection::vec((any::<bool>(), 0usize..300), 0..40),
        sack in any::<bool>(), ts in any::<bool>(), frto in any::<bool>(),
        dsack in any::<bool>(), fack in any::<bool>(), delack in 0u8..3, nagle in any::<bool>(),
        careful in any::<bool>(), iw in 1u32..5, segs in 1u64..120, tail in 0u64..536,
        ecn in any::<bool>(), rh in any::<bool>(), thin in any::<bool>(), marks in proptest::collection::vec(0usize..300, 0..20),
        marking in 0u8..4, linux24_extras in any::<bool>(), rto22 in any::<bool>(),
    ) {
        let cfg = TcpConfig {
            sack,
            timestamps: ts,
            frto,
            dsack: dsack && sack,
            fack: fack && sack,
            delayed_ack: [lasthop_tcp::DelayedAck::Off, lasthop_tcp::DelayedAck::Static,
                lasthop_tcp::DelayedAck::Adaptive][delack as usize],
            nagle,
            newreno_careful: careful,
            ecn,
            rate_halving: rh,
            thin_linear_timeouts: thin,
            thin_dupack: thin,
            initial_window: lasthop_tcp::InitialWindow::Segments(iw),
            // Linux 2.4's non-FACK scoreboards need FACK off.
            sack_loss_marking: if fack {
                lasthop_tcp::SackLossMarking::Rfc3517
            } else {
                [lasthop_tcp::SackLossMarking::Rfc3517, lasthop_tcp::SackLossMarking::Head,
                    lasthop_tcp::SackLossMarking::Linux24,
                    lasthop_tcp::SackLossMarking::Linux23][marking as usize]
            },
            // Seed 001's Linux 2.2/2.3 RTO and timer.
            rto_estimator: if rto22 {
                lasthop_tcp::RtoEstimator::Linux22
            } else {
                lasthop_tcp::RtoEstimator::Linux24
            },
            rto_timer: if rto22 {
                lasthop_tcp::RtoTimer::OldestSent
            } else {
                lasthop_tcp::RtoTimer::Ack
            },
            head_timedout: linux24_extras,
            flight_cap: linux24_extras,
            ..TcpConfig::default()
        };
        cfg.validate().unwrap();
        transfer(cfg, &drops, &marks, segs * 536 + tail);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The same for today's Linux switches (seed 003): CUBIC with or without HyStart, the growth
    /// gates, PRR, early retransmit, TLP, RACK, IW up to 10, RDB v1 / v2 / v2 with TFRC-SP, the
    /// pushed-segment ACK, pacing, BBR, from the baseline or the linux-3.16 profile.
    #[test]
    fn transfers_complete_with_todays_linux(
        drops in proptest::collection::vec((any::<bool>(), 0usize..300), 0..40),
        marks in proptest::collection::vec(0usize..300, 0..10),
        profile in any::<bool>(), cubic in any::<bool>(), hystart in any::<bool>(),
        gate in 0u8..3, prr in any::<bool>(), er in 0u8..3, tlp in any::<bool>(),
        thin in any::<bool>(), nagle in any::<bool>(), ecn in any::<bool>(), iw in 1u32..11,
        rack in any::<bool>(), rdb in 0u8..4, ack_pushed in any::<bool>(),
        segs in 1u64..120, tail in 0u64..536, pacing in 0u8..3, bbr in any::<bool>(),
    ) {
        // RDB (seed 003): off, v1, v2, v2 with TFRC-SP; v2 is a Reno module.
        let (rdb, rdb_tfrc) = match rdb {
            0 => (lasthop_tcp::Rdb::Off, None),
            1 => (lasthop_tcp::Rdb::V1, None),
            2 => (lasthop_tcp::Rdb::V2, None),
            _ => (lasthop_tcp::Rdb::V2, Some(true)),
        };
        let cubic = cubic && rdb != lasthop_tcp::Rdb::V2;
        // BBR (it paces) instead of the Reno or CUBIC above, unless RDBv2 (a Reno module).
        let bbr = bbr && rdb != lasthop_tcp::Rdb::V2;
        let base = if profile { TcpConfig::linux_3_16() } else { TcpConfig::default() };
        let cfg = TcpConfig {
            congestion_control: if bbr {
                lasthop_tcp::CongestionControl::Bbr
            } else if cubic {
                lasthop_tcp::CongestionControl::Cubic
            } else {
                lasthop_tcp::CongestionControl::Reno
            },
            hystart: hystart && cubic && !bbr,
            cwnd_limited: [lasthop_tcp::CwndLimited::Linux24, lasthop_tcp::CwndLimited::Linux315,
                lasthop_tcp::CwndLimited::Linux316][gate as usize],
            prr,
            rate_halving: false,
            early_retransmit: [lasthop_tcp::EarlyRetransmit::Off, lasthop_tcp::EarlyRetransmit::On,
                lasthop_tcp::EarlyRetransmit::Delayed][er as usize],
            tlp,
            rack,
            thin_dupack: thin,
            thin_linear_timeouts: thin,
            nagle,
            ecn,
            initial_window: lasthop_tcp::InitialWindow::Segments(iw),
            rdb,
            rdb_tfrc,
            ack_pushed,
            pacing: [lasthop_tcp::Pacing::None, lasthop_tcp::Pacing::WhenNeeded,
                lasthop_tcp::Pacing::Always][pacing.max(u8::from(bbr)) as usize],
            ..base
        };
        cfg.validate().unwrap();
        transfer(cfg, &drops, &marks, segs * 536 + tail);
    }
}
