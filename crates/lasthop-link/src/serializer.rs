//! Stage 3, the serializer and propagation: one packet at a time at the rate in force when its
//! transmission starts (or, for a direction with a trace, as the trace's capacity allows: see
//! [`crate::trace`]), then the state's propagation delay plus extra and scripted delays.

use crate::spec::{DirConfig, Params};
use crate::trace::TraceServer;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, Rate, Time};

pub(crate) struct Serializer {
    /// Link sequence number of the packet being transmitted.
    pub transmitting: Option<u64>,
    /// Transmissions started so far in this direction.
    pub sent: u64,
    /// Place in the rate schedule (advances with time).
    sched_pos: usize,
    /// `link.delays.{dir}`: extra and scripted delays.
    delays_rng: Stream,
    /// The direction's trace, which then gives every transmission's end.
    trace: Option<Box<TraceServer>>,
}

impl Serializer {
    #[inline]
    pub fn new(dc: &DirConfig, delays_rng: Stream) -> Serializer {
        Serializer {
            transmitting: None,
            sent: 0,
            sched_pos: 0,
            delays_rng,
            trace: dc.trace.clone().map(|t| Box::new(TraceServer::new(t))),
        }
    }

    /// When a transmission of `bytes` (overhead included) starting at `now` ends: at the rate
    /// in force, or as the trace carries it; `None` if never (a trace that ended).
    #[inline]
    pub fn tx_end(&mut self, dc: &DirConfig, p: &Params, now: Time, bytes: u64) -> Option<Time> {
        match &mut self.trace {
            None => Some(now + self.rate(dc, p, now).tx_time(bytes)),
            Some(t) => t.finish(now, bytes),
        }
    }

    /// A transmission ended and the next (if any) has started: an idle serializer loses what
    /// is left of the trace's opportunity.
    #[inline]
    pub fn settle(&mut self) {
        if self.transmitting.is_none() {
            if let Some(t) = &mut self.trace {
                t.idle();
            }
        }
    }

    /// The rate in force at `t`: the state's override, else the base rate or the scheduled rate
    /// (advancing the place in the schedule).
    #[inline]
    pub fn rate(&mut self, dc: &DirConfig, p: &Params, t: Time) -> Rate {
        if let Some(r) = p.rate_override {
            return r;
        }
        let sched = &dc.schedule;
        while self.sched_pos < sched.len() && sched[self.sched_pos].0 <= t {
            self.sched_pos += 1;
        }
        match self.sched_pos {
            0 => p.base_rate,
            n => sched[n - 1].1,
        }
    }

    /// The delay added to the propagation of transmission number `nth`: the state's extra delay
    /// and any scripted delay that hits it.
    #[inline]
    pub fn extra_delay(&mut self, dc: &DirConfig, p: &Params, nth: u64) -> Dur {
        let mut extra = Dur::ZERO;
        let rng = &mut self.delays_rng;
        if let Some(x) = &p.extra_delay {
            extra += x.sample(rng);
        }
        for sd in &dc.delays {
            let hit = match (sd.nth, sd.probability) {
                (Some(n), _) => n == nth,
                (_, Some(prob)) => prob > 0.0 && (prob >= 1.0 || unit(rng) < prob),
                _ => false,
            };
            if hit {
                extra += sd.delay.sample(rng);
            }
        }
        extra
    }
}
