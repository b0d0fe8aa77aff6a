//! The results directory's layout, named once (see `docs/experiments.md`, *The results
//! directory*):
//!
//! ```text
//! DIR/experiment.toml, experiment.json, summary.csv, summary.json, report.html
//! DIR/runs/<point>/<k>/   scenario.toml, the run's outputs, metrics.json, done.json (last)
//! ```

use std::path::{Path, PathBuf};

/// The marker's file name: written last, it makes a run count as finished.
pub const MARKER: &str = "done.json";

/// An experiment's results directory (`lasthop run --out DIR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultsDir {
    root: PathBuf,
}

impl ResultsDir {
    pub fn new(root: impl Into<PathBuf>) -> ResultsDir {
        ResultsDir { root: root.into() }
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `runs/`, the parent of every run directory.
    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }
    /// `runs/<point>/<replication>/`.
    pub fn run(&self, point: &str, replication: u64) -> RunDir {
        RunDir::new(self.runs().join(point).join(replication.to_string()))
    }
    /// The spec as given.
    pub fn experiment_toml(&self) -> PathBuf {
        self.root.join("experiment.toml")
    }
    /// What the summaries and the report need to know of the experiment.
    pub fn experiment_json(&self) -> PathBuf {
        self.root.join("experiment.json")
    }
    pub fn summary_csv(&self) -> PathBuf {
        self.root.join("summary.csv")
    }
    pub fn summary_json(&self) -> PathBuf {
        self.root.join("summary.json")
    }
    pub fn report_html(&self) -> PathBuf {
        self.root.join("report.html")
    }
}

/// One run's directory, `runs/<point>/<replication>/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    pub fn new(path: impl Into<PathBuf>) -> RunDir {
        RunDir { path: path.into() }
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The patched scenario the run used.
    pub fn scenario_toml(&self) -> PathBuf {
        self.path.join("scenario.toml")
    }
    /// The marker, written last.
    pub fn marker(&self) -> PathBuf {
        self.path.join(MARKER)
    }
    /// Whether the marker exists (whether it names the current definition is
    /// `Experiment::is_done`'s question).
    pub fn has_marker(&self) -> bool {
        self.marker().exists()
    }
    /// The run's metrics ([`crate::RunMetrics`]).
    pub fn metrics_json(&self) -> PathBuf {
        self.path.join("metrics.json")
    }
    pub fn connections_csv(&self) -> PathBuf {
        self.path.join("connections.csv")
    }
    pub fn events_csv(&self) -> PathBuf {
        self.path.join("events.csv")
    }
    pub fn tcp_trace_csv(&self) -> PathBuf {
        self.path.join("tcp_trace.csv")
    }
    /// Only in runs with UDP flows.
    pub fn udp_flows_csv(&self) -> PathBuf {
        self.path.join("udp_flows.csv")
    }
    /// Only in runs with UDP flows.
    pub fn udp_packets_csv(&self) -> PathBuf {
        self.path.join("udp_packets.csv")
    }
    /// Only in runs with http flows.
    pub fn pages_csv(&self) -> PathBuf {
        self.path.join("pages.csv")
    }
    /// Only in runs with http flows.
    pub fn page_objects_csv(&self) -> PathBuf {
        self.path.join("page_objects.csv")
    }
    /// Only in chained replications: the hosts' CBI caches at the end ([`crate::chain`]).
    pub fn tcp_metrics_json(&self) -> PathBuf {
        self.path.join("tcp_metrics.json")
    }
    /// Removes whatever an unfinished attempt left (partial files included) and creates the
    /// directory afresh.
    pub fn reset(&self) -> std::io::Result<()> {
        if self.path.exists() {
            std::fs::remove_dir_all(&self.path)?;
        }
        std::fs::create_dir_all(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_reset() {
        let d = tempfile::tempdir().unwrap();
        let out = ResultsDir::new(d.path());
        let run = out.run("r1-bl", 3);
        assert_eq!(run.path(), d.path().join("runs/r1-bl/3"));
        assert_eq!(run.marker(), d.path().join("runs/r1-bl/3/done.json"));
        assert_eq!(run.metrics_json().file_name().unwrap(), "metrics.json");
        assert_eq!(out.summary_json(), d.path().join("summary.json"));
        run.reset().unwrap();
        std::fs::write(run.marker(), "{}").unwrap();
        std::fs::write(run.path().join("partial.pcap"), "x").unwrap();
        assert!(run.has_marker());
        run.reset().unwrap();
        assert!(!run.has_marker());
        assert_eq!(std::fs::read_dir(run.path()).unwrap().count(), 0);
    }
}
