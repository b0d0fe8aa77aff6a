//! One run's analysis, in one place for both modes: every host's packet records (what its
//! capture holds) and the link's event log become the run's tables ([`RunAnalysis`]).
//!
//! The records come either as they are produced ([`RunSink`]: the simulator hands every
//! captured packet and every link event over in-process, so no capture needs to be on disk) or
//! from the capture files and `events.csv` afterwards ([`analyse_run`]: the emulator, and
//! `lasthop analyze`). Both feed the same per-host analysers in the same order, so the tables
//! are the same, byte for byte once written.

use crate::capture::{self, TcpSeg};
use crate::conn::{self, Analyzer, ConnStats, Options};
use crate::events::{EventLog, EventLogBuilder};
use crate::latency::{self, CaptureLog};
use crate::page::{self, PageSpec};
use crate::udp::{self, Datagram, UdpDrops};
use crate::{merge_sides, Capture, Error, RunAnalysis};
use lasthop_core::output::DEFAULT_SNAPLEN;
use lasthop_core::{FlowKey, Packet, Time};
use lasthop_link::event::{Event, EventKind, RowCause, RowKind};
use rustc_hash::FxHashMap;
use std::net::IpAddr;
use std::path::Path;

/// What a run's analysis computes beyond its connections and UDP flows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnalysisOptions {
    /// The pages of the scenario's `http` flows (`pages.csv`, `page_objects.csv`).
    pub pages: Vec<PageSpec>,
    /// Seed 003's stream analysis of every TCP stream (`streams.csv`, `latency.csv`).
    pub streams: bool,
    /// Keep what the event log says of the router queue and the serializer
    /// ([`RunAnalysis::link_samples`], the run metrics' utilisation and queue statistics).
    pub link_samples: bool,
    /// The scenario's flows, which name the rows of `connections.csv` and `udp_flows.csv`.
    pub flows: Vec<FlowId>,
    /// The RTO inference's [`Options::rack`]: every host's TCP runs RACK.
    pub rack: bool,
    /// The RTO inference's [`Options::tlp`]: every host's TCP sends tail loss probes.
    pub tlp: bool,
    /// The RTO inference's [`Options::delayed_er`]: some host's TCP has a delayed early
    /// retransmit.
    pub delayed_er: bool,
}

/// A scenario flow as the run's tables name it (`flow_index`, `flow_name` and the hosts'
/// names): found by its client's address, its server's address and the server's port, which
/// both modes share (client ports differ: the simulator's are 1024 + i, the emulator's
/// ephemeral).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowId {
    /// Position among the run's flows, from 0 (`lasthop_scenario::Flow::index`).
    pub index: usize,
    /// Where the flow was written: `flows[2]`, or `flows[2]#7` for member 7 of a group's flow.
    pub name: String,
    pub client: IpAddr,
    pub server: IpAddr,
    pub port: u16,
    pub client_host: String,
    pub server_host: String,
}

impl FlowId {
    /// The scenario's flows.
    pub fn of_scenario(scenario: &lasthop_scenario::Scenario) -> Vec<FlowId> {
        scenario
            .flows
            .iter()
            .map(|f| FlowId {
                index: f.index,
                name: match f.member {
                    None => format!("flows[{}]", f.spec),
                    Some(m) => format!("flows[{}]#{m}", f.spec),
                },
                client: IpAddr::V4(scenario.hosts[f.from].address),
                server: IpAddr::V4(scenario.hosts[f.to].address),
                port: f.port,
                client_host: scenario.hosts[f.from].name.clone(),
                server_host: scenario.hosts[f.to].name.clone(),
            })
            .collect()
    }

    /// The flow of a connection or datagram flow from `client` to `server` (either way round
    /// for a datagram flow whose server sends), if one is.
    pub fn find(
        flows: &[FlowId],
        client: std::net::SocketAddr,
        server: std::net::SocketAddr,
    ) -> Option<&FlowId> {
        let is = |f: &&FlowId, c: std::net::SocketAddr, s: std::net::SocketAddr| {
            f.client == c.ip() && f.server == s.ip() && f.port == s.port()
        };
        flows
            .iter()
            .find(|f| is(f, client, server))
            .or_else(|| flows.iter().find(|f| is(f, server, client)))
    }
}

impl AnalysisOptions {
    /// What the scenario asks for: the pages of its `http` flows, the stream analysis when it
    /// has `thin` flows (both modes: the emulator's real programs use the same client ports).
    pub fn for_scenario(scenario: &lasthop_scenario::Scenario) -> AnalysisOptions {
        AnalysisOptions {
            pages: scenario
                .flows
                .iter()
                .filter_map(|f| match &f.app {
                    lasthop_apps::AppParams::Http(p) => Some(PageSpec::of(&f.ctx(scenario), p)),
                    _ => None,
                })
                .collect(),
            streams: scenario.flows.iter().any(|f| f.kind() == "thin"),
            link_samples: false,
            flows: FlowId::of_scenario(scenario),
            // Simulation: the hosts' and flows' TCP. Emulation sets it (real Linux 4.18+).
            rack: scenario.all_tcp(|c| c.rack && c.sack),
            tlp: scenario.all_tcp(|c| c.tlp && c.sack),
            delayed_er: !scenario.all_tcp(|c| !c.delayed_early_retransmit()),
        }
    }

    /// The connection analysis's options: the defaults, with what the senders' stacks run.
    fn conn_options(&self) -> Options {
        Options {
            rack: self.rack,
            tlp: self.tlp,
            delayed_er: self.delayed_er,
            ..Options::default()
        }
    }
}

/// What the run metrics need of one link event: its time, what it was, its direction and the
/// router queue's length after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSample {
    pub time_ns: u64,
    pub kind: SampleKind,
    /// 0 = down, 1 = up.
    pub dir: u8,
    pub queue_pkts: Option<u32>,
}

/// The kinds of link event the run metrics tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    Arrive,
    TxStart,
    TxEnd,
    /// A drop, by cause (0 queue, 1 RED, 2 CoDel or PIE, 3 link error, 4 any other).
    Drop(u8),
    Other,
}

impl SampleKind {
    /// The sample kind of an event row's kind and cause.
    pub fn of(kind: RowKind, cause: Option<RowCause>) -> SampleKind {
        use RowCause as C;
        match kind {
            RowKind::Arrive => SampleKind::Arrive,
            RowKind::TxStart => SampleKind::TxStart,
            RowKind::TxEnd => SampleKind::TxEnd,
            RowKind::Drop => SampleKind::Drop(match cause {
                Some(C::Queue) => 0,
                Some(C::Red) => 1,
                Some(C::Codel | C::Pie) => 2,
                Some(C::Error) => 3,
                _ => 4,
            }),
            _ => SampleKind::Other,
        }
    }

    fn of_event(kind: EventKind) -> SampleKind {
        match kind {
            EventKind::Arrive => SampleKind::Arrive,
            EventKind::TxStart => SampleKind::TxStart,
            EventKind::TxEnd => SampleKind::TxEnd,
            EventKind::Drop(c) => SampleKind::of(RowKind::Drop, Some(RowCause::from(c))),
            _ => SampleKind::Other,
        }
    }
}

impl LinkSample {
    /// The samples of `events.csv` (its rows of a direction).
    /// A run that kept `events.parquet` instead ([`crate::files::columnar`]) reads from it.
    pub fn read(path: &Path) -> Result<Vec<LinkSample>, Error> {
        let name = path.display().to_string();
        let f = match crate::files::columnar::open(path) {
            Ok(Some(f)) => f,
            Ok(None) => {
                return Err(Error::Io {
                    path: name,
                    error: std::io::ErrorKind::NotFound.into(),
                })
            }
            Err(e) => {
                return Err(Error::Events {
                    path: name,
                    line: 0,
                    msg: e.to_string(),
                })
            }
        };
        let mut out = vec![];
        for row in lasthop_link::event::read_events(f) {
            let r = row.map_err(|e| Error::Events {
                path: name.clone(),
                line: e.line,
                msg: e.message,
            })?;
            let Some(d) = r.dir else { continue };
            out.push(LinkSample {
                time_ns: r.time_ns,
                kind: SampleKind::of(r.event, r.cause),
                dir: d.index() as u8,
                queue_pkts: r.queue_pkts,
            });
        }
        Ok(out)
    }
}

/// One host's capture as it is analysed: tcptrace's rules over its TCP segments, its
/// datagrams of UDP flows, and (for the stream analysis) its segments kept.
struct HostSink {
    an: Analyzer,
    /// Records so far (numbered from 1: the order of the connections).
    n: u64,
    seg: Box<TcpSeg>,
    dgs: Vec<Datagram>,
    log: Option<CaptureLog>,
}

impl HostSink {
    fn new(opts: &AnalysisOptions) -> HostSink {
        HostSink {
            an: Analyzer::new(opts.conn_options()),
            n: 0,
            seg: Box::new(TcpSeg::EMPTY),
            dgs: vec![],
            log: opts.streams.then(CaptureLog::default),
        }
    }

    /// One capture record: `ip` the datagram's bytes as captured, `wire` its length on the
    /// wire. Returns whether it was a TCP segment.
    #[inline]
    fn record(&mut self, t: Time, ip: &[u8], wire: u32) -> bool {
        self.n += 1;
        if capture::parse_tcp_into(t, ip, Some(wire), &mut self.seg) {
            self.an.segment_nth(&self.seg, self.n);
            if let Some(l) = &mut self.log {
                l.push(&self.seg, latency::ip_datagram_len(ip, wire));
            }
            true
        } else {
            self.dgs.extend(udp::parse_datagram(t, ip, Some(wire)));
            false
        }
    }

    fn finish(self) -> HostPart {
        HostPart {
            conns: conn::merge_numbered(vec![self.an.finish_numbered()]),
            udp: self.dgs,
            log: self.log,
        }
    }
}

/// What one host's capture gave.
struct HostPart {
    conns: Vec<ConnStats>,
    udp: Vec<Datagram>,
    log: Option<CaptureLog>,
}

/// What the event log gave: the TCP flows' drops, marks and spurious retransmissions, and the
/// UDP flows' drops.
struct EventsPart {
    log: EventLog,
    udp: FxHashMap<FlowKey, UdpDrops>,
}

/// Adds a drop or a mark of a UDP flow (seed 000's columns: RED and marks together).
fn udp_drop(d: &mut UdpDrops, kind: RowKind, cause: Option<RowCause>) {
    match (kind, cause) {
        (RowKind::Drop, Some(RowCause::Queue | RowCause::Input)) => d.queue += 1,
        // Seed 000 counts ECN marks and drops under ECN in its RED column.
        (RowKind::Drop, Some(RowCause::Red)) | (RowKind::Mark, _) => d.red += 1,
        (RowKind::Drop, Some(RowCause::Codel | RowCause::Pie)) => d.aqm += 1,
        (RowKind::Drop, Some(RowCause::Error | RowCause::Output)) => d.error += 1,
        (RowKind::Drop, _) => d.mtu += 1,
        _ => {}
    }
}

/// A run analysed as its records are produced: the simulator hands over every packet a host
/// captures ([`RunSink::packet`]) and every event of the link ([`RunSink::events`]), in the
/// order they happen, then [`RunSink::finish`] gives what [`analyse_run`] gives for the same
/// captures and `events.csv`.
pub struct RunSink {
    addrs: Vec<IpAddr>,
    hosts: Vec<HostSink>,
    events: EventLogBuilder,
    udp_drops: FxHashMap<FlowKey, UdpDrops>,
    samples: Option<Vec<LinkSample>>,
    pages: Vec<PageSpec>,
    flows: Vec<FlowId>,
}

impl RunSink {
    /// `hosts`: each host's address, in the order [`RunSink::packet`] numbers them.
    pub fn new(hosts: &[IpAddr], opts: &AnalysisOptions) -> RunSink {
        RunSink {
            addrs: hosts.to_vec(),
            hosts: hosts.iter().map(|_| HostSink::new(opts)).collect(),
            events: EventLogBuilder::default(),
            udp_drops: FxHashMap::default(),
            samples: opts.link_samples.then(Vec::new),
            pages: opts.pages.clone(),
            flows: opts.flows.clone(),
        }
    }

    /// Host `host` captured `p` at `t` (sent or received); the capture keeps a packet's first
    /// [`DEFAULT_SNAPLEN`] bytes, so does this.
    #[inline]
    pub fn packet(&mut self, host: usize, t: Time, p: &Packet) {
        let n = p.data.len().min(DEFAULT_SNAPLEN as usize);
        self.hosts[host].record(t, &p.data[..n], p.wire_len);
    }

    /// The link's events, in the order it produced them (those its log level records: the
    /// rows `events.csv` would have).
    pub fn events(&mut self, events: &[Event]) {
        for e in events {
            self.events.event(e);
            let (kind, cause) = match e.kind {
                EventKind::Drop(c) => (RowKind::Drop, Some(RowCause::from(c))),
                EventKind::Mark => (RowKind::Mark, None),
                _ => (RowKind::Other, None),
            };
            if kind != RowKind::Other {
                if let Some(p) = e.packet.as_ref().filter(|p| p.flow.proto == 17) {
                    udp_drop(self.udp_drops.entry(p.flow).or_default(), kind, cause);
                }
            }
            if let (Some(s), Some(d)) = (&mut self.samples, e.dir) {
                s.push(LinkSample {
                    time_ns: e.time.as_nanos(),
                    kind: SampleKind::of_event(e.kind),
                    dir: d.index() as u8,
                    queue_pkts: Some(e.queue_pkts),
                });
            }
        }
    }

    /// The run's tables. The event log counts as given (`events.csv` is written, whatever its
    /// level): drops are 0, not unknown, without events.
    pub fn finish(self) -> RunAnalysis {
        let parts: Vec<(IpAddr, HostPart)> = self
            .addrs
            .into_iter()
            .zip(self.hosts.into_iter().map(HostSink::finish))
            .collect();
        let ev = EventsPart {
            log: self.events.finish(),
            udp: self.udp_drops,
        };
        let mut run = combine(parts, Some(ev), &self.pages);
        run.link_samples = self.samples.unwrap_or_default();
        run.flows = self.flows;
        run
    }
}

/// A run analysed from its captures (files, or bytes in memory) and its `events.csv` when
/// given: the emulator's runs and `lasthop analyze`'s. `hosts` pairs each host's address with
/// its capture.
///
/// TCP: each capture is analysed, a connection seen at its client host (which gives the elapsed
/// time, as seed 002 defines it) is merged with its view at the server host (counts come from
/// the data sender's side, see [`merge_sides`]), and the event log, when given, is joined for
/// drops by cause and spurious retransmissions. UDP: each flow's sender capture (the host with
/// its source address) and receiver capture (its destination's) give loss, throughput, spacing
/// and one-way delay ([`udp::udp_flows`]); the event log gives drops by cause.
pub fn analyse_run(
    hosts: &[(IpAddr, Capture<'_>)],
    events: Option<&Path>,
    opts: &AnalysisOptions,
) -> Result<RunAnalysis, Error> {
    let mut parts = vec![];
    for (addr, capture) in hosts {
        let mut log = CaptureLog::default();
        let l = opts.streams.then_some(&mut log);
        let a = match capture {
            Capture::File(p) => {
                let name = p.display().to_string();
                let f = std::fs::File::open(p).map_err(|e| Error::Io {
                    path: name.clone(),
                    error: e,
                })?;
                crate::analyze_reader_logged(f, &name, opts.conn_options(), l)?
            }
            Capture::Bytes(b) => {
                crate::analyze_reader_logged(*b, "<capture>", opts.conn_options(), l)?
            }
        };
        parts.push((
            *addr,
            HostPart {
                conns: a.conns,
                udp: a.udp,
                log: opts.streams.then_some(log),
            },
        ));
    }
    let ev = match events {
        Some(path) => Some(EventsPart {
            log: EventLog::load(path)?,
            udp: udp_drops_of_file(
                path,
                parts.iter().flat_map(|(_, p)| p.udp.iter().map(|d| d.flow)),
            )?,
        }),
        None => None,
    };
    let mut run = combine(parts, ev, &opts.pages);
    run.flows = opts.flows.clone();
    if let (true, Some(path)) = (opts.link_samples, events) {
        run.link_samples = LinkSample::read(path)?;
    }
    Ok(run)
}

/// Adds the drops by cause that `events.csv` at `path` holds to UDP flows (`lasthop analyze`
/// of captures without a scenario; [`analyse_run`] does it for a run).
pub fn join_udp_events(path: &Path, flows: &mut [udp::UdpFlowStats]) -> Result<(), Error> {
    let drops = udp_drops_of_file(path, flows.iter().map(|f| f.flow))?;
    for f in flows {
        f.drops = Some(drops.get(&f.flow).copied().unwrap_or_default());
    }
    Ok(())
}

/// The drops in `events.csv` of the UDP flows `keys` (the file is read only when there is one).
fn udp_drops_of_file(
    path: &Path,
    keys: impl Iterator<Item = FlowKey>,
) -> Result<FxHashMap<FlowKey, UdpDrops>, Error> {
    let mut out = FxHashMap::default();
    let keys: FxHashMap<String, FlowKey> = keys.map(|k| (k.to_string(), k)).collect();
    if keys.is_empty() {
        return Ok(out);
    }
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| Error::Io {
        path: name.clone(),
        error: e,
    })?;
    for row in lasthop_link::event::read_events(std::io::BufReader::with_capacity(1 << 16, file)) {
        let row = row.map_err(|e| Error::Events {
            path: name.clone(),
            line: e.line,
            msg: e.message,
        })?;
        if let Some(k) = keys.get(&row.flow) {
            udp_drop(out.entry(*k).or_default(), row.event, row.cause);
        }
    }
    Ok(out)
}

/// The run's tables from its hosts' parts and its event log (when given).
fn combine(
    parts: Vec<(IpAddr, HostPart)>,
    ev: Option<EventsPart>,
    pages: &[PageSpec],
) -> RunAnalysis {
    let (mut client_side, mut server_side) = (vec![], vec![]);
    let mut datagrams = vec![];
    let mut logs = vec![];
    for (addr, part) in parts {
        for c in part.conns {
            if c.client.ip() == addr {
                client_side.push(c);
            } else if c.server.ip() == addr {
                server_side.push(c);
            }
        }
        datagrams.push((addr, part.udp));
        logs.extend(part.log);
    }
    let mut conns = merge_sides(&client_side, &server_side);
    let mut udp = udp::udp_flows(&datagrams);
    let pings = crate::ping::pings(&datagrams);
    if let Some(ev) = ev {
        ev.log.join(&mut conns);
        for f in &mut udp {
            f.drops = Some(ev.udp.get(&f.flow).copied().unwrap_or_default());
        }
    }
    let pages = page::pages(pages, &client_side, &server_side, &conns);
    let streams = latency::streams(&logs);
    RunAnalysis {
        conns,
        udp,
        pages,
        streams,
        link_samples: vec![],
        flows: vec![],
        pings,
    }
}
