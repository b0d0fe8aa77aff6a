//! `latency.csv`: the ACK-latency histogram of every stream of `streams.csv` at 1 ms
//! resolution, one row per non-empty millisecond (runs with `thin` flows only).

use super::FileError;
use crate::latency::StreamStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `latency.csv`, in order (the fields of [`LatencyRow`]).
pub const COLUMNS: [&str; 5] = [
    "stream",
    "ms",
    "count",
    // the stream's flow as `streams.csv` names it: empty without the scenario
    "flow_index",
    "flow_name",
];

/// One row of `latency.csv`: `count` byte ranges of `stream` were acknowledged after `ms`
/// whole milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyRow {
    pub stream: u64,
    pub ms: u32,
    pub count: u64,
    /// The scenario's flow of the stream (`streams.csv`'s `flow_index`).
    #[serde(default)]
    pub flow_index: Option<usize>,
    /// Where the flow was written: `flows[2]`, `flows[2]#7` for a group's member.
    #[serde(default)]
    pub flow_name: String,
}

/// The rows of every stream's histogram.
pub fn rows(streams: &[StreamStats]) -> impl Iterator<Item = LatencyRow> + '_ {
    streams.iter().flat_map(|st| {
        st.latency.hist.iter().map(move |&(ms, count)| LatencyRow {
            stream: st.id as u64,
            ms,
            count,
            flow_index: None,
            flow_name: String::new(),
        })
    })
}

/// The text of `latency.csv`, each stream's rows named by its flow among the scenario's
/// `named` flows (as `streams.csv`'s row).
pub fn text(streams: &[StreamStats], named: &[crate::run::FlowId]) -> String {
    let flows: Vec<(Option<usize>, String)> = streams
        .iter()
        .map(|s| {
            let r = super::streams::StreamRow::of(s).in_flow(named);
            (r.flow_index, r.flow_name)
        })
        .collect();
    let of_stream = |id: u64| streams.iter().position(|s| s.id as u64 == id);
    super::to_text(
        &COLUMNS,
        rows(streams).map(|mut r| {
            if let Some(i) = of_stream(r.stream) {
                (r.flow_index, r.flow_name) = flows[i].clone();
            }
            r
        }),
    )
}

/// Writes `latency.csv` at `path`, atomically (without the scenario's flows).
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
