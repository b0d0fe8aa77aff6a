//! Distributions, as Seawind offered them for its distribution parameters (seed 001, E.1.2:
//! "static, uniform, normal, lognormal, exponential, hyperexponential, 2-phase markov, beta,
//! gamma, cauchy and user"), written with units.
//!
//! Two kinds of value: [`Dist`] gives durations (state lengths, delays; arguments with units,
//! `"uniform(200ms, 1900ms)"`), [`NumDist`] plain numbers (probabilities, rate multipliers;
//! `"normal(0.01, 0.002)"`, or a bare TOML number for a static value). The families, with
//! their arguments in the value's unit unless said otherwise:
//!
//! | form | draws |
//! |---|---|
//! | `X`, `static(X)` | X |
//! | `uniform(A, B)` | uniform in [A, B] |
//! | `normal(MEAN, SD)` | Gaussian (Box–Muller) |
//! | `lognormal(MEAN, SD)` | log-normal with this mean and standard deviation of the *values* |
//! | `exponential(MEAN)` | exponential |
//! | `hyperexponential(MEAN1, MEAN2, P)` | exponential(MEAN1) with probability P (a number), else exponential(MEAN2) |
//! | `markov2(V1, V2, P12, P21)` | "2-phase markov": a two-phase chain stepped once per draw (phase 1 → 2 with probability P12, 2 → 1 with P21; it starts in phase 1), giving V1 or V2 |
//! | `beta(A, B[, LO, HI])` | LO + (HI − LO)·Beta(A, B); A, B numbers; LO, HI default 0 and 1 (needed for durations) |
//! | `gamma(SHAPE, MEAN)` | Gamma with shape SHAPE (a number) and this mean (Marsaglia–Tsang) |
//! | `cauchy(LOCATION, SCALE)` | Cauchy |
//! | `user(FILE)` | the values of FILE (one per line, as in a spec: durations with units), in order, from the start again after the last |
//!
//! Every form takes `min=`, `max=` and `bound=clip|redraw` after its arguments: a draw outside
//! the bounds is clipped to them (the default), or drawn again (`redraw`; after 1000 tries
//! clipped). Durations are never below 0, probabilities lie in [0, 1] and multipliers are
//! never below 0: draws outside are clipped there. The seeds do not say which Seawind did with
//! bounds; clipping keeps the written mean closer (seed 002's exponential(6 s, max 9 s): 4.66 s
//! clipped, 3.41 s redrawn).
//!
//! The samplers are written here, not taken from a crate, so that the draws a value takes from
//! its stream are fixed by this file (common random numbers across versions): normal 2
//! uniforms, lognormal 2, exponential 1, hyperexponential 2, markov2 1, cauchy 1, uniform 1,
//! gamma and beta a varying number (rejection). `markov2` and `user` keep a place (the phase,
//! the line) per use: each state, direction and key that names one has its own, starting
//! afresh in every link built from the spec.

use crate::files;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::spec::{err, SpecError};
use lasthop_core::units::parse_dur;
use lasthop_core::Dur;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A distribution of durations.
#[derive(Clone, Debug, PartialEq)]
pub struct Dist(Repr);

/// Static, uniform and exponential durations (the seeds' forms) keep their own variants, with
/// the arithmetic they have always had and no test of bounds they cannot have; any other form
/// is a [`Core`].
#[derive(Clone, Debug, PartialEq)]
enum Repr {
    Static(Dur),
    Uniform(Dur, Dur),
    Exponential {
        mean: Dur,
        min: Dur,
        max: Option<Dur>,
        redraw: bool,
    },
    Other(Core),
}

/// A distribution of plain numbers: a probability (clipped into [0, 1]) or a multiplier
/// (never below 0), as the key that holds it says.
#[derive(Clone, Debug, PartialEq)]
pub struct NumDist(Core);

/// What a distribution's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Nanoseconds, written with units.
    Duration,
    /// Plain numbers.
    Number,
}

/// A family with its arguments in base units (ns for durations), its bounds, its text as
/// written, and the place a stateful family (`markov2`, `user`) has reached.
struct Core {
    family: Family,
    min: Option<f64>,
    max: Option<f64>,
    redraw: bool,
    text: String,
    /// `markov2`: the phase (0 or 1); `user`: the next line.
    place: AtomicU64,
}

#[derive(Clone, Debug, PartialEq)]
enum Family {
    Static(f64),
    Uniform(f64, f64),
    Normal {
        mean: f64,
        sd: f64,
    },
    /// Parameters of the underlying normal.
    Lognormal {
        mu: f64,
        sigma: f64,
    },
    Exponential(f64),
    Hyperexponential {
        mean1: f64,
        mean2: f64,
        p: f64,
    },
    Markov2 {
        v: [f64; 2],
        p12: f64,
        p21: f64,
    },
    Beta {
        a: f64,
        b: f64,
        lo: f64,
        hi: f64,
    },
    Gamma {
        shape: f64,
        scale: f64,
    },
    Cauchy {
        location: f64,
        scale: f64,
    },
    /// The file as written, and its values once loaded ([`Dist::load_files`]).
    User {
        file: String,
        values: Option<Arc<[f64]>>,
    },
}

impl Clone for Core {
    /// A copy starts afresh: `markov2` in phase 1, `user` at its first line.
    fn clone(&self) -> Core {
        Core {
            family: self.family.clone(),
            min: self.min,
            max: self.max,
            redraw: self.redraw,
            text: self.text.clone(),
            place: AtomicU64::new(0),
        }
    }
}

impl PartialEq for Core {
    fn eq(&self, o: &Core) -> bool {
        self.family == o.family && self.min == o.min && self.max == o.max && self.redraw == o.redraw
    }
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

/// The forms a duration distribution may take, for error messages.
pub const ALLOWED: &str = "a duration (\"700ms\") or a distribution of durations: static(X), uniform(A, B), normal(MEAN, SD), lognormal(MEAN, SD), exponential(MEAN), hyperexponential(MEAN1, MEAN2, P), markov2(V1, V2, P12, P21), beta(A, B, LO, HI), gamma(SHAPE, MEAN), cauchy(LOCATION, SCALE) or user(FILE), each optionally followed by min=, max= and bound=clip|redraw (e.g. \"uniform(200ms, 1900ms)\", \"exponential(15s, min=1s, max=20s)\")";

/// A distribution that cannot be parsed: the text as written, what is wrong with it, and the
/// forms allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid distribution {text:?}: {problem}; expected {}", if *.numbers { NUM_ALLOWED } else { ALLOWED })]
pub struct DistError {
    pub text: String,
    pub problem: DistProblem,
    /// A distribution of plain numbers (else of durations).
    numbers: bool,
}

const NUM_ALLOWED: &str = "a number or a distribution of numbers: static(X), uniform(A, B), normal(MEAN, SD), lognormal(MEAN, SD), exponential(MEAN), hyperexponential(MEAN1, MEAN2, P), markov2(V1, V2, P12, P21), beta(A, B[, LO, HI]), gamma(SHAPE, MEAN), cauchy(LOCATION, SCALE) or user(FILE), each optionally followed by min=, max= and bound=clip|redraw (e.g. \"uniform(0.5, 1)\")";

/// What is wrong with a distribution's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistProblem {
    /// A duration (a value, a bound, a mean) that does not parse.
    #[error(transparent)]
    Duration(#[from] lasthop_core::units::UnitError),
    #[error("{0:?} is not a number")]
    Number(String),
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
    #[error("{0}")]
    Invalid(String),
    #[error("unknown name or wrong number of arguments")]
    UnknownForm,
}

impl Core {
    fn parse(text: &str, kind: Kind) -> Result<Core, DistProblem> {
        let t = text.trim();
        let value = |s: &str| -> Result<f64, DistProblem> {
            match kind {
                Kind::Duration => Ok(parse_dur(s)?.0 as f64),
                Kind::Number => s
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| DistProblem::Number(s.trim().to_string())),
            }
        };
        let number = |s: &str| -> Result<f64, DistProblem> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| DistProblem::Number(s.trim().to_string()))
        };
        let core = |family| Core {
            family,
            min: None,
            max: None,
            redraw: false,
            text: t.to_string(),
            place: AtomicU64::new(0),
        };
        let Some(open) = t.find('(') else {
            return Ok(core(Family::Static(value(t)?)));
        };
        let name = t[..open].trim();
        let inner = t[open + 1..]
            .strip_suffix(')')
            .ok_or(DistProblem::MissingParen)?;
        let all: Vec<&str> = inner.split(',').map(str::trim).collect();
        // Positional arguments first, then `name=value` options.
        let split = all
            .iter()
            .position(|a| a.contains('='))
            .unwrap_or(all.len());
        let (args, opts) = all.split_at(split);
        let positive = |x: f64, what: &str| {
            if x > 0.0 {
                Ok(x)
            } else {
                Err(DistProblem::Invalid(format!("{what} must be above zero")))
            }
        };
        let prob = |x: f64, what: &str| {
            if (0.0..=1.0).contains(&x) {
                Ok(x)
            } else {
                Err(DistProblem::Invalid(format!("{what} is outside 0..1")))
            }
        };
        let family = match (name, args) {
            ("static", [x]) => Family::Static(value(x)?),
            ("uniform", [a, b]) => {
                let (a, b) = (value(a)?, value(b)?);
                if a > b {
                    return Err(DistProblem::MinAboveMax);
                }
                Family::Uniform(a, b)
            }
            ("normal", [m, s]) => Family::Normal {
                mean: value(m)?,
                sd: nonneg(value(s)?, "SD")?,
            },
            ("lognormal", [m, s]) => {
                let (m, s) = (positive(value(m)?, "MEAN")?, nonneg(value(s)?, "SD")?);
                let sigma2 = (1.0 + (s / m).powi(2)).ln();
                Family::Lognormal {
                    mu: m.ln() - sigma2 / 2.0,
                    sigma: sigma2.sqrt(),
                }
            }
            ("exponential", [m]) => {
                let m = value(m)?;
                if m <= 0.0 {
                    return Err(DistProblem::ZeroMean);
                }
                Family::Exponential(m)
            }
            ("hyperexponential", [m1, m2, p]) => Family::Hyperexponential {
                mean1: positive(value(m1)?, "MEAN1")?,
                mean2: positive(value(m2)?, "MEAN2")?,
                p: prob(number(p)?, "P")?,
            },
            ("markov2", [v1, v2, p12, p21]) => Family::Markov2 {
                v: [value(v1)?, value(v2)?],
                p12: prob(number(p12)?, "P12")?,
                p21: prob(number(p21)?, "P21")?,
            },
            ("beta", [a, b, rest @ ..]) if matches!(rest.len(), 0 | 2) => {
                let (lo, hi) = match rest {
                    [lo, hi] => (value(lo)?, value(hi)?),
                    _ if kind == Kind::Duration => {
                        return Err(DistProblem::Invalid(
                            "a beta of durations needs its range: beta(A, B, LO, HI)".into(),
                        ))
                    }
                    _ => (0.0, 1.0),
                };
                if lo > hi {
                    return Err(DistProblem::MinAboveMax);
                }
                Family::Beta {
                    a: positive(number(a)?, "A")?,
                    b: positive(number(b)?, "B")?,
                    lo,
                    hi,
                }
            }
            ("gamma", [k, m]) => {
                let shape = positive(number(k)?, "SHAPE")?;
                Family::Gamma {
                    shape,
                    scale: positive(value(m)?, "MEAN")? / shape,
                }
            }
            ("cauchy", [l, s]) => Family::Cauchy {
                location: value(l)?,
                scale: positive(value(s)?, "SCALE")?,
            },
            ("user", [f]) if !f.is_empty() => Family::User {
                file: f.to_string(),
                values: None,
            },
            _ => return Err(DistProblem::UnknownForm),
        };
        let mut c = core(family);
        for o in opts {
            match o.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                Some(("min", v)) => c.min = Some(value(v)?),
                Some(("max", v)) => c.max = Some(value(v)?),
                Some(("bound", "clip")) => c.redraw = false,
                Some(("bound", "redraw")) => c.redraw = true,
                _ => return Err(DistProblem::UnknownArgument(o.to_string())),
            }
        }
        if let (Some(lo), Some(hi)) = (c.min, c.max) {
            if hi < lo {
                return Err(DistProblem::MaxBelowMin);
            }
            if c.redraw && hi == lo {
                return Err(DistProblem::RedrawNeedsRange);
            }
        }
        Ok(c)
    }

    /// Reads a `user` family's file (relative to `base`); `key` names the distribution.
    fn load_files(&mut self, key: &str, base: &Path, kind: Kind) -> Result<(), SpecError> {
        let Family::User { file, values } = &mut self.family else {
            return Ok(());
        };
        let text = files::read(base, key, file, "a user distribution's values")?;
        let mut v = vec![];
        for (line, l) in files::value_lines(&text) {
            let x = match kind {
                Kind::Duration => parse_dur(l).map(|d| d.0 as f64).map_err(|e| e.to_string()),
                Kind::Number => l
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("{l:?} is not a number")),
            };
            v.push(x.map_err(|e| files::line_err(key, file, line, e))?);
            files::check_count(key, file, v.len())?;
        }
        if v.is_empty() {
            return Err(err(
                key,
                format!(
                    "{file:?} has no values: a user distribution's file has one value per line{}",
                    match kind {
                        Kind::Duration => ", a duration with its unit (\"700ms\")",
                        Kind::Number => ", a number",
                    }
                ),
            ));
        }
        *values = Some(v.into());
        Ok(())
    }

    /// One draw, in base units, within the bounds and `floor..=ceil` (the kind's range).
    fn sample(&self, rng: &mut Stream, floor: f64, ceil: f64) -> f64 {
        let lo = self.min.map_or(floor, |m| m.max(floor));
        let hi = self.max.map_or(ceil, |m| m.min(ceil));
        let mut tries = 0;
        loop {
            let x = self.draw(rng);
            let inside = x >= lo && x <= hi;
            tries += 1;
            if inside || !self.redraw || tries >= 1000 {
                return x.max(lo).min(hi);
            }
        }
    }

    /// One draw of the family, unbounded.
    fn draw(&self, rng: &mut Stream) -> f64 {
        match &self.family {
            Family::Static(x) => *x,
            Family::Uniform(a, b) => a + unit(rng) * (b - a),
            Family::Normal { mean, sd } => mean + sd * gauss(rng),
            Family::Lognormal { mu, sigma } => (mu + sigma * gauss(rng)).exp(),
            Family::Exponential(m) => exp(rng, *m),
            Family::Hyperexponential { mean1, mean2, p } => {
                let first = unit(rng) < *p;
                exp(rng, if first { *mean1 } else { *mean2 })
            }
            Family::Markov2 { v, p12, p21 } => {
                let phase = self.place.load(Ordering::Relaxed) as usize;
                let leave = if phase == 0 { *p12 } else { *p21 };
                let phase = if unit(rng) < leave { 1 - phase } else { phase };
                self.place.store(phase as u64, Ordering::Relaxed);
                v[phase]
            }
            Family::Beta { a, b, lo, hi } => {
                let x = gamma(rng, *a);
                let y = gamma(rng, *b);
                lo + (hi - lo) * (x / (x + y))
            }
            Family::Gamma { shape, scale } => gamma(rng, *shape) * scale,
            Family::Cauchy { location, scale } => {
                location + scale * (std::f64::consts::PI * (unit(rng) - 0.5)).tan()
            }
            Family::User { values, .. } => {
                let v = values
                    .as_ref()
                    .expect("user files are loaded at validation");
                let i = self.place.fetch_add(1, Ordering::Relaxed);
                v[(i % v.len() as u64) as usize]
            }
        }
    }

    /// The largest value it can give, if bounded.
    fn max_value(&self, ceil: f64) -> Option<f64> {
        let top = match &self.family {
            Family::Static(x) => Some(*x),
            Family::Uniform(_, b) => Some(*b),
            Family::Markov2 { v, .. } => Some(v[0].max(v[1])),
            Family::Beta { hi, .. } => Some(*hi),
            Family::User {
                values: Some(v), ..
            } => v.iter().copied().reduce(f64::max),
            _ => None,
        };
        match (top, self.max) {
            (Some(t), Some(m)) => Some(t.min(m)),
            (t, m) => t.or(m),
        }
        .map(|x| x.min(ceil))
    }
}

fn nonneg(x: f64, what: &str) -> Result<f64, DistProblem> {
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(DistProblem::Invalid(format!("{what} must not be negative")))
    }
}

/// Exponential with mean `m`: 1 − u lies in (0, 1], so the logarithm is finite.
fn exp(rng: &mut Stream, m: f64) -> f64 {
    -m * (1.0 - unit(rng)).ln()
}

/// A standard normal draw (Box–Muller, two uniforms, the cosine half).
fn gauss(rng: &mut Stream) -> f64 {
    let u1 = 1.0 - unit(rng);
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A Gamma(shape, 1) draw: Marsaglia and Tsang (2000); below shape 1 boosted by u^(1/shape).
fn gamma(rng: &mut Stream, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - unit(rng);
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = gauss(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - unit(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

impl Dist {
    pub fn parse(text: &str) -> Result<Dist, DistError> {
        Core::parse(text, Kind::Duration)
            .map(|c| Dist(Repr::of(c)))
            .map_err(|problem| DistError {
                text: text.to_string(),
                problem,
                numbers: false,
            })
    }

    /// An exponential duration of this mean.
    pub fn exponential(mean: Dur) -> Dist {
        Dist(Repr::Exponential {
            mean,
            min: Dur::ZERO,
            max: None,
            redraw: false,
        })
    }

    /// A static duration.
    pub fn fixed(d: Dur) -> Dist {
        Dist(Repr::Static(d))
    }

    /// One draw. Static, uniform and exponential durations keep the exact arithmetic they
    /// have always had (whole ns: A + round(u·(B − A)); round(−MEAN·ln(1 − u))), so that
    /// shipped results stay the same.
    pub fn sample(&self, rng: &mut Stream) -> Dur {
        match self.0 {
            Repr::Static(d) => d,
            Repr::Uniform(a, b) => {
                let span = (b.0 - a.0) as f64;
                Dur(a.0 + (unit(rng) * span).round() as u64)
            }
            Repr::Exponential {
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
            Repr::Other(ref c) => Dur(c.sample(rng, 0.0, u64::MAX as f64).round() as u64),
        }
    }

    /// The largest value the distribution can produce, if bounded.
    pub fn max(&self) -> Option<Dur> {
        match &self.0 {
            Repr::Static(d) => Some(*d),
            Repr::Uniform(_, b) => Some(*b),
            Repr::Exponential { max, .. } => *max,
            Repr::Other(c) => c.max_value(u64::MAX as f64).map(|x| Dur(x as u64)),
        }
    }

    /// Reads the file of a `user` distribution (relative to `base`); `key` names it.
    pub fn load_files(&mut self, key: &str, base: &Path) -> Result<(), SpecError> {
        match &mut self.0 {
            Repr::Other(c) => c.load_files(key, base, Kind::Duration),
            _ => Ok(()),
        }
    }
}

impl Repr {
    fn of(c: Core) -> Repr {
        let bounded = c.min.is_some() || c.max.is_some() || c.redraw;
        match c.family {
            Family::Static(x) if !bounded => Repr::Static(Dur(x as u64)),
            Family::Uniform(a, b) if !bounded => Repr::Uniform(Dur(a as u64), Dur(b as u64)),
            Family::Exponential(mean) => Repr::Exponential {
                mean: Dur(mean as u64),
                min: Dur(c.min.unwrap_or(0.0) as u64),
                max: c.max.map(|m| Dur(m as u64)),
                redraw: c.redraw,
            },
            _ => Repr::Other(c),
        }
    }
}

impl NumDist {
    pub fn parse(text: &str) -> Result<NumDist, DistError> {
        Core::parse(text, Kind::Number)
            .map(NumDist)
            .map_err(|problem| DistError {
                text: text.to_string(),
                problem,
                numbers: true,
            })
    }

    /// A static number.
    pub fn fixed(x: f64) -> NumDist {
        NumDist(Core {
            family: Family::Static(x),
            min: None,
            max: None,
            redraw: false,
            text: x.to_string(),
            place: AtomicU64::new(0),
        })
    }

    /// The number when it never varies.
    pub fn as_static(&self) -> Option<f64> {
        match self.0.family {
            Family::Static(x) if self.0.min.is_none() && self.0.max.is_none() => Some(x),
            _ => None,
        }
    }

    /// A draw as a probability: clipped into [0, 1].
    pub fn probability(&self, rng: &mut Stream) -> f64 {
        self.0.sample(rng, 0.0, 1.0)
    }

    /// A draw as a multiplier: never below 0.
    pub fn multiplier(&self, rng: &mut Stream) -> f64 {
        self.0.sample(rng, 0.0, f64::MAX)
    }

    /// Whether every draw lies in [0, 1] (static values checked; others are clipped).
    pub fn check_probability(&self, key: &str) -> Result<(), SpecError> {
        match self.as_static() {
            Some(p) if !(0.0..=1.0).contains(&p) => {
                Err(err(key, format!("probability {p} is outside 0..1")))
            }
            _ => Ok(()),
        }
    }

    /// Reads the file of a `user` distribution (relative to `base`); `key` names it.
    pub fn load_files(&mut self, key: &str, base: &Path) -> Result<(), SpecError> {
        self.0.load_files(key, base, Kind::Number)
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Static(d) => write!(f, "{d}"),
            Repr::Uniform(a, b) => write!(f, "uniform({a}, {b})"),
            Repr::Exponential {
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
            Repr::Other(c) => f.write_str(&c.text),
        }
    }
}

impl fmt::Display for NumDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
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

impl<'de> Deserialize<'de> for NumDist {
    /// A bare number is a static value; a string is a distribution.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Text(String),
        }
        match Written::deserialize(d)
            .map_err(|_| de::Error::custom(format!("expected {NUM_ALLOWED}")))?
        {
            Written::Number(x) => Ok(NumDist::fixed(x)),
            Written::Text(s) => NumDist::parse(&s).map_err(de::Error::custom),
        }
    }
}

impl Serialize for NumDist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.as_static() {
            Some(x) => s.serialize_f64(x),
            None => s.collect_str(self),
        }
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
            Dist::fixed(Dur::from_millis(700))
        );
        let u = Dist::parse("uniform(200ms, 1900ms)").unwrap();
        assert_eq!(u.max(), Some(Dur::from_millis(1900)));
        let e = Dist::parse("exponential(15s, min=1s, max=20s)").unwrap();
        assert_eq!(e.to_string(), "exponential(15s, min=1s, max=20s)");
        for text in [
            "normal(1s, 200ms)",
            "lognormal(1s, 500ms, max=5s)",
            "hyperexponential(100ms, 2s, 0.9)",
            "markov2(10ms, 1s, 0.1, 0.5)",
            "beta(2, 5, 0s, 1s)",
            "gamma(2, 300ms)",
            "cauchy(1s, 100ms, min=0s, max=10s, bound=redraw)",
            "user(delays.txt)",
        ] {
            assert!(Dist::parse(text).is_ok(), "{text}");
        }
        assert_eq!(NumDist::parse("0.25").unwrap().as_static(), Some(0.25));
        assert!(NumDist::parse("beta(2, 5)").is_ok());
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
            ("normal(1s, 10ms)x", MissingParen),
            (
                "beta(2, 5)",
                Invalid("a beta of durations needs its range: beta(A, B, LO, HI)".into()),
            ),
            ("gamma(0, 1s)", Invalid("SHAPE must be above zero".into())),
            (
                "hyperexponential(1s, 2s, 1.5)",
                Invalid("P is outside 0..1".into()),
            ),
            ("markov2(1s, 2s, 0.1, x)", Number("x".into())),
            ("cauchy(1s, 0s)", Invalid("SCALE must be above zero".into())),
            (
                "lognormal(0s, 1s)",
                Invalid("MEAN must be above zero".into()),
            ),
            ("user()", UnknownForm),
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
        let e = NumDist::parse("normal(0.1, -1)").unwrap_err().to_string();
        assert!(
            e.contains("SD must not be negative")
                && e.contains("a number or a distribution of numbers"),
            "{e}"
        );
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

    fn mean_sd(d: &Dist, n: usize, r: &mut Stream) -> (f64, f64) {
        let v: Vec<f64> = (0..n).map(|_| d.sample(r).as_secs_f64()).collect();
        let m = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        (m, var.sqrt())
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

    #[test]
    fn every_family_has_its_mean_and_spread() {
        // (form, mean, standard deviation) in seconds; 100 000 draws: the mean within 4
        // standard errors, the standard deviation within 3 %.
        let n = 100_000;
        let mut r = Seeds::new(3, 0).stream("t");
        for (text, mean, sd) in [
            ("normal(5s, 1s)", 5.0, 1.0),
            ("lognormal(2s, 1s)", 2.0, 1.0),
            ("exponential(3s)", 3.0, 3.0),
            // H2: E = p m1 + (1-p) m2; E[X²] = 2(p m1² + (1-p) m2²).
            (
                "hyperexponential(1s, 5s, 0.5)",
                3.0,
                (2.0f64 * (0.5 + 12.5) - 9.0).sqrt(),
            ),
            // Beta(2, 5) on [0, 7 s]: mean 2/7·7 = 2 s; var = ab/((a+b)²(a+b+1)) · 49.
            (
                "beta(2, 5, 0s, 7s)",
                2.0,
                (10.0f64 / (49.0 * 8.0) * 49.0).sqrt(),
            ),
            ("gamma(4, 2s)", 2.0, 1.0),
            ("gamma(0.5, 1s)", 1.0, 2.0f64.sqrt()),
        ] {
            let d = Dist::parse(text).unwrap();
            let (m, s) = mean_sd(&d, n, &mut r);
            assert!(
                (m - mean).abs() < 4.0 * sd / (n as f64).sqrt(),
                "{text}: mean {m}"
            );
            assert!((s / sd - 1.0).abs() < 0.03, "{text}: sd {s}");
        }
        // Cauchy has no mean: its median is its location and its quartiles location ± scale.
        let d = Dist::parse("cauchy(10s, 1s)").unwrap();
        let mut v: Vec<f64> = (0..n).map(|_| d.sample(&mut r).as_secs_f64()).collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[(p * n as f64) as usize];
        assert!(
            (q(0.5) - 10.0).abs() < 0.03 && (q(0.75) - 11.0).abs() < 0.05,
            "{} {}",
            q(0.5),
            q(0.75)
        );
        // Durations never go below 0: normal(100ms, 1s) clipped at 0 about 46 % of the time.
        let d = Dist::parse("normal(100ms, 1s)").unwrap();
        let zeros = (0..n).filter(|_| d.sample(&mut r) == Dur::ZERO).count();
        assert!((zeros as f64 / n as f64 - 0.460).abs() < 0.01, "{zeros}");
    }

    #[test]
    fn markov2_steps_a_two_phase_chain_and_user_reads_in_order() {
        // P12 = 0.1, P21 = 0.4: phase 2 a fifth of the time, runs of mean length 1 / 0.4.
        let d = NumDist::parse("markov2(0, 1, 0.1, 0.4)").unwrap();
        let mut r = Seeds::new(4, 0).stream("t");
        let v: Vec<f64> = (0..100_000).map(|_| d.probability(&mut r)).collect();
        let ones = v.iter().filter(|&&x| x == 1.0).count() as f64 / v.len() as f64;
        let runs = v.windows(2).filter(|w| w[0] == 0.0 && w[1] == 1.0).count() as f64;
        assert!((ones - 0.2).abs() < 0.01, "{ones}");
        assert!((ones * v.len() as f64 / runs - 2.5).abs() < 0.1);
        // A copy starts afresh: in phase 1.
        let c = d.clone();
        assert_eq!(c.0.place.load(Ordering::Relaxed), 0);

        let dir = std::env::temp_dir().join(format!("lasthop-dist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("v.txt"), "# delays\n100ms\n\n2s\n").unwrap();
        let mut d = Dist::parse("user(v.txt)").unwrap();
        d.load_files("down.error_delay", &dir).unwrap();
        let got: Vec<Dur> = (0..5).map(|_| d.sample(&mut r)).collect();
        let (a, b) = (Dur::from_millis(100), Dur::from_secs(2));
        assert_eq!(got, [a, b, a, b, a]);
        assert_eq!(d.max(), Some(b));
        std::fs::write(dir.join("bad.txt"), "100ms\n7 furlongs\n").unwrap();
        let mut d = Dist::parse("user(bad.txt)").unwrap();
        let e = d
            .load_files("down.error_delay", &dir)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "key `down.error_delay`: \"bad.txt\" line 2: invalid duration \"7 furlongs\""
            ),
            "{e}"
        );
        std::fs::write(dir.join("empty.txt"), "# nothing\n").unwrap();
        let mut d = NumDist::parse("user(empty.txt)").unwrap();
        let e = d.load_files("down.error", &dir).unwrap_err().to_string();
        assert!(e.contains("has no values"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
