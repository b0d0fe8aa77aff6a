//! The loss model's keys and checks (`[DIR.loss]`), the resolved [`LossModel`] and the loss
//! files it reads: data only, so that the models (`crate::error_model`, `crate::netem_loss`)
//! and the spec's checks both use them without importing each other.

use crate::files;
use crate::spec::schema::LossSpec;
use lasthop_core::spec::{err, SpecError};
use lasthop_core::units::parse_dur;
use std::path::Path;
use std::sync::Arc;

/// The loss model of one direction, as the spec chose it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LossModel {
    /// The state chain's `error` probability (the default).
    #[default]
    States,
    /// Every attempt fails with this probability.
    Uniform { probability: f64 },
    /// Attempts `drop` (1-based, ascending, each in 1..=every) of every `every` fail.
    Pattern { drop: Vec<u64>, every: u64 },
    /// netem's Gilbert–Elliott model.
    GilbertElliott(GeParams),
    /// netem's 4-state Markov model.
    FourState(FourStateParams),
    /// Losses replayed from a file.
    Trace(LossTrace),
}

impl LossModel {
    /// The model names a spec may give, for error messages.
    pub const NAMES: [&'static str; 6] = [
        "states",
        "uniform",
        "pattern",
        "gilbert_elliott",
        "4state",
        "trace",
    ];
}

/// Gilbert–Elliott's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeParams {
    pub p: f64,
    pub r: f64,
    pub loss_bad: f64,
    pub loss_good: f64,
}

/// The 4-state model's transition probabilities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FourStateParams {
    pub p13: f64,
    pub p31: f64,
    pub p32: f64,
    pub p23: f64,
    pub p14: f64,
}

/// Losses read from a file.
#[derive(Clone, PartialEq)]
pub enum LossTrace {
    /// Attempt numbers (1-based, increasing).
    Attempts(Arc<[u64]>),
    /// Time intervals [start, end), ns, increasing and apart.
    Episodes(Arc<[(u64, u64)]>),
}

impl std::fmt::Debug for LossTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LossTrace::Attempts(v) => write!(f, "{} lost attempts", v.len()),
            LossTrace::Episodes(v) => write!(f, "{} loss episodes", v.len()),
        }
    }
}

/// Reads a trace of lost attempt numbers (`lost`): one whole number per line, increasing.
pub fn load_attempts(key: &str, file: &str, base: &Path) -> Result<LossTrace, SpecError> {
    const WHAT: &str = "a loss trace has one attempt number per line, counted from 1, increasing";
    let text = files::read(base, key, file, "a loss trace")?;
    let mut v: Vec<u64> = vec![];
    for (line, l) in files::value_lines(&text) {
        let n: u64 = l.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
            files::line_err(
                key,
                file,
                line,
                format!("{l:?} is not an attempt number; {WHAT}"),
            )
        })?;
        if v.last().is_some_and(|&p| n <= p) {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("{n} does not come after {}; {WHAT}", v[v.len() - 1]),
            ));
        }
        v.push(n);
        files::check_count(key, file, v.len())?;
    }
    if v.is_empty() {
        return Err(err(key, format!("{file:?} has no attempt numbers; {WHAT}")));
    }
    Ok(LossTrace::Attempts(v.into()))
}

/// Reads a trace of loss episodes (`episodes`): `START END` per line (durations with units, or
/// bare seconds), each episode after the last.
pub fn load_episodes(key: &str, file: &str, base: &Path) -> Result<LossTrace, SpecError> {
    const WHAT: &str = "a loss-episode trace has `START END` per line, e.g. `12.5s 13s` (bare numbers are seconds), START before END, each after the one before";
    let text = files::read(base, key, file, "a loss-episode trace")?;
    let mut v: Vec<(u64, u64)> = vec![];
    for (line, l) in files::value_lines(&text) {
        let fields: Vec<&str> = l
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let [a, b] = fields[..] else {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("{l:?} is not two times; {WHAT}"),
            ));
        };
        let time = |s: &str| {
            if s.ends_with(|c: char| c.is_ascii_digit()) {
                parse_dur(&format!("{s}s"))
            } else {
                parse_dur(s)
            }
            .map(|d| d.0)
            .map_err(|e| files::line_err(key, file, line, e))
        };
        let (a, b) = (time(a)?, time(b)?);
        if a >= b {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("the episode ends before it starts; {WHAT}"),
            ));
        }
        if v.last().is_some_and(|p| a < p.1) {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("the episode starts before the last one ended; {WHAT}"),
            ));
        }
        v.push((a, b));
        files::check_count(key, file, v.len())?;
    }
    if v.is_empty() {
        return Err(err(key, format!("{file:?} has no episodes; {WHAT}")));
    }
    Ok(LossTrace::Episodes(v.into()))
}

pub(crate) fn validate_loss(
    key: &str,
    l: Option<&LossSpec>,
    files_dir: &Path,
) -> Result<LossModel, SpecError> {
    let Some(l) = l else {
        return Ok(LossModel::States);
    };
    let k = |f: &str| format!("{key}.{f}");
    let model = l.model.as_deref().unwrap_or("states");
    if !LossModel::NAMES.contains(&model) {
        let models = LossModel::NAMES
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(err(
            k("model"),
            format!("{model:?} is not a loss model: allowed {models}"),
        ));
    }
    // Keys that belong to another model are refused rather than ignored.
    let owners: [(&str, bool, &str); 14] = [
        ("probability", l.probability.is_some(), "uniform"),
        ("drop", l.drop.is_some(), "pattern"),
        ("every", l.every.is_some(), "pattern"),
        ("p", l.p.is_some(), "gilbert_elliott"),
        ("r", l.r.is_some(), "gilbert_elliott"),
        ("loss_bad", l.loss_bad.is_some(), "gilbert_elliott"),
        ("loss_good", l.loss_good.is_some(), "gilbert_elliott"),
        ("p13", l.p13.is_some(), "4state"),
        ("p31", l.p31.is_some(), "4state"),
        ("p32", l.p32.is_some(), "4state"),
        ("p23", l.p23.is_some(), "4state"),
        ("p14", l.p14.is_some(), "4state"),
        ("lost", l.lost.is_some(), "trace"),
        ("episodes", l.episodes.is_some(), "trace"),
    ];
    if let Some((name, _, owner)) = owners.iter().find(|(_, set, o)| *set && *o != model) {
        return Err(err(
            k(name),
            format!("`{name}` belongs to model = {owner:?}, not {model:?}"),
        ));
    }
    let prob = |name: &str, v: Option<f64>, default: Option<f64>, example: &str| {
        let x = v.or(default).ok_or_else(|| {
            err(
                k(name),
                format!("missing: model = {model:?} needs `{name}`, e.g. {name} = {example}"),
            )
        })?;
        if !(0.0..=1.0).contains(&x) {
            return Err(err(k(name), format!("probability {x} is outside 0..1")));
        }
        Ok(x)
    };
    match model {
        "states" => Ok(LossModel::States),
        "uniform" => Ok(LossModel::Uniform {
            probability: prob("probability", l.probability, None, "0.01")?,
        }),
        "pattern" => {
            let every = l.every.ok_or_else(|| {
                err(
                    k("every"),
                    "missing: model = \"pattern\" needs the cycle length, e.g. every = 10",
                )
            })?;
            if every == 0 {
                return Err(err(
                    k("every"),
                    "0 is not a cycle length: allowed 1 or more",
                ));
            }
            if every > 1_000_000 {
                return Err(err(
                    k("every"),
                    format!("{every} is too long a cycle: allowed 1..=1000000"),
                ));
            }
            let mut drop = l.drop.clone().ok_or_else(|| {
                err(
                    k("drop"),
                    "missing: model = \"pattern\" needs the packets to drop in each cycle, e.g. drop = [3, 7]",
                )
            })?;
            if let Some(n) = drop.iter().find(|n| !(1..=every).contains(*n)) {
                return Err(err(
                    k("drop"),
                    format!("packet {n} is outside the cycle: allowed 1..={every} (every = {every}, counted from 1)"),
                ));
            }
            drop.sort_unstable();
            if let Some(w) = drop.windows(2).find(|w| w[0] == w[1]) {
                return Err(err(k("drop"), format!("packet {} is listed twice", w[0])));
            }
            Ok(LossModel::Pattern { drop, every })
        }
        "gilbert_elliott" => Ok(LossModel::GilbertElliott(GeParams {
            p: prob("p", l.p, None, "0.01")?,
            r: prob("r", l.r, Some(1.0 - l.p.unwrap_or(0.0)), "0.3")?,
            loss_bad: prob("loss_bad", l.loss_bad, Some(1.0), "1")?,
            loss_good: prob("loss_good", l.loss_good, Some(0.0), "0")?,
        })),
        "4state" => {
            let p13 = prob("p13", l.p13, None, "0.05")?;
            let q = FourStateParams {
                p13,
                p31: prob("p31", l.p31, Some(1.0 - p13), "0.5")?,
                p32: prob("p32", l.p32, Some(0.0), "0.1")?,
                p23: prob("p23", l.p23, Some(1.0), "0.5")?,
                p14: prob("p14", l.p14, Some(0.0), "0.01")?,
            };
            for (a, b, x) in [("p13", "p14", q.p13 + q.p14), ("p31", "p32", q.p31 + q.p32)] {
                if x > 1.0 + 1e-12 {
                    return Err(err(
                        k(a),
                        format!("{a} + {b} = {x}: the probabilities of leaving a state add up to 1 at most"),
                    ));
                }
            }
            Ok(LossModel::FourState(q))
        }
        _ => match (&l.lost, &l.episodes) {
            (Some(f), None) => Ok(LossModel::Trace(load_attempts(&k("lost"), f, files_dir)?)),
            (None, Some(f)) => Ok(LossModel::Trace(load_episodes(&k("episodes"), f, files_dir)?)),
            _ => Err(err(
                key,
                "model = \"trace\" needs one of `lost = \"FILE\"` (lost attempt numbers, one per line) or `episodes = \"FILE\"` (START END lines)",
            )),
        },
    }
}
