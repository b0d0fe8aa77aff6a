//! The charts across replications: per point and split by the first dimension, the CDFs and
//! box plots, and the pages' response times.

use crate::error::ReportError;
use crate::html::{esc, figure};
use crate::plots::{self, box_chart, cdf_chart};
use crate::series::{self, across};
use lasthop_experiment::catalogue::{ConnMetric, PageClassMetric};
use lasthop_experiment::{ExperimentInfo, RunMetrics, Summary};
use std::fmt::Write as _;

/// The seed's overlays (Fig. A.1.x): for the points that differ only in the first dimension and
/// have one sending host each, that host's ACK-latency ECDFs in one figure, one curve per value
/// of the first dimension (zoomed to y = 0.65–1 as the seed's).
pub(crate) fn across_first_dimension(
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
pub(crate) fn across(
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
