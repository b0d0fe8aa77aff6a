//! The study's key figure, first in the report: for its key metric (`series::reference::
//! key_metric`), ours against the published value, one mark per point and class, with the
//! cells' numbers in a narrow table below.

use crate::html::{delta, esc, figure, num, num_or_dash};
use crate::plots::{color, range, xy_chart_sized, Bars, Line, Marks, Shape};
use crate::series::reference::{cells, classes, key_metric};
use lasthop_experiment::catalogue::label_of;
use lasthop_experiment::{ExperimentInfo, Summary};
use plotters::style::RGBColor;
use std::fmt::Write as _;

/// Cells up to which the key figure's table is open.
const OPEN_CELLS: usize = 16;

/// The key figure and its table; nothing when the spec has no published values.
pub(crate) fn key_figure(h: &mut String, info: &ExperimentInfo, s: &Summary) {
    let Some(metric) = key_metric(&info.references) else {
        return;
    };
    let cells = cells(&info.references, s, &metric);
    let label = label_of(&metric);
    let _ = writeln!(
        h,
        "<h2 id=\"key-figure\">Key figure: {}, ours beside the published values</h2>\n<p class=\"note\">The study's headline metric among those the spec's <code>[reference.POINT]</code> tables publish (seed 002's page response time, seeds 000 and 001's elapsed time, seed 003's mean ACK latency, seed 004's bottleneck utilisation; else the metric published for the most cells). Every published value, with our five numbers, is under <a href=\"#references\">Published values beside ours</a>.</p>",
        esc(label)
    );
    let classes = classes(&cells);
    let mut marks = vec![];
    let mut bars = vec![];
    for (i, c) in classes.iter().enumerate() {
        let of: Vec<_> = cells
            .iter()
            .filter(|x| &x.class == c)
            .filter_map(|x| x.ours.map(|o| (x.published.median, o)))
            .collect();
        marks.push(Marks {
            label: c.clone(),
            color: color(i),
            points: of.iter().map(|(p, o)| (*p, o.median)).collect(),
            shape: Shape::Dot,
        });
        bars.push(Bars {
            label: String::new(),
            color: color(i),
            bars: of.iter().map(|(p, o)| (*p, o.p25, o.p75)).collect(),
        });
    }
    if marks.iter().all(|m| m.points.is_empty()) {
        h.push_str("<p class=\"note\">No finished run has this metric yet.</p>\n");
    } else {
        // One scale for both axes, so that the diagonal is ours = published.
        let vals = cells.iter().flat_map(|c| {
            let o = c.ours.map_or([f64::NAN; 3], |o| [o.p25, o.median, o.p75]);
            [c.published.median, o[0], o[1], o[2]]
        });
        let (lo, hi) = range(vals, false);
        let diagonal = Line {
            label: "ours = published".into(),
            color: RGBColor(170, 170, 170),
            points: vec![(lo, lo), (hi, hi)],
            step: false,
            dashed: true,
        };
        figure(
            h,
            xy_chart_sized(
                (760, 600),
                &format!("{label}: ours against the published value"),
                &format!("published median: {label}"),
                &format!("our median: {label}"),
                &[diagonal],
                &marks,
                &bars,
                Some((lo, hi)),
                Some((lo, hi)),
            ),
            &format!(
                "One mark per cell (a point and class with a published {label}), coloured by class: x the published median, y our median over the replications, the bar our 25% to 75%. On the dashed line ours equal the published value."
            ),
        );
    }
    let _ = writeln!(
        h,
        "<details{}><summary>The figure's {} cells</summary>",
        if cells.len() <= OPEN_CELLS {
            " open"
        } else {
            ""
        },
        cells.len()
    );
    h.push_str("<table><tr><th class=\"l\">point</th><th class=\"l\">class</th><th>published</th><th>ours 25%</th><th>ours 50%</th><th>ours 75%</th><th>Δ median</th></tr>\n");
    for c in &cells {
        let o = c.ours.as_ref();
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.point),
            esc(&c.class),
            num(c.published.median),
            num_or_dash(o.map(|f| f.p25)),
            num_or_dash(o.map(|f| f.median)),
            num_or_dash(o.map(|f| f.p75)),
            o.map_or("–".into(), |f| delta(f.median, c.published.median))
        );
    }
    h.push_str("</table></details>\n");
}
