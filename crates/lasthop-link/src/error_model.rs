//! The error process's decision: does this transmission attempt fail?
//!
//! The pipeline asks a direction's [`ErrorModel`] once per attempt that reaches the far end (the
//! first transmission, then each ARQ retry). What happens to a failed attempt (drop, one delay, or
//! ARQ retries up to a limit) is the `handling` of the state in force and stays in the pipeline:
//! an error model only chooses *which* attempts fail.
//!
//! Models shipped:
//! - [`StateErrors`] (the default): the state in force's `error` probability, drawn from the
//!   direction's `link.errors.{dir}` stream (the one the handling's error delays also draw from);
//!   a probability per packet, or per bit (`error_unit = "bit"`: a packet of n bits fails with
//!   1 − (1 − p)^n), fixed or drawn from a distribution for each attempt;
//! - [`Uniform`]: every attempt fails with probability p, drawn from its own `link.loss.{dir}`
//!   stream (netem's `loss random`);
//! - [`Pattern`]: attempts N, M, ... of every K fail (1-based, counting the attempts that reach
//!   the error stage in this direction), with no randomness;
//! - netem's Gilbert–Elliott and 4-state models, and losses replayed from a file
//!   ([`crate::netem_loss`]), each with its own cause on its `error` events.
//!
//! A new model (Gilbert–Elliott, trace-driven, ...) is a type implementing [`ErrorModel`], a
//! variant of [`LossModel`] with its spec keys, and a line in [`build`]; nothing in the pipeline
//! changes. [`crate::Link::set_error_model`] installs any model directly.

use crate::netem_loss::{
    FourState, FourStateParams, GeParams, GilbertElliott, LossTrace, TraceLoss,
};
use crate::spec::{Dir, ErrorUnit, Params};
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Packet, Seeds, Time};

/// One transmission attempt reaching the far end.
pub struct Attempt<'a> {
    pub now: Time,
    pub dir: Dir,
    pub packet: &'a Packet,
    /// 1 = the first transmission, 2 = the first ARQ retry, ...
    pub attempt: u32,
    /// The parameters of the state in force (its `error` probability and handling).
    pub params: &'a Params,
    /// The bits the attempt sends: the packet and the link's per-packet overhead.
    pub bits: u64,
}

/// Decides which transmission attempts fail. Sans-IO: randomness only from named streams the
/// model owns (or, for the state model, the direction's error stream it is handed).
pub trait ErrorModel: Send {
    /// Whether attempt `a` fails. `errors` is the direction's `link.errors.{dir}` stream, which
    /// the default state model draws from and the handling's error delays draw from after it; a
    /// new model should own its own named stream and leave this one alone, so that adding it
    /// changes no other draw.
    fn fails(&mut self, a: &Attempt<'_>, errors: &mut Stream) -> bool;

    /// The cause its failures carry on their `error` events (`None`: the link's own errors,
    /// which leave the column empty).
    fn cause(&self) -> Option<crate::event::Cause> {
        None
    }
}

/// The loss model of one direction, as the spec chose it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LossModel {
    /// The state chain's `error` probability (the default).
    #[default]
    States,
    /// Every attempt fails with this probability.
    Uniform { probability: f64 },
    /// Attempts `drop` (1-based, ascending, each in 1..=every) of every `every` fail.
    Pattern { drop: Vec<u64>, every: u64 },
    /// netem's Gilbert–Elliott model.
    GilbertElliott(GeParams),
    /// netem's 4-state Markov model.
    FourState(FourStateParams),
    /// Losses replayed from a file.
    Trace(LossTrace),
}

impl LossModel {
    /// The model names a spec may give, for error messages.
    pub const NAMES: [&'static str; 6] = [
        "states",
        "uniform",
        "pattern",
        "gilbert_elliott",
        "4state",
        "trace",
    ];
}

/// Builds the model of direction `dir`; `seeds` gives it its named streams. `None` is the
/// default [`StateErrors`], which the error stage runs inline.
pub fn build(m: &LossModel, seeds: &Seeds, dir: Dir) -> Option<Box<dyn ErrorModel>> {
    match m {
        LossModel::States => None,
        LossModel::Uniform { probability } => Some(Box::new(Uniform {
            probability: *probability,
            rng: seeds.stream(&format!("link.loss.{dir}")),
        })),
        LossModel::Pattern { drop, every } => Some(Box::new(Pattern::new(drop.clone(), *every))),
        LossModel::GilbertElliott(g) => Some(Box::new(GilbertElliott::new(
            *g,
            seeds.stream(&format!("link.loss.{dir}")),
        ))),
        LossModel::FourState(q) => Some(Box::new(FourState::new(
            *q,
            seeds.stream(&format!("link.loss.{dir}")),
        ))),
        LossModel::Trace(t) => Some(Box::new(TraceLoss::new(t.clone()))),
    }
}

/// The state in force's `error` probability, drawn from the direction's error stream: exactly
/// the draws the model has always made (none when the probability is 0 or 1).
pub struct StateErrors;

impl ErrorModel for StateErrors {
    #[inline]
    fn fails(&mut self, a: &Attempt<'_>, errors: &mut Stream) -> bool {
        state_fails(a.params, a.bits / 8, 0, errors)
    }
}

/// The state's test of an attempt of `len` bytes (and the link's `overhead` per packet).
#[inline]
fn state_fails(params: &Params, len: u64, overhead: u32, errors: &mut Stream) -> bool {
    if params.error_dist.is_some() || params.error_unit == ErrorUnit::Bit {
        return drawn_or_bit_fails(params, (len + u64::from(overhead)) * 8, errors);
    }
    let p = params.error;
    p > 0.0 && (p >= 1.0 || unit(errors) < p)
}

/// [`state_fails`] for an error probability drawn from a distribution (one draw, then the
/// test) or given per bit: out of line, so the fixed per-packet probability keeps its code.
#[cold]
#[inline(never)]
fn drawn_or_bit_fails(params: &Params, bits: u64, errors: &mut Stream) -> bool {
    let p = match &params.error_dist {
        Some(d) => d.probability(errors),
        None => params.error,
    };
    let p = match params.error_unit {
        ErrorUnit::Packet => p,
        // 1 − (1 − p)^bits, without the rounding of 1 − p near 1.
        ErrorUnit::Bit => -(bits as f64 * (-p).ln_1p()).exp_m1(),
    };
    p > 0.0 && (p >= 1.0 || unit(errors) < p)
}

/// Each attempt fails independently with `probability` (netem `loss random`).
pub struct Uniform {
    probability: f64,
    rng: Stream,
}

impl Uniform {
    pub fn new(probability: f64, rng: Stream) -> Uniform {
        Uniform { probability, rng }
    }
}

impl ErrorModel for Uniform {
    fn fails(&mut self, _: &Attempt<'_>, _: &mut Stream) -> bool {
        // One draw per attempt, whatever p is, so the stream's use does not depend on p.
        unit(&mut self.rng) < self.probability
    }
}

/// Attempts `drop` of every `every` fail: with `drop = [3, 7]`, `every = 10`, attempts 3, 7, 13,
/// 17, 23, ... of the direction.
pub struct Pattern {
    hit: Vec<bool>,
    /// Attempts seen so far.
    count: u64,
}

impl Pattern {
    pub fn new(drop: Vec<u64>, every: u64) -> Pattern {
        let mut hit = vec![false; every as usize];
        for n in drop {
            hit[(n - 1) as usize] = true;
        }
        Pattern { hit, count: 0 }
    }
}

impl ErrorModel for Pattern {
    fn fails(&mut self, _: &Attempt<'_>, _: &mut Stream) -> bool {
        let pos = (self.count % self.hit.len() as u64) as usize;
        self.count += 1;
        self.hit[pos]
    }
}

/// Stage 4, the error process of one direction: the model choosing which attempts fail, and the
/// direction's error stream (the state model's draws, then the handling's error delays).
pub(crate) struct ErrorStage {
    /// `None`: the default [`StateErrors`], without a call through a pointer.
    pub model: Option<Box<dyn ErrorModel>>,
    /// `link.errors.{dir}`.
    pub rng: Stream,
}

impl ErrorStage {
    /// The `error` event of a failed attempt: with the model's cause when it has one.
    #[inline]
    pub fn event(&self, attempt: u32) -> crate::event::EventKind {
        use crate::event::EventKind;
        match self.model.as_ref().and_then(|m| m.cause()) {
            None => EventKind::Error(attempt),
            Some(c) => EventKind::ErrorBy(attempt, c),
        }
    }
}

impl ErrorStage {
    /// Whether the attempt fails. It is described lazily: the default model needs only the
    /// state's probability, and this runs for every packet.
    #[inline]
    pub fn fails<'a>(
        &mut self,
        params: &Params,
        len: u64,
        overhead: u32,
        attempt: impl FnOnce() -> Attempt<'a>,
    ) -> bool {
        match &mut self.model {
            None => state_fails(params, len, overhead, &mut self.rng),
            Some(m) => m.fails(&attempt(), &mut self.rng),
        }
    }
}
