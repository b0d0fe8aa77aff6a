//! Scenario specs: the hosts on each side of the link, their TCP settings, the link spec they share,
//! and the workload. One format for both modes: the emulator reads `sysctl` and `route` (real Linux
//! settings in each host's namespace), the simulator reads `tcp` (its TCP model's switches); both
//! run the access links. Neither ignores the other's keys in silence: [`modes`] says which keys
//! each mode honours, warns about the other mode's keys unless their counterpart agrees, and
//! refuses what a mode cannot do ([`Scenario::check_mode`], `docs/modes.md`).
//!
//! ```toml
//! name = "seed000-e0"
//! seed = 1                             # default 1
//! duration = "300s"                    # hard stop
//! link = "../links/seed000-e0.toml"    # relative to this file
//! log = "all"                          # all | drops | none
//!
//! [hosts.server]
//! side = "fixed"                       # fixed | mobile
//! # address = "198.18.0.1"             # default: fixed 198.18.0.N, mobile 198.19.0.N
//! mtu = "576B"                         # default: the link's MTU, else 1500B
//! access_rate = "10Mbit"               # the host's access link (optional, both modes)
//! access_delay = "1ms"
//! [hosts.server.sysctl]                # emulation: net.ipv4.* in the host's namespace
//! tcp_congestion_control = "reno"
//! tcp_sack = 1
//! [hosts.server.route]                 # emulation: options of the routes across the link
//! initcwnd = 2
//! rto_min = "200ms"
//! [hosts.server.tcp]                   # simulation: TCP model switches (checked by lasthop-tcp)
//!
//! [hosts.mobile]
//! side = "mobile"
//!
//! [hosts.s]                            # a host group: s0, s1, ..., s9
//! side = "fixed"
//! count = 10
//! access_delay = { groups = ["5ms", "10ms"] }   # per member: one value, a list of 10, or
//!                                      # groups (here s0..s4 5 ms, s5..s9 10 ms)
//!
//! [[flows]]                            # one application: a client end and a server end
//! kind = "bulk"                        # the application (lasthop-apps: bulk, cbr)
//! from = "server"                      # the client end's host (it starts the flow)
//! to = "mobile"                        # the server end's host (it listens from time 0)
//! start = "0s"
//! port = 5001                          # the server end's port, default 5000 + index
//! bytes = 188640                       # then the application's own parameters
//! congestion_control = "reno"          # bulk's socket options: congestion_control,
//!                                      # window_clamp, sndbuf, rcvbuf, nodelay (both ends;
//!                                      # simulation: reno/cubic, no sndbuf/rcvbuf)
//! tcp = { nagle = false }              # thin and bulk: TCP model keys for the client's
//!                                      # connections (emulation: its socket options)
//! ```
//!
//! Loading never panics: every problem is a [`SpecError`] naming the key, the value and what is
//! allowed.

pub mod modes;

pub use modes::Mode;

use indexmap::IndexMap;
use lasthop_apps::{AppParams, FlowCtx, SpecCtx};
use lasthop_core::spec::{check_name, err, from_table, from_toml, load_file, SpecError};
use lasthop_core::{Bytes, Dur, Rate};
use lasthop_link::rate_control::RateControlConfig;
use lasthop_link::rdb::RdbConfig;
use lasthop_link::{Dir, LinkConfig, LinkSpec, LogLevel};
use lasthop_tcp::TcpConfig;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// The spec as written.

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
    /// Simulation: switches of the TCP model (validated into a [`TcpConfig`]).
    #[serde(default)]
    pub tcp: toml::Table,
    /// Seed 001's shared advertised window: this host's connections from `peer` share `size`
    /// bytes of advertised window (both modes; see [`SharedWindow`]).
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

/// A host's validated shared advertised window (seed 001, extract B.2.4): the connections
/// between this host and `peer` share `size` bytes; each advertises
/// min(its normal window, (size − bytes held) / open connections), never shrinking a window
/// already offered. In simulation the TCP model does it (`lasthop_tcp::Host::set_shared_window`,
/// or the router middlebox with `enforce = "router"`); in emulation the router middlebox
/// `lasthop_link::shared_window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedWindow {
    pub peer: Ipv4Addr,
    pub size: u64,
    pub enforce: SharedWindowAt,
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
    /// on the client program's sockets (emulation; see [`Flow::socket_options`]).
    pub tcp: Option<toml::Table>,
    /// The application's parameters: every other key.
    #[serde(flatten)]
    pub params: toml::Table,
}

// ---------------------------------------------------------------------------------------------
// The validated scenario.

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    pub replication: u64,
    pub duration: Dur,
    /// The link spec's path, resolved against the scenario file's directory.
    pub link_path: PathBuf,
    pub link: LinkConfig,
    pub log: LogLevel,
    pub hosts: Vec<Host>,
    pub flows: Vec<Flow>,
    pub middleboxes: Vec<MiddleboxConfig>,
}

/// A middlebox at the router, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum MiddleboxConfig {
    /// Seed 004's TCP rate control (`lasthop_link::rate_control`).
    RateControl(RateControlConfig),
    /// Seed 003's redundant data bundling on the wire (`lasthop_link::rdb`).
    Rdb(RdbConfig),
}

/// The middlebox kinds a scenario may name.
pub const MIDDLEBOX_KINDS: [&str; 2] = ["rate_control", "rdb"];

impl MiddleboxConfig {
    fn parse(mut t: toml::Table, key: &str) -> Result<MiddleboxConfig, SpecError> {
        let kind = match t.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(other) => {
                return Err(err(
                    format!("{key}.kind"),
                    format!(
                        "{other}: expected a string, one of {}",
                        MIDDLEBOX_KINDS.join(", ")
                    ),
                ))
            }
            None => {
                return Err(err(
                    format!("{key}.kind"),
                    format!("missing: one of {}", MIDDLEBOX_KINDS.join(", ")),
                ))
            }
        };
        match kind.as_str() {
            "rate_control" => RateControlConfig::parse(t, key).map(MiddleboxConfig::RateControl),
            "rdb" => RdbConfig::parse(t, key).map(MiddleboxConfig::Rdb),
            other => Err(err(
                format!("{key}.kind"),
                format!(
                    "unknown middlebox kind {other:?}: the kinds are {}",
                    MIDDLEBOX_KINDS.join(", ")
                ),
            )),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            MiddleboxConfig::RateControl(c) => c.describe(),
            MiddleboxConfig::Rdb(c) => c.describe(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Host {
    /// The host's name: a group's members are NAME0, NAME1, ...
    pub name: String,
    /// The group the host belongs to and its position in it, if it is a group member.
    pub group: Option<(String, u32)>,
    pub side: Side,
    pub address: Ipv4Addr,
    /// Interface MTU in bytes.
    pub mtu: u32,
    pub access_rate: Option<Rate>,
    pub access_delay: Option<Dur>,
    /// `(key, value)` with keys relative to `net.ipv4.` (`tcp_sack`, `conf.all.rp_filter`).
    pub sysctl: Vec<(String, SysctlValue)>,
    pub route: RouteOptions,
    /// The `[hosts.NAME.tcp]` table as written (emulation reads `sysctl` and `route` instead).
    pub tcp_table: toml::Table,
    /// The TCP model's configuration (simulation): the table over the seeds' baseline, with the
    /// host's MTU unless the table sets one.
    pub tcp: TcpConfig,
    /// Seed 001's shared advertised window, if the host has one.
    pub shared_window: Option<SharedWindow>,
}

pub use lasthop_apps::SocketOptions;

#[derive(Debug, Clone)]
pub struct Flow {
    /// Position among the run's flows, from 0 (a flow between host groups is one per member).
    pub index: usize,
    /// Position in `[[flows]]` of the entry it comes from.
    pub spec: usize,
    /// Its member number, if the entry is a flow between host groups.
    pub member: Option<u32>,
    /// Index into [`Scenario::hosts`]: the client end's host.
    pub from: usize,
    /// The server end's host.
    pub to: usize,
    pub start: Dur,
    /// The server end's port.
    pub port: u16,
    /// The first of the client ports the flow uses (see [`lasthop_apps::FIRST_CLIENT_PORT`]).
    pub first_client_port: u16,
    pub app: AppParams,
    /// The flow's `tcp` table as written (empty: none).
    pub tcp_table: toml::Table,
    /// Simulation: the TCP model's configuration of the flow's client-side connections (its
    /// `tcp` table over the client host's), if the flow has a `tcp` table.
    pub tcp: Option<TcpConfig>,
}

impl Flow {
    /// Emulation: the flow's `tcp` table as socket options of the client program's sockets
    /// (each key that Linux can set per socket; any other is an error naming it).
    pub fn socket_options(&self) -> Result<SocketOptions, SpecError> {
        SocketOptions::from_tcp_table(&self.tcp_table, &format!("{}.tcp", self.spec_key()))
    }

    pub fn kind(&self) -> &'static str {
        self.app.kind()
    }

    /// Where the flow was written: `flows[2]`, or `flows[2] member 7` for a group's flow.
    pub fn spec_key(&self) -> String {
        match self.member {
            None => format!("flows[{}]", self.spec),
            Some(m) => format!("flows[{}] member {m}", self.spec),
        }
    }

    /// Where the flow's ends run, for building them.
    pub fn ctx(&self, sc: &Scenario) -> FlowCtx {
        FlowCtx {
            index: self.index,
            client: sc.hosts[self.from].address,
            server: sc.hosts[self.to].address,
            port: self.port,
            start: self.start,
            first_client_port: self.first_client_port,
            seeds: lasthop_core::Seeds::new(sc.seed, sc.replication),
        }
    }

    /// `from -> to:port, <application>, start T`.
    pub fn describe(&self, sc: &Scenario) -> String {
        format!(
            "{} -> {}, {}, start {}",
            sc.hosts[self.from].name,
            sc.hosts[self.to].name,
            self.app.describe(),
            self.start
        )
    }
}

/// Resolves a value a host group (or a flow between groups) may give per member, for
/// `members` members (`None`: a single host or flow, which takes only a single value). Written
/// as one value for every member, a list of one value per member, or
/// `{ groups = [v0, v1, ...] }`: the members in that many consecutive groups of sizes as equal
/// as possible (the first groups one larger when they cannot be equal: 10 in 4 are 3, 3, 2, 2),
/// group g taking v_g.
pub fn per_member<T: serde::de::DeserializeOwned + Clone>(
    v: &toml::Value,
    key: &str,
    members: Option<usize>,
) -> Result<Vec<T>, SpecError> {
    let n = members.unwrap_or(1);
    let forms = format!(
        "allowed one value, a list of {n} (one per member) or {{ groups = [...] }} (consecutive groups of members)"
    );
    let one = |v: &toml::Value, k: &str| lasthop_core::spec::from_value::<T>(v.clone(), k);
    match v {
        toml::Value::Array(list) => {
            if members.is_none() {
                return Err(err(key, "a list of values is for a host group (count = N): a single host or flow takes one value"));
            }
            if list.len() != n {
                return Err(err(
                    key,
                    format!("a list of {} values for {n} members: {forms}", list.len()),
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, v)| one(v, &format!("{key}[{i}]")))
                .collect()
        }
        toml::Value::Table(t) if t.contains_key("groups") => {
            if members.is_none() {
                return Err(err(key, "{ groups = [...] } is for a host group (count = N): a single host or flow takes one value"));
            }
            if let Some(k) = t.keys().find(|k| *k != "groups") {
                return Err(err(
                    format!("{key}.{k}"),
                    "unknown key: allowed only groups",
                ));
            }
            let gkey = format!("{key}.groups");
            let Some(toml::Value::Array(groups)) = t.get("groups") else {
                return Err(err(gkey, "expected a list of values, one per group"));
            };
            let g = groups.len();
            if g == 0 || g > n {
                return Err(err(
                    gkey,
                    format!("{g} groups for {n} members: allowed 1..{n} groups"),
                ));
            }
            let values = groups
                .iter()
                .enumerate()
                .map(|(j, v)| one(v, &format!("{gkey}[{j}]")))
                .collect::<Result<Vec<T>, _>>()?;
            // Group j holds n / g members, and one more if j < n % g.
            let (base, extra) = (n / g, n % g);
            Ok(values
                .into_iter()
                .enumerate()
                .flat_map(|(j, v)| std::iter::repeat_n(v, base + usize::from(j < extra)))
                .collect())
        }
        v => Ok(vec![one(v, key)?; n]),
    }
}

/// [`per_member`] for an optional key: `None` for every member when it is absent.
fn per_member_opt<T: serde::de::DeserializeOwned + Clone>(
    v: Option<&toml::Value>,
    key: &str,
    members: Option<usize>,
) -> Result<Vec<Option<T>>, SpecError> {
    match v {
        None => Ok((0..members.unwrap_or(1)).map(|_| None).collect()),
        Some(v) => Ok(per_member::<T>(v, key, members)?
            .into_iter()
            .map(Some)
            .collect()),
    }
}

/// Loads the link spec, with `link_set`'s values over the file's.
fn load_link(path: &Path, link_set: &toml::Table) -> Result<LinkConfig, SpecError> {
    let in_file = |e: SpecError| {
        let file = e.file.clone().unwrap_or_else(|| path.display().to_string());
        let with = if link_set.is_empty() {
            ""
        } else {
            " with link_set"
        };
        err(
            "link",
            format!("{file}{with}: {}", SpecError { file: None, ..e }),
        )
    };
    if link_set.is_empty() {
        return LinkSpec::load(path).map_err(in_file);
    }
    let mut table: toml::Table = load_file(path, lasthop_core::spec::from_toml).map_err(in_file)?;
    lasthop_core::spec::merge_tables(&mut table, link_set);
    lasthop_core::spec::from_table::<LinkSpec>(table, "")
        .and_then(|s| s.validate_in(path.parent().unwrap_or(Path::new(""))))
        .map_err(in_file)
}

/// The range every host address must lie in (RFC 2544's benchmarking range).
pub const NET: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 15);

pub fn in_bench_range(a: Ipv4Addr) -> bool {
    u32::from(a) >> (32 - NET.1) == u32::from(NET.0) >> (32 - NET.1)
}

/// The host's TCP model configuration: its `tcp` table over the seeds' baseline, with the
/// host's MTU unless the table sets one.
fn tcp_config(host: &str, table: &toml::Table, mtu: u32) -> Result<TcpConfig, SpecError> {
    let key = format!("hosts.{host}.tcp");
    let mut t = table.clone();
    t.entry("mtu")
        .or_insert_with(|| toml::Value::String(format!("{mtu}B")));
    let cfg: TcpConfig = from_table(t, &key)?;
    cfg.validate()
        .map_err(|e| err(lasthop_core::spec::join_key(&key, &e.key), e.message))?;
    Ok(cfg)
}

/// A flow's TCP model configuration: its `tcp` table over its client host's (with the host's
/// MTU unless either sets one). The keys are not listed here: `TcpConfig`'s deserialization
/// checks them, so every key the model has works, named `flows[i].tcp.KEY` in errors.
fn flow_tcp_config(key: &str, host: &Host, over: &toml::Table) -> Result<TcpConfig, SpecError> {
    let key = format!("{key}.tcp");
    let mut t = host.tcp_table.clone();
    lasthop_core::spec::merge_tables(&mut t, over);
    t.entry("mtu")
        .or_insert_with(|| toml::Value::String(format!("{}B", host.mtu)));
    let cfg: TcpConfig = from_table(t, &key)?;
    cfg.validate()
        .map_err(|e| err(lasthop_core::spec::join_key(&key, &e.key), e.message))?;
    Ok(cfg)
}

impl ScenarioSpec {
    pub fn parse(text: &str) -> Result<ScenarioSpec, SpecError> {
        from_toml(text)
    }

    /// Reads and validates a scenario file: the same as [`Scenario::load`].
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, SpecError> {
        Scenario::load(path)
    }

    /// Parses and validates TOML text: the same as [`Scenario::from_str_in`].
    pub fn from_str_in(text: &str, base_dir: &Path) -> Result<Scenario, SpecError> {
        Scenario::from_str_in(text, base_dir)
    }

    /// Validates the spec, loading the link spec relative to `base_dir`.
    pub fn validate(&self, base_dir: &Path) -> Result<Scenario, SpecError> {
        if let Some(name) = &self.name {
            lasthop_core::spec::check_dir_name("name", "scenario name", name)?;
        }
        let link_path = base_dir.join(&self.link);
        let link = load_link(&link_path, &self.link_set)?;
        if self.duration == Dur::ZERO {
            return Err(err("duration", "0s: a run must last longer than 0s"));
        }
        if self.hosts.is_empty() {
            return Err(err("hosts", "missing: at least one [hosts.NAME] table"));
        }
        let mut hosts: Vec<Host> = vec![];
        // Each entry of `[hosts]`: its first host and its number of members (None: one host).
        let mut entries: Vec<(usize, Option<usize>)> = vec![];
        let mut count = [0u8; 2];
        for (name, h) in &self.hosts {
            let key = format!("hosts.{name}");
            check_name(&key, "host name", name)?;
            let members = match h.count {
                None => None,
                Some(0) => {
                    return Err(err(
                        format!("{key}.count"),
                        "0: a host group has 1 or more members (leave count out for one host)",
                    ))
                }
                Some(n) if n > 254 => {
                    return Err(err(
                        format!("{key}.count"),
                        format!("{n}: allowed 1..254 (the hosts of one side share 254 addresses)"),
                    ))
                }
                Some(n) => Some(n as usize),
            };
            let rates: Vec<Option<Rate>> = per_member_opt(
                h.access_rate.as_ref(),
                &format!("{key}.access_rate"),
                members,
            )?;
            let delays: Vec<Option<Dur>> = per_member_opt(
                h.access_delay.as_ref(),
                &format!("{key}.access_delay"),
                members,
            )?;
            entries.push((hosts.len(), members));
            for i in 0..members.unwrap_or(1) {
                let member = match members {
                    None => name.clone(),
                    Some(_) => format!("{name}{i}"),
                };
                if members.is_some() {
                    check_name(&format!("{key}.count"), "group member name", &member)?;
                }
                if let Some(o) = hosts.iter().find(|o| o.name == member) {
                    return Err(err(
                        &key,
                        format!(
                            "host {member:?} is defined twice (a host group's members are named NAME0, NAME1, ...; {:?} is {})",
                            o.name,
                            o.group.as_ref().map_or("a host of its own".to_string(), |g| format!("member {} of group {:?}", g.1, g.0))
                        ),
                    ));
                }
                let n = &mut count[h.side as usize];
                *n = n
                    .checked_add(1)
                    .filter(|&n| n < 255)
                    .ok_or_else(|| err(&key, "too many hosts on one side: at most 254"))?;
                let address = match h.address {
                    Some(a) => {
                        let a = u32::from(a).checked_add(i as u32).map(Ipv4Addr::from);
                        match a.filter(|&a| in_bench_range(a)) {
                            Some(a) => a,
                            None => return Err(err(
                                format!("{key}.address"),
                                format!("{} (member {i}'s) is outside the benchmarking range: allowed 198.18.0.0/15 (198.18.0.0 to 198.19.255.255)", a.map_or("beyond 255.255.255.255".into(), |a| a.to_string())),
                            )),
                        }
                    }
                    None => match h.side {
                        Side::Fixed => Ipv4Addr::new(198, 18, 0, *n),
                        Side::Mobile => Ipv4Addr::new(198, 19, 0, *n),
                    },
                };
                if let Some(other) = hosts.iter().find(|o| o.address == address) {
                    return Err(err(
                        format!("{key}.address"),
                        format!("{address} is already host {:?}'s address", other.name),
                    ));
                }
                let mtu = match h.mtu {
                    Some(m) => {
                        if !(68..=65535).contains(&m.0) {
                            return Err(err(
                                format!("{key}.mtu"),
                                format!("{m} is not a valid IPv4 MTU: allowed 68B..65535B"),
                            ));
                        }
                        m.0 as u32
                    }
                    None => link.mtu.unwrap_or(1500),
                };
                let mut sysctl = vec![];
                for (k, v) in &h.sysctl {
                    let k2 = k.strip_prefix("net.ipv4.").unwrap_or(k);
                    let ok = !k2.is_empty()
                        && k2.split('.').all(|part| {
                            !part.is_empty()
                                && part
                                    .bytes()
                                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                        });
                    if !ok {
                        return Err(err(
                            format!("{key}.sysctl.{k}"),
                            "invalid sysctl name: allowed a name under net.ipv4. such as tcp_sack or conf.all.rp_filter",
                        ));
                    }
                    sysctl.push((k2.to_string(), v.clone()));
                }
                if h.route.initcwnd == Some(0) || h.route.initrwnd == Some(0) {
                    return Err(err(
                        format!("{key}.route"),
                        "initcwnd and initrwnd are in segments: allowed 1 or more",
                    ));
                }
                if let Some(r) = h.route.rto_min {
                    if r < Dur::from_millis(1) || r > Dur::from_secs(120) {
                        return Err(err(
                            format!("{key}.route.rto_min"),
                            format!("{r}: allowed 1ms..120s"),
                        ));
                    }
                }
                hosts.push(Host {
                    name: member,
                    group: members.map(|_| (name.clone(), i as u32)),
                    side: h.side,
                    address,
                    mtu,
                    access_rate: rates[i],
                    access_delay: delays[i],
                    sysctl,
                    route: h.route.clone(),
                    tcp: match hosts.iter().find(|o| o.tcp_table == h.tcp && o.mtu == mtu) {
                        // Hosts usually share a few tables (a dumbbell's hundred senders one).
                        Some(o) => o.tcp.clone(),
                        None => tcp_config(name, &h.tcp, mtu)?,
                    },
                    tcp_table: h.tcp.clone(),
                    shared_window: None,
                });
            }
        }
        // Shared advertised windows, once every host (and so every peer) is known.
        for (e, (name, h)) in self.hosts.iter().enumerate() {
            let Some(sw) = &h.shared_window else { continue };
            let key = format!("hosts.{name}.shared_window");
            let (first, members) = entries[e];
            let others: Vec<&Host> = hosts.iter().filter(|o| o.side != h.side).collect();
            let peer = match &sw.peer {
                Some(p) => match hosts.iter().find(|o| o.name == *p) {
                    Some(o) if o.side != h.side => o,
                    Some(_) => {
                        return Err(err(
                            format!("{key}.peer"),
                            format!("{p:?} is on the {} side like {name:?}: the peer must be across the link", h.side),
                        ))
                    }
                    None => {
                        return Err(err(
                            format!("{key}.peer"),
                            format!(
                                "no host is called {p:?}; the hosts across the link are {}",
                                others.iter().map(|o| format!("{:?}", o.name)).collect::<Vec<_>>().join(", ")
                            ),
                        ))
                    }
                },
                None => match others.as_slice() {
                    [one] => *one,
                    [] => return Err(err(&key, "no host across the link to share a window with")),
                    _ => {
                        return Err(err(
                            format!("{key}.peer"),
                            format!(
                                "missing: {} hosts are across the link ({}); name the one whose connections share the window",
                                others.len(),
                                others.iter().map(|o| format!("{:?}", o.name)).collect::<Vec<_>>().join(", ")
                            ),
                        ))
                    }
                },
            };
            let peer = peer.address;
            for member in &mut hosts[first..first + members.unwrap_or(1)] {
                let mss = u64::from(member.tcp.adv_mss());
                if sw.size.0 < mss {
                    return Err(err(
                        format!("{key}.size"),
                        format!(
                            "{}: below one MSS of {name:?} ({mss} B), no segment could be sent; allowed {mss}B..=1GiB",
                            sw.size
                        ),
                    ));
                }
                if sw.size.0 > 1 << 30 {
                    return Err(err(
                        format!("{key}.size"),
                        format!("{}: allowed {mss}B..=1GiB", sw.size),
                    ));
                }
                member.shared_window = Some(SharedWindow {
                    peer,
                    size: sw.size.0,
                    enforce: sw.enforce.unwrap_or_default(),
                });
            }
        }
        let names = || {
            self.hosts
                .iter()
                .map(|(n, h)| match h.count {
                    Some(c) => format!("{n:?} (a group of {c})"),
                    None => format!("{n:?}"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut flows: Vec<Flow> = vec![];
        for (i, f) in self.flows.iter().enumerate() {
            let key = format!("flows[{i}]");
            // A name in `[hosts]` (a host or a group: its first host and its members), or one
            // group member by its own name.
            let find = |k: &str, n: &str| {
                self.hosts
                    .get_index_of(n)
                    .map(|e| entries[e])
                    .or_else(|| hosts.iter().position(|h| h.name == n).map(|h| (h, None)))
                    .ok_or_else(|| {
                        err(
                            format!("{key}.{k}"),
                            format!(
                                "no host or host group is called {n:?}; they are {}",
                                names()
                            ),
                        )
                    })
            };
            let (from0, from_n) = find("from", &f.from)?;
            let (to0, to_n) = find("to", &f.to)?;
            let members = match (from_n, to_n) {
                (Some(a), Some(b)) if a != b => {
                    return Err(err(
                        format!("{key}.to"),
                        format!(
                            "group {:?} has {b} members and group {:?} {a}: a flow between two groups pairs their members, so they must be as many",
                            f.to, f.from
                        ),
                    ))
                }
                (a, b) => a.or(b),
            };
            if hosts[from0].side == hosts[to0].side {
                return Err(err(
                    format!("{key}.to"),
                    format!(
                        "{:?} is on the {} side like {:?}: a flow must cross the link",
                        f.to, hosts[to0].side, f.from
                    ),
                ));
            }
            let starts: Vec<Option<Dur>> =
                per_member_opt(f.start.as_ref(), &format!("{key}.start"), members)?;
            for (m, start) in starts.into_iter().enumerate() {
                let from = from0 + if from_n.is_some() { m } else { 0 };
                let to = to0 + if to_n.is_some() { m } else { 0 };
                let start = start.unwrap_or(Dur::ZERO);
                if start >= self.duration {
                    return Err(err(
                        format!("{key}.start"),
                        format!(
                            "{start}{} is not before the end of the run ({})",
                            members.map_or(String::new(), |_| format!(" (member {m}'s)")),
                            self.duration
                        ),
                    ));
                }
                let index = flows.len();
                let port = match f.port {
                    Some(0) => return Err(err(format!("{key}.port"), "0: allowed 1..65535")),
                    Some(p) => p.checked_add(m as u16).ok_or_else(|| {
                        err(
                            format!("{key}.port"),
                            format!("{p}: member {m}'s port {p} + {m} is beyond 65535"),
                        )
                    })?,
                    None => u16::try_from(5000 + index).map_err(|_| {
                        err(format!("{key}.port"), "too many flows for default ports")
                    })?,
                };
                if let Some(o) = flows.iter().find(|o| o.to == to && o.port == port) {
                    return Err(err(
                        format!("{key}.port"),
                        format!(
                            "{port} on {:?} is already used by flow {} ({}): each flow needs its own",
                            hosts[to].name,
                            o.index,
                            o.spec_key()
                        ),
                    ));
                }
                let ctx = SpecCtx {
                    key: key.clone(),
                    client_mtu: hosts[from].mtu,
                    start,
                    run: self.duration,
                };
                let app = AppParams::parse(&f.kind, f.params.clone(), &ctx)?;
                let first_client_port = flows
                    .last()
                    .map_or(Some(lasthop_apps::FIRST_CLIENT_PORT), |p: &Flow| {
                        p.first_client_port.checked_add(p.app.client_ports())
                    })
                    .filter(|&p| p.checked_add(app.client_ports()).is_some())
                    .ok_or_else(|| {
                        err(
                            key.clone(),
                            "the run's flows need more client ports than 1024..65535 holds",
                        )
                    })?;
                let tcp_table = f.tcp.clone().unwrap_or_default();
                let tcp = match &f.tcp {
                    None => None,
                    Some(_) if !matches!(f.kind.as_str(), "thin" | "bulk") => {
                        return Err(err(
                            format!("{key}.tcp"),
                            format!(
                                "per-flow TCP options are for thin and bulk flows, not {:?}: set the host's tcp table (simulation) or sysctl (emulation) instead",
                                f.kind
                            ),
                        ))
                    }
                    Some(t) => Some(flow_tcp_config(&key, &hosts[from], t)?),
                };
                if let AppParams::Bulk(b) = &app {
                    // One place per socket option: bulk's own keys set both ends' sockets.
                    for (own, set, tk) in [
                        (
                            "congestion_control",
                            b.socket.congestion_control.is_some(),
                            "congestion_control",
                        ),
                        ("nodelay", b.socket.nodelay.is_some(), "nagle"),
                    ] {
                        if set && tcp_table.contains_key(tk) {
                            return Err(err(
                                format!("{key}.tcp.{tk}"),
                                format!("the flow also sets {own}: give the option once (tcp.{tk} acts on the sending end only, {own} on both ends)"),
                            ));
                        }
                    }
                }
                flows.push(Flow {
                    tcp_table,
                    tcp,
                    index,
                    spec: i,
                    member: members.map(|_| m as u32),
                    from,
                    to,
                    start,
                    port,
                    first_client_port,
                    app,
                });
            }
        }
        let middleboxes = self
            .middleboxes
            .iter()
            .enumerate()
            .map(|(i, t)| MiddleboxConfig::parse(t.clone(), &format!("middleboxes[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut middleboxes = middleboxes;
        for (i, m) in middleboxes.iter_mut().enumerate() {
            if let MiddleboxConfig::Rdb(c) = m {
                // The bundled senders: hosts or groups (all their members) by name.
                for n in &c.hosts {
                    let found: Vec<_> = hosts
                        .iter()
                        .filter(|h| h.name == *n || h.group.as_ref().is_some_and(|g| g.0 == *n))
                        .map(|h| std::net::IpAddr::V4(h.address))
                        .collect();
                    if found.is_empty() {
                        return Err(err(
                            format!("middleboxes[{i}].hosts"),
                            format!(
                                "no host or host group is called {n:?}; they are {}",
                                names()
                            ),
                        ));
                    }
                    c.senders.extend(found);
                }
            }
        }
        Ok(Scenario {
            middleboxes,
            name: self.name.clone().unwrap_or_else(|| "scenario".into()),
            description: self.description.clone(),
            seed: self.seed.unwrap_or(1),
            replication: self.replication.unwrap_or(0),
            duration: self.duration,
            link_path,
            link,
            log: self.log.unwrap_or_default(),
            hosts,
            flows,
        })
    }
}

impl Scenario {
    /// Reads and validates a scenario file (and the link spec it names).
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, SpecError> {
        let path = path.as_ref();
        let base = path.parent().unwrap_or(Path::new("."));
        load_file(path, |text| Scenario::from_str_in(text, base))
    }

    /// Parses and validates TOML text; the link path is relative to `base_dir`.
    pub fn from_str_in(text: &str, base_dir: &Path) -> Result<Scenario, SpecError> {
        ScenarioSpec::parse(text)?.validate(base_dir)
    }

    /// The link model of a run: the link spec's, with the scenario's middleboxes installed.
    /// Both modes build their link here.
    pub fn new_link(&self, seeds: lasthop_core::Seeds) -> lasthop_link::Link {
        let mut link = lasthop_link::Link::new(self.link.clone(), seeds, self.log);
        for m in &self.middleboxes {
            match m {
                MiddleboxConfig::RateControl(c) => {
                    let rate = self.link.dirs[c.data_dir.index()].per_state[0].base_rate;
                    lasthop_link::rate_control::install(&mut link, c, rate);
                }
                MiddleboxConfig::Rdb(c) => lasthop_link::rdb::install(&mut link, c),
            }
        }
        self.install_shared_windows(&mut link, SharedWindowAt::Router);
        link
    }

    /// The link model of an emulated run: [`Scenario::new_link`], and every host's shared
    /// advertised window as a middlebox at the router (real Linux has no such option, so
    /// `enforce = "receiver"` is enforced there too).
    pub fn new_emulated_link(&self, seeds: lasthop_core::Seeds) -> lasthop_link::Link {
        let mut link = self.new_link(seeds);
        self.install_shared_windows(&mut link, SharedWindowAt::Receiver);
        link
    }

    /// The router middleboxes of the shared windows whose `enforce` is `at`.
    fn install_shared_windows(&self, link: &mut lasthop_link::Link, at: SharedWindowAt) {
        for h in &self.hosts {
            let Some(sw) = h.shared_window.filter(|sw| sw.enforce == at) else {
                continue;
            };
            lasthop_link::shared_window::install(
                link,
                &lasthop_link::shared_window::SharedWindowConfig {
                    receiver: h.address,
                    peer: sw.peer,
                    size: sw.size,
                },
            );
        }
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// A short human description.
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {:?}: seed {}, replication {}, duration {}, log {:?}",
            self.name, self.seed, self.replication, self.duration, self.log
        );
        let _ = writeln!(s, "link {} ({})", self.link.name, self.link_path.display());
        for h in &self.hosts {
            let _ = write!(
                s,
                "host {} ({} side) {} mtu {}B",
                h.name, h.side, h.address, h.mtu
            );
            if let Some(sw) = h.shared_window {
                let _ = write!(
                    s,
                    " shared advertised window {} B with {} ({})",
                    sw.size,
                    sw.peer,
                    match sw.enforce {
                        SharedWindowAt::Receiver =>
                            "at the receiver in simulation, at the router in emulation",
                        SharedWindowAt::Router => "at the router",
                    }
                );
            }
            let _ = writeln!(s);
            if h.group.as_ref().is_some_and(|g| g.1 > 0) {
                continue; // a group's settings are its first member's
            }
            // Both modes' settings, each named with the mode that reads it (docs/modes.md).
            if !h.tcp_table.is_empty() {
                let keys: Vec<String> = h
                    .tcp_table
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let _ = writeln!(s, "  tcp (simulation: the TCP model): {}", keys.join(" "));
            }
            if !h.sysctl.is_empty() {
                let keys: Vec<String> = h.sysctl.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let _ = writeln!(
                    s,
                    "  sysctl (emulation: the host's Linux): {}",
                    keys.join(" ")
                );
            }
            if !h.route.is_empty() {
                let keys: Vec<String> = [
                    ("initcwnd", h.route.initcwnd.map(|x| x.to_string())),
                    ("initrwnd", h.route.initrwnd.map(|x| x.to_string())),
                    ("rto_min", h.route.rto_min.map(|x| x.to_string())),
                    ("quickack", h.route.quickack.map(|x| x.to_string())),
                ]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
                .collect();
                let _ = writeln!(
                    s,
                    "  route (emulation: the host's Linux): {}",
                    keys.join(" ")
                );
            }
        }
        for m in &self.middleboxes {
            let _ = writeln!(s, "middlebox: {}", m.describe());
        }
        for f in &self.flows {
            let _ = writeln!(
                s,
                "flow {}: {} {} -> {}:{} at {}",
                f.index,
                f.app.describe(),
                self.hosts[f.from].name,
                self.hosts[f.to].address,
                f.port,
                f.start
            );
            if !f.tcp_table.is_empty() {
                let keys: Vec<String> = f
                    .tcp_table
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let _ = writeln!(s, "  tcp options of its client sockets: {}", keys.join(" "));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with_link() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("l.toml"),
            "mtu = \"576B\"\n[both]\nrate = \"64kbit\"\ndelay = \"300ms\"\n",
        )
        .unwrap();
        d
    }

    const BASE: &str = r#"
name = "t"
duration = "30s"
link = "l.toml"
[hosts.server]
side = "fixed"
[hosts.server.sysctl]
tcp_sack = 1
tcp_congestion_control = "reno"
tcp_timestamps = false
[hosts.server.route]
initcwnd = 2
rto_min = "200ms"
[hosts.mobile]
side = "mobile"
[[flows]]
kind = "bulk"
from = "server"
to = "mobile"
bytes = 188640
rcvbuf = "64KiB"
"#;

    #[test]
    fn loads_and_resolves() {
        let d = dir_with_link();
        let s = Scenario::from_str_in(BASE, d.path()).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.hosts[0].address, Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(s.hosts[1].address, Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(s.hosts[0].mtu, 576);
        assert_eq!(s.hosts[0].sysctl[2].1.to_proc(), "0");
        assert_eq!(s.flows[0].port, 5000);
        let lasthop_apps::AppParams::Bulk(b) = &s.flows[0].app else {
            panic!("a bulk flow")
        };
        assert_eq!(b.socket.rcvbuf, Some(65536));
        assert_eq!(b.bytes, 188640);
        assert_eq!(s.hosts[0].route.rto_min, Some(Dur::from_millis(200)));
    }

    #[test]
    fn rdb_middlebox_resolves_its_hosts() {
        let d = dir_with_link();
        let text = format!(
            "{BASE}[hosts.t]\nside = \"fixed\"\ncount = 2\n[[middleboxes]]\nkind = \"rdb\"\nhosts = [\"server\", \"t\"]\npif_limit = 4\n"
        );
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        let MiddleboxConfig::Rdb(c) = &s.middleboxes[0] else {
            panic!("an rdb middlebox")
        };
        // server, then the group t's two members t0 and t1 (fixed side: 198.18.0.2, .3).
        let a = |x: u8| std::net::IpAddr::V4(Ipv4Addr::new(198, 18, 0, x));
        assert_eq!(c.senders, [a(1), a(2), a(3)]);
        let e = error_of(&text.replace("[\"server\", \"t\"]", "[\"nobody\"]"));
        assert_eq!(e.key, "middleboxes[0].hosts", "{e}");
        assert!(e.message.contains("\"nobody\""), "{e}");
        let e = error_of(&format!("{BASE}[[middleboxes]]\nkind = \"rdbx\"\n"));
        assert!(e.message.contains("rate_control, rdb"), "{e}");
    }

    #[test]
    fn flow_tcp_tables_become_socket_options_or_name_the_key() {
        let d = dir_with_link();
        let thin = "[[flows]]\nkind = \"thin\"\nfrom = \"server\"\nto = \"mobile\"\npayload = 100\nitt = 30\nduration = \"10s\"\n";
        let text = format!("{BASE}{thin}tcp = {{ nagle = false, thin_dupack = true }}\n");
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        let o = s.flows[1].socket_options().unwrap();
        assert_eq!((o.nodelay, o.thin_dupack), (Some(true), Some(true)));
        assert!(s
            .describe()
            .contains("tcp options of its client sockets: nagle=false thin_dupack=true"));
        // The bulk flow without a table has none.
        assert_eq!(
            s.flows[0].socket_options().unwrap(),
            SocketOptions::default()
        );
        // A model key Linux has no socket option for: fine in simulation, an error for emulation.
        let text = format!("{BASE}{thin}tcp = {{ delayed_ack = \"off\" }}\n");
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        assert!(!s.flows[1]
            .tcp
            .as_ref()
            .unwrap()
            .delayed_ack
            .eq(&s.hosts[0].tcp.delayed_ack));
        let e = s.flows[1].socket_options().unwrap_err();
        assert_eq!(e.key, "flows[1].tcp.delayed_ack", "{e}");
        assert!(e.message.contains("set it on the host"), "{e}");
    }

    fn error_of(text: &str) -> SpecError {
        let d = dir_with_link();
        Scenario::from_str_in(text, d.path()).unwrap_err()
    }

    #[test]
    fn a_name_that_is_a_path_is_refused() {
        // The name becomes the default output directory, results/<name>: an absolute path or a
        // climb with ../ would put the results outside the working directory.
        for bad in ["/tmp/x", "../../../x", "..", ".hidden", "-x", "a/b"] {
            let e = error_of(&BASE.replace("name = \"t\"", &format!("name = {bad:?}")));
            assert_eq!(e.key, "name", "{bad}: {e}");
            assert!(
                e.message
                    .contains(&format!("invalid scenario name {bad:?}"))
                    && e.message
                        .contains("allowed 1 to 64 of a-z, A-Z, 0-9, '_', '-' and '.'"),
                "{e}"
            );
        }
        let d = dir_with_link();
        let s = Scenario::from_str_in(
            &BASE.replace("name = \"t\"", "name = \"seed000-e0.v2\""),
            d.path(),
        )
        .unwrap();
        assert_eq!(s.name, "seed000-e0.v2");
    }

    #[test]
    fn host_names_may_not_start_with_a_dash() {
        // A host's name starts hosts.csv's rows and names its capture file `<host>.pcap`.
        let e = error_of(
            &BASE
                .replace("[hosts.mobile]", "[hosts.-mobile]")
                .replace("to = \"mobile\"", "to = \"-mobile\""),
        );
        assert_eq!(e.key, "hosts.-mobile", "{e}");
        assert!(e.message.contains("not starting with '-'"), "{e}");
    }

    #[test]
    fn errors_name_key_and_value() {
        let e = error_of(&BASE.replace("bytes = 188640", "bytes = 188640\nbogus = 1"));
        assert_eq!(e.key, "flows[0].bogus", "{e}");
        assert!(e.message.contains("bogus"), "{e}");

        let e = error_of(&BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naddress = \"10.0.0.1\"",
        ));
        assert_eq!(e.key, "hosts.mobile.address");
        assert!(
            e.message.contains("10.0.0.1") && e.message.contains("198.18.0.0/15"),
            "{e}"
        );

        let e = error_of(&BASE.replace("to = \"mobile\"", "to = \"nobody\""));
        assert_eq!(e.key, "flows[0].to");
        assert!(
            e.message.contains("\"nobody\"") && e.message.contains("\"mobile\""),
            "{e}"
        );

        let e = error_of(&BASE.replace("side = \"mobile\"", "side = \"wireless\""));
        assert_eq!(e.key, "hosts.mobile.side", "{e}");
        assert!(
            e.message.contains("wireless") && e.message.contains("fixed"),
            "{e}"
        );

        let e = error_of(&BASE.replace("duration = \"30s\"", "duration = 30"));
        assert_eq!(e.key, "duration", "{e}");

        let e = error_of(&BASE.replace("link = \"l.toml\"", "link = \"missing.toml\""));
        assert_eq!(e.key, "link", "{e}");
        assert!(e.message.contains("missing.toml"), "{e}");

        let e = error_of(&BASE.replace("rto_min = \"200ms\"", "rto_min = \"200ms\"\ncwnd = 3"));
        assert_eq!(e.key, "hosts.server.route.cwnd", "{e}");
        assert!(e.message.contains("initcwnd"), "{e}");

        let e = error_of(&BASE.replace("side = \"mobile\"", "side = \"fixed\""));
        assert_eq!(e.key, "flows[0].to", "{e}");
        assert!(e.message.contains("cross the link"), "{e}");

        // Applications: an unknown kind lists the kinds; each kind checks its own keys.
        let e = error_of(&BASE.replace("kind = \"bulk\"", "kind = \"ftp\""));
        assert_eq!(e.key, "flows[0].kind", "{e}");
        assert!(
            e.message.contains("\"ftp\"") && e.message.contains("bulk, cbr, http"),
            "{e}"
        );
        let e = error_of(&BASE.replace("kind = \"bulk\"", "kind = \"cbr\""));
        assert_eq!(e.key, "flows[0].bytes", "a bulk key is not a cbr key: {e}");
        let cbr = "[[flows]]\nkind = \"cbr\"\nfrom = \"server\"\nto = \"mobile\"\ninterval = \"128ms\"\nduration = \"10s\"\n";
        // The link's MTU is 576 B: at most 548 B of UDP payload.
        let e = error_of(&format!("{BASE}{cbr}payload = \"549B\"\n"));
        assert_eq!(e.key, "flows[1].payload", "{e}");
        assert!(e.message.contains("548"), "{e}");
        let ok = Scenario::from_str_in(
            &format!("{BASE}{cbr}payload = \"548B\"\n"),
            dir_with_link().path(),
        )
        .unwrap();
        assert_eq!(ok.flows[1].kind(), "cbr");
        assert_eq!(ok.flows[1].port, 5001);
    }

    /// Seed 001's shared advertised window: the pool must hold one segment (the link's MTU is
    /// 576 B here, so the mobile host's MSS is 536 B), the peer is across the link.
    #[test]
    fn shared_window_is_checked_and_resolved() {
        let with =
            |t: &str| BASE.replace("side = \"mobile\"\n", &format!("side = \"mobile\"\n{t}\n"));
        let s = Scenario::from_str_in(
            &with("shared_window = { size = \"2KiB\" }"),
            dir_with_link().path(),
        )
        .unwrap();
        assert_eq!(
            s.hosts[1].shared_window,
            Some(SharedWindow {
                peer: Ipv4Addr::new(198, 18, 0, 1),
                size: 2048,
                enforce: SharedWindowAt::Receiver
            }),
            "the one host across the link is the peer"
        );
        assert!(s
            .describe()
            .contains("shared advertised window 2048 B with 198.18.0.1"));
        for (t, key, says) in [
            (
                "shared_window = { size = \"0B\" }",
                "hosts.mobile.shared_window.size",
                "below one MSS",
            ),
            (
                "shared_window = { size = \"535B\" }",
                "hosts.mobile.shared_window.size",
                "allowed 536B..=1GiB",
            ),
            (
                "shared_window = { size = \"-2048B\" }",
                "hosts.mobile.shared_window.size",
                "-2048B",
            ),
            (
                "shared_window = { size = \"2GiB\" }",
                "hosts.mobile.shared_window.size",
                "allowed 536B..=1GiB",
            ),
            (
                "shared_window = { size = \"2KiB\", peer = \"nobody\" }",
                "hosts.mobile.shared_window.peer",
                "\"server\"",
            ),
            (
                "shared_window = { size = \"2KiB\", peer = \"mobile\" }",
                "hosts.mobile.shared_window.peer",
                "across the link",
            ),
            (
                "shared_window = { size = \"2KiB\", enforce = \"sender\" }",
                "hosts.mobile.shared_window.enforce",
                "receiver",
            ),
            (
                "shared_window = { bytes = 2048 }",
                "hosts.mobile.shared_window.bytes",
                "size",
            ),
        ] {
            let e = error_of(&with(t));
            assert_eq!(e.key, key, "{t}: {e}");
            assert!(e.message.contains(says), "{t}: {e}");
        }
        // Two hosts across the link: the peer must be named.
        let two = with("shared_window = { size = \"2KiB\" }").replace(
            "[hosts.mobile]",
            "[hosts.other]\nside = \"fixed\"\n[hosts.mobile]",
        );
        let e = error_of(&two);
        assert_eq!(e.key, "hosts.mobile.shared_window.peer", "{e}");
        assert!(e.message.contains("\"server\", \"other\""), "{e}");
    }

    #[test]
    fn explicit_addresses_and_mtu() {
        let d = dir_with_link();
        let text = BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naddress = \"198.19.7.9\"\nmtu = \"1500B\"\naccess_rate = \"10Mbit\"\naccess_delay = \"1ms\"",
        );
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        assert_eq!(s.hosts[1].address, Ipv4Addr::new(198, 19, 7, 9));
        assert_eq!(s.hosts[1].mtu, 1500);
        assert_eq!(s.hosts[1].access_rate, Some(Rate(10_000_000)));
        let dup = BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naddress = \"198.18.0.1\"",
        );
        let e = Scenario::from_str_in(&dup, d.path()).unwrap_err();
        assert!(e.message.contains("server"), "{e}");
    }

    const GROUPS: &str = r#"
duration = "10s"
link = "l.toml"
[hosts.s]
side = "fixed"
count = 10
access_rate = "150Mbit"
access_delay = { groups = ["5.01ms", "10ms", "15ms", "25ms"] }
[hosts.r]
side = "mobile"
count = 10
[[flows]]
kind = "bulk"
from = "s"
to = "r"
bytes = 10240
start = { groups = ["0s", "250ms"] }
"#;

    #[test]
    fn host_groups_expand_with_values_per_member() {
        let d = dir_with_link();
        let s = Scenario::from_str_in(GROUPS, d.path()).unwrap();
        assert_eq!(s.hosts.len(), 20);
        assert_eq!(s.hosts[0].name, "s0");
        assert_eq!(s.hosts[9].name, "s9");
        assert_eq!(s.hosts[10].name, "r0");
        assert_eq!(s.hosts[3].group, Some(("s".to_string(), 3)));
        assert_eq!(s.hosts[9].address, Ipv4Addr::new(198, 18, 0, 10));
        assert_eq!(s.hosts[19].address, Ipv4Addr::new(198, 19, 0, 10));
        // 10 members in 4 groups: 3, 3, 2, 2 (the first groups one larger).
        let ms = |h: &Host| h.access_delay.unwrap().as_nanos() / 10_000;
        let delays: Vec<u64> = s.hosts[..10].iter().map(ms).collect();
        assert_eq!(
            delays,
            [501, 501, 501, 1000, 1000, 1000, 1500, 1500, 2500, 2500]
        );
        assert!(s.hosts[..10]
            .iter()
            .all(|h| h.access_rate == Some(Rate(150_000_000))));
        assert_eq!(s.hosts[10].access_delay, None);
        // One flow per member: s_i -> r_i, default ports 5000 + i, starts by group of 5.
        assert_eq!(s.flows.len(), 10);
        for (i, f) in s.flows.iter().enumerate() {
            assert_eq!((f.from, f.to, f.port), (i, 10 + i, 5000 + i as u16));
            assert_eq!(f.spec, 0);
            assert_eq!(f.member, Some(i as u32));
            let want = if i < 5 { 0 } else { 250 };
            assert_eq!(f.start, Dur::from_millis(want), "flow {i}");
        }
        assert_eq!(s.flows[7].spec_key(), "flows[0] member 7");
        // A list gives one value per member; an explicit port is member 0's.
        let list = GROUPS.replace(
            r#"start = { groups = ["0s", "250ms"] }"#,
            r#"start = ["0s", "1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s"]
port = 6000"#,
        );
        let s = Scenario::from_str_in(&list, d.path()).unwrap();
        assert_eq!(s.flows[9].start, Dur::from_secs(9));
        assert_eq!(s.flows[9].port, 6009);
        // A group to one host: every member's flow goes to it, each on its own port.
        let one = GROUPS.replace(
            "[hosts.r]\nside = \"mobile\"\ncount = 10",
            "[hosts.r]\nside = \"mobile\"",
        );
        let s = Scenario::from_str_in(&one, d.path()).unwrap();
        assert_eq!(s.hosts.len(), 11);
        assert!(s.flows.iter().all(|f| f.to == 10));
        assert_eq!(s.flows[3].port, 5003);
        // A member can be named on its own.
        let single = GROUPS
            .replace("from = \"s\"\nto = \"r\"", "from = \"s4\"\nto = \"r7\"")
            .replace(r#"start = { groups = ["0s", "250ms"] }"#, "");
        let s = Scenario::from_str_in(&single, d.path()).unwrap();
        assert_eq!((s.flows.len(), s.flows[0].from, s.flows[0].to), (1, 4, 17));
    }

    #[test]
    fn host_group_errors_name_the_key() {
        let e = error_of(&GROUPS.replace("count = 10\naccess_rate", "count = 0\naccess_rate"));
        assert_eq!(e.key, "hosts.s.count", "{e}");
        assert!(e.message.contains("1 or more"), "{e}");
        let e = error_of(&GROUPS.replace("count = 10\naccess_rate", "count = 300\naccess_rate"));
        assert_eq!(e.key, "hosts.s.count", "{e}");
        assert!(e.message.contains("1..254"), "{e}");
        let e = error_of(&GROUPS.replace(
            r#"{ groups = ["5.01ms", "10ms", "15ms", "25ms"] }"#,
            r#"["1ms", "2ms", "3ms"]"#,
        ));
        assert_eq!(e.key, "hosts.s.access_delay", "{e}");
        assert!(e.message.contains("3 values for 10 members"), "{e}");
        let e = error_of(&GROUPS.replace(r#""10ms", "15ms""#, r#""10ms", "fast""#));
        assert_eq!(e.key, "hosts.s.access_delay.groups[2]", "{e}");
        let e = error_of(&GROUPS.replace(
            "[hosts.r]\nside = \"mobile\"\ncount = 10",
            "[hosts.r]\nside = \"mobile\"\ncount = 9",
        ));
        assert_eq!(e.key, "flows[0].to", "{e}");
        assert!(
            e.message.contains("9 members") && e.message.contains("as many"),
            "{e}"
        );
        // A list for a single host.
        let e = error_of(&BASE.replace(
            "side = \"mobile\"",
            "side = \"mobile\"\naccess_delay = [\"1ms\"]",
        ));
        assert_eq!(e.key, "hosts.mobile.access_delay", "{e}");
        assert!(e.message.contains("host group"), "{e}");
        // A member name taken by another host.
        let e = error_of(&format!("{GROUPS}[hosts.s3]\nside = \"fixed\"\n"));
        assert!(e.message.contains("\"s3\" is defined twice"), "{e}");
        // A start per member past the run's end names the member.
        let e = error_of(&GROUPS.replace(r#""250ms""#, r#""10s""#));
        assert_eq!(e.key, "flows[0].start", "{e}");
        assert!(e.message.contains("member 5"), "{e}");
    }

    #[test]
    fn link_set_puts_values_over_the_link_spec() {
        let d = dir_with_link();
        let text = BASE.replace(
            "link = \"l.toml\"",
            "link = \"l.toml\"\nlink_set = { down = { rate = \"128kbit\", queue = { packets = 7 } } }",
        );
        let s = Scenario::from_str_in(&text, d.path()).unwrap();
        let (down, up) = (
            &s.link.dirs[Dir::Down.index()],
            &s.link.dirs[Dir::Up.index()],
        );
        assert_eq!(down.per_state[0].base_rate, Rate(128_000));
        assert_eq!(
            up.per_state[0].base_rate,
            Rate(64_000),
            "the file's rate stays up"
        );
        assert_eq!(down.per_state[0].delay, Dur::from_millis(300));
        assert_eq!(down.queue.packets, Some(7));
        assert_eq!(s.link.mtu, Some(576));
        // A bad value names the link and link_set.
        let e = error_of(&BASE.replace(
            "link = \"l.toml\"",
            "link = \"l.toml\"\nlink_set = { down = { rate = \"0kbit\" } }",
        ));
        assert_eq!(e.key, "link", "{e}");
        assert!(
            e.message.contains("with link_set") && e.message.contains("rate"),
            "{e}"
        );
    }
}
