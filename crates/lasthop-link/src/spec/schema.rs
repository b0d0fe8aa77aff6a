//! The link spec as written: the serde types of the TOML file, every key optional where the
//! spec allows it. [`super::validate`] checks them into [`super::config`].

use crate::background::BackgroundSpec;
use crate::dist::{Dist, NumDist};
use crate::netem::NetemSpec;
use crate::spec::queue::QueueSpec;
use crate::trace::{DelayTraceSpec, TraceSpec};
use indexmap::IndexMap;
use lasthop_core::{Bytes, Dur, Rate};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Largest IP packet the link carries; larger packets are dropped (cause `mtu`).
    pub mtu: Option<Bytes>,
    #[serde(default)]
    pub both: DirSpec,
    #[serde(default)]
    pub down: DirSpec,
    #[serde(default)]
    pub up: DirSpec,
    /// The state the chain starts in: a name, or `{ name = probability, ... }`.
    pub initial_state: Option<Choice>,
    #[serde(default)]
    pub states: IndexMap<String, StateSpec>,
}

/// Per-direction parameters. Every key is optional; see [`DirConfig`] for the defaults.
#[derive(Deserialize, Serialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    pub rate: Option<Rate>,
    /// Bytes added to every packet's size when computing its serialization time (framing).
    pub overhead: Option<Bytes>,
    /// Propagation delay.
    pub delay: Option<Dur>,
    /// Extra delay added to every packet's propagation (jitter); packets still leave in order.
    pub extra_delay: Option<Dist>,
    /// Link send buffer size. Absent: the LSB holds only the packet being sent and frees it
    /// when its last bit is sent (no link-layer ACK emulation).
    pub lsb: Option<Bytes>,
    /// Link receive buffer size; no limit when absent.
    pub lrb: Option<Bytes>,
    /// Link-layer ACK emulation: a packet holds its LSB space until it leaves the LRB (default
    /// true when `lsb` is given, as in Seawind; refused without `lsb`); false frees it when its
    /// transmission ends.
    pub link_ack: Option<bool>,
    /// With `link_ack`: how long after a packet leaves the LRB its LSB space is freed, the
    /// link-level ACK's way back (default 0: at once). Seed 002's links set their 300 ms
    /// propagation delay (docs/link-model.md).
    pub link_ack_delay: Option<Dur>,
    /// When a packet may enter the LSB: `fits` (default) when it fits whole; `below` while the
    /// LSB holds less than its size, so it may overflow by part of one packet (what Seawind did
    /// by seeds 000 and 001's numbers; docs/link-model.md).
    pub lsb_admit: Option<LsbAdmit>,
    /// Release packets in link order from the LRB (default true); false releases each packet
    /// when it arrives (Seawind's `reordering = TRUE`).
    pub in_order: Option<bool>,
    pub queue: Option<QueueSpec>,
    /// Per-packet error probability (with `error_unit = "bit"`: the bit error rate), 0..=1: a
    /// number, or a distribution drawn for each attempt (Seawind's `error_probability`).
    pub error: Option<NumDist>,
    /// What `error` is a probability of: `"packet"` (default, Seawind's UNIT) or `"bit"`
    /// (Seawind's BIT: a packet of n bits fails with 1 − (1 − error)^n).
    pub error_unit: Option<ErrorUnit>,
    pub handling: Option<Handling>,
    /// The delay of a `delay` error, or of each `arq` retry (700 ms in the seeds).
    pub error_delay: Option<Dist>,
    /// `arq`: the most retries a packet gets before it is dropped.
    pub retries: Option<u32>,
    /// `arq`: the packet is dropped when its next retry would take its accumulated error delay
    /// past this (Seawind's `delay_drop_threshold`: 701 ms allows one 700 ms retry).
    pub drop_threshold: Option<Dur>,
    /// Scripted delays: the Nth packet of the direction, or each packet with probability p.
    pub delays: Option<Vec<ScriptedDelay>>,
    /// Rate changes at fixed times: `[{ at = "10s", rate = "32kbit" }, ...]`.
    pub schedule: Option<Vec<RateStep>>,
    /// Seawind's `allocation_delay`: a delay before the transmission of a packet that finds
    /// the link idle (a distribution; none when absent).
    pub allocation_delay: Option<Dist>,
    /// With `allocation_delay`: how long the link must have been idle for a packet to need
    /// the allocation (Seawind's `link_idle_timeout`; default 0, any pause).
    pub idle_timeout: Option<Dur>,
    /// Seawind's `available_rate`: a multiplier of the rate in force, drawn again every
    /// `rate_change_interval` (a number or a distribution of numbers, at least 0).
    pub available_rate: Option<NumDist>,
    /// Seawind's `rate_change_interval`: how long each `available_rate` draw holds (a
    /// distribution of durations).
    pub rate_change_interval: Option<Dist>,
    /// Seawind's `output_dropper`: each packet leaving the link is dropped with this
    /// probability (a number or a distribution; cause `output`).
    pub output_dropper: Option<NumDist>,
    /// Seawind's background load: other users' packets sharing the channel (see
    /// [`crate::background`]).
    pub background: Option<BackgroundSpec>,
    /// netem's jitter with correlation, reordering and duplication (see [`crate::netem`]).
    pub netem: Option<NetemSpec>,
    /// The propagation delay over time from a file, instead of `delay` (CellReplay's base
    /// delay; see [`crate::trace::DelayTrace`]).
    pub delay_trace: Option<DelayTraceSpec>,
    /// Which attempts fail: `model = "states"` (default: the states' `error`), `"uniform"`
    /// (`probability`) or `"pattern"` (`drop = [N, ...]`, `every = K`). Replaces `error`; the
    /// handling (`drop` / `delay` / `arq`) stays.
    pub loss: Option<LossSpec>,
    /// The direction's capacity from a file instead of `rate`: a Mahimahi trace (`mahimahi`)
    /// or timed rates (`rates`); see [`crate::trace`].
    pub trace: Option<TraceSpec>,
}

/// `[down.loss]`, `[up.loss]` or `[both.loss]`: the direction's error model (see
/// [`crate::error_model`]).
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LossSpec {
    /// `"states"`, `"uniform"`, `"pattern"`, `"gilbert_elliott"`, `"4state"` or `"trace"`.
    pub model: Option<String>,
    /// `uniform`: the probability that an attempt fails, 0..=1.
    pub probability: Option<f64>,
    /// `pattern`: the attempts that fail in each cycle, 1-based.
    pub drop: Option<Vec<u64>>,
    /// `pattern`: the cycle length.
    pub every: Option<u64>,
    /// `gilbert_elliott` (netem `gemodel p r 1-h 1-k`): good → bad.
    pub p: Option<f64>,
    /// `gilbert_elliott`: bad → good (default 1).
    pub r: Option<f64>,
    /// `gilbert_elliott`: the loss probability in the bad state, netem's 1 − h (default 1).
    pub loss_bad: Option<f64>,
    /// `gilbert_elliott`: the loss probability in the good state, netem's 1 − k (default 0).
    pub loss_good: Option<f64>,
    /// `4state` (netem `state p13 p31 p32 p23 p14`): the transition probabilities.
    pub p13: Option<f64>,
    pub p31: Option<f64>,
    pub p32: Option<f64>,
    pub p23: Option<f64>,
    pub p14: Option<f64>,
    /// `trace`: a file of lost attempt numbers.
    pub lost: Option<String>,
    /// `trace`: a file of loss episodes (`START END` lines).
    pub episodes: Option<String>,
}

/// The error process of one direction, in the base link or in a state (the keys `error`,
/// `handling`, `error_delay`, `retries` and `drop_threshold` of [`DirSpec`] and [`StateParams`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrSpec {
    /// Per-packet error probability (or bit error rate), 0..=1.
    pub error: Option<NumDist>,
    pub error_unit: Option<ErrorUnit>,
    pub handling: Option<Handling>,
    /// The delay of a `delay` error, or of each `arq` retry (700 ms in the seeds).
    pub error_delay: Option<Dist>,
    /// `arq`: the most retries a packet gets before it is dropped.
    pub retries: Option<u32>,
    /// `arq`: the packet is dropped when its next retry would take its accumulated error delay
    /// past this (Seawind's `delay_drop_threshold`: 701 ms allows one 700 ms retry).
    pub drop_threshold: Option<Dur>,
}

/// When a packet may move from the router queue into the link send buffer.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum LsbAdmit {
    /// When the whole packet fits in the free space.
    #[default]
    Fits,
    /// While the buffer holds less than its size: the last packet in may overflow it.
    Below,
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Handling {
    /// The packet is lost.
    Drop,
    /// The packet is delayed once by `error_delay` (Seawind DELAY).
    Delay,
    /// Link-layer retransmission (Seawind DELAY_ITERATE): each failed attempt adds `error_delay`
    /// and the error test is repeated with the state current at the retry.
    Arq,
    /// The packet goes on with damaged bytes (Seawind FORWARD): the receiving host's checksum
    /// discards it (in simulation the receiving end discards it and counts it).
    Forward,
}

/// What an error probability is a probability of (Seawind's `error_rate_type`).
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ErrorUnit {
    /// Of a packet (Seawind UNIT).
    #[default]
    Packet,
    /// Of a bit (Seawind BIT): a packet of n bits (its wire length and the link overhead)
    /// fails with 1 − (1 − p)^n.
    Bit,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScriptedDelay {
    /// Delay the Nth packet (1-based, counted in transmission order over all flows).
    pub nth: Option<u64>,
    /// Or delay each packet with this probability.
    pub probability: Option<f64>,
    pub delay: Dist,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at: Dur,
    pub rate: Rate,
}

#[derive(Deserialize, Serialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct StateSpec {
    /// How long the state lasts each time; forever when absent.
    pub duration: Option<Dist>,
    /// The next state: a name, or `{ name = probability, ... }`.
    pub next: Option<Choice>,
    #[serde(default)]
    pub both: StateParams,
    #[serde(default)]
    pub down: StateParams,
    #[serde(default)]
    pub up: StateParams,
}

/// What a state may override in a direction.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StateParams {
    pub rate: Option<Rate>,
    pub delay: Option<Dur>,
    pub extra_delay: Option<Dist>,
    /// Per-packet error probability (or bit error rate), 0..=1: a number or a distribution.
    pub error: Option<NumDist>,
    /// `"packet"` or `"bit"`: what `error` is a probability of.
    pub error_unit: Option<ErrorUnit>,
    pub handling: Option<Handling>,
    /// The delay of a `delay` error, or of each `arq` retry (700 ms in the seeds).
    pub error_delay: Option<Dist>,
    /// `arq`: the most retries a packet gets before it is dropped.
    pub retries: Option<u32>,
    /// `arq`: the packet is dropped when its next retry would take its accumulated error delay
    /// past this (Seawind's `delay_drop_threshold`: 701 ms allows one 700 ms retry).
    pub drop_threshold: Option<Dur>,
}

#[derive(Deserialize, Serialize, Debug, Clone)]
#[serde(untagged)]
pub enum Choice {
    One(String),
    Weighted(IndexMap<String, f64>),
}
