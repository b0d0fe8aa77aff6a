//! Delivery-rate sampling as Linux 4.9+ `tcp_rate.c` does it (and `tcp_count_delivered`,
//! `tcp_sum_lost`, `tcp_newly_delivered`, `tcp_update_rtt_min`): the samples BBR's model is
//! built from, kept only for a connection whose algorithm takes them (`Rate` is then present).
//!
//! Each transmission snapshots the connection's delivery state (`tcp_rate_skb_sent`: segments
//! delivered so far, when the last delivery was, the start of the current send phase, whether
//! the sender is application-limited); when a segment is SACKed or cumulatively ACKed
//! (`tcp_rate_skb_delivered`) the most recently sent of the segments an ACK delivers gives the
//! sample's start; `tcp_rate_gen` turns it into (segments delivered, interval), the interval
//! the longer of the send phase and the ACK phase, and no sample when that is below the
//! minimum RTT. Times are whole microseconds, as the kernel's `tcp_mstamp` is.

use super::*;
use crate::cc::minmax::MinMax;
use send::SendState;

/// What a transmission recorded (Linux `TCP_SKB_CB(skb)->tx`), beside its segment in `rtx`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TxRate {
    delivered: u64,
    /// `tx.delivered_mstamp` (µs); 0 once the segment was SACKed (counted then).
    delivered_us: u64,
    first_tx_us: u64,
    /// When the segment was sent (µs), its `skb_mstamp`.
    sent_us: u64,
    app_limited: bool,
    /// Sent as a retransmission (`TCPCB_RETRANS`).
    retrans: bool,
}

/// One ACK's rate sample (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RateSample {
    /// `tp->delivered` when the newest delivered segment was sent.
    pub(crate) prior_delivered: u64,
    /// `tp->delivered_mstamp` then (µs; 0: no sample).
    pub(crate) prior_us: u64,
    /// The sample's interval (µs); -1: not a valid sample.
    pub(crate) interval_us: i64,
    /// Segments delivered in it; -1: not a valid sample.
    pub(crate) delivered: i64,
    /// Segments this ACK newly ACKed or SACKed.
    pub(crate) acked_sacked: u32,
    /// Segments this ACK newly marked lost.
    pub(crate) losses: u32,
    pub(crate) is_app_limited: bool,
    pub(crate) is_retrans: bool,
    pub(crate) last_end_seq: u64,
    /// RTT of the newest segment this ACK delivered (µs; -1: none).
    pub(crate) rtt_us: i64,
    /// In flight before the ACK.
    pub(crate) prior_in_flight: u32,
    /// Likely a delayed ACK (`FLAG_ACK_MAYBE_DELAYED`).
    pub(crate) is_ack_delayed: bool,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_delivered: 0,
            prior_us: 0,
            interval_us: -1,
            delivered: -1,
            acked_sacked: 0,
            losses: 0,
            is_app_limited: false,
            is_retrans: false,
            last_end_seq: 0,
            rtt_us: -1,
            prior_in_flight: 0,
            is_ack_delayed: false,
        }
    }
}

/// The connection's delivery state.
#[derive(Debug)]
pub(super) struct Rate {
    /// Parallel to `SendState::rtx`: pushed and popped with it.
    pub(super) tx: VecDeque<TxRate>,
    /// `tp->delivered`: segments delivered (ACKed or SACKed), each once.
    pub(super) delivered: u64,
    /// `tp->delivered_mstamp` (µs).
    pub(super) delivered_us: u64,
    /// `tp->first_tx_mstamp` (µs).
    first_tx_us: u64,
    /// `tp->app_limited`: 0, or the delivered count up to which samples are app-limited.
    pub(super) app_limited: u64,
    /// `tp->rtt_min`: the windowed minimum RTT (µs, 300 s, Linux `tcp_min_rtt_wlen`).
    pub(super) min_rtt: MinMax,
    /// The sample of the ACK being processed, and the counts it started with.
    pub(super) rs: RateSample,
    delivered_at_ack: u64,
    lost_at_ack: u64,
    /// The newest newly ACKed segment never retransmitted nor SACKed, the oldest (µs), and
    /// whether a retransmitted one was ACKed (Karn); the oldest and newest newly SACKed ones.
    ackt: Option<(u64, u64)>,
    retrans_acked: bool,
    sackt: Option<(u64, u64)>,
}

/// µs of a time, as `tcp_mstamp`.
#[inline]
pub(super) fn us(t: Time) -> u64 {
    t.0 / 1_000
}

/// `tcp_min_rtt_wlen`: 300 s, in ms (the filter's clock here).
const MIN_RTT_WLEN_MS: u32 = 300_000;

impl Rate {
    pub(super) fn new() -> Rate {
        let mut min_rtt = MinMax::default();
        min_rtt.reset(0, u32::MAX);
        Rate {
            tx: VecDeque::new(),
            delivered: 0,
            delivered_us: 0,
            first_tx_us: 0,
            app_limited: 0,
            min_rtt,
            rs: RateSample::default(),
            delivered_at_ack: 0,
            lost_at_ack: 0,
            ackt: None,
            retrans_acked: false,
            sackt: None,
        }
    }

    /// `tcp_min_rtt` (µs; `u32::MAX` before any sample).
    pub(super) fn min_rtt_us(&self) -> u32 {
        self.min_rtt.get()
    }

    /// `tcp_update_rtt_min` for a sample of `rtt_us` (an ACK that looks delayed does not
    /// raise it... nor set it above the current minimum).
    pub(super) fn update_min_rtt(&mut self, now: Time, rtt_us: u64, ack_delayed: bool) {
        let rtt = rtt_us.min(u64::from(u32::MAX - 1)) as u32;
        if ack_delayed && rtt > self.min_rtt.get() {
            return;
        }
        let ms = (now.0 / 1_000_000) as u32;
        self.min_rtt.running_min(MIN_RTT_WLEN_MS, ms, rtt.max(1));
    }

    /// `tcp_rate_skb_sent` for a segment sent now; `packets_out`: segments out before it.
    pub(super) fn on_sent(&mut self, now: Time, packets_out: u32, retrans: bool) -> TxRate {
        let t = us(now);
        if packets_out == 0 {
            self.first_tx_us = t;
            self.delivered_us = t;
        }
        TxRate {
            delivered: self.delivered,
            delivered_us: self.delivered_us,
            first_tx_us: self.first_tx_us,
            sent_us: t,
            app_limited: self.app_limited != 0,
            retrans,
        }
    }

    /// The start of an ACK's processing.
    pub(super) fn ack_start(&mut self, lost: u64, prior_in_flight: u32) {
        self.rs = RateSample {
            prior_in_flight,
            ..RateSample::default()
        };
        self.delivered_at_ack = self.delivered;
        self.lost_at_ack = lost;
        self.ackt = None;
        self.retrans_acked = false;
        self.sackt = None;
    }

    /// A segment (ending at `end`) is delivered by this ACK: `sacked` by a SACK block, else
    /// cumulatively (`already_sacked`: it was SACKed before and counted then).
    /// `tcp_count_delivered` and `tcp_rate_skb_delivered`.
    pub(super) fn on_delivered(&mut self, i: usize, end: u64, sacked: bool, already: bool) {
        let Some(mut tx) = self.tx.get(i).copied() else {
            return;
        };
        self.deliver(&mut tx, end, sacked, already);
        self.tx[i] = tx;
    }

    fn deliver(&mut self, tx: &mut TxRate, end: u64, sacked: bool, already: bool) {
        if !already {
            self.delivered += 1;
            if !tx.retrans {
                let t = tx.sent_us;
                if sacked {
                    self.sackt = Some(self.sackt.map_or((t, t), |(f, _)| (f, t)));
                } else {
                    self.ackt = Some(self.ackt.map_or((t, t), |(f, _)| (f, t)));
                }
            } else if !sacked {
                self.retrans_acked = true;
            }
        }
        if tx.delivered_us == 0 {
            return;
        }
        let rs = &mut self.rs;
        // `tcp_skb_sent_after`: later, or at the same time with a higher sequence.
        let newer = tx.sent_us > self.first_tx_us
            || (tx.sent_us == self.first_tx_us && end > rs.last_end_seq);
        if rs.prior_delivered == 0 || newer {
            rs.prior_delivered = tx.delivered;
            rs.prior_us = tx.delivered_us;
            rs.is_app_limited = tx.app_limited;
            rs.is_retrans = tx.retrans;
            rs.last_end_seq = end;
            self.first_tx_us = tx.sent_us;
            rs.interval_us = tx.sent_us as i64 - tx.first_tx_us as i64;
        }
        if sacked {
            tx.delivered_us = 0;
        }
    }

    /// The ACK's RTT samples (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): the cumulatively
    /// ACKed segments' unless one was a retransmission, else the SACKed ones', else the
    /// timestamp echo's (`ts_rtt`). Sets `rs.rtt_us` (the newest segment's, `ca_rtt_us`) and
    /// returns the RTO estimator's sample (the oldest's, `seq_rtt_us`) and the ACK's
    /// `FLAG_ACK_MAYBE_DELAYED` (one segment, less than an MSS, nothing SACKed: a lone runt).
    pub(super) fn rtt_samples(
        &mut self,
        now: Time,
        ts_rtt: Option<Dur>,
        maybe_delayed: bool,
    ) -> Option<Dur> {
        let t = us(now);
        let mut seq = -1i64;
        let mut ca = -1i64;
        if let (Some((first, last)), false) = (self.ackt, self.retrans_acked) {
            seq = (t - first) as i64;
            ca = (t - last) as i64;
        }
        if let Some((first, last)) = self.sackt {
            if seq < 0 {
                seq = (t - first) as i64;
            }
            ca = (t - last) as i64;
        }
        if seq < 0 {
            if let Some(d) = ts_rtt {
                seq = (d.0 / 1_000).max(1) as i64;
                ca = seq;
            }
        }
        self.rs.rtt_us = ca;
        self.rs.is_ack_delayed = maybe_delayed && self.ackt.is_some() && !self.retrans_acked;
        if seq < 0 {
            return None;
        }
        self.update_min_rtt(now, ca.max(0) as u64, self.rs.is_ack_delayed);
        Some(Dur(seq as u64 * 1_000))
    }

    /// The ACK's `sack_rtt_us`: since the first newly SACKed segment never retransmitted was
    /// sent (None: the ACK SACKed none).
    pub(super) fn sack_rtt_us(&self, now: Time) -> Option<u64> {
        self.sackt.map(|(first, _)| us(now).saturating_sub(first))
    }

    /// `tcp_rate_gen` at the end of the ACK: `lost` is `tp->lost` now.
    pub(super) fn gen(&mut self, now: Time, lost: u64) {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let delivered = self.delivered - self.delivered_at_ack;
        if delivered > 0 {
            self.delivered_us = us(now);
        }
        let rs = &mut self.rs;
        rs.acked_sacked = delivered as u32;
        rs.losses = (lost - self.lost_at_ack) as u32;
        if rs.prior_us == 0 {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = (self.delivered - rs.prior_delivered) as i64;
        let snd_us = rs.interval_us;
        let ack_us = us(now) as i64 - rs.prior_us as i64;
        rs.interval_us = snd_us.max(ack_us);
        if rs.interval_us < i64::from(self.min_rtt.get()) {
            rs.interval_us = -1;
        }
    }

    /// `tcp_rate_check_app_limited` (an application write, or BBR's PROBE_RTT): the sender is
    /// application-limited when less than a segment is unsent, cwnd is not full and every lost
    /// segment has been retransmitted.
    pub(super) fn check_app_limited(
        &mut self,
        unsent: u64,
        mss: u32,
        in_flight: u32,
        cwnd: u32,
        lost_out: u32,
        retrans_out: u32,
    ) {
        if unsent < u64::from(mss) && in_flight < cwnd && lost_out <= retrans_out {
            self.set_app_limited(in_flight);
        }
    }

    /// `tp->app_limited = (tp->delivered + tcp_packets_in_flight(tp)) ? : 1`.
    pub(super) fn set_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
    }
}

/// Linux's number of a CA state (`TCP_CA_Open` 0 ... `TCP_CA_Loss` 4).
pub(super) fn ca_num(ca: CaState) -> u8 {
    match ca {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

impl SendState {
    /// Installs an algorithm (at the start, or by `TCP_CONGESTION`), with rate sampling if it
    /// takes the samples.
    pub(super) fn set_cc(&mut self, cc: Cc) {
        self.ctl = cc.has_cong_control();
        if self.ctl && self.rate.is_none() {
            let mut r = Rate::new();
            // Segments already out get snapshots as of now.
            r.tx = self.rtx.iter().map(|_| TxRate::default()).collect();
            self.rate = Some(Box::new(r));
        }
        self.cc = cc;
    }

    /// What the algorithm reads of the socket now.
    pub(super) fn ca_sk(&self, cx: &Ctx) -> CaSk {
        let (delivered, delivered_us, min_rtt_us, app_limited) = match self.rate.as_deref() {
            Some(r) => (r.delivered, r.delivered_us, r.min_rtt_us(), r.app_limited),
            None => (0, 0, u32::MAX, 0),
        };
        CaSk {
            now: cx.now,
            snd_nxt: self.snd_nxt,
            mss: cx.o.mss,
            ca_state: ca_num(self.ca),
            in_flight: self.in_flight(cx.o),
            delivered,
            delivered_us,
            lost: self.lost_total,
            srtt_us: self.rtt.srtt().map_or(0, |d| (d.0 / 1_000).max(1) as u32),
            min_rtt_us,
            wstamp: self.pace.wstamp,
            app_limited,
            lsnd: self.last_send,
        }
    }

    /// The connection is established: the algorithm's `init` (the handshake's RTT is already
    /// in the min-RTT filter).
    pub(super) fn cc_established(&mut self, cx: &Ctx) {
        let sk = self.ca_sk(cx);
        self.cc.init(&mut self.win, &sk);
    }

    /// The start of an ACK with rate sampling; returns `sacked_out` before it.
    pub(super) fn rate_ack_start(&mut self, o: &Negotiated, prior_in_flight: u32) -> u32 {
        let sacked = self.sacked_out(o);
        let lost = self.lost_total;
        if let Some(r) = self.rate.as_deref_mut() {
            r.ack_start(lost, prior_in_flight);
        }
        sacked
    }

    /// The ACK's RTT samples for the rate sample and the min-RTT filter (`ts`: the echo's).
    pub(super) fn rate_rtt(
        &mut self,
        cx: &Ctx,
        ts: Option<Dur>,
        acked_pkts: u32,
        acked_bytes: u64,
        prior_sacked: u32,
        seg: &Segment,
    ) -> Option<Dur> {
        let r = self.rate.as_deref_mut()?;
        // `FLAG_ACK_MAYBE_DELAYED`: one segment of less than an MSS, nothing SACKed before,
        // exactly one delivery since it was sent, no SACK or ECE on the ACK.
        let maybe_delayed = acked_pkts == 1
            && acked_bytes < u64::from(cx.o.mss)
            && prior_sacked == 0
            && r.rs.prior_delivered + 1 == r.delivered
            && seg.sacks.is_empty()
            && !seg.has(ECE);
        r.rtt_samples(cx.now, ts, maybe_delayed)
    }

    /// `tcp_rate_gen` and, for an algorithm with one, its `cong_control`.
    pub(super) fn rate_gen_and_control(&mut self, cx: &Ctx) {
        let lost = self.lost_total;
        if let Some(r) = self.rate.as_deref_mut() {
            r.gen(cx.now, lost);
        }
        if self.ctl {
            let sk = self.ca_sk(cx);
            if let Some(r) = self.rate.as_deref_mut() {
                let rs = r.rs;
                self.cc
                    .cong_control(&mut self.win, &sk, &rs, &mut r.app_limited);
            }
        }
    }

    /// A segment goes out: `tcp_rate_skb_sent` (`i`: its place in the queue, `None` for a new
    /// one, already pushed) and, with nothing in flight, the algorithm's
    /// `cwnd_event(CA_EVENT_TX_START)`.
    pub(super) fn rate_sent(&mut self, cx: &Ctx, i: Option<usize>, in_flight_before: u32) {
        // `tcp_event_data_sent`: CA_EVENT_TX_START from nothing in flight, then `lsndtime`.
        if in_flight_before == 0 && (self.ctl || self.k6) {
            let sk = self.ca_sk(cx);
            self.cc.tx_start(&mut self.win, &sk);
        }
        self.last_send = cx.now;
        let Some(r) = self.rate.as_deref_mut() else {
            return;
        };
        match i {
            None => {
                let out = self.rtx.len() as u32 - 1;
                let t = r.on_sent(cx.now, out, false);
                r.tx.push_back(t);
            }
            Some(i) => {
                let t = r.on_sent(cx.now, self.rtx.len() as u32, true);
                if let Some(slot) = r.tx.get_mut(i) {
                    *slot = t;
                }
            }
        }
    }

    /// The application writes (`tcp_sendmsg` → `tcp_rate_check_app_limited`).
    pub(super) fn check_app_limited(&mut self, o: &Negotiated) {
        if self.rate.is_none() {
            return;
        }
        let unsent = self.unsent();
        let (in_flight, cwnd) = (self.in_flight(o), self.win.cwnd);
        let (lost, retrans) = (self.lost_out(), self.retrans_out());
        if let Some(r) = self.rate.as_deref_mut() {
            r.check_app_limited(unsent, o.mss, in_flight, cwnd, lost, retrans);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    /// Ten segments sent from idle at 1000..1009 ms, ACKed from 1100 ms; then one more sent
    /// after two deliveries, ACKed with the other eight.
    #[test]
    fn samples_of_a_train_by_hand() {
        let mut r = Rate::new();
        let base = 1_000;
        for i in 0..10 {
            let t = r.on_sent(ms(base + i), i as u32, false);
            r.tx.push_back(t);
        }
        let tx = r.tx.clone();
        // Sent from idle: every snapshot is (delivered 0, delivered_mstamp = first_tx = 1 s).
        assert!(tx.iter().all(|t| t.delivered == 0
            && t.delivered_us == 1_000_000
            && t.first_tx_us == 1_000_000));
        // First ACK at 1100 ms for segment 0 (its RTT, 100 ms, is the minimum): send phase
        // 0 µs, ACK phase 100 ms since delivered_mstamp: interval 100 ms, 1 delivered.
        r.update_min_rtt(ms(base + 100), 100_000, false);
        r.ack_start(0, 10);
        r.on_delivered(0, 1, false, false);
        r.gen(ms(base + 100), 0);
        assert_eq!((r.rs.delivered, r.rs.interval_us), (1, 100_000));
        assert_eq!(r.rs.acked_sacked, 1);
        // Second ACK at 1101 ms for segment 1 (sent at 1001 ms): its snapshot is still
        // (0, 1000 ms): 2 delivered over max(1 ms send phase, 101 ms ACK phase) = 101 ms.
        r.ack_start(0, 9);
        r.on_delivered(1, 2, false, false);
        r.gen(ms(base + 101), 0);
        assert_eq!((r.rs.delivered, r.rs.interval_us), (2, 101_000));
        // A segment sent at 1102 ms snapshots (delivered 2, stamp 1101 ms, send phase from
        // segment 1's 1001 ms) ...
        let late = r.on_sent(ms(base + 102), 8, false);
        r.tx.push_back(late);
        assert_eq!((late.delivered, late.delivered_us), (2, 1_101_000));
        assert_eq!(late.first_tx_us, 1_001_000);
        // ... and an ACK at 1202 ms of the other eight and it takes the newest (it): 11 - 2 =
        // 9 delivered over max(1102 - 1001 = 101 ms send, 1202 - 1101 = 101 ms ACK) = 101 ms.
        r.ack_start(0, 9);
        for i in 2..10 {
            r.on_delivered(i, i as u64 + 1, false, false);
        }
        r.on_delivered(10, 11, false, false);
        r.gen(ms(base + 202), 0);
        assert_eq!(r.rs.delivered, 9);
        assert_eq!(r.rs.interval_us, 101_000);
        assert_eq!(r.rs.acked_sacked, 9);
    }

    #[test]
    fn a_sacked_segment_counts_once_and_short_intervals_are_no_sample() {
        let mut r = Rate::new();
        let a = r.on_sent(ms(1000), 0, false);
        r.tx.push_back(a);
        let b = r.on_sent(ms(1000), 1, false);
        r.tx.push_back(b);
        r.update_min_rtt(ms(1000), 50_000, false);
        // b SACKed at 1040 ms: 1 delivered over 40 ms < min RTT 50 ms: no sample.
        r.ack_start(0, 2);
        r.on_delivered(1, 2, true, false);
        r.gen(ms(1040), 0);
        assert_eq!((r.rs.acked_sacked, r.rs.interval_us), (1, -1));
        // The cumulative ACK of both at 1060 ms counts a only.
        r.ack_start(0, 1);
        r.on_delivered(0, 1, false, false);
        r.on_delivered(1, 2, false, true);
        r.gen(ms(1060), 0);
        assert_eq!(r.delivered, 2);
        assert_eq!(r.rs.acked_sacked, 1);
        // a's snapshot: delivered 0 at 1000 ms; 2 delivered over 60 ms.
        assert_eq!((r.rs.delivered, r.rs.interval_us), (2, 60_000));
    }

    #[test]
    fn app_limited_until_its_bubble_is_acked() {
        let mut r = Rate::new();
        r.delivered = 5;
        r.check_app_limited(100, 1448, 3, 10, 0, 0);
        assert_eq!(r.app_limited, 8);
        let t = r.on_sent(ms(1), 3, false);
        assert!(t.app_limited);
        r.delivered = 8;
        r.ack_start(0, 3);
        r.gen(ms(2), 0);
        assert_eq!(r.app_limited, 8);
        r.delivered = 9;
        r.gen(ms(3), 0);
        assert_eq!(r.app_limited, 0);
        // cwnd full: not app-limited.
        r.check_app_limited(0, 1448, 10, 10, 0, 0);
        assert_eq!(r.app_limited, 0);
    }
}
