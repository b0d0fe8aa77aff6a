//! What a simulation run writes and analyses, as chosen ([`OutputOptions`]): a pcap per host
//! (or some, or none), `events.csv` (at a level), `tcp_trace.csv`, and the analysis's tables
//! (`connections.csv` ...), computed as the run goes from every captured packet and every link
//! event ([`lasthop_analysis::RunSink`]), so no capture needs to be on disk. Every file is
//! written atomically: it appears complete or not at all.

use crate::Error;
use lasthop_analysis::files::tcp_trace::{TraceFields, TraceWriter};
use lasthop_analysis::{AnalysisOptions, RunAnalysis, RunSink};
use lasthop_core::layout::{self, RunFiles};
use lasthop_core::output::{AtomicFile, PcapSink, DEFAULT_SNAPLEN};
use lasthop_core::{Packet, Time};
use lasthop_link::{Event, EventCsv, LogLevel};
use lasthop_scenario::Scenario;
use lasthop_tcp::Host as TcpHost;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

pub struct Outputs {
    pub dir: Option<PathBuf>,
    /// One capture per host (in scenario order), when it is written.
    pcaps: Vec<Option<PcapSink<AtomicFile>>>,
    /// `events.csv` and the highest level of its rows.
    events: Option<(EventCsv<AtomicFile>, LogLevel)>,
    trace: Option<TraceWriter<AtomicFile>>,
    /// The run's analysis, fed every captured packet and every link event as they happen.
    sink: Option<RunSink>,
    host_names: Vec<String>,
    sync_each: bool,
}

/// Which hosts' captures are written (`<host>.pcap`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Captures {
    /// Every host's.
    All,
    /// None.
    #[default]
    None,
    /// The named hosts' (a host group's name stands for its members).
    Hosts(Vec<String>),
}

impl Captures {
    /// Whether the capture of host `name` (of group `group`, if a member) is written.
    pub fn includes(&self, name: &str, group: Option<&str>) -> bool {
        match self {
            Captures::All => true,
            Captures::None => false,
            Captures::Hosts(h) => h.iter().any(|x| x == name || Some(x.as_str()) == group),
        }
    }
}

/// Which outputs a run produces. The model itself is the same whatever is written: the link
/// logs at the scenario's `log` level and the analysis sees every event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputOptions {
    /// Write files here; without it nothing is written.
    pub dir: Option<PathBuf>,
    /// Analyse the run as it goes (connections, UDP flows, pages, streams): the results'
    /// tables, written to `dir` (`connections.csv`, ...) when there is one.
    pub analyse: bool,
    /// The captures written.
    pub captures: Captures,
    /// `events.csv` with the rows up to this level (`None`: no file). The rows are those the
    /// scenario's `log` level records, at most.
    pub events: Option<LogLevel>,
    /// Write `tcp_trace.csv` (the TCP model's congestion state after every change).
    pub tcp_trace: bool,
    /// Keep the link samples for the run metrics ([`lasthop_analysis::LinkSample`]).
    pub link_samples: bool,
    /// Sync each file as it is completed; `false` leaves it to the caller, who syncs the
    /// directory once ([`lasthop_core::output::sync_dir`]).
    pub sync_each: bool,
}

impl OutputOptions {
    /// Nothing written, nothing analysed: the model alone.
    pub const NONE: OutputOptions = OutputOptions {
        dir: None,
        analyse: false,
        captures: Captures::None,
        events: None,
        tcp_trace: false,
        link_samples: false,
        sync_each: true,
    };

    /// The analysis in memory, no file.
    pub const ANALYSIS: OutputOptions = OutputOptions {
        analyse: true,
        ..OutputOptions::NONE
    };

    /// Every output into `dir` (what `lasthop sim` writes by default): a capture per host,
    /// `events.csv`, `tcp_trace.csv`, `link.csv` and the analysis's tables.
    pub fn all(dir: impl Into<PathBuf>) -> OutputOptions {
        OutputOptions {
            dir: Some(dir.into()),
            analyse: true,
            captures: Captures::All,
            events: Some(LogLevel::All),
            tcp_trace: true,
            link_samples: false,
            sync_each: true,
        }
    }
}

impl Default for OutputOptions {
    fn default() -> OutputOptions {
        OutputOptions::NONE
    }
}

fn io_err(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

impl Outputs {
    /// Hosts (or flows) that may pace give `tcp_trace.csv` two more columns: the pacing rate and
    /// the congestion control's state.
    pub fn new(opts: &OutputOptions, scenario: &Scenario) -> Result<Outputs, Error> {
        let host_names: Vec<String> = scenario.hosts.iter().map(|h| h.name.clone()).collect();
        let no_pacing = lasthop_tcp::Pacing::None;
        let pacing = scenario.hosts.iter().any(|h| h.tcp.pacing != no_pacing)
            || (scenario.flows.iter())
                .any(|f| f.tcp.as_ref().is_some_and(|c| c.pacing != no_pacing));
        let mut pcaps = Vec::new();
        let mut events = None;
        let mut trace = None;
        if let Some(dir) = &opts.dir {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
            let files = RunFiles::new(dir);
            if let Some(level) = opts.events {
                let path = files.events_csv();
                let f = AtomicFile::create(&path).map_err(io_err(&path))?;
                events = Some((EventCsv::new(f).map_err(io_err(&path))?, level));
            }
            if opts.tcp_trace {
                let path = files.tcp_trace_csv();
                let f = AtomicFile::create(&path).map_err(io_err(&path))?;
                trace = Some(TraceWriter::new(f, pacing).map_err(io_err(&path))?);
            }
        }
        for h in &scenario.hosts {
            let group = h.group.as_ref().map(|g| g.0.as_str());
            let file = match &opts.dir {
                Some(dir) if opts.captures.includes(&h.name, group) => {
                    let path = RunFiles::new(dir).pcap(&h.name);
                    let f = AtomicFile::create(&path).map_err(io_err(&path))?;
                    Some(PcapSink::new(f, DEFAULT_SNAPLEN).map_err(io_err(&path))?)
                }
                _ => None,
            };
            pcaps.push(file);
        }
        let sink = opts.analyse.then(|| {
            let addrs: Vec<IpAddr> = scenario
                .hosts
                .iter()
                .map(|h| IpAddr::V4(h.address))
                .collect();
            let mut a = AnalysisOptions::for_scenario(scenario);
            a.link_samples = opts.link_samples;
            RunSink::new(&addrs, &a)
        });
        Ok(Outputs {
            dir: opts.dir.clone(),
            pcaps,
            events,
            trace,
            sink,
            host_names,
            sync_each: opts.sync_each,
        })
    }

    /// Records a packet sent or received by host `h` at `at`: in its capture, and for the
    /// analysis.
    #[inline]
    pub fn capture(&mut self, h: usize, at: Time, p: &Packet) -> Result<(), Error> {
        if let Some(s) = &mut self.sink {
            s.packet(h, at, p);
        }
        if let Some(Some(sink)) = self.pcaps.get_mut(h) {
            sink.write(at, p).map_err(|e| Error::Io {
                path: layout::pcap_name(&self.host_names[h]),
                source: e,
            })?;
        }
        Ok(())
    }

    pub fn events(&mut self, events: &[Event]) -> Result<(), Error> {
        if let Some(s) = &mut self.sink {
            s.events(events);
        }
        if let Some((csv, level)) = &mut self.events {
            for e in events.iter().filter(|e| e.kind.level() <= *level) {
                csv.write(e, None).map_err(|e| Error::Io {
                    path: layout::EVENTS_CSV.into(),
                    source: e,
                })?;
            }
        }
        Ok(())
    }

    /// Whether `tcp_trace.csv` is written.
    pub fn traces(&self) -> bool {
        self.trace.is_some()
    }

    /// Appends the congestion-state changes of host `h`'s connections to `tcp_trace.csv`.
    pub fn trace(&mut self, h: usize, tcp: &mut TcpHost) -> Result<(), Error> {
        let Some(f) = &mut self.trace else {
            return Ok(());
        };
        let name = &self.host_names[h];
        for (key, conn) in tcp.conns_mut() {
            for r in conn.drain_trace() {
                let row = TraceFields {
                    time_ns: r.time.as_nanos(),
                    cwnd: r.cwnd,
                    ssthresh: r.ssthresh,
                    srtt_ns: r.srtt.map(|d| d.as_nanos()),
                    rttvar_ns: r.rttvar.as_nanos(),
                    rto_ns: r.rto.as_nanos(),
                    ca_state: &r.ca_state,
                    packets_out: r.packets_out,
                    sacked_out: r.sacked_out,
                    lost_out: r.lost_out,
                    retrans_out: r.retrans_out,
                    in_flight: r.in_flight(),
                    pacing_rate: r.pacing_rate,
                    cc_mode: r.cc_mode,
                };
                f.row(name, &key.0, &key.1, &row).map_err(|e| Error::Io {
                    path: layout::TCP_TRACE_CSV.into(),
                    source: e,
                })?;
            }
        }
        Ok(())
    }

    /// Commits every file and returns the run's analysis (when asked for).
    pub fn finish(self) -> Result<Option<RunAnalysis>, Error> {
        let commit = |f: AtomicFile, path: String| {
            let r = if self.sync_each {
                f.commit()
            } else {
                f.commit_unsynced()
            };
            r.map_err(|e| Error::Io { path, source: e })
        };
        for (i, p) in self.pcaps.into_iter().enumerate() {
            if let Some(p) = p {
                commit(p.into_inner(), layout::pcap_name(&self.host_names[i]))?;
            }
        }
        if let Some((csv, _)) = self.events {
            commit(csv.into_inner(), layout::EVENTS_CSV.into())?;
        }
        if let Some(f) = self.trace {
            commit(f.into_inner(), layout::TCP_TRACE_CSV.into())?;
        }
        Ok(self.sink.map(RunSink::finish))
    }
}
