//! The arithmetic of the summaries, defined exactly (see `docs/experiments.md`).

use serde::{Deserialize, Serialize};

/// The project's one quantile definition (type 7, linear interpolation), from
/// `lasthop-analysis`, which needs it for the UDP flows' percentiles.
pub use lasthop_analysis::stats::quantile;

/// Minimum, quartiles, median and maximum, as in the seeds' appendix tables.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FiveNum {
    /// Number of values summarised.
    pub n: usize,
    pub min: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub max: f64,
    pub mean: f64,
}

impl FiveNum {
    /// Summarises the finite values of `values` (NaN are left out); `None` when none is left.
    /// One number computed once for `n` values (a derived value of a point): every quantile,
    /// the extremes and the mean are that number.
    pub fn single(x: f64, n: usize) -> FiveNum {
        FiveNum {
            n,
            min: x,
            p25: x,
            median: x,
            p75: x,
            max: x,
            mean: x,
        }
    }

    pub fn of(values: &[f64]) -> Option<FiveNum> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        Some(FiveNum {
            n: v.len(),
            min: v[0],
            p25: quantile(&v, 0.25)?,
            median: quantile(&v, 0.5)?,
            p75: quantile(&v, 0.75)?,
            max: v[v.len() - 1],
            mean,
        })
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²), 1 when all are equal, 1/n when one takes all.
/// `None` for no values or all zero.
pub fn jain(x: &[f64]) -> Option<f64> {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    (!x.is_empty() && s2 > 0.0).then(|| s * s / (x.len() as f64 * s2))
}

/// Coefficient of variation σ/μ with the population standard deviation (divide by n).
/// `None` for no values or a zero mean.
pub fn cov(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let n = x.len() as f64;
    let mu = x.iter().sum::<f64>() / n;
    if mu == 0.0 {
        return None;
    }
    let var = x.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / n;
    Some(var.sqrt() / mu)
}

/// A step function's time-weighted mean over `[t0, t1]`: `points` are (time, value) changes in
/// time order; the value before the first point is `initial`.
pub fn time_weighted_mean(points: &[(u64, f64)], initial: f64, t0: u64, t1: u64) -> Option<f64> {
    if t1 <= t0 {
        return None;
    }
    let mut acc = 0.0;
    let mut cur = initial;
    let mut t = t0;
    for &(at, v) in points {
        if at > t1 {
            break;
        }
        if at > t {
            acc += cur * (at - t) as f64;
            t = at;
        }
        cur = v;
    }
    acc += cur * (t1 - t) as f64;
    Some(acc / (t1 - t0) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn quantiles_by_hand() {
        // n = 4: h(0.25) = 0.75 -> 1 + 0.75*(2-1) = 1.75; median = (2+3)/2; h(0.75) = 2.25 -> 3.25.
        let f = FiveNum::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((f.n, f.min, f.max), (4, 1.0, 4.0));
        assert!(
            close(f.p25, 1.75) && close(f.median, 2.5) && close(f.p75, 3.25),
            "{f:?}"
        );
        assert!(close(f.mean, 2.5));
        // n = 5: order statistics exactly.
        let f = FiveNum::of(&[10.0, 50.0, 20.0, 40.0, 30.0]).unwrap();
        assert_eq!(
            (f.min, f.p25, f.median, f.p75, f.max),
            (10.0, 20.0, 30.0, 40.0, 50.0)
        );
        // n = 1 and the empty case; NaN are left out.
        let f = FiveNum::of(&[7.0, f64::NAN]).unwrap();
        assert_eq!(
            (f.n, f.min, f.p25, f.median, f.p75, f.max),
            (1, 7.0, 7.0, 7.0, 7.0, 7.0)
        );
        assert!(FiveNum::of(&[]).is_none());
        // The seeds' even-count median: 20 values 1..20 -> 10.5; quartiles as numpy: 5.75, 15.25.
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let f = FiveNum::of(&v).unwrap();
        assert!(
            close(f.median, 10.5) && close(f.p25, 5.75) && close(f.p75, 15.25),
            "{f:?}"
        );
        // Seed 000 Table 26 style: two connections per run, medians of 55.35/55.36.
        assert!(close(quantile(&[55.35, 55.36], 0.5).unwrap(), 55.355));
    }

    #[test]
    fn fairness_by_hand() {
        assert!(close(jain(&[1.0, 1.0, 1.0]).unwrap(), 1.0));
        assert!(close(jain(&[1.0, 0.0]).unwrap(), 0.5));
        // (3+1)^2 / (2*(9+1)) = 16/20
        assert!(close(jain(&[3.0, 1.0]).unwrap(), 0.8));
        assert!(jain(&[]).is_none() && jain(&[0.0, 0.0]).is_none());
        // mean 2, population sd 1 -> 0.5
        assert!(close(cov(&[1.0, 3.0]).unwrap(), 0.5));
        assert!(close(cov(&[5.0, 5.0]).unwrap(), 0.0));
        assert!(cov(&[0.0]).is_none());
    }

    #[test]
    fn time_weighted() {
        // 0 until 10, 2 until 30, 1 until 40: (0*10 + 2*20 + 1*10) / 40 = 1.25
        let p = [(10, 2.0), (30, 1.0)];
        assert!(close(time_weighted_mean(&p, 0.0, 0, 40).unwrap(), 1.25));
        // window [20, 40]: 2*10 + 1*10 over 20 = 1.5
        assert!(close(time_weighted_mean(&p, 0.0, 20, 40).unwrap(), 1.5));
        assert!(time_weighted_mean(&p, 0.0, 5, 5).is_none());
    }
}
