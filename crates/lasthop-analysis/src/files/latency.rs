//! `latency.csv`: the ACK-latency histogram of every stream of `streams.csv` at 1 ms
//! resolution, one row per non-empty millisecond (runs with `thin` flows only).

use super::FileError;
use crate::latency::StreamStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `latency.csv`, in order (the fields of [`LatencyRow`]).
pub const COLUMNS: [&str; 3] = ["stream", "ms", "count"];

/// One row of `latency.csv`: `count` byte ranges of `stream` were acknowledged after `ms`
/// whole milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyRow {
    pub stream: u64,
    pub ms: u32,
    pub count: u64,
}

/// The rows of every stream's histogram.
pub fn rows(streams: &[StreamStats]) -> impl Iterator<Item = LatencyRow> + '_ {
    streams.iter().flat_map(|st| {
        st.latency.hist.iter().map(move |&(ms, count)| LatencyRow {
            stream: st.id as u64,
            ms,
            count,
        })
    })
}

/// The text of `latency.csv`.
pub fn text(streams: &[StreamStats]) -> String {
    super::to_text(&COLUMNS, rows(streams))
}

/// Writes `latency.csv` at `path`, atomically.
pub fn write(path: &Path, streams: &[StreamStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, rows(streams))
}

/// Reads `latency.csv`.
pub fn read(path: &Path) -> Result<Vec<LatencyRow>, FileError> {
    super::read_file(path)
}

/// Per stream its histogram (`(ms, count)` ascending), streams in file order.
pub fn histograms(rows: &[LatencyRow]) -> Vec<(u64, Vec<(u32, u64)>)> {
    let mut out: Vec<(u64, Vec<(u32, u64)>)> = vec![];
    for r in rows {
        match out.iter_mut().find(|(s, _)| *s == r.stream) {
            Some((_, h)) => h.push((r.ms, r.count)),
            None => out.push((r.stream, vec![(r.ms, r.count)])),
        }
    }
    for (_, h) in &mut out {
        h.sort_unstable();
    }
    out
}
