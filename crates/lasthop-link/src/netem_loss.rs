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

use crate::error_model::{Attempt, ErrorModel};
use crate::event::Cause;
use crate::files;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::spec::{err, SpecError};
use lasthop_core::units::parse_dur;
use std::path::Path;
use std::sync::Arc;

/// Gilbert–Elliott's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeParams {
    pub p: f64,
    pub r: f64,
    pub loss_bad: f64,
    pub loss_good: f64,
}

/// The 4-state model's transition probabilities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FourStateParams {
    pub p13: f64,
    pub p31: f64,
    pub p32: f64,
    pub p23: f64,
    pub p14: f64,
}

/// Losses read from a file.
#[derive(Clone, PartialEq)]
pub enum LossTrace {
    /// Attempt numbers (1-based, increasing).
    Attempts(Arc<[u64]>),
    /// Time intervals [start, end), ns, increasing and apart.
    Episodes(Arc<[(u64, u64)]>),
}

impl std::fmt::Debug for LossTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LossTrace::Attempts(v) => write!(f, "{} lost attempts", v.len()),
            LossTrace::Episodes(v) => write!(f, "{} loss episodes", v.len()),
        }
    }
}

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

/// Reads a trace of lost attempt numbers (`lost`): one whole number per line, increasing.
pub fn load_attempts(key: &str, file: &str, base: &Path) -> Result<LossTrace, SpecError> {
    const WHAT: &str = "a loss trace has one attempt number per line, counted from 1, increasing";
    let text = files::read(base, key, file, "a loss trace")?;
    let mut v: Vec<u64> = vec![];
    for (line, l) in files::value_lines(&text) {
        let n: u64 = l.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            files::line_err(
                key,
                file,
                line,
                format!("{l:?} is not an attempt number; {WHAT}"),
            )
        })?;
        if v.last().is_some_and(|&p| n <= p) {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("{n} does not come after {}; {WHAT}", v[v.len() - 1]),
            ));
        }
        v.push(n);
        files::check_count(key, file, v.len())?;
    }
    if v.is_empty() {
        return Err(err(key, format!("{file:?} has no attempt numbers; {WHAT}")));
    }
    Ok(LossTrace::Attempts(v.into()))
}

/// Reads a trace of loss episodes (`episodes`): `START END` per line (durations with units, or
/// bare seconds), each episode after the last.
pub fn load_episodes(key: &str, file: &str, base: &Path) -> Result<LossTrace, SpecError> {
    const WHAT: &str = "a loss-episode trace has `START END` per line, e.g. `12.5s 13s` (bare numbers are seconds), START before END, each after the one before";
    let text = files::read(base, key, file, "a loss-episode trace")?;
    let mut v: Vec<(u64, u64)> = vec![];
    for (line, l) in files::value_lines(&text) {
        let fields: Vec<&str> = l
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let [a, b] = fields[..] else {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("{l:?} is not two times; {WHAT}"),
            ));
        };
        let time = |s: &str| {
            if s.ends_with(|c: char| c.is_ascii_digit()) {
                parse_dur(&format!("{s}s"))
            } else {
                parse_dur(s)
            }
            .map(|d| d.0)
            .map_err(|e| files::line_err(key, file, line, e))
        };
        let (a, b) = (time(a)?, time(b)?);
        if a >= b {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("the episode ends before it starts; {WHAT}"),
            ));
        }
        if v.last().is_some_and(|p| a < p.1) {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("the episode starts before the last one ended; {WHAT}"),
            ));
        }
        v.push((a, b));
        files::check_count(key, file, v.len())?;
    }
    if v.is_empty() {
        return Err(err(key, format!("{file:?} has no episodes; {WHAT}")));
    }
    Ok(LossTrace::Episodes(v.into()))
}
