//! The summary tables across points: the seeds' class table (elapsed-time quartiles and drops
//! per class, with a narrow table of its per-point columns first when it is wider than the
//! page) and seed 002's page table.

use crate::html::{esc, fold_wide, num, num_or_dash};
use crate::series::across;
use lasthop_experiment::catalogue::{ConnMetric, RunMetric};
use lasthop_experiment::{ExperimentInfo, FiveNum, PointSummary, Summary};
use std::fmt::Write as _;

/// The classes whose median elapsed time the narrow table keeps (beside its six per-point
/// columns and the point's name and runs, within the column budget).
const NARROW_CLASSES: usize = 2;

fn med(m: Option<&FiveNum>) -> String {
    m.map_or("–".to_string(), |f| num(f.median))
}

/// The per-point columns both tables end with: otime, Jain, σ/μ, utilisation, queue, Σ max
/// drops.
fn point_cells(p: &PointSummary, scheme: &str) -> String {
    format!(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        med(p.all_connections.get(ConnMetric::ElapsedS)),
        med(p.run(RunMetric::Jain)),
        med(p.run(RunMetric::ThroughputCov)),
        med(p.run(RunMetric::UtilDown)),
        med(p.run(RunMetric::QueueMeanDown)),
        num(across::sum_of_max_drops(p, scheme))
    )
}

/// The headings of [`point_cells`], each with `attr` (a `rowspan`, or nothing).
fn point_heads(attr: &str) -> String {
    [
        "otime (s)",
        "Jain",
        "σ/μ",
        "util. down",
        "queue mean down (pkts)",
        "Σ max drops",
    ]
    .iter()
    .map(|t| format!("<th{attr}>{t}</th>"))
    .collect()
}

/// The seeds' summary-table layout: one row per point; per class elapsed 25/50/75 and median
/// drops q/r/a/e; otime; fairness; utilisation.
pub(crate) fn overview(h: &mut String, info: &ExperimentInfo, s: &Summary) {
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
    let mut full = String::from(
        "<table><tr><th class=\"l\" rowspan=\"2\">point</th><th rowspan=\"2\">runs</th>",
    );
    for c in &classes {
        let _ = write!(full, "<th colspan=\"4\">{}</th>", esc(c));
    }
    full.push_str(&point_heads(" rowspan=\"2\""));
    full.push_str("</tr><tr>");
    for _ in &classes {
        full.push_str("<th>25%</th><th>50%</th><th>75%</th><th>drops q/r/a/e</th>");
    }
    full.push_str("</tr>\n");
    for p in &s.points {
        let _ = write!(
            full,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            esc(&p.point),
            p.runs
        );
        for c in &classes {
            match across::scheme_summaries(p, scheme).find(|x| x.class.to_string() == *c) {
                Some(cs) => {
                    let e = cs.get(ConnMetric::ElapsedS);
                    let _ = write!(
                        full,
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
                None => full.push_str("<td>–</td><td>–</td><td>–</td><td>–</td>"),
            }
        }
        full.push_str(&point_cells(p, scheme));
    }
    full.push_str("</table>\n");
    // The narrow table: the per-point columns, and the classes' median elapsed times while
    // they fit.
    let kept = if classes.len() <= NARROW_CLASSES {
        &classes[..]
    } else {
        &[]
    };
    let mut narrow = String::from("<table><tr><th class=\"l\">point</th><th>runs</th>");
    for c in kept {
        let _ = write!(narrow, "<th>{} 50% (s)</th>", esc(c));
    }
    narrow.push_str(&point_heads(""));
    narrow.push_str("</tr>\n");
    for p in &s.points {
        let _ = write!(
            narrow,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            esc(&p.point),
            p.runs
        );
        for c in kept {
            let e = across::scheme_summaries(p, scheme)
                .find(|x| x.class.to_string() == *c)
                .and_then(|cs| cs.get(ConnMetric::ElapsedS));
            let _ = write!(narrow, "<td>{}</td>", med(e));
        }
        narrow.push_str(&point_cells(p, scheme));
    }
    narrow.push_str("</table>\n");
    fold_wide(h, &narrow, &full, "The summary per class");
}

/// Seed 002's summary table (its §6 tables) for the points with pages; nothing without pages.
pub(crate) fn page_overview(h: &mut String, s: &Summary) {
    let rows: Vec<_> = s
        .points
        .iter()
        .filter_map(|p| across::page_row(p).map(|r| (p, r)))
        .collect();
    if rows.is_empty() {
        return;
    }
    h.push_str("<h2>Pages (seed 002's summary tables)</h2>\n<p class=\"note\">Per point, medians over the pages: response time (client side, first SYN sent to the ACK of the client's last FIN received), total time (server side, the seed's \"total time of a basic test\"), server-side throughput of the main object (class c1), of the fastest (c2) and of the slowest (cN) in-line; drops (c) / (e) median: the largest per-class median of the data direction's queue / error drops; Σ max drops: over the classes, the sum of each drop counter's largest value (queue and error, both directions).</p>\n<table><tr><th class=\"l\">point</th><th>runs</th><th>response (s)</th><th>total (s)</th><th>thro. (m) (B/s)</th><th>fastest thro. (i)</th><th>slowest thro. (i)</th><th>drops (c) median</th><th>drops (e) median</th><th>Σ max drops</th></tr>\n");
    for (p, r) in rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.point),
            p.runs,
            num_or_dash(r.response_s),
            num_or_dash(r.total_s),
            num_or_dash(r.main_bytes_per_s),
            num_or_dash(r.fastest_bytes_per_s),
            num_or_dash(r.slowest_bytes_per_s),
            num_or_dash(r.drops_queue_med),
            num_or_dash(r.drops_error_med),
            num_or_dash(r.sum_max_drops)
        );
    }
    h.push_str("</table>\n");
}
