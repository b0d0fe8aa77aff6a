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
//! changes. [`crate::model::Link::set_error_model`] installs any model directly.

pub mod attempt;
pub mod state;

pub use crate::spec::loss::LossModel;
pub use attempt::{Attempt, ErrorModel};
pub(crate) use state::ErrorStage;
pub use state::{Pattern, StateErrors, Uniform};

use crate::dir::Dir;
use crate::netem_loss::{FourState, GilbertElliott, TraceLoss};
use lasthop_core::Seeds;

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
