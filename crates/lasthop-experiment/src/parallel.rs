//! Seed 001's figures of parallel connections (Sarolahti 2000, Section 4.3 and Appendix A;
//! extract B.4): per run the fastest and the slowest connection, by the whole transfer (scheme
//! `fastest-slowest`, classes `fastest` and `slowest`) and by its first 10 KB (scheme
//! `first10k`, classes `fast10k` and `slow10k`: ranked by the time from the SYN to the ACK
//! covering 10 240 bytes, the appendix's "first 10 KB" tables); and run-level numbers: Jain's
//! index ×100 over the connections' first-10 KB throughputs (Tables 6, 8, 10 and 13),
//! `rx_min` / `rx_max` (the retransmissions of the connection with the fewest and with the most,
//! whose medians over the runs are the appendix's RxMin and RxMax) and the same counted before
//! each connection's 10 KB ACK (`rx10k_min` / `rx10k_max`, the "first 10 KB" tables' RxMin and
//! RxMax).
//!
//! The first-10 KB throughput is 10 240 bytes over the time from the connection's first data
//! segment to that ACK (`connections.csv`'s `partial_throughput_Bps`): the seed's throughputs
//! are 10 240 bytes over its appendix times less the 0.485 s handshake, within 0.2 % (e.g.
//! buffer 20, two connections, no delay: 10 240 / (40.77 − 0.485) = 254.2 B/s against the
//! published 254.48).

use crate::classes::Class;
use crate::metrics::{ConnMetrics, ParallelMetrics};
use crate::stats::jain;

/// The figures of one run's connections; `None` for fewer than two.
pub fn compute(conns: &[ConnMetrics]) -> Option<ParallelMetrics> {
    if conns.len() < 2 {
        return None;
    }
    let tputs: Option<Vec<f64>> = conns
        .iter()
        .map(|c| c.partial_throughput_bytes_per_s)
        .collect();
    let rx = conns.iter().map(|c| c.rexmt_pkts);
    let rx10: Option<Vec<u64>> = conns.iter().map(|c| c.partial_rexmt_pkts).collect();
    Some(ParallelMetrics {
        jain10k_x100: tputs.and_then(|t| jain(&t)).map(|j| j * 100.0),
        rx_min: rx.clone().min().unwrap_or(0),
        rx_max: rx.max().unwrap_or(0),
        rx10k_min: rx10.as_ref().and_then(|v| v.iter().copied().min()),
        rx10k_max: rx10.as_ref().and_then(|v| v.iter().copied().max()),
    })
}

/// Sorts by `key` (finite first, ascending; ties by flow) and takes the first and the last as
/// (`fast`, `slow`). Fewer than two connections: none.
fn extremes(
    conns: &[ConnMetrics],
    key: impl Fn(&ConnMetrics) -> Option<f64>,
    fast: Class,
    slow: Class,
) -> Vec<(Class, ConnMetrics)> {
    if conns.len() < 2 {
        return vec![];
    }
    let k = |c: &ConnMetrics| key(c).filter(|x| x.is_finite()).unwrap_or(f64::INFINITY);
    let mut v: Vec<&ConnMetrics> = conns.iter().collect();
    v.sort_by(|a, b| k(a).total_cmp(&k(b)).then(a.flow.cmp(&b.flow)));
    vec![(fast, v[0].clone()), (slow, v[v.len() - 1].clone())]
}

/// Scheme `fastest-slowest`: the connection with the shortest and the longest elapsed time.
pub fn fastest_slowest(conns: &[ConnMetrics]) -> Vec<(Class, ConnMetrics)> {
    extremes(conns, |c| Some(c.elapsed_s), Class::Fastest, Class::Slowest)
}

/// Scheme `first10k`: the connection with the shortest and the longest time to its first
/// 10 KB acknowledged (one that never got there is the slowest).
pub fn first10k(conns: &[ConnMetrics]) -> Vec<(Class, ConnMetrics)> {
    extremes(
        conns,
        |c| c.partial_elapsed_s,
        Class::Fast10k,
        Class::Slow10k,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(flow: usize, elapsed: f64, p: Option<(f64, f64, u64)>, rx: u64) -> ConnMetrics {
        ConnMetrics {
            flow: Some(flow),
            elapsed_s: elapsed,
            rexmt_pkts: rx,
            partial_elapsed_s: p.map(|p| p.0),
            partial_throughput_bytes_per_s: p.map(|p| p.1),
            partial_rexmt_pkts: p.map(|p| p.2),
            ..ConnMetrics::default()
        }
    }

    /// Seed 001's buffer 3, 12th packet delayed 6 s, two connections (Table 16 medians): the
    /// first 10 KB in 26.22 and 71.30 s from the SYN, so 10 240 B over 25.735 and 70.815 s
    /// from the first data segment: 397.9 and 144.6 B/s (Table 6: 144.69 for the slower), and
    /// Jain's index (542.5)² / (2 · (397.9² + 144.6²)) = 0.8210, ×100 = 82.10 (Table 6: 82.12,
    /// a median of per-run values).
    #[test]
    fn the_seeds_buffer_3_delay_case_by_hand() {
        let (a, b): (f64, f64) = (10240.0 / (26.22 - 0.485), 10240.0 / (71.30 - 0.485));
        assert!((b - 144.6).abs() < 0.05, "{b}");
        let conns = [
            conn(0, 87.78, Some((26.22, a, 8)), 17),
            conn(1, 117.02, Some((71.30, b, 12)), 24),
        ];
        let p = compute(&conns).unwrap();
        let j = p.jain10k_x100.unwrap();
        let want = (a + b).powi(2) / (2.0 * (a * a + b * b)) * 100.0;
        assert!((j - want).abs() < 1e-9 && (j - 82.10).abs() < 0.01, "{j}");
        assert_eq!(
            (p.rx_min, p.rx_max, p.rx10k_min, p.rx10k_max),
            (17, 24, Some(8), Some(12))
        );
        let c = first10k(&conns);
        assert_eq!((c[0].0.clone(), c[0].1.flow), (Class::Fast10k, Some(0)));
        assert_eq!((c[1].0.clone(), c[1].1.flow), (Class::Slow10k, Some(1)));
    }

    /// Four connections: the extremes only; the order by the whole transfer and by the first
    /// 10 KB differ (seed 001 Figure 11: the faster starter finishes last).
    #[test]
    fn four_connections_give_their_extremes() {
        let conns = [
            conn(0, 102.0, Some((25.0, 1.0, 1)), 9),
            conn(1, 91.0, Some((41.0, 1.0, 0)), 5),
            conn(2, 95.0, Some((30.0, 1.0, 2)), 7),
            conn(3, 99.0, None, 3),
        ];
        let s = fastest_slowest(&conns);
        assert_eq!(
            s.iter()
                .map(|(c, m)| (c.clone(), m.flow))
                .collect::<Vec<_>>(),
            [(Class::Fastest, Some(1)), (Class::Slowest, Some(0))]
        );
        let f = first10k(&conns);
        assert_eq!(
            f.iter()
                .map(|(c, m)| (c.clone(), m.flow))
                .collect::<Vec<_>>(),
            [(Class::Fast10k, Some(0)), (Class::Slow10k, Some(3))],
            "one that never got 10 KB through is the slowest"
        );
        let p = compute(&conns).unwrap();
        assert_eq!(p.jain10k_x100, None, "one connection has no first 10 KB");
        assert_eq!((p.rx_min, p.rx_max, p.rx10k_min), (3, 9, None));
        assert!(compute(&conns[..1]).is_none());
        assert!(fastest_slowest(&conns[..1]).is_empty());
    }
}
