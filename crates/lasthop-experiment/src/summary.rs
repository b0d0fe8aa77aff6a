//! Summaries across replications: per matrix point and connection class, the five-number
//! summary (min / 25% / median / 75% / max) of each metric; run-level figures (total time,
//! fairness, utilisation, queue length) likewise. Written as `summary.csv` (long format, one row
//! per point, class and metric) and `summary.json`.

use crate::catalogue::{
    BottleneckMetric, ConnMetric, Metric, PageClassMetric, PageMetric, PingMetric, RunMetric,
    ThinMetric, UdpMetric,
};
pub use crate::classes::class_order;
use crate::classes::{Class, ClassScheme};
use crate::metrics::{BottleneckMetrics, ConnMetrics, ObjectMetrics, RunMetrics, UdpMetrics};
use crate::stats::FiveNum;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The pages of a point's runs (scheme `page`): one class per seed 002 connection class (`c1`
/// the main object, `c2` the fastest in-line ... `cN` the slowest; each page of each run gives
/// one value per class), then class `page` with the response and total times and the derived
/// numbers of [`PageMetric`]. Empty when the runs have no page.
pub fn summarise_pages(runs: &[RunMetrics]) -> Vec<ClassSummary> {
    let mut groups: IndexMap<Class, Vec<&ObjectMetrics>> = IndexMap::new();
    let mut pages = vec![];
    for r in runs {
        for p in &r.pages {
            pages.push(p);
            for o in &p.objects {
                groups.entry(Class::C(o.class as u64)).or_default().push(o);
            }
        }
    }
    if pages.is_empty() {
        return vec![];
    }
    groups.sort_keys();
    let mut out: Vec<ClassSummary> = groups
        .into_iter()
        .map(|(class, v)| {
            let mut metrics = IndexMap::new();
            for &k in PageClassMetric::ALL {
                let vals: Vec<f64> = v.iter().map(|o| o.value(k)).collect();
                if let Some(f) = FiveNum::of(&vals) {
                    metrics.insert(k.key().to_string(), f);
                }
            }
            ClassSummary {
                scheme: "page".to_string(),
                class,
                n: v.len(),
                metrics,
            }
        })
        .collect();
    let mut metrics = IndexMap::new();
    let times = |f: fn(&crate::metrics::PageMetrics) -> Option<f64>| -> Vec<f64> {
        pages.iter().map(|p| f(p).unwrap_or(f64::NAN)).collect()
    };
    for (k, vals) in [
        (PageMetric::ResponseS, times(|p| p.response_s)),
        (PageMetric::TotalS, times(|p| p.total_s)),
    ] {
        if let Some(f) = FiveNum::of(&vals) {
            metrics.insert(k.key().to_string(), f);
        }
    }
    for (k, v) in page_derived(&out) {
        if let Some(v) = v {
            metrics.insert(k.key().to_string(), FiveNum::single(v, runs.len()));
        }
    }
    out.push(ClassSummary {
        scheme: "page".to_string(),
        class: Class::Page,
        n: pages.len(),
        metrics,
    });
    out
}

/// Seed 002's summary-table numbers of a point from its page classes' summaries (extract §4.2):
/// `sum_max_drops` = Σ over the classes of each drop counter's largest value (queue and error
/// drops, data and ACK direction); `drops_queue_med` / `drops_error_med` = the largest
/// per-class median of the data direction's queue / error drops. `None` without drop counts.
pub fn page_derived(classes: &[ClassSummary]) -> [(PageMetric, Option<f64>); 3] {
    use PageClassMetric as M;
    let cs = || classes.iter().filter(|c| matches!(c.class, Class::C(_)));
    let counters = [
        M::DropsQueue,
        M::DropsError,
        M::AckDropsQueue,
        M::AckDropsError,
    ];
    let maxes: Vec<f64> = cs()
        .flat_map(|c| counters.iter().filter_map(|k| c.get(*k).map(|f| f.max)))
        .collect();
    let sum_max = (!maxes.is_empty()).then(|| maxes.iter().sum());
    let largest_median = |k: M| {
        cs().filter_map(|c| c.get(k).map(|f| f.median))
            .reduce(f64::max)
    };
    [
        (PageMetric::SumMaxDrops, sum_max),
        (PageMetric::DropsQueueMed, largest_median(M::DropsQueue)),
        (PageMetric::DropsErrorMed, largest_median(M::DropsError)),
    ]
}

/// The latency probes of a point's runs (scheme `ping`), one class per probe flow: `flow<i>`
/// for the scenario's flow `i`, `other` for probes of none.
pub fn summarise_pings(runs: &[RunMetrics]) -> Vec<ClassSummary> {
    let mut groups: IndexMap<Class, Vec<&crate::metrics::PingMetrics>> = IndexMap::new();
    for r in runs {
        for p in &r.pings {
            let class = p.flow.map_or(Class::Other, |f| Class::Flow(f as u64));
            groups.entry(class).or_default().push(p);
        }
    }
    groups.sort_keys();
    groups
        .into_iter()
        .map(|(class, v)| {
            let mut metrics = IndexMap::new();
            for &k in PingMetric::ALL {
                let vals: Vec<f64> = v.iter().map(|p| p.value(k)).collect();
                if let Some(f) = FiveNum::of(&vals) {
                    metrics.insert(k.key().to_string(), f);
                }
            }
            ClassSummary {
                scheme: "ping".to_string(),
                class,
                n: v.len(),
                metrics,
            }
        })
        .collect()
}

/// The UDP flows of a point's runs, one class per flow: `flow<i>` for the scenario's flow `i`,
/// `udp<n>` for a flow of `udp_flows.csv` that matches none.
pub fn summarise_udp(runs: &[RunMetrics]) -> Vec<ClassSummary> {
    let mut groups: IndexMap<Class, Vec<&UdpMetrics>> = IndexMap::new();
    for r in runs {
        for u in &r.udp {
            let class = u
                .flow
                .map_or(Class::Udp(u.udp_flow as u64), |f| Class::Flow(f as u64));
            groups.entry(class).or_default().push(u);
        }
    }
    groups.sort_keys();
    groups
        .into_iter()
        .map(|(class, v)| {
            let mut metrics = IndexMap::new();
            for &k in UdpMetric::ALL {
                let vals: Vec<f64> = v.iter().map(|u| u.value(k)).collect();
                if let Some(f) = FiveNum::of(&vals) {
                    metrics.insert(k.key().to_string(), f);
                }
            }
            ClassSummary {
                scheme: "udp".to_string(),
                class,
                n: v.len(),
                metrics,
            }
        })
        .collect()
}

/// Seed 004's figures across a point's runs (scheme `bottleneck`): one class, each metric's
/// five numbers over the runs that have them; empty when no run has.
pub fn summarise_bottleneck(runs: &[RunMetrics]) -> Vec<ClassSummary> {
    let b: Vec<&BottleneckMetrics> = runs.iter().filter_map(|r| r.bottleneck.as_ref()).collect();
    if b.is_empty() {
        return vec![];
    }
    let mut metrics = IndexMap::new();
    for &k in BottleneckMetric::ALL {
        let vals: Vec<f64> = b.iter().map(|m| m.value(k)).collect();
        if let Some(f) = FiveNum::of(&vals) {
            metrics.insert(k.key().to_string(), f);
        }
    }
    vec![ClassSummary {
        scheme: "bottleneck".into(),
        class: Class::Bottleneck,
        n: b.len(),
        metrics,
    }]
}

/// The k-th (from 0) of n ranks: one of `two` when there are two, else `many(k + 1)`.
fn ordinal(many: fn(u64) -> Class, k: usize, n: usize, two: [Class; 2]) -> Class {
    if n == 2 {
        two[k].clone()
    } else {
        many(k as u64 + 1)
    }
}

/// Puts the connections of one run into the classes of `scheme`: (class, connection).
pub fn classify(scheme: ClassScheme, conns: &[ConnMetrics]) -> Vec<(Class, ConnMetrics)> {
    let mut v: Vec<&ConnMetrics> = conns.iter().collect();
    let n = v.len();
    let key = |x: f64| if x.is_finite() { x } else { f64::INFINITY };
    match scheme {
        ClassScheme::FasterSlower => {
            v.sort_by(|a, b| {
                key(a.elapsed_s)
                    .total_cmp(&key(b.elapsed_s))
                    .then(a.flow.cmp(&b.flow))
            });
            v.iter()
                .enumerate()
                .map(|(k, c)| {
                    let two = [Class::Faster, Class::Slower];
                    (ordinal(Class::Rank, k, n, two), (*c).clone())
                })
                .collect()
        }
        ClassScheme::StartOrder => {
            v.sort_by(|a, b| {
                key(a.start_s)
                    .total_cmp(&key(b.start_s))
                    .then(a.flow.cmp(&b.flow))
            });
            v.iter()
                .enumerate()
                .map(|(k, c)| {
                    let two = [Class::First, Class::Second];
                    (ordinal(Class::Start, k, n, two), (*c).clone())
                })
                .collect()
        }
        ClassScheme::Flow => v
            .iter()
            .map(|c| {
                let class = c.flow.map_or(Class::Other, |f| Class::Flow(f as u64));
                (class, (*c).clone())
            })
            .collect(),
        // The page classes come from page_objects.csv (summarise_pages), not from connections.
        ClassScheme::Page | ClassScheme::Bottleneck | ClassScheme::Thin => vec![],
        ClassScheme::FastestSlowest => crate::parallel::fastest_slowest(conns),
        ClassScheme::First10k => crate::parallel::first10k(conns),
        ClassScheme::MainInline => {
            let (main, mut rest): (Vec<&ConnMetrics>, Vec<&ConnMetrics>) =
                v.into_iter().partition(|c| c.flow == Some(0));
            rest.sort_by(|a, b| {
                let k = |x: f64| if x.is_finite() { x } else { f64::NEG_INFINITY };
                k(b.throughput_bytes_per_s)
                    .total_cmp(&k(a.throughput_bytes_per_s))
                    .then(a.flow.cmp(&b.flow))
            });
            main.into_iter()
                .map(|c| (Class::Main, c.clone()))
                .chain(
                    rest.into_iter()
                        .enumerate()
                        .map(|(k, c)| (Class::Inline(k as u64 + 1), c.clone())),
                )
                .collect()
        }
    }
}

/// Summary of one class of one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassSummary {
    pub scheme: String,
    pub class: Class,
    /// Connections summarised (one per run, normally).
    pub n: usize,
    pub metrics: IndexMap<String, FiveNum>,
}

impl ClassSummary {
    /// The five numbers of metric `m`, when any run had a value.
    pub fn get<M: Metric>(&self, m: M) -> Option<&FiveNum> {
        self.metrics.get(m.key())
    }
}

/// Summary of one matrix point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    pub point: String,
    pub coords: IndexMap<String, String>,
    /// Finished runs summarised.
    pub runs: usize,
    pub classes: Vec<ClassSummary>,
    /// Elapsed time over all connections of all runs (seed 000's "otime" is its median).
    pub all_connections: ClassSummary,
    pub run_metrics: IndexMap<String, FiveNum>,
    /// UDP flows (scheme `udp`, see [`summarise_udp`]); left out of `summary.json` when the
    /// point has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<ClassSummary>,
    /// Latency probes (scheme `ping`, see [`summarise_pings`]); left out of `summary.json`
    /// when the point has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pings: Vec<ClassSummary>,
    /// Pages of `http` flows (scheme `page`, see [`summarise_pages`]); left out of
    /// `summary.json` when the point has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<ClassSummary>,
    /// Seed 004's figures (scheme `bottleneck`, see [`summarise_bottleneck`]); left out of
    /// `summary.json` when the experiment does not ask for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bottleneck: Vec<ClassSummary>,
    /// Seed 003's per-host stream figures (scheme `thin`, classes `host-<name>`, see
    /// [`crate::thin::summarise_thin`]); left out of `summary.json` when no run has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thin: Vec<ClassSummary>,
}

impl PointSummary {
    /// The five numbers of run metric `m`, when any run had a value.
    pub fn run(&self, m: RunMetric) -> Option<&FiveNum> {
        self.run_metrics.get(m.key())
    }

    /// Every class summary of the point, of every scheme: the connection classes, then UDP,
    /// probes, pages, bottleneck and thin streams.
    pub fn every_class(&self) -> impl Iterator<Item = &ClassSummary> {
        self.classes
            .iter()
            .chain(&self.udp)
            .chain(&self.pings)
            .chain(&self.pages)
            .chain(&self.bottleneck)
            .chain(&self.thin)
    }
}

/// The summary of an experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub experiment: String,
    pub quantiles: String,
    pub points: Vec<PointSummary>,
}

/// Quantile definition, recorded in `summary.json`.
pub const QUANTILE_METHOD: &str =
    "linear interpolation between order statistics, h = (n-1)p (Hyndman-Fan type 7, numpy/pandas default); median of an even count = mean of the two middle values";

fn summarise_conns(scheme: &str, class: Class, conns: &[ConnMetrics]) -> ClassSummary {
    let mut metrics = IndexMap::new();
    for &k in ConnMetric::ALL {
        let vals: Vec<f64> = conns.iter().map(|c| c.value(k)).collect();
        if let Some(f) = FiveNum::of(&vals) {
            metrics.insert(k.key().to_string(), f);
        }
    }
    ClassSummary {
        scheme: scheme.to_string(),
        class,
        n: conns.len(),
        metrics,
    }
}

/// Summarises one point's runs.
pub fn summarise_point(
    point: &str,
    coords: &[(String, String)],
    runs: &[RunMetrics],
    schemes: &[ClassScheme],
) -> PointSummary {
    let mut classes = vec![];
    for &s in schemes {
        // Class order: first seen in the first runs' order (ranks are ordered already).
        let mut groups: IndexMap<Class, Vec<ConnMetrics>> = IndexMap::new();
        for r in runs {
            for (c, m) in classify(s, &r.conns) {
                groups.entry(c).or_default().push(m);
            }
        }
        groups.sort_keys();
        for (c, v) in groups {
            classes.push(summarise_conns(s.name(), c, &v));
        }
    }
    let all: Vec<ConnMetrics> = runs.iter().flat_map(|r| r.conns.clone()).collect();
    let mut run_metrics = IndexMap::new();
    for &k in RunMetric::ALL {
        let vals: Vec<f64> = runs.iter().map(|r| r.value(k)).collect();
        if let Some(f) = FiveNum::of(&vals) {
            run_metrics.insert(k.key().to_string(), f);
        }
    }
    PointSummary {
        point: point.to_string(),
        coords: coords.iter().cloned().collect(),
        runs: runs.len(),
        classes,
        all_connections: summarise_conns("all", Class::All, &all),
        run_metrics,
        udp: summarise_udp(runs),
        pings: summarise_pings(runs),
        pages: summarise_pages(runs),
        bottleneck: summarise_bottleneck(runs),
        thin: summarise_thin(runs),
    }
}

/// The hosts' streams across a point's runs (scheme `thin`): one class `host-<name>` per host,
/// each metric's five numbers over the runs. Empty when no run has streams.
pub fn summarise_thin(runs: &[RunMetrics]) -> Vec<ClassSummary> {
    let mut groups: IndexMap<String, Vec<&crate::thin::HostThin>> = IndexMap::new();
    for r in runs {
        for h in r.thin.iter().flatten() {
            groups.entry(h.host.clone()).or_default().push(h);
        }
    }
    groups
        .into_iter()
        .map(|(host, v)| {
            let mut metrics = IndexMap::new();
            for &k in ThinMetric::ALL {
                let vals: Vec<f64> = v.iter().map(|h| h.value(k).unwrap_or(f64::NAN)).collect();
                if let Some(f) = FiveNum::of(&vals) {
                    metrics.insert(k.key().to_string(), f);
                }
            }
            ClassSummary {
                scheme: "thin".into(),
                class: Class::Host(host),
                n: v.len(),
                metrics,
            }
        })
        .collect()
}

/// The pooled latency histogram of `host` over runs (for the report's ECDFs).
pub fn pooled_hist(runs: &[RunMetrics], host: &str) -> Vec<(u32, u64)> {
    let mut h = vec![];
    for r in runs {
        for x in r.thin.iter().flatten().filter(|x| x.host == host) {
            h = lasthop_analysis::latency::hist_add(&h, &x.hist);
        }
    }
    h
}

fn fmt_num(x: f64) -> String {
    if x.is_finite() {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        String::new()
    }
}

/// `summary.csv`'s own columns: `point`, then the matrix's dimensions, then the rest. A
/// dimension may not take one of these names (the spec check refuses it), or the CSV would
/// have two columns of one name.
pub const SUMMARY_COLUMNS: [&str; 11] = [
    "point", "scheme", "class", "metric", "n", "min", "p25", "median", "p75", "max", "mean",
];

impl Summary {
    /// `summary.csv`: one row per point, class and metric. Dimension columns follow `point`.
    /// Written with the `csv` crate, so that a cell that needs quoting is quoted (the names in
    /// it are checked when the spec is loaded and when `experiment.json` is read back; see
    /// docs/reliability.md).
    pub fn to_csv(&self, dims: &[String]) -> String {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(vec![]);
        let mut header = vec![SUMMARY_COLUMNS[0]];
        header.extend(dims.iter().map(String::as_str));
        header.extend(&SUMMARY_COLUMNS[1..]);
        w.write_record(&header).expect("writes to memory");
        for p in &self.points {
            let mut row = |scheme: &str, class: &Class, metric: &str, f: &FiveNum| {
                let mut r: Vec<String> = vec![p.point.clone()];
                for d in dims {
                    r.push(p.coords.get(d).cloned().unwrap_or_default());
                }
                r.extend([scheme.to_string(), class.to_string(), metric.to_string()]);
                r.push(f.n.to_string());
                for x in [f.min, f.p25, f.median, f.p75, f.max, f.mean] {
                    r.push(fmt_num(x));
                }
                w.write_record(&r).expect("writes to memory");
            };
            let udp = p
                .udp
                .iter()
                .chain(&p.pings)
                .chain(&p.pages)
                .chain(&p.bottleneck)
                .chain(&p.thin);
            for c in p.classes.iter().chain([&p.all_connections]).chain(udp) {
                for (m, f) in &c.metrics {
                    row(&c.scheme, &c.class, m, f);
                }
            }
            for (m, f) in &p.run_metrics {
                row("run", &Class::All, m, f);
            }
        }
        let bytes = w.into_inner().expect("writes to memory");
        String::from_utf8(bytes).expect("UTF-8 in, UTF-8 out")
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the summary serializes") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(flow: usize, start: f64, elapsed: f64, tput: f64) -> ConnMetrics {
        ConnMetrics {
            flow: Some(flow),
            start_s: start,
            end_s: start + elapsed,
            elapsed_s: elapsed,
            throughput_bytes_per_s: tput,
            drops_queue: flow as u64 + 1,
            ..Default::default()
        }
    }

    #[test]
    fn classes() {
        let cs = [
            conn(0, 0.0, 50.0, 10.0),
            conn(1, 5.0, 40.0, 30.0),
            conn(2, 1.0, 45.0, 20.0),
        ];
        let names = |s| {
            classify(s, &cs)
                .into_iter()
                .map(|(n, c)| (n.to_string(), c.flow.unwrap()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(ClassScheme::FasterSlower),
            vec![
                ("rank1".into(), 1),
                ("rank2".into(), 2),
                ("rank3".into(), 0)
            ]
        );
        assert_eq!(
            names(ClassScheme::StartOrder),
            vec![
                ("start1".into(), 0),
                ("start2".into(), 2),
                ("start3".into(), 1)
            ]
        );
        assert_eq!(
            names(ClassScheme::MainInline),
            vec![
                ("main".into(), 0),
                ("inline1".into(), 1),
                ("inline2".into(), 2)
            ]
        );
        let two = &cs[..2];
        let n: Vec<String> = classify(ClassScheme::FasterSlower, two)
            .into_iter()
            .map(|x| x.0.to_string())
            .collect();
        assert_eq!(n, ["faster", "slower"]);
    }

    #[test]
    fn point_summary_by_hand() {
        // Four runs of two flows; the faster connection's elapsed times are 10, 20, 30, 40 and
        // the slower's 50, 60, 70, 80 (flows swap roles in runs 2 and 4).
        let runs: Vec<RunMetrics> = [(10.0, 50.0), (60.0, 20.0), (30.0, 70.0), (80.0, 40.0)]
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| RunMetrics {
                point: "p".into(),
                replication: i as u64,
                conns: vec![conn(0, 0.0, a, 100.0), conn(1, 0.0, b, 300.0)],
                total_time_s: a.max(b),
                jain: crate::stats::jain(&[100.0, 300.0]),
                ..Default::default()
            })
            .collect();
        let s = summarise_point(
            "p",
            &[],
            &runs,
            &[ClassScheme::FasterSlower, ClassScheme::Flow],
        );
        let faster = &s.classes[0];
        assert_eq!((&faster.class, faster.n), (&Class::Faster, 4));
        let e = faster.metrics["elapsed_s"];
        assert_eq!(
            (e.min, e.p25, e.median, e.p75, e.max),
            (10.0, 17.5, 25.0, 32.5, 40.0)
        );
        let slower = &s.classes[1];
        assert_eq!(slower.class, Class::Slower);
        assert_eq!(slower.metrics["elapsed_s"].median, 65.0);
        let flow1 = &s.classes[3];
        assert_eq!(flow1.class, Class::Flow(1));
        // flow 1: 50, 20, 70, 40 -> sorted 20 40 50 70: median 45
        assert_eq!(flow1.metrics["elapsed_s"].median, 45.0);
        assert_eq!(flow1.metrics["drops_queue"].median, 2.0);
        // otime: the median over all 8 connections: (40 + 50) / 2
        assert_eq!(s.all_connections.metrics["elapsed_s"].median, 45.0);
        assert_eq!(s.run_metrics["total_time_s"].median, 65.0);
        assert!((s.run_metrics["jain"].median - 0.8).abs() < 1e-12);
        let csv = Summary {
            experiment: "x".into(),
            quantiles: QUANTILE_METHOD.into(),
            points: vec![s],
        }
        .to_csv(&[]);
        assert!(
            csv.contains("p,faster-slower,faster,elapsed_s,4,10,17.5,25,32.5,40,25\n"),
            "{csv}"
        );
    }

    #[test]
    fn cells_that_need_quoting_are_quoted() {
        // The spec allows no such names; a summary built by hand shows the writer quotes what
        // needs it (RFC 4180: a comma, a double quote doubled, a line break) and nothing else.
        let run = RunMetrics {
            point: "a,b".into(),
            conns: vec![conn(0, 0.0, 10.0, 100.0)],
            ..Default::default()
        };
        let coords = [("d\"x".to_string(), "v,1".to_string())];
        let p = summarise_point("a,b", &coords, &[run], &[ClassScheme::Flow]);
        let csv = Summary {
            experiment: "x".into(),
            quantiles: QUANTILE_METHOD.into(),
            points: vec![p],
        }
        .to_csv(&["d\"x".to_string(), "line\nbreak".to_string()]);
        let mut lines = csv.lines();
        assert_eq!(lines.next().unwrap(), "point,\"d\"\"x\",\"line");
        assert_eq!(
            lines.next().unwrap(),
            "break\",scheme,class,metric,n,min,p25,median,p75,max,mean"
        );
        assert!(
            csv.contains("\n\"a,b\",\"v,1\",,flow,flow0,elapsed_s,1,10,10,10,10,10,10\n"),
            "{csv}"
        );
        // Read back by a CSV reader: the cells as they were.
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        assert_eq!(&r.headers().unwrap()[2], "line\nbreak");
        let row = r.records().next().unwrap().unwrap();
        assert_eq!((&row[0], &row[1], &row[2]), ("a,b", "v,1", ""));
    }

    #[test]
    fn page_summary_by_hand() {
        use crate::metrics::{ObjectMetrics, PageMetrics};
        // Three runs of one page of three objects; (data-direction error drops, ACK-direction
        // error drops) per class: run 0 c1 (1, 0) c2 (0, 0) c3 (2, 1); run 1 (3, 0) (1, 0)
        // (0, 0); run 2 (0, 0) (0, 0) (4, 2). No queue drops.
        let obj = |class: usize, e: u64, ae: u64, elapsed: f64| ObjectMetrics {
            object: class - 1,
            class,
            bytes: 2096,
            elapsed_s: Some(elapsed),
            throughput_bytes_per_s: Some(2096.0 / elapsed),
            rexmt_pkts: Some(e),
            dupacks: Some(1),
            triple_dupacks: Some(0),
            sack_pkts: Some(0),
            drops_queue: Some(0),
            drops_error: Some(e),
            ack_drops_queue: Some(0),
            ack_drops_error: Some(ae),
        };
        let runs: Vec<RunMetrics> = [
            ([(1, 0), (0, 0), (2, 1)], 4.5, 3.9),
            ([(3, 0), (1, 0), (0, 0)], 5.0, 4.4),
            ([(0, 0), (0, 0), (4, 2)], 6.0, 5.3),
        ]
        .iter()
        .map(|(d, resp, total)| RunMetrics {
            pages: vec![PageMetrics {
                flow: 0,
                workload: "s+2s".into(),
                response_s: Some(*resp),
                total_s: Some(*total),
                complete: true,
                objects: (0..3)
                    .map(|k| obj(k + 1, d[k].0, d[k].1, 2.0 + k as f64))
                    .collect(),
            }],
            ..Default::default()
        })
        .collect();
        let s = summarise_point("p", &[], &runs, &[ClassScheme::Flow]);
        let names: Vec<String> = s.pages.iter().map(|c| c.class.to_string()).collect();
        assert_eq!(names, ["c1", "c2", "c3", "page"]);
        assert!(s.pages.iter().all(|c| c.scheme == "page" && c.n == 3));
        // c1's error drops 1, 3, 0: median 1, max 3
        let e = s.pages[0].metrics["drops_error"];
        assert_eq!((e.median, e.max), (1.0, 3.0));
        assert_eq!(s.pages[2].metrics["elapsed_s"].median, 4.0);
        let page = &s.pages[3].metrics;
        assert_eq!(page["response_s"].median, 5.0);
        assert_eq!(page["total_s"].median, 4.4);
        // Σ max: c1 3 + c2 1 + c3 (4 + ACK 2) = 10; the largest per-class median of error
        // drops: c1 1, c2 0, c3 2 -> 2; of queue drops 0.
        assert_eq!(page["sum_max_drops"], FiveNum::single(10.0, 3));
        assert_eq!(page["drops_error_med"].median, 2.0);
        assert_eq!(page["drops_queue_med"].median, 0.0);
        let sum = Summary {
            experiment: "x".into(),
            quantiles: QUANTILE_METHOD.into(),
            points: vec![s],
        };
        let csv = sum.to_csv(&[]);
        assert!(
            csv.contains("p,page,page,sum_max_drops,3,10,10,10,10,10,10\n"),
            "{csv}"
        );
        assert!(
            csv.contains("p,page,c3,ack_drops_error,3,0,0.5,1,1.5,2,1\n"),
            "{csv}"
        );
        // Without an event log the drop counts are unknown: no derived drop numbers.
        let mut blind = runs.clone();
        for o in blind.iter_mut().flat_map(|r| r.pages[0].objects.iter_mut()) {
            (o.drops_queue, o.drops_error) = (None, None);
            (o.ack_drops_queue, o.ack_drops_error) = (None, None);
        }
        let s = summarise_point("p", &[], &blind, &[ClassScheme::Flow]);
        assert!(!s.pages[3].metrics.contains_key("sum_max_drops"));
        assert!(summarise_pages(&runs[..0]).is_empty());
    }

    #[test]
    fn udp_summary_by_hand() {
        // Three runs of one UDP flow (scenario flow 2): throughput 4000, 4062.5, 3900;
        // spacing max 228, 300, 130 (seed 000's "max": lowest 130, highest 300).
        let udp = |tput: f64, smax: f64, q: u64| UdpMetrics {
            flow: Some(2),
            udp_flow: 1,
            throughput_bytes_per_s: Some(tput),
            drops_queue: Some(q),
            drops_red: Some(0),
            drops_error: None,
            spacing_ms: [Some(128.0), Some(128.0), Some(168.0), Some(smax)],
            ..Default::default()
        };
        let runs: Vec<RunMetrics> = [(4000.0, 228.0, 1), (4062.5, 300.0, 5), (3900.0, 130.0, 0)]
            .iter()
            .map(|&(t, m, q)| RunMetrics {
                conns: vec![conn(0, 0.0, 10.0, 100.0)],
                udp: vec![udp(t, m, q)],
                ..Default::default()
            })
            .collect();
        let s = summarise_point("p", &[], &runs, &[ClassScheme::Flow]);
        assert_eq!(s.udp.len(), 1);
        let c = &s.udp[0];
        assert_eq!(
            (c.scheme.as_str(), &c.class, c.n),
            ("udp", &Class::Flow(2), 3)
        );
        let t = c.metrics["throughput_Bps"];
        assert_eq!((t.min, t.median, t.max), (3900.0, 4000.0, 4062.5));
        let m = c.metrics["spacing_max_ms"];
        assert_eq!((m.min, m.max), (130.0, 300.0));
        assert_eq!(c.metrics["drops_queue"].median, 1.0);
        // unknown values (no event log) are left out, not 0
        assert!(!c.metrics.contains_key("drops_error"));
        let sum = Summary {
            experiment: "x".into(),
            quantiles: QUANTILE_METHOD.into(),
            points: vec![s.clone()],
        };
        let csv = sum.to_csv(&[]);
        assert!(
            csv.contains("p,udp,flow2,throughput_Bps,3,3900,3950,4000,4031.25,4062.5,3987.5\n"),
            "{csv}"
        );
        assert!(sum.to_json().contains("\"udp\""));
        // A point without UDP flows: no `udp` key in summary.json, no udp rows.
        let plain = summarise_point("p", &[], &runs[..0], &[ClassScheme::Flow]);
        let sum = Summary {
            experiment: "x".into(),
            quantiles: QUANTILE_METHOD.into(),
            points: vec![plain],
        };
        assert!(!sum.to_json().contains("udp") && !sum.to_csv(&[]).contains("udp"));
        let r = serde_json::to_string(&RunMetrics::default()).unwrap();
        assert!(!r.contains("udp"), "{r}");
    }
}
