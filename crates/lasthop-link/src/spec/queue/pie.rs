//! PIE's keys and checks (`policy = "pie"`, RFC 8033).

use lasthop_core::spec::{err, SpecError};
use lasthop_core::Dur;
use serde::{Deserialize, Serialize};

/// PIE (RFC 8033) as written; defaults are the RFC's.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PieSpec {
    /// Target queue delay (default 15 ms).
    pub target: Option<Dur>,
    /// How often the drop probability is updated (default 15 ms).
    pub tupdate: Option<Dur>,
    /// Weight of the delay's distance from target, per second (default 0.125).
    pub alpha: Option<f64>,
    /// Weight of the delay's trend, per second (default 1.25).
    pub beta: Option<f64>,
    /// Burst allowance after an idle period (default 150 ms).
    pub max_burst: Option<Dur>,
    /// Mark ECT packets while the drop probability is at most 10 % (default false, as Linux).
    pub ecn: Option<bool>,
    /// Scale the probability by size / MTU (default false, as Linux).
    pub bytemode: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieConfig {
    pub target: Dur,
    pub tupdate: Dur,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Dur,
    pub ecn: bool,
    pub bytemode: bool,
}

impl Default for PieConfig {
    /// RFC 8033 §4 and §5: 15 ms, 15 ms, 0.125, 1.25, 150 ms.
    fn default() -> PieConfig {
        PieConfig {
            target: Dur::from_millis(15),
            tupdate: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            ecn: false,
            bytemode: false,
        }
    }
}

pub(crate) fn validate_pie(key: &str, p: &PieSpec) -> Result<PieConfig, SpecError> {
    let d = PieConfig::default();
    let k = |f: &str| format!("{key}.{f}");
    let target = p.target.unwrap_or(d.target);
    if target == Dur::ZERO {
        return Err(err(
            k("target"),
            "0s: the target queue delay must be above 0 (RFC 8033's default is \"15ms\")",
        ));
    }
    let tupdate = p.tupdate.unwrap_or(d.tupdate);
    if tupdate == Dur::ZERO {
        return Err(err(
            k("tupdate"),
            "0s: the update interval must be above 0 (RFC 8033's default is \"15ms\")",
        ));
    }
    // RFC 8033 §4.2 and Linux (0..32 sixteenths): alpha and beta lie in (0, 2].
    let alpha = p.alpha.unwrap_or(d.alpha);
    if !(alpha > 0.0 && alpha <= 2.0) {
        return Err(err(
            k("alpha"),
            format!("{alpha} is outside (0, 2] (RFC 8033's default is 0.125)"),
        ));
    }
    let beta = p.beta.unwrap_or(d.beta);
    if !(beta > 0.0 && beta <= 2.0) {
        return Err(err(
            k("beta"),
            format!("{beta} is outside (0, 2] (RFC 8033's default is 1.25)"),
        ));
    }
    Ok(PieConfig {
        target,
        tupdate,
        alpha,
        beta,
        max_burst: p.max_burst.unwrap_or(d.max_burst),
        ecn: p.ecn.unwrap_or(d.ecn),
        bytemode: p.bytemode.unwrap_or(d.bytemode),
    })
}
