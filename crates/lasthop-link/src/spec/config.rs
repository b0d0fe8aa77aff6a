//! The validated configuration the model runs: what [`super::validate`] makes of a spec.

use crate::background::Background;
use crate::cellreplay::CellReplay;
use crate::dist::{Dist, NumDist};
use crate::netem::NetemConfig;
use crate::spec::loss::LossModel;
use crate::spec::queue::QueueConfig;
use crate::spec::schema::{ErrorUnit, Handling, LsbAdmit, ScriptedDelay};
use crate::trace::{DelayTrace, Trace};
use lasthop_core::{Dur, Rate, Time};

#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    pub name: String,
    pub description: Option<String>,
    pub mtu: Option<u32>,
    pub dirs: [DirConfig; 2],
    /// At least one state; a link without `[states]` has one state, "steady", lasting forever.
    pub states: Vec<StateConfig>,
    pub initial: Vec<(usize, f64)>,
    /// The data files the spec named (traces, `user` distributions, loss traces) with digests
    /// of their contents, for fingerprints; empty for most links.
    pub data_files: Vec<crate::files::DataFile>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DirConfig {
    pub overhead: u32,
    /// The link send buffer's size; `None`: it holds only the packet being sent (see
    /// `LinkSpec`'s `lsb`).
    pub lsb: Option<u64>,
    pub lrb: Option<u64>,
    pub link_ack: bool,
    /// With `link_ack`: the time from a packet's release to the freeing of its LSB space.
    pub link_ack_delay: Dur,
    pub lsb_admit: LsbAdmit,
    pub in_order: bool,
    pub queue: QueueConfig,
    pub delays: Vec<ScriptedDelay>,
    /// Base rate changes, sorted by time; the base `rate` holds before the first.
    pub schedule: Vec<(Time, Rate)>,
    /// Effective parameters in each state (indexed like [`LinkConfig::states`]).
    pub per_state: Vec<Params>,
    /// Which attempts fail (the handling of a failure is the state's).
    pub loss: LossModel,
    /// The capacity from a trace file, instead of the rate (`[DIR.trace]`).
    pub trace: Option<Trace>,
    /// Seawind's allocation delay, and the idle time that makes a packet need it.
    pub allocation: Option<(Dist, Dur)>,
    /// Seawind's available rate: the multiplier and the interval of its changes.
    pub available: Option<(NumDist, Dist)>,
    /// Seawind's output dropper: the probability a leaving packet is dropped.
    pub output_dropper: Option<NumDist>,
    /// Seawind's background load.
    pub background: Option<Background>,
    /// netem's jitter, reordering and duplication (all off by default).
    pub netem: NetemConfig,
    /// The propagation delay from a file, instead of `delay`.
    pub delay_trace: Option<DelayTrace>,
    /// CellReplay's pair (`[DIR.trace] cellreplay`): the base delay and light PDOs beside the
    /// heavy trace, which is then [`DirConfig::trace`].
    pub cellreplay: Option<CellReplay>,
}

/// The parameters of one direction while one state holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// `None`: the base rate, or the schedule's.
    pub rate_override: Option<Rate>,
    pub base_rate: Rate,
    pub delay: Dur,
    pub extra_delay: Option<Dist>,
    /// The error probability when it is a fixed number (0 when `error_dist` gives it).
    pub error: f64,
    /// The error probability drawn for each attempt, when the spec gave a distribution.
    pub error_dist: Option<NumDist>,
    pub error_unit: ErrorUnit,
    pub handling: Handling,
    pub error_delay: Option<Dist>,
    pub retries: Option<u32>,
    pub drop_threshold: Option<Dur>,
}

impl Params {
    /// Whether attempts can fail in this state.
    pub fn has_errors(&self) -> bool {
        self.error > 0.0 || self.error_dist.is_some()
    }

    /// The error probability as written.
    pub fn error_text(&self) -> String {
        match &self.error_dist {
            Some(d) => d.to_string(),
            None => self.error.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StateConfig {
    pub name: String,
    pub duration: Option<Dist>,
    pub next: Vec<(usize, f64)>,
}
