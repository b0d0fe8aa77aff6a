//! `lasthop-report`: the self-contained HTML report of an experiment's results directory:
//! summary tables laid out like the seeds' appendix tables, and SVG plots (plotters' SVG
//! backend, no JavaScript) of one chosen run (time-sequence graph, router queue length,
//! throughput, cwnd and ssthresh) and across replications (CDFs and box plots).
//!
//! Everything comes from the files on disk (`experiment.json`, `runs/*/*/metrics.json`, read
//! once by whoever computed the summaries, and the chosen run's `events.csv` and
//! `tcp_trace.csv`), so `lasthop report DIR` rebuilds it.

pub mod events;
pub mod plots;
pub mod series;

use events::{read_events, Ev, EventRow};
use lasthop_analysis::files::{tcp_trace, udp_packets};
use lasthop_core::output::AtomicFile;
use lasthop_experiment::catalogue::{
    label_of, ConnMetric, Metric, PageClassMetric, PageMetric, RunMetric, ThinMetric, UdpMetric,
};
use lasthop_experiment::summary::class_order;
use lasthop_experiment::{
    summarise, ExperimentInfo, FiveNum, PointSummary, ResultsDir, RunMetrics, Summaries, Summary,
};
use plots::{box_chart, cdf_chart, color, xy_chart, Bars, Line, Marks, Shape};
use series::{across, TimeSeq};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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

/// Builds `DIR/report.html` (time plots of the spec's `report_run`, else the first finished run).
pub fn build(dir: &Path) -> Result<PathBuf, ReportError> {
    build_with(dir, None)
}

/// Builds `DIR/report.html`; `run` (`POINT/REPLICATION`) chooses the run of the time plots.
/// The summaries are computed from the files on disk (without writing them).
pub fn build_with(dir: &Path, run: Option<&str>) -> Result<PathBuf, ReportError> {
    write(dir, &summarise(dir)?, run)
}

/// Writes `DIR/report.html` from summaries already computed (those `lasthop run`, `report`
/// and `merge` have just written: every run's metrics are read once per command); `run`
/// (`POINT/REPLICATION`) chooses the run of the time plots.
pub fn write(dir: &Path, s: &Summaries, run: Option<&str>) -> Result<PathBuf, ReportError> {
    let (info, summary, metrics) = (&s.info, &s.summary, &s.metrics);
    let chosen = choose_run(dir, info, run)?;
    let html = render(dir, info, summary, metrics, chosen.as_ref())?;
    let path = ResultsDir::new(dir).report_html();
    AtomicFile::write_all_to(&path, html.as_bytes()).map_err(|source| ReportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(path)
}

/// The run whose time plots the report shows: `run` (`POINT/REPLICATION`, refused unless it
/// names a finished run), else the spec's `report_run` when finished, else the first finished
/// run.
pub fn choose_run(
    dir: &Path,
    info: &ExperimentInfo,
    run: Option<&str>,
) -> Result<Option<(String, u64)>, ReportError> {
    let done = |p: &str, r: u64| info.run_layout(dir, p, r).has_marker();
    if let Some(s) = run {
        let bad = || ReportError::UnknownRun {
            given: s.to_string(),
            points: info
                .points
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let (p, r) = s.rsplit_once('/').ok_or_else(bad)?;
        let r: u64 = r.parse().map_err(|_| bad())?;
        // One of the experiment's points, never a path (`../../x`) read from elsewhere.
        if !info.points.iter().any(|x| x.name == p) || !done(p, r) {
            return Err(bad());
        }
        return Ok(Some((p.to_string(), r)));
    }
    if let Some((p, r)) = &info.report_run {
        if done(p, *r) {
            return Ok(Some((p.clone(), *r)));
        }
    }
    for p in &info.points {
        for r in 0..info.replications {
            if done(&p.name, r) {
                return Ok(Some((p.name.clone(), r)));
            }
        }
    }
    Ok(None)
}

/// HTML-escapes text.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Formats a number for a table: integers as such, others with 4 significant digits.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if x == x.round() && x.abs() < 1e12 {
        return format!("{}", x as i64);
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

const CSS: &str = r#"
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px 32px; color: #222; max-width: 1300px; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 21px; margin-top: 36px; border-bottom: 2px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 17px; margin-top: 22px; }
p.note { color: #555; font-size: 14px; max-width: 1100px; }
table { border-collapse: collapse; margin: 8px 0 18px 0; font-size: 13.5px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f3f7; }
td.l, th.l { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
tr.first td { border-top: 2px solid #888; }
.blocks { display: flex; flex-wrap: wrap; gap: 10px 28px; }
.block h4 { margin: 6px 0 2px 0; font-size: 14px; }
figure { margin: 12px 0 20px 0; }
.grid2 { display: grid; grid-template-columns: repeat(2, 660px); gap: 0 12px; }
figcaption { font-size: 13px; color: #555; max-width: 1150px; }
svg { max-width: 100%; height: auto; border: 1px solid #eee; }
details > summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
code { background: #f4f4f4; padding: 0 3px; }
"#;

fn render(
    dir: &Path,
    info: &ExperimentInfo,
    summary: &Summary,
    metrics: &[Vec<RunMetrics>],
    chosen: Option<&(String, u64)>,
) -> Result<String, ReportError> {
    let mut h = String::new();
    let title = format!("lasthop experiment: {}", info.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    if let Some(d) = &info.description {
        let _ = writeln!(h, "<p>{}</p>", esc(d));
    }
    let finished: usize = metrics.iter().map(Vec::len).sum();
    let _ = writeln!(
        h,
        "<p class=\"note\">Mode <b>{}</b>, seed {}, {} point(s) × {} replication(s); {} of {} runs finished (the run files are under <code>runs/POINT/REPLICATION/</code> beside this report). Quantiles: {}.</p>",
        esc(&info.mode),
        info.seed,
        info.points.len(),
        info.replications,
        finished,
        info.points.len() as u64 * info.replications,
        esc(&summary.quantiles)
    );

    // The matrix.
    h.push_str("<h2>Matrix points</h2>\n<table><tr><th class=\"l\">point</th>");
    for d in &info.dimensions {
        let _ = write!(h, "<th class=\"l\">{}</th>", esc(d));
    }
    h.push_str(
        "<th class=\"l\">link spec</th><th class=\"l\">flows</th><th>finished runs</th><th>incomplete connections</th></tr>\n",
    );
    for (p, m) in info.points.iter().zip(metrics) {
        let _ = write!(h, "<tr><td class=\"l\">{}</td>", esc(&p.name));
        for d in &info.dimensions {
            let _ = write!(
                h,
                "<td class=\"l\">{}</td>",
                esc(p.coords.get(d).map(String::as_str).unwrap_or(""))
            );
        }
        let _ = writeln!(
            h,
            "<td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.link),
            p.flows
                .iter()
                .enumerate()
                .map(|(i, f)| format!("{i}: {}", esc(f)))
                .collect::<Vec<_>>()
                .join("<br>"),
            m.len(),
            {
                let bad = across::incomplete_connections(p.flows.len(), m);
                if bad == 0 {
                    "0".to_string()
                } else {
                    format!("<b style=\"color:#b00\">{bad}</b>")
                }
            }
        );
    }
    h.push_str("</table>\n");

    overview(&mut h, info, summary);
    page_overview(&mut h, summary);
    references(&mut h, info, summary);
    first10k(&mut h, info, summary);
    thin_streams(&mut h, info, summary, metrics);
    across(&mut h, info, summary, metrics)?;
    match chosen {
        Some((p, r)) => one_run(&mut h, &info.run_dir(dir, p, *r), p, *r)?,
        None => h.push_str("<h2>One run</h2><p>No finished run yet.</p>\n"),
    }
    appendix(&mut h, info, summary);
    h.push_str("</body></html>\n");
    Ok(h)
}

/// The seeds' summary-table layout: one row per point; per class elapsed 25/50/75 and median
/// drops q/r/a/e; otime; fairness; utilisation.
fn overview(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    let Some(scheme) = info.report_scheme() else {
        return;
    };
    let scheme = scheme.name();
    let classes = across::scheme_classes(s, scheme);
    let _ = writeln!(
        h,
        "<h2>Summary (classes: {})</h2>\n<p class=\"note\">Per point: elapsed time quartiles (s) and median drops q/r/a/e (router queue / RED / the other AQMs, CoDel and PIE / link error, data direction) of each class; <i>otime</i> is the median elapsed time over all connections; Jain's index and σ/μ are over the connections' throughputs within a run (median over runs); utilisation is the fraction of the transfer period the downlink serializer was busy (median); Σ max drops is seed 002's worst-case indicator: the sum over the classes of each class's largest drop count (queue, RED, other AQM and error drops, both directions).</p>",
        esc(scheme)
    );
    h.push_str("<table><tr><th class=\"l\" rowspan=\"2\">point</th><th rowspan=\"2\">runs</th>");
    for c in &classes {
        let _ = write!(h, "<th colspan=\"4\">{}</th>", esc(c));
    }
    h.push_str("<th rowspan=\"2\">otime (s)</th><th rowspan=\"2\">Jain</th><th rowspan=\"2\">σ/μ</th><th rowspan=\"2\">util. down</th><th rowspan=\"2\">queue mean down (pkts)</th><th rowspan=\"2\">Σ max drops</th></tr><tr>");
    for _ in &classes {
        h.push_str("<th>25%</th><th>50%</th><th>75%</th><th>drops q/r/a/e</th>");
    }
    h.push_str("</tr>\n");
    let med = |m: Option<&FiveNum>| m.map_or("–".to_string(), |f| num(f.median));
    for p in &s.points {
        let sum_max_drops = across::sum_of_max_drops(p, scheme);
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            esc(&p.point),
            p.runs
        );
        for c in &classes {
            match across::scheme_summaries(p, scheme).find(|x| x.class.to_string() == *c) {
                Some(cs) => {
                    let e = cs.get(ConnMetric::ElapsedS);
                    let _ = write!(
                        h,
                        "<td>{}</td><td>{}</td><td>{}</td><td>{}/{}/{}/{}</td>",
                        e.map_or("–".into(), |f| num(f.p25)),
                        e.map_or("–".into(), |f| num(f.median)),
                        e.map_or("–".into(), |f| num(f.p75)),
                        med(cs.get(ConnMetric::DropsQueue)),
                        med(cs.get(ConnMetric::DropsRed)),
                        med(cs.get(ConnMetric::DropsAqm)),
                        med(cs.get(ConnMetric::DropsError))
                    );
                }
                None => h.push_str("<td>–</td><td>–</td><td>–</td><td>–</td>"),
            }
        }
        let _ = writeln!(
            h,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            med(p.all_connections.get(ConnMetric::ElapsedS)),
            med(p.run(RunMetric::Jain)),
            med(p.run(RunMetric::ThroughputCov)),
            med(p.run(RunMetric::UtilDown)),
            med(p.run(RunMetric::QueueMeanDown)),
            num(sum_max_drops)
        );
    }
    h.push_str("</table>\n");
}

/// Seed 002's summary table (its §6 tables) for the points with pages; nothing without pages.
fn page_overview(h: &mut String, s: &Summary) {
    let rows: Vec<_> = s
        .points
        .iter()
        .filter_map(|p| across::page_row(p).map(|r| (p, r)))
        .collect();
    if rows.is_empty() {
        return;
    }
    h.push_str("<h2>Pages (seed 002's summary tables)</h2>\n<p class=\"note\">Per point, medians over the pages: response time (client side, first SYN sent to the ACK of the client's last FIN received), total time (server side, the seed's \"total time of a basic test\"), server-side throughput of the main object (class c1), of the fastest (c2) and of the slowest (cN) in-line; drops (c) / (e) median: the largest per-class median of the data direction's queue / error drops; Σ max drops: over the classes, the sum of each drop counter's largest value (queue and error, both directions).</p>\n<table><tr><th class=\"l\">point</th><th>runs</th><th>response (s)</th><th>total (s)</th><th>thro. (m) (B/s)</th><th>fastest thro. (i)</th><th>slowest thro. (i)</th><th>drops (c) median</th><th>drops (e) median</th><th>Σ max drops</th></tr>\n");
    let o = |v: Option<f64>| v.map_or("–".to_string(), num);
    for (p, r) in rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.point),
            p.runs,
            o(r.response_s),
            o(r.total_s),
            o(r.main_bytes_per_s),
            o(r.fastest_bytes_per_s),
            o(r.slowest_bytes_per_s),
            o(r.drops_queue_med),
            o(r.drops_error_med),
            o(r.sum_max_drops)
        );
    }
    h.push_str("</table>\n");
}

/// Our five numbers of `metric` for a reference's class: `all`, a connection class, else a UDP
/// flow or a page class (`cN`, `page`) of that name.
fn ours_of(p: &PointSummary, class: &str, metric: &str) -> Option<FiveNum> {
    if class == "all" {
        p.all_connections.metrics.get(metric).copied()
    } else if class == "run" {
        p.run_metrics.get(metric).copied()
    } else {
        p.classes
            .iter()
            .chain(&p.udp)
            .chain(&p.pages)
            .chain(&p.bottleneck)
            .chain(&p.thin)
            .filter(|c| c.class.to_string() == class)
            .find_map(|c| c.metrics.get(metric))
            .copied()
    }
}

/// Published values (the spec's `[reference.POINT]`) beside ours.
fn references(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    if info.references.is_empty() {
        return;
    }
    h.push_str("<h2>Published values beside ours</h2>\n<p class=\"note\">From the spec's <code>[reference.POINT]</code> tables. Δ is (ours − published) / published, of the medians.</p>\n");
    // Compact: the elapsed-time medians of every class with a published one.
    let mut classes: Vec<String> = vec![];
    for r in &info.references {
        for (c, m, _) in &r.values {
            if m == ConnMetric::ElapsedS.key() && !classes.contains(c) {
                classes.push(c.clone());
            }
        }
    }
    classes.sort_by_key(|c| class_order(c));
    if !classes.is_empty() {
        h.push_str("<table><tr><th class=\"l\" rowspan=\"2\">point</th>");
        for c in &classes {
            let name = if c == "all" {
                "all (otime)"
            } else {
                c.as_str()
            };
            let _ = write!(
                h,
                "<th colspan=\"3\">{} elapsed time, median (s)</th>",
                esc(name)
            );
        }
        h.push_str("<th class=\"l\" rowspan=\"2\">source</th></tr>\n<tr>");
        for _ in &classes {
            h.push_str("<th>published</th><th>ours</th><th>Δ</th>");
        }
        h.push_str("</tr>\n");
        for r in &info.references {
            let Some(p) = s.points.iter().find(|p| p.point == r.point) else {
                continue;
            };
            let _ = write!(h, "<tr><td class=\"l\">{}</td>", esc(&r.point));
            for c in &classes {
                let pubv = r
                    .values
                    .iter()
                    .find(|(rc, m, _)| rc == c && m == ConnMetric::ElapsedS.key());
                let ours = ours_of(p, c, ConnMetric::ElapsedS.key());
                match (pubv, ours) {
                    (Some((_, _, v)), Some(f)) => {
                        let _ = write!(
                            h,
                            "<td>{}</td><td>{}</td><td>{:+.1}%</td>",
                            num(v.median),
                            num(f.median),
                            (f.median - v.median) / v.median * 100.0
                        );
                    }
                    (Some((_, _, v)), None) => {
                        let _ = write!(h, "<td>{}</td><td>–</td><td>–</td>", num(v.median));
                    }
                    (None, Some(f)) => {
                        let _ = write!(h, "<td></td><td>{}</td><td></td>", num(f.median));
                    }
                    (None, None) => h.push_str("<td></td><td></td><td></td>"),
                }
            }
            let _ = writeln!(
                h,
                "<td class=\"l\">{}</td></tr>",
                esc(r.source.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table>\n");
    }
    let rows: usize = info.references.iter().map(|r| r.values.len()).sum();
    let _ = writeln!(
        h,
        "<details{}><summary>Every published value ({rows}), with our five numbers</summary>",
        if rows <= 40 { " open" } else { "" }
    );
    h.push_str("<table><tr><th class=\"l\" rowspan=\"2\">point</th><th class=\"l\" rowspan=\"2\">class</th><th class=\"l\" rowspan=\"2\">metric</th><th colspan=\"5\">published</th><th colspan=\"5\">ours</th><th rowspan=\"2\">Δ median</th><th class=\"l\" rowspan=\"2\">source</th></tr>\n<tr>");
    for _ in 0..2 {
        h.push_str("<th>min</th><th>25%</th><th>50%</th><th>75%</th><th>max</th>");
    }
    h.push_str("</tr>\n");
    let label = |m: &str| label_of(m).to_string();
    let o = |v: Option<f64>| v.map_or(String::new(), num);
    for r in &info.references {
        let Some(p) = s.points.iter().find(|p| p.point == r.point) else {
            continue;
        };
        for (i, (class, metric, v)) in r.values.iter().enumerate() {
            let ours = ours_of(p, class, metric);
            let _ = write!(
                h,
                "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                if i == 0 { " class=\"first\"" } else { "" },
                if i == 0 { esc(&r.point) } else { String::new() },
                esc(class),
                esc(&label(metric)),
                o(v.min),
                o(v.p25),
                num(v.median),
                o(v.p75),
                o(v.max)
            );
            match ours {
                Some(f) => {
                    let d = if v.median != 0.0 {
                        format!("{:+.1}%", (f.median - v.median) / v.median * 100.0)
                    } else {
                        "–".into()
                    };
                    let _ = write!(
                        h,
                        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{d}</td>",
                        num(f.min),
                        num(f.p25),
                        num(f.median),
                        num(f.p75),
                        num(f.max)
                    );
                }
                None => h.push_str("<td colspan=\"5\">(no such class or metric)</td><td>–</td>"),
            }
            let _ = writeln!(
                h,
                "<td class=\"l\">{}</td></tr>",
                if i == 0 {
                    esc(r.source.as_deref().unwrap_or(""))
                } else {
                    String::new()
                }
            );
        }
    }
    h.push_str("</table></details>\n");
}

/// Seed 001's first 10 KB of parallel connections (scheme `first10k`): one row per point with
/// ours and the published values below it.
fn first10k(h: &mut String, info: &ExperimentInfo, s: &Summary) {
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
    h.push_str("<h2>First 10 KB of the parallel connections (seed 001)</h2>\n<p class=\"note\">Per run, the connections ranked by the time from their SYN to the ACK covering 10 240 bytes: the fastest and the slowest (quartiles over the runs, s, as the seed's Appendix A \"first 10 KB\" tables); the slowest one's throughput, 10 240 B over the time from its first data segment to that ACK (median, the seed's Tables 6, 8, 10 and 13); Jain's index ×100 of the connections' first-10 KB throughputs, and the retransmissions before 10 KB of the connection with the fewest and with the most (medians over the runs: RxMin, RxMax); and the slowest one's unnecessary retransmissions (retransmissions − drops, whole connection). Published values in the row below ours.</p>\n<table><tr><th class=\"l\">point</th><th>runs</th><th class=\"l\"></th>");
    for (head, ..) in COLUMNS {
        let _ = write!(h, "<th>{}</th>", esc(head));
    }
    h.push_str("</tr>\n");
    let cells = |h: &mut String, v: &[Option<f64>]| {
        for x in v {
            let _ = write!(h, "<td>{}</td>", x.map_or("–".to_string(), num));
        }
    };
    for r in &rows {
        let _ = write!(
            h,
            "<tr class=\"first\"><td class=\"l\">{}</td><td>{}</td><td class=\"l\">ours</td>",
            esc(&r.point),
            r.runs
        );
        cells(h, &r.ours);
        h.push_str("</tr>\n");
        if let Some(p) = &r.published {
            h.push_str("<tr><td></td><td></td><td class=\"l\">published</td>");
            cells(h, p);
            h.push_str("</tr>\n");
        }
    }
    h.push_str("</table>\n");
}

/// One table of host rows (ours, and the published values below each when the spec has them).
fn host_table(h: &mut String, rows: &[series::thin::HostRow], columns: &[(ThinMetric, &str)]) {
    h.push_str("<table><tr><th class=\"l\">host</th><th class=\"l\"></th>");
    for (_, head) in columns {
        let _ = write!(h, "<th>{}</th>", esc(head));
    }
    h.push_str("</tr>\n");
    let cells = |h: &mut String, v: &[Option<f64>]| {
        for x in v {
            let _ = write!(h, "<td>{}</td>", x.map_or("–".to_string(), num));
        }
    };
    for r in rows {
        let _ = write!(
            h,
            "<tr class=\"first\"><td class=\"l\">{}</td><td class=\"l\">ours</td>",
            esc(&r.class)
        );
        cells(h, &r.ours);
        h.push_str("</tr>\n");
        if let Some(p) = &r.published {
            h.push_str("<tr><td></td><td class=\"l\">published</td>");
            cells(h, p);
            h.push_str("</tr>\n");
        }
    }
    h.push_str("</table>\n");
}

/// Seed 003's figures for the points with thin streams (scheme `thin`): per point the ACK
/// latency ECDF of each host, full and zoomed to y = 0.65–1 as the seed's plots, the latency
/// percentile table and the stream table, with the spec's published values beside ours.
fn thin_streams(h: &mut String, info: &ExperimentInfo, s: &Summary, metrics: &[Vec<RunMetrics>]) {
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
        host_table(h, &host_rows(p, r, &LATENCY_COLUMNS), &LATENCY_COLUMNS);
        host_table(h, &host_rows(p, r, &STREAM_COLUMNS), &STREAM_COLUMNS);
    }
}

/// The seed's overlays (Fig. A.1.x): for the points that differ only in the first dimension and
/// have one sending host each, that host's ACK-latency ECDFs in one figure, one curve per value
/// of the first dimension (zoomed to y = 0.65–1 as the seed's).
fn across_first_dimension(
    h: &mut String,
    info: &ExperimentInfo,
    s: &Summary,
    metrics: &[Vec<RunMetrics>],
) {
    use series::thin::{first_dimension_groups, hist_cdf, zoom_cdf};
    let Some(dim) = info.dimensions.first() else {
        return;
    };
    let coords: Vec<Vec<(String, String)>> = info
        .points
        .iter()
        .map(|p| {
            p.coords
                .iter()
                .map(|(d, v)| (d.clone(), v.clone()))
                .collect()
        })
        .collect();
    let mut figures = vec![];
    for (label, idx) in first_dimension_groups(&coords) {
        let curves: Vec<(String, Vec<(f64, f64)>)> = idx
            .iter()
            .filter_map(|&i| {
                let p = s.points.iter().find(|x| x.point == info.points[i].name)?;
                let [c] = p.thin.as_slice() else {
                    return None; // several hosts: their own figures below
                };
                let host = match &c.class {
                    lasthop_experiment::Class::Host(x) => x.clone(),
                    other => other.to_string(),
                };
                let runs = metrics.get(i).map(Vec::as_slice).unwrap_or(&[]);
                let cdf = hist_cdf(&lasthop_experiment::summary::pooled_hist(runs, &host));
                (!cdf.is_empty())
                    .then(|| (info.points[i].coords[dim].clone(), zoom_cdf(&cdf, 0.65)))
            })
            .collect();
        if curves.len() > 1 {
            figures.push((label, curves));
        }
    }
    if figures.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h3>By {} (the seed's overlays)</h3>\n<div class=\"grid2\">",
        esc(dim)
    );
    for (label, curves) in &figures {
        let xr = plots::range(curves.iter().flat_map(|c| c.1.iter().map(|p| p.0)), false);
        let title = if label.is_empty() {
            "ACK latency".to_string()
        } else {
            format!("ACK latency, {label}")
        };
        figure(
            h,
            plots::cdf_chart_y(
                (640, 420),
                &title,
                "ACK latency (ms)",
                curves,
                Some(xr),
                (0.65, 1.005),
            ),
            &format!("ECDF of the ACK latency per {dim}, y from 0.65 (all replications)."),
        );
    }
    h.push_str("</div>\n");
}

fn figure(h: &mut String, svg: Result<String, plots::PlotError>, caption: &str) {
    match svg {
        Ok(svg) => {
            let _ = writeln!(
                h,
                "<figure>{svg}<figcaption>{}</figcaption></figure>",
                esc(caption)
            );
        }
        Err(e) => {
            let _ = writeln!(
                h,
                "<p class=\"note\">({}: {})</p>",
                esc(caption),
                esc(&e.to_string())
            );
        }
    }
}

/// The CDF steps of each `(label, values)` series.
fn cdfs(series: &[(String, Vec<f64>)]) -> Vec<(String, Vec<(f64, f64)>)> {
    series
        .iter()
        .map(|(label, v)| (label.clone(), series::cdf(v)))
        .collect()
}

/// The CDFs of `all` (one series per point): one chart with a line per point, or with `split`
/// one chart per value of the first dimension on a common x axis.
#[allow(clippy::too_many_arguments)]
fn cdf_figures(
    h: &mut String,
    info: &ExperimentInfo,
    split: bool,
    what: &str,
    xdesc: &str,
    caption: &str,
    of: &str,
    all: &[(String, Vec<f64>)],
) {
    if !split {
        figure(
            h,
            cdf_chart(&format!("{what} of {of}, per point"), xdesc, &cdfs(all)),
            &format!("{caption} of each point."),
        );
        return;
    }
    let xr = plots::range(all.iter().flat_map(|s| s.1.iter().copied()), false);
    let d0 = &info.dimensions[0];
    h.push_str("<div class=\"grid2\">\n");
    for panel in across::split_by_dimension(&info.points, d0, all) {
        let v = &panel.value;
        figure(
            h,
            plots::cdf_chart_sized(
                (640, 420),
                &format!("{what}, {d0} = {v}"),
                xdesc,
                &cdfs(&panel.series),
                Some(xr),
            ),
            &format!("{caption}; {d0} = {v}, same x axis in every chart."),
        );
    }
    h.push_str("</div>\n");
}

/// Seed 002's pages (when the runs have `http` flows): the CDF of the response time per point
/// (split like the other CDFs) and box plots per page class (`c1` the main object, `c2` the
/// fastest in-line ... `cN` the slowest).
fn page_plots(
    h: &mut String,
    info: &ExperimentInfo,
    s: &Summary,
    metrics: &[Vec<RunMetrics>],
    split: bool,
) {
    let names: Vec<String> = info.points.iter().map(|p| p.name.clone()).collect();
    let resp = across::page_values(&names, metrics, |p| p.response_s);
    if resp.is_empty() {
        return;
    }
    h.push_str("<h3>Pages</h3>\n");
    cdf_figures(
        h,
        info,
        split,
        "Response time",
        "response time (s)",
        "Empirical CDF of the page response time (client side: first SYN sent to the ACK of the client's last FIN received) over all pages of all replications",
        "every page",
        &resp,
    );
    if info.has(lasthop_experiment::Figure::Page) {
        // The class box plots above are the page classes' already.
        return;
    }
    let classes = across::page_classes(s);
    for (key, label) in [
        (PageClassMetric::ElapsedS, "elapsed time, server side (s)"),
        (
            PageClassMetric::ThroughputBps,
            "throughput, server side (bytes/s)",
        ),
        (PageClassMetric::RexmtPkts, "retransmitted packets"),
    ] {
        let boxes = across::page_boxes(s, &classes, key);
        figure(
            h,
            box_chart(&format!("{label} by point and page class"), label, &names, &classes, &boxes, None),
            "Box: 25% to 75%, thick line: median, whiskers: min and max over the replications; one box per page class (c1 the main object, c2 the fastest in-line of each run ... cN the slowest).",
        );
    }
}

/// CDFs and box plots across replications.
fn across(
    h: &mut String,
    info: &ExperimentInfo,
    s: &Summary,
    metrics: &[Vec<RunMetrics>],
) -> Result<(), ReportError> {
    h.push_str("<h2>Across replications</h2>\n");
    let names: Vec<String> = info.points.iter().map(|p| p.name.clone()).collect();
    // With two or more dimensions and many points, one CDF per value of the first dimension
    // (lines for the rest), on a common x axis; else one CDF with a line per point.
    let split = info.dimensions.len() >= 2 && info.points.len() > 6;
    let metrics_cdf: [(&str, &str, &str, across::ConnValue); 2] = [
        ("Elapsed time", "elapsed time (s)", "Empirical CDF of the elapsed time (first SYN to the ACK of the client's FIN) over all connections of all replications", |c| c.elapsed_s),
        ("Throughput", "throughput (bytes/s)", "Empirical CDF of the throughput (unique bytes / elapsed time) over all connections of all replications", |c| c.throughput_bytes_per_s),
    ];
    for (what, xdesc, caption, f) in metrics_cdf {
        let all = across::conn_values(&names, metrics, f);
        cdf_figures(
            h,
            info,
            split,
            what,
            xdesc,
            caption,
            "every connection",
            &all,
        );
    }
    let scheme = info.report_scheme().map_or("flow", |c| c.name());
    let classes = across::scheme_classes(s, scheme);
    for (key, label) in [
        (ConnMetric::ElapsedS, "elapsed time (s)"),
        (ConnMetric::ThroughputBps, "throughput (bytes/s)"),
        (ConnMetric::RexmtPkts, "retransmitted packets"),
    ] {
        let boxes = across::class_boxes(s, scheme, &classes, key);
        figure(
            h,
            box_chart(&format!("{label} by point and class ({scheme})"), label, &names, &classes, &boxes, None),
            &format!("Box: 25% to 75%, thick line: median, whiskers: min and max over the replications; one box per class ({scheme})."),
        );
    }
    let jain = across::jain_boxes(s);
    if !jain.is_empty() && across::some_run_shares_the_link(metrics) {
        figure(
            h,
            box_chart(
                "Jain's fairness index by point",
                "Jain's index",
                &names,
                &["per run".to_string()],
                &jain,
                // An absolute scale: from 1/2 (or lower when needed) to 1.
                Some((jain.iter().map(|b| b.2.min).fold(0.5f64, f64::min).max(0.0) - 0.01, 1.01)),
            ),
            "Jain's index (Σx)²/(n·Σx²) of the connections' throughputs in each run; box over the replications.",
        );
    }
    page_plots(h, info, s, metrics, split);
    Ok(())
}

/// The lines, marks and bars of a time-sequence graph showing `shown` (the whole run's data
/// or a window of it) with the legend counts of `full`.
fn time_sequence_parts(full: &TimeSeq, shown: &TimeSeq) -> (Vec<Line>, Vec<Marks>, Vec<Bars>) {
    use plotters::style::RGBColor;
    let cause_color = |c: &str| match c {
        "queue" => RGBColor(220, 0, 0),
        "error" => RGBColor(128, 0, 160),
        "red" => RGBColor(230, 140, 0),
        _ => RGBColor(90, 90, 90),
    };
    let mut marks = vec![];
    for (cause, pts) in &full.drops {
        marks.push(Marks {
            label: format!("drop ({cause}): {}", pts.len()),
            color: cause_color(cause),
            points: shown.drops.get(cause).cloned().unwrap_or_default(),
            shape: Shape::Cross,
        });
    }
    let bars = vec![
        Bars {
            label: format!("data segment at the router: {}", full.new_segs.len()),
            color: RGBColor(0, 90, 180),
            bars: shown.new_segs.clone(),
        },
        Bars {
            label: String::new(),
            color: RGBColor(240, 130, 0),
            bars: shown.rexmt.clone(),
        },
    ];
    marks.push(Marks {
        label: format!("retransmission: {}", full.rexmt.len()),
        color: RGBColor(240, 130, 0),
        points: shown.rexmt.iter().map(|r| (r.0, r.1)).collect(),
        shape: Shape::Triangle,
    });
    let lines = vec![Line {
        label: "cumulative ACK released to the sender".into(),
        color: RGBColor(0, 150, 70),
        points: shown.acks.clone(),
        step: true,
        dashed: false,
    }];
    (lines, marks, bars)
}

/// Time plots of one run.
fn one_run(h: &mut String, run_dir: &Path, point: &str, rep: u64) -> Result<(), ReportError> {
    let _ = writeln!(
        h,
        "<h2>One run: {} / replication {rep}</h2>\n<p class=\"note\">Files in <code>runs/{}/{rep}/</code>. Choose another with <code>lasthop report DIR --run POINT/REPLICATION</code> or <code>report_run</code> in the spec.</p>",
        esc(point),
        esc(point)
    );
    let events_path = run_dir.join("events.csv");
    let events: Vec<EventRow> = if lasthop_analysis::files::columnar::exists(&events_path) {
        read_events(&events_path)?
    } else {
        vec![]
    };
    // Data flows: those carrying payload, in order of first appearance.
    let flows = series::data_flows(&events);
    if !events.iter().any(|e| e.event == Ev::Arrive) {
        h.push_str("<p class=\"note\">This run's events.csv has no <code>arrive</code> rows (log level other than <code>all</code>): the time-sequence graph and the queue plot show drops only.</p>\n");
    }
    for (fi, flow) in flows.iter().enumerate().take(8) {
        let ts = series::time_sequence(&events, flow);
        let (lines, marks, bars) = time_sequence_parts(&ts, &ts);
        figure(
            h,
            xy_chart(
                &format!("Time-sequence graph, connection {} ({})", fi + 1, flow),
                "time (s)",
                "relative sequence number (bytes)",
                &lines,
                &marks,
                &bars,
                None,
                None,
            ),
            "Vertical bars: data segments (sequence range) when they reached the router; orange triangles: retransmissions (the range was sent before); crosses: drops by cause (queue = router queue, error = link ARQ gave up, red = RED); green: the cumulative ACK as the link released it towards the sender.",
        );
        // A closer look at the first loss: 3 s before to 9 s after the first drop.
        if let Some((a, b)) = ts.first_drop_window() {
            let (zl, zm, zb) = time_sequence_parts(&ts, &ts.window(a, b));
            let ys = zl
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .chain(zm.iter().flat_map(|m| m.points.iter().map(|p| p.1)))
                .chain(
                    zb.iter()
                        .flat_map(|b| b.bars.iter().flat_map(|p| [p.1, p.2])),
                );
            let yr = plots::range(ys, false);
            figure(
                h,
                xy_chart(
                    &format!("Time-sequence graph, connection {}, around the first drop ({:.1} s to {:.1} s)", fi + 1, a, b),
                    "time (s)",
                    "relative sequence number (bytes)",
                    &zl,
                    &zm,
                    &zb,
                    Some((a, b)),
                    Some(yr),
                ),
                "The same graph, zoomed on the first drop (legend counts are for the whole run).",
            );
        }
    }
    // Queue length, one chart per direction.
    for (d, name) in [(0u8, "down (fixed → mobile)"), (1, "up (mobile → fixed)")] {
        let pts = series::queue_length(&events, d);
        if pts.is_empty() {
            continue;
        }
        let qmax = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        if qmax == 0.0 {
            let _ = writeln!(
                h,
                "<p class=\"note\">Router queue, {}: no packet waited in the queue (every packet found it empty and passed straight into the link).</p>",
                esc(name)
            );
            continue;
        }
        let line = Line {
            label: String::new(),
            color: color(d as usize),
            points: pts,
            step: true,
            dashed: false,
        };
        figure(
            h,
            xy_chart(
                &format!("Router queue length, {name}"),
                "time (s)",
                "packets in the router queue",
                &[line],
                &[],
                &[],
                None,
                Some((0.0, (qmax * 1.05).max(qmax + 1.0))),
            ),
            "Queue length in packets after the link events of each instant in this direction (step function; a packet that passes straight through an empty queue is not shown).",
        );
    }
    // Throughput over time per connection.
    let t_end = series::run_end(&events);
    if !flows.is_empty() && t_end > 0 {
        let bin = series::throughput_bin(t_end);
        let mut tl = vec![];
        for (fi, flow) in flows.iter().enumerate().take(8) {
            tl.push(Line {
                label: format!("connection {} ({flow})", fi + 1),
                color: color(fi),
                points: series::released_throughput(&events, flow, t_end, bin),
                step: false,
                dashed: false,
            });
        }
        figure(
            h,
            xy_chart("Throughput over time", "time (s)", "payload released by the link (bytes/s)", &tl, &[], &[], None, None),
            &format!("Payload bytes of each connection released by the link towards the receiver, in bins of {bin:.2} s."),
        );
    }
    // cwnd and ssthresh.
    let trace_path = run_dir.join("tcp_trace.csv");
    if let Some(trace) = tcp_trace::read_either(&trace_path)? {
        let mut lines = vec![];
        for (i, c) in series::cwnd_series(&trace, &flows).into_iter().enumerate() {
            lines.push(Line {
                label: format!("connection {} cwnd ({} {})", c.conn, c.host, c.key),
                color: color(i),
                points: c.cwnd,
                step: true,
                dashed: false,
            });
            if !c.ssthresh.is_empty() {
                lines.push(Line {
                    label: format!("connection {} ssthresh", c.conn),
                    color: color(i),
                    points: c.ssthresh,
                    step: true,
                    dashed: true,
                });
            }
        }
        if !lines.is_empty() {
            figure(
                h,
                xy_chart("Congestion window and slow-start threshold (simulation)", "time (s)", "cwnd, ssthresh (segments)", &lines, &[], &[], None, None),
                "From tcp_trace.csv: solid: cwnd, dashed: ssthresh (left out while it is above twice the largest cwnd, i.e. still 'infinite'), at every congestion-state change of each data sender.",
            );
        }
    }
    udp_plots(h, run_dir)
}

/// The UDP flows of one run (only when it has any): the spacing CDF and the one-way delay over
/// time, from `udp_packets.csv`.
fn udp_plots(h: &mut String, run_dir: &Path) -> Result<(), ReportError> {
    let path = run_dir.join("udp_packets.csv");
    if !path.exists() {
        return Ok(());
    }
    let rows = udp_packets::read(&path)?;
    let flows = series::udp_series(&rows);
    if flows.is_empty() {
        return Ok(());
    }
    let spacing: Vec<(String, Vec<(f64, f64)>)> = flows
        .iter()
        .filter(|f| !f.spacing_ms.is_empty())
        .map(|f| (format!("UDP flow {}", f.flow), series::cdf(&f.spacing_ms)))
        .collect();
    if !spacing.is_empty() {
        figure(
            h,
            cdf_chart("UDP spacing (jitter)", "spacing between consecutively received packets (ms)", &spacing),
            "From udp_packets.csv: the receiver's inter-arrival gaps of consecutively numbered datagrams (a pair with a loss between them is left out, as in seed 000).",
        );
    }
    let lines: Vec<Line> = flows
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.delay.is_empty())
        .map(|(i, f)| Line {
            label: format!("UDP flow {}", f.flow),
            color: color(i),
            points: f.delay.clone(),
            step: false,
            dashed: false,
        })
        .collect();
    if !lines.is_empty() {
        figure(
            h,
            xy_chart("UDP one-way delay", "receive time (s)", "one-way delay (ms)", &lines, &[], &[], None, None),
            "From udp_packets.csv: receiver capture time minus sender capture time of the same sequence number, at each datagram's arrival.",
        );
    }
    Ok(())
}

fn five_row(h: &mut String, label: &str, f: Option<&FiveNum>) {
    let _ = write!(h, "<tr><td class=\"l\">{}</td>", esc(label));
    match f {
        Some(f) => {
            let _ = writeln!(
                h,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                num(f.min),
                num(f.p25),
                num(f.median),
                num(f.p75),
                num(f.max),
                f.n
            );
        }
        None => h.push_str("<td>–</td><td>–</td><td>–</td><td>–</td><td>–</td><td>0</td></tr>\n"),
    }
}

const FIVE_HEAD: &str = "<tr><th class=\"l\">name</th><th>min</th><th>25%</th><th>50%</th><th>75%</th><th>max</th><th>n</th></tr>\n";

/// The appendix tables: per point, per class, min / 25% / 50% / 75% / max of every metric.
fn appendix(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    h.push_str("<h2>Tables per point (appendix layout)</h2>\n<p class=\"note\">As in the seeds' appendix tables: for each class of connections, min / 25% / median / 75% / max over the replications. Drops (q) router queue, (r) RED, (e) link error are of the data direction; the ACK direction's drops are counted together.</p>\n");
    for p in &s.points {
        point_tables(h, info, p);
    }
}

fn point_tables(h: &mut String, info: &ExperimentInfo, p: &PointSummary) {
    let _ = writeln!(
        h,
        "<details{}><summary>{} ({} runs)</summary>\n<div class=\"blocks\">",
        if info.points.len() <= 4 { " open" } else { "" },
        esc(&p.point),
        p.runs
    );
    for c in p.classes.iter().chain(std::iter::once(&p.all_connections)) {
        let title = if c.scheme == "all" {
            "all connections".to_string()
        } else {
            format!("{} ({})", c.class, c.scheme)
        };
        let _ = write!(
            h,
            "<div class=\"block\"><h4>{}</h4><table>{FIVE_HEAD}",
            esc(&title)
        );
        for &k in ConnMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    let _ = write!(h, "<div class=\"block\"><h4>per run</h4><table>{FIVE_HEAD}");
    for &k in RunMetric::ALL
        .iter()
        .filter(|m| !m.of_parallel_connections())
    {
        five_row(h, k.label(), p.run(k));
    }
    h.push_str("</table></div>\n");
    for c in &p.udp {
        let _ = write!(
            h,
            "<div class=\"block\"><h4>UDP {}</h4><table>{FIVE_HEAD}",
            esc(&c.class.to_string())
        );
        for &k in UdpMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    for c in &p.thin {
        let _ = write!(
            h,
            "<div class=\"block\"><h4>{} (thin streams)</h4><table>{FIVE_HEAD}",
            esc(&c.class.to_string())
        );
        for &k in ThinMetric::ALL {
            five_row(h, k.label(), c.get(k));
        }
        h.push_str("</table></div>\n");
    }
    for c in &p.pages {
        let page = c.class == lasthop_experiment::Class::Page;
        let _ = write!(
            h,
            "<div class=\"block\"><h4>{}</h4><table>{FIVE_HEAD}",
            if page {
                "page (response, total time; seed 002's summary numbers)".to_string()
            } else {
                format!("page class {}", c.class)
            }
        );
        if page {
            for &k in PageMetric::ALL {
                five_row(h, k.label(), c.get(k));
            }
        } else {
            for &k in PageClassMetric::ALL {
                five_row(h, k.label(), c.get(k));
            }
        }
        h.push_str("</table></div>\n");
    }
    h.push_str("</div></details>\n");
}
