//! Linux's internal TCP pacing (4.13+, `tcp_output.c`), for algorithms that ask for it (BBR
//! sets `sk_pacing_status = SK_PACING_NEEDED`) or, with `pacing = "always"`, for every
//! connection, as the `fq` qdisc paces them.
//!
//! * The rate (`sk_pacing_rate`, bytes per second): the algorithm's own (BBR), or Linux's
//!   `tcp_update_pacing_rate`, at the end of every ACK's congestion control: mss · max(cwnd,
//!   packets_out) / srtt times `pacing_ss_ratio` % (200) while cwnd < ssthresh / 2, else
//!   `pacing_ca_ratio` % (120).
//! * The departure schedule, earliest departure time (EDT): each transmitted skb moves
//!   `tcp_wstamp_ns` on by its payload at the rate (`tcp_update_skb_after_send`), less up to half
//!   of it for the time the sender was late (its "credit", the OS jitter allowance); no segment
//!   leaves before it (`tcp_pacing_check`), and a timer (`pacing_timer`, `tcp_pace_kick`) wakes
//!   the sender then. The first 10 data segments of a connection are not paced ("Original sch_fq
//!   does not pace first 10 MSS"), nor is a rate of ~0 (unlimited).
//! * An skb is up to `tcp_tso_autosize` segments (the rate's 1 ms worth, `sk_pacing_shift` 10, at
//!   least the algorithm's `min_tso_segs`: 2, or BBR's 1 below 1.2 Mbit/s), cut to what cwnd
//!   lets go when it starts (`tcp_mss_split_point`); its segments leave back to back and the
//!   schedule moves by all of them (GSO, which every Linux TCP socket uses). A retransmission
//!   is an skb of its own.
//!
//! A retransmission that must go whatever the window says (an RTO's, or the first of a
//! recovery) and the tail loss probe are not held back, as `tcp_retransmit_timer` and
//! `tcp_send_loss_probe` send them outside `tcp_write_xmit`'s pacing check; they still move the
//! schedule.

use super::*;
use crate::config::Pacing;

/// Linux's "unlimited" `sk_pacing_rate` (~0UL).
pub(crate) const RATE_UNLIMITED: u64 = u64::MAX;

/// The pacing state of a connection.
#[derive(Clone, Debug)]
pub(super) struct Pacer {
    /// `sk_pacing_status != SK_PACING_NONE`: segments are held to the schedule.
    pub(super) on: bool,
    /// `sk_pacing_rate` in bytes per second ([`RATE_UNLIMITED`]: none).
    pub(super) rate: u64,
    /// `tcp_wstamp_ns`: the earliest departure time of the next skb.
    pub(super) wstamp: Time,
    /// The skb being sent: segments it may still take, its first segment's departure time,
    /// the credit it was given and its payload so far.
    skb_left: u32,
    skb_start: Time,
    skb_credit: u64,
    skb_bytes: u64,
}

impl Pacer {
    pub(super) fn new(on: bool) -> Pacer {
        Pacer {
            on,
            rate: RATE_UNLIMITED,
            wstamp: Time::ZERO,
            skb_left: 0,
            skb_start: Time::ZERO,
            skb_credit: 0,
            skb_bytes: 0,
        }
    }

    /// `tcp_pacing_check`: whether the next skb must wait (it would start one now and the
    /// schedule is ahead of `now`).
    #[inline]
    pub(super) fn must_wait(&self, now: Time) -> bool {
        self.on && self.skb_left == 0 && self.wstamp > now
    }

    /// `__tcp_transmit_skb` and `tcp_update_skb_after_send` for one data segment of `len`
    /// payload bytes, the connection's `segs_out`-th (`data_segs_out`, retransmissions
    /// included); `tso_segs`: the segments an skb may hold now.
    pub(super) fn on_sent(&mut self, now: Time, len: u32, segs_out: u64, tso_segs: u32) {
        if self.skb_left == 0 {
            // A new skb: `tcp_wstamp_ns = max(tcp_wstamp_ns, tcp_clock_cache)`, and what the
            // clock moved past the schedule is its credit.
            let prior = self.wstamp;
            self.wstamp = self.wstamp.max(now);
            self.skb_start = self.wstamp;
            self.skb_credit = self.wstamp.0 - prior.0;
            self.skb_bytes = 0;
            self.skb_left = tso_segs.max(1);
        }
        self.skb_left -= 1;
        self.skb_bytes += u64::from(len);
        if self.rate != RATE_UNLIMITED && self.rate != 0 && segs_out >= 10 {
            let len_ns = skb_time_ns(self.skb_bytes, self.rate);
            let len_ns = len_ns - (len_ns / 2).min(self.skb_credit);
            self.wstamp = self.skb_start + Dur(len_ns);
        }
    }

    /// The transmission round ended (`tcp_write_xmit` returned): the skb being built is
    /// complete.
    #[inline]
    pub(super) fn end_round(&mut self) {
        self.skb_left = 0;
    }
}

/// Whether a connection with this configuration and algorithm paces (`sk_pacing_status`).
pub(super) fn pacing_on(cfg: &TcpConfig, cc: &Cc) -> bool {
    match cfg.pacing {
        Pacing::None => false,
        Pacing::WhenNeeded => cc.needs_pacing(),
        Pacing::Always => true,
    }
}

impl SendState {
    /// A data segment of `len` bytes went out: the pacing schedule moves. `quota`: the
    /// segments cwnd let go in this round when it was sent (its own included), which cuts the
    /// skb it starts (`tcp_mss_split_point`); a retransmission is an skb of its own.
    /// (Call only when pacing is on.)
    #[inline(never)]
    pub(super) fn pace_sent(&mut self, cx: &Ctx, len: u32, quota: u32) {
        let rate = self.pace.rate;
        let tso = tso_autosize(rate, cx.o.mss, self.cc.min_tso_segs(rate)).min(quota.max(1));
        // `data_segs_out` counts this segment before the schedule moves.
        let segs_out = cx.stats.data_pkts_sent + 1;
        self.pace.on_sent(cx.now, len, segs_out, tso);
    }

    /// Whether the next segment must wait for the pacing schedule; if so the pacing timer is
    /// armed for it. (Call only when pacing is on.)
    #[inline(never)]
    pub(super) fn pace_wait(&mut self, cx: &mut Ctx) -> bool {
        if !self.pace.must_wait(cx.now) {
            return false;
        }
        cx.timers.set_pace(self.pace.wstamp);
        true
    }

    /// The pacing rate after an ACK's congestion control (Linux `tcp_update_pacing_rate`, or
    /// the algorithm's own rate). Linux keeps `sk_pacing_rate` on every socket, paced or not
    /// (6.x HyStart reads it); the model computes it when it paces or follows 6.18.
    #[inline]
    pub(super) fn update_pacing_rate(&mut self, cx: &Ctx) {
        if !self.pace.on && !self.k6 {
            return;
        }
        self.pace.rate = match self.cc.pacing_rate() {
            Some(r) => r,
            None => linux_pacing_rate(
                cx.o.mss,
                self.win.cwnd,
                self.win.ssthresh,
                self.packets_out(),
                self.rtt.srtt(),
                cx.cfg.pacing_ss_ratio,
                cx.cfg.pacing_ca_ratio,
            ),
        };
    }
}

/// `div64_ul(len * NSEC_PER_SEC, rate)`.
#[inline]
fn skb_time_ns(bytes: u64, rate: u64) -> u64 {
    (u128::from(bytes) * 1_000_000_000 / u128::from(rate)) as u64
}

/// Linux `tcp_update_pacing_rate`: mss · max(cwnd, packets_out) / srtt, times `ss_ratio` % in
/// slow start (cwnd < ssthresh / 2) and `ca_ratio` % after; without an RTT sample the product
/// itself (Linux divides only when `srtt_us` is set). Bytes per second.
pub(crate) fn linux_pacing_rate(
    mss: u32,
    cwnd: u32,
    ssthresh: u32,
    packets_out: u32,
    srtt: Option<Dur>,
    ss_ratio: u32,
    ca_ratio: u32,
) -> u64 {
    // Linux: rate = mss · (USEC_PER_SEC / 100 << 3) · ratio · max(cwnd, packets_out) /
    // srtt_us, with srtt_us in 1/8 µs: mss · ratio / 100 · cwnd / srtt.
    let ratio = if cwnd < ssthresh / 2 {
        ss_ratio
    } else {
        ca_ratio
    };
    let mut rate = u128::from(mss) * (10_000 << 3) * u128::from(ratio);
    rate *= u128::from(cwnd.max(packets_out));
    if let Some(srtt) = srtt {
        // srtt_us << 3, as the kernel keeps it (whole µs).
        let srtt_us8 = u128::from((srtt.0 / 1_000) << 3).max(1);
        rate /= srtt_us8;
    }
    rate.min(u128::from(RATE_UNLIMITED - 1)) as u64
}

/// `tcp_tso_autosize` without TSO's size hint (a 1 ms of data at the pacing rate,
/// `sk_pacing_shift` 10), at least `min_tso_segs`, at most what a 64 KB GSO skb holds.
pub(crate) fn tso_autosize(rate: u64, mss: u32, min_tso_segs: u32) -> u32 {
    let bytes = (rate >> 10).min(65536);
    ((bytes / u64::from(mss.max(1))) as u32).max(min_tso_segs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Dur {
        Dur::from_millis(n)
    }

    #[test]
    fn linux_rate_is_200_percent_in_slow_start_and_120_after() {
        // mss 1448, cwnd 10, srtt 100 ms: 144 800 B/s; 200 % = 289 600, 120 % = 173 760.
        let r =
            |cwnd, ssthresh| linux_pacing_rate(1448, cwnd, ssthresh, 0, Some(ms(100)), 200, 120);
        assert_eq!(r(10, 100), 289_600);
        // cwnd 10 is not below ssthresh 20 / 2: congestion avoidance's ratio.
        assert_eq!(r(10, 20), 173_760);
        // 21 / 2 is 10 in the kernel's integers: still not below; 22 / 2 = 11 is.
        assert_eq!(r(10, 21), 173_760);
        assert_eq!(r(10, 22), 289_600);
        // packets_out above cwnd counts (after a reduction).
        assert_eq!(
            linux_pacing_rate(1448, 10, 5, 20, Some(ms(100)), 200, 120),
            347_520
        );
        // srtt is whole µs in the kernel: 100.0009 ms is 100 000 µs.
        assert_eq!(
            linux_pacing_rate(1448, 10, 5, 0, Some(Dur(100_000_900)), 200, 120),
            173_760
        );
    }

    #[test]
    fn the_schedule_moves_by_each_skb_and_starts_after_ten_segments() {
        // 1000 B/s: a 100-byte segment is 100 ms.
        let mut p = Pacer::new(true);
        p.rate = 1000;
        let t0 = Time::ZERO;
        for n in 1..10 {
            assert!(!p.must_wait(t0));
            p.on_sent(t0, 100, n, 1);
        }
        assert_eq!(p.wstamp, t0);
        // The 10th is paced: the next may leave 100 ms later.
        p.on_sent(t0, 100, 10, 1);
        assert_eq!(p.wstamp, Time(100_000_000));
        assert!(p.must_wait(Time(99_999_999)));
        assert!(!p.must_wait(Time(100_000_000)));
        // Sent 40 ms late: credit 40 ms, at most half of 100 ms taken off: next at +60 ms.
        let now = Time(140_000_000);
        p.on_sent(now, 100, 11, 1);
        assert_eq!(p.wstamp, Time(200_000_000));
        // Sent 80 ms late: only half (50 ms) is forgiven.
        let now = Time(280_000_000);
        p.on_sent(now, 100, 12, 1);
        assert_eq!(p.wstamp, Time(330_000_000));
    }

    #[test]
    fn an_skb_of_two_segments_goes_back_to_back() {
        let mut p = Pacer::new(true);
        p.rate = 1000;
        let t = Time(1_000_000_000);
        p.wstamp = t;
        p.on_sent(t, 100, 11, 2);
        assert!(!p.must_wait(t), "the skb's second segment follows at once");
        p.on_sent(t, 100, 12, 2);
        assert_eq!(p.wstamp, t + ms(200));
        assert!(p.must_wait(t + ms(199)));
        // A round that ends after one segment ends the skb.
        let t2 = t + ms(200);
        p.on_sent(t2, 100, 13, 2);
        p.end_round();
        assert_eq!(p.wstamp, t2 + ms(100));
        assert!(p.must_wait(t2 + ms(99)));
    }

    #[test]
    fn unpaced_and_unlimited_never_wait() {
        let mut p = Pacer::new(false);
        p.rate = 1;
        p.wstamp = Time(1);
        assert!(!p.must_wait(Time::ZERO));
        let mut p = Pacer::new(true);
        for n in 1..=20 {
            p.on_sent(Time::ZERO, 1000, n, 1);
        }
        assert!(!p.must_wait(Time::ZERO));
    }

    #[test]
    fn tso_autosize_is_a_millisecond_of_data() {
        // 1 250 000 B/s (10 Mbit/s): 1220 B per ms, under one 1448-byte segment: the minimum.
        assert_eq!(tso_autosize(1_250_000, 1448, 2), 2);
        assert_eq!(tso_autosize(1_250_000, 1448, 1), 1);
        // 100 Mbit/s: 12 207 B per ms, 8 segments.
        assert_eq!(tso_autosize(12_500_000, 1448, 2), 8);
        // At most a 64 KB skb.
        assert_eq!(tso_autosize(1 << 40, 1448, 2), 45);
    }
}
