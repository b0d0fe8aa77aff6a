//! TFRC-SP as RDBv2 uses it (seed 003 §3.6, thesis §4.4–4.5): a sender-side, sans-IO
//! calculator of the TCP-friendly rate and the congestion window it stands for.
//!
//! * Loss intervals (RFC 5348 §5) in packets, counted at the sender: every segment
//!   cumulatively acknowledged adds one packet to the open interval I_0; a loss starts a new
//!   interval unless it comes within one RTT of the loss that started I_0 (then it joins I_0).
//!   Eight closed intervals are kept.
//! * Weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (RFC 5348 §5.4, Listing 4.1).
//! * TFRC-SP (RFC 4828 §3, Listing 4.3): a closed interval shorter than two RTTs counts as
//!   length / losses (N/K); if I_0 is younger than two RTTs only I_tot1 is used, else
//!   max(I_tot0, I_tot1). p = W_tot / I_tot.
//! * The throughput equation (RFC 5348 §3.1, thesis Eq. 2.2) with b = 1 and t_RTO = 4·R: the
//!   thesis's `tfrc_equation.c` is a copy of DCCP's, whose table is f(p) = sqrt(2p/3) +
//!   12·sqrt(3p/8)·p·(1 + 32p²), i.e. exactly that t_RTO (RFC 5348's recommendation). The
//!   general form is [`padhye`].
//! * Header accounting (Eq. 4.3): X·s/(s + H), H = 40 bytes.
//! * The rate update (`rdb_tx_update_x`, from DCCP's `ccid3_hc_tx_update_x`): the rate at most
//!   halves per update (min_rate = X/2; the RFC 3390 initial rate after 2 RTTs idle); with
//!   p > 0, X = max(X_calc, min_rate); with p = 0, once per RTT X = max(X, s/R).
//! * cwnd = X·srtt/s (Eq. 4.2), in whole packets.
//!
//! Where the seed is silent (extract §8.6): `s` is the EWMA (9/10 old, DCCP `tfrc_ewma`) of the
//! new data per packet, not the bundled packet's size; the interval before the first loss is
//! the packets acknowledged until then (RFC 5348 §6.3.1 would instead invert the equation at
//! the receive rate); the first rate is RFC 3390's min(4s, max(2s, 4380 B)) per RTT (DCCP).

use lasthop_core::{Dur, Time};

/// Closed loss intervals kept (n in RFC 5348 §5.4).
pub const INTERVALS: usize = 8;
/// RFC 5348 §5.4 weights for n = 8.
pub const WEIGHTS: [f64; INTERVALS] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// Header bytes per packet in the header accounting (Eq. 4.3).
pub const HEADER: u32 = 40;

/// f(p) = sqrt(2p/3) + 12·sqrt(3p/8)·p·(1 + 32p²): the equation's denominator over R, for
/// b = 1 and t_RTO = 4R. X = s / (R·f(p)), so cwnd = X·R/s = 1/f(p).
pub fn f(p: f64) -> f64 {
    (2.0 * p / 3.0).sqrt() + 12.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)
}

/// Padhye's equation (RFC 5348 §3.1, thesis Eq. 2.2): bytes per second for payload `s` bytes,
/// round-trip time `rtt` seconds, loss event rate `p`, `t_rto` seconds and `b` packets per ACK.
pub fn padhye(s: f64, rtt: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    s / (rtt * (2.0 * b * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

/// X_calc as the RDB module computes it: b = 1, t_RTO = 4R, and with `header` > 0 the header
/// accounting X·s/(s + header).
pub fn x_calc(s: f64, rtt: f64, p: f64, header: u32) -> f64 {
    let x = padhye(s, rtt, p, 4.0 * rtt, 1.0);
    x * s / (s + f64::from(header))
}

/// cwnd (packets, fractional) for a rate of `x` bytes/s, `rtt` seconds and `s`-byte packets.
pub fn cwnd_of(x: f64, rtt: f64, s: f64) -> f64 {
    x * rtt / s
}

/// One loss interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Interval {
    /// When its first loss was detected.
    start: Time,
    /// Packets, the lost ones included.
    len: u64,
    /// Packets lost in it (the loss event's losses).
    lost: u64,
}

/// The loss history: I_0 (open) and up to eight closed intervals, newest first.
#[derive(Clone, Debug, Default)]
pub struct LossHistory {
    iv: [Interval; INTERVALS + 1],
    /// Intervals held (I_0 included); 0 before the first loss.
    n: usize,
    /// Packets acknowledged before the first loss, and when the first was.
    before_first: u64,
    first_at: Option<Time>,
}

impl LossHistory {
    /// An ACK at `now` acknowledged `acked` packets, `lost` of which (the oldest) were lost.
    pub fn on_ack(&mut self, now: Time, rtt: Dur, acked: u64, lost: u64) {
        if lost == 0 {
            if self.n == 0 {
                self.before_first += acked;
                self.first_at.get_or_insert(now);
            } else {
                self.iv[0].len += acked;
            }
            return;
        }
        if self.n > 0 && now.saturating_since(self.iv[0].start) < rtt {
            // Within one RTT of the loss that opened I_0: the same loss event.
            self.iv[0].len += acked;
            self.iv[0].lost += lost;
            return;
        }
        if self.n == 0 {
            // The interval before the first loss (see the module doc).
            self.iv[0] = Interval {
                start: self.first_at.unwrap_or(now),
                len: self.before_first.max(1),
                lost: 0,
            };
            self.n = 1;
        }
        self.iv.copy_within(0..INTERVALS, 1);
        self.n = (self.n + 1).min(INTERVALS + 1);
        self.iv[0] = Interval {
            start: now,
            len: acked,
            lost,
        };
    }

    /// The loss event rate p (0 before the first loss), TFRC-SP with the short-interval
    /// threshold 2·`rtt`.
    pub fn p(&self, now: Time, rtt: Dur) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let short = Dur(rtt.0.saturating_mul(2));
        let k = self.n - 1; // closed intervals
        let value = |i: usize| -> f64 {
            let iv = self.iv[i];
            if i > 0 && iv.lost > 0 && self.iv[i - 1].start.saturating_since(iv.start) < short {
                iv.len as f64 / iv.lost as f64 // RFC 4828: N/K for a short interval
            } else {
                iv.len as f64
            }
        };
        let (mut tot0, mut tot1, mut w_tot) = (0.0, 0.0, 0.0);
        for (i, w) in WEIGHTS.iter().enumerate().take(k) {
            tot0 += value(i) * w;
            tot1 += value(i + 1) * w;
            w_tot += w;
        }
        let i_tot = if now.saturating_since(self.iv[0].start) < short {
            tot1
        } else {
            f64::max(tot0, tot1)
        };
        if i_tot <= 0.0 {
            return 1.0;
        }
        (w_tot / i_tot).min(1.0)
    }
}

/// The sender-side TFRC-SP state of one connection.
#[derive(Clone, Debug)]
pub struct Tfrc {
    pub hist: LossHistory,
    /// Allowed rate, bytes/s (0 until the first update).
    x: f64,
    /// Packet size s, bytes (EWMA).
    s: f64,
    /// Header bytes for the accounting (40 in RDB).
    header: u32,
    last_sent: Option<Time>,
    /// Last once-per-RTT increase without loss (DCCP `tx_t_ld`).
    t_ld: Option<Time>,
}

impl Tfrc {
    pub fn new(header: u32) -> Tfrc {
        Tfrc {
            hist: LossHistory::default(),
            x: 0.0,
            s: 0.0,
            header,
            last_sent: None,
            t_ld: None,
        }
    }

    /// A packet with `len` bytes of new data left at `now` (`rdb_tx_update_s`).
    pub fn on_send(&mut self, now: Time, len: u32) {
        let len = f64::from(len);
        self.s = if self.s == 0.0 {
            len
        } else {
            (9.0 * self.s + len) / 10.0
        };
        self.last_sent = Some(now);
    }

    /// RFC 3390's initial rate: min(4s, max(2s, 4380)) bytes per RTT.
    fn initial_rate(&self, r: f64) -> f64 {
        (4.0 * self.s).min((2.0 * self.s).max(4380.0)) / r
    }

    /// An ACK: the loss history, then the rate (`rdb_tx_update_x`).
    pub fn on_ack(&mut self, now: Time, rtt: Dur, acked: u64, lost: u64) {
        self.hist.on_ack(now, rtt, acked, lost);
        if self.s == 0.0 || rtt == Dur::ZERO {
            return;
        }
        let r = rtt.as_secs_f64();
        if self.x == 0.0 {
            self.x = self.initial_rate(r);
            self.t_ld = Some(now);
        }
        let idle = self
            .last_sent
            .is_some_and(|t| now.saturating_since(t).0 >= rtt.0.saturating_mul(2));
        let min_rate = if idle {
            self.initial_rate(r)
        } else {
            self.x / 2.0
        };
        let p = self.hist.p(now, rtt);
        if p > 0.0 {
            self.x = x_calc(self.s, r, p, self.header).max(min_rate);
        } else if self.t_ld.is_none_or(|t| now.saturating_since(t) >= rtt) {
            self.x = self.x.max(self.s / r);
            self.t_ld = Some(now);
        }
    }

    /// The allowed rate, bytes/s.
    pub fn x(&self) -> f64 {
        self.x
    }

    /// The packet size s.
    pub fn s(&self) -> f64 {
        self.s
    }

    /// cwnd = X·srtt/s in whole packets, at least 1 (a zero window would stall the stream
    /// until an RTO).
    pub fn cwnd(&self, srtt: Dur) -> u32 {
        if self.s == 0.0 {
            return 1;
        }
        // A hair above the quotient, so X = k·s/R gives k, not k − 1, after rounding.
        let c = cwnd_of(self.x, srtt.as_secs_f64(), self.s) * (1.0 + 1e-12);
        (c.floor() as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extract §4.5's table: cwnd = 1/f(p) without header accounting, ×120/160 with it.
    #[test]
    fn cwnd_matches_the_extract_table() {
        let rows = [
            (0.001, 38.4, 28.8),
            (0.002, 26.9, 20.2),
            (0.005, 16.6, 12.4),
            (0.01, 11.2, 8.4),
            (0.02, 7.3, 5.5),
            (0.05, 3.7, 2.8),
        ];
        let (s, r) = (120.0, 0.15);
        for (p, plain, with_h) in rows {
            let c0 = cwnd_of(x_calc(s, r, p, 0), r, s);
            let c1 = cwnd_of(x_calc(s, r, p, HEADER), r, s);
            assert!((c0 - plain).abs() < 0.05, "p {p}: {c0} vs {plain}");
            assert!((c1 - with_h).abs() < 0.05, "p {p}: {c1} vs {with_h}");
            assert!((c0 - 1.0 / f(p)).abs() < 1e-9);
        }
        // p = 1 %: sqrt(0.02/3) = 0.081650, 12·sqrt(0.00375)·0.01·1.0032 = 0.0073722,
        // f = 0.089022, 1/f = 11.233.
        let c = cwnd_of(x_calc(s, r, 0.01, 0), r, s);
        assert!((c - 11.233).abs() < 0.001, "{c}");
    }

    #[test]
    fn padhye_general_form() {
        // b = 2, t_RTO = 1 s, R = 0.1 s, p = 0.01, s = 1000:
        // R·sqrt(4p/3) = 0.1·0.115470 = 0.0115470;
        // 1·3·sqrt(6p/8)·p·(1 + 0.0032) = 3·0.0866025·0.01·1.0032 = 0.00260642;
        // X = 1000 / 0.0141534 = 70654 B/s.
        let x = padhye(1000.0, 0.1, 0.01, 1.0, 2.0);
        assert!((x - 70654.0).abs() < 2.0, "{x}");
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn eight_long_intervals_of_100_give_one_percent() {
        let rtt = Dur::from_millis(100);
        let mut h = LossHistory::default();
        h.on_ack(ms(0), rtt, 100, 0);
        // Nine losses 1 s apart (10 RTTs: never short), 100 packets between them.
        for k in 1..=9 {
            h.on_ack(ms(k * 1000), rtt, 1, 1);
            h.on_ack(ms(k * 1000 + 500), rtt, 99, 0);
        }
        assert_eq!(h.n, 9);
        // I_0 = 100 (and old: 500 ms ≥ 2 RTT); I_1..I_8 = 100: I_tot0 = I_tot1 = 100·6,
        // W_tot = 6, p = 1/100.
        let p = h.p(ms(9500), rtt);
        assert!((p - 0.01).abs() < 1e-12, "{p}");
    }

    #[test]
    fn short_intervals_count_n_over_k_and_a_young_i0_is_left_out() {
        let rtt = Dur::from_millis(100);
        let mut h = LossHistory::default();
        h.on_ack(ms(0), rtt, 50, 0);
        // First loss at 1 s: I_1 = 50 (before it), I_0 opens with 2 packets, 1 lost.
        h.on_ack(ms(1000), rtt, 2, 1);
        // A second loss 50 ms later joins I_0 (within one RTT): 4 more packets, 1 lost.
        h.on_ack(ms(1050), rtt, 4, 1);
        h.on_ack(ms(1100), rtt, 4, 0);
        // Next loss at 1150 ms: I_0 closes as 10 packets, 2 lost, 150 ms long (< 2 RTT):
        // it counts 10/2 = 5.
        h.on_ack(ms(1150), rtt, 1, 1);
        h.on_ack(ms(1400), rtt, 29, 0);
        // At 1400 ms I_0 (30 packets, 250 ms old ≥ 2 RTT) counts:
        // I_tot0 = 30·1 + 5·1 = 35, I_tot1 = 5·1 + 50·1 = 55, W_tot = 2, p = 2/55.
        let p = h.p(ms(1400), rtt);
        assert!((p - 2.0 / 55.0).abs() < 1e-12, "{p}");
        // At 1200 ms I_0 is 50 ms old: only I_tot1 = 55 counts, the same p.
        let p = h.p(ms(1200), rtt);
        assert!((p - 2.0 / 55.0).abs() < 1e-12, "{p}");
        // Without the second loss the first closed interval would be long: 10 packets.
        let mut h2 = LossHistory::default();
        h2.on_ack(ms(0), rtt, 50, 0);
        h2.on_ack(ms(1000), rtt, 10, 1);
        h2.on_ack(ms(1300), rtt, 1, 1);
        h2.on_ack(ms(1600), rtt, 9, 0);
        // I_0 = 10 (300 ms old), I_1 = 10 (300 ms long: not short), I_2 = 50:
        // I_tot0 = 10 + 10 = 20, I_tot1 = 10 + 50 = 60, W_tot = 2, p = 2/60.
        let p = h2.p(ms(1600), rtt);
        assert!((p - 2.0 / 60.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn rate_at_most_halves_per_update() {
        let rtt = Dur::from_millis(150);
        let mut t = Tfrc::new(HEADER);
        for k in 0..10 {
            t.on_send(ms(k * 50), 120);
        }
        t.on_ack(ms(500), rtt, 10, 0);
        // Initial rate: min(4·120, max(240, 4380)) = 480 B per RTT = 3200 B/s; cwnd 4.
        assert!((t.x() - 3200.0).abs() < 1e-9);
        assert_eq!(t.cwnd(rtt), 4);
        // A loss with I_1 = 10 packets: p = 0.1, X_calc·R/s = 0.75/f(0.1) = 1.33 packets, below
        // min_rate = 1600 B/s (2 packets): X = 1600.
        t.on_send(ms(510), 120);
        t.on_ack(ms(520), rtt, 2, 1);
        assert!((t.x() - 1600.0).abs() < 1e-9, "{}", t.x());
        assert_eq!(t.cwnd(rtt), 2);
        // The next update: min_rate = 1600/2 = 800 B/s, below X_calc = 120/(0.15·f(0.1))·0.75
        // = 1062 B/s (p still 0.1: I_0 is young), so X = X_calc.
        t.on_ack(ms(530), rtt, 1, 0);
        let xc = x_calc(120.0, 0.15, t.hist.p(ms(530), rtt), HEADER);
        assert!((xc - 1062.06).abs() < 0.01, "{xc}");
        assert!((t.x() - xc).abs() < 1e-9);
        // After 2 RTTs idle, min_rate is the initial rate again.
        t.on_ack(ms(510 + 300), rtt, 0, 0);
        assert!((t.x() - 3200.0).abs() < 1e-9, "{}", t.x());
    }
}
