//! The seeds' own sections: seed 001's first 10 KB of parallel connections and seed 003's
//! per-host thin-stream latencies, ours with the published values below; a table wider than
//! the page shows its key columns first, every column folded below.

use crate::html::{esc, figure, fold_wide, ours_published_table, OursPublished};
use crate::plots;
use crate::section::across::across_first_dimension;
use crate::series;
use lasthop_experiment::catalogue::ThinMetric;
use lasthop_experiment::{ExperimentInfo, RunMetrics, Summary};
use std::fmt::Write as _;

/// Seed 001's first 10 KB of parallel connections (scheme `first10k`): one row per point with
/// ours and the published values below it.
pub(crate) fn first10k(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    use series::parallel::{first10k_row, COLUMNS};
    let rows: Vec<_> = s
        .points
        .iter()
        .filter_map(|p| {
            let r = info.references.iter().find(|r| r.point == p.point);
            first10k_row(p, r)
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    h.push_str("<h2>First 10 KB of the parallel connections (seed 001)</h2>\n<p class=\"note\">Per run, the connections ranked by the time from their SYN to the ACK covering 10 240 bytes: the fastest and the slowest (quartiles over the runs, s, as the seed's Appendix A \"first 10 KB\" tables); the slowest one's throughput, 10 240 B over the time from its first data segment to that ACK (median, the seed's Tables 6, 8, 10 and 13); Jain's index ×100 of the connections' first-10 KB throughputs, and the retransmissions before 10 KB of the connection with the fewest and with the most (medians over the runs: RxMin, RxMax); and the slowest one's unnecessary retransmissions (retransmissions − drops, whole connection). Published values in the row below ours.</p>\n");
    let heads: Vec<&str> = COLUMNS.iter().map(|c| c.0).collect();
    let rows: Vec<OursPublished> = rows
        .iter()
        .map(|r| OursPublished {
            keys: vec![esc(&r.point), r.runs.to_string()],
            ours: &r.ours,
            published: r.published.as_deref(),
        })
        .collect();
    // Narrow: the medians (fastest, slowest), the slowest one's throughput, Jain, RxMin,
    // RxMax and its unnecessary retransmissions; the quartiles in the full table.
    let key: Vec<usize> = (0..COLUMNS.len())
        .filter(|&i| COLUMNS[i].2 == 1 || i >= 6)
        .collect();
    fold_wide(
        h,
        &ours_published_table(&["point", "runs"], &heads, &rows, Some(&key)),
        &ours_published_table(&["point", "runs"], &heads, &rows, None),
        "First 10 KB",
    );
}

/// One table of host rows (ours, and the published values below each when the spec has
/// them); when wider than the page, the columns `key` first.
fn host_table(
    h: &mut String,
    rows: &[series::thin::HostRow],
    columns: &[(ThinMetric, &str)],
    key: &[ThinMetric],
    what: &str,
) {
    let heads: Vec<&str> = columns.iter().map(|c| c.1).collect();
    let rows: Vec<OursPublished> = rows
        .iter()
        .map(|r| OursPublished {
            keys: vec![esc(&r.class)],
            ours: &r.ours,
            published: r.published.as_deref(),
        })
        .collect();
    let pick: Vec<usize> = (0..columns.len())
        .filter(|&i| key.contains(&columns[i].0))
        .collect();
    fold_wide(
        h,
        &ours_published_table(&["host"], &heads, &rows, Some(&pick)),
        &ours_published_table(&["host"], &heads, &rows, None),
        what,
    );
}

/// The latency table's key columns: mean, median, the 90th to 99.9th percentiles and max.
const LATENCY_KEY: [ThinMetric; 7] = [
    ThinMetric::LatMeanMs,
    ThinMetric::LatP50Ms,
    ThinMetric::LatP90Ms,
    ThinMetric::LatP99Ms,
    ThinMetric::LatP999Ms,
    ThinMetric::LatP9999Ms,
    ThinMetric::LatMaxMs,
];

/// The stream table's key columns: streams, average ITT and payload, packets sent, lost and
/// retransmitted, RDB hits and goodput.
const STREAM_KEY: [ThinMetric; 8] = [
    ThinMetric::Streams,
    ThinMetric::IttAvgMs,
    ThinMetric::PayloadAvgB,
    ThinMetric::SentPkts,
    ThinMetric::LostPkts,
    ThinMetric::RetrPkts,
    ThinMetric::RdbHits,
    ThinMetric::GoodputBps,
];

/// Seed 003's figures for the points with thin streams (scheme `thin`): per point the ACK
/// latency ECDF of each host, full and zoomed to y = 0.65–1 as the seed's plots, the latency
/// percentile table and the stream table, with the spec's published values beside ours.
pub(crate) fn thin_streams(
    h: &mut String,
    info: &ExperimentInfo,
    s: &Summary,
    metrics: &[Vec<RunMetrics>],
) {
    use series::thin::{hist_cdf, host_rows, zoom_cdf, LATENCY_COLUMNS, STREAM_COLUMNS};
    if s.points.iter().all(|p| p.thin.is_empty()) {
        return;
    }
    h.push_str("<h2>Thin streams (seed 003's tables)</h2>\n<p class=\"note\">ACK latency: for each byte range as first sent, the time from its first sending to the first ACK that covers it, in the sender's capture; each range counts once (analyseTCP's measure). Per host (scheme <code>thin</code>, classes <code>host-NAME</code>) over all its streams; table values are our medians over the replications, percentiles nearest-rank at 1 ms resolution; the ECDFs pool every replication. ITT and payload are min / avg / max over the streams' averages; loss is exact (sender's against receiver's capture).</p>\n");
    across_first_dimension(h, info, s, metrics);
    for p in &s.points {
        if p.thin.is_empty() {
            continue;
        }
        let r = info.references.iter().find(|r| r.point == p.point);
        let _ = writeln!(h, "<h3>{} ({} runs)</h3>", esc(&p.point), p.runs);
        let runs = info
            .points
            .iter()
            .position(|x| x.name == p.point)
            .and_then(|i| metrics.get(i))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let curves: Vec<(String, Vec<(f64, f64)>)> = p
            .thin
            .iter()
            .map(|c| {
                let host = match &c.class {
                    lasthop_experiment::Class::Host(x) => x.clone(),
                    other => other.to_string(),
                };
                let hist = lasthop_experiment::summary::pooled_hist(runs, &host);
                (host, hist_cdf(&hist))
            })
            .filter(|c| !c.1.is_empty())
            .collect();
        if !curves.is_empty() {
            let xr = plots::range(curves.iter().flat_map(|c| c.1.iter().map(|p| p.0)), false);
            let zoomed: Vec<(String, Vec<(f64, f64)>)> = curves
                .iter()
                .map(|(l, c)| (l.clone(), zoom_cdf(c, 0.65)))
                .collect();
            h.push_str("<div class=\"grid2\">\n");
            figure(
                h,
                plots::cdf_chart_y((640, 420), &format!("ACK latency per host, {}", p.point), "ACK latency (ms)", &curves, Some(xr), (0.0, 1.02)),
                "ECDF of the ACK latency of every byte range of every stream of each host (all replications).",
            );
            figure(
                h,
                plots::cdf_chart_y(
                    (640, 420),
                    &format!("ACK latency per host, {}, y from 0.65", p.point),
                    "ACK latency (ms)",
                    &zoomed,
                    Some(xr),
                    (0.65, 1.005),
                ),
                "The same, zoomed to y = 0.65–1 as the seed's plots.",
            );
            h.push_str("</div>\n");
        }
        host_table(
            h,
            &host_rows(p, r, &LATENCY_COLUMNS),
            &LATENCY_COLUMNS,
            &LATENCY_KEY,
            "ACK latency",
        );
        host_table(
            h,
            &host_rows(p, r, &STREAM_COLUMNS),
            &STREAM_COLUMNS,
            &STREAM_KEY,
            "Streams",
        );
    }
}
