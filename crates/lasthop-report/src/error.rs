//! What can go wrong building the report.

/// What can go wrong building the report. Messages name the file or the bad argument.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The results directory: `experiment.json`, a run's `metrics.json`, ...
    #[error(transparent)]
    Results(#[from] lasthop_experiment::ExperimentError),
    /// A run file the plots read (`events.csv`, `tcp_trace.csv`, `udp_packets.csv`).
    #[error(transparent)]
    File(#[from] lasthop_analysis::files::FileError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// `--run` names no finished run.
    #[error("--run {given:?}: allowed POINT/REPLICATION of a finished run, POINT one of {points}")]
    UnknownRun { given: String, points: String },
}
