//! The models of the state chain and their stage: the state's own `error` probability,
//! uniform and pattern losses, and the [`ErrorStage`] that asks the direction's model.

use super::attempt::{Attempt, ErrorModel};
use crate::spec::config::Params;
use crate::spec::schema::ErrorUnit;
use lasthop_core::rng::{unit, Stream};

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
    pub(super) probability: f64,
    pub(super) rng: Stream,
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
