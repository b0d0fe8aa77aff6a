//! Integer-nanosecond time. Floats never hold a time, so runs are exact and repeatable.
//!
//! [`Time`] is a point on the run's clock (nanoseconds since the run started); [`Dur`] is a span.
//! The simulator drives these with a virtual clock, the emulator with `CLOCK_MONOTONIC` minus the
//! run's start.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in time: nanoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Dur(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for printing and plotting only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_nanos(n: u64) -> Dur {
        Dur(n)
    }
    pub const fn from_micros(n: u64) -> Dur {
        Dur(n * 1_000)
    }
    pub const fn from_millis(n: u64) -> Dur {
        Dur(n * 1_000_000)
    }
    pub const fn from_secs(n: u64) -> Dur {
        Dur(n * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
    /// Time to send `bits` at `bits_per_sec`, rounded up to the next nanosecond (a transmission
    /// never ends early). `bits_per_sec` must be non-zero.
    #[inline]
    pub fn for_bits(bits: u64, bits_per_sec: u64) -> Dur {
        // The product nearly always fits 64 bits, where division is several times faster.
        if let Some(b) = bits.checked_mul(1_000_000_000) {
            return Dur(b.div_ceil(bits_per_sec));
        }
        let n = (bits as u128 * 1_000_000_000).div_ceil(bits_per_sec as u128);
        Dur(n.min(u64::MAX as u128) as u64)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    /// Panics in debug builds when `rhs` is later; use [`Time::saturating_since`] where that can happen.
    fn sub(self, rhs: Time) -> Dur {
        Dur(self.0 - rhs.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl From<Dur> for std::time::Duration {
    fn from(d: Dur) -> Self {
        std::time::Duration::from_nanos(d.0)
    }
}

impl fmt::Display for Time {
    /// Seconds with nine decimals: `12.072000000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

impl fmt::Display for Dur {
    /// Exact, in the largest unit that keeps a whole part: `72ms`, `252.5ms`, `6s`, `1.5us`.
    /// The text parses back to the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        let (div, unit) = match n {
            0 => return write!(f, "0s"),
            1_000_000_000.. => (1_000_000_000, "s"),
            1_000_000.. => (1_000_000, "ms"),
            1_000.. => (1_000, "us"),
            _ => (1, "ns"),
        };
        let (whole, frac) = (n / div, n % div);
        if frac == 0 {
            return write!(f, "{whole}{unit}");
        }
        let digits = div.ilog10() as usize;
        let frac = format!("{frac:0digits$}");
        write!(f, "{whole}.{}{unit}", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_of_seed_packets() {
        // Seed 000: 576 bytes at 64 kbit/s take 72 ms.
        assert_eq!(Dur::for_bits(576 * 8, 64_000), Dur::from_millis(72));
        // Seed 001: 303 bytes (296 + 7 PPP) at 9600 bit/s take 252.5 ms.
        assert_eq!(Dur::for_bits(303 * 8, 9_600), Dur::from_micros(252_500));
        // 1 bit at 3 bit/s: 333333333.33 ns rounds up.
        assert_eq!(Dur::for_bits(1, 3), Dur(333_333_334));
    }

    #[test]
    fn display() {
        assert_eq!(Dur::from_millis(72).to_string(), "72ms");
        assert_eq!(Dur::from_secs(6).to_string(), "6s");
        assert_eq!(Dur(1_500_000).to_string(), "1.5ms");
        assert_eq!(Dur::from_micros(252_500).to_string(), "252.5ms");
        assert_eq!(Dur(1_000_000_001).to_string(), "1.000000001s");
        assert_eq!(Dur(7).to_string(), "7ns");
        assert_eq!(Time(12_072_000_000).to_string(), "12.072000000");
    }
}
