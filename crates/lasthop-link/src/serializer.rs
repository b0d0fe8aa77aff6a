//! Stage 3, the serializer and propagation: one packet at a time at the rate in force when its
//! transmission starts (or, for a direction with a trace, as the trace's capacity allows: see
//! [`crate::trace`]; with CellReplay's pair, its light or heavy PDOs and base delay: see
//! [`crate::cellreplay`]), then the state's propagation delay plus extra and scripted delays.
//!
//! Seawind's other serializer parameters (seed 001, E.1.2) live here too, each costing nothing
//! when not given: the *allocation delay* before a packet that finds the link idle (idle for
//! longer than `idle_timeout`), drawn from `link.alloc.{dir}`; the *available rate*, a
//! multiplier of the rate in force drawn again every `rate_change_interval` from
//! `link.avail.{dir}` (a timeline of time alone, like the state chain's).

use crate::cellreplay::CellServer;
use crate::dir::Dir;
use crate::spec::config::{DirConfig, Params};
use crate::trace::TraceServer;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, Rate, Seeds, Time};

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
    /// CellReplay's pair instead of `trace`: every transmission's end and propagation.
    cell: Option<Box<CellServer>>,
    /// When the last transmission ended (the allocation delay's idle test).
    last_end: Option<Time>,
    /// `link.alloc.{dir}`, with an allocation delay.
    alloc_rng: Option<Box<Stream>>,
    /// The available rate's timeline, with an available rate.
    avail: Option<Box<Avail>>,
    /// A trace, an allocation delay, an available rate or a background load: transmissions
    /// start through the model's `start_tx_extras` and [`Serializer::plan`]; false keeps the
    /// plain rate's code path.
    pub extras: bool,
}

/// Seawind's available rate: the multiplier in force and when it is drawn again.
struct Avail {
    multiplier: f64,
    next: Time,
    /// `link.avail.{dir}`: each change draws the multiplier, then the interval.
    rng: Stream,
}

impl Serializer {
    #[inline]
    pub fn new(dc: &DirConfig, seeds: &Seeds, d: Dir) -> Serializer {
        Serializer {
            transmitting: None,
            sent: 0,
            sched_pos: 0,
            delays_rng: seeds.stream(&format!("link.delays.{d}")),
            trace: match dc.cellreplay {
                Some(_) => None,
                None => dc.trace.clone().map(|t| Box::new(TraceServer::new(t))),
            },
            cell: dc.cellreplay.clone().map(|c| Box::new(CellServer::new(c))),
            last_end: None,
            alloc_rng: dc
                .allocation
                .as_ref()
                .map(|_| Box::new(seeds.stream(&format!("link.alloc.{d}")))),
            extras: dc.trace.is_some()
                || dc.allocation.is_some()
                || dc.available.is_some()
                || dc.background.is_some(),
            avail: dc.available.as_ref().map(|(m, i)| {
                let mut rng = seeds.stream(&format!("link.avail.{d}"));
                let multiplier = m.multiplier(&mut rng);
                let next = Time::ZERO + i.sample(&mut rng).max(Dur(1));
                Box::new(Avail {
                    multiplier,
                    next,
                    rng,
                })
            }),
        }
    }

    /// When a transmission of `bytes` (overhead included) asked for at `now` starts and ends,
    /// with a trace, an allocation delay or an available rate (the plain rate's transmissions
    /// take `rate` directly); `None`: never (a trace that ended). `arrival`: when the packet
    /// reached the link (CellReplay's pair reckons its trains from it).
    pub fn plan(
        &mut self,
        dc: &DirConfig,
        p: &Params,
        now: Time,
        bytes: u64,
        arrival: Time,
    ) -> Option<(Time, Time)> {
        let start = self.allocate(dc, now);
        if let Some(c) = &mut self.cell {
            return Some((start, c.finish(arrival, start, bytes)?));
        }
        Some((start, self.tx_end(dc, p, start, bytes)?))
    }

    /// When a transmission of `bytes` (overhead included) starting at `now` ends: at the rate
    /// in force, or as the trace carries it; `None` if never (a trace that ended).
    #[inline]
    pub fn tx_end(&mut self, dc: &DirConfig, p: &Params, now: Time, bytes: u64) -> Option<Time> {
        if let Some(c) = &mut self.cell {
            return c.finish(now, now, bytes);
        }
        match &mut self.trace {
            None if self.avail.is_some() => self.tx_end_available(dc, p, now, bytes),
            None => Some(now + self.rate(dc, p, now).tx_time(bytes)),
            Some(t) => t.finish(now, bytes),
        }
    }

    /// [`Serializer::tx_end`] with an available rate: while its multiplier is 0 the link sends
    /// nothing, and the packet starts when it is positive again.
    #[cold]
    fn tx_end_available(
        &mut self,
        dc: &DirConfig,
        p: &Params,
        now: Time,
        bytes: u64,
    ) -> Option<Time> {
        let a = self.avail.as_mut().expect("an available rate");
        let (m, i) = dc.available.as_ref().expect("an available rate");
        a.advance(m, i, now);
        let mut start = now;
        let mut changes = 0;
        while a.multiplier <= 0.0 {
            // A distribution that only gives 0 would stop the link for ever.
            changes += 1;
            if changes > 1_000_000 {
                return None;
            }
            start = a.next;
            a.advance(m, i, start);
        }
        Some(start + self.rate(dc, p, start).tx_time(bytes))
    }

    /// The start of a transmission at `now`: later by an allocation delay when the link has
    /// been idle longer than `idle_timeout` (or has never sent), as Seawind's SP allocated the
    /// channel for a packet that found the link idle.
    #[inline]
    pub fn allocate(&mut self, dc: &DirConfig, now: Time) -> Time {
        let (Some((dist, idle)), Some(rng)) = (&dc.allocation, &mut self.alloc_rng) else {
            return now;
        };
        if self.last_end.is_some_and(|e| now - e <= *idle) {
            return now;
        }
        now + dist.sample(rng)
    }

    /// With CellReplay's pair: the propagation of the packet whose transmission was planned
    /// last (the one in progress).
    #[inline]
    pub fn cell_delay(&self) -> Option<Dur> {
        self.cell.as_ref().map(|c| c.delay())
    }

    /// A background packet's transmission ended at `now`.
    #[inline]
    pub fn ended_background(&mut self, now: Time) {
        self.last_end = Some(now);
    }

    /// The transmission in progress ended at `now`: its link sequence number.
    #[inline]
    pub fn end(&mut self, now: Time) -> u64 {
        self.last_end = Some(now);
        self.transmitting
            .take()
            .expect("a transmission was running")
    }

    /// A transmission ended and the next (if any) has started: an idle serializer loses what
    /// is left of the trace's opportunity.
    #[inline(always)]
    pub fn settle(&mut self) {
        if !self.extras {
            return;
        }
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
        let r = self.rate_plain(dc, p, t);
        match &mut self.avail {
            None => r,
            Some(a) => a.scale(dc, t, r),
        }
    }

    /// [`Serializer::rate`] before the available rate's multiplier.
    #[inline(always)]
    fn rate_plain(&mut self, dc: &DirConfig, p: &Params, t: Time) -> Rate {
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

impl Avail {
    /// Draws the changes due by `t`.
    fn advance(&mut self, m: &crate::dist::NumDist, i: &crate::dist::Dist, t: Time) {
        while self.next <= t {
            self.multiplier = m.multiplier(&mut self.rng);
            self.next += i.sample(&mut self.rng).max(Dur(1));
        }
    }

    /// `r` times the multiplier in force at `t` (at least 1 bit/s: a queue discipline divides
    /// by it; a multiplier of 0 stops transmissions in [`Serializer::tx_end`]).
    #[cold]
    fn scale(&mut self, dc: &DirConfig, t: Time, r: Rate) -> Rate {
        let (m, i) = dc.available.as_ref().expect("an available rate");
        self.advance(m, i, t);
        if r.is_unlimited() {
            return r;
        }
        Rate(((r.bits_per_sec() as f64 * self.multiplier).round() as u64).clamp(1, u64::MAX - 1))
    }
}
