//! Sharding: an experiment's runs split into N fixed subsets, each run by its own
//! `lasthop run SPEC --shard K/N` (e.g. one Slurm array task each), merged afterwards by
//! [`crate::merge`] (`docs/cluster.md`).
//!
//! **Which shard a run lands in.** Run *k* of point *p* is in shard
//! `(fnv1a(p) mod N + k mod N) mod N + 1`: a function of the point's name, the replication and
//! N only, so it never depends on the other points, the replication count, or what the other
//! shards do (a shard rerun alone, after a matrix grew, finds the same runs). Within a point the
//! replications go round-robin from an offset the point's name picks, so every shard gets
//! ⌊R/N⌋ or ⌈R/N⌉ of each point's R replications: shards are balanced to within one run per
//! point.
//!
//! **What a shard directory records.** Besides what an unsharded run writes (`experiment.toml`,
//! `experiment.json`, `runs/`), a shard directory holds `shard.json` ([`ShardInfo`]): the shard,
//! the experiment's path-independent fingerprint ([`experiment_fingerprint`]), the lasthop
//! version, and the marker hash of every point *in this directory* (which names the link spec by
//! its absolute path), so a merge can check each run against its own directory and the
//! directories against each other wherever they were produced. Shard directories have no
//! summary and no report; the merge writes them.

use crate::error::ExperimentError;
use crate::info::ExperimentInfo;
use crate::io::fnv1a;
use crate::spec::{Experiment, Point, RunId};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The shard record's file name in a shard directory.
pub use lasthop_core::layout::SHARD_JSON;

/// The version of lasthop that wrote a shard (merges refuse shards of another version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The most shards an experiment may be split into.
pub const MAX_SHARDS: u64 = 100_000;

/// Shard K of N (K counted from 1), as `--shard K/N` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1..=count.
    pub index: u64,
    pub count: u64,
}

const SHARD_ALLOWED: &str =
    "allowed K/N with N in 1..100000 and K in 1..N, e.g. 2/3 (shards count from 1)";

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("{s:?} is not K/N: {SHARD_ALLOWED}"))?;
        let num = |what: &str, t: &str| -> Result<u64, String> {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("{s:?}: {what} {t:?} is not a whole number: {SHARD_ALLOWED}"))
        };
        let (index, count) = (num("K", k)?, num("N", n)?);
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("{s:?}: N = {count}: {SHARD_ALLOWED}"));
        }
        if index == 0 || index > count {
            return Err(format!(
                "{s:?}: K = {index} is not in 1..{count}: {SHARD_ALLOWED}"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard (1..=count) that run `replication` of point `point` belongs to among `count`.
pub fn shard_of(point: &str, replication: u64, count: u64) -> u64 {
    assert!(count > 0, "at least one shard");
    (fnv1a(point.as_bytes()) % count + replication % count) % count + 1
}

impl Shard {
    /// Whether run `replication` of point `point` is in this shard.
    pub fn contains(&self, point: &str, replication: u64) -> bool {
        shard_of(point, replication, self.count) == self.index
    }

    /// This shard's runs of `exp`, in the experiment's order. Chained replications
    /// (`replications_chain`) need their predecessors, so a point's replications all go to the
    /// shard of its replication 0.
    pub fn runs(&self, exp: &Experiment) -> Vec<RunId> {
        exp.runs()
            .into_iter()
            .filter(|r| {
                let k = if exp.chain { 0 } else { r.replication };
                self.contains(&exp.points[r.point].name, k)
            })
            .collect()
    }
}

/// A point's fingerprint without its paths: the patched scenario text without its `link` key
/// (an absolute path, which differs between checkouts and machines), then the link spec's
/// contents. Equal wherever the same spec files are.
pub fn portable_point_fingerprint(point: &Point) -> u64 {
    let mut doc: toml::Table = toml::from_str(&point.scenario_toml).unwrap_or_default();
    doc.remove("link");
    let mut fp = toml::to_string(&doc).unwrap_or_default().into_bytes();
    fp.push(0);
    fp.extend_from_slice(&crate::spec::read_link_bytes(&point.scenario.link_path));
    crate::spec::push_data_files(&mut fp, &point.scenario.link);
    fnv1a(&fp)
}

/// The experiment's fingerprint, the same on every machine and path: what
/// `experiment.json` records (name, mode, seed, replications, classes, points, references)
/// and every point's [`portable_point_fingerprint`]. Shards merge only when theirs are equal.
pub fn experiment_fingerprint(exp: &Experiment) -> u64 {
    let mut bytes = serde_json::to_vec(&ExperimentInfo::of(exp)).expect("plain data serializes");
    for p in &exp.points {
        bytes.push(0);
        bytes.extend_from_slice(p.name.as_bytes());
        bytes.extend_from_slice(&portable_point_fingerprint(p).to_le_bytes());
    }
    fnv1a(&bytes)
}

/// `shard.json`: what a shard directory holds and where it came from.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ShardInfo {
    pub experiment: String,
    /// [`experiment_fingerprint`], 16 hex digits.
    pub fingerprint: String,
    /// The lasthop version that ran the shard ([`VERSION`]).
    pub lasthop_version: String,
    pub shard: u64,
    pub shards: u64,
    /// This shard's runs, `point/replication`, in the experiment's order.
    pub runs: Vec<String>,
    /// Per point, the `scenario_hash` its finished runs' markers carry in this directory.
    pub scenario_hashes: IndexMap<String, String>,
}

impl ShardInfo {
    pub fn of(exp: &Experiment, shard: Shard) -> ShardInfo {
        ShardInfo {
            experiment: exp.name.clone(),
            fingerprint: format!("{:016x}", experiment_fingerprint(exp)),
            lasthop_version: VERSION.to_string(),
            shard: shard.index,
            shards: shard.count,
            runs: shard
                .runs(exp)
                .iter()
                .map(|r| format!("{}/{}", exp.points[r.point].name, r.replication))
                .collect(),
            scenario_hashes: exp
                .points
                .iter()
                .map(|p| (p.name.clone(), format!("{:016x}", p.fingerprint)))
                .collect(),
        }
    }

    /// Reads `DIR/shard.json`; a directory without one is not a shard directory.
    pub fn load(dir: &Path) -> Result<ShardInfo, ExperimentError> {
        let path = dir.join(SHARD_JSON);
        let text =
            crate::io::read_json_text(&path).map_err(|source| ExperimentError::NotShard {
                path: path.display().to_string(),
                dir: dir.display().to_string(),
                source,
            })?;
        serde_json::from_str(&text).map_err(|source| ExperimentError::Json {
            path: path.display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_names_what_is_wrong() {
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        assert_eq!("1/1".parse::<Shard>().unwrap().to_string(), "1/1");
        for (bad, says) in [
            ("0/3", "K = 0 is not in 1..3"),
            ("4/3", "K = 4 is not in 1..3"),
            ("x", "is not K/N"),
            ("1/x", "N \"x\" is not a whole number"),
            ("-1/3", "K \"-1\" is not a whole number"),
            ("1/0", "N = 0"),
            ("1/100001", "N = 100001"),
        ] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(e.contains("allowed K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_run_lands_in_one_shard_whatever_the_others() {
        // The formula, worked by hand for one name: fnv1a("e0") mod 3, then + k.
        let h = fnv1a(b"e0") % 3;
        for k in 0..9 {
            assert_eq!(shard_of("e0", k, 3), (h + k % 3) % 3 + 1);
        }
        // Every run in exactly one shard; each point spread evenly (R = 7 over N = 3: 3, 2, 2).
        for n in 1..6u64 {
            for name in ["e0", "r1", "optimal-m8m", "base"] {
                let mut per = vec![0u64; n as usize];
                for k in 0..7 {
                    let s = shard_of(name, k, n);
                    assert!((1..=n).contains(&s));
                    let hits = (1..=n)
                        .filter(|&i| Shard { index: i, count: n }.contains(name, k))
                        .count();
                    assert_eq!(hits, 1);
                    per[(s - 1) as usize] += 1;
                }
                let (lo, hi) = (per.iter().min().unwrap(), per.iter().max().unwrap());
                assert!(hi - lo <= 1, "{name} over {n}: {per:?}");
                assert_eq!(per.iter().sum::<u64>(), 7);
            }
        }
        // The quick start's two points in three shards: two runs in each.
        let per: Vec<usize> = (1..=3)
            .map(|i| {
                ["e0", "r1"]
                    .iter()
                    .flat_map(|p| (0..3).map(move |k| (*p, k)))
                    .filter(|(p, k)| shard_of(p, *k, 3) == i)
                    .count()
            })
            .collect();
        assert_eq!(per, vec![2, 2, 2]);
    }
}
