//! `lasthop-experiment`: experiment specs (a base scenario and a matrix of named overrides),
//! the resumable parallel runner, and the summaries across replications.
//!
//! ```no_run
//! use lasthop_experiment::{Experiment, RunOptions, SimBackend, run_experiment};
//! let exp = Experiment::load("experiments/quickstart.toml")?;
//! let report = run_experiment(&exp, "results/quickstart".as_ref(), &SimBackend, &RunOptions::default())?;
//! println!("{} runs, {} kept", report.total, report.kept);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The spec format, the results directory and the summary definitions are in
//! `docs/experiments.md`.

pub mod backend;
pub mod catalogue;
pub mod chain;
pub mod classes;
pub mod error;
pub mod info;
pub mod io;
pub mod layout;
pub mod measure;
pub mod merge;
pub mod metrics;
pub mod outputs;
pub mod parallel;
pub mod quickstart;
pub mod restore;
pub mod runner;
pub mod shard;
pub mod single;
pub mod spec;
pub mod stats;
pub mod summaries;
pub mod summary;
pub mod thin;

pub use backend::{Backend, EmuBackend, SimBackend, Unavailable};
pub use classes::{Class, ClassScheme, Figure, UnknownClass};
pub use error::{ExperimentError, RunError};
pub use info::{ExperimentInfo, Marker, PointInfo};
pub use layout::MARKER;
pub use layout::{ResultsDir, RunDir};
pub use merge::{merge, MergeReport};
pub use metrics::{ConnMetrics, RunMetrics, UdpMetrics};
pub use runner::{
    run_experiment, run_experiment_shard, run_one, OnProgress, RunOptions, RunReport,
};
pub use shard::{Shard, ShardInfo};
pub use spec::{Experiment, Mode, Point, PointRef, RefValue, RunId};
pub use stats::{cov, jain, quantile, FiveNum};
pub use summaries::{load_metrics, summarise, write_summary, Summaries};
pub use summary::{PointSummary, Summary};
