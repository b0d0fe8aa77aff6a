//! Mahimahi's figures of a traced direction, beside ours: what `mm-throughput-graph` computes
//! from an `mm-link` log (capacity and throughput over time, the per-packet queueing delay),
//! here recorded by the model as it runs, whatever the log level.
//!
//! As in Mahimahi: a packet's *delay* is from its arrival at the link's queue (after any
//! middlebox) to the end of its transmission (the opportunity that carried its last byte), so
//! it is the router queue's wait plus the wait for capacity; *throughput* counts the bytes
//! whose transmission ended (in the bin of that end), *ingress* the bytes that arrived,
//! *capacity* what the trace offered, used or not; all in 500 ms bins (Mahimahi's live
//! graph's) and over the run. The throughput–delay point of a run is (throughput,
//! 95th-percentile delay), the figure Pantheon plots. Mahimahi's "signal delay" is not
//! computed. Only directions with a trace record; the model tells the recorder of each arrival
//! and, when a transmission starts, of its arrival and its end (both known then).

use crate::dir::Dir;
use crate::trace::Trace;
use lasthop_core::{Dur, Time};

/// The bin width of the series, as Mahimahi's throughput graph.
pub const BIN: Dur = Dur(500_000_000);

/// What one traced direction recorded.
pub struct Recorder {
    trace: Trace,
    /// Bytes arrived and bytes sent, per [`BIN`].
    ingress: Vec<u64>,
    egress: Vec<u64>,
    /// Each sent packet's delay, ns.
    delays: Vec<u64>,
}

impl Recorder {
    pub fn new(trace: Trace) -> Recorder {
        Recorder {
            trace,
            ingress: Vec::new(),
            egress: Vec::new(),
            delays: Vec::new(),
        }
    }

    /// A packet of `bytes` arrived at `t`.
    pub(crate) fn arrived(&mut self, t: Time, bytes: u64) {
        add(&mut self.ingress, t, bytes);
    }

    /// A packet of `bytes` that arrived at `since` started its transmission, which ends at
    /// `end`.
    pub(crate) fn sent(&mut self, since: Time, end: Time, bytes: u64) {
        add(&mut self.egress, end, bytes);
        self.delays.push((end - since).as_nanos());
    }

    /// The figures over `[0, end]`.
    pub fn summary(&self, dir: Dir, end: Time) -> TraceSummary {
        let bins = end.as_nanos().div_ceil(BIN.0).max(1) as usize;
        let mbps = |bytes: u64, span: u64| bytes as f64 * 8.0 / (span as f64 / 1e9) / 1e6;
        let series = (0..bins)
            .map(|i| {
                let from = Time(i as u64 * BIN.0);
                let to = Time(((i as u64 + 1) * BIN.0).min(end.as_nanos()).max(from.0));
                let span = (to - from).as_nanos().max(1);
                let cap = self.trace.capacity_bits(from, to);
                TraceBin {
                    dir: dir.name().to_string(),
                    start_s: from.as_secs_f64(),
                    capacity_mbps: cap as f64 / (span as f64 / 1e9) / 1e6,
                    ingress_mbps: mbps(self.ingress.get(i).copied().unwrap_or(0), span),
                    throughput_mbps: mbps(self.egress.get(i).copied().unwrap_or(0), span),
                }
            })
            .collect();
        let span = end.as_nanos().max(1);
        let capacity = self.trace.capacity_bits(Time::ZERO, end) as f64 / (span as f64 / 1e9) / 1e6;
        // Transmissions that end after the run's end are not in it.
        let throughput = mbps(self.egress.iter().take(bins).sum(), span);
        let mut d: Vec<f64> = self.delays.iter().map(|&x| x as f64 / 1e6).collect();
        d.sort_by(f64::total_cmp);
        let q = |p| lasthop_core::stats::quantile(&d, p).unwrap_or(f64::NAN);
        TraceSummary {
            row: TraceSummaryRow {
                dir: dir.name().to_string(),
                trace: self.trace.file.clone(),
                duration_s: end.as_secs_f64(),
                capacity_mbps: capacity,
                throughput_mbps: throughput,
                utilisation: if capacity > 0.0 {
                    throughput / capacity
                } else {
                    0.0
                },
                delay_p50_ms: q(0.5),
                delay_p95_ms: q(0.95),
                packets: d.len() as u64,
            },
            series,
        }
    }
}

fn add(bins: &mut Vec<u64>, t: Time, bytes: u64) {
    let i = (t.as_nanos() / BIN.0) as usize;
    if bins.len() <= i {
        bins.resize(i + 1, 0);
    }
    bins[i] += bytes;
}

/// One direction's figures: the run's row and its series.
pub struct TraceSummary {
    pub row: TraceSummaryRow,
    pub series: Vec<TraceBin>,
}

/// A row of `trace_summary.csv`: `mm-throughput-graph`'s numbers for one direction.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceSummaryRow {
    pub dir: String,
    /// The trace file as the spec named it.
    pub trace: String,
    pub duration_s: f64,
    /// Mean capacity the trace offered over the run ("Average capacity").
    #[serde(rename = "capacity_Mbps")]
    pub capacity_mbps: f64,
    /// Mean rate of the bytes sent ("Average throughput").
    #[serde(rename = "throughput_Mbps")]
    pub throughput_mbps: f64,
    /// Throughput / capacity ("utilization").
    pub utilisation: f64,
    /// Median and 95th percentile of the per-packet delay (arrival to the end of
    /// transmission; Mahimahi's "per-packet queueing delay"); empty without packets.
    pub delay_p50_ms: f64,
    pub delay_p95_ms: f64,
    /// Packets sent.
    pub packets: u64,
}

/// A row of `trace_series.csv`: one [`BIN`] of a traced direction.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceBin {
    pub dir: String,
    pub start_s: f64,
    #[serde(rename = "capacity_Mbps")]
    pub capacity_mbps: f64,
    #[serde(rename = "ingress_Mbps")]
    pub ingress_mbps: f64,
    #[serde(rename = "throughput_Mbps")]
    pub throughput_mbps: f64,
}

/// Writes `trace_summary.csv` and `trace_series.csv` into `dir` (atomically), when a direction
/// of the run had a trace; writes nothing otherwise.
pub fn write_files(dir: &std::path::Path, summaries: &[TraceSummary]) -> std::io::Result<()> {
    write_files_with(dir, summaries, true)
}

/// [`write_files`], whose files are synced only if `sync`: a caller that writes a run's many
/// files syncs their directory once instead (`lasthop_core::output::sync_dir`).
pub fn write_files_with(
    dir: &std::path::Path,
    summaries: &[TraceSummary],
    sync: bool,
) -> std::io::Result<()> {
    if summaries.is_empty() {
        return Ok(());
    }
    let csv = |rows: &mut dyn FnMut(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>| {
        let mut w = csv::Writer::from_writer(vec![]);
        rows(&mut w).map_err(std::io::Error::other)?;
        w.into_inner()
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    let summary = csv(&mut |w| summaries.iter().try_for_each(|s| w.serialize(&s.row)))?;
    lasthop_core::output::AtomicFile::write_all_to_with(
        dir.join("trace_summary.csv"),
        &summary,
        sync,
    )?;
    let series = csv(&mut |w| {
        summaries
            .iter()
            .flat_map(|s| &s.series)
            .try_for_each(|b| w.serialize(b))
    })?;
    lasthop_core::output::AtomicFile::write_all_to_with(dir.join("trace_series.csv"), &series, sync)
}
