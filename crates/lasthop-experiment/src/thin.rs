//! Seed 003's per-host figures (class scheme `thin`, classes `host-<hostname>`): the streams of
//! `streams.csv` and the latency histograms of `latency.csv` (written by the analysis for runs
//! with `thin` flows) aggregated over every stream a host sent, as the seed's tables aggregate
//! per host (rdbsender, wsender, zsender; extract §4.4, Appendix R).

use crate::catalogue::{Metric, ThinMetric, LAT_PERCENTILES};
use indexmap::IndexMap;
use lasthop_analysis::files::latency::LatencyRow;
use lasthop_analysis::files::streams::StreamRow as Stream;
use lasthop_analysis::latency::{hist_add, hist_percentile};
use lasthop_scenario::Scenario;
use serde::{Deserialize, Serialize};

/// One host's streams in one run: the metrics of [`THIN_METRICS`] (a metric that cannot be
/// computed, such as loss without the receiver's capture, is left out) and the pooled latency
/// histogram (`(ms, count)`, ascending) for the report's ECDFs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostThin {
    pub host: String,
    pub values: IndexMap<String, f64>,
    pub hist: Vec<(u32, u64)>,
}

impl HostThin {
    /// The value of metric `m` (`None` when it cannot be computed, e.g. loss without the
    /// receiver's capture).
    pub fn value(&self, m: ThinMetric) -> Option<f64> {
        self.values.get(m.key()).copied()
    }
}

/// One stream's values as the per-host figures use them.
#[derive(Clone, Debug, Default, PartialEq)]
struct StreamRow {
    stream: u64,
    sender_ip: String,
    data_pkts: f64,
    retr_pkts: f64,
    rdb_pkts: f64,
    payload_bytes: f64,
    unique_bytes: f64,
    redundant_bytes: f64,
    retr_bytes: f64,
    rdb_bytes: f64,
    dupacks: f64,
    itt_avg_ms: Option<f64>,
    payload_avg_b: Option<f64>,
    lat_ranges: f64,
    lat_mean_ms: Option<f64>,
    lat_max_ms: Option<f64>,
    lost_pkts: Option<f64>,
    lost_bytes: Option<f64>,
    rdb_hits: Option<f64>,
    rdb_misses: Option<f64>,
    throughput_bytes_per_s: Option<f64>,
    goodput_bytes_per_s: Option<f64>,
}

impl StreamRow {
    fn of(r: &Stream) -> StreamRow {
        let f = |v: u64| v as f64;
        let o = |v: Option<u64>| v.map(f);
        StreamRow {
            stream: r.stream,
            sender_ip: r.sender_ip().to_string(),
            data_pkts: f(r.data_pkts),
            retr_pkts: f(r.retr_pkts),
            rdb_pkts: f(r.rdb_pkts),
            payload_bytes: f(r.payload_bytes),
            unique_bytes: f(r.unique_bytes),
            redundant_bytes: f(r.redundant_bytes),
            retr_bytes: f(r.retr_bytes),
            rdb_bytes: f(r.rdb_bytes),
            dupacks: f(r.dupacks),
            itt_avg_ms: r.itt_avg_ms,
            payload_avg_b: r.payload_avg_bytes,
            lat_ranges: f(r.lat_ranges),
            lat_mean_ms: r.lat_mean_ms,
            lat_max_ms: r.lat_max_ms,
            lost_pkts: o(r.lost_pkts),
            lost_bytes: o(r.lost_bytes),
            rdb_hits: o(r.rdb_hits),
            rdb_misses: o(r.rdb_misses),
            throughput_bytes_per_s: r.throughput_bytes_per_s,
            goodput_bytes_per_s: r.goodput_bytes_per_s,
        }
    }
}

/// The hosts' figures of a run from its `streams.csv` and `latency.csv` rows: each stream goes
/// to the scenario host with its sender's address (`other` when none has it), a group member
/// to its group, hosts in scenario order. `None` when the run has no stream (no thin flows).
pub fn compute(
    streams: &[Stream],
    latency: &[LatencyRow],
    scenario: &Scenario,
) -> Option<Vec<HostThin>> {
    if streams.is_empty() {
        return None;
    }
    let rows: Vec<StreamRow> = streams.iter().map(StreamRow::of).collect();
    let hists: IndexMap<u64, Vec<(u32, u64)>> =
        lasthop_analysis::files::latency::histograms(latency)
            .into_iter()
            .collect();
    // A host group's members (`count = N`: zsender0, zsender1, ...) count as one host named
    // after the group, as the seed's tables have one row for zsender's streams.
    let name = |h: &lasthop_scenario::Host| h.group.as_ref().map_or(&h.name, |g| &g.0).clone();
    let mut groups: IndexMap<String, Vec<&StreamRow>> = IndexMap::new();
    for h in &scenario.hosts {
        groups.insert(name(h), vec![]);
    }
    for r in &rows {
        let host = scenario
            .hosts
            .iter()
            .find(|h| h.address.to_string() == r.sender_ip)
            .map_or("other".to_string(), name);
        groups.entry(host).or_default().push(r);
    }
    let out = groups
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(host, v)| {
            let mut hist = vec![];
            for r in &v {
                if let Some(h) = hists.get(&r.stream) {
                    hist = hist_add(&hist, h);
                }
            }
            HostThin {
                values: host_values(&v, &hist),
                host,
                hist,
            }
        })
        .collect();
    Some(out)
}

/// The [`THIN_METRICS`] of one host's streams (pooled histogram `hist`).
fn host_values(v: &[&StreamRow], hist: &[(u32, u64)]) -> IndexMap<String, f64> {
    use ThinMetric as T;
    let mut m: IndexMap<ThinMetric, f64> = IndexMap::new();
    let sum = |f: fn(&StreamRow) -> f64| v.iter().map(|r| f(r)).sum::<f64>();
    // Optional per-stream values: the sum when every stream has one.
    let all = |f: fn(&StreamRow) -> Option<f64>| -> Option<f64> { v.iter().map(|r| f(r)).sum() };
    let ranges = sum(|r| r.lat_ranges);
    if ranges > 0.0 {
        // The exact mean: each stream's mean weighted by its ranges.
        let total: f64 = v
            .iter()
            .map(|r| r.lat_mean_ms.unwrap_or(0.0) * r.lat_ranges)
            .sum();
        m.insert(T::LatMeanMs, total / ranges);
    }
    for (k, p) in LAT_PERCENTILES {
        if let Some(x) = hist_percentile(hist, p) {
            m.insert(k, x);
        }
    }
    if let Some(x) = v.iter().filter_map(|r| r.lat_max_ms).reduce(f64::max) {
        m.insert(T::LatMaxMs, x);
    }
    m.insert(T::Streams, v.len() as f64);
    // Min / mean / max over the per-stream averages, as the seed's ITT and payload columns.
    let mut spread = |keys: [ThinMetric; 3], f: fn(&StreamRow) -> Option<f64>| {
        let xs: Vec<f64> = v.iter().filter_map(|r| f(r)).collect();
        if xs.is_empty() {
            return;
        }
        let (lo, hi) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        m.insert(keys[0], lo);
        m.insert(keys[1], mean);
        m.insert(keys[2], hi);
    };
    spread([T::IttMinMs, T::IttAvgMs, T::IttMaxMs], |r| r.itt_avg_ms);
    spread([T::PayloadMinB, T::PayloadAvgB, T::PayloadMaxB], |r| {
        r.payload_avg_b
    });
    let sent = sum(|r| r.data_pkts);
    let payload = sum(|r| r.payload_bytes);
    m.insert(T::SentPkts, sent);
    let lost = all(|r| r.lost_pkts);
    if let Some(x) = lost {
        m.insert(T::LostPkts, x);
    }
    m.insert(T::RetrPkts, sum(|r| r.retr_pkts));
    m.insert(T::RdbPkts, sum(|r| r.rdb_pkts));
    m.insert(T::PayloadBytes, payload);
    m.insert(T::UniqueBytes, sum(|r| r.unique_bytes));
    m.insert(T::RedundantBytes, sum(|r| r.redundant_bytes));
    m.insert(T::RetrBytes, sum(|r| r.retr_bytes));
    if let Some(lb) = all(|r| r.lost_bytes) {
        if payload > 0.0 {
            m.insert(T::LossBytesPct, lb / payload * 100.0);
        }
    }
    if let Some(lp) = lost {
        if sent > 0.0 {
            m.insert(T::LossPktsPct, lp / sent * 100.0);
        }
    }
    m.insert(T::Dupacks, sum(|r| r.dupacks));
    type Opt = fn(&StreamRow) -> Option<f64>;
    let optional: [(ThinMetric, Opt); 4] = [
        (T::RdbHits, |r| r.rdb_hits),
        (T::RdbMisses, |r| r.rdb_misses),
        (T::ThroughputBps, |r| r.throughput_bytes_per_s),
        (T::GoodputBps, |r| r.goodput_bytes_per_s),
    ];
    for (k, f) in &optional[..2] {
        if let Some(x) = all(*f) {
            m.insert(*k, x);
        }
    }
    m.insert(T::LatRanges, ranges);
    for (k, f) in &optional[2..] {
        if let Some(x) = all(*f) {
            m.insert(*k, x);
        }
    }
    m.insert(T::RdbBytes, sum(|r| r.rdb_bytes));
    // Table order, by key in metrics.json.
    m.sort_by_cached_key(|k, _| ThinMetric::ALL.iter().position(|x| x == k));
    m.into_iter()
        .map(|(k, v)| (k.key().to_string(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn compute_dir(dir: &Path, sc: &Scenario) -> Option<Vec<HostThin>> {
        use lasthop_analysis::files as af;
        compute(
            &af::streams::read(&dir.join("streams.csv")).unwrap(),
            &af::latency::read(&dir.join("latency.csv")).unwrap(),
            sc,
        )
    }

    fn scenario(dir: &Path) -> Scenario {
        std::fs::write(dir.join("l.toml"), "[both]\nrate = \"5000kbit\"\n").unwrap();
        let text = r#"
duration = "10s"
link = "l.toml"
[hosts.rdbsender]
side = "fixed"
[hosts.wsender]
side = "fixed"
[hosts.receiver]
side = "mobile"
[[flows]]
kind = "bulk"
from = "rdbsender"
to = "receiver"
bytes = 1000
"#;
        Scenario::from_str_in(text, dir).unwrap()
    }

    #[test]
    fn a_groups_members_are_one_host() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("l.toml"), "[both]\nrate = \"5000kbit\"\n").unwrap();
        let text = r#"
duration = "10s"
link = "l.toml"
[hosts.z]
side = "fixed"
count = 2
[hosts.receiver]
side = "mobile"
[[flows]]
kind = "bulk"
from = "z"
to = "receiver"
bytes = 1000
"#;
        let sc = Scenario::from_str_in(text, d.path()).unwrap();
        let (z0, z1, r) = (
            sc.hosts[0].address,
            sc.hosts[1].address,
            sc.hosts[2].address,
        );
        let head = lasthop_analysis::latency::STREAM_COLUMNS.join(",") + ",goodput_Bps\n";
        // One stream from each member: 10 and 30 packets, latencies 150 and 250 ms.
        let csv = format!(
            "{head}\
1,{z0}:1024,{r}:5000,0.1,9,10,10,0,0,1000,1000,0,0,0,0,10,100,1,150,150,150,0,,,,,,,,,\n\
2,{z1}:1024,{r}:5000,0.1,9,30,30,0,0,3000,3000,0,0,0,0,10,100,1,250,250,250,0,,,,,,,,,\n"
        );
        std::fs::write(d.path().join("streams.csv"), csv).unwrap();
        std::fs::write(
            d.path().join("latency.csv"),
            "stream,ms,count\n1,150,1\n2,250,1\n",
        )
        .unwrap();
        let hosts = compute_dir(d.path(), &sc).unwrap();
        assert_eq!(hosts.len(), 1, "z0 and z1 are host z");
        assert_eq!(hosts[0].host, "z");
        assert_eq!(hosts[0].values["streams"], 2.0);
        assert_eq!(hosts[0].values["sent_pkts"], 40.0);
        // mean of the two ranges: (150 + 250) / 2
        assert_eq!(hosts[0].values["lat_mean_ms"], 200.0);
    }

    #[test]
    fn hosts_by_hand() {
        let d = tempfile::tempdir().unwrap();
        let sc = scenario(d.path());
        let a = sc.hosts[0].address;
        let b = sc.hosts[1].address;
        let head = lasthop_analysis::latency::STREAM_COLUMNS.join(",") + ",goodput_Bps\n";
        // Two streams of host a, one of host b (no receiver numbers for b's).
        // a1: 10 packets (2 retr), 1200 B payload, 1000 unique; ITT 30, payload 120;
        //     ranges 4 with mean 160 (latencies 150, 150, 160, 180); lost 2 pkts 240 B
        // a2: 20 packets (1 RDB), 3000 B payload, 2400 unique; ITT 50, payload 150;
        //     ranges 6 with mean 150 (all 150); lost 1 pkt 300 B, 1 RDB hit
        // b1: 5 packets, ITT 100, payload 100, ranges 2 (200, 400: mean 300)
        let csv = format!(
            "{head}\
1,{a}:1024,{r}:5000,0.1,9,10,8,2,0,1200,1000,200,200,0,3,30,120,4,160,150,180,0,8,2,240,20,20,0,0,1000,900\n\
2,{a}:1025,{r}:5000,0.1,9,20,20,0,1,3000,2400,600,0,600,1,50,150,6,150,150,150,0,19,1,300,5,10,1,0,2000,1800\n\
3,{b}:1026,{r}:5000,0.1,9,5,5,0,0,500,500,0,0,0,0,100,100,2,300,200,400,0,,,,,,,,,\n",
            r = sc.hosts[2].address
        );
        std::fs::write(d.path().join("streams.csv"), csv).unwrap();
        std::fs::write(
            d.path().join("latency.csv"),
            "stream,ms,count\n1,150,2\n1,160,1\n1,180,1\n2,150,6\n3,200,1\n3,400,1\n",
        )
        .unwrap();
        let hosts = compute_dir(d.path(), &sc).unwrap();
        assert_eq!(hosts.len(), 2);
        let h = &hosts[0];
        assert_eq!(h.host, "rdbsender");
        // pooled: 150 ×8, 160, 180 (10 ranges)
        assert_eq!(h.hist, vec![(150, 8), (160, 1), (180, 1)]);
        let v = |k: &str| h.values[k];
        // mean (4·160 + 6·150) / 10 = 154; p80 rank 8 → 150, p90 rank 9 → 160, p99 → 180
        assert_eq!(v("lat_mean_ms"), 154.0);
        assert_eq!(
            (v("lat_p80_ms"), v("lat_p90_ms"), v("lat_p99_ms")),
            (150.0, 160.0, 180.0)
        );
        assert_eq!(v("lat_max_ms"), 180.0);
        assert_eq!(v("streams"), 2.0);
        assert_eq!(
            (v("itt_min_ms"), v("itt_avg_ms"), v("itt_max_ms")),
            (30.0, 40.0, 50.0)
        );
        assert_eq!(
            (v("payload_min_B"), v("payload_avg_B"), v("payload_max_B")),
            (120.0, 135.0, 150.0)
        );
        assert_eq!(
            (
                v("sent_pkts"),
                v("lost_pkts"),
                v("retr_pkts"),
                v("rdb_pkts")
            ),
            (30.0, 3.0, 2.0, 1.0)
        );
        assert_eq!(
            (v("payload_bytes"), v("unique_bytes"), v("redundant_bytes")),
            (4200.0, 3400.0, 800.0)
        );
        // byte loss 540 / 4200 = 12.857 %; packet loss 3 / 30 = 10 %
        assert!((v("loss_bytes_pct") - 540.0 / 42.0).abs() < 1e-9);
        assert_eq!(v("loss_pkts_pct"), 10.0);
        assert_eq!((v("dupacks"), v("rdb_hits")), (4.0, 1.0));
        // host b: no receiver capture numbers, so no loss metrics
        let w = &hosts[1];
        assert_eq!(w.host, "wsender");
        assert_eq!(w.values["lat_p50_ms"], 200.0);
        assert!(!w.values.contains_key("loss_pkts_pct") && !w.values.contains_key("rdb_hits"));
        // Two runs of the same point: five numbers over the runs
        let run = |hosts: Vec<HostThin>| crate::metrics::RunMetrics {
            thin: Some(hosts),
            ..Default::default()
        };
        let mut other = hosts.clone();
        other[0].values.insert("lat_mean_ms".into(), 160.0);
        let s = crate::summary::summarise_thin(&[run(hosts.clone()), run(other)]);
        assert_eq!(s[0].class.to_string(), "host-rdbsender");
        assert_eq!((s[0].scheme.as_str(), s[0].n), ("thin", 2));
        assert_eq!(s[0].metrics["lat_mean_ms"].median, 157.0);
        assert_eq!(
            crate::summary::pooled_hist(&[run(hosts.clone()), run(hosts)], "wsender"),
            vec![(200, 2), (400, 2)]
        );
    }
}
