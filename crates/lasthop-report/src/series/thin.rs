//! Seed 003's thin-stream figures as data (scheme `thin`): the ACK-latency ECDF of each host
//! from its pooled 1 ms histogram (full, and zoomed to the seed's y = 0.65–1), and the rows of
//! the seed's tables, ours beside the published values of the spec's `[reference.POINT]`.

use lasthop_experiment::catalogue::{Metric, ThinMetric as T};
use lasthop_experiment::{PointRef, PointSummary};

/// The latency table's columns, as the seed's tables (Appendix R): (metric, heading).
pub const LATENCY_COLUMNS: [(T, &str); 16] = [
    (T::LatMeanMs, "Mean"),
    (T::LatP40Ms, "40th"),
    (T::LatP50Ms, "50th"),
    (T::LatP60Ms, "60th"),
    (T::LatP70Ms, "70th"),
    (T::LatP80Ms, "80th"),
    (T::LatP90Ms, "90th"),
    (T::LatP93Ms, "93th"),
    (T::LatP95Ms, "95th"),
    (T::LatP96Ms, "96th"),
    (T::LatP97Ms, "97th"),
    (T::LatP98Ms, "98th"),
    (T::LatP99Ms, "99th"),
    (T::LatP999Ms, "99.9th"),
    (T::LatP9999Ms, "99.99th"),
    (T::LatMaxMs, "Max"),
];

/// The stream table's columns (the seed's goodput/throughput tables, §4.4): (metric, heading).
pub const STREAM_COLUMNS: [(T, &str); 20] = [
    (T::Streams, "Str"),
    (T::IttMinMs, "ITT min"),
    (T::IttAvgMs, "ITT avg"),
    (T::IttMaxMs, "ITT max"),
    (T::PayloadMinB, "Payl. min"),
    (T::PayloadAvgB, "Payl. avg"),
    (T::PayloadMaxB, "Payl. max"),
    (T::SentPkts, "Sent p"),
    (T::LostPkts, "Lost p"),
    (T::RetrPkts, "Retr p"),
    (T::RdbPkts, "RDB p"),
    (T::PayloadBytes, "Payl B"),
    (T::UniqueBytes, "Unique B"),
    (T::RedundantBytes, "Rdn B"),
    (T::RetrBytes, "Retr B"),
    (T::LossBytesPct, "Loss % B"),
    (T::LossPktsPct, "Loss % p"),
    (T::Dupacks, "DupACKs"),
    (T::RdbHits, "RDB hits"),
    (T::GoodputBps, "Goodput B/s"),
];

/// The ECDF of a 1 ms histogram (`(ms, count)` ascending) as the corners of its steps.
pub fn hist_cdf(hist: &[(u32, u64)]) -> Vec<(f64, f64)> {
    let n: u64 = hist.iter().map(|h| h.1).sum();
    let mut pts = Vec::with_capacity(2 * hist.len());
    if n == 0 {
        return pts;
    }
    let mut cum = 0;
    for &(ms, c) in hist {
        pts.push((f64::from(ms), cum as f64 / n as f64));
        cum += c;
        pts.push((f64::from(ms), cum as f64 / n as f64));
    }
    pts
}

/// The part of an ECDF at or above `y0` (the seed's zoom, y from 0.65): corners below are left
/// out, and the step that crosses `y0` starts at `y0`.
pub fn zoom_cdf(pts: &[(f64, f64)], y0: f64) -> Vec<(f64, f64)> {
    let mut out = vec![];
    let mut below = false;
    for &(x, y) in pts {
        if y < y0 {
            below = true;
            continue;
        }
        if below {
            out.push((x, y0));
            below = false;
        }
        out.push((x, y));
    }
    out
}

/// One host's row of a table: our medians over the replications and the published values
/// (`None`: not given / not computed).
#[derive(Clone, Debug, PartialEq)]
pub struct HostRow {
    pub class: String,
    pub ours: Vec<Option<f64>>,
    pub published: Option<Vec<Option<f64>>>,
}

/// The rows of a point's table of `columns`: one per host class of scheme `thin`, in summary
/// order, then any host class only the reference names.
pub fn host_rows(p: &PointSummary, r: Option<&PointRef>, columns: &[(T, &str)]) -> Vec<HostRow> {
    let published = |class: &str| -> Option<Vec<Option<f64>>> {
        let r = r?;
        let v: Vec<Option<f64>> = columns
            .iter()
            .map(|(m, _)| {
                r.values
                    .iter()
                    .find(|(c, rm, _)| c == class && rm == m.key())
                    .map(|x| x.2.median)
            })
            .collect();
        v.iter().any(Option::is_some).then_some(v)
    };
    let mut rows: Vec<HostRow> = p
        .thin
        .iter()
        .map(|c| {
            let class = c.class.to_string();
            HostRow {
                ours: columns
                    .iter()
                    .map(|(m, _)| c.get(*m).map(|f| f.median))
                    .collect(),
                published: published(&class),
                class,
            }
        })
        .collect();
    if let Some(r) = r {
        for (c, _, _) in &r.values {
            if c.starts_with("host-") && !rows.iter().any(|x| &x.class == c) {
                if let Some(p) = published(c) {
                    rows.push(HostRow {
                        class: c.clone(),
                        ours: vec![None; columns.len()],
                        published: Some(p),
                    });
                }
            }
        }
    }
    rows
}

/// The seed's figures overlay the variants of one cell (Fig. A.1.x: TCP, RDB 4 and RDB 8 at one
/// loss rate and ITT): the points that differ only in the first dimension, grouped, each group
/// `(label of the other coordinates, point indices)` in point order; groups of one are left out.
pub fn first_dimension_groups(points: &[Vec<(String, String)>]) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = vec![];
    for (i, coords) in points.iter().enumerate() {
        let rest = coords
            .iter()
            .skip(1)
            .map(|(d, v)| format!("{d} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        match groups.iter_mut().find(|g| g.0 == rest) {
            Some(g) => g.1.push(i),
            None => groups.push((rest, vec![i])),
        }
    }
    groups.retain(|g| g.1.len() > 1);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_experiment::summary::ClassSummary;
    use lasthop_experiment::{Class, FiveNum, RefValue};

    #[test]
    fn points_differing_in_the_first_dimension_only_are_one_figure() {
        let c = |v: &str, l: &str| {
            vec![
                ("variant".to_string(), v.to_string()),
                ("loss".to_string(), l.to_string()),
            ]
        };
        let pts = [
            c("tcp", "2"),
            c("tcp", "5"),
            c("rdb", "2"),
            c("rdb", "5"),
            c("x", "9"),
        ];
        assert_eq!(
            first_dimension_groups(&pts),
            vec![
                ("loss 2".to_string(), vec![0, 2]),
                ("loss 5".to_string(), vec![1, 3])
            ]
        );
        // One dimension: every point in one figure.
        let one = [
            vec![("v".to_string(), "a".to_string())],
            vec![("v".to_string(), "b".to_string())],
        ];
        assert_eq!(
            first_dimension_groups(&one),
            vec![(String::new(), vec![0, 1])]
        );
    }

    #[test]
    fn ecdf_of_a_histogram_and_its_zoom() {
        // 150 ×6, 180, 300 ×3: F = 0.6 at 150, 0.7 at 180, 1 at 300.
        let c = hist_cdf(&[(150, 6), (180, 1), (300, 3)]);
        assert_eq!(
            c,
            vec![
                (150.0, 0.0),
                (150.0, 0.6),
                (180.0, 0.6),
                (180.0, 0.7),
                (300.0, 0.7),
                (300.0, 1.0)
            ]
        );
        // From 0.65: the step at 180 starts at 0.65.
        assert_eq!(
            zoom_cdf(&c, 0.65),
            vec![(180.0, 0.65), (180.0, 0.7), (300.0, 0.7), (300.0, 1.0)]
        );
        assert!(hist_cdf(&[]).is_empty());
    }

    #[test]
    fn rows_with_references() {
        let mut host = ClassSummary {
            scheme: "thin".into(),
            class: Class::Host("wsender".into()),
            n: 1,
            metrics: Default::default(),
        };
        host.metrics
            .insert("lat_mean_ms".to_string(), FiveNum::single(154.0, 1));
        let p = PointSummary {
            point: "p".into(),
            coords: Default::default(),
            runs: 1,
            classes: vec![],
            all_connections: ClassSummary {
                scheme: "all".into(),
                class: Class::All,
                n: 0,
                metrics: Default::default(),
            },
            run_metrics: Default::default(),
            udp: vec![],
            pings: vec![],
            pages: vec![],
            bottleneck: vec![],
            thin: vec![host],
        };
        let rv = |m: f64| RefValue {
            min: None,
            p25: None,
            median: m,
            p75: None,
            max: None,
        };
        let r = PointRef {
            point: "p".into(),
            source: None,
            values: vec![
                ("host-wsender".into(), "lat_max_ms".into(), rv(3157.0)),
                ("host-zsender".into(), "lat_mean_ms".into(), rv(250.0)),
            ],
        };
        let rows = host_rows(&p, Some(&r), &LATENCY_COLUMNS);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].class, "host-wsender");
        assert_eq!(rows[0].ours[0], Some(154.0));
        assert_eq!(rows[0].ours[15], None);
        let pubw = rows[0].published.as_ref().unwrap();
        assert_eq!((pubw[0], pubw[15]), (None, Some(3157.0)));
        // a host only the reference has
        assert_eq!(rows[1].class, "host-zsender");
        assert_eq!(rows[1].published.as_ref().unwrap()[0], Some(250.0));
        assert!(rows[1].ours.iter().all(Option::is_none));
        assert_eq!(host_rows(&p, None, &LATENCY_COLUMNS)[0].published, None);
    }
}
