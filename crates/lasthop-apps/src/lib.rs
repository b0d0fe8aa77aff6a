//! `lasthop-apps`: the workloads. An application is a pair of sans-IO state machines, one per
//! end of a flow ([`Endpoint`]), driven with `now` like the link and TCP cores, over the
//! socket-like API of the host it runs on ([`Net`], [`SockEvent`]). The simulator drives them
//! over its TCP model and UDP sockets; in emulation each application runs as a real program
//! (`lasthop app ...`) inside the host namespaces.
//!
//! A scenario names an application by `kind` with its own parameters, validated here
//! ([`AppParams::parse`]). Each application is one module ([`bulk`], [`cbr`]) holding its
//! parameters, its model endpoints and its real programs' command lines; its metrics are
//! computed from the captures by `lasthop-analysis`. Adding one: a module here, a variant of
//! [`AppParams`], its name in [`KINDS`].

pub mod bulk;
pub mod cbr;
pub mod http;
pub mod ping;
pub mod repeat;
pub mod sink;
pub mod socket;
pub mod thin;

use lasthop_core::spec::{err, SpecError};
use lasthop_core::{Dur, Time};
use std::net::Ipv4Addr;

pub use socket::{Net, SockEvent, SockId, SocketOptions};

/// The application kinds a scenario may name.
pub const KINDS: [&str; 6] = ["bulk", "cbr", "http", "ping", "repeat", "thin"];

/// First local port of the client ends (Linux 2.4's `ip_local_port_range` starts at 1024; seed
/// 000 lists it). Each flow has its own block of client ports, in flow order, as many as its
/// application opens connections or sockets ([`AppParams::client_ports`]): with one each, flow
/// `i` sends from port 1024 + i. Ports are unique in a run.
pub const FIRST_CLIENT_PORT: u16 = 1024;

/// One end of an application on one host.
pub trait Endpoint {
    /// The end starts: the server end at time 0, the client end at the flow's start.
    fn start(&mut self, now: Time, net: &mut dyn Net);
    /// A socket event for one of this end's sockets.
    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net);
    /// When this end wants [`Endpoint::handle_timeout`] next.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _now: Time, _net: &mut dyn Net) {}
    fn status(&self) -> Status;
    /// Adds what this end saw to the flow's report.
    fn report(&self, r: &mut FlowReport);
}

/// Where an end stands. A flow is finished when both ends are done, or when either aborted
/// (the other may never learn of it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Running,
    Done,
    Aborted,
}

/// What the two ends of one flow saw, as the application layer sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowReport {
    pub flow: usize,
    pub kind: &'static str,
    pub from: String,
    pub to: String,
    /// Payload bytes the client had to deliver (for a stream: what it sent).
    pub bytes: u64,
    /// Whether every byte must arrive (a TCP transfer) or losses are part of the service (UDP).
    pub reliable: bool,
    /// The client started (called connect, or sent its first datagram).
    pub start: Option<Time>,
    pub connected: Option<Time>,
    pub first_byte: Option<Time>,
    /// The server had every byte (reliable flows), or its last datagram arrived.
    pub last_byte: Option<Time>,
    /// The server's end closed (or stopped listening).
    pub end: Option<Time>,
    pub delivered: u64,
    pub aborted: Option<String>,
}

/// Where a flow runs, for building its endpoints.
#[derive(Clone, Debug)]
pub struct FlowCtx {
    /// Position in the scenario's `[[flows]]`, from 0.
    pub index: usize,
    /// The client end's host address.
    pub client: Ipv4Addr,
    /// The server end's host address and port.
    pub server: Ipv4Addr,
    pub port: u16,
    /// When the client end starts.
    pub start: Dur,
    /// The first of the flow's client ports.
    pub first_client_port: u16,
    /// The run's random streams (an application draws from `app.<kind>.<flow>`).
    pub seeds: lasthop_core::Seeds,
}

impl FlowCtx {
    /// The client end's (first) local port.
    pub fn client_port(&self) -> u16 {
        self.first_client_port
    }
}

/// What validating an application's parameters needs to know of its place in the scenario.
#[derive(Clone, Debug)]
pub struct SpecCtx {
    /// The flow's key in the scenario (`flows[2]`), the prefix of every error.
    pub key: String,
    /// The client host's interface MTU.
    pub client_mtu: u32,
    /// The flow's start and the run's length.
    pub start: Dur,
    pub run: Dur,
}

/// An application with its validated parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum AppParams {
    Bulk(bulk::Params),
    Cbr(cbr::Params),
    Http(http::Params),
    Ping(ping::Params),
    Repeat(repeat::Params),
    Thin(thin::Params),
}

impl AppParams {
    /// Validates the parameters of an application of kind `kind` (the flow's keys other than
    /// `kind`, `from`, `to`, `start` and `port`).
    pub fn parse(kind: &str, params: toml::Table, ctx: &SpecCtx) -> Result<AppParams, SpecError> {
        match kind {
            "bulk" => bulk::Params::parse(params, ctx).map(AppParams::Bulk),
            "cbr" => cbr::Params::parse(params, ctx).map(AppParams::Cbr),
            "http" => http::Params::parse(params, ctx).map(AppParams::Http),
            "ping" => ping::Params::parse(params, ctx).map(AppParams::Ping),
            "repeat" => repeat::Params::parse(params, ctx).map(AppParams::Repeat),
            "thin" => thin::Params::parse(params, ctx).map(AppParams::Thin),
            other => Err(err(
                format!("{}.kind", ctx.key),
                format!(
                    "unknown application kind {other:?}: the kinds are {}",
                    KINDS.join(", ")
                ),
            )),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            AppParams::Bulk(_) => "bulk",
            AppParams::Cbr(_) => "cbr",
            AppParams::Http(_) => "http",
            AppParams::Ping(_) => "ping",
            AppParams::Repeat(_) => "repeat",
            AppParams::Thin(_) => "thin",
        }
    }

    /// How many client ports the flow uses (one per connection a page opens).
    pub fn client_ports(&self) -> u16 {
        match self {
            AppParams::Http(p) => p.client_ports(),
            AppParams::Repeat(p) => p.client_ports(),
            AppParams::Thin(p) => p.client_ports(),
            AppParams::Bulk(_) | AppParams::Cbr(_) | AppParams::Ping(_) => 1,
        }
    }

    /// The flow's two model ends: `[server, client]`.
    pub fn endpoints(&self, f: &FlowCtx) -> [Box<dyn Endpoint>; 2] {
        match self {
            AppParams::Bulk(p) => [
                Box::new(bulk::Receiver::new(p, f)),
                Box::new(bulk::Sender::new(p, f)),
            ],
            AppParams::Cbr(p) => [
                Box::new(cbr::Receiver::new(p, f)),
                Box::new(cbr::Sender::new(p, f)),
            ],
            AppParams::Http(p) => [
                Box::new(http::Server::new(p, f)),
                Box::new(http::Client::new(p, f)),
            ],
            AppParams::Ping(p) => [Box::new(ping::Answerer), Box::new(ping::Prober::new(p, f))],
            AppParams::Repeat(p) => [
                Box::new(sink::Sink::new(f)),
                Box::new(repeat::Client::new(p, f)),
            ],
            AppParams::Thin(p) => [
                Box::new(sink::Sink::new(f)),
                Box::new(thin::Client::new(p, f)),
            ],
        }
    }

    /// A one-line description (`188640 B` for a bulk transfer, `cbr 512 B every 128ms for 180s`).
    pub fn describe(&self) -> String {
        match self {
            AppParams::Bulk(p) if p.bytes == bulk::UNLIMITED => "greedy (unlimited bytes)".into(),
            AppParams::Bulk(p) => format!("{} B", p.bytes),
            AppParams::Cbr(p) => format!(
                "cbr {} B every {} for {}",
                p.payload, p.interval, p.duration
            ),
            AppParams::Http(p) => p.describe(),
            AppParams::Ping(p) => p.describe(),
            AppParams::Repeat(p) => p.describe(),
            AppParams::Thin(p) => p.describe(),
        }
    }

    /// The real programs of the flow in emulation, as `lasthop app` arguments: `[server,
    /// client]`. The server is started first and says `ready` when it listens.
    pub fn programs(
        &self,
        f: &FlowCtx,
        epoch: u64,
        logs: [&std::path::Path; 2],
    ) -> [Vec<String>; 2] {
        match self {
            AppParams::Bulk(p) => p.programs(f, epoch, logs),
            AppParams::Cbr(p) => p.programs(f, epoch, logs),
            AppParams::Http(p) => p.programs(f, epoch, logs),
            AppParams::Ping(p) => p.programs(f, epoch, logs),
            AppParams::Repeat(p) => p.programs(f, epoch, logs),
            AppParams::Thin(p) => p.programs(f, epoch, logs),
        }
    }
}
