//! The published values beside ours, as plain data: our five numbers of a reference's
//! (class, metric), the study's key metric, and the cells of the key figure (one per point and
//! class with a published value of that metric).

use lasthop_experiment::summary::class_order;
use lasthop_experiment::{FiveNum, PointRef, PointSummary, RefValue, Summary};

/// Our five numbers of `metric` for a reference's class: `all`, `run` (the run metrics), a
/// connection class, else a UDP flow, page, bottleneck or thin class of that name.
pub fn ours_of(p: &PointSummary, class: &str, metric: &str) -> Option<FiveNum> {
    if class == "all" {
        p.all_connections.metrics.get(metric).copied()
    } else if class == "run" {
        p.run_metrics.get(metric).copied()
    } else {
        p.every_class()
            .filter(|c| c.class.to_string() == class)
            .find_map(|c| c.metrics.get(metric))
            .copied()
    }
}

/// The seeds' headline metrics, in the order the key figure prefers them: seed 002's page
/// response time, seeds 000 and 001's elapsed time, seed 003's mean ACK latency and seed 004's
/// bottleneck utilisation.
pub const HEADLINE: [&str; 4] = ["response_s", "elapsed_s", "lat_mean_ms", "util_pct"];

/// The study's key metric: the first of [`HEADLINE`] with a published value, else the metric
/// published for the most cells (point × class), the first named on a tie. `None` without
/// references.
pub fn key_metric(refs: &[PointRef]) -> Option<String> {
    let published = || {
        refs.iter()
            .flat_map(|r| &r.values)
            .map(|(_, m, _)| m.as_str())
    };
    if let Some(m) = HEADLINE.iter().find(|h| published().any(|m| m == **h)) {
        return Some(m.to_string());
    }
    let mut counts: Vec<(&str, usize)> = vec![];
    for m in published() {
        match counts.iter_mut().find(|(k, _)| *k == m) {
            Some(c) => c.1 += 1,
            None => counts.push((m, 1)),
        }
    }
    let most = counts.iter().map(|c| c.1).max()?;
    Some(counts.iter().find(|c| c.1 == most)?.0.to_string())
}

/// One cell of the key figure: a point and class with a published value of the key metric,
/// and ours (`None` when the summaries have no such class or metric, e.g. no finished run).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub point: String,
    pub class: String,
    pub published: RefValue,
    pub ours: Option<FiveNum>,
}

/// The cells of `metric`, in reference (point) order and within a point in class order.
pub fn cells(refs: &[PointRef], s: &Summary, metric: &str) -> Vec<Cell> {
    let mut out = vec![];
    for r in refs {
        let p = s.points.iter().find(|p| p.point == r.point);
        let mut of_point: Vec<Cell> = r
            .values
            .iter()
            .filter(|(_, m, _)| m == metric)
            .map(|(c, _, v)| Cell {
                point: r.point.clone(),
                class: c.clone(),
                published: v.clone(),
                ours: p.and_then(|p| ours_of(p, c, metric)),
            })
            .collect();
        of_point.sort_by_key(|c| class_order(&c.class));
        out.extend(of_point);
    }
    out
}

/// The classes of `cells` in class order, each once (the key figure's legend).
pub fn classes(cells: &[Cell]) -> Vec<String> {
    let mut v: Vec<String> = vec![];
    for c in cells {
        if !v.contains(&c.class) {
            v.push(c.class.clone());
        }
    }
    v.sort_by_key(|c| class_order(c));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_experiment::catalogue::{
        BottleneckMetric, ConnMetric, Metric, PageMetric, ThinMetric,
    };

    fn rv(median: f64) -> RefValue {
        RefValue {
            min: None,
            p25: None,
            median,
            p75: None,
            max: None,
        }
    }

    fn pr(point: &str, values: &[(&str, &str, f64)]) -> PointRef {
        PointRef {
            point: point.into(),
            source: None,
            values: values
                .iter()
                .map(|(c, m, v)| (c.to_string(), m.to_string(), rv(*v)))
                .collect(),
        }
    }

    #[test]
    fn the_headline_metrics_are_the_catalogue_s() {
        assert_eq!(
            HEADLINE,
            [
                PageMetric::ResponseS.key(),
                ConnMetric::ElapsedS.key(),
                ThinMetric::LatMeanMs.key(),
                BottleneckMetric::UtilPct.key(),
            ]
        );
    }

    #[test]
    fn key_metric_is_a_headline_else_the_most_published() {
        assert_eq!(key_metric(&[]), None);
        // Seed 000: the elapsed time, though throughput has as many cells.
        let r = [pr(
            "e0",
            &[
                ("faster", "throughput_Bps", 1.0),
                ("faster", "elapsed_s", 2.0),
                ("slower", "throughput_Bps", 1.0),
                ("all", "elapsed_s", 2.0),
            ],
        )];
        assert_eq!(key_metric(&r).as_deref(), Some("elapsed_s"));
        // Seed 002: the page response time before the classes' elapsed times.
        let r = [pr(
            "blts",
            &[
                ("page", "total_s", 3.8),
                ("c1", "elapsed_s", 3.85),
                ("c2", "elapsed_s", 2.3),
                ("page", "response_s", 4.5),
            ],
        )];
        assert_eq!(key_metric(&r).as_deref(), Some("response_s"));
        // No headline metric: the most published, the first named on a tie.
        let r = [
            pr("a", &[("run", "rx_min", 1.0), ("run", "rx_max", 3.0)]),
            pr("b", &[("run", "rx_max", 1.0), ("run", "rx_min", 3.0)]),
        ];
        assert_eq!(key_metric(&r).as_deref(), Some("rx_min"));
        let r = [
            pr("a", &[("run", "rx_max", 1.0)]),
            pr("b", &[("run", "rx_min", 1.0), ("run", "rx_max", 3.0)]),
        ];
        assert_eq!(key_metric(&r).as_deref(), Some("rx_max"));
    }

    #[test]
    fn cells_in_point_then_class_order_without_ours_when_unsummarised() {
        let r = [
            pr("b", &[("c2", "elapsed_s", 2.0), ("c1", "elapsed_s", 1.0)]),
            pr("a", &[("c10", "elapsed_s", 3.0), ("c1", "drops", 0.0)]),
        ];
        let s = Summary {
            experiment: String::new(),
            quantiles: String::new(),
            points: vec![],
        };
        let c = cells(&r, &s, "elapsed_s");
        let got: Vec<(&str, &str, f64)> = c
            .iter()
            .map(|c| (c.point.as_str(), c.class.as_str(), c.published.median))
            .collect();
        assert_eq!(got, [("b", "c1", 1.0), ("b", "c2", 2.0), ("a", "c10", 3.0)]);
        assert!(c.iter().all(|c| c.ours.is_none()));
        assert_eq!(classes(&c), ["c1", "c2", "c10"]);
    }
}
