//! Link specs in TOML, and their validation into a [`LinkConfig`] the model runs.
//!
//! A spec describes both directions (`[down]` = fixed side to mobile side, `[up]` = back) and,
//! optionally, a Markov chain of named states that override per-direction parameters. Keys set
//! under `[both]` apply to both directions unless `[down]` or `[up]` sets them too.
//!
//! ```toml
//! name = "r1"
//! [both]
//! rate = "64kbit"
//! delay = "300ms"
//! lsb = "9600B"
//! lrb = "9600B"
//! [down.queue]
//! packets = 20
//! [up.queue]
//! packets = 1
//! initial_state = "good"
//! [states.good]
//! duration = "exponential(15s, min=1s, max=20s)"
//! next = "bad"
//! [states.bad]
//! duration = "uniform(200ms, 1500ms)"
//! next = "good"
//! both = { error = 0.63, handling = "arq", error_delay = "700ms", drop_threshold = "701ms" }
//! ```
//!
//! Loading never panics: a TOML syntax error, an unknown key, a bad unit or an impossible value is
//! a [`SpecError`] naming the key, the value and what is allowed.

use crate::background::{Background, BackgroundSpec};
use crate::dist::{Dist, NumDist};
use crate::error_model::LossModel;
use crate::netem::{NetemConfig, NetemSpec};
use crate::netem_loss::{load_attempts, load_episodes, FourStateParams, GeParams};
use crate::trace::{DelayTrace, DelayTraceSpec, Trace, TraceSpec};
use indexmap::IndexMap;
use lasthop_core::{Bytes, Dur, Rate, Time};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// The spec as written.

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

#[derive(Deserialize, Serialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// Most packets waiting in the router queue (the packet being sent sits in the LSB).
    pub packets: Option<u64>,
    pub bytes: Option<Bytes>,
    /// Packets that waited longer than this are dropped when they reach the head.
    pub sojourn: Option<Dur>,
    /// What an arrival at a full queue meets (Seawind's `queue_overflow_handling`): `"drop"`
    /// (default), `"stop"` (the router stops reading: it waits unread, up to `input` packets)
    /// or `"flow_control"` (the neighbour is blocked: nothing is lost here).
    pub overflow: Option<Overflow>,
    /// `overflow = "stop"`: the most packets waiting unread (default 1000).
    pub input: Option<u64>,
    #[serde(default)]
    pub policy: Policy,
    pub red: Option<RedSpec>,
    /// `policy = "codel"`: CoDel's parameters (RFC 8289), all optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel: Option<CodelSpec>,
    /// `policy = "pie"`: PIE's parameters (RFC 8033), all optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pie: Option<PieSpec>,
    /// `policy = "fq_codel"`: FQ-CoDel's parameters (RFC 8290), all optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_codel: Option<FqCodelSpec>,
}

/// Seawind's `queue_overflow_handling`: what an arrival at a full router queue meets.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// It is dropped (DROP, tail drop).
    #[default]
    Drop,
    /// The router stops reading: it waits unread (STOP).
    Stop,
    /// The neighbour is blocked: it waits there (FLOW CONTROL).
    FlowControl,
}

/// STOP's unread input when `input` is not given: Linux's default `txqueuelen`.
pub const DEFAULT_INPUT_PACKETS: u64 = 1000;

#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    #[default]
    Droptail,
    Red,
    Codel,
    Pie,
    FqCodel,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Droptail => "droptail",
            Policy::Red => "red",
            Policy::Codel => "codel",
            Policy::Pie => "pie",
            Policy::FqCodel => "fq_codel",
        }
    }
}

/// CoDel (RFC 8289) as written; defaults are the RFC's (and Linux `sch_codel`'s).
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    /// Acceptable standing queue delay (default 5 ms).
    pub target: Option<Dur>,
    /// Sliding window over which the minimum sojourn must exceed `target` (default 100 ms).
    pub interval: Option<Dur>,
    /// Mark ECT packets instead of dropping them (default false, as Linux `sch_codel`).
    pub ecn: Option<bool>,
}

/// PIE (RFC 8033) as written; defaults are the RFC's.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieSpec {
    /// Target queue delay (default 15 ms).
    pub target: Option<Dur>,
    /// How often the drop probability is updated (default 15 ms).
    pub tupdate: Option<Dur>,
    /// Weight of the delay's distance from target, per second (default 0.125).
    pub alpha: Option<f64>,
    /// Weight of the delay's trend, per second (default 1.25).
    pub beta: Option<f64>,
    /// Burst allowance after an idle period (default 150 ms).
    pub max_burst: Option<Dur>,
    /// Mark ECT packets while the drop probability is at most 10 % (default false, as Linux).
    pub ecn: Option<bool>,
    /// Scale the probability by size / MTU (default false, as Linux).
    pub bytemode: Option<bool>,
}

/// FQ-CoDel (RFC 8290) as written; defaults are Linux `sch_fq_codel`'s.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelSpec {
    /// Each flow queue's CoDel target (default 5 ms).
    pub target: Option<Dur>,
    /// Each flow queue's CoDel interval (default 100 ms).
    pub interval: Option<Dur>,
    /// Number of flow queues the 5-tuple hash spreads over (default 1024).
    pub flows: Option<u32>,
    /// DRR quantum: bytes a flow may send per round (default the link MTU, 1500B without one).
    pub quantum: Option<Bytes>,
    /// Mark ECT packets instead of dropping them (default true, as Linux).
    pub ecn: Option<bool>,
    /// Most packets dropped from the fattest flow when the queue is full (default 64, Linux).
    pub drop_batch: Option<u32>,
}

/// Floyd–Jacobson RED. Thresholds are in packets; in byte mode the queue is measured in units
/// of `mean_packet` bytes and the drop probability scaled by size / `mean_packet` (ns-2's
/// convention).
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    #[serde(default)]
    pub mode: RedMode,
    #[serde(default)]
    pub gentle: bool,
    /// Mark ECT packets (set CE) instead of dropping them; non-ECT packets are dropped.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, drop rather than mark when the average is above max_th (Linux `harddrop`).
    #[serde(default)]
    pub harddrop: bool,
    /// Typical packet size: the idle-time correction's transmission time, and the byte-mode unit.
    pub mean_packet: Option<Bytes>,
    /// Adaptive RED (Floyd, Gummadi, Shenker 2001): every 500 ms, max_p moves towards keeping
    /// the average between min_th + 0.4 (max_th - min_th) and min_th + 0.6 (max_th - min_th).
    #[serde(default, skip_serializing_if = "is_false")]
    pub adaptive: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
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

/// A distribution of the spec, of either kind (see [`LinkSpec::each_dist`]).
enum AnyDist<'a> {
    Duration(&'a mut Dist),
    Number(&'a mut NumDist),
}

// ---------------------------------------------------------------------------------------------
// The validated configuration the model runs.

/// Direction on the link: `Down` = fixed side to mobile side, `Up` = back.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    Down,
    Up,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::Down, Dir::Up];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Dir::Down => "down",
            Dir::Up => "up",
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
pub struct QueueConfig {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
    pub sojourn: Option<Dur>,
    pub red: Option<RedSpec>,
    /// A discipline other than drop-tail and RED.
    pub aqm: Option<Aqm>,
    /// The spec asked for ECN marking (`ecn = true` written in the policy's table; FQ-CoDel's
    /// default, on as in Linux, does not count).
    pub ecn_asked: bool,
    /// What an arrival at a full queue meets.
    pub overflow: Overflow,
    /// The most packets waiting unread: STOP's limit; `None` under FLOW CONTROL (and DROP).
    pub input: Option<u64>,
}

impl QueueConfig {
    /// The policy's name, as written in `policy`.
    pub fn policy_name(&self) -> &'static str {
        match (&self.red, &self.aqm) {
            (Some(_), _) => "red",
            (None, Some(Aqm::Codel(_))) => "codel",
            (None, Some(Aqm::Pie(_))) => "pie",
            (None, Some(Aqm::FqCodel(_))) => "fq_codel",
            (None, None) => "droptail",
        }
    }

    /// The AQM's target delay, for the disciplines that have one (CoDel, PIE, FQ-CoDel).
    pub fn target(&self) -> Option<Dur> {
        match &self.aqm {
            Some(Aqm::Codel(c)) => Some(c.target),
            Some(Aqm::Pie(p)) => Some(p.target),
            Some(Aqm::FqCodel(f)) => Some(f.codel.target),
            None => None,
        }
    }

    /// Whether the router queue does anything a queue without limits would not: a limit or a
    /// discipline.
    pub fn acts(&self) -> bool {
        self.packets.is_some()
            || self.bytes.is_some()
            || self.sojourn.is_some()
            || self.red.is_some()
            || self.aqm.is_some()
    }
}

/// The validated parameters of CoDel, PIE or FQ-CoDel.
#[derive(Debug, Clone, PartialEq)]
pub enum Aqm {
    Codel(CodelConfig),
    Pie(PieConfig),
    FqCodel(FqCodelConfig),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelConfig {
    pub target: Dur,
    pub interval: Dur,
    pub ecn: bool,
}

impl Default for CodelConfig {
    /// RFC 8289 §4.2–4.3: target 5 ms, interval 100 ms.
    fn default() -> CodelConfig {
        CodelConfig {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieConfig {
    pub target: Dur,
    pub tupdate: Dur,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Dur,
    pub ecn: bool,
    pub bytemode: bool,
}

impl Default for PieConfig {
    /// RFC 8033 §4 and §5: 15 ms, 15 ms, 0.125, 1.25, 150 ms.
    fn default() -> PieConfig {
        PieConfig {
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            ecn: false,
            bytemode: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FqCodelConfig {
    pub codel: CodelConfig,
    pub flows: u32,
    /// `None`: the link MTU (1500B without one).
    pub quantum: Option<u64>,
    pub drop_batch: u32,
}

impl Default for FqCodelConfig {
    /// Linux `sch_fq_codel`: 1024 flows, ECN on, batches of 64.
    fn default() -> FqCodelConfig {
        FqCodelConfig {
            codel: CodelConfig {
                ecn: true,
                ..CodelConfig::default()
            },
            flows: 1024,
            quantum: None,
            drop_batch: 64,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StateConfig {
    pub name: String,
    pub duration: Option<Dist>,
    pub next: Vec<(usize, f64)>,
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// The most packets a router queue holds, and the most packets waiting in a link send buffer,
/// whatever the spec's limits (a queue "without limit" has this one): a queue fed faster than
/// the link grows until it reaches it, and each packet costs memory (its header bytes in
/// simulation, all its bytes in emulation). Packets over it are dropped as over any limit
/// (cause `queue`). No shipped experiment comes near it.
pub const MAX_QUEUE_PACKETS: u64 = 100_000;

// Spec loading is shared by every spec (lasthop-core::spec); re-exported for the link's users.
pub use lasthop_core::spec::{err, from_toml, SpecError};

// ---------------------------------------------------------------------------------------------
// Validation.

/// Weighted choices among states: (state index, probability).
type Choices = Vec<(usize, f64)>;

impl LinkSpec {
    pub fn parse(text: &str) -> Result<LinkSpec, SpecError> {
        from_toml(text)
    }

    /// Reads and validates a link spec file; the data files it names (traces) are relative to
    /// its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<LinkConfig, SpecError> {
        let path = path.as_ref();
        let with_file = |mut e: SpecError| {
            e.file = Some(path.display().to_string());
            e
        };
        let text = lasthop_core::spec::read_spec_text(path)
            .map_err(|e| with_file(err("", e.to_string())))?;
        let spec = LinkSpec::parse(&text).map_err(with_file)?;
        spec.validate_in(path.parent().unwrap_or(Path::new("")))
            .map_err(with_file)
    }

    /// Parses and validates TOML text (data files it names relative to the working directory).
    pub fn config_from_str(text: &str) -> Result<LinkConfig, SpecError> {
        LinkSpec::parse(text)?.validate()
    }

    /// [`LinkSpec::validate_in`] with data files relative to the working directory.
    pub fn validate(&self) -> Result<LinkConfig, SpecError> {
        self.validate_in(Path::new(""))
    }

    /// Checks every value and resolves the directions and states into a [`LinkConfig`]; the
    /// data files the spec names (traces) are read relative to `base`.
    pub fn validate_in(&self, base: &Path) -> Result<LinkConfig, SpecError> {
        let (cfg, read) = crate::files::recording(|| {
            let mut spec = self.clone();
            spec.load_user_files(base)?;
            spec.validate_loaded(base)
        });
        let mut cfg = cfg?;
        cfg.data_files = read;
        Ok(cfg)
    }

    /// Reads the values of every `user(FILE)` distribution, relative to `base`.
    fn load_user_files(&mut self, base: &Path) -> Result<(), SpecError> {
        self.each_dist(&mut |key, d| match d {
            AnyDist::Duration(d) => d.load_files(key, base),
            AnyDist::Number(d) => d.load_files(key, base),
        })
    }

    /// Calls `f` with every distribution of the spec and its key path. A new key holding a
    /// distribution is added here, so that a `user` file in it is read.
    fn each_dist(
        &mut self,
        f: &mut dyn FnMut(&str, AnyDist<'_>) -> Result<(), SpecError>,
    ) -> Result<(), SpecError> {
        for (name, t) in [
            ("both", &mut self.both),
            ("down", &mut self.down),
            ("up", &mut self.up),
        ] {
            let k = |f: &str| format!("{name}.{f}");
            for (key, d) in [
                ("extra_delay", &mut t.extra_delay),
                ("error_delay", &mut t.error_delay),
                ("allocation_delay", &mut t.allocation_delay),
                ("rate_change_interval", &mut t.rate_change_interval),
            ] {
                if let Some(d) = d {
                    f(&k(key), AnyDist::Duration(d))?;
                }
            }
            for (key, d) in [
                ("error", &mut t.error),
                ("available_rate", &mut t.available_rate),
                ("output_dropper", &mut t.output_dropper),
            ] {
                if let Some(d) = d {
                    f(&k(key), AnyDist::Number(d))?;
                }
            }
            for (i, sd) in t.delays.iter_mut().flatten().enumerate() {
                f(
                    &k(&format!("delays[{i}].delay")),
                    AnyDist::Duration(&mut sd.delay),
                )?;
            }
        }
        for (name, st) in self.states.iter_mut() {
            if let Some(d) = &mut st.duration {
                f(&format!("states.{name}.duration"), AnyDist::Duration(d))?;
            }
            for (dir, p) in [
                ("both", &mut st.both),
                ("down", &mut st.down),
                ("up", &mut st.up),
            ] {
                let k = |f: &str| format!("states.{name}.{dir}.{f}");
                if let Some(d) = &mut p.extra_delay {
                    f(&k("extra_delay"), AnyDist::Duration(d))?;
                }
                if let Some(d) = &mut p.error_delay {
                    f(&k("error_delay"), AnyDist::Duration(d))?;
                }
                if let Some(d) = &mut p.error {
                    f(&k("error"), AnyDist::Number(d))?;
                }
            }
        }
        Ok(())
    }

    fn validate_loaded(&self, base: &Path) -> Result<LinkConfig, SpecError> {
        let mtu = self.mtu.map(|m| m.0);
        let mtu32 = mtu.map(|m| m as u32);
        if let Some(m) = mtu {
            if !(68..=65535).contains(&m) {
                return Err(err(
                    "mtu",
                    format!("{m}B is not a valid IPv4 MTU: allowed 68B..65535B"),
                ));
            }
        }
        let (states, initial) = self.validate_states()?;
        let dirs = [
            self.validate_dir(Dir::Down, &states, base)?,
            self.validate_dir(Dir::Up, &states, base)?,
        ];
        for (d, dc) in Dir::BOTH.iter().zip(&dirs) {
            for (buf, size) in [("lsb", dc.lsb), ("lrb", dc.lrb)] {
                if let (Some(size), Some(m)) = (size, mtu) {
                    if size < m {
                        return Err(err(
                            format!("{d}.{buf}"),
                            format!("{size}B cannot hold one packet of the {m}B MTU: a buffer holds whole packets only"),
                        ));
                    }
                }
            }
        }
        Ok(LinkConfig {
            name: self.name.clone().unwrap_or_else(|| "link".into()),
            description: self.description.clone(),
            mtu: mtu32,
            dirs,
            states,
            initial,
            data_files: vec![],
        })
    }

    fn validate_states(&self) -> Result<(Vec<StateConfig>, Choices), SpecError> {
        if self.states.is_empty() {
            if self.initial_state.is_some() {
                return Err(err(
                    "initial_state",
                    "there are no [states.NAME] tables to start in",
                ));
            }
            let steady = StateConfig {
                name: "steady".into(),
                duration: None,
                next: vec![],
            };
            return Ok((vec![steady], vec![(0, 1.0)]));
        }
        let names: Vec<&String> = self.states.keys().collect();
        let resolve = |key: &str, c: &Choice| -> Result<Vec<(usize, f64)>, SpecError> {
            let pairs: Vec<(String, f64)> = match c {
                Choice::One(n) => vec![(n.clone(), 1.0)],
                Choice::Weighted(m) => m.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            };
            let mut out = vec![];
            for (name, p) in pairs {
                let idx = names.iter().position(|n| **n == name).ok_or_else(|| {
                    err(
                        key,
                        format!(
                            "no state is called {name:?}; the states are {}",
                            quoted_list(&names)
                        ),
                    )
                })?;
                if !(0.0..=1.0).contains(&p) || p.is_nan() {
                    return Err(err(
                        format!("{key}.{name}"),
                        format!("probability {p} is outside 0..1"),
                    ));
                }
                out.push((idx, p));
            }
            let sum: f64 = out.iter().map(|(_, p)| p).sum();
            if (sum - 1.0).abs() > 1e-9 {
                return Err(err(
                    key,
                    format!("the probabilities add up to {sum}, they must add up to 1"),
                ));
            }
            Ok(out)
        };
        let initial = match &self.initial_state {
            Some(c) => resolve("initial_state", c)?,
            None if self.states.len() == 1 => vec![(0, 1.0)],
            None => {
                return Err(err(
                    "initial_state",
                    format!(
                        "missing: with several states, say which one the link starts in ({})",
                        quoted_list(&names)
                    ),
                ))
            }
        };
        let mut states = vec![];
        for (name, s) in &self.states {
            let key = format!("states.{name}");
            // State names are written into events.csv (quoted when they need it, but other
            // readers split on commas) and read in spreadsheets.
            if let Some(c) = name.chars().find(|c| matches!(c, ',' | '"' | '\n' | '\r')) {
                return Err(err(
                    key,
                    format!(
                        "state name {name:?} contains {c:?}: a state name is written into events.csv, so it may not contain a comma, a double quote or a line break, nor start with '=', '+', '-', '@' or a tab"
                    ),
                ));
            }
            if lasthop_core::spec::formula_leading(name) {
                return Err(err(
                    key,
                    format!(
                        "state name {name:?} starts with {:?}: a state name is written into events.csv, where a spreadsheet would take it for a formula; it may not start with '=', '+', '-', '@' or a tab, nor contain a comma, a double quote or a line break",
                        name.chars().next().unwrap_or(' ')
                    ),
                ));
            }
            if name.is_empty() {
                return Err(err(key, "a state needs a non-empty name"));
            }
            let next = match &s.next {
                Some(c) => resolve(&format!("{key}.next"), c)?,
                None => vec![],
            };
            if s.duration.is_some() && next.is_empty() {
                return Err(err(
                    format!("{key}.next"),
                    "missing: a state with a duration must say which state comes next",
                ));
            }
            if s.duration.is_none() && !next.is_empty() {
                return Err(err(
                    format!("{key}.duration"),
                    "missing: a state with a next state needs a duration",
                ));
            }
            if let Some(d) = &s.duration {
                if d.max() == Some(Dur::ZERO) {
                    return Err(err(
                        format!("{key}.duration"),
                        "a state must last longer than 0s",
                    ));
                }
            }
            states.push(StateConfig {
                name: name.clone(),
                duration: s.duration.clone(),
                next,
            });
        }
        Ok((states, initial))
    }

    fn validate_dir(
        &self,
        d: Dir,
        states: &[StateConfig],
        files_dir: &Path,
    ) -> Result<DirConfig, SpecError> {
        let own = match d {
            Dir::Down => &self.down,
            Dir::Up => &self.up,
        };
        let b = &self.both;
        // The key path of a value: the direction's own table if it sets it, else `both`.
        let src = |set: bool| if set { d.name() } else { "both" };
        let base_rate = own.rate.or(b.rate).unwrap_or(Rate::UNLIMITED);
        let delay = own.delay.or(b.delay).unwrap_or(Dur::ZERO);
        let overhead = own.overhead.or(b.overhead).unwrap_or_default().0;
        if overhead > 65535 {
            return Err(err(
                format!("{}.overhead", src(own.overhead.is_some())),
                format!("{overhead}B per packet is more than a packet: allowed 0B..65535B"),
            ));
        }
        let lsb = own.lsb.or(b.lsb).map(|x| x.0);
        let lrb = own.lrb.or(b.lrb).map(|x| x.0);
        for (name, v, set) in [
            ("lsb", lsb, own.lsb.is_some()),
            ("lrb", lrb, own.lrb.is_some()),
        ] {
            if v == Some(0) {
                return Err(err(
                    format!("{}.{name}", src(set)),
                    match name {
                        "lsb" => "0B holds no packet: give a size, or leave the key out for a buffer of the one packet being sent",
                        _ => "0B holds no packet: give a size, or leave the key out for no limit",
                    },
                ));
            }
        }
        // Without `lsb` the link send buffer holds only the packet being sent and frees it when
        // its last bit is sent (a link with no buffer of its own, as a wired interface's
        // device ring of one): link-layer ACK emulation would hold that one packet until it
        // left the LRB, one packet per round trip, so it is refused there. With `lsb` it is on
        // unless `link_ack = false` (Seawind's `link_layer_ack_emulation = TRUE`).
        let link_ack = match (own.link_ack.or(b.link_ack), lsb) {
            (Some(true), None) => {
                return Err(err(
                    format!("{}.link_ack", src(own.link_ack.is_some())),
                    "true needs a link send buffer: this direction has no `lsb`, so its LSB holds only the packet being sent, and holding that packet until it leaves the LRB would make the link stop-and-wait (one packet per round trip). Give the LSB a size (e.g. lsb = \"9600B\", Seawind's) or remove `link_ack`",
                ))
            }
            (Some(x), _) => x,
            (None, lsb) => lsb.is_some(),
        };
        if let (Some(_), None) = (own.lsb_admit.or(b.lsb_admit), lsb) {
            return Err(err(
                format!("{}.lsb_admit", src(own.lsb_admit.is_some())),
                "says when a packet may enter a link send buffer of `lsb` bytes, but this direction has no `lsb` (its LSB holds only the packet being sent): give `lsb` or remove `lsb_admit`",
            ));
        }
        let link_ack_delay = own.link_ack_delay.or(b.link_ack_delay);
        if let Some(x) = link_ack_delay {
            let key = format!("{}.link_ack_delay", src(own.link_ack_delay.is_some()));
            if !link_ack && x > Dur::ZERO {
                return Err(err(
                    key,
                    "the link-level ACK's delay needs `link_ack = true` and a link send buffer (`lsb`): without link-layer ACK emulation the space is freed when the packet is sent",
                ));
            }
            if x > Dur::from_secs(60) {
                return Err(err(key, format!("{x} is too long: allowed 0s..=60s")));
            }
        }
        let queue_src = src(own.queue.is_some());
        let queue = validate_queue(
            &format!("{queue_src}.queue"),
            own.queue.as_ref().or(b.queue.as_ref()),
        )?;
        let delays_src = src(own.delays.is_some());
        let delays = own.delays.clone().or(b.delays.clone()).unwrap_or_default();
        for (i, s) in delays.iter().enumerate() {
            let key = format!("{delays_src}.delays[{i}]");
            match (s.nth, s.probability) {
                (Some(0), None) => {
                    return Err(err(
                        format!("{key}.nth"),
                        "0: packets are counted from 1 (the first packet sent down the link, the SYN included): allowed 1 or more",
                    ))
                }
                (Some(_), None) => {}
                (None, Some(p)) if (0.0..=1.0).contains(&p) => {}
                (None, Some(p)) => {
                    return Err(err(
                        format!("{key}.probability"),
                        format!("{p} is outside 0..1"),
                    ))
                }
                _ => {
                    return Err(err(
                        key,
                        "give exactly one of `nth` (a packet number) or `probability`",
                    ))
                }
            }
        }
        let sched_src = src(own.schedule.is_some());
        let mut schedule: Vec<(Time, Rate)> = own
            .schedule
            .clone()
            .or(b.schedule.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|s| (Time(s.at.0), s.rate))
            .collect();
        if schedule.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(err(
                format!("{sched_src}.schedule"),
                "the steps must be in increasing order of `at`",
            ));
        }
        schedule.sort_by_key(|s| s.0);

        let base = Params {
            rate_override: None,
            base_rate,
            delay,
            extra_delay: own.extra_delay.clone().or(b.extra_delay.clone()),
            error: 0.0,
            error_dist: None,
            error_unit: ErrorUnit::Packet,
            handling: Handling::Drop,
            error_delay: None,
            retries: None,
            drop_threshold: None,
        };
        let base_err = merge_err(&own.err_spec(), &b.err_spec());
        let mut per_state = vec![];
        for i in 0..states.len() {
            let (key, sp) = match self.states.get_index(i) {
                Some((name, s)) => {
                    let own_s = match d {
                        Dir::Down => &s.down,
                        Dir::Up => &s.up,
                    };
                    let set = own_s != &StateParams::default();
                    (
                        format!("states.{name}.{}", src(set)),
                        Some(merge_state(own_s, &s.both)),
                    )
                }
                None => (src(own.err_spec() != ErrSpec::default()).to_string(), None),
            };
            let mut p = base.clone();
            let mut e = base_err.clone();
            if let Some(sp) = &sp {
                p.rate_override = sp.rate;
                p.delay = sp.delay.unwrap_or(p.delay);
                p.extra_delay = sp.extra_delay.clone().or(p.extra_delay);
                e = merge_err(&sp.err, &e);
            }
            apply_err(&key, &e, &mut p)?;
            per_state.push(p);
        }
        let loss_src = src(own.loss.is_some());
        let loss = validate_loss(
            &format!("{loss_src}.loss"),
            own.loss.as_ref().or(b.loss.as_ref()),
            files_dir,
        )?;
        if loss != LossModel::States {
            if let Some((i, p)) = per_state.iter().enumerate().find(|(_, p)| p.has_errors()) {
                let whose = match self.states.get_index(i) {
                    Some((name, _)) => format!(" in state {name:?}"),
                    None => String::new(),
                };
                return Err(err(
                    format!("{loss_src}.loss.model"),
                    format!(
                        "the loss model replaces the states' `error` in this direction, which is also set ({}{whose}): remove one of them",
                        p.error_text()
                    ),
                ));
            }
        }
        let trace = validate_trace(d, own, b, &schedule, &per_state, &self.states, files_dir)?;
        let pick = |o: &Option<Dist>, bo: &Option<Dist>| o.clone().or(bo.clone());
        let idle_timeout = own.idle_timeout.or(b.idle_timeout);
        let allocation = match (pick(&own.allocation_delay, &b.allocation_delay), idle_timeout) {
            (Some(a), t) => Some((a, t.unwrap_or(Dur::ZERO))),
            (None, Some(_)) => {
                return Err(err(
                    format!("{}.idle_timeout", src(own.idle_timeout.is_some())),
                    "says how long the link must be idle before a packet needs the allocation delay, but there is no `allocation_delay`: give one or remove `idle_timeout`",
                ))
            }
            (None, None) => None,
        };
        let avail = own.available_rate.clone().or(b.available_rate.clone());
        let interval = pick(&own.rate_change_interval, &b.rate_change_interval);
        let available = match (avail, interval) {
            (Some(a), Some(i)) => {
                let key = src(own.available_rate.is_some());
                if let Some(t) = &trace {
                    return Err(err(
                        format!("{key}.available_rate"),
                        format!("the {d} direction's rate comes from its trace ({:?}): an available rate cannot scale it; write the variation into the trace", t.file),
                    ));
                }
                if let Some(x) = a.as_static().filter(|x| *x < 0.0) {
                    return Err(err(
                        format!("{key}.available_rate"),
                        format!("{x} is below 0: the available rate multiplies the rate, allowed 0 or more (0 stops the link until the next change)"),
                    ));
                }
                if a.as_static() == Some(0.0) {
                    return Err(err(
                        format!("{key}.available_rate"),
                        "a multiplier of 0 for ever never sends: give a distribution, or a positive number",
                    ));
                }
                if i.max() == Some(Dur::ZERO) {
                    return Err(err(
                        format!("{}.rate_change_interval", src(own.rate_change_interval.is_some())),
                        "0s: the available rate must hold for some time; give a positive duration or distribution",
                    ));
                }
                Some((a, i))
            }
            (Some(_), None) => {
                return Err(err(
                    format!("{}.rate_change_interval", src(own.available_rate.is_some())),
                    "missing: `available_rate` is drawn again every `rate_change_interval` (a duration or a distribution, e.g. \"exponential(2s)\")",
                ))
            }
            (None, Some(_)) => {
                return Err(err(
                    format!("{}.available_rate", src(own.rate_change_interval.is_some())),
                    "missing: `rate_change_interval` says how often the available rate changes, but no `available_rate` is given (a multiplier of the rate, e.g. \"uniform(0.5, 1)\")",
                ))
            }
            (None, None) => None,
        };
        let output_dropper = own.output_dropper.clone().or(b.output_dropper.clone());
        if let Some(o) = &output_dropper {
            o.check_probability(&format!(
                "{}.output_dropper",
                src(own.output_dropper.is_some())
            ))?;
        }
        Ok(DirConfig {
            overhead: overhead as u32,
            lsb,
            lrb,
            link_ack,
            link_ack_delay: link_ack_delay.unwrap_or(Dur::ZERO),
            lsb_admit: own.lsb_admit.or(b.lsb_admit).unwrap_or_default(),
            in_order: own.in_order.or(b.in_order).unwrap_or(true),
            queue,
            delays,
            schedule,
            per_state,
            loss,
            trace,
            allocation,
            available,
            output_dropper,
            delay_trace: validate_delay_trace(d, own, b, &self.states, files_dir)?,
            netem: match own.netem.as_ref().or(b.netem.as_ref()) {
                Some(n) => NetemConfig::validate(
                    &format!("{}.netem", src(own.netem.is_some())),
                    n,
                    delay,
                    own.in_order.or(b.in_order).unwrap_or(true),
                )?,
                None => NetemConfig::default(),
            },
            background: match own.background.as_ref().or(b.background.as_ref()) {
                Some(bg) => Some(Background::validate(
                    &format!("{}.background", src(own.background.is_some())),
                    bg,
                )?),
                None => None,
            },
        })
    }
}

/// The direction's trace, if it has one: the most specific of `rate` and `trace` gives the
/// direction's capacity (its own table over `both`), and nothing else may change a traced
/// direction's rate.
fn validate_trace(
    d: Dir,
    own: &DirSpec,
    b: &DirSpec,
    schedule: &[(Time, Rate)],
    per_state: &[Params],
    states: &IndexMap<String, StateSpec>,
    base: &Path,
) -> Result<Option<Trace>, SpecError> {
    for (name, t) in [(d.name(), own), ("both", b)] {
        if t.trace.is_some() && t.rate.is_some() {
            return Err(err(
                format!("{name}.rate"),
                format!("`{name}.trace` gives this rate already: remove one of them"),
            ));
        }
    }
    let (key, spec) = match (&own.trace, own.rate, &b.trace) {
        (Some(t), _, _) => (format!("{d}.trace"), t),
        (None, None, Some(t)) => ("both.trace".to_string(), t),
        _ => return Ok(None),
    };
    if !schedule.is_empty() {
        let src = if own.schedule.is_some() {
            d.name()
        } else {
            "both"
        };
        return Err(err(
            format!("{src}.schedule"),
            format!("the {d} direction's rate comes from its trace (`{key}`): a schedule of rates cannot change it; write the changes into the trace"),
        ));
    }
    if let Some(i) = per_state.iter().position(|p| p.rate_override.is_some()) {
        let name = states.get_index(i).map_or("", |(n, _)| n.as_str());
        return Err(err(
            format!("states.{name}.rate"),
            format!("the {d} direction's rate comes from its trace (`{key}`): a state cannot override it; give the rate in the other direction's table only (`states.{name}.{}`)", match d { Dir::Down => "up", Dir::Up => "down" }),
        ));
    }
    Trace::load(&key, spec, base).map(Some)
}

/// The direction's delay trace, if it has one (its own table over `both`): it replaces the
/// `delay` of the direction and of its states, which may not set one too.
fn validate_delay_trace(
    d: Dir,
    own: &DirSpec,
    b: &DirSpec,
    states: &IndexMap<String, StateSpec>,
    base: &Path,
) -> Result<Option<DelayTrace>, SpecError> {
    let (key, spec) = match (&own.delay_trace, &b.delay_trace) {
        (Some(t), _) => (format!("{d}.delay_trace"), t),
        (None, Some(t)) => ("both.delay_trace".to_string(), t),
        _ => return Ok(None),
    };
    for (name, t) in [(d.name(), own), ("both", b)] {
        if t.delay.is_some() {
            return Err(err(
                format!("{name}.delay"),
                format!("the {d} direction's propagation delay comes from `{key}`: remove `delay`"),
            ));
        }
    }
    if let Some((name, _)) = states.iter().find(|(_, s)| {
        let own_s = match d {
            Dir::Down => &s.down,
            Dir::Up => &s.up,
        };
        own_s.delay.or(s.both.delay).is_some()
    }) {
        return Err(err(
            format!("states.{name}.delay"),
            format!("the {d} direction's propagation delay comes from `{key}`: a state cannot override it"),
        ));
    }
    DelayTrace::load(&key, spec, base).map(Some)
}

fn validate_loss(
    key: &str,
    l: Option<&LossSpec>,
    files_dir: &Path,
) -> Result<LossModel, SpecError> {
    let Some(l) = l else {
        return Ok(LossModel::States);
    };
    let k = |f: &str| format!("{key}.{f}");
    let model = l.model.as_deref().unwrap_or("states");
    if !LossModel::NAMES.contains(&model) {
        let models = LossModel::NAMES
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(err(
            k("model"),
            format!("{model:?} is not a loss model: allowed {models}"),
        ));
    }
    // Keys that belong to another model are refused rather than ignored.
    let owners: [(&str, bool, &str); 14] = [
        ("probability", l.probability.is_some(), "uniform"),
        ("drop", l.drop.is_some(), "pattern"),
        ("every", l.every.is_some(), "pattern"),
        ("p", l.p.is_some(), "gilbert_elliott"),
        ("r", l.r.is_some(), "gilbert_elliott"),
        ("loss_bad", l.loss_bad.is_some(), "gilbert_elliott"),
        ("loss_good", l.loss_good.is_some(), "gilbert_elliott"),
        ("p13", l.p13.is_some(), "4state"),
        ("p31", l.p31.is_some(), "4state"),
        ("p32", l.p32.is_some(), "4state"),
        ("p23", l.p23.is_some(), "4state"),
        ("p14", l.p14.is_some(), "4state"),
        ("lost", l.lost.is_some(), "trace"),
        ("episodes", l.episodes.is_some(), "trace"),
    ];
    if let Some((name, _, owner)) = owners.iter().find(|(_, set, o)| *set && *o != model) {
        return Err(err(
            k(name),
            format!("`{name}` belongs to model = {owner:?}, not {model:?}"),
        ));
    }
    let prob = |name: &str, v: Option<f64>, default: Option<f64>, example: &str| {
        let x = v.or(default).ok_or_else(|| {
            err(
                k(name),
                format!("missing: model = {model:?} needs `{name}`, e.g. {name} = {example}"),
            )
        })?;
        if !(0.0..=1.0).contains(&x) {
            return Err(err(k(name), format!("probability {x} is outside 0..1")));
        }
        Ok(x)
    };
    match model {
        "states" => Ok(LossModel::States),
        "uniform" => Ok(LossModel::Uniform {
            probability: prob("probability", l.probability, None, "0.01")?,
        }),
        "pattern" => {
            let every = l.every.ok_or_else(|| {
                err(
                    k("every"),
                    "missing: model = \"pattern\" needs the cycle length, e.g. every = 10",
                )
            })?;
            if every == 0 {
                return Err(err(
                    k("every"),
                    "0 is not a cycle length: allowed 1 or more",
                ));
            }
            if every > 1_000_000 {
                return Err(err(
                    k("every"),
                    format!("{every} is too long a cycle: allowed 1..=1000000"),
                ));
            }
            let mut drop = l.drop.clone().ok_or_else(|| {
                err(
                    k("drop"),
                    "missing: model = \"pattern\" needs the packets to drop in each cycle, e.g. drop = [3, 7]",
                )
            })?;
            if let Some(n) = drop.iter().find(|n| !(1..=every).contains(*n)) {
                return Err(err(
                    k("drop"),
                    format!("packet {n} is outside the cycle: allowed 1..={every} (every = {every}, counted from 1)"),
                ));
            }
            drop.sort_unstable();
            if let Some(w) = drop.windows(2).find(|w| w[0] == w[1]) {
                return Err(err(k("drop"), format!("packet {} is listed twice", w[0])));
            }
            Ok(LossModel::Pattern { drop, every })
        }
        "gilbert_elliott" => Ok(LossModel::GilbertElliott(GeParams {
            p: prob("p", l.p, None, "0.01")?,
            r: prob("r", l.r, Some(1.0 - l.p.unwrap_or(0.0)), "0.3")?,
            loss_bad: prob("loss_bad", l.loss_bad, Some(1.0), "1")?,
            loss_good: prob("loss_good", l.loss_good, Some(0.0), "0")?,
        })),
        "4state" => {
            let p13 = prob("p13", l.p13, None, "0.05")?;
            let q = FourStateParams {
                p13,
                p31: prob("p31", l.p31, Some(1.0 - p13), "0.5")?,
                p32: prob("p32", l.p32, Some(0.0), "0.1")?,
                p23: prob("p23", l.p23, Some(1.0), "0.5")?,
                p14: prob("p14", l.p14, Some(0.0), "0.01")?,
            };
            for (a, b, x) in [("p13", "p14", q.p13 + q.p14), ("p31", "p32", q.p31 + q.p32)] {
                if x > 1.0 + 1e-12 {
                    return Err(err(
                        k(a),
                        format!("{a} + {b} = {x}: the probabilities of leaving a state add up to 1 at most"),
                    ));
                }
            }
            Ok(LossModel::FourState(q))
        }
        _ => match (&l.lost, &l.episodes) {
            (Some(f), None) => Ok(LossModel::Trace(load_attempts(&k("lost"), f, files_dir)?)),
            (None, Some(f)) => Ok(LossModel::Trace(load_episodes(&k("episodes"), f, files_dir)?)),
            _ => Err(err(
                key,
                "model = \"trace\" needs one of `lost = \"FILE\"` (lost attempt numbers, one per line) or `episodes = \"FILE\"` (START END lines)",
            )),
        },
    }
}

macro_rules! err_spec {
    ($t:ty) => {
        impl $t {
            pub fn err_spec(&self) -> ErrSpec {
                ErrSpec {
                    error: self.error.clone(),
                    error_unit: self.error_unit,
                    handling: self.handling,
                    error_delay: self.error_delay.clone(),
                    retries: self.retries,
                    drop_threshold: self.drop_threshold,
                }
            }
        }
    };
}
err_spec!(DirSpec);
err_spec!(StateParams);

fn merge_err(over: &ErrSpec, under: &ErrSpec) -> ErrSpec {
    ErrSpec {
        error: over.error.clone().or(under.error.clone()),
        error_unit: over.error_unit.or(under.error_unit),
        handling: over.handling.or(under.handling),
        error_delay: over.error_delay.clone().or(under.error_delay.clone()),
        retries: over.retries.or(under.retries),
        drop_threshold: over.drop_threshold.or(under.drop_threshold),
    }
}

/// A state's overrides for one direction: its own table over its `both` table.
struct StateOverride {
    rate: Option<Rate>,
    delay: Option<Dur>,
    extra_delay: Option<Dist>,
    err: ErrSpec,
}

fn merge_state(over: &StateParams, under: &StateParams) -> StateOverride {
    StateOverride {
        rate: over.rate.or(under.rate),
        delay: over.delay.or(under.delay),
        extra_delay: over.extra_delay.clone().or(under.extra_delay.clone()),
        err: merge_err(&over.err_spec(), &under.err_spec()),
    }
}

fn apply_err(key: &str, e: &ErrSpec, p: &mut Params) -> Result<(), SpecError> {
    let (error, error_dist) = match &e.error {
        None => (0.0, None),
        Some(d) => {
            d.check_probability(&format!("{key}.error"))?;
            match d.as_static() {
                Some(x) => (x, None),
                None => (0.0, Some(d.clone())),
            }
        }
    };
    let handling = e.handling.unwrap_or(Handling::Drop);
    match handling {
        Handling::Drop => {}
        Handling::Delay | Handling::Arq if e.error_delay.is_none() => {
            return Err(err(
                format!("{key}.error_delay"),
                format!(
                    "missing: handling = \"{}\" needs the delay of each error, e.g. error_delay = \"700ms\"",
                    if handling == Handling::Arq { "arq" } else { "delay" }
                ),
            ))
        }
        Handling::Arq if e.retries.is_none() && e.drop_threshold.is_none() => {
            return Err(err(
                format!("{key}.retries"),
                "missing: handling = \"arq\" needs `retries` (a count) or `drop_threshold` (a duration)",
            ))
        }
        _ => {}
    }
    if e.retries.is_some() && e.drop_threshold.is_some() {
        return Err(err(
            format!("{key}.drop_threshold"),
            "give either `retries` or `drop_threshold`, not both",
        ));
    }
    p.error = error;
    p.error_dist = error_dist;
    p.error_unit = e.error_unit.unwrap_or_default();
    p.handling = handling;
    p.error_delay = e.error_delay.clone();
    p.retries = e.retries;
    p.drop_threshold = e.drop_threshold;
    Ok(())
}

/// The packet limit of Linux's `codel` and `pie` qdiscs when none is given (`sch_codel.c`,
/// `sch_pie.c`: `sch->limit = 1000`).
pub const LINUX_CODEL_PIE_LIMIT: u64 = 1000;
/// The packet limit of Linux's `fq_codel` when none is given (`sch_fq_codel.c`:
/// `sch->limit = 10*1024`).
pub const LINUX_FQ_CODEL_LIMIT: u64 = 10 * 1024;

fn validate_queue(key: &str, q: Option<&QueueSpec>) -> Result<QueueConfig, SpecError> {
    let Some(q) = q else {
        return Ok(QueueConfig {
            packets: None,
            bytes: None,
            sojourn: None,
            red: None,
            aqm: None,
            ecn_asked: false,
            overflow: Overflow::Drop,
            input: None,
        });
    };
    // A table for another policy is refused rather than ignored.
    for (name, given, policy) in [
        ("red", q.red.is_some(), Policy::Red),
        ("codel", q.codel.is_some(), Policy::Codel),
        ("pie", q.pie.is_some(), Policy::Pie),
        ("fq_codel", q.fq_codel.is_some(), Policy::FqCodel),
    ] {
        if given && q.policy != policy {
            return Err(err(
                format!("{key}.{name}"),
                format!(
                    "{} parameters given but policy is {:?}: set policy = {:?} or remove the table",
                    name,
                    q.policy.name(),
                    policy.name()
                ),
            ));
        }
    }
    let red =
        match (q.policy, &q.red) {
            (Policy::Red, None) => return Err(err(
                format!("{key}.red"),
                "missing: policy = \"red\" needs a [red] table with min_th, max_th, max_p and w_q",
            )),
            (Policy::Red, Some(r)) => {
                let k = |f: &str| format!("{key}.red.{f}");
                if r.min_th.is_nan() || r.min_th < 0.0 {
                    return Err(err(k("min_th"), format!("{} must be 0 or more", r.min_th)));
                }
                if r.max_th.is_nan() || r.max_th <= r.min_th {
                    return Err(err(
                        k("min_th"),
                        format!("min_th ({}) must be below max_th ({})", r.min_th, r.max_th),
                    ));
                }
                if !(r.max_p > 0.0 && r.max_p <= 1.0) {
                    return Err(err(k("max_p"), format!("{} is outside (0, 1]", r.max_p)));
                }
                if !(r.w_q > 0.0 && r.w_q <= 1.0) {
                    return Err(err(k("w_q"), format!("{} is outside (0, 1]", r.w_q)));
                }
                if r.mean_packet == Some(Bytes(0)) {
                    return Err(err(k("mean_packet"), "must be above 0B"));
                }
                if r.harddrop && !r.ecn {
                    return Err(err(k("harddrop"), "only means something with ecn = true"));
                }
                Some(r.clone())
            }
            _ => None,
        };
    let aqm = match q.policy {
        Policy::Droptail | Policy::Red => None,
        Policy::Codel => {
            let c = q.codel.clone().unwrap_or_default();
            Some(Aqm::Codel(validate_codel(
                &format!("{key}.codel"),
                c.target,
                c.interval,
                c.ecn,
                CodelConfig::default(),
            )?))
        }
        Policy::Pie => Some(Aqm::Pie(validate_pie(
            &format!("{key}.pie"),
            &q.pie.clone().unwrap_or_default(),
        )?)),
        Policy::FqCodel => {
            let k = format!("{key}.fq_codel");
            let f = q.fq_codel.clone().unwrap_or_default();
            let d = FqCodelConfig::default();
            let codel = validate_codel(&k, f.target, f.interval, f.ecn, d.codel)?;
            let flows = f.flows.unwrap_or(d.flows);
            if !(1..=65536).contains(&flows) {
                return Err(err(
                    format!("{k}.flows"),
                    format!("{flows} flow queues: give 1 to 65536 (Linux's range; default 1024)"),
                ));
            }
            if f.quantum == Some(Bytes(0)) {
                return Err(err(
                    format!("{k}.quantum"),
                    "0B lets no flow send: give the bytes a flow may send per round, e.g. \"1514B\" (default the link MTU)",
                ));
            }
            let drop_batch = f.drop_batch.unwrap_or(d.drop_batch);
            if drop_batch == 0 {
                return Err(err(
                    format!("{k}.drop_batch"),
                    "0 packets would drop nothing when the queue is full: give 1 or more (default 64)",
                ));
            }
            Some(Aqm::FqCodel(FqCodelConfig {
                codel,
                flows,
                quantum: f.quantum.map(|b| b.0),
                drop_batch,
            }))
        }
    };
    if let Some(n) = q.packets.filter(|n| *n > MAX_QUEUE_PACKETS) {
        return Err(err(
            format!("{key}.packets"),
            format!("{n} packets: allowed 1..={MAX_QUEUE_PACKETS} (a queue holds at most {MAX_QUEUE_PACKETS} packets whatever its limits say: a larger one fed faster than the link would fill the memory), or leave the key out for no limit but that one"),
        ));
    }
    if q.packets == Some(0) {
        return Err(err(
            format!("{key}.packets"),
            "0 packets is no queue at all (every packet that finds the link busy would be dropped): give 1 or more, or leave the key out for no packet limit",
        ));
    }
    if q.bytes == Some(Bytes(0)) {
        return Err(err(
            format!("{key}.bytes"),
            "0B is no queue at all (every packet that finds the link busy would be dropped): give a size that holds a packet, e.g. \"9600B\", or leave the key out for no byte limit",
        ));
    }
    let overflow = q.overflow.unwrap_or_default();
    if overflow != Overflow::Drop {
        let name = if overflow == Overflow::Stop {
            "stop"
        } else {
            "flow_control"
        };
        if !matches!(q.policy, Policy::Droptail | Policy::Red) {
            return Err(err(
                format!("{key}.overflow"),
                format!("\"{name}\" goes with Seawind's drop policies, tail drop and RED, which judge a packet as it enters the queue; policy {:?} keeps its own queues: use overflow = \"drop\"", q.policy.name()),
            ));
        }
        if q.packets.is_none() && q.bytes.is_none() {
            return Err(err(
                format!("{key}.overflow"),
                format!("\"{name}\" acts when the queue is full, and this queue has no limit: give `packets` or `bytes`"),
            ));
        }
    }
    let input = match (overflow, q.input) {
        (Overflow::Stop, Some(0)) => {
            return Err(err(
                format!("{key}.input"),
                "0 packets: an input that holds nothing drops every arrival at a full queue, which overflow = \"drop\" says; give 1 or more",
            ))
        }
        (Overflow::Stop, Some(n)) if n > MAX_QUEUE_PACKETS => {
            return Err(err(
                format!("{key}.input"),
                format!("{n} packets: allowed 1..={MAX_QUEUE_PACKETS}"),
            ))
        }
        (Overflow::Stop, n) => Some(n.unwrap_or(DEFAULT_INPUT_PACKETS)),
        (_, Some(_)) => {
            return Err(err(
                format!("{key}.input"),
                "the unread input's size belongs to overflow = \"stop\" (under \"flow_control\" the neighbour holds the packets, under \"drop\" there is no input): set overflow = \"stop\" or remove `input`",
            ))
        }
        (_, None) => None,
    };
    Ok(QueueConfig {
        overflow,
        input,
        // A discipline without `packets` takes Linux's limit (`tc-codel`, `tc-pie`: 1000
        // packets; `tc-fq_codel`: 10240), as its other parameters take Linux's defaults.
        // Drop-tail and RED have no default: `pfifo`'s is the device's txqueuelen, and
        // `sch_red` needs a limit given.
        packets: q.packets.or(match q.policy {
            Policy::Codel | Policy::Pie => Some(LINUX_CODEL_PIE_LIMIT),
            Policy::FqCodel => Some(LINUX_FQ_CODEL_LIMIT),
            Policy::Droptail | Policy::Red => None,
        }),
        bytes: q.bytes.map(|b| b.0),
        sojourn: q.sojourn,
        ecn_asked: red.as_ref().is_some_and(|r| r.ecn)
            || [
                q.codel.as_ref().and_then(|c| c.ecn),
                q.pie.as_ref().and_then(|p| p.ecn),
                q.fq_codel.as_ref().and_then(|f| f.ecn),
            ]
            .contains(&Some(true)),
        red,
        aqm,
    })
}

fn validate_codel(
    key: &str,
    target: Option<Dur>,
    interval: Option<Dur>,
    ecn: Option<bool>,
    d: CodelConfig,
) -> Result<CodelConfig, SpecError> {
    let target = target.unwrap_or(d.target);
    let interval = interval.unwrap_or(d.interval);
    if target == Dur::ZERO {
        return Err(err(
            format!("{key}.target"),
            "0s: the target sojourn time must be above 0 (RFC 8289's default is \"5ms\")",
        ));
    }
    if interval == Dur::ZERO {
        return Err(err(
            format!("{key}.interval"),
            "0s: the interval must be above 0 (RFC 8289's default is \"100ms\")",
        ));
    }
    Ok(CodelConfig {
        target,
        interval,
        ecn: ecn.unwrap_or(d.ecn),
    })
}

fn validate_pie(key: &str, p: &PieSpec) -> Result<PieConfig, SpecError> {
    let d = PieConfig::default();
    let k = |f: &str| format!("{key}.{f}");
    let target = p.target.unwrap_or(d.target);
    if target == Dur::ZERO {
        return Err(err(
            k("target"),
            "0s: the target queue delay must be above 0 (RFC 8033's default is \"15ms\")",
        ));
    }
    let tupdate = p.tupdate.unwrap_or(d.tupdate);
    if tupdate == Dur::ZERO {
        return Err(err(
            k("tupdate"),
            "0s: the update interval must be above 0 (RFC 8033's default is \"15ms\")",
        ));
    }
    // RFC 8033 §4.2 and Linux (0..32 sixteenths): alpha and beta lie in (0, 2].
    let alpha = p.alpha.unwrap_or(d.alpha);
    if !(alpha > 0.0 && alpha <= 2.0) {
        return Err(err(
            k("alpha"),
            format!("{alpha} is outside (0, 2] (RFC 8033's default is 0.125)"),
        ));
    }
    let beta = p.beta.unwrap_or(d.beta);
    if !(beta > 0.0 && beta <= 2.0) {
        return Err(err(
            k("beta"),
            format!("{beta} is outside (0, 2] (RFC 8033's default is 1.25)"),
        ));
    }
    Ok(PieConfig {
        target,
        tupdate,
        alpha,
        beta,
        max_burst: p.max_burst.unwrap_or(d.max_burst),
        ecn: p.ecn.unwrap_or(d.ecn),
        bytemode: p.bytemode.unwrap_or(d.bytemode),
    })
}

fn quoted_list(names: &[&String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// Describing a config, for `lasthop check`.

impl LinkConfig {
    /// The legal combinations that leave an element of this link doing nothing, or less than
    /// it says: a queue limit or discipline on a direction whose rate is unlimited (no packet
    /// ever waits), and an AQM behind a link send buffer that alone holds more than the AQM's
    /// target delay (the standing queue sits in the LSB, where the AQM does not see it).
    /// `check`, `sim`, `emu` and `run` print them.
    pub fn warnings(&self) -> Vec<lasthop_core::spec::Warning> {
        use lasthop_core::spec::warn;
        let mut w = vec![];
        for (d, dc) in Dir::BOTH.iter().zip(&self.dirs) {
            let q = &dc.queue;
            if !q.acts() {
                continue;
            }
            // Every rate the direction can run at: the base rate, each state's, the schedule's;
            // a trace's mean stands for its rates.
            let rates: Vec<Rate> = match &dc.trace {
                Some(t) => vec![Rate((t.mean_bps().round() as u64).max(1))],
                None => dc
                    .per_state
                    .iter()
                    .map(|p| p.rate_override.unwrap_or(p.base_rate))
                    .chain(dc.schedule.iter().map(|s| s.1))
                    .collect(),
            };
            if rates.iter().all(|r| r.is_unlimited()) {
                w.push(warn(
                    format!("{d}.queue"),
                    format!(
                        "the router queue's {} can never act: the direction's rate is unlimited, so every packet is sent the moment it arrives and none ever waits in the router queue; give `{d}.rate` (or `both.rate`)",
                        if q.red.is_some() || q.aqm.is_some() {
                            format!("{} discipline", q.policy_name())
                        } else {
                            "limit".to_string()
                        }
                    ),
                ));
                continue;
            }
            let (Some(target), Some(lsb)) = (q.target(), dc.lsb) else {
                continue;
            };
            // The LSB's drain time at the fastest rate the direction has.
            let fastest = rates
                .iter()
                .filter(|r| !r.is_unlimited())
                .max()
                .copied()
                .unwrap_or(Rate::UNLIMITED);
            // Beyond the packet being sent (which no AQM can take back), what the LSB holds
            // waits where the AQM does not see it.
            let beyond = lsb.saturating_sub(u64::from(self.mtu.unwrap_or(1500)));
            let drain = fastest.tx_time(beyond);
            if drain > target {
                w.push(warn(
                    format!("{d}.lsb"),
                    format!(
                        "the link send buffer of {lsb}B holds {drain} of sending at {fastest} beyond the packet being sent{}, more than the {} target of {target}: that standing queue sits in the LSB, which the AQM does not see, so the delay can stay {drain} above the target whatever the AQM does; leave `lsb` out (the LSB then holds only the packet being sent) or make it smaller",
                        if dc.link_ack { " (and with link_ack it holds each packet until it leaves the LRB)" } else { "" },
                        q.policy_name()
                    ),
                ));
            }
        }
        w
    }

    /// A human-readable account of what the spec describes.
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = write!(s, "link {:?}", self.name);
        if let Some(m) = self.mtu {
            let _ = write!(s, ", MTU {m}B");
        }
        let _ = writeln!(s);
        if let Some(d) = &self.description {
            let _ = writeln!(s, "  {d}");
        }
        for d in Dir::BOTH {
            let c = &self.dirs[d.index()];
            let p0 = &c.per_state[0];
            let what = match d {
                Dir::Down => "fixed side -> mobile side",
                Dir::Up => "mobile side -> fixed side",
            };
            let _ = writeln!(s, "{d} ({what}):");
            let mut rate = format!("{}", p0.base_rate);
            if !p0.base_rate.is_unlimited() {
                if let Some(m) = self.mtu {
                    let _ = write!(
                        rate,
                        " ({} per {m}B packet)",
                        p0.base_rate.tx_time(u64::from(m) + u64::from(c.overhead))
                    );
                }
            }
            match &c.trace {
                Some(t) => {
                    let what = match t.shape {
                        crate::trace::Shape::Opportunities { .. } => "Mahimahi trace",
                        crate::trace::Shape::Rates { .. } => "rate trace",
                    };
                    let _ = writeln!(
                        s,
                        "  rate from the {what} {:?}: {t}; overhead {}B per packet",
                        t.file, c.overhead
                    );
                }
                None => {
                    let _ = writeln!(s, "  rate {rate}, overhead {}B per packet", c.overhead);
                }
            }
            for (t, r) in &c.schedule {
                let _ = writeln!(s, "  rate becomes {r} at {}s", t.as_secs_f64());
            }
            if let Some((m, i)) = &c.available {
                let _ = writeln!(
                    s,
                    "  available rate: the rate times {m}, drawn again every {i}"
                );
            }
            if let Some((a, idle)) = &c.allocation {
                let _ = writeln!(
                    s,
                    "  allocation delay {a} before a packet that finds the link idle{}",
                    if *idle > Dur::ZERO {
                        format!(" for more than {idle}")
                    } else {
                        String::new()
                    }
                );
            }
            match &c.delay_trace {
                Some(t) => {
                    let _ = write!(
                        s,
                        "  propagation delay from the delay trace {:?}{}",
                        t.file,
                        if t.looping { " (looping)" } else { "" }
                    );
                }
                None => {
                    let _ = write!(s, "  propagation delay {}", p0.delay);
                }
            }
            if let Some(x) = &p0.extra_delay {
                let _ = write!(s, " + extra {x}");
            }
            let _ = writeln!(s);
            let q = &c.queue;
            let lim = |v: Option<u64>, unit: &str| {
                v.map(|v| format!("{v}{unit}"))
                    .unwrap_or_else(|| "no limit".into())
            };
            let _ = write!(
                s,
                "  router queue: {}, {}",
                q.packets
                    .map(|p| format!("{p} packets"))
                    .unwrap_or_else(|| "no packet limit".into()),
                q.bytes
                    .map(|b| format!("{b}B"))
                    .unwrap_or_else(|| "no byte limit".into()),
            );
            if let Some(j) = q.sojourn {
                let _ = write!(s, ", sojourn at most {j}");
            }
            match (q.overflow, q.input) {
                (Overflow::Stop, Some(n)) => {
                    let _ = write!(s, ", when full stops reading (up to {n} packets unread)");
                }
                (Overflow::FlowControl, _) => {
                    let _ = write!(s, ", when full blocks the sender (flow control)");
                }
                _ => {}
            }
            let ecn = |on: bool| if on { ", ECN marking" } else { "" };
            match (&q.red, &q.aqm) {
                (Some(r), _) => {
                    let _ = writeln!(
                        s,
                        ", {}RED min_th {} max_th {} max_p {} w_q {} ({:?} mode{}{})",
                        if r.adaptive { "adaptive " } else { "" },
                        r.min_th,
                        r.max_th,
                        r.max_p,
                        r.w_q,
                        r.mode,
                        if r.gentle { ", gentle" } else { "" },
                        ecn(r.ecn)
                    );
                }
                (None, Some(Aqm::Codel(c))) => {
                    let _ = writeln!(
                        s,
                        ", CoDel target {} interval {} (at dequeue{})",
                        c.target,
                        c.interval,
                        ecn(c.ecn)
                    );
                }
                (None, Some(Aqm::Pie(p))) => {
                    let _ = writeln!(
                        s,
                        ", PIE target {} tupdate {} alpha {} beta {} max_burst {} (queue delay from timestamps{}{})",
                        p.target,
                        p.tupdate,
                        p.alpha,
                        p.beta,
                        p.max_burst,
                        if p.bytemode { ", byte mode" } else { "" },
                        ecn(p.ecn)
                    );
                }
                (None, Some(Aqm::FqCodel(f))) => {
                    let quantum = f.quantum.or(self.mtu.map(u64::from)).unwrap_or(1500);
                    let _ = writeln!(
                        s,
                        ", FQ-CoDel {} flows, quantum {quantum}B, CoDel target {} interval {} per flow (drops from the fattest flow when full, up to {} at once{})",
                        f.flows,
                        f.codel.target,
                        f.codel.interval,
                        f.drop_batch,
                        ecn(f.codel.ecn)
                    );
                }
                (None, None) => {
                    let _ = writeln!(s, ", drop-tail");
                }
            }
            let _ = writeln!(
                s,
                "  link send buffer {}{}, link receive buffer {}; {}; {}",
                c.lsb
                    .map_or("of the packet being sent".to_string(), |b| format!("{b}B")),
                match (c.lsb, c.lsb_admit) {
                    (Some(_), LsbAdmit::Below) => " (a packet enters while it holds less)",
                    _ => "",
                },
                lim(c.lrb, "B"),
                match (c.link_ack, c.link_ack_delay) {
                    (true, Dur::ZERO) =>
                        "LSB space held until release (link-layer ACK emulation)".to_string(),
                    (true, x) =>
                        format!("LSB space held until {x} after release (link-layer ACK emulation)"),
                    (false, _) => "LSB space freed when sent".to_string(),
                },
                if c.in_order {
                    "in-order release"
                } else {
                    "release on arrival"
                }
            );
            for sd in &c.delays {
                match (sd.nth, sd.probability) {
                    (Some(n), _) => {
                        let _ = writeln!(s, "  packet #{n} delayed by {}", sd.delay);
                    }
                    (_, Some(p)) => {
                        let _ = writeln!(
                            s,
                            "  each packet delayed by {} with probability {p}",
                            sd.delay
                        );
                    }
                    _ => {}
                }
            }
            if let Some(b) = &c.background {
                let _ = writeln!(
                    s,
                    "  background load: other users' {}B packets at {} ({:?} arrivals) share the channel, priority {:?}",
                    b.packet, b.rate, b.arrivals, b.priority
                );
            }
            if let Some(o) = &c.output_dropper {
                let _ = writeln!(
                    s,
                    "  output dropper: each packet leaving dropped with probability {o}"
                );
            }
            match &c.loss {
                LossModel::States if self.states.len() == 1 => {
                    let _ = writeln!(s, "  errors: {}", describe_errors(p0));
                }
                LossModel::States => {}
                m => {
                    let what = match m {
                        LossModel::Uniform { probability } => {
                            format!("each packet lost with probability {probability}")
                        }
                        LossModel::Pattern { drop, every } => format!(
                            "packets {} of every {every} lost",
                            drop.iter()
                                .map(|n| n.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        LossModel::GilbertElliott(g) => format!(
                            "Gilbert-Elliott: good to bad {}, bad to good {}, lost in bad {}, in good {}",
                            g.p, g.r, g.loss_bad, g.loss_good
                        ),
                        LossModel::FourState(q) => format!(
                            "4-state Markov: p13 {}, p31 {}, p32 {}, p23 {}, p14 {}",
                            q.p13, q.p31, q.p32, q.p23, q.p14
                        ),
                        LossModel::Trace(t) => format!("replayed from a file: {t:?}"),
                        LossModel::States => unreachable!(),
                    };
                    let handling = match p0.handling {
                        Handling::Drop => "dropped".to_string(),
                        _ => describe_errors(&Params {
                            error: 1.0,
                            error_dist: None,
                            ..p0.clone()
                        })
                        .replace("packet error probability 1: ", ""),
                    };
                    let _ = writeln!(s, "  errors: {what} (loss model), {handling}");
                }
            }
        }
        if self.states.len() > 1 || self.states[0].duration.is_some() {
            let _ = writeln!(s, "states:");
            let names = |v: &[(usize, f64)]| {
                v.iter()
                    .map(|(i, p)| {
                        if *p == 1.0 {
                            self.states[*i].name.clone()
                        } else {
                            format!("{} ({p})", self.states[*i].name)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(s, "  starts in {}", names(&self.initial));
            for (i, st) in self.states.iter().enumerate() {
                let dur = st
                    .duration
                    .as_ref()
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "forever".into());
                let _ = writeln!(s, "  {}: lasts {dur}", st.name);
                if !st.next.is_empty() {
                    let _ = writeln!(s, "    then {}", names(&st.next));
                }
                for d in Dir::BOTH {
                    let p = &self.dirs[d.index()].per_state[i];
                    let mut line = describe_errors(p);
                    if let Some(r) = p.rate_override {
                        line = format!("rate {r}; {line}");
                    }
                    let _ = writeln!(s, "    {d}: {line}");
                }
            }
        }
        s
    }
}

fn describe_errors(p: &Params) -> String {
    if !p.has_errors() {
        return "no errors".into();
    }
    let what = match p.handling {
        Handling::Drop => "dropped".to_string(),
        Handling::Forward => {
            "forwarded with damaged bytes (the receiver's checksum discards it)".to_string()
        }
        Handling::Delay => format!(
            "delayed by {}",
            p.error_delay
                .as_ref()
                .map(|d| d.to_string())
                .unwrap_or_default()
        ),
        Handling::Arq => {
            let limit = match (p.retries, p.drop_threshold) {
                (Some(n), _) => format!("at most {n} retries"),
                (_, Some(t)) => format!("dropped when the error delay would pass {t}"),
                _ => String::new(),
            };
            format!(
                "link-layer retransmission, {} per retry, {limit}",
                p.error_delay
                    .as_ref()
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            )
        }
    };
    format!(
        "{} error probability {}: {what}",
        match p.error_unit {
            ErrorUnit::Packet => "packet",
            ErrorUnit::Bit => "bit",
        },
        p.error_text()
    )
}
