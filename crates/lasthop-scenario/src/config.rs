//! The resolved scenario both drivers run: hosts with their addresses, MTUs and TCP model
//! configurations, flows with their applications and ports, the link and the middleboxes.
//! What [`crate::validate`] makes of a [`crate::schema::ScenarioSpec`].

use crate::schema::{RouteOptions, SharedWindowAt, Side, SysctlValue};
use lasthop_apps::{AppParams, FlowCtx, SocketOptions};
use lasthop_core::spec::SpecError;
use lasthop_core::{Dur, Rate};
use lasthop_link::rate_control::RateControlConfig;
use lasthop_link::rdb::RdbConfig;
use lasthop_link::{LinkConfig, LogLevel};
use lasthop_tcp::TcpConfig;
use std::net::Ipv4Addr;
use std::path::PathBuf;

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
    /// `clock_phase` as given (absent: each host's own).
    pub clock_phase: Option<ClockPhase>,
}

/// Where the hosts' jiffies clocks stand at the run's time 0 (simulation): the TCP model's timer
/// wheel (`tcp.timer_wheel`, on in the 6.18 profile) fires on their bucket boundaries, and
/// its receiver counts ato in their ticks, so two hosts at different phases fire the same
/// timeout up to a jiffy apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockPhase {
    /// Each host a kernel of its own, booted at its own time (the default): one phase per
    /// host and replication, drawn from the seed (stream `tcp.clock_phase`).
    PerHost,
    /// The hosts on one kernel, as the emulator's namespaces are: one phase per replication,
    /// drawn from the seed, for every host.
    Shared,
    /// One kernel whose jiffies stand at this phase at time 0 (a timer bucket boundary falls
    /// wherever run time + phase is a whole number of buckets).
    Given(Dur),
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
}

/// The range every host address must lie in (RFC 2544's benchmarking range).
pub const NET: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 15);

pub fn in_bench_range(a: Ipv4Addr) -> bool {
    u32::from(a) >> (32 - NET.1) == u32::from(NET.0) >> (32 - NET.1)
}

impl Scenario {
    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// Simulation: whether every host's and flow's TCP model has `has` (the RTO inference
    /// asks whether all run RACK, or send tail loss probes).
    pub fn all_tcp(&self, has: impl Fn(&TcpConfig) -> bool) -> bool {
        self.hosts
            .iter()
            .map(|h| &h.tcp)
            .chain(self.flows.iter().filter_map(|f| f.tcp.as_ref()))
            .all(has)
    }
}
