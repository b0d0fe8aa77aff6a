//! The name of every file lasthop writes, named once: a run's files (whatever wrote the run:
//! `lasthop sim`, `lasthop emu` or a run of an experiment) and the files of an experiment's
//! results directory. Every crate that writes or reads one takes its name from here.
//!
//! ```text
//! <run>/   <host>.pcap, events.csv, link.csv, tcp_trace.csv, connections.csv,
//!          udp_flows.csv, udp_packets.csv, pages.csv, page_objects.csv, streams.csv,
//!          latency.csv, ping_flows.csv, pings.csv, hosts.csv, summary.toml (emulation); in an experiment also
//!          scenario.toml, metrics.json, tcp_metrics.json (chained replications), done.json
//! <results>/ experiment.toml, experiment.json, summary.csv, summary.json, report.html,
//!          shard.json (a shard), runs/<point>/<replication>/ (one run each)
//! ```

use std::path::{Path, PathBuf};

/// The link's event log (`lasthop_link::event`).
pub const EVENTS_CSV: &str = "events.csv";
/// The link's counters and meters per direction (`lasthop_link::meter`).
pub const LINK_CSV: &str = "link.csv";
/// The TCP model's congestion state after every change (simulation only).
pub const TCP_TRACE_CSV: &str = "tcp_trace.csv";
/// One row per TCP connection.
pub const CONNECTIONS_CSV: &str = "connections.csv";
/// One row per UDP flow (runs with UDP flows).
pub const UDP_FLOWS_CSV: &str = "udp_flows.csv";
/// One row per received datagram of a UDP flow (runs with UDP flows).
pub const UDP_PACKETS_CSV: &str = "udp_packets.csv";
/// One row per page (runs with `http` flows).
pub const PAGES_CSV: &str = "pages.csv";
/// One row per object of a page (runs with `http` flows).
pub const PAGE_OBJECTS_CSV: &str = "page_objects.csv";
/// Seed 003's streams (runs with `thin` flows).
pub const STREAMS_CSV: &str = "streams.csv";
/// Seed 003's ACK-latency histograms per stream (runs with `thin` flows).
pub const LATENCY_CSV: &str = "latency.csv";
/// One row per latency-probe flow (runs with `ping` flows).
pub const PING_FLOWS_CSV: &str = "ping_flows.csv";
/// One row per probe of a latency-probe flow (runs with `ping` flows).
pub const PINGS_CSV: &str = "pings.csv";
/// The emulated hosts (emulation only).
pub const HOSTS_CSV: &str = "hosts.csv";
/// The emulated run's figures (emulation only).
pub const SUMMARY_TOML: &str = "summary.toml";
/// The patched scenario a run of an experiment used.
pub const SCENARIO_TOML: &str = "scenario.toml";
/// A run's metrics, what the summaries read.
pub const METRICS_JSON: &str = "metrics.json";
/// The hosts' CBI caches at the end of a chained replication.
pub const TCP_METRICS_JSON: &str = "tcp_metrics.json";
/// The marker, written last: the run is finished.
pub const MARKER: &str = "done.json";

/// The spec of an experiment, as given.
pub const EXPERIMENT_TOML: &str = "experiment.toml";
/// What the summaries and the report need to know of an experiment.
pub const EXPERIMENT_JSON: &str = "experiment.json";
pub const SUMMARY_CSV: &str = "summary.csv";
pub const SUMMARY_JSON: &str = "summary.json";
pub const REPORT_HTML: &str = "report.html";
/// The shard a directory holds (`lasthop run --shard K/N`).
pub const SHARD_JSON: &str = "shard.json";
/// The parent of every run directory of an experiment.
pub const RUNS_DIR: &str = "runs";

/// A host's capture.
pub fn pcap_name(host: &str) -> String {
    format!("{host}.pcap")
}

/// The files of one run in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFiles {
    dir: PathBuf,
}

impl RunFiles {
    pub fn new(dir: impl Into<PathBuf>) -> RunFiles {
        RunFiles { dir: dir.into() }
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn pcap(&self, host: &str) -> PathBuf {
        self.dir.join(pcap_name(host))
    }
    pub fn events_csv(&self) -> PathBuf {
        self.dir.join(EVENTS_CSV)
    }
    pub fn link_csv(&self) -> PathBuf {
        self.dir.join(LINK_CSV)
    }
    pub fn tcp_trace_csv(&self) -> PathBuf {
        self.dir.join(TCP_TRACE_CSV)
    }
    pub fn connections_csv(&self) -> PathBuf {
        self.dir.join(CONNECTIONS_CSV)
    }
    pub fn udp_flows_csv(&self) -> PathBuf {
        self.dir.join(UDP_FLOWS_CSV)
    }
    pub fn udp_packets_csv(&self) -> PathBuf {
        self.dir.join(UDP_PACKETS_CSV)
    }
    pub fn pages_csv(&self) -> PathBuf {
        self.dir.join(PAGES_CSV)
    }
    pub fn page_objects_csv(&self) -> PathBuf {
        self.dir.join(PAGE_OBJECTS_CSV)
    }
    pub fn streams_csv(&self) -> PathBuf {
        self.dir.join(STREAMS_CSV)
    }
    pub fn latency_csv(&self) -> PathBuf {
        self.dir.join(LATENCY_CSV)
    }
    pub fn ping_flows_csv(&self) -> PathBuf {
        self.dir.join(PING_FLOWS_CSV)
    }
    pub fn pings_csv(&self) -> PathBuf {
        self.dir.join(PINGS_CSV)
    }
    pub fn hosts_csv(&self) -> PathBuf {
        self.dir.join(HOSTS_CSV)
    }
    pub fn summary_toml(&self) -> PathBuf {
        self.dir.join(SUMMARY_TOML)
    }
    pub fn scenario_toml(&self) -> PathBuf {
        self.dir.join(SCENARIO_TOML)
    }
    pub fn metrics_json(&self) -> PathBuf {
        self.dir.join(METRICS_JSON)
    }
    pub fn tcp_metrics_json(&self) -> PathBuf {
        self.dir.join(TCP_METRICS_JSON)
    }
    pub fn marker(&self) -> PathBuf {
        self.dir.join(MARKER)
    }
}
