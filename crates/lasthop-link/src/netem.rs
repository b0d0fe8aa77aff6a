//! netem's per-packet impairments beside Seawind's (`[down.netem]`): delay jitter with
//! correlation, reordering, duplication. (netem's loss models are error models,
//! [`crate::netem_loss`]; its `corrupt` is a loss model with `handling = "forward"`; its
//! `delay` is the link's `delay`; its `rate` the link's `rate`.)
//!
//! - **Jitter** (`jitter`, `jitter_correlation`, `distribution`; netem `delay D JITTER [CORR]
//!   [distribution uniform|normal|pareto|paretonormal]`): each packet's propagation is `delay`
//!   plus `jitter` times a draw of netem's distribution: uniform in [−1, 1) (netem's default),
//!   normal (standard deviation 1), or iproute2's `pareto` and `paretonormal` tables as the
//!   functions they tabulate ([`pareto`], [`paretonormal`]); never below 0 in all. (netem's
//!   custom tables are not offered.) Correlation as netem's `get_crandom`: the uniform
//!   behind each draw is (1 − ρ)·u + ρ·(the last one). Jitter reorders packets only where the
//!   link lets them pass each other (`in_order = false`, as netem without `rate`); with
//!   `in_order = true` the LRB keeps link order (as netem with `rate`).
//! - **Reordering** (`reorder`, `reorder_correlation`, `gap`; netem `reorder P [CORR] [gap
//!   N]`): after `gap − 1` packets sent normally (default gap 1, as iproute2 sets it), each
//!   packet is sent at once, without the propagation delay and jitter, with probability P, and
//!   the count starts again. It needs `in_order = false` and a `delay` to pass.
//! - **Duplication** (`duplicate`, `duplicate_correlation`; netem `duplicate P [CORR]`): a packet
//!   reaching the router is copied with probability P; the copy (a new id, event `duplicate`)
//!   joins the router queue right behind it. A copy is not copied again.
//!
//! Each draws from its own stream (`link.jitter.{dir}`, `link.reorder.{dir}`,
//! `link.duplicate.{dir}`); the jitter is drawn for every packet, reordered or not, so adding
//! reordering leaves each packet's jitter alone. Their events carry their own causes (`jitter`,
//! `reorder`, `duplicate`).

use lasthop_core::rng::{unit, Stream};
use lasthop_core::spec::{err, SpecError};
use lasthop_core::{Dur, Seeds};
use serde::{Deserialize, Serialize};

/// `[down.netem]` as written.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetemSpec {
    /// netem's JITTER: the spread of each packet's propagation around `delay`.
    pub jitter: Option<Dur>,
    /// netem's delay correlation, 0..=1.
    pub jitter_correlation: Option<f64>,
    /// `"uniform"` (default), `"normal"`, `"pareto"` or `"paretonormal"`.
    pub distribution: Option<JitterDist>,
    /// netem's reorder probability, 0..=1.
    pub reorder: Option<f64>,
    pub reorder_correlation: Option<f64>,
    /// netem's reorder gap (default 1).
    pub gap: Option<u64>,
    /// netem's duplicate probability, 0..=1.
    pub duplicate: Option<f64>,
    pub duplicate_correlation: Option<f64>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum JitterDist {
    #[default]
    Uniform,
    Normal,
    Pareto,
    Paretonormal,
}

/// The validated impairments of a direction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NetemConfig {
    /// (spread, correlation, distribution).
    pub jitter: Option<(Dur, f64, JitterDist)>,
    /// (probability, correlation, gap).
    pub reorder: Option<(f64, f64, u64)>,
    /// (probability, correlation).
    pub duplicate: Option<(f64, f64)>,
}

impl NetemConfig {
    /// Checks `n` (at `key`); `delay` and `in_order` are the direction's.
    pub fn validate(
        key: &str,
        n: &NetemSpec,
        delay: Dur,
        in_order: bool,
    ) -> Result<NetemConfig, SpecError> {
        let k = |f: &str| format!("{key}.{f}");
        let unit_key = |name: &str, v: Option<f64>| -> Result<Option<f64>, SpecError> {
            match v {
                Some(x) if !(0.0..=1.0).contains(&x) => {
                    Err(err(k(name), format!("{x} is outside 0..1")))
                }
                v => Ok(v),
            }
        };
        let orphan = |name: &str, set: bool, owner: &str| -> Result<(), SpecError> {
            if set {
                return Err(err(
                    k(name),
                    format!("qualifies `{owner}`, which is not given: give `{owner}` or remove `{name}`"),
                ));
            }
            Ok(())
        };
        let jc = unit_key("jitter_correlation", n.jitter_correlation)?;
        let jitter = match n.jitter {
            Some(j) if j > Dur::ZERO => {
                Some((j, jc.unwrap_or(0.0), n.distribution.unwrap_or_default()))
            }
            Some(_) => {
                return Err(err(
                    k("jitter"),
                    "0s jitters nothing: give a spread, or remove `jitter`",
                ))
            }
            None => {
                orphan("jitter_correlation", jc.is_some(), "jitter")?;
                orphan("distribution", n.distribution.is_some(), "jitter")?;
                None
            }
        };
        let rc = unit_key("reorder_correlation", n.reorder_correlation)?;
        let reorder = match unit_key("reorder", n.reorder)? {
            Some(p) => {
                if in_order {
                    return Err(err(
                        k("reorder"),
                        "a reordered packet is sent at once, past those ahead of it, but this direction's link receive buffer releases in link order (in_order = true) and would hold it: set in_order = false",
                    ));
                }
                if delay == Dur::ZERO {
                    return Err(err(
                        k("reorder"),
                        "a reordered packet skips the propagation delay, and this direction has none (netem: \"reordering not possible without specifying some delay\"): give `delay`",
                    ));
                }
                let gap = n.gap.unwrap_or(1);
                if gap == 0 {
                    return Err(err(
                        k("gap"),
                        "0: allowed 1 or more (1: any packet may be reordered)",
                    ));
                }
                Some((p, rc.unwrap_or(0.0), gap))
            }
            None => {
                orphan("reorder_correlation", rc.is_some(), "reorder")?;
                orphan("gap", n.gap.is_some(), "reorder")?;
                None
            }
        };
        let dc = unit_key("duplicate_correlation", n.duplicate_correlation)?;
        let duplicate = match unit_key("duplicate", n.duplicate)? {
            Some(p) => Some((p, dc.unwrap_or(0.0))),
            None => {
                orphan("duplicate_correlation", dc.is_some(), "duplicate")?;
                None
            }
        };
        Ok(NetemConfig {
            jitter,
            reorder,
            duplicate,
        })
    }
}

/// netem's correlated uniform (`get_crandom`): (1 − ρ)·u + ρ·last.
struct Correlated {
    rho: f64,
    last: f64,
    rng: Stream,
}

impl Correlated {
    fn new(rho: f64, mut rng: Stream) -> Correlated {
        // netem's init_crandom starts from a random value.
        let last = if rho > 0.0 { unit(&mut rng) } else { 0.0 };
        Correlated { rho, last, rng }
    }

    fn next(&mut self) -> f64 {
        let u = unit(&mut self.rng);
        if self.rho == 0.0 {
            return u;
        }
        self.last = (1.0 - self.rho) * u + self.rho * self.last;
        self.last
    }
}

/// A direction's impairments as they run.
pub(crate) struct Netem {
    jitter: Option<(Dur, JitterDist, Correlated)>,
    reorder: Option<(f64, u64, Correlated)>,
    /// Packets sent normally since the last reordered one.
    counter: u64,
    duplicate: Option<(f64, Correlated)>,
}

/// What the impairments did to a packet's propagation.
pub(crate) struct Propagation {
    pub delay: Dur,
    pub jittered: bool,
    pub reordered: bool,
}

impl Netem {
    pub fn new(c: &NetemConfig, seeds: &Seeds, dir: crate::dir::Dir) -> Netem {
        let stream = |name: &str| seeds.stream(&format!("link.{name}.{dir}"));
        Netem {
            jitter: c
                .jitter
                .map(|(j, rho, d)| (j, d, Correlated::new(rho, stream("jitter")))),
            reorder: c
                .reorder
                .map(|(p, rho, gap)| (p, gap, Correlated::new(rho, stream("reorder")))),
            counter: 0,
            duplicate: c
                .duplicate
                .map(|(p, rho)| (p, Correlated::new(rho, stream("duplicate")))),
        }
    }

    /// Whether the packet reaching the router now is copied.
    pub fn duplicates(&mut self) -> bool {
        match &mut self.duplicate {
            Some((p, c)) => *p > 0.0 && c.next() < *p,
            None => false,
        }
    }

    /// The propagation of a packet whose transmission ended, given the link's `delay`.
    pub fn propagation(&mut self, delay: Dur) -> Propagation {
        let jittered = self.jitter.is_some();
        let delay = match &mut self.jitter {
            None => delay,
            Some((j, dist, c)) => {
                let u = c.next();
                let x = match dist {
                    JitterDist::Uniform => (2.0 * u - 1.0) * j.0 as f64,
                    JitterDist::Normal => inverse_normal(u) * j.0 as f64,
                    JitterDist::Pareto => pareto(u) * j.0 as f64,
                    JitterDist::Paretonormal => paretonormal(u) * j.0 as f64,
                };
                Dur((delay.0 as f64 + x).round().max(0.0) as u64)
            }
        };
        let reordered = match &mut self.reorder {
            None => false,
            Some((p, gap, c)) => {
                // netem: delayed while inside the gap, or when the draw says so.
                if self.counter + 1 < *gap || !(*p > 0.0 && c.next() < *p) {
                    self.counter += 1;
                    false
                } else {
                    self.counter = 0;
                    true
                }
            }
        };
        Propagation {
            delay: if reordered { Dur::ZERO } else { delay },
            jittered,
            reordered,
        }
    }
}

/// The largest table entry over `NETEM_DIST_SCALE` (8192): iproute2's tables are `i16`s, and
/// `pareto.c` caps its values at 32767.
const TABLE_MAX: f64 = 32767.0 / 8192.0;

/// iproute2's `pareto` table (`netem/pareto.c`, from NIST Net) as the function it tabulates at
/// u in [0, 1): a Pareto variate of shape 3 and scale 1, (1 − u)^(−1/3), shifted by its mean 1.5
/// and scaled by 4/3, capped at 32767/8192: from −2/3 (u = 0) up to 4 (u ≥ 0.98903), mean about
/// 0. netem picks a table entry by a uniform draw; here the draw is the entry's position.
fn pareto(u: f64) -> f64 {
    ((4.0 / 3.0) * ((1.0 - u).powf(-1.0 / 3.0) - 1.5)).min(TABLE_MAX)
}

/// iproute2's `paretonormal` table (`netem/paretonormal.c`): at each position u, a quarter of
/// the normal table's value and three quarters of the pareto table's, (Φ⁻¹(u) + 3·pareto(u)) / 4,
/// within the `i16` range.
fn paretonormal(u: f64) -> f64 {
    ((inverse_normal(u) + 3.0 * pareto(u)) / 4.0).clamp(-32768.0 / 8192.0, TABLE_MAX)
}

/// Φ⁻¹(u) for u in [0, 1): Acklam's rational approximation (relative error below 1.2e-9),
/// the inverse CDF netem's `normal` table tabulates.
fn inverse_normal(u: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let p = u.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_and_paretonormal_are_iproute2s_tables() {
        // pareto.c's first entry (i = 65536, u = 0): (1 - 1.5) * 4/3 = -2/3, written -5461.
        assert!((pareto(0.0) - -5461.0 / 8192.0).abs() < 1e-4);
        // u = 7/8: (1/8)^(-1/3) = 2, so (2 - 1.5) * 4/3 = 2/3; u = 63/64: 4, so 10/3.
        assert!((pareto(0.875) - 2.0 / 3.0).abs() < 1e-12);
        assert!((pareto(1.0 - 1.0 / 64.0) - 10.0 / 3.0).abs() < 1e-12);
        // Capped at 32767/8192 from (1 - u)^(-1/3) = 1.5 + 3.99988 * 3/4 on: u >= 0.98903.
        assert_eq!(pareto(0.99), TABLE_MAX);
        assert!(pareto(0.989) < TABLE_MAX);
        // paretonormal at the median: (0 + 3 * (2^(1/3) - 1.5) * 4/3) / 4 = 2^(1/3) - 1.5.
        assert!((paretonormal(0.5) - (2f64.cbrt() - 1.5)).abs() < 1e-9);
        // At u = 7/8: (Φ⁻¹(0.875) = 1.150349 + 3 * 2/3) / 4 = 0.787587.
        assert!((paretonormal(0.875) - 0.787587).abs() < 1e-5);
        // Both are centred on 0 but for the cap, which takes the tail above 4 off: pareto.c's
        // 4096 entries average -0.0335, paretonormal.c's -0.0258 (computed from the programs).
        let n = 1_000_000;
        let mean = |f: fn(f64) -> f64| {
            (0..n).map(|k| f((k as f64 + 0.5) / n as f64)).sum::<f64>() / n as f64
        };
        assert!((mean(pareto) - -0.0335).abs() < 0.002, "{}", mean(pareto));
        assert!(
            (mean(paretonormal) - -0.0258).abs() < 0.002,
            "{}",
            mean(paretonormal)
        );
    }

    #[test]
    fn the_inverse_normal_is_right() {
        for (u, z) in [
            (0.5, 0.0),
            (0.975, 1.959964),
            (0.025, -1.959964),
            (0.8413447, 1.0),
            (0.001, -3.090232),
        ] {
            assert!(
                (inverse_normal(u) - z).abs() < 1e-5,
                "{u}: {}",
                inverse_normal(u)
            );
        }
    }
}
