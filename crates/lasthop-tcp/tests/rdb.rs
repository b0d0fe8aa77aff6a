//! Redundant Data Bundling (seed 003 §3), worked by hand: how much a packet carries (v2's
//! MSS, byte and segment limits), the thin tests (SPIFL, DPIFL), a loss hidden by the next
//! packet (receiver delivers at once; the sender counts a hidden loss and reacts by CWR or by
//! the TFRC-SP cwnd), v1's bundling and its retransmission carrying the following data, the
//! receiver's quick ACK of a partly duplicate segment, and the keys' errors.

mod common;

use common::addrs;
use lasthop_core::{Dur, Packet, Time};
use lasthop_tcp::wire::{Segment, ACK, SYN};
use lasthop_tcp::{CaState, Connection, Event, TcpConfig, TraceRecord};

const ISS: u32 = 1000;
const PEER_ISS: u32 = 7000;

fn ms(x: u64) -> Time {
    Time(x * 1_000_000)
}

/// One data packet the sender put on the wire.
#[derive(Clone, Copy, Debug)]
struct Pkt {
    t: Time,
    /// First data byte (0-based application offset).
    off: u64,
    len: u64,
    dropped: bool,
}

impl Pkt {
    fn end(&self) -> u64 {
        self.off + self.len
    }
}

struct Run {
    sender: Connection,
    sent: Vec<Pkt>,
    /// (time, bytes delivered in order so far) at the receiver.
    delivered: Vec<(Time, u64)>,
    trace: Vec<TraceRecord>,
    /// When the first write happened (the sender's handshake completed).
    t0: Time,
}

/// A sender (the client) and a receiver joined by a wire with `one_way` ms of delay each way
/// and no serialization. From the moment the handshake completes, the sender writes `write`
/// bytes every `itt` ms, `writes` times. Data packets whose index (0-based, retransmissions
/// counted) is in `drop` are lost.
fn run(
    scfg: &str,
    rcfg: &str,
    one_way: u64,
    itt: u64,
    write: u64,
    writes: u64,
    drop: &[usize],
) -> Run {
    let scfg = TcpConfig::from_toml(scfg).unwrap();
    let rcfg = TcpConfig::from_toml(rcfg).unwrap();
    let (c, s) = addrs();
    let mut sender = Connection::connect(Time::ZERO, c, s, scfg, ISS);
    let mut receiver: Option<Connection> = None;
    let delay = Dur::from_millis(one_way);
    let mut wire: Vec<(Time, u64, bool, Packet)> = Vec::new();
    let mut order = 0u64;
    let (mut sent, mut delivered, mut trace) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0u64;
    let mut t0: Option<Time> = None;
    let mut written = 0u64;
    let mut now = Time::ZERO;
    let until = ms(itt * writes + 20_000);
    loop {
        while let Some(e) = sender.poll_event() {
            if e == Event::Connected {
                t0 = Some(now);
            }
        }
        if let Some(t0) = t0 {
            while written < writes && t0 + Dur::from_millis(itt * written) <= now {
                sender.send(write);
                written += 1;
            }
        }
        while let Some(p) = sender.poll_transmit(now) {
            let seg = Segment::decode(&p).unwrap();
            let mut dropped = false;
            if seg.payload > 0 {
                dropped = drop.contains(&sent.len());
                sent.push(Pkt {
                    t: now,
                    off: u64::from(seg.seq.wrapping_sub(ISS + 1)),
                    len: u64::from(seg.payload),
                    dropped,
                });
            }
            if !dropped {
                wire.push((now + delay, order, true, p));
                order += 1;
            }
        }
        trace.extend(sender.drain_trace());
        if let Some(r) = receiver.as_mut() {
            while let Some(e) = r.poll_event() {
                if let Event::Delivered(n) = e {
                    total += n;
                    delivered.push((now, total));
                }
            }
            while let Some(p) = r.poll_transmit(now) {
                wire.push((now + delay, order, false, p));
                order += 1;
            }
        }
        let next_write = t0
            .filter(|_| written < writes)
            .map(|t0| t0 + Dur::from_millis(itt * written));
        let next = wire
            .iter()
            .map(|w| w.0)
            .chain(sender.poll_timeout())
            .chain(receiver.as_ref().and_then(|r| r.poll_timeout()))
            .chain(next_write)
            .min();
        let Some(t) = next.filter(|&t| t <= until) else {
            break;
        };
        now = t;
        wire.sort_by_key(|w| (w.0, w.1));
        while wire.first().is_some_and(|w| w.0 == now) {
            let (_, _, to_receiver, p) = wire.remove(0);
            if to_receiver {
                match receiver.as_mut() {
                    Some(r) => r.handle_packet(now, &p),
                    None => receiver = Connection::accept(now, &p, rcfg.clone(), PEER_ISS),
                }
            } else {
                sender.handle_packet(now, &p);
            }
        }
        sender.handle_timeout(now);
        if let Some(r) = receiver.as_mut() {
            r.handle_timeout(now);
        }
    }
    trace.extend(sender.drain_trace());
    Run {
        sender,
        sent,
        delivered,
        trace,
        t0: t0.expect("connected"),
    }
}

/// MTU 1500 with timestamps: MSS 1460 − 12 = 1448 bytes, as in the seed's testbed.
const BASE: &str = "mtu = \"1500B\"\ntimestamps = true\nnagle = false\ninitial_window = 4\n";
/// The receiver ACKs every segment at once.
const RCV_NO_DELACK: &str = "mtu = \"1500B\"\ntimestamps = true\ndelayed_ack = \"off\"\n";

fn v2(extra: &str) -> String {
    format!("{BASE}rdb = \"v2\"\n{extra}")
}

/// Payload lengths of the packets sent from `from` on (the start-up, when a small cwnd makes
/// the sender coalesce writes, is left out).
fn lens_after(r: &Run, from: Time) -> Vec<u64> {
    let v: Vec<u64> = r
        .sent
        .iter()
        .filter(|p| p.t >= from)
        .map(|p| p.len)
        .collect();
    assert!(v.len() >= 20, "a steady state to look at: {v:?}");
    v
}

#[test]
fn v2_120_byte_writes_carry_at_most_11_previous_segments() {
    // RTT 400 ms, a write every 30 ms: 13 segments are unacknowledged when one goes out
    // (30·13 = 390 < 400) (DPIFL: min srtt 400 ms / 10 ms = 40, so the stream is thin).
    // 12 × 120 = 1440 ≤ 1448 but 13 × 120 = 1560 > 1448: each packet carries the new 120 B
    // and the 11 previous segments, 1320 redundant bytes. (Until cwnd has grown to 14, one
    // segment per RTT with Linux 2.4's growth gate, the sender coalesces writes: left out.)
    let r = run(&v2(""), RCV_NO_DELACK, 200, 30, 120, 400, &[]);
    let steady = lens_after(&r, r.t0 + Dur::from_secs(8));
    assert!(steady.len() > 50);
    assert!(steady.iter().all(|&l| l == 1440), "{steady:?}");
    for p in r.sent.iter().filter(|p| p.t >= r.t0 + Dur::from_secs(8)) {
        assert_eq!(p.end() % 120, 0, "ends with the new write");
    }
    assert!(r.sent.iter().all(|p| p.len <= 1448));
    let st = r.sender.stats();
    assert_eq!(
        st.rdb_pkts_sent,
        r.sent.iter().filter(|p| p.len > 120).count() as u64
    );
    assert_eq!(
        st.rdb_bytes_sent,
        r.sent.iter().map(|p| p.len).sum::<u64>() - 400 * 120,
        "redundant bytes: all sent bytes but the 48 000 written (no retransmissions)"
    );
    assert_eq!(st.retransmits, 0);
    assert_eq!(st.rdb_hidden_losses, 0);
}

#[test]
fn v2_400_byte_writes_carry_2_previous_segments() {
    // 3 × 400 = 1200 ≤ 1448 < 4 × 400: "each packet ... will contain 1200 bytes, where 800 of
    // them are redundant" (thesis, extract §3.3).
    let r = run(&v2(""), RCV_NO_DELACK, 200, 30, 400, 400, &[]);
    let steady = lens_after(&r, r.t0 + Dur::from_secs(8));
    assert!(steady.len() > 50);
    assert!(steady.iter().all(|&l| l == 1200), "{steady:?}");
}

#[test]
fn v2_max_segments_1_bundles_exactly_one_previous() {
    // Experiment 3's limit: count starts at 1 (the new segment) and is tested before adding,
    // so one previous segment: 2 × 120 = 240 B.
    let r = run(
        &v2("rdb_max_segments = 1\n"),
        RCV_NO_DELACK,
        200,
        30,
        120,
        400,
        &[],
    );
    let steady = lens_after(&r, r.t0 + Dur::from_secs(8));
    assert!(steady.iter().all(|&l| l == 240), "{steady:?}");
    // And a byte limit of 500 B: 4 × 120 = 480 ≤ 500 < 600.
    let r = run(
        &v2("rdb_max_bytes = \"500B\"\n"),
        RCV_NO_DELACK,
        200,
        30,
        120,
        400,
        &[],
    );
    let steady = lens_after(&r, r.t0 + Dur::from_secs(8));
    assert!(steady.iter().all(|&l| l == 480), "{steady:?}");
}

#[test]
fn spifl_4_stops_bundling_at_4_packets_out() {
    // RTT 170 ms. Writes every 50 ms: when one goes out, those sent 50, 100 and 150 ms ago are
    // unacknowledged: packets_out = 3 < 4, so it carries all three (4 × 120 = 480 B).
    let r = run(
        &v2("rdb_pif_limit = 4\n"),
        RCV_NO_DELACK,
        85,
        50,
        120,
        100,
        &[],
    );
    let steady = lens_after(&r, r.t0 + Dur::from_secs(1));
    assert!(steady.iter().all(|&l| l == 480), "{steady:?}");
    // Every 40 ms: 40, 80, 120 and 160 ms ago, packets_out = 4: no bundling.
    let r = run(
        &v2("rdb_pif_limit = 4\n"),
        RCV_NO_DELACK,
        85,
        40,
        120,
        100,
        &[],
    );
    let steady = lens_after(&r, r.t0 + Dur::from_secs(1));
    assert!(steady.iter().all(|&l| l == 120), "{steady:?}");
}

#[test]
fn dpifl_limit_is_min_srtt_over_itt_min() {
    // RTT exactly 150 ms (timestamps, immediate ACKs): min srtt 150 ms. DPIFL 10 ms → limit
    // 15, DPIFL 20 ms → limit 150/20 = 7.
    // Writes every 16 ms: 9 unacknowledged (16·9 = 144 < 150 < 160). Limit 15: bundled, 10 ×
    // 120 = 1200 B; limit 7: not thin, 120 B.
    let r = run(&v2(""), RCV_NO_DELACK, 75, 16, 120, 150, &[]);
    assert_eq!(r.sender.srtt(), Some(Dur::from_millis(150)));
    let steady = lens_after(&r, r.t0 + Dur::from_secs(1));
    assert!(steady.iter().all(|&l| l == 1200), "{steady:?}");
    let r = run(
        &v2("rdb_itt_min = \"20ms\"\n"),
        RCV_NO_DELACK,
        75,
        16,
        120,
        150,
        &[],
    );
    let steady = lens_after(&r, r.t0 + Dur::from_secs(1));
    assert!(steady.iter().all(|&l| l == 120), "{steady:?}");
    // Writes every 22 ms: 6 unacknowledged (132 < 150 < 154): 6 < 7, thin: 7 × 120 = 840 B.
    let r = run(
        &v2("rdb_itt_min = \"20ms\"\n"),
        RCV_NO_DELACK,
        75,
        22,
        120,
        150,
        &[],
    );
    let steady = lens_after(&r, r.t0 + Dur::from_secs(1));
    assert!(steady.iter().all(|&l| l == 840), "{steady:?}");
}

/// Receiver as Linux 3.16 for the loss tests: delayed ACKs, but quick-ACK mode (16 segments)
/// at the start and after every partly duplicate segment; D-SACK.
const RCV_LINUX: &str =
    "mtu = \"1500B\"\ntimestamps = true\ndsack = true\nquickacks = 16\ndelayed_ack_timeout = \"200ms\"\n";

/// The hidden-loss scenario: RTT 160 ms, 120 B every 50 ms, IW 4 (never cwnd-limited: at most
/// 4 segments out), data packet `k` dropped.
fn hidden_loss_run(extra: &str, k: usize) -> Run {
    run(&v2(extra), RCV_LINUX, 80, 50, 120, k as u64 + 40, &[k])
}

#[test]
fn a_dropped_packet_arrives_in_the_next_one_and_the_sender_enters_cwr() {
    let k = 20;
    let r = hidden_loss_run("", k);
    let (lost, next) = (r.sent[k], r.sent[k + 1]);
    // Every write is its own segment: packet k ends at 120(k+1), and packet k+1 carries the
    // three unacknowledged segments k−2, k−1, k before its own: [120(k−2), 120(k+2)).
    assert!(lost.dropped);
    assert_eq!(lost.end(), 120 * (k as u64 + 1));
    assert_eq!((next.off, next.len), (120 * (k as u64 - 2), 480));
    assert_eq!(next.t, lost.t + Dur::from_millis(50));
    // The receiver delivers segments k and k+1 when packet k+1 arrives, 80 ms after it left,
    // without any retransmission.
    let at = next.t + Dur::from_millis(80);
    let got = r.delivered.iter().find(|&&(_, b)| b >= lost.end()).unwrap();
    assert_eq!(*got, (at, next.end()));
    let st = r.sender.stats();
    assert_eq!(st.retransmits, 0);
    assert_eq!(st.rdb_hidden_losses, 1);
    // Its quick ACK (with a D-SACK of the 240 duplicate bytes) covers segments k and k+1 and
    // ends at k+1, sent with RDB data: segment k counts lost; the sender enters CWR then.
    let ack_at = next.t + Dur::from_millis(160);
    let i = r
        .trace
        .iter()
        .position(|t| t.ca_state == CaState::Cwr)
        .unwrap();
    let (before, cwr) = (r.trace[i - 1], r.trace[i]);
    assert_eq!(cwr.time, ack_at);
    // cwnd grew once from IW 4 (an ACK with 4 in flight = cwnd), then never limited: 5.
    // ssthresh = max(5/4, 2) = 2 (Listing B.23), cwnd = min(5, 2) = 2.
    assert_eq!(before.cwnd, 5);
    assert_eq!((cwr.ssthresh, cwr.cwnd), (2, 2));
    assert!(r.sender.stats().dsacks_rcvd > 0);
    // All 60 writes arrive.
    assert_eq!(r.delivered.last().unwrap().1, 120 * (k as u64 + 40));
}

#[test]
fn rdb_ssthresh_quarter_or_half() {
    // A write every 20 ms at RTT 160 ms: 8 segments out, so cwnd has grown past 8 by the
    // time packet 60 is lost; the CWR that follows sets ssthresh from it.
    for (key, shift) in [("quarter", 2), ("half", 1)] {
        let r = run(
            &v2(&format!("rdb_ssthresh = \"{key}\"\n")),
            RCV_LINUX,
            80,
            20,
            120,
            100,
            &[60],
        );
        assert_eq!(r.sender.stats().rdb_hidden_losses, 1, "{key}");
        let i = r
            .trace
            .iter()
            .position(|t| t.ca_state == CaState::Cwr)
            .unwrap();
        let (before, cwr) = (r.trace[i - 1], r.trace[i]);
        assert!(before.cwnd >= 8, "{key}: {before:?}");
        // quarter: max(cwnd/4, 2); half: max(cwnd/2, 2).
        assert_eq!(cwr.ssthresh, (before.cwnd >> shift).max(2), "{key}");
        assert_eq!(cwr.cwnd, cwr.ssthresh);
    }
}

#[test]
fn tfrc_sets_cwnd_from_the_tfrc_sp_rate() {
    // 100 segments are ACKed one by one before the loss: I_1 = 100; the loss opens I_0 (2
    // packets, 1 lost, 0 s old < 2 RTT, so only I_tot1 = 100·1 counts; W_tot = 1): p = 1 %.
    // s = 120 B, R = srtt = 160 ms: X_calc = s/(R·f(0.01)) · 120/160 and cwnd = X·R/s =
    // 0.75 · 11.233 = 8.42. min_rate is half the RFC 3390 initial rate (480 B per RTT → 2
    // packets), below it. So cwnd = 8, ssthresh = max(5/4, 2) = 2, and no CWR.
    // (`max_burst = 0`: the model's Linux 2.4 `tcp_moderate_cwnd` would then cut cwnd on this
    // ACK, dubious for its D-SACK, to in_flight + 3 = 3 + 3 = 6; 3.16 moderates only outside
    // Open.)
    let k = 100;
    let r = hidden_loss_run("rdb_tfrc = true\nmax_burst = 0\n", k);
    assert_eq!(r.sender.stats().rdb_hidden_losses, 1);
    let ack_at = r.sent[k + 1].t + Dur::from_millis(160);
    let at = r.trace.iter().rev().find(|t| t.time == ack_at).unwrap();
    assert_eq!((at.cwnd, at.ssthresh, at.ca_state), (8, 2, CaState::Open));
    assert!(r.trace.iter().all(|t| t.ca_state != CaState::Cwr));
    // With p = 10 % (loss after 10 packets) X_calc is 0.75/f(0.1) = 1.33 packets, below
    // min_rate (2 packets): cwnd = 2.
    let r = hidden_loss_run("rdb_tfrc = true\nmax_burst = 0\n", 10);
    let ack_at = r.sent[11].t + Dur::from_millis(160);
    let at = r.trace.iter().rev().find(|t| t.time == ack_at).unwrap();
    assert_eq!(at.cwnd, 2);
    // With the default max_burst = 3: min(8, 3 + 3) = 6.
    let r = hidden_loss_run("rdb_tfrc = true\n", k);
    let ack_at = r.sent[k + 1].t + Dur::from_millis(160);
    let at = r.trace.iter().rev().find(|t| t.time == ack_at).unwrap();
    assert_eq!(at.cwnd, 6);
}

#[test]
fn off_sends_each_write_alone() {
    let base = run(BASE, RCV_NO_DELACK, 200, 30, 120, 400, &[]);
    let steady = lens_after(&base, base.t0 + Dur::from_secs(8));
    assert!(steady.iter().all(|&l| l == 120), "{steady:?}");
    assert_eq!(base.sender.stats().rdb_pkts_sent, 0);
}

// ---------------------------------------------------------------------------------------------
// Hand-driven endpoint.

fn peer_seg(flags: u8, seq_off: u32, ack_off: u32, payload: u32) -> Segment {
    let (c, s) = addrs();
    Segment {
        src: Some(s),
        dst: Some(c),
        seq: PEER_ISS.wrapping_add(seq_off),
        ack: ISS.wrapping_add(ack_off),
        flags,
        window: 65535,
        payload,
        ..Segment::default()
    }
}

/// A client connected by a SYN-ACK at 600 ms (MSS 536).
fn client(cfg: TcpConfig) -> Connection {
    let (c, s) = addrs();
    let mut conn = Connection::connect(Time::ZERO, c, s, cfg, ISS);
    conn.poll_transmit(Time::ZERO).unwrap();
    let mut sa = peer_seg(SYN | ACK, 0, 1, 0);
    sa.mss = Some(536);
    sa.sack_permitted = true;
    conn.handle_packet(ms(600), &sa.encode());
    assert_eq!(conn.poll_event(), Some(Event::Connected));
    conn.poll_transmit(ms(600)).unwrap();
    conn
}

/// (data offset, payload) of the next packet.
fn next(c: &mut Connection, now: Time) -> (u32, u32) {
    let s = Segment::decode(&c.poll_transmit(now).unwrap()).unwrap();
    (s.seq.wrapping_sub(ISS + 1), s.payload)
}

#[test]
fn v1_bundles_the_previous_packet_and_retransmissions_carry_the_following_data() {
    let cfg = TcpConfig::from_toml(
        "rdb = \"v1\"\nnagle = false\ninitial_window = 4\nrdb_max_bytes = \"250B\"",
    )
    .unwrap();
    let mut c = client(cfg);
    let mut got = Vec::new();
    for k in 0..4 {
        c.send(100);
        got.push(next(&mut c, ms(1000 + k)));
    }
    // S1 alone; S2 takes S1's 100 B (200 ≤ 250); S3 would take S2's packet, 200 B: 300 > 250,
    // so alone; S4 takes S3's 100 B.
    assert_eq!(got, [(0, 100), (0, 200), (200, 100), (200, 200)]);
    // S1 is acknowledged. S5: S4's packet was [200, 400), 200 B unacknowledged: 300 > 250,
    // alone.
    c.handle_packet(ms(1100), &peer_seg(ACK, 1, 101, 0).encode());
    c.send(100);
    assert_eq!(next(&mut c, ms(1200)), (400, 100));
    // The RTO retransmits S2: its packet was [0, 200), trimmed of the acknowledged 100 B:
    // [100, 200); S3's 100 B follow (200 ≤ 250), S4's would make 300: [100, 300).
    let due = c.poll_timeout().unwrap();
    c.handle_timeout(due);
    assert_eq!(next(&mut c, due), (100, 200));
    let st = c.stats();
    assert_eq!(st.retransmits, 1);
    // Redundant: S2 100, S4 100, and the retransmission's 100 of S3.
    assert_eq!((st.rdb_pkts_sent, st.rdb_bytes_sent), (3, 300));

    // Limited by the MSS only (536): every packet carries everything unacknowledged.
    let cfg = TcpConfig::from_toml("rdb = \"v1\"\nnagle = false\ninitial_window = 4").unwrap();
    let mut c = client(cfg);
    let mut got = Vec::new();
    for k in 0..4 {
        c.send(100);
        got.push(next(&mut c, ms(1000 + k)));
    }
    assert_eq!(got, [(0, 100), (0, 200), (0, 300), (0, 400)]);
    c.handle_packet(ms(1100), &peer_seg(ACK, 1, 101, 0).encode());
    c.send(100);
    // S4's packet minus the acknowledged 100 B is 300 B: 400 ≤ 536.
    assert_eq!(next(&mut c, ms(1200)), (100, 400));
    // The retransmission of S2 from 100 carries S3, S4 and S5: 400 B ≤ 536.
    let due = c.poll_timeout().unwrap();
    c.handle_timeout(due);
    assert_eq!(next(&mut c, due), (100, 400));
}

#[test]
fn v2_does_not_bundle_retransmissions() {
    let cfg = TcpConfig::from_toml("rdb = \"v2\"\nnagle = false\ninitial_window = 4").unwrap();
    let mut c = client(cfg);
    let mut got = Vec::new();
    for k in 0..3 {
        c.send(100);
        got.push(next(&mut c, ms(1000 + k)));
    }
    // Thin (DPIFL: handshake srtt 600 ms / 10 ms = 60): all unacknowledged bytes go along.
    assert_eq!(got, [(0, 100), (0, 200), (0, 300)]);
    let due = c.poll_timeout().unwrap();
    c.handle_timeout(due);
    assert_eq!(
        next(&mut c, due),
        (0, 100),
        "the RTO resends S1 as it was cut"
    );
}

#[test]
fn v2_skips_an_acknowledged_prefix_and_stops_at_a_sacked_segment() {
    let cfg = TcpConfig::from_toml("rdb = \"v2\"\nnagle = false\ninitial_window = 4").unwrap();
    let mut c = client(cfg.clone());
    for k in 0..3 {
        c.send(100);
        next(&mut c, ms(1000 + k));
    }
    // An ACK in the middle of S2 (offset 150): S4 takes S3 and S2 whole by the size rule
    // (100 + 100 + 100 ≤ 536) but sends S2 from 150: [150, 400), 250 B.
    c.handle_packet(ms(1100), &peer_seg(ACK, 1, 151, 0).encode());
    c.send(100);
    assert_eq!(next(&mut c, ms(1200)), (150, 250));

    let mut c = client(cfg);
    for k in 0..3 {
        c.send(100);
        next(&mut c, ms(1000 + k));
    }
    // S1 acknowledged, S3 SACKed: S4 goes alone (the previous segment is SACKed).
    let mut a = peer_seg(ACK, 1, 101, 0);
    a.sacks = vec![(ISS + 201, ISS + 301)];
    c.handle_packet(ms(1100), &a.encode());
    c.send(100);
    assert_eq!(next(&mut c, ms(1200)), (300, 100));
}

#[test]
fn partly_duplicate_segment_is_acked_at_once_with_a_dsack() {
    let cfg = TcpConfig::from_toml("dsack = true").unwrap();
    let mut c = client(cfg.clone());
    // 100 B in order: delayed (static 200 ms).
    c.handle_packet(ms(1000), &peer_seg(ACK, 1, 1, 100).encode());
    assert!(c.poll_transmit(ms(1000)).is_none());
    // [50, 200) overlaps the 100 B received: ACKed at once (200 B < 2 segments otherwise
    // waits), D-SACK [50, 100).
    c.handle_packet(ms(1010), &peer_seg(ACK, 51, 1, 150).encode());
    let a = Segment::decode(&c.poll_transmit(ms(1010)).expect("quick ACK")).unwrap();
    assert_eq!(a.ack, PEER_ISS + 201);
    assert_eq!(a.sacks, [(PEER_ISS + 51, PEER_ISS + 101)]);
    // Quick-ACK mode lasted this segment only (`quickacks = 0`): the next waits.
    c.handle_packet(ms(1020), &peer_seg(ACK, 201, 1, 100).encode());
    assert!(c.poll_transmit(ms(1020)).is_none());
    // With quickacks = 16 (Linux's TCP_MAX_QUICKACKS) the next is ACKed at once too.
    let mut cfg16 = cfg;
    cfg16.quickacks = 16;
    let mut c = client(cfg16);
    for k in 0..16 {
        // Use up the start-up quick ACKs.
        c.handle_packet(
            ms(1000 + k),
            &peer_seg(ACK, 1 + 10 * k as u32, 1, 10).encode(),
        );
        c.poll_transmit(ms(1000 + k)).unwrap();
    }
    c.handle_packet(ms(1100), &peer_seg(ACK, 161, 1, 10).encode());
    assert!(c.poll_transmit(ms(1100)).is_none(), "delayed again");
    c.handle_packet(ms(1110), &peer_seg(ACK, 161, 1, 20).encode());
    assert!(c.poll_transmit(ms(1110)).is_some(), "partial: at once");
    c.handle_packet(ms(1120), &peer_seg(ACK, 181, 1, 10).encode());
    assert!(c.poll_transmit(ms(1120)).is_some(), "quick-ACK mode again");
}

#[test]
fn keys_and_errors() {
    let c = TcpConfig::from_toml("rdb = \"v2\"\nrdb_pif_limit = 8").unwrap();
    assert_eq!(c.rdb, lasthop_tcp::Rdb::V2);
    let e = TcpConfig::from_toml("rdb = \"v3\"").unwrap_err();
    assert_eq!(e.key, "rdb", "{e}");
    let e = TcpConfig::from_toml("rdb = \"v2\"\nrdb_pif_limit = 4\nrdb_itt_min = \"10ms\"")
        .unwrap_err();
    assert_eq!(e.key, "rdb_pif_limit");
    assert!(e.message.contains("not both"), "{e}");
    let e = TcpConfig::from_toml("rdb = \"v1\"\nrdb_tfrc = true").unwrap_err();
    assert_eq!(e.key, "rdb_tfrc");
    assert!(e.message.contains("v2"), "{e}");
    let e = TcpConfig::from_toml("rdb_max_bytes = \"600B\"").unwrap_err();
    assert_eq!(e.key, "rdb_max_bytes");
    let e = TcpConfig::from_toml("rdb = \"v2\"\nrdb_pif_limit = 0").unwrap_err();
    assert_eq!(e.key, "rdb_pif_limit");
    let e = TcpConfig::from_toml("rdb = \"v2\"\nrdb_itt_min = \"0ms\"").unwrap_err();
    assert_eq!(e.key, "rdb_itt_min");
    let e = TcpConfig::from_toml("rdb = \"v2\"\nrdb_ssthresh = \"third\"").unwrap_err();
    assert_eq!(e.key, "rdb_ssthresh", "{e}");
}

#[test]
fn every_byte_arrives_under_random_loss() {
    // 10 % of the data packets lost (a fixed pseudo-random pattern), each variant: every
    // written byte is delivered, no packet exceeds the MSS (1448), and with RDB fewer
    // retransmissions are needed than without.
    let mut x = 12345u64;
    let drops: Vec<usize> = (0..2000)
        .filter(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % 10 == 0
        })
        .collect();
    let mut rtx = Vec::new();
    for extra in [
        String::new(),
        "rdb = \"v1\"\n".to_string(),
        v2("").replace(BASE, ""),
        v2("rdb_pif_limit = 8\nrdb_tfrc = true\n").replace(BASE, ""),
        v2("rdb_max_segments = 1\nrdb_ssthresh = \"half\"\n").replace(BASE, ""),
    ] {
        let r = run(
            &format!("{BASE}{extra}"),
            RCV_LINUX,
            75,
            30,
            120,
            300,
            &drops,
        );
        assert_eq!(r.delivered.last().unwrap().1, 300 * 120, "{extra}");
        assert!(r.sent.iter().all(|p| p.len <= 1448), "{extra}");
        rtx.push(r.sender.stats().retransmits);
    }
    assert!(rtx[1..].iter().all(|&n| n < rtx[0]), "{rtx:?}");
}
