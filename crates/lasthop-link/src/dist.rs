//! Duration distributions, written as Seawind wrote them but with units:
//! `"700ms"` (static), `"uniform(200ms, 1900ms)"`, `"exponential(15s, min=1s, max=20s)"`.
//!
//! Bounds of an exponential are applied by clipping (a draw above `max` becomes `max`) unless
//! `bound=redraw` asks for re-drawing. The seeds do not say which Seawind did; clipping keeps the
//! written mean closer (seed 002's exponential(6 s, max 9 s): 4.66 s clipped, 3.41 s redrawn).

use lasthop_core::rng::{unit, Stream};
use lasthop_core::units::parse_dur;
use lasthop_core::Dur;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Static(Dur),
    Uniform(Dur, Dur),
    Exponential {
        mean: Dur,
        min: Dur,
        max: Option<Dur>,
        redraw: bool,
    },
}

const ALLOWED: &str = "a duration (\"700ms\"), \"uniform(MIN, MAX)\" or \"exponential(MEAN[, min=MIN][, max=MAX][, bound=clip|redraw])\"";

impl Dist {
    pub fn parse(text: &str) -> Result<Dist, String> {
        let t = text.trim();
        let bad = |why: &str| format!("invalid distribution {text:?}: {why}; expected {ALLOWED}");
        let Some(open) = t.find('(') else {
            return parse_dur(t)
                .map(Dist::Static)
                .map_err(|e| bad(&e.to_string()));
        };
        let name = t[..open].trim();
        let args = t[open + 1..]
            .strip_suffix(')')
            .ok_or_else(|| bad("missing ')'"))?;
        let args: Vec<&str> = args.split(',').map(str::trim).collect();
        let dur = |s: &str| parse_dur(s).map_err(|e| bad(&e.to_string()));
        match name {
            "static" if args.len() == 1 => Ok(Dist::Static(dur(args[0])?)),
            "uniform" if args.len() == 2 => {
                let (a, b) = (dur(args[0])?, dur(args[1])?);
                if a > b {
                    return Err(bad("MIN is above MAX"));
                }
                Ok(Dist::Uniform(a, b))
            }
            "exponential" if !args.is_empty() => {
                let mean = dur(args[0])?;
                if mean == Dur::ZERO {
                    return Err(bad("the mean must be above zero"));
                }
                let (mut min, mut max, mut redraw) = (Dur::ZERO, None, false);
                for a in &args[1..] {
                    match a.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                        Some(("min", v)) => min = dur(v)?,
                        Some(("max", v)) => max = Some(dur(v)?),
                        Some(("bound", "clip")) => redraw = false,
                        Some(("bound", "redraw")) => redraw = true,
                        _ => return Err(bad(&format!("unknown argument {a:?}"))),
                    }
                }
                if max.is_some_and(|m| m < min) {
                    return Err(bad("max is below min"));
                }
                if redraw && max.is_some_and(|m| m == min) {
                    return Err(bad("bound=redraw needs max above min"));
                }
                Ok(Dist::Exponential {
                    mean,
                    min,
                    max,
                    redraw,
                })
            }
            _ => Err(bad("unknown name or wrong number of arguments")),
        }
    }

    pub fn sample(&self, rng: &mut Stream) -> Dur {
        match *self {
            Dist::Static(d) => d,
            Dist::Uniform(a, b) => {
                let span = (b.0 - a.0) as f64;
                Dur(a.0 + (unit(rng) * span).round() as u64)
            }
            Dist::Exponential {
                mean,
                min,
                max,
                redraw,
            } => loop {
                // 1 - u lies in (0, 1], so the logarithm is finite.
                let x = -(mean.0 as f64) * (1.0 - unit(rng)).ln();
                let x = Dur(x.round().min(u64::MAX as f64) as u64);
                let inside = x >= min && max.is_none_or(|m| x <= m);
                if inside || !redraw {
                    break x.max(min).min(max.unwrap_or(Dur::MAX));
                }
            },
        }
    }

    /// The largest value the distribution can produce, if bounded.
    pub fn max(&self) -> Option<Dur> {
        match *self {
            Dist::Static(d) => Some(d),
            Dist::Uniform(_, b) => Some(b),
            Dist::Exponential { max, .. } => max,
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Static(d) => write!(f, "{d}"),
            Dist::Uniform(a, b) => write!(f, "uniform({a}, {b})"),
            Dist::Exponential {
                mean,
                min,
                max,
                redraw,
            } => {
                write!(f, "exponential({mean}")?;
                if *min != Dur::ZERO {
                    write!(f, ", min={min}")?;
                }
                if let Some(m) = max {
                    write!(f, ", max={m}")?;
                }
                if *redraw {
                    write!(f, ", bound=redraw")?;
                }
                write!(f, ")")
            }
        }
    }
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d).map_err(|_| {
            de::Error::custom(format!("a distribution is written as a string: {ALLOWED}"))
        })?;
        Dist::parse(&s).map_err(de::Error::custom)
    }
}

impl Serialize for Dist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::Seeds;

    #[test]
    fn parses_seawind_forms() {
        assert_eq!(
            Dist::parse("700ms").unwrap(),
            Dist::Static(Dur::from_millis(700))
        );
        assert_eq!(
            Dist::parse("uniform(200ms, 1900ms)").unwrap(),
            Dist::Uniform(Dur::from_millis(200), Dur::from_millis(1900))
        );
        let e = Dist::parse("exponential(15s, min=1s, max=20s)").unwrap();
        assert_eq!(e.to_string(), "exponential(15s, min=1s, max=20s)");
        for bad in [
            "uniform(2s, 1s)",
            "normal(1s)",
            "exponential(0s)",
            "exponential(1s, max=1s, min=2s)",
            "uniform(1s",
            "exponential(1s, mode=3)",
        ] {
            assert!(Dist::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn samples_stay_in_bounds_and_means_are_right() {
        let mut r = Seeds::new(1, 0).stream("t");
        let u = Dist::parse("uniform(200ms, 1900ms)").unwrap();
        let n = 50_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = u.sample(&mut r);
            assert!(x >= Dur::from_millis(200) && x <= Dur::from_millis(1900));
            sum += x.as_secs_f64();
        }
        assert!((sum / n as f64 - 1.05).abs() < 0.01);
        // exponential(6 s) clipped at 9 s has mean 6(1 - e^-1.5) = 4.661 s; redrawn, 3.414 s.
        for (text, want) in [
            ("exponential(6s, max=9s)", 4.661),
            ("exponential(6s, max=9s, bound=redraw)", 3.414),
        ] {
            let d = Dist::parse(text).unwrap();
            let mean = (0..n).map(|_| d.sample(&mut r).as_secs_f64()).sum::<f64>() / n as f64;
            assert!((mean - want).abs() < 0.05, "{text}: {mean}");
        }
    }
}
