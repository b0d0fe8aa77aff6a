//! Published values beside ours: the compact table of elapsed-time medians per class and
//! every published value with our five numbers (folded: the key figure leads).

use crate::html::{delta, esc, fold_wide, num, table_columns, COLUMN_BUDGET};
use crate::series::reference::{key_metric, ours_of};
use lasthop_experiment::catalogue::{label_of, ConnMetric, Metric};
use lasthop_experiment::summary::class_order;
use lasthop_experiment::{ExperimentInfo, Summary};
use std::fmt::Write as _;

/// Published values (the spec's `[reference.POINT]`) beside ours.
pub(crate) fn references(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    if info.references.is_empty() {
        return;
    }
    h.push_str("<h2 id=\"references\">Published values beside ours</h2>\n<p class=\"note\">From the spec's <code>[reference.POINT]</code> tables. Δ is (ours − published) / published, of the medians.</p>\n");
    elapsed_table(h, info, s);
    every_value(h, info, s);
}

/// Compact: the elapsed-time medians of every class with a published one, a point per row;
/// when wider than the page, one row per point and class instead (or, when the key figure
/// shows them already, a pointer to it), with the wide table folded.
fn elapsed_table(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    let elapsed = ConnMetric::ElapsedS.key();
    let mut classes: Vec<String> = vec![];
    for r in &info.references {
        for (c, m, _) in &r.values {
            if m == elapsed && !classes.contains(c) {
                classes.push(c.clone());
            }
        }
    }
    classes.sort_by_key(|c| class_order(c));
    if classes.is_empty() {
        return;
    }
    let mut full = String::from("<table><tr><th class=\"l\" rowspan=\"2\">point</th>");
    for c in &classes {
        let name = if c == "all" {
            "all (otime)"
        } else {
            c.as_str()
        };
        let _ = write!(
            full,
            "<th colspan=\"3\">{} elapsed time, median (s)</th>",
            esc(name)
        );
    }
    full.push_str("<th class=\"l\" rowspan=\"2\">source</th></tr>\n<tr>");
    for _ in &classes {
        full.push_str("<th>published</th><th>ours</th><th>Δ</th>");
    }
    full.push_str("</tr>\n");
    let mut long = String::from("<table><tr><th class=\"l\">point</th><th class=\"l\">class</th><th>published</th><th>ours</th><th>Δ</th></tr>\n");
    for r in &info.references {
        let Some(p) = s.points.iter().find(|p| p.point == r.point) else {
            continue;
        };
        let _ = write!(full, "<tr><td class=\"l\">{}</td>", esc(&r.point));
        for c in &classes {
            let pubv = r.values.iter().find(|(rc, m, _)| rc == c && m == elapsed);
            let ours = ours_of(p, c, elapsed);
            match (pubv, ours) {
                (Some((_, _, v)), Some(f)) => {
                    let _ = write!(
                        full,
                        "<td>{}</td><td>{}</td><td>{:+.1}%</td>",
                        num(v.median),
                        num(f.median),
                        (f.median - v.median) / v.median * 100.0
                    );
                }
                (Some((_, _, v)), None) => {
                    let _ = write!(full, "<td>{}</td><td>–</td><td>–</td>", num(v.median));
                }
                (None, Some(f)) => {
                    let _ = write!(full, "<td></td><td>{}</td><td></td>", num(f.median));
                }
                (None, None) => full.push_str("<td></td><td></td><td></td>"),
            }
            if let Some((_, _, v)) = pubv {
                let _ = writeln!(
                    long,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&r.point),
                    esc(c),
                    num(v.median),
                    ours.map_or("–".into(), |f| num(f.median)),
                    ours.map_or("–".into(), |f| delta(f.median, v.median))
                );
            }
        }
        let _ = writeln!(
            full,
            "<td class=\"l\">{}</td></tr>",
            esc(r.source.as_deref().unwrap_or(""))
        );
    }
    full.push_str("</table>\n");
    long.push_str("</table>\n");
    let narrow = if key_metric(&info.references).as_deref() == Some(elapsed) {
        "<p class=\"note\">The elapsed-time medians, published and ours, are the key figure's cells (above).</p>\n".to_string()
    } else {
        long
    };
    fold_wide(h, &narrow, &full, "Elapsed-time medians per point");
}

/// Every published value, with our five numbers; open when short and within the page.
fn every_value(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    const HEAD: &str = "<table><tr><th class=\"l\" rowspan=\"2\">point</th><th class=\"l\" rowspan=\"2\">class</th><th class=\"l\" rowspan=\"2\">metric</th><th colspan=\"5\">published</th><th colspan=\"5\">ours</th><th rowspan=\"2\">Δ median</th><th class=\"l\" rowspan=\"2\">source</th></tr>\n";
    let rows: usize = info.references.iter().map(|r| r.values.len()).sum();
    let open = rows <= 40 && table_columns(HEAD) <= COLUMN_BUDGET;
    let _ = writeln!(
        h,
        "<details{}><summary>Every published value ({rows}), with our five numbers</summary>",
        if open { " open" } else { "" }
    );
    h.push_str(HEAD);
    h.push_str("<tr>");
    for _ in 0..2 {
        h.push_str("<th>min</th><th>25%</th><th>50%</th><th>75%</th><th>max</th>");
    }
    h.push_str("</tr>\n");
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
                esc(label_of(metric)),
                o(v.min),
                o(v.p25),
                num(v.median),
                o(v.p75),
                o(v.max)
            );
            match ours {
                Some(f) => {
                    let _ = write!(
                        h,
                        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                        num(f.min),
                        num(f.p25),
                        num(f.median),
                        num(f.p75),
                        num(f.max),
                        delta(f.median, v.median)
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
