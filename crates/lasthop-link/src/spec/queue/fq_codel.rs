//! FQ-CoDel's keys and checks (`policy = "fq_codel"`, RFC 8290, Linux `sch_fq_codel`).

use super::codel::{validate_codel, CodelConfig};
use lasthop_core::spec::{err, SpecError};
use lasthop_core::{Bytes, Dur};
use serde::{Deserialize, Serialize};

/// FQ-CoDel (RFC 8290) as written; defaults are Linux `sch_fq_codel`'s.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelSpec {
    /// Each flow queue's CoDel target (default 5 ms).
    pub target: Option<Dur>,
    /// Each flow queue's CoDel interval (default 100 ms).
    pub interval: Option<Dur>,
    /// Number of flow queues the 5-tuple hash spreads over (default 1024).
    pub flows: Option<u32>,
    /// DRR quantum: bytes a flow may send per round (default the link MTU, 1500B without one).
    pub quantum: Option<Bytes>,
    /// Mark ECT packets instead of dropping them (default true, as Linux).
    pub ecn: Option<bool>,
    /// Most packets dropped from the fattest flow when the queue is full (default 64, Linux).
    pub drop_batch: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FqCodelConfig {
    pub codel: CodelConfig,
    pub flows: u32,
    /// `None`: the link MTU (1500B without one).
    pub quantum: Option<u64>,
    pub drop_batch: u32,
}

impl Default for FqCodelConfig {
    /// Linux `sch_fq_codel`: 1024 flows, ECN on, batches of 64.
    fn default() -> FqCodelConfig {
        FqCodelConfig {
            codel: CodelConfig {
                ecn: true,
                ..CodelConfig::default()
            },
            flows: 1024,
            quantum: None,
            drop_batch: 64,
        }
    }
}

/// FQ-CoDel's checks: `k` is the `fq_codel` table's key.
pub fn validate_fq_codel(k: &str, f: &FqCodelSpec) -> Result<FqCodelConfig, SpecError> {
    let d = FqCodelConfig::default();
    let codel = validate_codel(k, f.target, f.interval, f.ecn, d.codel)?;
    let flows = f.flows.unwrap_or(d.flows);
    if !(1..=65536).contains(&flows) {
        return Err(err(
            format!("{k}.flows"),
            format!("{flows} flow queues: give 1 to 65536 (Linux's range; default 1024)"),
        ));
    }
    if f.quantum == Some(Bytes(0)) {
        return Err(err(
            format!("{k}.quantum"),
            "0B lets no flow send: give the bytes a flow may send per round, e.g. \"1514B\" (default the link MTU)",
        ));
    }
    let drop_batch = f.drop_batch.unwrap_or(d.drop_batch);
    if drop_batch == 0 {
        return Err(err(
            format!("{k}.drop_batch"),
            "0 packets would drop nothing when the queue is full: give 1 or more (default 64)",
        ));
    }
    Ok(FqCodelConfig {
        codel,
        flows,
        quantum: f.quantum.map(|b| b.0),
        drop_batch,
    })
}
