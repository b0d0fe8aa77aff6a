//! PIE, Proportional Integral controller Enhanced (RFC 8033): a drop probability updated every
//! `tupdate` from the queue delay, applied at enqueue.
//!
//! ```text
//! every tupdate:  p <- alpha (qdelay - target) + beta (qdelay - qdelay_old)      (§4.2)
//!                 p scaled down while drop_prob is small: /2 below 10 %, /8 below 1 %, /32,
//!                 /128, /512, /2048 below 0.0001 % (the auto-tuning)
//!                 p <- min(p, 2 %) when drop_prob >= 10 %;  p += 2 % when qdelay > 250 ms
//!                 drop_prob <- clamp(drop_prob + p, 0, 1);  drop_prob -= drop_prob/64 when
//!                 qdelay and qdelay_old are both 0;  burst_allowance -= tupdate (floor 0)
//!                 all of qdelay, qdelay_old < target/2 and drop_prob = 0: burst_allowance
//!                 <- max_burst                                                   (§4.4)
//!                 qdelay_old <- qdelay
//! on arrival:     no drop while burst_allowance > 0, or qdelay < target/2 and drop_prob < 20 %,
//!                 or fewer than 2 MTUs are queued (§4.1); else derandomized: accu_prob +=
//!                 drop_prob; < 0.85 pass, >= 8.5 drop, else drop with probability drop_prob
//!                 (§5.1, Linux `pie_drop_early`); ECT packets are marked instead while
//!                 drop_prob <= 10 % (§5.1)
//! ```
//!
//! The queue delay is **timestamp-based** (RFC 8033 §5.3 allows it; Linux uses it by default
//! since the `dq_rate_estimator` option appeared, 5.1): `qdelay` is the sojourn time of the
//! last packet that left the router queue, 0 when it left the queue empty (Linux
//! `pie_process_dequeue`). Other choices follow Linux `pie.c`: the 2 % cap, the +2 % above
//! 250 ms, the decay by 1/64, and skipping the probability update when qdelay is 0 but the
//! queue is not empty. The burst allowance shrinks by `tupdate` per update as the RFC's
//! pseudo-code says (Linux shrinks it by the time between dequeues). `accu_prob` restarts after
//! every drop or mark (Linux restarts it on drops only).
//!
//! The updates run on a grid of `tupdate` from time 0 (Linux's timer); the model has no timer
//! for them, so each arrival and departure first runs the updates due since the last one.
//! Between events the queue is unchanged, so the result is the timer's exactly.

use crate::event::Cause;
use crate::queue::discipline::{Arrival, Departure, QueueDiscipline, Verdict};
use crate::spec::queue::pie::PieConfig;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, Time};

/// The enqueue test's outcome before the random draw.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Early {
    Pass,
    Drop,
    /// Drop with this probability (one draw from the discipline's stream).
    Draw(f64),
}

/// PIE as a router queue discipline: draws from `link.pie.{dir}` only in the random band.
pub struct Pie {
    pub cfg: PieConfig,
    /// The link MTU: the "2 MTUs queued" floor and byte mode's unit.
    pub mtu: u64,
    rng: Stream,
    /// The drop probability, 0..=1.
    pub prob: f64,
    /// The current and the previous update's queue delay.
    pub qdelay: Dur,
    pub qdelay_old: Dur,
    pub burst_allowance: Dur,
    pub accu_prob: f64,
    /// When the next update is due.
    pub next_update: Time,
}

impl Pie {
    pub fn new(mut cfg: PieConfig, mtu: u64, rng: Stream) -> Pie {
        // The spec refuses 0; a config built by hand must not stall the update loop.
        cfg.tupdate = cfg.tupdate.max(Dur(1));
        Pie {
            mtu,
            rng,
            prob: 0.0,
            qdelay: Dur::ZERO,
            qdelay_old: Dur::ZERO,
            burst_allowance: cfg.max_burst,
            accu_prob: 0.0,
            next_update: Time::ZERO + cfg.tupdate,
            cfg,
        }
    }

    /// Runs the updates due at or before `now`; `backlog` is the queue's bytes since the last
    /// event (it has not changed in between).
    pub fn catch_up(&mut self, now: Time, backlog: u64) {
        while self.next_update <= now {
            self.update(backlog);
            self.next_update += self.cfg.tupdate;
            if self.prob == 0.0 && self.qdelay == Dur::ZERO && self.qdelay_old == Dur::ZERO {
                // An idle PIE is a fixed point of the update: skip to the next due one.
                let t = self.cfg.tupdate.0;
                self.next_update = Time((now.0 / t + 1) * t);
            }
        }
    }

    /// One probability update (RFC 8033 §4.2, Linux `pie_calculate_probability`).
    pub fn update(&mut self, backlog: u64) {
        let c = &self.cfg;
        let (qdelay, old) = (self.qdelay, self.qdelay_old);
        let mut update_prob = true;
        if qdelay == Dur::ZERO && backlog != 0 {
            // Linux: a delay of 0 with packets queued means a tiny backlog; keep the decay off.
            update_prob = false;
        }
        let (mut alpha, mut beta) = (c.alpha, c.beta);
        if self.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1_000_000.0 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let secs = |d: Dur| d.0 as f64 * 1e-9;
        let mut delta = alpha * (secs(qdelay) - secs(c.target)) + beta * (secs(qdelay) - secs(old));
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > Dur::from_millis(250) {
            delta += 0.02;
        }
        self.prob += delta;
        if self.prob > 1.0 {
            self.prob = 1.0;
            update_prob = false;
        } else if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if qdelay == Dur::ZERO && old == Dur::ZERO && update_prob {
            self.prob -= self.prob / 64.0;
        }
        self.burst_allowance = Dur(self.burst_allowance.0.saturating_sub(c.tupdate.0));
        let half = Dur(c.target.0 / 2);
        if qdelay < half && old < half && self.prob == 0.0 {
            self.burst_allowance = c.max_burst;
            self.accu_prob = 0.0;
        }
        self.qdelay_old = qdelay;
    }

    /// The enqueue decision (RFC 8033 §4.1, §5.1; Linux `pie_drop_early`): whether this packet
    /// of `size` bytes, finding `backlog` bytes queued, is chosen, or with which probability.
    pub fn drop_early(&mut self, backlog: u64, size: u64) -> Early {
        if self.burst_allowance > Dur::ZERO {
            return Early::Pass;
        }
        if self.qdelay < Dur(self.cfg.target.0 / 2) && self.prob < 0.2 {
            return Early::Pass;
        }
        if backlog < 2 * self.mtu {
            return Early::Pass;
        }
        let p = if self.cfg.bytemode && size <= self.mtu {
            self.prob * size as f64 / self.mtu as f64
        } else {
            self.prob
        };
        if p == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += p;
        }
        if self.accu_prob < 0.85 {
            return Early::Pass;
        }
        if self.accu_prob >= 8.5 {
            return Early::Drop;
        }
        Early::Draw(p)
    }
}

impl QueueDiscipline for Pie {
    fn on_arrival(&mut self, a: &Arrival<'_>) -> Verdict {
        self.catch_up(a.now, a.queue_bytes);
        let chosen = match self.drop_early(a.queue_bytes, u64::from(a.packet.wire_len)) {
            Early::Pass => false,
            Early::Drop => true,
            Early::Draw(p) => unit(&mut self.rng) < p,
        };
        if !chosen {
            return Verdict::Pass;
        }
        self.accu_prob = 0.0;
        if self.cfg.ecn && a.packet.ecn().is_ect() && self.prob <= 0.1 {
            Verdict::Mark
        } else {
            Verdict::Drop(Cause::Pie)
        }
    }

    fn at_dequeue(&self) -> bool {
        true
    }

    /// Records the queue delay the next update uses (timestamp-based, Linux
    /// `pie_process_dequeue`).
    fn on_dequeue(&mut self, d: &Departure<'_>) -> Verdict {
        self.catch_up(d.now, d.queue_bytes + u64::from(d.packet.wire_len));
        self.qdelay = if d.queue_pkts == 0 {
            Dur::ZERO
        } else {
            d.sojourn
        };
        Verdict::Pass
    }
}
