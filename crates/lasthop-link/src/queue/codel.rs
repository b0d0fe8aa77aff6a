//! CoDel, Controlled Delay (RFC 8289), acting when a packet leaves the router queue for the
//! link send buffer: its sojourn time is the time it spent in the router queue.
//!
//! ```text
//! dodequeue:  ok_to_drop <- sojourn >= target and backlog after > MTU, for an interval already
//!             (first_above_time = now + interval when it first goes above; ok from then on)
//! dequeue:    dropping:  leave the state if !ok_to_drop; else while now >= drop_next:
//!                        drop, count++, next packet, drop_next <- drop_next + interval/sqrt(count)
//!             !dropping and ok_to_drop: drop, enter the state with
//!                        count <- count - lastcount if that is > 1 and now - drop_next < 16 interval,
//!                        else 1;  lastcount <- count;  drop_next <- now + interval/sqrt(count)
//! ```
//!
//! The RFC's loop (§5.5, "dequeue routine") drops several packets in one dequeue; here the model
//! dequeues one packet at a time and asks [`CodelVars::on_dequeue`] about each, so the vars
//! remember that the previous packet was dropped and the next one continues that dequeue.
//!
//! Where the RFC leaves a choice this follows Linux (`codel_impl.h`): the "bytes <= MTU" test
//! uses the router queue's backlog after the packet left and the link MTU; with ECN a chosen ECT
//! packet is marked and sent, which ends that dequeue's loop; an empty queue leaves the drop
//! state. Unlike Linux, `interval/sqrt(count)` is computed exactly (Linux approximates
//! 1/sqrt(count) by a Newton step in fixed point), as the RFC's pseudo-code writes it.

use crate::event::Cause;
use crate::queue::discipline::{Arrival, Departure, QueueDiscipline, Verdict};
use crate::spec::queue::codel::CodelConfig;
use lasthop_core::{Dur, Time};

/// CoDel's per-queue state (RFC 8289 §5.1's variables).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodelVars {
    /// Drops (or marks) since the drop state was entered, as the control law counts them.
    pub count: u32,
    /// `count` when the drop state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn time will have been above target for an interval; `None` below target.
    pub first_above_time: Option<Time>,
    /// The next drop (or mark) time while dropping.
    pub drop_next: Time,
    /// The previous packet was dropped: the next one dequeued continues that dequeue (the
    /// model dequeues it at once, unless the queue ran empty, which clears this).
    pending: Option<Pending>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Pending {
    /// Dropped inside the drop state's loop: the next packet continues it.
    Loop,
    /// Dropped on entering the drop state: the next packet is sent.
    Entered,
}

/// `t + interval / sqrt(count)` (RFC 8289 §5.5, `control_law`), truncated to whole ns.
pub fn control_law(t: Time, interval: Dur, count: u32) -> Time {
    let n = f64::from(count.max(1));
    t + Dur((interval.0 as f64 / n.sqrt()) as u64)
}

impl CodelVars {
    /// RFC 8289 §5.4 (`dodequeue`): whether the sojourn time has stayed at or above target for
    /// an interval. `backlog` is the queue's bytes after the packet left.
    fn should_drop(
        &mut self,
        c: &CodelConfig,
        mtu: u64,
        now: Time,
        sojourn: Dur,
        backlog: u64,
    ) -> bool {
        if sojourn < c.target || backlog <= mtu {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + c.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// The verdict on a packet leaving the queue at `now` after `sojourn` in it, leaving
    /// `backlog` bytes behind. Drops carry cause `codel`.
    pub fn on_dequeue(
        &mut self,
        c: &CodelConfig,
        mtu: u64,
        now: Time,
        sojourn: Dur,
        backlog: u64,
        ect: bool,
    ) -> Verdict {
        let ok = self.should_drop(c, mtu, now, sojourn, backlog);
        match self.pending.take() {
            Some(Pending::Loop) => {
                if !ok {
                    self.dropping = false;
                    return Verdict::Pass;
                }
                self.drop_next = control_law(self.drop_next, c.interval, self.count);
                return self.drop_loop(c, now, ect);
            }
            Some(Pending::Entered) => return Verdict::Pass,
            None => {}
        }
        if self.dropping {
            if !ok {
                self.dropping = false;
                return Verdict::Pass;
            }
            return self.drop_loop(c, now, ect);
        }
        if !ok {
            return Verdict::Pass;
        }
        // Enter the drop state (§5.5): re-entering soon after leaving keeps the drop rate.
        let v = if c.ecn && ect {
            Verdict::Mark
        } else {
            self.pending = Some(Pending::Entered);
            Verdict::Drop(Cause::Codel)
        };
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        let since_next = now.0 as i128 - self.drop_next.0 as i128;
        self.count = if delta > 1 && since_next < 16 * i128::from(c.interval.0 as i64) {
            delta
        } else {
            1
        };
        self.lastcount = self.count;
        self.drop_next = control_law(now, c.interval, self.count);
        v
    }

    /// One pass of the drop state's loop: drop (or mark) if `drop_next` has come.
    fn drop_loop(&mut self, c: &CodelConfig, now: Time, ect: bool) -> Verdict {
        if now < self.drop_next {
            return Verdict::Pass;
        }
        self.count = self.count.saturating_add(1);
        if c.ecn && ect {
            // Linux: a marked packet is sent, so the loop ends with the next drop time set.
            self.drop_next = control_law(self.drop_next, c.interval, self.count);
            return Verdict::Mark;
        }
        self.pending = Some(Pending::Loop);
        Verdict::Drop(Cause::Codel)
    }

    /// The queue is empty: a dequeue would find nothing, which leaves the drop state and resets
    /// the above-target clock (RFC 8289 §5.4–5.5).
    pub fn on_empty(&mut self) {
        self.dropping = false;
        self.first_above_time = None;
        self.pending = None;
    }
}

/// CoDel as a router queue discipline: it passes every arrival and judges departures.
pub struct Codel {
    pub cfg: CodelConfig,
    /// The "MTU" of the backlog test (RFC 8289 `maxpacket`): the link MTU.
    pub mtu: u64,
    pub vars: CodelVars,
}

impl Codel {
    pub fn new(cfg: CodelConfig, mtu: u64) -> Codel {
        Codel {
            cfg,
            mtu,
            vars: CodelVars::default(),
        }
    }
}

impl QueueDiscipline for Codel {
    fn on_arrival(&mut self, _: &Arrival<'_>) -> Verdict {
        Verdict::Pass
    }

    fn at_dequeue(&self) -> bool {
        true
    }

    fn on_dequeue(&mut self, d: &Departure<'_>) -> Verdict {
        self.vars.on_dequeue(
            &self.cfg,
            self.mtu,
            d.now,
            d.sojourn,
            d.queue_bytes,
            d.packet.ecn().is_ect(),
        )
    }

    fn on_empty(&mut self, _now: Time) {
        self.vars.on_empty();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn control_law_is_interval_over_sqrt_count() {
        let i = Dur::from_millis(100);
        assert_eq!(control_law(ms(0), i, 1), ms(100));
        // 100 ms / sqrt(2) = 70.710678 ms; / sqrt(4) = 50 ms.
        assert_eq!(control_law(ms(0), i, 2), Time(70_710_678));
        assert_eq!(control_law(ms(10), i, 4), ms(60));
    }

    #[test]
    fn reentry_keeps_count_minus_lastcount() {
        let c = CodelConfig::default();
        let mut v = CodelVars {
            count: 5,
            lastcount: 1,
            drop_next: ms(1000),
            first_above_time: Some(ms(1050)),
            ..Default::default()
        };
        // Above target since 950 ms, a dequeue at 1100 ms re-enters 100 ms after drop_next
        // (< 16 intervals): count = 5 - 1 = 4, next drop 100/sqrt(4) = 50 ms later.
        let verdict = v.on_dequeue(&c, 1500, ms(1100), Dur::from_millis(20), 3000, false);
        assert_eq!(verdict, Verdict::Drop(Cause::Codel));
        assert_eq!((v.count, v.lastcount), (4, 4));
        assert_eq!(v.drop_next, ms(1150));
        // Long after (>= 16 intervals): count restarts at 1.
        let mut v = CodelVars {
            count: 5,
            lastcount: 1,
            drop_next: ms(1000),
            first_above_time: Some(ms(2600)),
            ..Default::default()
        };
        v.on_dequeue(&c, 1500, ms(2600), Dur::from_millis(20), 3000, false);
        assert_eq!((v.count, v.drop_next), (1, ms(2700)));
    }
}
