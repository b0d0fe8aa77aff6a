//! The matrix points: per point its coordinates, link spec, flows, finished runs and
//! incomplete connections; folded when the matrix is long or wide.

use crate::html::{esc, fold_wide, COLUMN_BUDGET};
use crate::series::across;
use lasthop_experiment::{ExperimentInfo, RunMetrics};
use std::fmt::Write as _;

/// Points beyond which the matrix is folded (seed 002's 30 points would push everything else
/// a page down).
const OPEN_POINTS: usize = 8;

/// The matrix table; folded under its heading when it has more than [`OPEN_POINTS`] points,
/// and when wider than the page, its point, finished-run and incomplete-connection columns
/// first.
pub(crate) fn matrix(h: &mut String, info: &ExperimentInfo, metrics: &[Vec<RunMetrics>]) {
    let incomplete = |p: &lasthop_experiment::PointInfo, m: &[RunMetrics]| {
        let bad = across::incomplete_connections(p.flows.len(), m);
        if bad == 0 {
            "0".to_string()
        } else {
            format!("<b style=\"color:#b00\">{bad}</b>")
        }
    };
    let mut full = String::from("<table><tr><th class=\"l\">point</th>");
    for d in &info.dimensions {
        let _ = write!(full, "<th class=\"l\">{}</th>", esc(d));
    }
    full.push_str(
        "<th class=\"l\">link spec</th><th class=\"l\">flows</th><th>finished runs</th><th>incomplete connections</th></tr>\n",
    );
    for (p, m) in info.points.iter().zip(metrics) {
        let _ = write!(full, "<tr><td class=\"l\">{}</td>", esc(&p.name));
        for d in &info.dimensions {
            let _ = write!(
                full,
                "<td class=\"l\">{}</td>",
                esc(p.coords.get(d).map(String::as_str).unwrap_or(""))
            );
        }
        let _ = writeln!(
            full,
            "<td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.link),
            p.flows
                .iter()
                .enumerate()
                .map(|(i, f)| format!("{i}: {}", esc(f)))
                .collect::<Vec<_>>()
                .join("<br>"),
            m.len(),
            incomplete(p, m)
        );
    }
    full.push_str("</table>\n");
    // Too many dimensions for the page: the point (whose name carries its coordinates) and
    // its runs.
    let mut narrow = String::from("<table><tr><th class=\"l\">point</th>");
    let dims = if info.dimensions.len() + 3 <= COLUMN_BUDGET {
        &info.dimensions[..]
    } else {
        &[]
    };
    for d in dims {
        let _ = write!(narrow, "<th class=\"l\">{}</th>", esc(d));
    }
    narrow.push_str("<th>finished runs</th><th>incomplete connections</th></tr>\n");
    for (p, m) in info.points.iter().zip(metrics) {
        let _ = write!(narrow, "<tr><td class=\"l\">{}</td>", esc(&p.name));
        for d in dims {
            let _ = write!(
                narrow,
                "<td class=\"l\">{}</td>",
                esc(p.coords.get(d).map(String::as_str).unwrap_or(""))
            );
        }
        let _ = writeln!(
            narrow,
            "<td>{}</td><td>{}</td></tr>",
            m.len(),
            incomplete(p, m)
        );
    }
    narrow.push_str("</table>\n");
    h.push_str("<h2>Matrix points</h2>\n");
    let folded = info.points.len() > OPEN_POINTS;
    if folded {
        // What the folded table would warn of stays in sight.
        let finished: usize = metrics.iter().map(Vec::len).sum();
        let bad: usize = info
            .points
            .iter()
            .zip(metrics)
            .map(|(p, m)| across::incomplete_connections(p.flows.len(), m))
            .sum();
        let _ = writeln!(
            h,
            "<details><summary>The {} points: coordinates, link spec, flows ({finished} runs finished; {})</summary>",
            info.points.len(),
            if bad == 0 {
                "no incomplete connection".to_string()
            } else {
                format!("<b style=\"color:#b00\">{bad} incomplete connections</b>")
            }
        );
    }
    fold_wide(h, &narrow, &full, "Matrix points");
    if folded {
        h.push_str("</details>\n");
    }
}
