//! The data of the charts across replications: per-point values of every connection (for the
//! CDFs), their split by the first matrix dimension, and the box-plot five numbers per point
//! and class (from the summaries); and the two numbers the summary tables derive (incomplete
//! connections, seed 002's sum of maximum drops).

use lasthop_experiment::catalogue::{ConnMetric, Metric, PageClassMetric, PageMetric, RunMetric};
use lasthop_experiment::info::PointInfo;
use lasthop_experiment::summary::{class_order, ClassSummary};
use lasthop_experiment::{Class, ConnMetrics, FiveNum, PointSummary, RunMetrics, Summary};

/// A per-connection value to plot.
pub type ConnValue = fn(&ConnMetrics) -> f64;

/// Per point, in order (`names[i]` with `metrics[i]`, the point's finished runs): the point's
/// name and `f` of every connection of every run, runs in order.
pub fn conn_values(
    names: &[String],
    metrics: &[Vec<RunMetrics>],
    f: ConnValue,
) -> Vec<(String, Vec<f64>)> {
    names
        .iter()
        .zip(metrics)
        .map(|(n, runs)| {
            (
                n.clone(),
                runs.iter().flat_map(|r| r.conns.iter().map(f)).collect(),
            )
        })
        .collect()
}

/// One chart of the CDFs split by a dimension: the points with `dim` = `value`, each labelled
/// by its other coordinates joined with `-`.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub value: String,
    pub series: Vec<(String, Vec<f64>)>,
}

/// `per_point` (in the order of `points`, as [`conn_values`] gives it) split into one panel
/// per value of dimension `dim`, values in order of first appearance.
pub fn split_by_dimension(
    points: &[PointInfo],
    dim: &str,
    per_point: &[(String, Vec<f64>)],
) -> Vec<Panel> {
    let mut values: Vec<String> = vec![];
    for p in points {
        let v = p.coords.get(dim).cloned().unwrap_or_default();
        if !values.contains(&v) {
            values.push(v);
        }
    }
    values
        .into_iter()
        .map(|v| {
            let series = points
                .iter()
                .zip(per_point)
                .filter(|(p, _)| p.coords.get(dim) == Some(&v))
                .map(|(p, (_, vals))| {
                    let rest: Vec<&str> = p
                        .coords
                        .iter()
                        .filter(|(k, _)| *k != dim)
                        .map(|(_, x)| x.as_str())
                        .collect();
                    (rest.join("-"), vals.clone())
                })
                .collect();
            Panel { value: v, series }
        })
        .collect()
}

/// The class summaries of `scheme` in a point: its connection classes, or for scheme `page`
/// the page classes `c1` ... `cN` (not the class `page`).
pub fn scheme_summaries<'a>(
    p: &'a PointSummary,
    scheme: &'a str,
) -> impl Iterator<Item = &'a lasthop_experiment::summary::ClassSummary> + 'a {
    p.classes
        .iter()
        .chain(p.pages.iter().filter(|c| c.class != Class::Page))
        .filter(move |c| c.scheme == scheme)
}

/// The classes of `scheme` found in any point, in class order (faster, slower, first, second,
/// main, then numbered classes by number).
pub fn scheme_classes(s: &Summary, scheme: &str) -> Vec<String> {
    let mut classes: Vec<String> = vec![];
    for p in &s.points {
        for c in scheme_summaries(p, scheme) {
            let name = c.class.to_string();
            if !classes.contains(&name) {
                classes.push(name);
            }
        }
    }
    classes.sort_by_key(|c| class_order(c));
    classes
}

/// One box: (point index, class index, the five numbers over the replications).
pub type BoxStat = (usize, usize, FiveNum);

/// The boxes of metric `key` of each class of `scheme` in each point; class indices are into
/// `classes` (a class not in it, or without the metric, has no box).
pub fn class_boxes(s: &Summary, scheme: &str, classes: &[String], key: ConnMetric) -> Vec<BoxStat> {
    let mut boxes = vec![];
    for (g, p) in s.points.iter().enumerate() {
        for c in scheme_summaries(p, scheme) {
            if let (Some(ci), Some(f)) = (
                classes.iter().position(|x| *x == c.class.to_string()),
                c.get(key),
            ) {
                boxes.push((g, ci, *f));
            }
        }
    }
    boxes
}

/// The box of Jain's index of each point that has one (class index 0).
pub fn jain_boxes(s: &Summary) -> Vec<BoxStat> {
    s.points
        .iter()
        .enumerate()
        .filter_map(|(g, p)| p.run(RunMetric::Jain).map(|f| (g, 0, *f)))
        .collect()
}

/// Whether some run has more than one connection (else fairness says nothing).
pub fn some_run_shares_the_link(metrics: &[Vec<RunMetrics>]) -> bool {
    metrics
        .iter()
        .any(|runs| runs.iter().any(|r| r.conns.len() > 1))
}

/// A per-page value to plot (`None`: unknown, left out).
pub type PageValue = fn(&lasthop_experiment::metrics::PageMetrics) -> Option<f64>;

/// Per point, in order (`names[i]` with `metrics[i]`): the point's name and `f` of every page of
/// every run, runs in order (unknown values left out); the series behind the response-time
/// CDFs. Empty when no run has a page.
pub fn page_values(
    names: &[String],
    metrics: &[Vec<RunMetrics>],
    f: PageValue,
) -> Vec<(String, Vec<f64>)> {
    if !metrics.iter().flatten().any(|r| !r.pages.is_empty()) {
        return vec![];
    }
    names
        .iter()
        .zip(metrics)
        .map(|(n, runs)| {
            (
                n.clone(),
                runs.iter()
                    .flat_map(|r| r.pages.iter().filter_map(f))
                    .collect(),
            )
        })
        .collect()
}

/// Seed 002's page classes (`c1` ... `cN`, scheme `page`) found in any point, in class order.
pub fn page_classes(s: &Summary) -> Vec<String> {
    let mut classes: Vec<String> = vec![];
    for p in &s.points {
        for c in p.pages.iter().filter(|c| c.class != Class::Page) {
            let name = c.class.to_string();
            if !classes.contains(&name) {
                classes.push(name);
            }
        }
    }
    classes.sort_by_key(|c| class_order(c));
    classes
}

/// The boxes of page metric `key` of each page class in each point; class indices are into
/// `classes` ([`page_classes`]).
pub fn page_boxes(s: &Summary, classes: &[String], key: PageClassMetric) -> Vec<BoxStat> {
    let mut boxes = vec![];
    for (g, p) in s.points.iter().enumerate() {
        for c in &p.pages {
            if let (Some(ci), Some(f)) = (
                classes.iter().position(|x| *x == c.class.to_string()),
                c.get(key),
            ) {
                boxes.push((g, ci, *f));
            }
        }
    }
    boxes
}

/// One row of seed 002's summary tables (its §6 tables, extract §4.2) for a point with pages:
/// medians of the response time, the total time, the main object's (class 1), the fastest
/// (class 2) and the slowest (the last class) in-line's throughput; the drops (c) and (e)
/// medians and Σ maximum drops (class `page`'s derived numbers). `None` without pages.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRow {
    pub response_s: Option<f64>,
    pub total_s: Option<f64>,
    pub main_bytes_per_s: Option<f64>,
    pub fastest_bytes_per_s: Option<f64>,
    pub slowest_bytes_per_s: Option<f64>,
    pub drops_queue_med: Option<f64>,
    pub drops_error_med: Option<f64>,
    pub sum_max_drops: Option<f64>,
}

pub fn page_row(p: &PointSummary) -> Option<PageRow> {
    let page = p.pages.iter().find(|c| c.class == Class::Page)?;
    let med = |c: &ClassSummary, m: PageMetric| c.get(m).map(|f| f.median);
    let tput = |c: &ClassSummary| c.get(PageClassMetric::ThroughputBps).map(|f| f.median);
    let class = |n: u64| p.pages.iter().find(|c| c.class == Class::C(n));
    let last = p
        .pages
        .iter()
        .filter_map(|c| match c.class {
            Class::C(n) if n >= 2 => Some((n, c)),
            _ => None,
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, c)| c);
    Some(PageRow {
        response_s: med(page, PageMetric::ResponseS),
        total_s: med(page, PageMetric::TotalS),
        main_bytes_per_s: class(1).and_then(tput),
        fastest_bytes_per_s: class(2).and_then(tput),
        slowest_bytes_per_s: last.and_then(tput),
        drops_queue_med: med(page, PageMetric::DropsQueueMed),
        drops_error_med: med(page, PageMetric::DropsErrorMed),
        sum_max_drops: med(page, PageMetric::SumMaxDrops),
    })
}

/// Of a point with `flows` scenario flows, over its runs: the connections without the SYN or
/// the ACK of the client's FIN, and the flows with no connection at all (their elapsed time
/// ends at their last packet).
pub fn incomplete_connections(flows: usize, runs: &[RunMetrics]) -> usize {
    runs.iter()
        .map(|r| {
            r.conns.iter().filter(|c| !c.complete).count()
                + flows.saturating_sub(r.conns.iter().filter(|c| c.flow.is_some()).count())
        })
        .sum()
}

/// Seed 002's "Σ maximum drops" of a point: over the classes of `scheme`, the sum of each
/// class's largest drop counts (queue, RED, other AQM and error drops of the data direction, and the ACK
/// direction's drops; for the page classes queue and error drops of both directions, which
/// is class `page`'s `sum_max_drops`).
pub fn sum_of_max_drops(p: &PointSummary, scheme: &str) -> f64 {
    scheme_summaries(p, scheme)
        .map(|c| {
            [
                ConnMetric::DropsQueue.key(),
                ConnMetric::DropsRed.key(),
                ConnMetric::DropsAqm.key(),
                ConnMetric::DropsError.key(),
                ConnMetric::AckDrops.key(),
                PageClassMetric::AckDropsQueue.key(),
                PageClassMetric::AckDropsError.key(),
            ]
            .iter()
            .filter_map(|k| c.metrics.get(*k).map(|f| f.max))
            .sum::<f64>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(elapsed_s: f64) -> ConnMetrics {
        ConnMetrics {
            elapsed_s,
            ..ConnMetrics::default()
        }
    }

    fn run(elapsed: &[f64]) -> RunMetrics {
        RunMetrics {
            conns: elapsed.iter().map(|e| conn(*e)).collect(),
            ..RunMetrics::default()
        }
    }

    fn five(median: f64) -> FiveNum {
        FiveNum {
            n: 3,
            min: median - 2.0,
            p25: median - 1.0,
            median,
            p75: median + 1.0,
            max: median + 2.0,
            mean: median,
        }
    }

    fn class(scheme: &str, name: &str, metrics: &[(&str, f64)]) -> ClassSummary {
        let mut c = ClassSummary {
            scheme: scheme.into(),
            class: name.parse().unwrap(),
            n: 3,
            metrics: Default::default(),
        };
        for (k, m) in metrics {
            c.metrics.insert(k.to_string(), five(*m));
        }
        c
    }

    fn point(name: &str, classes: Vec<ClassSummary>, jain: Option<f64>) -> PointSummary {
        let mut p = PointSummary {
            point: name.into(),
            coords: Default::default(),
            runs: 3,
            classes,
            all_connections: class("all", "all", &[]),
            run_metrics: Default::default(),
            udp: vec![],
            pings: vec![],
            pages: vec![],
            bottleneck: vec![],
            thin: vec![],
        };
        if let Some(j) = jain {
            p.run_metrics.insert("jain".into(), five(j));
        }
        p
    }

    #[test]
    fn page_series_by_hand() {
        use lasthop_experiment::metrics::PageMetrics;
        let page = |r: Option<f64>| PageMetrics {
            response_s: r,
            ..PageMetrics::default()
        };
        let with = |pages: Vec<PageMetrics>| RunMetrics {
            pages,
            ..RunMetrics::default()
        };
        let names = ["low".to_string(), "high".to_string()];
        // low: runs with 4.5 s and (unknown, 5.5 s); high: one run of 9 s
        let metrics = vec![
            vec![
                with(vec![page(Some(4.5))]),
                with(vec![page(None), page(Some(5.5))]),
            ],
            vec![with(vec![page(Some(9.0))])],
        ];
        assert_eq!(
            page_values(&names, &metrics, |p| p.response_s),
            [
                ("low".to_string(), vec![4.5, 5.5]),
                ("high".to_string(), vec![9.0])
            ]
        );
        let none = vec![vec![run(&[1.0])], vec![]];
        assert!(page_values(&names, &none, |p| p.response_s).is_empty());
        // Boxes of the page classes, c1 < c2 < c10, without the class `page`.
        let mut a = point("low", vec![], None);
        a.pages = vec![
            class("page", "c10", &[("elapsed_s", 7.0)]),
            class("page", "c1", &[("elapsed_s", 4.0)]),
            class("page", "page", &[("response_s", 5.0)]),
        ];
        let mut b = point("high", vec![], None);
        b.pages = vec![class("page", "c2", &[("elapsed_s", 3.0)])];
        let s = Summary {
            experiment: "x".into(),
            quantiles: String::new(),
            points: vec![a, b],
        };
        let classes = page_classes(&s);
        assert_eq!(classes, ["c1", "c2", "c10"]);
        let boxes = page_boxes(&s, &classes, PageClassMetric::ElapsedS);
        let medians: Vec<(usize, usize, f64)> =
            boxes.iter().map(|(g, c, f)| (*g, *c, f.median)).collect();
        assert_eq!(medians, [(0, 2, 7.0), (0, 0, 4.0), (1, 1, 3.0)]);
        // The summary-table row: the slowest in-line is the last class (c3 here).
        let mut p = point("low", vec![], None);
        p.pages = vec![
            class(
                "page",
                "c1",
                &[("throughput_Bps", 1600.0), ("drops_error", 1.0)],
            ),
            class(
                "page",
                "c2",
                &[("throughput_Bps", 900.0), ("ack_drops_error", 0.0)],
            ),
            class("page", "c3", &[("throughput_Bps", 700.0)]),
            class(
                "page",
                "page",
                &[
                    ("response_s", 4.5),
                    ("total_s", 3.9),
                    ("sum_max_drops", 11.0),
                ],
            ),
        ];
        // Scheme `page` names the page classes for the summary table and the boxes.
        assert_eq!(
            scheme_summaries(&p, "page")
                .map(|c| c.class.to_string())
                .collect::<Vec<_>>(),
            ["c1", "c2", "c3"]
        );
        // maxima (median + 2 here): c1's error drops 3, c2's ACK-direction error drops 2
        assert_eq!(sum_of_max_drops(&p, "page"), 5.0);
        let r = page_row(&p).unwrap();
        assert_eq!(
            (
                r.main_bytes_per_s,
                r.fastest_bytes_per_s,
                r.slowest_bytes_per_s
            ),
            (Some(1600.0), Some(900.0), Some(700.0))
        );
        assert_eq!((r.response_s, r.total_s), (Some(4.5), Some(3.9)));
        assert_eq!((r.sum_max_drops, r.drops_error_med), (Some(11.0), None));
        assert_eq!(page_row(&point("x", vec![], None)), None);
    }

    #[test]
    fn values_per_point_by_hand() {
        let names = ["e0".to_string(), "r1".to_string()];
        // e0: two runs of 2 and 1 connections; r1: one run of 2
        let metrics = vec![
            vec![run(&[50.0, 55.0]), run(&[40.0])],
            vec![run(&[60.0, 70.0])],
        ];
        let v = conn_values(&names, &metrics, |c| c.elapsed_s);
        assert_eq!(
            v,
            [
                ("e0".to_string(), vec![50.0, 55.0, 40.0]),
                ("r1".to_string(), vec![60.0, 70.0])
            ]
        );
        assert!(some_run_shares_the_link(&metrics));
        assert!(!some_run_shares_the_link(&[vec![run(&[1.0])], vec![]]));
    }

    #[test]
    fn incomplete_connections_and_max_drops_by_hand() {
        let c = |flow: Option<usize>, complete: bool| ConnMetrics {
            flow,
            complete,
            ..ConnMetrics::default()
        };
        // 2 flows. Run 0: both complete. Run 1: one incomplete, the other flow has no
        // connection (and a connection matching no flow). Run 2: no connection at all.
        let runs = [
            RunMetrics {
                conns: vec![c(Some(0), true), c(Some(1), true)],
                ..RunMetrics::default()
            },
            RunMetrics {
                conns: vec![c(Some(0), false), c(None, true)],
                ..RunMetrics::default()
            },
            RunMetrics::default(),
        ];
        assert_eq!(incomplete_connections(2, &runs[..1]), 0);
        assert_eq!(incomplete_connections(2, &runs), 4);
        // faster: largest drops q 3 (five(1): max 3), r -, e 4 (max), ACK 2; slower: q 5;
        // the flow scheme's classes are not counted.
        let p = point(
            "a",
            vec![
                class(
                    "faster-slower",
                    "faster",
                    &[
                        ("drops_queue", 1.0),
                        ("drops_error", 2.0),
                        ("ack_drops", 0.0),
                    ],
                ),
                class("faster-slower", "slower", &[("drops_queue", 3.0)]),
                class("flow", "flow1", &[("drops_queue", 100.0)]),
            ],
            None,
        );
        assert_eq!(sum_of_max_drops(&p, "faster-slower"), 3.0 + 4.0 + 2.0 + 5.0);
        assert_eq!(sum_of_max_drops(&p, "start-order"), 0.0);
    }

    #[test]
    fn panels_by_the_first_dimension() {
        let pt = |name: &str, link: &str, var: &str| PointInfo {
            name: name.into(),
            coords: [("link", link), ("variant", var)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            flows: vec![],
            link: String::new(),
        };
        let points = [
            pt("e0-bl", "e0", "bl"),
            pt("e0-late", "e0", "late"),
            pt("r1-bl", "r1", "bl"),
            pt("r1-late", "r1", "late"),
        ];
        let per_point: Vec<(String, Vec<f64>)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.clone(), vec![i as f64]))
            .collect();
        let panels = split_by_dimension(&points, "link", &per_point);
        assert_eq!(panels.len(), 2);
        assert_eq!(panels[0].value, "e0");
        assert_eq!(
            panels[0].series,
            [
                ("bl".to_string(), vec![0.0]),
                ("late".to_string(), vec![1.0])
            ]
        );
        assert_eq!(panels[1].value, "r1");
        assert_eq!(
            panels[1].series,
            [
                ("bl".to_string(), vec![2.0]),
                ("late".to_string(), vec![3.0])
            ]
        );
        // By the second dimension: panels bl and late, lines named by link.
        let panels = split_by_dimension(&points, "variant", &per_point);
        assert_eq!(panels[1].value, "late");
        assert_eq!(
            panels[1].series,
            [("e0".to_string(), vec![1.0]), ("r1".to_string(), vec![3.0])]
        );
    }

    #[test]
    fn boxes_by_point_and_class() {
        // Point 0 has slower then faster (fs scheme) and flow1; point 1 has only faster, without
        // throughput; point 2 has flow2 and flow10 of the flow scheme only.
        let s = Summary {
            experiment: "x".into(),
            quantiles: String::new(),
            points: vec![
                point(
                    "a",
                    vec![
                        class("faster-slower", "slower", &[("elapsed_s", 60.0)]),
                        class(
                            "faster-slower",
                            "faster",
                            &[("elapsed_s", 50.0), ("throughput_Bps", 3000.0)],
                        ),
                        class("flow", "flow1", &[("elapsed_s", 55.0)]),
                    ],
                    Some(0.9),
                ),
                point(
                    "b",
                    vec![class("faster-slower", "faster", &[("elapsed_s", 45.0)])],
                    None,
                ),
                point(
                    "c",
                    vec![
                        class("flow", "flow10", &[("elapsed_s", 1.0)]),
                        class("flow", "flow2", &[("elapsed_s", 2.0)]),
                    ],
                    Some(0.8),
                ),
            ],
        };
        let fs = scheme_classes(&s, "faster-slower");
        assert_eq!(fs, ["faster", "slower"]);
        assert_eq!(scheme_classes(&s, "flow"), ["flow1", "flow2", "flow10"]);
        assert!(scheme_classes(&s, "start-order").is_empty());
        let b = class_boxes(&s, "faster-slower", &fs, ConnMetric::ElapsedS);
        assert_eq!(
            b,
            [(0, 1, five(60.0)), (0, 0, five(50.0)), (1, 0, five(45.0))]
        );
        let b = class_boxes(&s, "faster-slower", &fs, ConnMetric::ThroughputBps);
        assert_eq!(b, [(0, 0, five(3000.0))]);
        // a class outside the list has no box
        assert_eq!(
            class_boxes(&s, "flow", &["flow2".to_string()], ConnMetric::ElapsedS),
            [(2, 0, five(2.0))]
        );
        assert_eq!(jain_boxes(&s), [(0, 0, five(0.9)), (2, 0, five(0.8))]);
    }
}
