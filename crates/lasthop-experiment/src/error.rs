//! What can go wrong: running an experiment or reading its results directory
//! ([`ExperimentError`]), and producing one run ([`RunError`]). Messages name the file.

use lasthop_analysis::files::FileError;
use std::path::Path;

/// What can go wrong running an experiment or summarising its results directory. Messages name
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// `experiment.json` missing or unreadable: not a results directory.
    #[error("{path}: {source} (is {dir} the --out directory of `lasthop run`?)")]
    NotResults {
        path: String,
        dir: String,
        source: std::io::Error,
    },
    /// `shard.json` missing or unreadable: not a shard directory.
    #[error("{path}: {source} (is {dir} the --out directory of `lasthop run --shard K/N`? `lasthop merge` combines shard directories)")]
    NotShard {
        path: String,
        dir: String,
        source: std::io::Error,
    },
    /// Shard directories that cannot be merged, and why.
    #[error("{0}")]
    Merge(String),
    /// A file of a results directory that the tool would not have written (a point name that
    /// is a path, a count past the spec's limits): refused before anything is read or written
    /// where it points.
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error(transparent)]
    File(#[from] FileError),
    /// A failed simulation or emulation.
    #[error(transparent)]
    Backend(#[from] RunError),
    #[error("thread pool: {0}")]
    Pool(String),
    /// A chained replication not run: its predecessor failed.
    #[error("not run: replication {replication} of its chain failed (a chained replication starts from its predecessor's caches)")]
    ChainBroken { replication: u64 },
}

pub(crate) fn io_err(path: &Path) -> impl Fn(std::io::Error) -> ExperimentError + '_ {
    move |source| ExperimentError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Why a backend produced no run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Sim(#[from] lasthop_sim::Error),
    /// The emulator could not set up or run (its message with its causes).
    #[error("{0:#}")]
    Emu(anyhow::Error),
    #[error("interrupted by signal {0}")]
    Signal(i32),
    #[error("a workload program failed: {}", .0.join("; "))]
    AppFailed(Vec<String>),
    #[error("analysing the captures: {0}")]
    Analysis(#[from] lasthop_analysis::Error),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A mode this build cannot run, and why.
    #[error("{0}")]
    Unavailable(String),
}

/// Whether `e` is a full disk or an exhausted quota (`ENOSPC`, `EDQUOT`), anywhere in its
/// chain of causes or in its message (errors that carry an I/O error's text only).
pub fn is_disk_full(e: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind::{QuotaExceeded, StorageFull};
    let mut cur = Some(e);
    while let Some(x) = cur {
        if let Some(io) = x.downcast_ref::<std::io::Error>() {
            if matches!(io.kind(), StorageFull | QuotaExceeded)
                || matches!(io.raw_os_error(), Some(28 | 122))
            {
                return true;
            }
        }
        cur = x.source();
    }
    let text = e.to_string();
    text.contains("No space left on device") || text.contains("Disk quota exceeded")
}
