//! The scenario spec as written: what serde reads from the TOML, before any check. The
//! checks and the resolution into a [`crate::config::Scenario`] are in [`crate::validate`].

use indexmap::IndexMap;
use lasthop_core::spec::{from_toml, SpecError};
use lasthop_core::{Bytes, Dur};
use lasthop_link::{Dir, LogLevel};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::PathBuf;

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<u64>,
    /// Replication number (default 0); with the seed it fixes every random stream.
    pub replication: Option<u64>,
    /// Hard stop: the run ends at this time whatever the flows are doing.
    pub duration: Dur,
    /// The link spec, relative to the scenario file.
    pub link: PathBuf,
    pub log: Option<LogLevel>,
    /// Values put over the link spec's own (tables merge key by key), e.g.
    /// `link_set = { both = { rate = "1.5Mbit" } }`: what a sweep changes of a link without a
    /// file per value.
    #[serde(default)]
    pub link_set: toml::Table,
    #[serde(default)]
    pub hosts: IndexMap<String, HostSpec>,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Middleboxes at the router, in order: `[[middleboxes]]` with `kind` and its parameters.
    #[serde(default)]
    pub middleboxes: Vec<toml::Table>,
    /// Simulation: where the hosts' jiffies clocks stand, `"per_host"`, `"shared"` or a
    /// duration ([`crate::config::ClockPhase`]).
    pub clock_phase: Option<String>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub side: Side,
    /// A host group: this many hosts named NAME0, NAME1, ... with the same settings, except
    /// the values given per member (see [`PerMember`]). Absent: one host called NAME.
    pub count: Option<u32>,
    /// The host's address; a group's first member's (member i gets this address + i).
    pub address: Option<Ipv4Addr>,
    pub mtu: Option<Bytes>,
    /// The rate of the host's own access link to the router (per member; both modes).
    pub access_rate: Option<toml::Value>,
    /// The delay of the host's own access link to the router (per member; both modes).
    pub access_delay: Option<toml::Value>,
    /// Emulation: `net.ipv4.*` sysctls in the host's namespace, without the `net.ipv4.` prefix.
    #[serde(default)]
    pub sysctl: IndexMap<String, SysctlValue>,
    /// Emulation: options of the routes from this host across the link.
    #[serde(default)]
    pub route: RouteOptions,
    /// Simulation: switches of the TCP model (validated into a `TcpConfig`).
    #[serde(default)]
    pub tcp: toml::Table,
    /// Seed 001's shared advertised window: this host's connections from `peer` share `size`
    /// bytes of advertised window (both modes; see [`crate::config::SharedWindow`]).
    pub shared_window: Option<SharedWindowSpec>,
}

/// `[hosts.NAME.shared_window]` as written.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SharedWindowSpec {
    /// The pool, bytes (seed 001's `iwtcp_srwnd_size`: 2048, 3072 or 5120).
    pub size: Bytes,
    /// The host whose connections share it (`iwtcp_srwnd_addr`); default: the one host on
    /// the other side.
    pub peer: Option<String>,
    /// Where the rule acts in simulation: `"receiver"` (default: the TCP model's receiver, as
    /// the seed's modified kernel did) or `"router"` (a middlebox rewriting the receiver's ACKs,
    /// what emulation always does, since Linux has no such option).
    pub enforce: Option<SharedWindowAt>,
}

/// Where a shared advertised window is enforced.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SharedWindowAt {
    /// The receiving TCP (simulation only).
    #[default]
    Receiver,
    /// A middlebox at the router rewriting the receiver's ACKs.
    Router,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The wired side: its packets go down the link.
    Fixed,
    /// The wireless side: its packets go up the link.
    Mobile,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Fixed => "fixed",
            Side::Mobile => "mobile",
        }
    }
    /// The link direction of the packets this side sends.
    pub fn dir(self) -> Dir {
        match self {
            Side::Fixed => Dir::Down,
            Side::Mobile => Dir::Up,
        }
    }
    pub fn other(self) -> Side {
        match self {
            Side::Fixed => Side::Mobile,
            Side::Mobile => Side::Fixed,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A sysctl value as written: a number, a string or a boolean (written as 1 / 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SysctlValue {
    Int(i64),
    Str(String),
    Bool(bool),
}

impl SysctlValue {
    /// The text written to `/proc/sys/net/ipv4/KEY`.
    pub fn to_proc(&self) -> String {
        match self {
            SysctlValue::Int(i) => i.to_string(),
            SysctlValue::Str(s) => s.clone(),
            SysctlValue::Bool(b) => u8::from(*b).to_string(),
        }
    }
}

impl fmt::Display for SysctlValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SysctlValue::Str(s) => write!(f, "{s:?}"),
            other => f.write_str(&other.to_proc()),
        }
    }
}

impl<'de> Deserialize<'de> for SysctlValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SysctlValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer, a string or a boolean")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SysctlValue, E> {
                Ok(SysctlValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SysctlValue, E> {
                i64::try_from(v)
                    .map(SysctlValue::Int)
                    .map_err(|_| E::custom(format!("{v} is too large for a sysctl")))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<SysctlValue, E> {
                Ok(SysctlValue::Bool(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SysctlValue, E> {
                if v.contains(['\n', '\0']) {
                    return Err(E::custom(format!(
                        "invalid sysctl value {v:?}: one line, no NUL"
                    )));
                }
                Ok(SysctlValue::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Options of the routes across the link (`ip route ... initcwnd N initrwnd N rto_min T quickack 1`).
#[derive(Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RouteOptions {
    /// Initial congestion window, in segments.
    pub initcwnd: Option<u32>,
    /// Initial receive window, in segments.
    pub initrwnd: Option<u32>,
    /// Lower bound of the retransmission timeout.
    pub rto_min: Option<Dur>,
    /// Disable delayed ACKs on this route.
    pub quickack: Option<bool>,
}

impl RouteOptions {
    pub fn is_empty(&self) -> bool {
        *self == RouteOptions::default()
    }
}

/// A flow as written: where its two ends run, and its application's parameters (validated by
/// the application's own module in `lasthop-apps`). A flow between host groups is one flow per
/// member: member i of `from` to member i of `to` (or to the one host `to` names), with port
/// `port + i` and a start per member.
#[derive(Deserialize, Debug, Clone)]
pub struct FlowSpec {
    /// The application (`bulk`, `cbr`, ...).
    pub kind: String,
    /// The client end's host (or host group).
    pub from: String,
    /// The server end's host (or host group).
    pub to: String,
    /// The start time (per member, see [`PerMember`]).
    pub start: Option<toml::Value>,
    pub port: Option<u16>,
    /// Per-flow TCP options (`thin` and `bulk`): `TcpConfig` keys put over the client host's
    /// `tcp` table for the flow's client-side connections (simulation), set as socket options
    /// on the client program's sockets (emulation; see [`crate::config::Flow::socket_options`]).
    pub tcp: Option<toml::Table>,
    /// The application's parameters: every other key.
    #[serde(flatten)]
    pub params: toml::Table,
}

impl ScenarioSpec {
    pub fn parse(text: &str) -> Result<ScenarioSpec, SpecError> {
        from_toml(text)
    }
}
