//! Another experiment's results beside ours (`lasthop report DIR --beside OTHER`): the medians
//! of every point, class and metric the two have in common, e.g. a simulated twin beside its
//! emulated runs (the fidelity matrix, docs/sim-vs-emu.md).

use crate::html::{delta, esc, num};
use lasthop_experiment::stats::FiveNum;
use lasthop_experiment::summary::PointSummary;
use lasthop_experiment::Summary;
use std::fmt::Write as _;

/// The figures the short table shows, when both have them: (scheme, metric); scheme `ping` is
/// the first latency probe of the point.
const KEY: [(&str, &str); 9] = [
    ("all", "elapsed_s"),
    ("all", "throughput_Bps"),
    ("all", "rexmt_pkts"),
    ("all", "rtos"),
    ("all", "drops_queue"),
    ("ping", "rtt_p50_ms"),
    ("ping", "rtt_p99_ms"),
    ("ping", "probe_loss_rate"),
    ("run", "jain"),
];

/// Every (scheme, class, metric, five numbers) of a point, in the summary's order.
fn cells(p: &PointSummary) -> Vec<(String, String, &str, FiveNum)> {
    let mut v = vec![];
    for (m, f) in &p.all_connections.metrics {
        v.push(("all".into(), "all".into(), m.as_str(), *f));
    }
    for (m, f) in &p.run_metrics {
        v.push(("run".into(), "run".into(), m.as_str(), *f));
    }
    for c in p.every_class() {
        for (m, f) in &c.metrics {
            v.push((c.scheme.clone(), c.class.to_string(), m.as_str(), *f));
        }
    }
    v
}

pub(crate) fn beside(h: &mut String, label: &str, ours: &Summary, theirs: &Summary) {
    let _ = writeln!(
        h,
        "<h2 id=\"beside\">Beside {}</h2>\n<p class=\"note\">The medians over replications of the same point, class and metric in both; Δ is (ours − theirs) / theirs. Per-connection metrics (class <i>all</i>) are over every connection of every run.</p>",
        esc(label)
    );
    let mut short = String::from("<table><tr><th class=\"l\">point</th><th class=\"l\">class</th><th class=\"l\">metric</th><th>ours</th><th>theirs</th><th>Δ</th></tr>\n");
    let mut long = short.clone();
    let (mut n_short, mut n_long) = (0, 0);
    for p in &ours.points {
        let Some(q) = theirs.points.iter().find(|q| q.point == p.point) else {
            continue;
        };
        let theirs_cells = cells(q);
        let ours_cells = cells(p);
        let find = |cs: &[(String, String, &str, FiveNum)], s: &str, c: &str, m: &str| {
            cs.iter()
                .find(|(cs, cc, cm, _)| cs == s && cc == c && *cm == m)
                .map(|x| x.3)
        };
        let row = |t: &mut String, class: &str, m: &str, a: FiveNum, b: FiveNum| {
            let _ = writeln!(
                t,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&p.point),
                esc(class),
                esc(m),
                num(a.median),
                num(b.median),
                delta(a.median, b.median)
            );
        };
        for (scheme, m) in KEY {
            let hit = ours_cells
                .iter()
                .find(|(s, _, cm, _)| s == scheme && *cm == m)
                .and_then(|(s, c, cm, a)| {
                    find(&theirs_cells, s, c, cm).map(|b| (c.clone(), *a, b))
                });
            if let Some((c, a, b)) = hit {
                row(&mut short, &c, m, a, b);
                n_short += 1;
            }
        }
        for (s, c, m, a) in &ours_cells {
            if let Some(b) = find(&theirs_cells, s, c, m) {
                row(&mut long, c, m, *a, b);
                n_long += 1;
            }
        }
    }
    if n_long == 0 {
        h.push_str("<p>No point, class and metric in common.</p>\n");
        return;
    }
    short.push_str("</table>\n");
    long.push_str("</table>\n");
    if n_short > 0 {
        h.push_str(&short);
    }
    let _ = writeln!(
        h,
        "<details><summary>Every value in common ({n_long})</summary>{long}</details>"
    );
}
