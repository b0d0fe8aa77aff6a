//! Random Early Detection as Floyd and Jacobson published it (1993), the algorithm seeds 000, 001
//! and 004 print:
//!
//! ```text
//! on each arrival:
//!   if the queue is non-empty:  avg <- (1 - w_q) avg + w_q q
//!   else:                       m <- (now - q_time) / s;  avg <- (1 - w_q)^m avg
//!   if min_th <= avg < max_th:  count++;  p_b <- max_p (avg - min_th) / (max_th - min_th)
//!                               p_a <- p_b / (1 - count p_b);  with probability p_a: drop, count <- 0
//!   else if max_th <= avg:      drop, count <- 0
//!   else:                       count <- -1
//! ```
//!
//! `q` is the router queue only (the link buffers are not counted: seed 000 sets its thresholds
//! "slightly below the recommended values because they apply to the router queue only"); `s` is
//! the transmission time of a typical packet at the current link rate; `q_time` is when the queue
//! last became empty. Seed 000 prints the idle formula as `(q·w_q)^m·avg`, a typo for the paper's
//! `(1 − w_q)^m·avg`, which is used here.
//!
//! Options: byte mode (queue in units of `mean_packet` bytes, p_b scaled by size / mean, as in
//! ns-2); `gentle` (p_b rises from max_p to 1 between max_th and 2·max_th instead of jumping to 1);
//! ECN marking (ECT packets get CE instead of being dropped; above max_th they are marked too, as
//! Linux's sch_red does, unless `harddrop`); `ns2`, ns-2's `queue/red.cc` where it departs from
//! the paper (no drop or mark while at most one packet waits, and the first arrival above min_th
//! only starts the count), for studies that ran ns-2 (seed 004).
//!
//! Adaptive RED (Floyd, Gummadi and Shenker 2001, `adaptive = true`): every 500 ms, with the
//! average as it is then (decayed by the idle time if the queue is empty, as Linux's
//! `red_adaptative_algo` does),
//!
//! ```text
//! if avg > min_th + 0.6 (max_th - min_th) and max_p <= 0.5:  max_p <- max_p + min(0.01, max_p/4)
//! if avg < min_th + 0.4 (max_th - min_th) and max_p >= 0.01: max_p <- 0.9 max_p
//! ```
//!
//! The paper runs it with `gentle`; here that stays the `gentle` key. The model has no timer for
//! the adaptation: each arrival first runs the ones due (at 500 ms, 1 s, ...) since the last.

use crate::event::Cause;
use crate::queue::discipline::{self as queue, Arrival, QueueDiscipline};
use crate::spec::queue::red::{RedMode, RedSpec};
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, Time};

/// RED as a router queue's discipline: one draw from `link.red.{dir}` per arrival; a chosen
/// packet is marked if it is ECT and `ecn` is on (unless forced and `harddrop`), else dropped.
pub struct RedQueue {
    pub red: Red,
    rng: Stream,
}

impl RedQueue {
    pub fn new(red: Red, rng: Stream) -> RedQueue {
        RedQueue { red, rng }
    }
}

impl QueueDiscipline for RedQueue {
    fn on_arrival(&mut self, a: &Arrival<'_>) -> queue::Verdict {
        let s = a.tx_time(self.red.mean_packet());
        let u = unit(&mut self.rng);
        let v = self
            .red
            .on_arrival(a.now, a.queue_pkts, a.queue_bytes, a.packet.wire_len, s, u);
        match v {
            Verdict::Pass => queue::Verdict::Pass,
            Verdict::Congested { forced } => {
                let spec = &self.red.spec;
                if spec.ecn && a.packet.ecn().is_ect() && !(forced && spec.harddrop) {
                    queue::Verdict::Mark
                } else {
                    if a.queue_pkts == 0 {
                        // Dropped on arrival at an empty queue: it stays empty, idle from now
                        // (Linux's dequeue after the enqueue finds nothing).
                        self.red.went_idle(a.now);
                    }
                    queue::Verdict::Drop(Cause::Red)
                }
            }
        }
    }

    fn on_empty(&mut self, now: Time) {
        self.red.went_idle(now);
    }
}

/// Adaptive RED as a router queue's discipline: RED after the max_p adaptations due.
pub struct AdaptiveRedQueue(pub RedQueue);

impl QueueDiscipline for AdaptiveRedQueue {
    fn on_arrival(&mut self, a: &Arrival<'_>) -> queue::Verdict {
        let s = a.tx_time(self.0.red.mean_packet());
        self.0.red.adapt(a.now, s);
        self.0.on_arrival(a)
    }

    fn on_empty(&mut self, now: Time) {
        self.0.on_empty(now);
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    Pass,
    /// Chosen by RED: mark if the packet is ECT and ECN is on, else drop.
    Congested {
        /// Forced (average above max_th, not gentle): `harddrop` drops even ECT packets.
        forced: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Red {
    pub spec: RedSpec,
    mean_packet: u64,
    /// The EWMA of the queue length, in packets (or mean-packet units in byte mode).
    pub avg: f64,
    /// Packets since the last drop or mark; -1 below min_th.
    pub count: i64,
    /// When the queue last became empty, while it is empty.
    idle_since: Option<Time>,
    /// Adaptive RED: when max_p is next adapted.
    pub next_adapt: Time,
    /// `ns2`: the count has started since the average crossed min_th (ns-2's `edv_.old`).
    old: bool,
}

/// Adaptive RED's adaptation interval (the paper's 0.5 s; Linux `HZ/2`).
pub const ADAPT_INTERVAL: Dur = Dur::from_millis(500);

impl Red {
    pub fn new(spec: RedSpec, default_mean_packet: u64) -> Red {
        let mean_packet = spec
            .mean_packet
            .map(|b| b.0)
            .unwrap_or(default_mean_packet)
            .max(1);
        Red {
            spec,
            mean_packet,
            avg: 0.0,
            count: -1,
            idle_since: Some(Time::ZERO),
            next_adapt: Time::ZERO + ADAPT_INTERVAL,
            old: false,
        }
    }

    /// Adaptive RED: runs the max_p adaptations due at or before `now` (`s` as in
    /// [`Red::on_arrival`], which does not call it: [`AdaptiveRedQueue`] calls both).
    pub fn adapt(&mut self, now: Time, s: Dur) {
        let (min, max) = (self.spec.min_th, self.spec.max_th);
        let (lo, hi) = (min + 0.4 * (max - min), min + 0.6 * (max - min));
        while self.next_adapt <= now {
            let t = self.next_adapt;
            self.next_adapt += ADAPT_INTERVAL;
            let avg = match self.idle_since {
                Some(since) if s > Dur::ZERO => {
                    let m = t.saturating_since(since).0 as f64 / s.0 as f64;
                    (1.0 - self.spec.w_q).powf(m) * self.avg
                }
                Some(since) if t > since => 0.0,
                _ => self.avg,
            };
            let max_p = self.spec.max_p;
            if avg > hi && max_p <= 0.5 {
                self.spec.max_p = max_p + (max_p / 4.0).min(0.01);
            } else if avg < lo && max_p >= 0.01 {
                self.spec.max_p = max_p * 0.9;
            } else if self.idle_since.is_none() || avg < lo {
                // Nothing changes until the next arrival: skip to the last interval before it.
                let k = now.saturating_since(t).0 / ADAPT_INTERVAL.0;
                self.next_adapt = t + Dur(k * ADAPT_INTERVAL.0) + ADAPT_INTERVAL;
            }
        }
    }

    pub fn mean_packet(&self) -> u64 {
        self.mean_packet
    }

    /// The queue became empty at `now`.
    pub fn went_idle(&mut self, now: Time) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// Updates the average for an arrival that finds `q_pkts` packets / `q_bytes` bytes waiting,
    /// and decides. `s` is the transmission time of a mean-size packet (zero at an unlimited
    /// rate, where any idle period empties the average). `u` is a uniform draw in [0, 1).
    pub fn on_arrival(
        &mut self,
        now: Time,
        q_pkts: u64,
        q_bytes: u64,
        size: u32,
        s: Dur,
        u: f64,
    ) -> Verdict {
        let w = self.spec.w_q;
        let q = match self.spec.mode {
            RedMode::Packets => q_pkts as f64,
            RedMode::Bytes => q_bytes as f64 / self.mean_packet as f64,
        };
        // Every arrival ends the idle period (Linux's `red_end_of_idle_period` at enqueue, ns-2's
        // `idle_ = 0`); the next starts when the queue is found empty again, which for a packet
        // passing straight into the LSB is at once. Keeping the old start instead would decay
        // the average again by the whole idle time at every arrival into an empty queue.
        match self.idle_since.take() {
            Some(since) if q_pkts == 0 => {
                let idle = now.saturating_since(since);
                self.avg = if s == Dur::ZERO {
                    if idle > Dur::ZERO {
                        0.0
                    } else {
                        self.avg
                    }
                } else {
                    let m = idle.0 as f64 / s.0 as f64;
                    (1.0 - w).powf(m) * self.avg
                };
            }
            _ => self.avg = (1.0 - w) * self.avg + w * q,
        }
        let (min, max, max_p) = (self.spec.min_th, self.spec.max_th, self.spec.max_p);
        let short = self.spec.ns2
            && match self.spec.mode {
                RedMode::Packets => q_pkts <= 1,
                RedMode::Bytes => q_bytes <= 1,
            };
        let pb = if self.avg < min || short {
            self.count = -1;
            self.old = false;
            return Verdict::Pass;
        } else if self.avg < max {
            max_p * (self.avg - min) / (max - min)
        } else if self.spec.gentle && self.avg < 2.0 * max {
            max_p + (1.0 - max_p) * (self.avg - max) / max
        } else {
            self.count = 0;
            return Verdict::Congested { forced: true };
        };
        if self.spec.ns2 && !self.old {
            self.old = true;
            self.count = 1;
            return Verdict::Pass;
        }
        let pb = match self.spec.mode {
            RedMode::Packets => pb,
            RedMode::Bytes => pb * f64::from(size) / self.mean_packet as f64,
        };
        self.count += 1;
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        if u < pa {
            self.count = 0;
            Verdict::Congested { forced: false }
        } else {
            Verdict::Pass
        }
    }

    /// The probability p_b the current average gives (before the count correction).
    pub fn base_probability(&self) -> f64 {
        let (min, max, max_p) = (self.spec.min_th, self.spec.max_th, self.spec.max_p);
        if self.avg < min {
            0.0
        } else if self.avg < max {
            max_p * (self.avg - min) / (max - min)
        } else if self.spec.gentle && self.avg < 2.0 * max {
            max_p + (1.0 - max_p) * (self.avg - max) / max
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RedSpec {
        RedSpec {
            min_th: 2.0,
            max_th: 7.0,
            max_p: 0.1,
            w_q: 0.002,
            mode: RedMode::Packets,
            gentle: false,
            ecn: false,
            harddrop: false,
            mean_packet: None,
            adaptive: false,
            ns2: false,
        }
    }

    /// A busy RED whose average stays at `avg` (w_q ~ 0), to test its decisions alone.
    fn held(spec: RedSpec, avg: f64) -> Red {
        let mut r = Red::new(spec, 576);
        r.idle_since = None;
        r.spec.w_q = 1e-12;
        r.avg = avg;
        r
    }

    #[test]
    fn average_follows_the_ewma() {
        // A constant queue of 10 packets: avg_n = 10 (1 - (1 - w_q)^n).
        let mut r = Red::new(spec(), 576);
        r.idle_since = None;
        for _ in 0..500 {
            r.on_arrival(Time(0), 10, 5760, 576, Dur::from_millis(72), 0.99);
        }
        let want = 10.0 * (1.0 - 0.998f64.powi(500));
        assert!((r.avg - want).abs() < 1e-9, "{} vs {want}", r.avg);
    }

    #[test]
    fn idle_time_decays_the_average() {
        // After 720 ms idle at 72 ms per packet, m = 10: avg <- 0.998^10 avg.
        let mut r = Red::new(spec(), 576);
        r.avg = 5.0;
        r.idle_since = Some(Time(0));
        r.on_arrival(Time(720_000_000), 0, 0, 576, Dur::from_millis(72), 0.99);
        assert!((r.avg - 5.0 * 0.998f64.powi(10)).abs() < 1e-12);
    }

    #[test]
    fn each_arrival_ends_the_idle_period() {
        // Two arrivals into an empty queue, each after 720 ms idle at 72 ms per packet (the
        // first passed straight into the LSB, so the queue was empty again at once): m = 10
        // each time, avg <- 0.998^20 avg in all; not 0.998^(10 + 20) from the first idle start.
        let mut r = Red::new(spec(), 576);
        r.avg = 5.0;
        r.idle_since = Some(Time(0));
        let s = Dur::from_millis(72);
        r.on_arrival(Time(720_000_000), 0, 0, 576, s, 0.99);
        assert_eq!(r.idle_since, None);
        r.went_idle(Time(720_000_000));
        r.on_arrival(Time(1_440_000_000), 0, 0, 576, s, 0.99);
        assert!((r.avg - 5.0 * 0.998f64.powi(20)).abs() < 1e-12, "{}", r.avg);
    }

    #[test]
    fn ns2_never_drops_at_a_short_queue_and_starts_the_count_first() {
        // avg 7.5 is above max_th: a forced drop in the paper's RED whatever the queue, but
        // ns-2 drops nothing while at most one packet waits (`qlen > 1`).
        let mut r = held(
            RedSpec {
                ns2: true,
                ..spec()
            },
            7.5,
        );
        assert_eq!(
            r.on_arrival(Time(0), 1, 576, 576, Dur(1), 0.0),
            Verdict::Pass
        );
        assert_eq!(
            r.on_arrival(Time(0), 2, 1152, 576, Dur(1), 0.99),
            Verdict::Congested { forced: true }
        );
        // Between the thresholds (avg 4.5, p_b 0.05): the first arrival with two waiting only
        // starts the count (count 1), even with a draw of 0; the next has count 2, p_a =
        // 0.05 / 0.9 = 0.0556, so a draw of 0.055 drops it.
        r.avg = 4.5;
        assert_eq!(
            r.on_arrival(Time(0), 1, 576, 576, Dur(1), 0.0),
            Verdict::Pass
        );
        assert_eq!(
            r.on_arrival(Time(0), 2, 1152, 576, Dur(1), 0.0),
            Verdict::Pass
        );
        assert_eq!(r.count, 1);
        assert_eq!(
            r.on_arrival(Time(0), 2, 1152, 576, Dur(1), 0.055),
            Verdict::Congested { forced: false }
        );
        // The paper's RED (ns2 off) drops at a one-packet queue above max_th.
        let mut p = held(spec(), 7.5);
        assert_eq!(
            p.on_arrival(Time(0), 1, 576, 576, Dur(1), 0.99),
            Verdict::Congested { forced: true }
        );
    }

    #[test]
    fn probability_and_count() {
        let mut r = held(spec(), 4.5); // halfway: p_b = 0.05
        assert!((r.base_probability() - 0.05).abs() < 1e-9);
        // count = 0 first: p_a = 0.05; a draw of 0.06 passes, count becomes 0 -> 1 ...
        assert_eq!(
            r.on_arrival(Time(0), 4, 0, 576, Dur(1), 0.06),
            Verdict::Pass
        );
        // count = 1: p_a = 0.05 / 0.95 = 0.0526; 0.052 < p_a, so this one is dropped.
        assert_eq!(
            r.on_arrival(Time(0), 4, 0, 576, Dur(1), 0.052),
            Verdict::Congested { forced: false }
        );
        assert_eq!(r.count, 0);
        r.avg = 7.5;
        assert_eq!(
            r.on_arrival(Time(0), 8, 0, 576, Dur(1), 0.99),
            Verdict::Congested { forced: true }
        );
        r.spec.gentle = true;
        // Gentle at avg 7.5: p_b = 0.1 + 0.9 * 0.5 / 7.
        let want = 0.1 + 0.9 * 0.5 / 7.0;
        assert!((r.base_probability() - want).abs() < 1e-9);
    }
}
