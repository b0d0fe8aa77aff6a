//! netem's correlated loss models and trace-driven loss, as error models (which attempts
//! fail; the state's handling still says what a failure does): `[down.loss] model =
//! "gilbert_elliott"`, `"4state"` or `"trace"`.
//!
//! - **Gilbert–Elliott** (netem `loss gemodel p [r [1-h [1-k]]]`): a good and a bad state; an
//!   attempt is lost with the loss probability of the state it finds (`loss_good` = 1 − k,
//!   default 0; `loss_bad` = 1 − h, default 1), and the chain moves good → bad with `p`, bad →
//!   good with `r` (default 1), as netem's `loss_gilb_ell` draws them: the transition first,
//!   then the loss, both from the state found, two draws per attempt. It reduces to Bernoulli
//!   (r = 1 − p), Simple Gilbert (loss_bad 1, loss_good 0) and Gilbert (loss_good 0).
//! - **4-state Markov** (netem `loss state p13 [p31 [p32 [p23 [p14]]]]`, the GI model of
//!   Salsano et al.): states 1 (a packet received in a gap), 2 (received in a burst), 3 (lost
//!   in a burst), 4 (an isolated loss in a gap). Each attempt moves the chain with one draw and
//!   is lost if it lands in 3 or 4: from 1 to 4 with p14, to 3 with p13; from 2 to 3 with p23;
//!   from 3 to 2 with p32, to 1 with p31; from 4 back to 1. Defaults as iproute2's: p31 = 1 −
//!   p13 (Bernoulli), p32 = 0, p23 = 1, p14 = 0.
//! - **Trace** (`lost = "FILE"`: attempt numbers, 1-based, counted over the direction as
//!   `pattern` counts them; or `episodes = "FILE"`: `START END` lines, every attempt reaching
//!   the far end in [START, END) fails): losses recorded elsewhere, replayed; no randomness.
//!
//! Each draws from `link.loss.{dir}` (one loss model per direction), so adding one moves no
//! other draw; their `error` events carry the model as their cause (`gemodel`, `4state`,
//! `loss_trace`).

use crate::error_model::attempt::{Attempt, ErrorModel};
use crate::event::Cause;
pub use crate::spec::loss::{load_attempts, load_episodes, FourStateParams, GeParams, LossTrace};
use lasthop_core::rng::{unit, Stream};

pub struct GilbertElliott {
    params: GeParams,
    bad: bool,
    rng: Stream,
}

impl GilbertElliott {
    pub fn new(params: GeParams, rng: Stream) -> GilbertElliott {
        GilbertElliott {
            params,
            bad: false,
            rng,
        }
    }
}

impl ErrorModel for GilbertElliott {
    fn fails(&mut self, _: &Attempt<'_>, _: &mut Stream) -> bool {
        let g = &self.params;
        let (leave, loss) = if self.bad {
            (g.r, g.loss_bad)
        } else {
            (g.p, g.loss_good)
        };
        if unit(&mut self.rng) < leave {
            self.bad = !self.bad;
        }
        unit(&mut self.rng) < loss
    }

    fn cause(&self) -> Option<Cause> {
        Some(Cause::Gemodel)
    }
}

pub struct FourState {
    params: FourStateParams,
    /// 1..=4 as in the model.
    state: u8,
    rng: Stream,
}

impl FourState {
    pub fn new(params: FourStateParams, rng: Stream) -> FourState {
        FourState {
            params,
            state: 1,
            rng,
        }
    }
}

impl ErrorModel for FourState {
    fn fails(&mut self, _: &Attempt<'_>, _: &mut Stream) -> bool {
        let q = &self.params;
        let u = unit(&mut self.rng);
        self.state = match self.state {
            1 if u < q.p14 => 4,
            1 if u < q.p14 + q.p13 => 3,
            1 => 1,
            2 if u < q.p23 => 3,
            2 => 2,
            3 if u < q.p32 => 2,
            3 if u < q.p32 + q.p31 => 1,
            3 => 3,
            _ => 1,
        };
        matches!(self.state, 3 | 4)
    }

    fn cause(&self) -> Option<Cause> {
        Some(Cause::FourState)
    }
}

pub struct TraceLoss {
    trace: LossTrace,
    /// Attempts seen so far, and the place in the trace.
    count: u64,
    next: usize,
}

impl TraceLoss {
    pub fn new(trace: LossTrace) -> TraceLoss {
        TraceLoss {
            trace,
            count: 0,
            next: 0,
        }
    }
}

impl ErrorModel for TraceLoss {
    fn fails(&mut self, a: &Attempt<'_>, _: &mut Stream) -> bool {
        self.count += 1;
        match &self.trace {
            LossTrace::Attempts(v) => {
                if v.get(self.next) == Some(&self.count) {
                    self.next += 1;
                    return true;
                }
                false
            }
            LossTrace::Episodes(v) => {
                let t = a.now.as_nanos();
                while v.get(self.next).is_some_and(|e| e.1 <= t) {
                    self.next += 1;
                }
                v.get(self.next).is_some_and(|e| e.0 <= t)
            }
        }
    }

    fn cause(&self) -> Option<Cause> {
        Some(Cause::LossTrace)
    }
}
