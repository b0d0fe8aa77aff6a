//! RED's keys and checks (`policy = "red"`, Floyd–Jacobson, with ns-2's byte mode and
//! adaptive RED).

use lasthop_core::spec::{err, SpecError};
use lasthop_core::Bytes;
use serde::{Deserialize, Serialize};

/// Floyd–Jacobson RED. Thresholds are in packets; in byte mode the queue is measured in units
/// of `mean_packet` bytes and the drop probability scaled by size / `mean_packet` (ns-2's
/// convention).
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    #[serde(default)]
    pub mode: RedMode,
    #[serde(default)]
    pub gentle: bool,
    /// Mark ECT packets (set CE) instead of dropping them; non-ECT packets are dropped.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, drop rather than mark when the average is above max_th (Linux `harddrop`).
    #[serde(default)]
    pub harddrop: bool,
    /// Typical packet size: the idle-time correction's transmission time, and the byte-mode unit.
    pub mean_packet: Option<Bytes>,
    /// Adaptive RED (Floyd, Gummadi, Shenker 2001): every 500 ms, max_p moves towards keeping
    /// the average between min_th + 0.4 (max_th - min_th) and min_th + 0.6 (max_th - min_th).
    #[serde(default, skip_serializing_if = "is_false")]
    pub adaptive: bool,
    /// ns-2's RED (`queue/red.cc`, which seed 004 ran) where it departs from the paper: no
    /// drop or mark unless more than one packet waits at the arrival (`qlen > 1`; more than one
    /// byte in byte mode), and the first arrival after the average crossed min_th, or after such
    /// a short queue, only starts the count (`edv_.old`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ns2: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
}

/// RED's checks: `key` is the `red` table's.
pub fn validate_red(key: &str, r: &RedSpec) -> Result<RedSpec, SpecError> {
    let k = |f: &str| format!("{key}.{f}");
    if r.min_th.is_nan() || r.min_th < 0.0 {
        return Err(err(k("min_th"), format!("{} must be 0 or more", r.min_th)));
    }
    if r.max_th.is_nan() || r.max_th <= r.min_th {
        return Err(err(
            k("min_th"),
            format!("min_th ({}) must be below max_th ({})", r.min_th, r.max_th),
        ));
    }
    if !(r.max_p > 0.0 && r.max_p <= 1.0) {
        return Err(err(k("max_p"), format!("{} is outside (0, 1]", r.max_p)));
    }
    if !(r.w_q > 0.0 && r.w_q <= 1.0) {
        return Err(err(k("w_q"), format!("{} is outside (0, 1]", r.w_q)));
    }
    if r.mean_packet == Some(Bytes(0)) {
        return Err(err(k("mean_packet"), "must be above 0B"));
    }
    if r.harddrop && !r.ecn {
        return Err(err(k("harddrop"), "only means something with ecn = true"));
    }
    Ok(r.clone())
}
