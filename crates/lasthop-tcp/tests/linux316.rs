//! Today's Linux in the model, worked by hand segment by segment (seed 003, Linux 3.16): CUBIC's
//! ssthresh in a connection, the growth gates of 3.15 and 3.16 (`tcp_is_cwnd_limited`), PRR,
//! early retransmit (at once and delayed), the tail loss probe and its loss detection, and the
//! thin-stream triggers of modified fast retransmit and linear timeouts.
//!
//! One endpoint (the client) sends; the peer is written by hand. The SYN-ACK arrives at 600 ms,
//! so srtt is 600 ms, rttvar 1200 ms and the RTO 1800 ms (Linux's first sample: 3·RTT). MSS 536.

mod common;

use common::addrs;
use lasthop_core::{Dur, Packet, Time};
use lasthop_tcp::wire::{Segment, ACK, CWR, ECE, SYN};
use lasthop_tcp::{
    CaState, CongestionControl, Connection, CwndLimited, EarlyRetransmit, Event, InitialWindow,
    SsthreshFrom, TcpConfig,
};

const PEER_ISS: u32 = 7000;
const ISS: u32 = 1000;
const MSS: u32 = 536;

fn t(ms: u64) -> Time {
    Time(ms * 1_000_000)
}

/// An ACK from the peer: `acked` of our segments cumulatively, SACK blocks as 1-based segment
/// ranges, and optionally a D-SACK of one segment first.
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

/// A client connected by a SYN-ACK at 600 ms that has written `segments` full segments.
fn client(cfg: TcpConfig, segments: u32) -> Connection {
    let (c, s) = addrs();
    let (ecn, ts) = (cfg.ecn, cfg.timestamps);
    let mut conn = Connection::connect(Time::ZERO, c, s, cfg, ISS);
    let syn = Segment::decode(&conn.poll_transmit(Time::ZERO).unwrap()).unwrap();
    assert_eq!(syn.flags, if ecn { SYN | ECE | CWR } else { SYN });
    let mut sa = Segment {
        src: Some(s),
        dst: Some(c),
        seq: PEER_ISS,
        ack: ISS + 1,
        flags: SYN | ACK | if ecn { ECE } else { 0 },
        window: 65535,
        mss: Some(MSS as u16),
        sack_permitted: true,
        ts: ts.then_some((1, 1)),
        ..Segment::default()
    };
    sa.wscale = None;
    conn.handle_packet(t(600), &sa.encode());
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

fn iw(n: u32) -> TcpConfig {
    TcpConfig {
        initial_window: InitialWindow::Segments(n),
        ..TcpConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// CUBIC.

#[test]
fn cubic_ssthresh_is_cwnd_times_717_over_1024() {
    // IW 10, ten segments out; one ACK SACKs 2-4: segment 1 has 3 SACKed above it (RFC 3517),
    // Recovery. CUBIC: ssthresh = 10·717/1024 = 7 (7.002), cwnd 7 (no PRR: at once). Reno with
    // the baseline's ssthresh_from = "flight": 10 / 2 = 5.
    for (cc, want) in [(CongestionControl::Cubic, 7), (CongestionControl::Reno, 5)] {
        let cfg = TcpConfig {
            congestion_control: cc,
            ..iw(10)
        };
        let mut c = client(cfg, 20);
        assert_eq!(drain(&mut c, t(600)), (1..=10).collect::<Vec<_>>());
        c.handle_packet(t(1300), &ack(0, &[(2, 4)]));
        assert_eq!(c.ca_state(), CaState::Recovery);
        assert_eq!((c.ssthresh(), c.cwnd()), (want, want), "{cc:?}");
    }
}

#[test]
fn congestion_control_per_socket() {
    // TCP_CONGESTION on one connection of a Reno host: the same loss as above gives CUBIC's
    // ssthresh 7 of 10.
    let mut c = client(iw(10), 20);
    c.set_congestion_control(CongestionControl::from_linux_name("cubic").unwrap());
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    c.handle_packet(t(1300), &ack(0, &[(2, 4)]));
    assert_eq!((c.ssthresh(), c.cwnd()), (7, 7));
    assert_eq!(c.config().congestion_control, CongestionControl::Cubic);
    // BBR is Linux 6.18's (tests/linux618.rs); algorithms the model lacks have no name.
    assert_eq!(
        CongestionControl::from_linux_name("bbr"),
        Some(CongestionControl::Bbr)
    );
    assert_eq!(CongestionControl::from_linux_name("vegas"), None);
}

#[test]
fn cubic_undo_restores_the_cwnd_of_the_loss() {
    // IW 9, nine out at 600, RTO at 2400 (ssthresh: CUBIC 9·717/1024 = 6, remembering cwnd 9;
    // Reno from the flight 9 / 2 = 4), segment 1 again. The ACK of 2 echoes TSval 600, older
    // than the retransmission: spurious, undone. CUBIC (`bictcp_undo_cwnd`): max(cwnd 1, 9) = 9;
    // Reno: max(1, 2·4) = 8. ssthresh goes back to "infinite" in both.
    for (cc, want) in [(CongestionControl::Cubic, 9), (CongestionControl::Reno, 8)] {
        let cfg = TcpConfig {
            congestion_control: cc,
            timestamps: true,
            max_burst: 0,
            ..iw(9)
        };
        let mut c = client(cfg, 20);
        assert_eq!(drain(&mut c, t(600)).len(), 9);
        assert_eq!(c.poll_timeout(), Some(t(2400)));
        c.handle_timeout(t(2400));
        assert_eq!(
            c.ssthresh(),
            if cc == CongestionControl::Cubic { 6 } else { 4 }
        );
        assert_eq!(drain(&mut c, t(2400)), vec![1]);
        let mut a = Segment::decode(&ack(2, &[])).unwrap();
        a.ts = Some((5000, 600));
        c.handle_packet(t(2500), &a.encode());
        assert_eq!(c.stats().undos, 1);
        assert_eq!(
            (c.cwnd(), c.ssthresh()),
            (want, lasthop_tcp::SSTHRESH_INFINITE),
            "{cc:?}"
        );
    }
}

#[test]
fn cubic_slow_start_adds_the_segments_acked() {
    // Linux 3.16 tcp_slow_start: one ACK of 2 segments raises cwnd by 2 (IW 4 -> 6); today's
    // Reno (Linux 2.4) adds one per ACK (-> 5). Four out, so the 2.4 gate (in_flight 4 >=
    // cwnd 4) lets both grow.
    for (cc, want) in [(CongestionControl::Cubic, 6), (CongestionControl::Reno, 5)] {
        let cfg = TcpConfig {
            congestion_control: cc,
            ..iw(4)
        };
        let mut c = client(cfg, 20);
        assert_eq!(drain(&mut c, t(600)), vec![1, 2, 3, 4]);
        c.handle_packet(t(1200), &ack(2, &[]));
        assert_eq!(c.cwnd(), want, "{cc:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The growth gate.

fn gate(g: CwndLimited) -> TcpConfig {
    TcpConfig {
        cwnd_limited: g,
        ..iw(4)
    }
}

#[test]
fn growth_gate_when_the_application_leaves_cwnd_unused() {
    // IW 4 and 3 segments written: all go, cwnd is not what stops the sender. Each ACK
    // acknowledges one segment (prior in_flight 3, 2, 1), slow start:
    //   2.4  (in_flight >= cwnd):       3 >= 4 no; never grows            -> 4
    //   3.15 (or cwnd - in_flight <= 3): 4-3=1 yes -> 5; 5-2=3 yes -> 6; 6-1=5 no -> 6
    //   3.16 (cwnd < 2·max_packets_out = 6): 4 yes -> 5; 5 yes -> 6; 6 no -> 6
    for (g, want) in [
        (CwndLimited::Linux24, 4),
        (CwndLimited::Linux315, 6),
        (CwndLimited::Linux316, 6),
    ] {
        let mut c = client(gate(g), 3);
        assert_eq!(drain(&mut c, t(600)), vec![1, 2, 3]);
        for k in 1..=3 {
            c.handle_packet(t(1200 + u64::from(k)), &ack(k, &[]));
        }
        assert_eq!(c.cwnd(), want, "{g:?}");
    }
}

#[test]
fn thin_stream_cwnd_does_not_grow_back_after_a_loss_with_316() {
    // Seed 003 §1.3: two segments out at 600, both lost: RTO at 2400, ssthresh = max(2/2, 2)
    // = 2, cwnd 1, segment 1 again. The ACK of both at 3100 ends Loss; in_flight before it was 1
    // (the retransmission; segment 2 was marked lost), so every gate lets slow start raise
    // cwnd to 2 (3.16: max_packets_out is still 2 from the first flight: 1 < 4).
    // Then the thin stream writes one segment per round trip: in_flight 1 before each ACK.
    //   2.4:  1 >= 2 no: cwnd stays 2.
    //   3.15: 2 - 1 = 1 <= 3: slow start to 3 (= ssthresh + 1); then congestion avoidance
    //         (3 - 1 = 2 <= 3) counts, cwnd 3 after the next ACK too (cnt 1 of 4).
    //   3.16: 2 <= ssthresh: 2 < 2·max_packets_out (1) no: stays 2, the seed's finding.
    for (g, want) in [
        (CwndLimited::Linux24, 2),
        (CwndLimited::Linux315, 3),
        (CwndLimited::Linux316, 2),
    ] {
        let mut c = client(gate(g), 2);
        assert_eq!(drain(&mut c, t(600)), vec![1, 2]);
        assert_eq!(c.poll_timeout(), Some(t(2400)));
        c.handle_timeout(t(2400));
        assert_eq!(drain(&mut c, t(2400)), vec![1]);
        c.handle_packet(t(3100), &ack(2, &[]));
        assert_eq!(
            (c.ca_state(), c.ssthresh(), c.cwnd()),
            (CaState::Open, 2, 2)
        );
        for k in 0..2u32 {
            let now = 3200 + 700 * u64::from(k);
            c.send(u64::from(MSS));
            assert_eq!(drain(&mut c, t(now)), vec![3 + k]);
            c.handle_packet(t(now + 600), &ack(3 + k, &[]));
        }
        assert_eq!(c.cwnd(), want, "{g:?}");
    }
}

#[test]
fn growth_gate_316_above_ssthresh_follows_the_last_cwnd_limited_send() {
    // After the RTO of the previous test (ssthresh 2, cwnd 2 at 3100), the application writes
    // 20 segments: 3 and 4 go, 5 waits for cwnd: that send was cwnd-limited. ACK 3: slow start
    // (2 <= 2, 2 < 2·2) -> 3; 5 and 6 go, 7 waits. ACK 4: cwnd 3 > ssthresh: congestion
    // avoidance, allowed because the last send was cwnd-limited (Linux 2.4's counter: cnt
    // 0 -> 1). Three more such ACKs (cnt 1 -> 2 -> 3 -> cwnd 4) and cwnd is 4.
    // The same with only the segments cwnd allows written (never cwnd-limited): cwnd stays 3.
    for (written, want) in [(20u32, 4u32), (0, 3)] {
        let mut c = client(gate(CwndLimited::Linux316), 2);
        let _ = drain(&mut c, t(600));
        c.handle_timeout(t(2400));
        let _ = drain(&mut c, t(2400));
        c.handle_packet(t(3100), &ack(2, &[]));
        let limited = written > 0;
        c.send(u64::from(if limited { written } else { 2 } * MSS));
        assert_eq!(drain(&mut c, t(3100)), vec![3, 4]);
        c.handle_packet(t(3700), &ack(3, &[]));
        assert_eq!(c.cwnd(), 3);
        if !limited {
            c.send(u64::from(2 * MSS)); // exactly what cwnd 3 lets out
        }
        assert_eq!(drain(&mut c, t(3700)), vec![5, 6]);
        let mut next = 7;
        for k in 4..=7u32 {
            c.handle_packet(t(4300 + u64::from(k)), &ack(k, &[]));
            if !limited {
                c.send(u64::from(MSS));
            }
            let sent = drain(&mut c, t(4300 + u64::from(k)));
            assert!(sent.iter().all(|&s| s >= next), "{sent:?}");
            next += sent.len() as u32;
        }
        assert_eq!(c.cwnd(), want, "written {written}");
    }
}

// ---------------------------------------------------------------------------------------------
// PRR.

#[test]
fn prr_spreads_the_reduction_over_the_acks() {
    // IW 10, Reno with ssthresh from cwnd: ssthresh 5, prior_cwnd 10. Ten out.
    let cfg = TcpConfig {
        prr: true,
        ssthresh_from: SsthreshFrom::Cwnd,
        ..iw(10)
    };
    let mut c = client(cfg.clone(), 30);
    assert_eq!(drain(&mut c, t(600)), (1..=10).collect::<Vec<_>>());
    // SACK 2-4: Recovery. delivered 3; in_flight = 10 - 3 SACKed - 1 lost = 6 > ssthresh 5:
    // sndcnt = ceil(5·3 / 10) - 0 = 2; cwnd = 6 + 2 = 8: segment 1 again and new segment 11.
    c.handle_packet(t(1300), &ack(0, &[(2, 4)]));
    assert_eq!(c.cwnd(), 8);
    assert_eq!(drain(&mut c, t(1300)), vec![1, 11]);
    // SACK 2-5: delivered 4; in_flight = 11 + 1 retransmitted - 4 - 1 = 7 > 5: sndcnt =
    // ceil(20 / 10) - 2 sent = 0; cwnd 7, nothing goes.
    c.handle_packet(t(1372), &ack(0, &[(2, 5)]));
    assert_eq!(c.cwnd(), 7);
    assert_eq!(drain(&mut c, t(1372)), Vec::<u32>::new());
    // SACK 2-6: delivered 5; in_flight 6: sndcnt = ceil(25 / 10) - 2 = 1; cwnd 7: segment 12.
    c.handle_packet(t(1444), &ack(0, &[(2, 6)]));
    assert_eq!(c.cwnd(), 7);
    assert_eq!(drain(&mut c, t(1444)), vec![12]);
    // SACK 2-10 (four at once): delivered 9; in_flight = 12 + 1 - 9 - 1 = 3 <= 5: slow-start
    // bound, sndcnt = min(5 - 3, max(9 - 3, 4) + 1) = 2; cwnd 5: segments 13, 14.
    c.handle_packet(t(1516), &ack(0, &[(2, 10)]));
    assert_eq!(c.cwnd(), 5);
    assert_eq!(drain(&mut c, t(1516)), vec![13, 14]);
    // The retransmission is ACKed with everything up to 12: past high_seq (10), Recovery ends
    // and cwnd = ssthresh (tcp_end_cwnd_reduction).
    c.handle_packet(t(1900), &ack(12, &[]));
    assert_eq!((c.ca_state(), c.cwnd()), (CaState::Open, 5));

    // Without PRR (the seeds' baseline, rate halving off): cwnd = ssthresh = 5 at once, and
    // in_flight 6 leaves room only for the forced retransmission.
    let mut c = client(TcpConfig { prr: false, ..cfg }, 30);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ack(0, &[(2, 4)]));
    assert_eq!(c.cwnd(), 5);
    assert_eq!(drain(&mut c, t(1300)), vec![1]);
}

#[test]
fn prr_in_cwr_after_an_ecn_echo() {
    // IW 10 with ECN, ten out. The ACK of segment 1 carries ECE: slow start first (the 2.4
    // and 3.16 rules both let an ECE ACK raise cwnd below ssthresh): 11; then CWR with
    // ssthresh = 11 / 2 = 5 and prior_cwnd 11. PRR: delivered 1, in_flight 9 > 5: sndcnt =
    // ceil(5·1 / 11) - 0 = 1, cwnd = 9 + 1 = 10: new segment 11 goes.
    // (No `tcp_moderate_cwnd`, as in 3.16: 2.4's would cut cwnd to in_flight + 3 at the end.)
    let cfg = TcpConfig {
        ecn: true,
        prr: true,
        ssthresh_from: SsthreshFrom::Cwnd,
        max_burst: 0,
        ..iw(10)
    };
    let mut c = client(cfg.clone(), 30);
    assert_eq!(drain(&mut c, t(600)).len(), 10);
    let ece = |acked: u32| {
        let mut s = Segment::decode(&ack(acked, &[])).unwrap();
        s.flags |= ECE;
        s.encode()
    };
    c.handle_packet(t(1300), &ece(1));
    assert_eq!(
        (c.ca_state(), c.ssthresh(), c.cwnd()),
        (CaState::Cwr, 5, 10)
    );
    assert_eq!(drain(&mut c, t(1300)), vec![11]);
    // ACK 2: delivered 2, ceil(10 / 11) = 1 - 1 out = 0: cwnd 9, nothing.
    c.handle_packet(t(1310), &ack(2, &[]));
    assert_eq!(c.cwnd(), 9);
    assert_eq!(drain(&mut c, t(1310)), Vec::<u32>::new());
    // ACK 3: delivered 3, ceil(15 / 11) = 2 - 1 = 1: cwnd 8 + 1 = 9: segment 12.
    c.handle_packet(t(1320), &ack(3, &[]));
    assert_eq!(c.cwnd(), 9);
    assert_eq!(drain(&mut c, t(1320)), vec![12]);
    // An ACK above high_seq (segment 10) ends CWR: cwnd = ssthresh = 5.
    c.handle_packet(t(1400), &ack(11, &[]));
    assert_eq!((c.ca_state(), c.cwnd()), (CaState::Open, 5));
    // Without PRR: cwnd = min(11, 5) at once, nothing goes.
    let mut c = client(TcpConfig { prr: false, ..cfg }, 30);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ece(1));
    assert_eq!(c.cwnd(), 5);
    assert_eq!(drain(&mut c, t(1300)), Vec::<u32>::new());
}

// ---------------------------------------------------------------------------------------------
// Early retransmit.

fn er(mode: EarlyRetransmit) -> TcpConfig {
    TcpConfig {
        early_retransmit: mode,
        ..iw(4)
    }
}

#[test]
fn early_retransmit_on_one_sack_with_two_out() {
    // Two written, two out, nothing unsent; segment 2 is SACKed: packets_out 2 = sacked 1 + 1
    // and < 4. ER "on": Recovery at once, segment 1 again. Off: Disorder, nothing.
    let mut c = client(er(EarlyRetransmit::On), 2);
    assert_eq!(drain(&mut c, t(600)), vec![1, 2]);
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(drain(&mut c, t(1300)), vec![1]);
    assert_eq!(c.stats().early_retransmits, 1);

    let mut c = client(er(EarlyRetransmit::Off), 2);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(1300)), Vec::<u32>::new());

    // Linux 3.16 asks only packets_out >= sacked_out + 1: with 3 out one SACK is enough
    // (RFC 5827 would wait for a second one).
    let mut c = client(er(EarlyRetransmit::On), 3);
    assert_eq!(drain(&mut c, t(600)), vec![1, 2, 3]);
    c.handle_packet(t(1300), &ack(0, &[(3, 3)]));
    assert_eq!(drain(&mut c, t(1300)), vec![1]);

    // Unsent data that cwnd lets go: no ER (limited transmit sends segment 3 instead).
    let mut c = client(er(EarlyRetransmit::On), 2);
    let _ = drain(&mut c, t(600));
    c.send(u64::from(MSS));
    let _ = drain(&mut c, t(600)); // segment 3 goes too (cwnd 4)
    c.send(u64::from(MSS));
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(1300)), vec![4]);

    // The thin-stream dupack rule turns ER off (Linux tcp_enable_early_retrans); in the
    // first slow start the stream is not thin either, so nothing happens.
    let cfg = TcpConfig {
        thin_dupack: true,
        ..er(EarlyRetransmit::On)
    };
    let mut c = client(cfg, 2);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
}

#[test]
fn delayed_early_retransmit_waits_a_quarter_rtt() {
    // "delayed": the SACK at 1300 arms a timer at 1300 + max(srtt/4 = 150 ms, 2 ms) = 1450,
    // before the RTO (600 + 1800 = 2400); at 1450 Recovery starts and segment 1 goes.
    let mut c = client(er(EarlyRetransmit::Delayed), 2);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(1300)), Vec::<u32>::new());
    assert_eq!(c.poll_timeout(), Some(t(1450)));
    c.handle_timeout(t(1450));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(drain(&mut c, t(1450)), vec![1]);
    // The RTO is back: armed when segment 1 went again, 1450 + 1800.
    assert_eq!(c.poll_timeout(), Some(t(3250)));

    // An ACK of segment 1 at 1400 (it was only reordered) cancels the timer: no
    // retransmission; the RTO is rearmed from the ACK with the new sample (800 ms: srtt
    // 600 + 200/8 = 625, rttvar stays 1200): 1400 + 1825.
    let mut c = client(er(EarlyRetransmit::Delayed), 2);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    c.handle_packet(t(1400), &ack(1, &[(2, 2)]));
    assert_eq!(drain(&mut c, t(1400)), Vec::<u32>::new());
    assert_eq!(c.poll_timeout(), Some(t(3225)));
    assert_eq!(c.stats().retransmits, 0);
}

// ---------------------------------------------------------------------------------------------
// Tail loss probe.

fn tlp() -> TcpConfig {
    TcpConfig { tlp: true, ..iw(2) }
}

#[test]
fn loss_probe_sends_new_data_past_cwnd() {
    // IW 2, four written: 1 and 2 go at 600, cwnd stops 3: the probe is scheduled at
    // 600 + 2·srtt = 1800 (before the RTO at 2400), and sends new segment 3 past cwnd.
    let mut c = client(tlp(), 4);
    assert_eq!(drain(&mut c, t(600)), vec![1, 2]);
    assert_eq!(c.poll_timeout(), Some(t(1800)));
    c.handle_timeout(t(1800));
    assert_eq!(drain(&mut c, t(1800)), vec![3]);
    assert_eq!(c.stats().loss_probes, 1);
    // No second probe in a row: the RTO, from the probe, is next: 1800 + 1800.
    assert_eq!(c.poll_timeout(), Some(t(3600)));
    // Without TLP the RTO at 2400 is the only timer.
    let mut c = client(iw(2), 4);
    let _ = drain(&mut c, t(600));
    assert_eq!(c.poll_timeout(), Some(t(2400)));
}

#[test]
fn loss_probe_resends_the_tail_and_detects_a_repaired_loss() {
    // One segment written and out at 600. PTO = max(2·600, 1.5·600 + 200) = 1200: 1800.
    // Nothing unsent: the last segment goes again, tlp_high_seq = snd_nxt (end of 1).
    let mut c = client(tlp(), 1);
    assert_eq!(drain(&mut c, t(600)), vec![1]);
    assert_eq!(c.poll_timeout(), Some(t(1800)));
    c.handle_timeout(t(1800));
    assert_eq!(drain(&mut c, t(1800)), vec![1]);
    assert_eq!((c.stats().loss_probes, c.stats().retransmits), (1, 1));
    // The probe's ACK: 1 acknowledged (== tlp_high_seq, so Linux 3.16 waits). The stream
    // writes segment 2; its ACK is past tlp_high_seq with no D-SACK: the probe repaired a
    // loss: ssthresh from the flight (the baseline's `ssthresh_from`; nothing is out after
    // the ACK) = max(0 / 2, 2) = 2, and cwnd = ssthresh = 2 (3.16 `tcp_process_tlp_ack`).
    c.handle_packet(t(2400), &ack(1, &[]));
    c.send(u64::from(MSS));
    assert_eq!(drain(&mut c, t(2400)), vec![2]);
    c.handle_packet(t(3000), &ack(2, &[]));
    assert_eq!(c.stats().tlp_recoveries, 1);
    assert_eq!(
        (c.ssthresh(), c.cwnd(), c.ca_state()),
        (2, 2, CaState::Open)
    );

    // The original was only late: its ACK comes at 1900, then the probe's duplicate ACK
    // (ack == tlp_high_seq, nothing new): the episode ends without a reduction.
    let mut c = client(tlp(), 1);
    let _ = drain(&mut c, t(600));
    c.handle_timeout(t(1800));
    let _ = drain(&mut c, t(1800));
    c.handle_packet(t(1900), &ack(1, &[]));
    c.handle_packet(t(2400), &ack(1, &[]));
    c.send(u64::from(MSS));
    let _ = drain(&mut c, t(2400));
    c.handle_packet(t(3000), &ack(2, &[]));
    assert_eq!(c.stats().tlp_recoveries, 0);
    assert_eq!(c.ssthresh(), lasthop_tcp::SSTHRESH_INFINITE);
}

#[test]
fn loss_probe_waits_for_the_rto_when_it_comes_first() {
    // rto_min 200 ms with a 100 ms RTT handshake would give an RTO of 300 ms; the probe's
    // 2·srtt = 200 ms (at least 1.5·100 + 200 = 350 ms with one segment out) is then cut to
    // the RTO: the probe fires at the RTO's time, 100 + 300 = 400 ms, and the RTO moves to
    // 400 + 300.
    let (c_addr, s_addr) = addrs();
    let mut c = Connection::connect(Time::ZERO, c_addr, s_addr, tlp(), ISS);
    let _ = c.poll_transmit(Time::ZERO);
    let sa = Segment {
        src: Some(s_addr),
        dst: Some(c_addr),
        seq: PEER_ISS,
        ack: ISS + 1,
        flags: SYN | ACK,
        window: 65535,
        mss: Some(MSS as u16),
        sack_permitted: true,
        ..Segment::default()
    };
    c.handle_packet(t(100), &sa.encode());
    assert_eq!(c.rto(), Dur::from_millis(300));
    c.send(u64::from(MSS));
    assert_eq!(drain(&mut c, t(100)), vec![1]);
    assert_eq!(c.poll_timeout(), Some(t(400)));
    c.handle_timeout(t(400));
    assert_eq!(drain(&mut c, t(400)), vec![1]);
    assert_eq!(c.poll_timeout(), Some(t(700)));
}

// ---------------------------------------------------------------------------------------------
// Thin-stream mechanisms with Linux 3.16's triggers (seed 003 §2).

/// A stream past its first slow start (an RTO at 2400 set ssthresh 2), then `out` segments
/// out and `unsent` more written.
fn thin_after_rto(cfg: TcpConfig, out: u32, unsent: u32) -> Connection {
    let mut c = client(cfg, 2);
    let _ = drain(&mut c, t(600));
    c.handle_timeout(t(2400));
    assert_eq!(drain(&mut c, t(2400)), vec![1]);
    c.handle_packet(t(3000), &ack(2, &[]));
    assert_eq!(c.ssthresh(), 2);
    c.send(u64::from(out * MSS));
    assert_eq!(drain(&mut c, t(3000)).len() as u32, out);
    c.send(u64::from(unsent * MSS));
    c
}

#[test]
fn modified_fast_retransmit_needs_thin_sack_and_nothing_unsent() {
    let cfg = TcpConfig {
        thin_dupack: true,
        ..iw(4)
    };
    // Two out (3, 4), nothing unsent, segment 4 SACKed: tcp_dupack_heuristics = sacked_out +
    // 1 = 2 > 1: Recovery at once.
    let mut c = thin_after_rto(cfg.clone(), 2, 0);
    c.handle_packet(t(3700), &ack(2, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(drain(&mut c, t(3700)), vec![3]);
    // Something written and not sent (cwnd 2 holds it): `tcp_send_head` is set, no mFR.
    let mut c = thin_after_rto(cfg.clone(), 2, 1);
    c.handle_packet(t(3700), &ack(2, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    // With FACK the heuristic is fackets_out: segment 4 SACKed makes it 2 > 1 as well.
    let mut c = thin_after_rto(TcpConfig { fack: true, ..cfg }, 2, 0);
    c.handle_packet(t(3700), &ack(2, &[(4, 4)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
}

#[test]
fn linear_timeouts_only_while_thin() {
    // Linear timeouts with 4 segments out: not thin (packets_out < 4 fails), so the RTO
    // doubles as usual: 600 + 1800 = 2400, then 2400 + 3600.
    let cfg = TcpConfig {
        thin_linear_timeouts: true,
        ..iw(4)
    };
    let mut c = client(cfg.clone(), 4);
    assert_eq!(drain(&mut c, t(600)).len(), 4);
    c.handle_timeout(t(2400));
    assert_eq!(c.poll_timeout(), Some(t(6000)));
    // Three out: thin; the RTO stays srtt + rttvar = 1800: 2400 + 1800.
    let mut c = client(cfg, 3);
    assert_eq!(drain(&mut c, t(600)).len(), 3);
    c.handle_timeout(t(2400));
    assert_eq!(c.poll_timeout(), Some(t(4200)));
}

// ---------------------------------------------------------------------------------------------
// The profile.

#[test]
fn profile_linux_316_with_overrides() {
    let c = TcpConfig::from_toml("profile = \"linux-3.16\"").unwrap();
    assert_eq!(c, TcpConfig::linux_3_16());
    assert_eq!(c.congestion_control, CongestionControl::Cubic);
    assert!(c.hystart && c.prr && c.tlp && c.sack && c.dsack && c.fack && c.timestamps);
    assert_eq!(c.early_retransmit, EarlyRetransmit::Delayed);
    assert_eq!(c.initial_window, InitialWindow::Segments(10));
    assert_eq!(c.rto_initial, Dur::from_secs(1));
    // A key beside the profile wins; the rest stays the profile's.
    let c =
        TcpConfig::from_toml("profile = \"linux-3.16\"\ninitial_window = 2\ntlp = false").unwrap();
    assert_eq!(c.initial_window, InitialWindow::Segments(2));
    assert!(!c.tlp && c.prr);
    // Reno beside the profile drops the profile's HyStart (part of CUBIC); written, it is an
    // error.
    let c =
        TcpConfig::from_toml("profile = \"linux-3.16\"\ncongestion_control = \"reno\"").unwrap();
    assert!(!c.hystart && c.prr);
    let e = TcpConfig::from_toml(
        "profile = \"linux-3.16\"\ncongestion_control = \"reno\"\nhystart = true",
    )
    .unwrap_err();
    assert_eq!(e.key, "hystart", "{e}");
    // No profile: the seeds' baseline, exactly.
    assert_eq!(TcpConfig::from_toml("").unwrap(), TcpConfig::default());
    // Bad input names the key.
    let e = TcpConfig::from_toml("profile = \"linux-9\"").unwrap_err();
    assert_eq!(e.key, "profile", "{e}");
    let e = TcpConfig::from_toml("congestion_control = \"bbr\"").unwrap_err();
    assert_eq!(e.key, "congestion_control", "{e}");
    assert!(e.message.contains("cubic"), "{e}");
    let e = TcpConfig::from_toml("hystart = true").unwrap_err();
    assert_eq!(e.key, "hystart", "{e}");
    let e = TcpConfig::from_toml("profile = \"linux-3.16\"\nsack = false").unwrap_err();
    assert_eq!(e.key, "fack", "{e}");
    let e = TcpConfig::from_toml("tlp = true\nsack = false").unwrap_err();
    assert_eq!(e.key, "tlp", "{e}");
    let e = TcpConfig::from_toml("rack = true\nsack = false").unwrap_err();
    assert_eq!(e.key, "rack", "{e}");
    let e = TcpConfig::from_toml("cwnd_limited = \"linux317\"").unwrap_err();
    assert_eq!(e.key, "cwnd_limited", "{e}");
    assert_eq!(
        TcpConfig::from_toml("cwnd_limited = \"always\"")
            .unwrap()
            .cwnd_limited,
        CwndLimited::Linux24
    );
    // IW 10 (RFC 6928) is allowed now, 11 is not.
    TcpConfig::from_toml("initial_window = 10").unwrap();
    assert_eq!(
        TcpConfig::from_toml("initial_window = 11").unwrap_err().key,
        "initial_window"
    );
}

// ---------------------------------------------------------------------------------------------
// RACK (RFC 8985).

fn rack() -> TcpConfig {
    TcpConfig {
        rack: true,
        ..iw(4)
    }
}

#[test]
fn rack_marks_by_time_on_one_sack() {
    // Segment 1 at 600, segment 2 at 1000; the SACK of 2 at 1300: RACK.rtt = 300, min_RTT
    // 300, reo_wnd = min(300/4, srtt 600) = 75 ms. Segment 1 was sent before 2 and 600 + 300
    // + 75 = 975 <= 1300: lost at once, Recovery on a single SACK.
    let mut c = client(rack(), 1);
    assert_eq!(drain(&mut c, t(600)), vec![1]);
    c.send(u64::from(MSS));
    assert_eq!(drain(&mut c, t(1000)), vec![2]);
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(drain(&mut c, t(1300)), vec![1]);
    // That retransmission is lost too. Segment 3 goes at 1400 (cwnd 2, in flight 1) and is
    // SACKed at 1700: RACK.rtt 300; in Recovery reo_wnd = 0; the retransmission of 1 (sent
    // 1300) is past 1300 + 300 = 1600 <= 1700: lost again, and sent a third time.
    c.send(u64::from(MSS));
    assert_eq!(drain(&mut c, t(1400)), vec![3]);
    c.handle_packet(t(1700), &ack(0, &[(2, 3)]));
    assert_eq!(drain(&mut c, t(1700)), vec![1]);
    // Without RACK: one SACK is Disorder, and nothing goes before the RTO at 2400.
    let mut c = client(iw(4), 1);
    let _ = drain(&mut c, t(600));
    c.send(u64::from(MSS));
    let _ = drain(&mut c, t(1000));
    c.handle_packet(t(1300), &ack(0, &[(2, 2)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(1300)), Vec::<u32>::new());
    assert_eq!(c.poll_timeout(), Some(t(2400)));
}

#[test]
fn rack_reordering_timer() {
    // Three segments at 600; the SACK of 3 at 1300: RACK.rtt 700, reo_wnd = 700/4 = 175.
    // Segments 1 and 2 (sent at the same time, lower sequence: "before") are due at
    // 600 + 700 + 175 = 1475: the reordering timer replaces the RTO until then.
    let mut c = client(rack(), 3);
    assert_eq!(drain(&mut c, t(600)), vec![1, 2, 3]);
    c.handle_packet(t(1300), &ack(0, &[(3, 3)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(c.poll_timeout(), Some(t(1475)));
    // At 1475 both are lost: Recovery (ssthresh = max(3/2, 2) = 2 = cwnd), and with nothing in
    // flight both go. The RTO is back, from the retransmission of the head: 1475 + 1800.
    c.handle_timeout(t(1475));
    assert_eq!(c.ca_state(), CaState::Recovery);
    assert_eq!(c.stats().rack_recoveries, 1);
    assert_eq!(drain(&mut c, t(1475)), vec![1, 2]);
    assert_eq!(c.poll_timeout(), Some(t(3275)));
    // Segment 1 arrives after all at 1400 (reordering): the ACK cancels the timer.
    let mut c = client(rack(), 3);
    let _ = drain(&mut c, t(600));
    c.handle_packet(t(1300), &ack(0, &[(3, 3)]));
    c.handle_packet(t(1400), &ack(2, &[(3, 3)]));
    assert_eq!(c.ca_state(), CaState::Disorder);
    assert_eq!(drain(&mut c, t(1400)), Vec::<u32>::new());
    assert_eq!(c.stats().retransmits, 0);
}
