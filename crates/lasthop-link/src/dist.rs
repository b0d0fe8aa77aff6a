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

/// A distribution that cannot be parsed: the text as written, what is wrong with it, and the
/// forms allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid distribution {text:?}: {problem}; expected {ALLOWED}")]
pub struct DistError {
    pub text: String,
    pub problem: DistProblem,
}

/// What is wrong with a distribution's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistProblem {
    /// A duration (the static value, a bound or a mean) that does not parse.
    #[error(transparent)]
    Duration(#[from] lasthop_core::units::UnitError),
    #[error("missing ')'")]
    MissingParen,
    #[error("MIN is above MAX")]
    MinAboveMax,
    #[error("the mean must be above zero")]
    ZeroMean,
    #[error("unknown argument {0:?}")]
    UnknownArgument(String),
    #[error("max is below min")]
    MaxBelowMin,
    #[error("bound=redraw needs max above min")]
    RedrawNeedsRange,
    #[error("unknown name or wrong number of arguments")]
    UnknownForm,
}

impl Dist {
    pub fn parse(text: &str) -> Result<Dist, DistError> {
        Dist::parse_form(text.trim()).map_err(|problem| DistError {
            text: text.to_string(),
            problem,
        })
    }

    fn parse_form(t: &str) -> Result<Dist, DistProblem> {
        let Some(open) = t.find('(') else {
            return Ok(Dist::Static(parse_dur(t)?));
        };
        let name = t[..open].trim();
        let args = t[open + 1..]
            .strip_suffix(')')
            .ok_or(DistProblem::MissingParen)?;
        let args: Vec<&str> = args.split(',').map(str::trim).collect();
        match name {
            "static" if args.len() == 1 => Ok(Dist::Static(parse_dur(args[0])?)),
            "uniform" if args.len() == 2 => {
                let (a, b) = (parse_dur(args[0])?, parse_dur(args[1])?);
                if a > b {
                    return Err(DistProblem::MinAboveMax);
                }
                Ok(Dist::Uniform(a, b))
            }
            "exponential" if !args.is_empty() => {
                let mean = parse_dur(args[0])?;
                if mean == Dur::ZERO {
                    return Err(DistProblem::ZeroMean);
                }
                let (mut min, mut max, mut redraw) = (Dur::ZERO, None, false);
                for a in &args[1..] {
                    match a.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                        Some(("min", v)) => min = parse_dur(v)?,
                        Some(("max", v)) => max = Some(parse_dur(v)?),
                        Some(("bound", "clip")) => redraw = false,
                        Some(("bound", "redraw")) => redraw = true,
                        _ => return Err(DistProblem::UnknownArgument(a.to_string())),
                    }
                }
                if max.is_some_and(|m| m < min) {
                    return Err(DistProblem::MaxBelowMin);
                }
                if redraw && max.is_some_and(|m| m == min) {
                    return Err(DistProblem::RedrawNeedsRange);
                }
                Ok(Dist::Exponential {
                    mean,
                    min,
                    max,
                    redraw,
                })
            }
            _ => Err(DistProblem::UnknownForm),
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
    }

    #[test]
    fn bad_distributions_say_what_is_wrong_and_what_is_allowed() {
        use DistProblem::*;
        for (bad, want) in [
            ("uniform(2s, 1s)", MinAboveMax),
            ("normal(1s)", UnknownForm),
            ("uniform(1s)", UnknownForm),
            ("exponential(0s)", ZeroMean),
            ("exponential(1s, max=1s, min=2s)", MaxBelowMin),
            (
                "exponential(1s, min=1s, max=1s, bound=redraw)",
                RedrawNeedsRange,
            ),
            ("uniform(1s", MissingParen),
            ("exponential(1s, mode=3)", UnknownArgument("mode=3".into())),
        ] {
            assert_eq!(Dist::parse(bad).unwrap_err().problem, want, "{bad}");
        }
        let e = Dist::parse(" 7 parsecs").unwrap_err();
        assert_eq!(e.text, " 7 parsecs");
        let DistProblem::Duration(u) = &e.problem else {
            panic!("{e:?}");
        };
        assert_eq!((u.what, u.text.as_str()), ("duration", "7 parsecs"));
        assert_eq!(
            Dist::parse("uniform(2s, 1s)").unwrap_err().to_string(),
            format!(
                "invalid distribution \"uniform(2s, 1s)\": MIN is above MAX; expected {ALLOWED}"
            )
        );
        // The duration's own message (with its units) sits inside the distribution's.
        let m = Dist::parse("exponential(1s, max=2x)")
            .unwrap_err()
            .to_string();
        assert!(
            m.starts_with("invalid distribution \"exponential(1s, max=2x)\": invalid duration \"2x\": expected "),
            "{m}"
        );
        assert!(m.ends_with(&format!("; expected {ALLOWED}")), "{m}");
        // Through serde (a link spec), the message is the same.
        let e = toml_error("\"exponential(0s)\"");
        assert!(e.contains("the mean must be above zero"), "{e}");
    }

    /// Deserializes a `Dist` from a TOML value and returns the error's text.
    fn toml_error(value: &str) -> String {
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct W {
            d: Dist,
        }
        toml::from_str::<W>(&format!("d = {value}"))
            .unwrap_err()
            .to_string()
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
