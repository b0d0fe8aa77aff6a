//! CoDel's keys and checks (`policy = "codel"`, RFC 8289); FQ-CoDel shares them.

use lasthop_core::spec::{err, SpecError};
use lasthop_core::Dur;
use serde::{Deserialize, Serialize};

/// CoDel (RFC 8289) as written; defaults are the RFC's (and Linux `sch_codel`'s).
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    /// Acceptable standing queue delay (default 5 ms).
    pub target: Option<Dur>,
    /// Sliding window over which the minimum sojourn must exceed `target` (default 100 ms).
    pub interval: Option<Dur>,
    /// Mark ECT packets instead of dropping them (default false, as Linux `sch_codel`).
    pub ecn: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelConfig {
    pub target: Dur,
    pub interval: Dur,
    pub ecn: bool,
}

impl Default for CodelConfig {
    /// RFC 8289 §4.2–4.3: target 5 ms, interval 100 ms.
    fn default() -> CodelConfig {
        CodelConfig {
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: false,
        }
    }
}

pub(crate) fn validate_codel(
    key: &str,
    target: Option<Dur>,
    interval: Option<Dur>,
    ecn: Option<bool>,
    d: CodelConfig,
) -> Result<CodelConfig, SpecError> {
    let target = target.unwrap_or(d.target);
    let interval = interval.unwrap_or(d.interval);
    if target == Dur::ZERO {
        return Err(err(
            format!("{key}.target"),
            "0s: the target sojourn time must be above 0 (RFC 8289's default is \"5ms\")",
        ));
    }
    if interval == Dur::ZERO {
        return Err(err(
            format!("{key}.interval"),
            "0s: the interval must be above 0 (RFC 8289's default is \"100ms\")",
        ));
    }
    Ok(CodelConfig {
        target,
        interval,
        ecn: ecn.unwrap_or(d.ecn),
    })
}
