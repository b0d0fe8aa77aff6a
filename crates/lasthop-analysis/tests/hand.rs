//! Hand-built captures with every counter checked by hand.

mod common;

use common::*;
use lasthop_analysis::{self as la, ConnStats, DataDir};

fn analyze(segs: &[Seg], fmt: Format) -> Vec<ConnStats> {
    la::analyze_reader(&pcap_bytes(segs, fmt)[..]).unwrap()
}

/// Every number below is worked out from `hand_script` by tcptrace's rules.
fn check_hand(c: &ConnStats, t0_ns: u64) {
    assert_eq!(c.id, 1);
    assert_eq!(c.client.to_string(), "198.18.0.1:5001");
    assert_eq!(c.server.to_string(), "198.19.0.1:80");
    assert!(c.syn_seen);
    assert_eq!(c.client_isn, Some(1000));
    assert!(c.complete());
    assert_eq!(c.start.0 - t0_ns, 0);
    assert_eq!(c.end().0 - t0_ns, 2_141_000_000);
    assert_eq!(c.elapsed().0, 2_141_000_000);
    assert_eq!(c.data_dir(), DataDir::ServerToClient);
    assert_eq!(c.bytes(), 800);
    assert!((c.throughput_bytes_per_s() - 800.0 / 2.141).abs() < 1e-9);

    let s = &c.s2c;
    assert_eq!(s.packets, 16);
    assert_eq!(s.data_pkts, 12);
    assert_eq!(s.data_bytes, 1200);
    assert_eq!(s.unique_bytes, 800);
    assert_eq!(s.rexmt_pkts, 4);
    assert_eq!(s.rexmt_bytes, 400);
    assert_eq!(s.out_of_order, 0);
    // the three SACK dupacks, the D-SACK ACK and the client's FIN (after its ACK of the
    // server's FIN) repeat an ACK without data: 5 (the request after the handshake ACK carries
    // data, so it does not count)
    assert_eq!(s.dupacks, 5);
    assert_eq!(s.triple_dupacks, 1);
    assert_eq!(s.fast_rexmts, 1);
    assert_eq!(s.rtos, 1);
    // samples: SYN, D1, D8, FIN (100 ms each); D6 and D7 were retransmitted (ambiguous)
    assert_eq!(s.rtt.samples, 4);
    assert_eq!((s.rtt.min_ns, s.rtt.max_ns), (100_000_000, 100_000_000));
    assert_eq!(s.rtt.ambiguous, 2);
    assert_eq!((s.syns, s.fins, s.rsts), (1, 1, 0));
    assert_eq!(s.sack_blocks, 0);

    let k = &c.c2s;
    assert_eq!(k.packets, 14);
    assert_eq!(k.data_pkts, 1);
    assert_eq!(k.unique_bytes, 50);
    assert_eq!(k.rexmt_pkts, 0);
    // every server segment after the ACK of the request repeats ACK 1051, but only the FIN
    // carries no data
    assert_eq!(k.dupacks, 1);
    assert_eq!(k.triple_dupacks, 0);
    assert_eq!(k.rtos, 0);
    assert_eq!(k.sack_pkts, 4);
    assert_eq!(k.sack_blocks, 4);
    assert_eq!(k.dsack_blocks, 1);
    assert_eq!(k.rtt.samples, 3);
    assert_eq!(k.pure_acks, 11);
    assert_eq!((k.syns, k.fins), (1, 1));
    assert!(!c.events_joined);
}

#[test]
fn hand_capture_every_counter() {
    let script = hand_script();
    let conns = analyze(&script, Format::SimHeaderOnly);
    assert_eq!(conns.len(), 1);
    check_hand(&conns[0], 0);
}

#[test]
fn same_numbers_in_every_link_type_resolution_and_format() {
    let script = hand_script();
    let base = 1_700_000_000_000_000_000u64;
    for fmt in [
        Format::RawMicro,
        Format::EthernetMicro,
        Format::SllNano,
        Format::Ipv4Micro,
        Format::PcapNgMicro,
        Format::PcapNgNanoHeaders,
    ] {
        let conns = analyze(&script, fmt);
        assert_eq!(conns.len(), 1, "{fmt:?}");
        check_hand(&conns[0], base);
    }
}

#[test]
fn csv_has_the_leading_columns_and_values() {
    let conns = analyze(&hand_script(), Format::SimHeaderOnly);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("connections.csv");
    la::write_connections_csv(&path, &conns).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(
        "conn,client,server,start_s,end_s,elapsed_s,bytes,throughput_Bps,data_pkts,rexmt_pkts,dupacks,triple_dupacks,rtos,sack_blocks,drops_queue,drops_error,"
    ));
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cols: Vec<&str> = header.split(',').collect();
    assert_eq!(row.len(), cols.len());
    let get = |name: &str| row[cols.iter().position(|c| *c == name).unwrap()];
    assert_eq!(get("conn"), "1");
    assert_eq!(get("client"), "198.18.0.1:5001");
    assert_eq!(get("elapsed_s"), "2.141000");
    assert_eq!(get("bytes"), "800");
    assert_eq!(get("throughput_Bps"), "373.657");
    assert_eq!(get("data_pkts"), "12");
    assert_eq!(get("rexmt_pkts"), "4");
    assert_eq!(get("rexmt_bytes"), "400");
    assert_eq!(get("dupacks"), "5");
    assert_eq!(get("triple_dupacks"), "1");
    assert_eq!(get("rtos"), "1");
    assert_eq!(get("sack_blocks"), "4");
    assert_eq!(get("dsack_blocks"), "1");
    // no event log: drops unknown, not zero
    assert_eq!(get("drops_queue"), "");
    assert_eq!(get("spurious_rexmt"), "");
    assert_eq!(get("rtt_avg_ms"), "100.000");
    assert_eq!(get("complete"), "1");
    assert_eq!(get("data_dir"), "s2c");
    assert!(lines.next().is_none());
}

#[test]
fn no_syn_seen_first_sender_is_client() {
    // A capture that starts mid-connection: the first sender is taken as the client.
    let script: Vec<Seg> = hand_script().into_iter().skip(5).collect();
    let conns = analyze(&script, Format::RawMicro);
    assert_eq!(conns.len(), 1);
    let c = &conns[0];
    assert!(!c.syn_seen);
    assert_eq!(c.client.to_string(), "198.19.0.1:80");
    assert!(!c.complete());
    // The server's FIN is the "client's" FIN here; it is acked at 2040 ms.
    assert_eq!(
        c.fin_acked.map(|t| t.0 % 1_000_000_000_000),
        Some(2_040_000_000)
    );
}

#[test]
fn syn_ack_first_makes_its_receiver_the_client() {
    let script: Vec<Seg> = hand_script().into_iter().skip(1).collect();
    let c = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(c.client.to_string(), "198.18.0.1:5001");
    assert!(!c.syn_seen);
}

#[test]
fn two_connections_and_port_reuse() {
    let (c, s) = (true, false);
    let mut script = vec![
        seg(0, c, 100).syn().ports(6000, 80),
        seg(1, s, 900).syn().ack(101).ports(6000, 80),
        seg(2, c, 100).syn().ports(6001, 80),
        seg(3, c, 101).ack(901).len(10).ports(6000, 80),
        seg(4, s, 900).syn().ack(101).ports(6001, 80),
        seg(5, s, 901).ack(111).fin().ports(6000, 80),
        seg(6, c, 111).ack(902).fin().ports(6000, 80),
        seg(7, s, 902).ack(112).ports(6000, 80),
    ];
    // the same 4-tuple again with a new ISN: a third connection
    script.push(seg(100, c, 7000).syn().ports(6000, 80));
    script.push(seg(101, s, 100).syn().ack(7001).ports(6000, 80));
    let conns = analyze(&script, Format::RawMicro);
    assert_eq!(conns.len(), 3);
    assert_eq!(conns[0].client.port(), 6000);
    assert_eq!(conns[1].client.port(), 6001);
    assert_eq!(conns[2].client.port(), 6000);
    assert!(conns[0].complete());
    assert_eq!(conns[0].elapsed().0, 7_000_000);
    assert_eq!(conns[0].c2s.unique_bytes, 10);
    assert_eq!(conns[0].data_dir(), DataDir::ClientToServer);
    assert_eq!(conns[2].c2s.packets, 1);
    assert_eq!(conns[2].c2s.rexmt_pkts, 0);
}

#[test]
fn syn_retransmission_is_an_rto_and_a_rexmt() {
    let (c, s) = (true, false);
    let script = vec![
        seg(0, c, 100).syn(),
        seg(3000, c, 100).syn(),
        seg(3100, s, 900).syn().ack(101),
        seg(3200, c, 101).ack(901),
    ];
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.c2s.syns, 2);
    assert_eq!(k.c2s.rexmt_pkts, 1);
    assert_eq!(k.c2s.rexmt_bytes, 1);
    assert_eq!(k.c2s.rtos, 1);
    assert_eq!(k.c2s.unique_bytes, 0);
    assert_eq!(k.start.0 % 1_000_000_000_000, 0);
}

#[test]
fn zero_window_probe_is_not_a_retransmission() {
    let (c, s) = (true, false);
    let script = vec![
        seg(0, c, 100).syn(),
        seg(1, s, 900).syn().ack(101),
        seg(2, c, 101).ack(901),
        seg(3, s, 901).ack(101).len(100),
        seg(4, c, 101).ack(1001).window(0),
        seg(500, s, 1001).ack(101).len(1),
        seg(1500, s, 1001).ack(101).len(1),
    ];
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.s2c.zwnd_probes, 2);
    assert_eq!(k.s2c.rexmt_pkts, 0);
    assert_eq!(k.s2c.data_pkts, 3);
    assert_eq!(k.s2c.unique_bytes, 100);
}

#[test]
fn dsack_inside_second_block() {
    let (c, s) = (true, false);
    let script = vec![
        seg(0, c, 100).syn(),
        seg(1, s, 900).syn().ack(101),
        seg(2, c, 101).ack(901).sack(&[(1100, 1200), (1000, 1300)]),
        seg(3, c, 101).ack(901).sack(&[(1000, 1100), (1200, 1300)]),
        seg(4, c, 101).ack(901).sack(&[(800, 901)]),
    ];
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.c2s.sack_pkts, 3);
    assert_eq!(k.c2s.sack_blocks, 5);
    assert_eq!(k.c2s.dsack_blocks, 2);
}

#[test]
fn simulator_packets_feed_the_analyzer_directly() {
    let mut an = la::Analyzer::default();
    for s in hand_script() {
        let full = s.ip_bytes();
        let p =
            lasthop_core::Packet::with_wire_len(full[..s.header_len()].to_vec(), full.len() as u32);
        an.packet(lasthop_core::Time(s.t_ms * 1_000_000), &p);
    }
    let conns = an.finish();
    check_hand(&conns[0], 0);
}

/// A handshake (client ISN 100, server ISN 900) and five 100-byte server segments sent at
/// 300–304 ms (sequence numbers 901, 1001, ..., 1301).
fn handshake_and_five_segments() -> Vec<Seg> {
    let (c, s) = (true, false);
    let mut script = vec![
        seg(0, c, 100).syn(),
        seg(100, s, 900).syn().ack(101),
        seg(200, c, 101).ack(901),
    ];
    for k in 0..5u32 {
        script.push(seg(300 + u64::from(k), s, 901 + k * 100).ack(101).len(100));
    }
    script
}

#[test]
fn rto_after_a_failed_fast_retransmit_and_tail_probe_is_not_rto() {
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments();
    // segment 1 lost: 4 dupacks, fast retransmit, which is lost too
    for k in 0..4u64 {
        script.push(seg(400 + k, c, 101).ack(901));
    }
    script.push(seg(405, s, 901).ack(101).len(100)); // fast retransmit
                                                     // silence, then the timer: the same segment again
    script.push(seg(1405, s, 901).ack(101).len(100)); // RTO (failed recovery)
    script.push(seg(1505, c, 101).ack(1401));
    // a tail loss probe resends the last segment, not the first unacknowledged one
    script.push(seg(1506, s, 1401).ack(101).len(100));
    script.push(seg(1507, s, 1501).ack(101).len(100));
    script.push(seg(1800, s, 1501).ack(101).len(100)); // probe: not an RTO
    script.push(seg(1900, c, 101).ack(1601));
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.s2c.rexmt_pkts, 3);
    assert_eq!(k.s2c.dupacks, 4);
    assert_eq!(k.s2c.triple_dupacks, 1);
    assert_eq!(k.s2c.fast_rexmts, 1);
    assert_eq!(k.s2c.rtos, 1);
}

#[test]
fn timeout_resending_a_retransmission_sent_before_the_ack_reached_it_is_an_rto() {
    // Segments 1 and 3 of five are lost. Three SACK dupacks; the sender retransmits both holes
    // at once (SACK recovery), and the retransmission of 3 is lost too. The ACK of 1's
    // retransmission reaches 3 (which was retransmitted before it got there), SACKs follow,
    // then a silence and the timer resends 3: an RTO. The old rule ("retransmitted since the
    // ACK last advanced") called it a fast retransmit: no retransmission of 3 since the advance
    // to it, and three dupacks (new data SACKed) after it.
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments();
    // 1 (901) and 3 (1101) lost: SACKs for 2, then 4 and 5.
    script.push(seg(400, c, 101).ack(901).sack(&[(1001, 1101)]));
    script.push(
        seg(402, c, 101)
            .ack(901)
            .sack(&[(1201, 1301), (1001, 1101)]),
    );
    script.push(
        seg(403, c, 101)
            .ack(901)
            .sack(&[(1201, 1401), (1001, 1101)]),
    );
    script.push(seg(404, s, 901).ack(101).len(100)); // fast retransmit of 1
    script.push(seg(405, s, 1101).ack(101).len(100)); // 3 retransmitted, lost again
    script.push(seg(504, c, 101).ack(1101).sack(&[(1201, 1401)])); // reaches 3
                                                                   // New data 6, 7, 8 brings three more dupacks at 3.
    for k in 0..3u32 {
        script.push(seg(505 + u64::from(k), s, 1401 + k * 100).ack(101).len(100));
    }
    for k in 0..3u32 {
        let sack = (1201, 1501 + k * 100);
        script.push(seg(605 + u64::from(k), c, 101).ack(1101).sack(&[sack]));
    }
    // silence, then the timer: 3 a second time
    script.push(seg(1607, s, 1101).ack(101).len(100)); // RTO
    script.push(seg(1707, c, 101).ack(1701));
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.s2c.rexmt_pkts, 3);
    assert_eq!(k.s2c.triple_dupacks, 2, "at 1, then at 3");
    assert_eq!(
        k.s2c.fast_rexmts, 2,
        "1 and the first of 3, after three dupacks"
    );
    assert_eq!(k.s2c.rtos, 1);
}

#[test]
fn timeout_after_three_dupacks_that_brought_no_fast_retransmit_is_an_rto() {
    // Segment 1 of five is lost and 2-4 bring three dupacks, but the sender does not fast
    // retransmit (Linux after D-SACK raised its dupthresh; Linux 2.4 with in_flight >= cwnd).
    // Its RTT is 100 ms (the SYN-ACK at 100 acknowledged at 200), so the timer resending 1 a
    // second after the third dupack (and 997 ms after the last ACK) is an RTO. The rule before
    // session 17 called it a fast retransmit: three dupacks, and 1 never retransmitted before.
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments();
    for k in 0..3u64 {
        script.push(seg(400 + k, c, 101).ack(901));
    }
    script.push(seg(1402, s, 901).ack(101).len(100)); // the timer
    script.push(seg(1502, c, 101).ack(1401));
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.s2c.triple_dupacks, 1);
    assert_eq!(k.s2c.rexmt_pkts, 1);
    assert_eq!(k.s2c.rtos, 1);
    assert_eq!(k.s2c.fast_rexmts, 0);
}

#[test]
fn paced_fast_retransmit_within_an_rtt_of_the_third_dupack_is_not_an_rto() {
    // A slow link: the handshake's RTT is 2 s (SYN-ACK at 0 acknowledged at 2000), so a sender
    // pacing at about cwnd per RTT may send its fast retransmit 300 ms after the third dupack,
    // with no ACK in between. That is more than rto_gap (200 ms) after the last ACK, but less
    // than an RTT after the third dupack: a fast retransmit.
    let (c, s) = (true, false);
    let mut script = vec![seg(0, s, 900).syn().ack(101), seg(2000, c, 101).ack(901)];
    for k in 0..5u32 {
        script.push(seg(2100 + u64::from(k), s, 901 + k * 100).ack(101).len(100));
    }
    for k in 0..3u64 {
        script.push(seg(4100 + 100 * k, c, 101).ack(901));
    }
    script.push(seg(4500, s, 901).ack(101).len(100)); // paced: 300 ms after the third dupack
    script.push(seg(6500, c, 101).ack(1401));
    let k = &analyze(&script, Format::RawMicro)[0];
    assert_eq!(k.s2c.triple_dupacks, 1);
    assert_eq!(k.s2c.rexmt_pkts, 1);
    assert_eq!(k.s2c.fast_rexmts, 1);
    assert_eq!(k.s2c.rtos, 0);
}

/// The s2c RTOs the inference finds in `script` with the stack-aware rules `rack` and `tlp`.
fn rtos_with(script: &[Seg], rack: bool, tlp: bool) -> u64 {
    let bytes = pcap_bytes(script, Format::RawMicro);
    let opts = la::Options {
        rack,
        tlp,
        ..la::Options::default()
    };
    la::analyze_reader_with(&bytes[..], "x", opts)
        .unwrap()
        .conns[0]
        .s2c
        .rtos
}

#[test]
fn resend_that_racks_reordering_timer_explains_is_not_an_rto_for_a_rack_sender() {
    // Segment 1 of five (sent at 300 ms) is lost; at 400 one SACK reports segment 2 (sent at
    // 301: RACK's RTT 99 ms) and then nothing comes. At 700 the sender resends segment 1, 400
    // ms after it was sent: RACK's deadline (300 + 99 ms plus a reordering window) has passed,
    // so a RACK sender's reordering timer explains it. The timing rule alone (one dupack, 300
    // ms without an ACK) calls it an RTO.
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments();
    script.push(seg(400, c, 101).ack(901).sack(&[(1001, 1101)]));
    script.push(seg(700, s, 901).ack(101).len(100));
    script.push(seg(800, c, 101).ack(1401));
    assert_eq!(rtos_with(&script, false, false), 1);
    assert_eq!(rtos_with(&script, true, false), 0);
    // Segment 2 sent in the same instant as segment 1 (a burst; the capture's clock ties them):
    // RACK takes the higher sequence as the later one (`tcp_rack_sent_after`).
    let mut tied = script.clone();
    tied[4] = seg(300, s, 1001).ack(101).len(100);
    assert_eq!(rtos_with(&tied, true, false), 0);
    // The same dupack without a SACK block: RACK has nothing delivered after segment 1 to
    // time it against, and the resend is the timer's.
    let mut plain = handshake_and_five_segments();
    plain.push(seg(400, c, 101).ack(901));
    plain.extend_from_slice(&script[script.len() - 2..]);
    assert_eq!(rtos_with(&plain, true, false), 1);
}

#[test]
fn first_resend_of_the_only_segment_outstanding_is_a_tail_loss_probe() {
    // One segment (sent at 300 ms, nothing else outstanding, no ACK since): a sender with tail
    // loss probes sends its probe first (2 srtt = 200 ms on, at most the RTO), which resends
    // that segment at 600; the RTO resends it again at 1000. Without probes both are RTOs.
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments()[..4].to_vec(); // the handshake and segment 1
    script.push(seg(600, s, 901).ack(101).len(100));
    script.push(seg(1000, s, 901).ack(101).len(100));
    script.push(seg(1100, c, 101).ack(1001));
    assert_eq!(rtos_with(&script, false, false), 2);
    assert_eq!(rtos_with(&script, false, true), 1);
    // With two segments out the probe may have been new data, which the capture cannot tell
    // from the application's: the head's resend stays an RTO.
    script.insert(4, seg(301, s, 1001).ack(101).len(100));
    script.pop();
    script.push(seg(1100, c, 101).ack(1101));
    assert_eq!(rtos_with(&script, false, true), 2);
}

#[test]
fn resend_of_the_only_segment_outstanding_in_recovery_is_an_rto_not_a_probe() {
    // Six segments at 300-305 ms; the 2nd and the 6th are lost. Three SACK duplicate ACKs
    // (401-403) bring the 2nd's fast retransmit at 403; the ACK at 500 covers everything up to
    // the 6th, which is then the only segment outstanding, but the sender is still in Recovery
    // (its high_seq, 1501, is not acknowledged), where Linux schedules no loss probe: the
    // resend at 1500 is the RTO's. (Before the recovery point was kept it looked like a probe.)
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments();
    script.push(seg(305, s, 1401).ack(101).len(100));
    script.push(seg(400, c, 101).ack(1001));
    for k in 0..3u32 {
        script.push(
            seg(401 + u64::from(k), c, 101)
                .ack(1001)
                .sack(&[(1101, 1201 + 100 * k)]),
        );
    }
    script.push(seg(403, s, 1001).ack(101).len(100)); // the fast retransmit
    script.push(seg(500, c, 101).ack(1401));
    script.push(seg(1500, s, 1401).ack(101).len(100)); // the timer
    script.push(seg(1600, c, 101).ack(1501));
    assert_eq!(rtos_with(&script, false, true), 1);
    assert_eq!(rtos_with(&script, false, false), 1);
}

#[test]
fn timer_resending_a_lost_retransmission_between_sack_acks_is_an_rto() {
    // Segment 1 of five (at 300 ms) is lost; three SACK dupacks (400-402) bring its fast
    // retransmit at 402, which is lost too. The receiver keeps acknowledging new data with
    // SACKs every 50 ms (the sender sends a segment per ACK), so 100 ms (rto_gap / 2) never
    // pass without an ACK; at 1030, 30 ms after one and not at any, the timer resends segment
    // 1 again, 628 ms after its retransmission: an RTO. A sender with a delayed early
    // retransmit could send that from its RTT/4 timer, so with `delayed_er` rule 3 holds.
    let (c, s) = (true, false);
    let mut script = handshake_and_five_segments();
    for k in 0..3u64 {
        let end = 1101 + 100 * k as u32;
        script.push(seg(400 + k, c, 101).ack(901).sack(&[(1001, end)]));
    }
    script.push(seg(402, s, 901).ack(101).len(100)); // the fast retransmit, lost
    for k in 0..12u32 {
        let t = 450 + 50 * u64::from(k);
        script.push(seg(t, c, 101).ack(901).sack(&[(1001, 1401 + 100 * k)]));
        script.push(seg(t, s, 1401 + 100 * k).ack(101).len(100));
    }
    script.push(seg(1030, s, 901).ack(101).len(100)); // the timer
    script.push(seg(1130, c, 101).ack(2601));
    let opts = |delayed_er| la::Options {
        delayed_er,
        ..la::Options::default()
    };
    let bytes = pcap_bytes(&script, Format::RawMicro);
    let k = &la::analyze_reader_with(&bytes[..], "x", opts(false))
        .unwrap()
        .conns[0];
    assert_eq!(k.s2c.rexmt_pkts, 2);
    assert_eq!(k.s2c.fast_rexmts, 1);
    assert_eq!(k.s2c.rtos, 1);
    let k = &la::analyze_reader_with(&bytes[..], "x", opts(true))
        .unwrap()
        .conns[0];
    assert_eq!((k.s2c.fast_rexmts, k.s2c.rtos), (2, 0));
    // The same resend right at an ACK is the ACK's doing (2.4's lost-retransmit detection):
    // not an RTO.
    let at_ack = script.len() - 2;
    script[at_ack] = seg(1000, s, 901).ack(101).len(100);
    let bytes = pcap_bytes(&script, Format::RawMicro);
    let k = &la::analyze_reader_with(&bytes[..], "x", opts(false))
        .unwrap()
        .conns[0];
    assert_eq!((k.s2c.fast_rexmts, k.s2c.rtos), (2, 0));
}

#[test]
fn partial_transfer_time() {
    let bytes = pcap_bytes(&hand_script(), Format::SimHeaderOnly);
    let opts = la::Options {
        partial_bytes: 300,
        ..la::Options::default()
    };
    let c = &la::analyze_reader_with(&bytes[..], "x", opts)
        .unwrap()
        .conns[0];
    // ACK 5101 covers 100 bytes (420 ms), ACK 5501 covers 500 (525 ms): 525 ms from the SYN;
    // the throughput counts from the first data segment (D1 at 320 ms), 300 B in 205 ms.
    assert_eq!(c.partial_elapsed().map(|d| d.0), Some(525_000_000));
    assert!((c.partial_throughput_bytes_per_s().unwrap() - 300.0 / 0.205).abs() < 1e-9);
    // D2's fast retransmit (425 ms) came before the ACK at 525 ms, D6's RTO after.
    assert_eq!(c.s2c.partial_rexmt_pkts, 1);
    assert_eq!(c.s2c.rexmt_pkts, 4, "D2, D6, D7 and D8 again");
    let c = &analyze(&hand_script(), Format::SimHeaderOnly)[0];
    assert_eq!(c.partial_bytes, 10_240);
    assert_eq!(c.partial_elapsed(), None);
    // Never reached: every retransmission counts before it (partial_rexmt_pkts, before
    // spurious_rtos, which is empty without an event log, and the scenario's flow and hosts,
    // empty without a scenario).
    assert!(la::csv_row(c).ends_with(",,,4,,,,,"), "{}", la::csv_row(c));
}

#[test]
fn long_listing_names_every_counter() {
    let conns = analyze(&hand_script(), Format::SimHeaderOnly);
    let text = la::format_long(&conns);
    assert!(text.contains("connection 1: 198.18.0.1:5001 -> 198.19.0.1:80  (complete, data s2c)"));
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
            .split_whitespace()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
    };
    assert_eq!(line("rexmt pkts"), ["4", "0"]);
    assert_eq!(line("dupacks received"), ["5", "1"]);
    assert_eq!(line("D-SACK blocks sent"), ["0", "1"]);
    assert_eq!(line("RTOs (inferred)"), ["1", "0"]);
}
