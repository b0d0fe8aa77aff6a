//! The lateness distribution of releases: how much later than the model scheduled it the
//! emulator really handed each packet to its host.

use serde::Serialize;
use std::fmt;

pub const LATE_THRESHOLD_NS: u64 = 1_000_000;

/// Every release's lateness, in a histogram of fixed size: percentiles to 3 significant digits
/// (0.1 %), the maximum and the count over 1 ms exact. A soak run of hours keeps a few tens of
/// kilobytes where a list of samples grew by 8 bytes per release.
#[derive(Debug, Clone)]
pub struct Lateness {
    hist: hdrhistogram::Histogram<u64>,
    max: u64,
    over_1ms: u64,
}

impl Default for Lateness {
    fn default() -> Lateness {
        Lateness {
            // Auto-resizing from 1 ns with 3 significant digits: any lateness fits.
            hist: hdrhistogram::Histogram::new(3).expect("3 significant digits are allowed"),
            max: 0,
            over_1ms: 0,
        }
    }
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
        // Auto-resize never fails for a u64 value; a failure would only lose the percentile.
        let _ = self.hist.record(ns);
        self.max = self.max.max(ns);
        self.over_1ms += u64::from(ns > LATE_THRESHOLD_NS);
    }

    pub fn summary(&self) -> LatenessSummary {
        let n = self.hist.len();
        if n == 0 {
            return LatenessSummary::default();
        }
        // The value at each quantile, to the histogram's precision, never above the maximum.
        let q = |p: f64| self.hist.value_at_quantile(p).min(self.max);
        LatenessSummary {
            releases: n,
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: self.max,
            over_1ms: self.over_1ms,
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
        // The median is the 501st of 1001: 501 us, to 3 significant digits.
        assert!((s.p50 as f64 - 501_000.0).abs() <= 501.0, "{s:?}");
        // p99: the 991st, 991 us; p99.9: the 1000th, 1 ms.
        assert!((s.p99 as f64 - 991_000.0).abs() <= 991.0, "{s:?}");
        assert!((s.p999 as f64 - 1_000_000.0).abs() <= 1000.0, "{s:?}");
        assert_eq!(s.max, 5_000_000);
        assert_eq!(s.over_1ms, 1);
        assert_eq!(Lateness::default().summary().releases, 0);
    }
}
