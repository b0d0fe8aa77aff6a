//! The router queue's keys and checks (`[DIR.queue]`): its limits, its overflow handling and
//! its policy; each discipline's own table in its file.

pub mod codel;
pub mod fq_codel;
pub mod pie;
pub mod red;

use crate::spec::limits::{
    DEFAULT_INPUT_PACKETS, LINUX_CODEL_PIE_LIMIT, LINUX_FQ_CODEL_LIMIT, MAX_QUEUE_PACKETS,
};
use codel::{validate_codel, CodelConfig, CodelSpec};
use fq_codel::{validate_fq_codel, FqCodelConfig, FqCodelSpec};
use lasthop_core::spec::{err, SpecError};
use lasthop_core::{Bytes, Dur};
use pie::{validate_pie, PieConfig, PieSpec};
use red::{validate_red, RedSpec};
use serde::{Deserialize, Serialize};

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

pub(crate) fn validate_queue(key: &str, q: Option<&QueueSpec>) -> Result<QueueConfig, SpecError> {
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
            (Policy::Red, Some(r)) => Some(validate_red(&format!("{key}.red"), r)?),
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
        Policy::FqCodel => Some(Aqm::FqCodel(validate_fq_codel(
            &format!("{key}.fq_codel"),
            &q.fq_codel.clone().unwrap_or_default(),
        )?)),
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
