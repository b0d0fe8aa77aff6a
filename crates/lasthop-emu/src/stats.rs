//! The lateness distribution of releases: how much later than the model scheduled it the
//! emulator really handed each packet to its host.

use serde::Serialize;
use std::fmt;

pub const LATE_THRESHOLD_NS: u64 = 1_000_000;

#[derive(Debug, Clone, Default)]
pub struct Lateness {
    samples: Vec<u64>,
}

/// Summary of a lateness distribution, in nanoseconds (the `[lateness]` table of
/// `summary.toml`, keys with their unit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LatenessSummary {
    pub releases: u64,
    #[serde(rename = "p50_ns")]
    pub p50: u64,
    #[serde(rename = "p99_ns")]
    pub p99: u64,
    #[serde(rename = "p999_ns")]
    pub p999: u64,
    #[serde(rename = "max_ns")]
    pub max: u64,
    /// Releases later than 1 ms.
    pub over_1ms: u64,
}

impl Lateness {
    pub fn record(&mut self, ns: u64) {
        self.samples.push(ns);
    }

    pub fn summary(&self) -> LatenessSummary {
        let mut v = self.samples.clone();
        v.sort_unstable();
        let n = v.len();
        if n == 0 {
            return LatenessSummary::default();
        }
        // Nearest rank.
        let q = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        LatenessSummary {
            releases: n as u64,
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: v[n - 1],
            over_1ms: v.iter().filter(|&&x| x > LATE_THRESHOLD_NS).count() as u64,
        }
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}us", ns as f64 / 1e3)
}

impl fmt::Display for LatenessSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} releases, lateness p50 {} p99 {} p99.9 {} max {}; {} later than 1ms",
            self.releases,
            us(self.p50),
            us(self.p99),
            us(self.p999),
            us(self.max),
            self.over_1ms
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut l = Lateness::default();
        for i in 1..=1000 {
            l.record(i * 1000);
        }
        l.record(5_000_000);
        let s = l.summary();
        assert_eq!(s.releases, 1001);
        assert_eq!(s.p50, 501_000);
        assert_eq!(s.max, 5_000_000);
        assert_eq!(s.over_1ms, 1);
        assert_eq!(Lateness::default().summary().releases, 0);
    }
}
