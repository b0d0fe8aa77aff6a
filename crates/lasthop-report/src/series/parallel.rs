//! Seed 001's table of the first 10 KB of parallel connections (its Appendix A "first 10 KB"
//! tables and the throughput and fairness of Tables 6, 8, 10 and 13), as plain data: per point
//! the fastest and the slowest connection's time to 10 KB (25 / 50 / 75 %), the slowest one's
//! throughput over its first 10 KB, Jain's index ×100 and the medians of RxMin and RxMax, ours
//! and, when the spec has them, the published ones.

use lasthop_experiment::catalogue::{ConnMetric, ConnMetric as C, Metric, RunMetric};
use lasthop_experiment::{PointRef, PointSummary};

/// Where a column's number comes from: a metric of a class of scheme `first10k`, or a run
/// metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Class(&'static str, ConnMetric),
    Run(RunMetric),
}

impl Source {
    /// The class and metric key a reference names it by.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Source::Class(c, m) => (c, m.key()),
            Source::Run(m) => ("run", m.key()),
        }
    }
}

/// The columns: (label, source, which number: 0 = 25 %, 1 = median, 2 = 75 %).
pub const COLUMNS: [(&str, Source, u8); 11] = [
    (
        "fastest 25%",
        Source::Class("fast10k", C::PartialElapsedS),
        0,
    ),
    (
        "fastest 50%",
        Source::Class("fast10k", C::PartialElapsedS),
        1,
    ),
    (
        "fastest 75%",
        Source::Class("fast10k", C::PartialElapsedS),
        2,
    ),
    (
        "slowest 25%",
        Source::Class("slow10k", C::PartialElapsedS),
        0,
    ),
    (
        "slowest 50%",
        Source::Class("slow10k", C::PartialElapsedS),
        1,
    ),
    (
        "slowest 75%",
        Source::Class("slow10k", C::PartialElapsedS),
        2,
    ),
    (
        "slowest throughput (B/s)",
        Source::Class("slow10k", C::PartialThroughputBps),
        1,
    ),
    ("Jain ×100", Source::Run(RunMetric::Jain10kX100), 1),
    ("RxMin", Source::Run(RunMetric::Rx10kMin), 1),
    ("RxMax", Source::Run(RunMetric::Rx10kMax), 1),
    (
        "unnecessary rexmt, slowest",
        Source::Class("slow10k", C::UnneededRexmt),
        1,
    ),
];

/// One point's row: ours and the published values (`None` where there is none).
#[derive(Clone, Debug, PartialEq)]
pub struct First10kRow {
    pub point: String,
    pub runs: usize,
    pub ours: Vec<Option<f64>>,
    pub published: Option<Vec<Option<f64>>>,
}

fn pick(f: Option<(Option<f64>, f64, Option<f64>)>, which: u8) -> Option<f64> {
    let (a, m, b) = f?;
    match which {
        0 => a,
        1 => Some(m),
        _ => b,
    }
}

/// The row of a point with scheme `first10k` classes; `None` for a point without them.
pub fn first10k_row(p: &PointSummary, r: Option<&PointRef>) -> Option<First10kRow> {
    if !p.classes.iter().any(|c| c.scheme == "first10k") {
        return None;
    }
    let ours_of = |src: Source| {
        let f = match src {
            Source::Run(m) => p.run(m),
            Source::Class(class, m) => p
                .classes
                .iter()
                .filter(|c| c.scheme == "first10k" && c.class.to_string() == class)
                .find_map(|c| c.get(m)),
        }?;
        Some((Some(f.p25), f.median, Some(f.p75)))
    };
    let ours = COLUMNS
        .iter()
        .map(|(_, src, w)| pick(ours_of(*src), *w))
        .collect();
    let published = r.and_then(|r| {
        let v: Vec<Option<f64>> = COLUMNS
            .iter()
            .map(|(_, src, w)| {
                let (c, m) = src.names();
                let x = r
                    .values
                    .iter()
                    .find(|(rc, rm, _)| rc == c && rm == m)
                    .map(|x| (x.2.p25, x.2.median, x.2.p75));
                pick(x, *w)
            })
            .collect();
        v.iter().any(Option::is_some).then_some(v)
    });
    Some(First10kRow {
        point: p.point.clone(),
        runs: p.runs,
        ours,
        published,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_experiment::summary::ClassSummary;
    use lasthop_experiment::{Class, FiveNum, RefValue};

    fn five(p25: f64, median: f64, p75: f64) -> FiveNum {
        FiveNum {
            n: 20,
            min: p25,
            p25,
            median,
            p75,
            max: p75,
            mean: median,
        }
    }

    /// Seed 001's buffer 7, four connections, no delays (Table 18): fastest 24.30 / 24.30 /
    /// 24.31 s, slowest 110.03 / 137.59 / 140.91 s, RxMin 4, RxMax 13.
    #[test]
    fn a_row_beside_the_seeds() {
        let class = |c: Class, m: &[(&str, FiveNum)]| ClassSummary {
            scheme: "first10k".into(),
            class: c,
            n: 20,
            metrics: m.iter().map(|(k, f)| (k.to_string(), *f)).collect(),
        };
        let p = PointSummary {
            point: "b7".into(),
            coords: Default::default(),
            runs: 20,
            classes: vec![
                class(
                    Class::Fast10k,
                    &[("partial_elapsed_s", five(24.0, 24.2, 24.4))],
                ),
                class(
                    Class::Slow10k,
                    &[
                        ("partial_elapsed_s", five(100.0, 120.0, 130.0)),
                        ("partial_throughput_Bps", five(80.0, 85.9, 90.0)),
                    ],
                ),
            ],
            all_connections: class(Class::All, &[]),
            run_metrics: [
                ("jain10k_x100".to_string(), five(60.0, 65.0, 70.0)),
                ("rx10k_min".to_string(), five(3.0, 4.0, 5.0)),
                ("rx10k_max".to_string(), five(12.0, 13.0, 14.0)),
            ]
            .into_iter()
            .collect(),
            udp: vec![],
            pings: vec![],
            pages: vec![],
            bottleneck: vec![],
            thin: vec![],
        };
        let rv = |a: f64, m: f64, b: f64| RefValue {
            min: None,
            p25: Some(a),
            median: m,
            p75: Some(b),
            max: None,
        };
        let r = PointRef {
            point: "b7".into(),
            source: None,
            values: vec![
                (
                    "fast10k".into(),
                    "partial_elapsed_s".into(),
                    rv(24.30, 24.30, 24.31),
                ),
                (
                    "slow10k".into(),
                    "partial_elapsed_s".into(),
                    rv(110.03, 137.59, 140.91),
                ),
                ("run".into(), "rx10k_min".into(), rv(4.0, 4.0, 4.0)),
                ("run".into(), "rx10k_max".into(), rv(13.0, 13.0, 13.0)),
            ],
        };
        let row = first10k_row(&p, Some(&r)).unwrap();
        assert_eq!(
            row.ours,
            [
                Some(24.0),
                Some(24.2),
                Some(24.4),
                Some(100.0),
                Some(120.0),
                Some(130.0),
                Some(85.9),
                Some(65.0),
                Some(4.0),
                Some(13.0),
                None
            ]
        );
        assert_eq!(
            row.published.unwrap(),
            [
                Some(24.30),
                Some(24.30),
                Some(24.31),
                Some(110.03),
                Some(137.59),
                Some(140.91),
                None,
                None,
                Some(4.0),
                Some(13.0),
                None
            ]
        );
        let mut single = p.clone();
        single.classes.clear();
        assert_eq!(first10k_row(&single, Some(&r)), None);
    }
}
