//! `lasthop-sim`: one replication of a scenario in virtual time.
//!
//! The driver ([`driver`]) wires every host's sockets ([`stack`]: the TCP model of `lasthop-tcp`
//! and UDP), each host behind its access link, to the link model (`lasthop-link`) between the
//! fixed and the mobile side, and runs the applications of `lasthop-apps` on them. [`run`]
//! produces what [`OutputOptions`] asks for: per-host captures, the link's event log, the TCP
//! trace, and `connections.csv` and the other tables (by `lasthop-analysis`, fed every packet
//! and event in-process: the same code that analyses emulator runs from their captures). Same
//! scenario and seed: identical files, byte for byte.

pub mod driver;
pub mod outputs;
pub mod stack;

use lasthop_analysis::ConnStats;
use lasthop_core::output::AtomicFile;
use lasthop_core::Time;
use lasthop_link::meter::{write_link_csv_with, LinkRow};
use lasthop_link::{Dir, DirStats, MeterReading};
use lasthop_scenario::Scenario;
use lasthop_tcp::Metrics;
use std::net::Ipv4Addr;

pub use outputs::{Captures, OutputOptions};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("key `{key}`: {message}")]
    Spec { key: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Analysis(#[from] lasthop_analysis::Error),
}

pub use lasthop_apps::FlowReport;

#[derive(Debug)]
pub struct SimResult {
    /// Simulated time when the run stopped (all flows done, or the scenario's duration).
    pub end: Time,
    pub flows: Vec<FlowReport>,
    /// One row per TCP connection, from the captures and the event log (empty without capture).
    pub connections: Vec<ConnStats>,
    /// One entry per UDP flow, likewise.
    pub udp: Vec<lasthop_analysis::udp::UdpFlowStats>,
    /// One entry per page (`http` flow), likewise.
    pub pages: Vec<lasthop_analysis::PageStats>,
    /// The whole analysis (empty unless [`OutputOptions::analyse`]).
    pub analysis: lasthop_analysis::RunAnalysis,
    /// `link.csv`'s rows, down then up.
    pub link_rows: Vec<LinkRow>,
    /// The link's counters, down then up.
    pub link: [DirStats; 2],
    /// The router queue and serializer figures over the run, down then up (`link.csv`).
    pub meters: [MeterReading; 2],
    /// Events the driver processed (a measure of the work done).
    pub events: u64,
    /// Every host's CBI cache at the end (empty unless a host has `cbi`): what the next of
    /// chained replications starts from ([`run_from`]).
    pub tcp_metrics: TcpMetricsCache,
    /// Every TCP connection's own counters from the model (RTOs, fast retransmits, ...), by
    /// host name: the ground truth the analysis's inferred counters can be checked against.
    pub tcp_model: Vec<(String, ModelConn)>,
}

/// One TCP connection of the model, as the simulation ended.
#[derive(Clone, Debug)]
pub struct ModelConn {
    pub local: std::net::SocketAddrV4,
    pub remote: std::net::SocketAddrV4,
    pub stats: lasthop_tcp::Stats,
}

/// The hosts' CBI caches (Linux 2.4's per-destination route metrics): one entry per host and
/// destination, by host name.
pub type TcpMetricsCache = Vec<(String, Ipv4Addr, Metrics)>;

/// Runs one replication of `scenario` with cold hosts.
pub fn run(scenario: &Scenario, opts: &OutputOptions) -> Result<SimResult, Error> {
    run_from(scenario, opts, &[])
}

/// Runs one replication of `scenario` whose hosts start with the CBI caches `cache` (the
/// `tcp_metrics` a previous replication ended with): seed 000 ran its replications back to back
/// on the same hosts, so CBI's cache carried over from one to the next. An entry for a host the
/// scenario does not have is an error.
pub fn run_from(
    scenario: &Scenario,
    opts: &OutputOptions,
    cache: &[(String, Ipv4Addr, Metrics)],
) -> Result<SimResult, Error> {
    let names: Vec<String> = scenario.hosts.iter().map(|h| h.name.clone()).collect();
    let out = outputs::Outputs::new(opts, scenario)?;
    let mut sim = driver::Sim::new(scenario, out)?;
    for (host, dst, m) in cache {
        let Some(i) = names.iter().position(|n| n == host) else {
            return Err(Error::Spec {
                key: "tcp_metrics".into(),
                message: format!(
                    "a cached entry for host {host:?}, which the scenario does not have (allowed: {})",
                    names.join(", ")
                ),
            });
        };
        sim.seed_tcp_metrics(i, *dst, *m);
    }
    let end = sim.run()?;
    let tcp_metrics = sim
        .tcp_metrics()
        .into_iter()
        .map(|(i, dst, m)| (names[i].clone(), dst, m))
        .collect();
    let tcp_model = sim
        .tcp_conn_stats()
        .into_iter()
        .map(|(i, c)| (names[i].clone(), c))
        .collect();
    let flows = sim.flow_reports();
    let link = [sim.link().stats(Dir::Down), sim.link().stats(Dir::Up)];
    let meters = [Dir::Down, Dir::Up].map(|d| sim.link().meter(d).reading(end));
    let trace_summaries = sim.link().trace_summaries(end);
    let events = sim.events_processed;
    let run = sim.into_outputs().finish()?.unwrap_or_default();
    if let (Some(dir), true) = (&opts.dir, opts.analyse) {
        // connections.csv, the UDP flows' files when there are UDP flows, the pages' files when
        // there are http flows, the streams' when there are thin flows
        lasthop_analysis::write_run_files_with(dir, &run, opts.sync_each)?;
    }
    let link_rows: Vec<LinkRow> = [Dir::Down, Dir::Up]
        .iter()
        .map(|&d| LinkRow::new(d, &link[d.index()], &meters[d.index()], end))
        .collect();
    if let Some(dir) = &opts.dir {
        // Without `sync_each` the caller syncs the run's directory once (before its marker).
        let path = lasthop_core::layout::RunFiles::new(dir).link_csv();
        write_link_csv_with(&path, &link_rows, opts.sync_each).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        lasthop_link::trace_summary::write_files_with(dir, &trace_summaries, opts.sync_each)
            .map_err(|source| Error::Io {
                path: dir.join("trace_summary.csv").display().to_string(),
                source,
            })?;
    }
    Ok(SimResult {
        end,
        flows,
        meters,
        connections: run.conns.clone(),
        udp: run.udp.clone(),
        pages: run.pages.clone(),
        analysis: run,
        link_rows,
        link,
        events,
        tcp_metrics,
        tcp_model,
    })
}

/// Writes `text` to `path` atomically (for the CLI's summary files).
pub fn write_text(path: &std::path::Path, text: &str) -> Result<(), Error> {
    AtomicFile::write_all_to(path, text.as_bytes()).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })
}
