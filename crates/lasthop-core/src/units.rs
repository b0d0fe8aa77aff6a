//! Quantities written out with their units in specs: `"300ms"`, `"64kbit"`, `"9600B"`.
//!
//! Numbers are parsed as exact decimals (no floats), so `"1.5s"` is exactly 1 500 000 000 ns and
//! `"0.1ms"` is exactly 100 000 ns; a value that is not a whole number of the base unit (ns, bit/s,
//! byte) is refused. Every error names the text and the units that are allowed.

use crate::time::Dur;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A transmission rate in bits per second; [`Rate::UNLIMITED`] transmits in zero time.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Rate(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Bytes(pub u64);

impl Rate {
    pub const UNLIMITED: Rate = Rate(u64::MAX);

    pub fn bits_per_sec(self) -> u64 {
        self.0
    }
    pub fn is_unlimited(self) -> bool {
        self.0 == u64::MAX
    }
    /// Serialization time of `bytes` bytes; zero for an unlimited rate.
    #[inline] // several times per packet, from other crates
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.is_unlimited() {
            Dur::ZERO
        } else {
            Dur::for_bits(bytes * 8, self.0)
        }
    }
}

const DUR_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
const DUR_ALLOWED: &str = "a number followed by ns, us, ms, s, min or h (e.g. \"300ms\", \"1.5s\")";

const RATE_UNITS: &[(&str, u64)] = &[
    ("bit", 1),
    ("kbit", 1_000),
    ("Mbit", 1_000_000),
    ("Gbit", 1_000_000_000),
];
const RATE_ALLOWED: &str =
    "a number followed by bit, kbit, Mbit or Gbit (per second, powers of 1000; e.g. \"64kbit\"), or \"unlimited\"";

const BYTE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("kB", 1_000),
    ("KiB", 1_024),
    ("MB", 1_000_000),
    ("MiB", 1_048_576),
    ("GB", 1_000_000_000),
    ("GiB", 1_073_741_824),
];
const BYTE_ALLOWED: &str = "a number followed by B, kB, KiB, MB, MiB, GB or GiB (e.g. \"9600B\")";

/// Why a quantity did not parse: the text, what is wrong with it, and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    pub what: &'static str,
    pub text: String,
    pub problem: UnitProblem,
    pub allowed: &'static str,
}

/// What is wrong with a quantity's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitProblem {
    /// Not a number followed by a known unit.
    Malformed,
    /// More than the largest value (given in words).
    TooLarge(&'static str),
    /// Not a whole number of the base unit (named).
    NotWhole(&'static str),
    /// Zero where zero means nothing can happen (given: why).
    Zero(&'static str),
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, text, allowed) = (self.what, &self.text, self.allowed);
        match &self.problem {
            UnitProblem::Malformed => write!(f, "invalid {what} {text:?}: expected {allowed}"),
            UnitProblem::TooLarge(max) => write!(
                f,
                "invalid {what} {text:?}: too large, the largest is {max}; expected {allowed}"
            ),
            UnitProblem::NotWhole(base) => write!(
                f,
                "invalid {what} {text:?}: not a whole number of {base}; expected {allowed}"
            ),
            UnitProblem::Zero(why) => {
                write!(
                    f,
                    "invalid {what} {text:?}: zero is not allowed ({why}); expected {allowed}"
                )
            }
        }
    }
}

impl std::error::Error for UnitError {}

/// Splits `"1.5ms"` into ("1.5", "ms") and returns `number × scale` exactly, or what is wrong:
/// malformed (or negative), too large for a u64 of the base unit, or not a whole multiple of it.
fn scaled(text: &str, units: &[(&str, u64)]) -> Result<u64, Scaled> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or(Scaled::Malformed)?;
    let (num, unit) = t.split_at(split);
    let unit = unit
        .trim_start()
        .strip_suffix("/s")
        .unwrap_or(unit.trim_start());
    let scale = units
        .iter()
        .find(|(u, _)| *u == unit)
        .ok_or(Scaled::Malformed)?
        .1;
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(Scaled::Malformed);
    }
    let digits = |d: &str| -> Result<(), Scaled> {
        if d.bytes().all(|b| b.is_ascii_digit()) {
            Ok(())
        } else {
            Err(Scaled::Malformed)
        }
    };
    digits(int)?;
    digits(frac)?;
    // Past u128 it is too large anyway (all digits checked above).
    let int: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| Scaled::TooLarge)?
    };
    let mut value = int.checked_mul(scale as u128).ok_or(Scaled::TooLarge)?;
    let frac = frac.trim_end_matches('0');
    if !frac.is_empty() {
        let digits: u128 = frac.parse().map_err(|_| Scaled::NotWhole)?;
        let denom = 10u128
            .checked_pow(frac.len() as u32)
            .ok_or(Scaled::NotWhole)?;
        let part = digits.checked_mul(scale as u128).ok_or(Scaled::NotWhole)?;
        if part % denom != 0 {
            return Err(Scaled::NotWhole);
        }
        value = value.checked_add(part / denom).ok_or(Scaled::TooLarge)?;
    }
    u64::try_from(value).map_err(|_| Scaled::TooLarge)
}

enum Scaled {
    Malformed,
    TooLarge,
    NotWhole,
}

fn unit_error(
    what: &'static str,
    text: &str,
    s: Scaled,
    max: &'static str,
    base: &'static str,
    allowed: &'static str,
) -> UnitError {
    UnitError {
        what,
        text: text.into(),
        problem: match s {
            Scaled::Malformed => UnitProblem::Malformed,
            Scaled::TooLarge => UnitProblem::TooLarge(max),
            Scaled::NotWhole => UnitProblem::NotWhole(base),
        },
        allowed,
    }
}

pub fn parse_dur(text: &str) -> Result<Dur, UnitError> {
    scaled(text, DUR_UNITS).map(Dur).map_err(|s| {
        unit_error(
            "duration",
            text,
            s,
            "2^64-1 ns (about 584 years, \"5124095h\")",
            "nanoseconds",
            DUR_ALLOWED,
        )
    })
}

pub fn parse_rate(text: &str) -> Result<Rate, UnitError> {
    if text.trim() == "unlimited" {
        return Ok(Rate::UNLIMITED);
    }
    let max = "18446744073Gbit (for no limit write \"unlimited\")";
    match scaled(text, RATE_UNITS) {
        Ok(0) => Err(UnitError {
            what: "rate",
            text: text.into(),
            problem: UnitProblem::Zero(
                "a link of 0 bit/s never sends a packet: give a positive rate, e.g. \"64kbit\", or \"unlimited\"",
            ),
            allowed: RATE_ALLOWED,
        }),
        Ok(r) if r != u64::MAX => Ok(Rate(r)),
        Ok(_) => Err(unit_error("rate", text, Scaled::TooLarge, max, "bit/s", RATE_ALLOWED)),
        Err(s) => Err(unit_error("rate", text, s, max, "bit/s", RATE_ALLOWED)),
    }
}

pub fn parse_bytes(text: &str) -> Result<Bytes, UnitError> {
    scaled(text, BYTE_UNITS).map(Bytes).map_err(|s| {
        unit_error(
            "size",
            text,
            s,
            "2^64-1 B (\"16EiB\" less one byte)",
            "bytes",
            BYTE_ALLOWED,
        )
    })
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_unlimited() {
            return write!(f, "unlimited");
        }
        for (unit, div) in RATE_UNITS.iter().rev() {
            if self.0 % div == 0 {
                return write!(f, "{}{unit}", self.0 / div);
            }
        }
        unreachable!("bit divides everything")
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

/// Serde support: each quantity is a string with its unit. A bare number is refused, with a hint.
macro_rules! string_quantity {
    ($ty:ty, $parse:ident, $what:literal, $allowed:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} as a string: {}", $what, $allowed)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "invalid {} {v}: write the unit, as a string: {}",
                            $what, $allowed
                        )))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "invalid {} {v}: write the unit, as a string: {}",
                            $what, $allowed
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
}
string_quantity!(Dur, parse_dur, "duration", DUR_ALLOWED);
string_quantity!(Rate, parse_rate, "rate", RATE_ALLOWED);
string_quantity!(Bytes, parse_bytes, "size", BYTE_ALLOWED);

/// A byte count: a bare integer (`188640`) or a size with its unit (`"64KiB"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteCount(pub u64);

impl<'de> Deserialize<'de> for ByteCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ByteCount;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of bytes: an integer (188640) or a size string (\"64KiB\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteCount, E> {
                u64::try_from(v)
                    .map(ByteCount)
                    .map_err(|_| E::custom(format!("invalid byte count {v}: must not be negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteCount, E> {
                Ok(ByteCount(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteCount, E> {
                parse_bytes(v).map(|b| ByteCount(b.0)).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_dur("300ms").unwrap(), Dur::from_millis(300));
        assert_eq!(parse_dur("1.5s").unwrap(), Dur::from_millis(1500));
        assert_eq!(parse_dur("0.1ms").unwrap(), Dur::from_micros(100));
        assert_eq!(parse_dur("701ms").unwrap(), Dur::from_millis(701));
        assert_eq!(parse_dur("2min").unwrap(), Dur::from_secs(120));
        assert_eq!(parse_dur(" 7 us").unwrap(), Dur::from_micros(7));
        for bad in [
            "300",
            "ms",
            "-1s",
            "1.5ns",
            "3 parsecs",
            "",
            "1..2s",
            "99999999999999h",
        ] {
            let e = parse_dur(bad).unwrap_err();
            assert!(e.to_string().contains("ns, us, ms, s"), "{e}");
        }
        // Each says what is wrong, not only what is allowed.
        let e = parse_dur("99999999999999h").unwrap_err().to_string();
        assert!(e.contains("too large, the largest is 2^64-1 ns"), "{e}");
        let e = parse_dur("999999999999999999999999999999999999999999s")
            .unwrap_err()
            .to_string();
        assert!(e.contains("too large"), "{e}");
        let e = parse_dur("1.5ns").unwrap_err().to_string();
        assert!(e.contains("not a whole number of nanoseconds"), "{e}");
        let e = parse_dur("3 parsecs").unwrap_err().to_string();
        assert!(
            e.starts_with("invalid duration \"3 parsecs\": expected a number"),
            "{e}"
        );
        assert_eq!(parse_dur("1.500s").unwrap(), Dur::from_millis(1500));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("64kbit").unwrap(), Rate(64_000));
        assert_eq!(parse_rate("9600bit").unwrap(), Rate(9_600));
        assert_eq!(parse_rate("1.5Mbit/s").unwrap(), Rate(1_500_000));
        assert_eq!(parse_rate("unlimited").unwrap(), Rate::UNLIMITED);
        let zero = parse_rate("0kbit").unwrap_err().to_string();
        assert!(zero.contains("zero is not allowed"), "{zero}");
        assert!(zero.contains("\"unlimited\""), "{zero}");
        let huge = parse_rate("99999999999Gbit").unwrap_err().to_string();
        assert!(huge.contains("too large"), "{huge}");
        assert!(!huge.contains("zero"), "{huge}");
        assert!(parse_rate("64kbps").is_err());
        assert_eq!(Rate(64_000).to_string(), "64kbit");
        assert_eq!(Rate(45_000_000).to_string(), "45Mbit");
        assert_eq!(Rate(9_600).to_string(), "9600bit");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("9600B").unwrap(), Bytes(9600));
        assert_eq!(parse_bytes("64KiB").unwrap(), Bytes(65536));
        assert_eq!(parse_bytes("1.22kB").unwrap(), Bytes(1220));
        assert!(parse_bytes("9600").is_err());
        let e = parse_bytes("0.5B").unwrap_err().to_string();
        assert!(e.contains("not a whole number of bytes"), "{e}");
        let e = parse_bytes("99999999999GiB").unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
    }

    #[test]
    fn serde_refuses_bare_numbers() {
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct S {
            d: Dur,
        }
        let e = toml_like_error("d = 300");
        assert!(e.contains("write the unit"), "{e}");
        fn toml_like_error(_: &str) -> String {
            // No toml in this crate's dependencies: drive the visitor through serde's value
            // deserializer instead.
            use serde::de::value::{Error, U64Deserializer};
            use serde::de::IntoDeserializer;
            let d: U64Deserializer<Error> = 300u64.into_deserializer();
            Dur::deserialize(d).unwrap_err().to_string()
        }
    }
}
