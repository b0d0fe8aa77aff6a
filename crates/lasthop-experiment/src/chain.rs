//! Chained replications (`replications_chain = true`): seed 000 ran the replications of one
//! configuration back to back on the same hosts, so Linux's per-destination metrics (CBI) of one
//! replication were there for the next ("from the second replication on", extract A.8). In
//! simulation replication *k* of a point starts with the CBI caches replication *k* − 1 ended
//! with, kept in its run directory as `tcp_metrics.json`; replication 0 starts cold. The runs stay
//! deterministic and resumable: a rerun finds the caches of finished replications on disk.

use crate::error::ExperimentError;
use crate::io::{json, read_json, write_unsynced};
use lasthop_core::Dur;
use lasthop_sim::TcpMetricsCache;
use lasthop_tcp::Metrics;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;
use std::path::Path;

/// One host's cached values for one destination, as `tcp_metrics.json` holds them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CacheEntry {
    pub host: String,
    pub destination: Ipv4Addr,
    /// Smoothed RTT, ns (Linux `dst->rtt`).
    pub srtt_ns: u64,
    /// 4 × mean deviation, ns (Linux `dst->rttvar`).
    pub mdev4_ns: u64,
    /// Segments; 0: not known.
    pub ssthresh: u32,
    pub cwnd: u32,
}

/// The file's content: every entry, in host and destination order.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct CacheFile {
    pub entries: Vec<CacheEntry>,
}

impl CacheFile {
    pub fn of(cache: &TcpMetricsCache) -> CacheFile {
        CacheFile {
            entries: cache
                .iter()
                .map(|(host, dst, m)| CacheEntry {
                    host: host.clone(),
                    destination: *dst,
                    srtt_ns: m.srtt.0,
                    mdev4_ns: m.mdev4.0,
                    ssthresh: m.ssthresh,
                    cwnd: m.cwnd,
                })
                .collect(),
        }
    }

    pub fn cache(&self) -> TcpMetricsCache {
        self.entries
            .iter()
            .map(|e| {
                let m = Metrics {
                    srtt: Dur(e.srtt_ns),
                    mdev4: Dur(e.mdev4_ns),
                    ssthresh: e.ssthresh,
                    cwnd: e.cwnd,
                };
                (e.host.clone(), e.destination, m)
            })
            .collect()
    }

    pub fn write(&self, path: &Path) -> Result<(), ExperimentError> {
        write_unsynced(path, json(self).as_bytes())
    }

    /// Reads a previous replication's file; a missing one is an error naming it (the chain
    /// needs every replication before this one finished).
    pub fn read(path: &Path) -> Result<CacheFile, ExperimentError> {
        read_json(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_survives_its_file() {
        let m = Metrics {
            srtt: Dur(2_516_280_000),
            mdev4: Dur(400_000_000),
            ssthresh: 18,
            cwnd: 20,
        };
        let cache: TcpMetricsCache = vec![("fixed".into(), Ipv4Addr::new(198, 19, 0, 1), m)];
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tcp_metrics.json");
        CacheFile::of(&cache).write(&p).unwrap();
        assert_eq!(CacheFile::read(&p).unwrap().cache(), cache);
        std::fs::write(&p, "{\"entries\": [{\"host\": \"fixed\"}]}").unwrap();
        assert!(CacheFile::read(&p).is_err(), "an entry without its values");
    }
}
