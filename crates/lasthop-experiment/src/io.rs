//! Reading and writing the small files of a results directory: JSON (bounded), atomic
//! writes, and the fingerprints that name what was run.

use crate::error::{io_err, ExperimentError};
use lasthop_core::output::AtomicFile;
use serde::Serialize;
use std::path::Path;

/// Pretty JSON with a final newline, as every JSON file of a results directory.
pub(crate) fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).expect("plain data serializes") + "\n"
}

/// FNV-1a, 64 bits (stable across versions and platforms).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The most a JSON file of a results directory (`experiment.json`, `shard.json`, a run's
/// `metrics.json` or marker) may hold: 10 000 points describe themselves in a few MB.
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// Reads a JSON file of a results directory, at most [`MAX_JSON_BYTES`] of it.
pub(crate) fn read_json_text(path: &Path) -> std::io::Result<String> {
    lasthop_core::spec::read_text_limited(path, MAX_JSON_BYTES, "a JSON file of lasthop's")
}

/// Reads and parses a JSON file of a results directory (a run's `metrics.json`, a chained
/// replication's `tcp_metrics.json`), errors naming the file.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ExperimentError> {
    let text = read_json_text(path).map_err(io_err(path))?;
    serde_json::from_str(&text).map_err(|source| ExperimentError::Json {
        path: path.display().to_string(),
        source,
    })
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ExperimentError> {
    AtomicFile::write_all_to(path, bytes).map_err(io_err(path))
}

/// [`write_atomic`] without syncing the file: for a run's files, whose directory the runner
/// syncs once before the run's marker ([`lasthop_core::output::sync_dir`]).
pub(crate) fn write_unsynced(path: &Path, bytes: &[u8]) -> Result<(), ExperimentError> {
    AtomicFile::write_all_to_with(path, bytes, false).map_err(io_err(path))
}
