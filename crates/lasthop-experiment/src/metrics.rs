//! The metrics of one run, computed from its files (`connections.csv`, `udp_flows.csv` when the
//! run has UDP flows, `events.csv`) and kept in `metrics.json` beside them.

use crate::catalogue::{
    BottleneckMetric, ConnMetric, PageClassMetric, PingMetric, RunMetric, UdpMetric,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One TCP connection of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnMetrics {
    /// The scenario's flow index (matched by addresses and port), `None` for a connection that
    /// matches no flow.
    pub flow: Option<usize>,
    /// `conn` in `connections.csv`.
    pub conn: usize,
    pub start_s: f64,
    pub end_s: f64,
    /// First SYN to the ACK of the client's FIN, at the client (the sender in bulk flows).
    pub elapsed_s: f64,
    pub bytes: u64,
    /// bytes / elapsed, bytes per second (`throughput_Bps` in metrics.json as in
    /// connections.csv; `throughput_bps` before issue 24 renamed it).
    #[serde(rename = "throughput_Bps", alias = "throughput_bps")]
    pub throughput_bytes_per_s: f64,
    /// tcptrace "rexmt data pkts" of the data direction.
    pub rexmt_pkts: u64,
    pub dupacks: u64,
    /// Times three duplicate ACKs in a row were received (tcptrace "triple dupacks").
    #[serde(default)]
    pub triple_dupacks: u64,
    pub rtos: u64,
    /// Timeouts whose resent segment the link had delivered (`None` without a full event log).
    #[serde(default)]
    pub spurious_rtos: Option<u64>,
    /// ACKs carrying SACK blocks (seed 000's "sacks sent").
    #[serde(default)]
    pub sack_pkts: u64,
    /// Data-direction drops by cause: router queue, RED, the other AQMs (CoDel, PIE), link
    /// error.
    pub drops_queue: u64,
    pub drops_red: u64,
    #[serde(default)]
    pub drops_aqm: u64,
    pub drops_error: u64,
    /// CE marks on the data (ECN).
    #[serde(default)]
    pub ecn_marks: u64,
    /// Acknowledging-direction drops, all causes.
    pub ack_drops: u64,
    pub complete: bool,
    /// Seed 001's first 10 KB (`connections.csv`'s `partial_*`): the SYN to the ACK covering
    /// 10 240 bytes, s; 10 240 bytes over the time from the first data segment to that ACK,
    /// B/s; the retransmissions before it. `None` when never reached.
    #[serde(default)]
    pub partial_elapsed_s: Option<f64>,
    #[serde(default, rename = "partial_throughput_Bps")]
    pub partial_throughput_bytes_per_s: Option<f64>,
    #[serde(default)]
    pub partial_rexmt_pkts: Option<u64>,
    /// Unnecessary retransmissions as seed 001 counts them: retransmissions − data-direction
    /// drops (`rexmt_minus_drops`).
    #[serde(default)]
    pub unneeded_rexmt: Option<u64>,
}

/// One UDP flow of a run (a row of `udp_flows.csv`); `None` where that row is empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpMetrics {
    /// The scenario's flow index (matched by addresses and destination port), `None` for a
    /// flow that matches none.
    pub flow: Option<usize>,
    /// `flow` in `udp_flows.csv`.
    pub udp_flow: usize,
    pub sent: Option<u64>,
    pub received: u64,
    pub lost: Option<u64>,
    pub loss_rate: Option<f64>,
    /// Received bytes including the UDP header / first-to-last received packet, bytes/s
    /// (`throughput_Bps` in metrics.json as in udp_flows.csv; `throughput_bps` before).
    #[serde(rename = "throughput_Bps", alias = "throughput_bps")]
    pub throughput_bytes_per_s: Option<f64>,
    pub drops_queue: Option<u64>,
    /// RED drops and ECN marks.
    pub drops_red: Option<u64>,
    /// CoDel's and PIE's drops.
    #[serde(default)]
    pub drops_aqm: Option<u64>,
    pub drops_error: Option<u64>,
    /// Spacing of consecutively received packets, ms: 50 %, 75 %, 90 %, max.
    pub spacing_ms: [Option<f64>; 4],
    /// One-way delay, ms: 50 %, 75 %, 90 %, 99 %, max.
    pub delay_ms: [Option<f64>; 5],
}

/// One latency-probe flow of a run (a row of `ping_flows.csv`); `None` without a reply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PingMetrics {
    /// The scenario's flow index, `None` for probes of no scenario flow.
    pub flow: Option<usize>,
    /// `flow` in `ping_flows.csv`.
    pub ping_flow: usize,
    pub sent: u64,
    pub received: u64,
    pub loss_rate: Option<f64>,
    pub rtt_min_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p90_ms: Option<f64>,
    pub rtt_p99_ms: Option<f64>,
    pub rtt_max_ms: Option<f64>,
}

impl PingMetrics {
    /// The value of metric `m` (NaN where unknown).
    pub fn value(&self, m: PingMetric) -> f64 {
        let v = match m {
            PingMetric::RttP50Ms => self.rtt_p50_ms,
            PingMetric::RttP90Ms => self.rtt_p90_ms,
            PingMetric::RttP99Ms => self.rtt_p99_ms,
            PingMetric::RttMeanMs => self.rtt_mean_ms,
            PingMetric::RttMinMs => self.rtt_min_ms,
            PingMetric::RttMaxMs => self.rtt_max_ms,
            PingMetric::ProbeLossRate => self.loss_rate,
        };
        v.unwrap_or(f64::NAN)
    }
}

/// One object of a page (a row of `page_objects.csv`); `None` where the row is empty
/// (unknown).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectMetrics {
    /// 0 = the main object.
    pub object: usize,
    /// 1 = the main object, then the in-lines by throughput within the run, highest first.
    pub class: usize,
    pub bytes: u64,
    /// Server side: SYN arrival to the ACK of the client's FIN sent.
    pub elapsed_s: Option<f64>,
    /// bytes / elapsed_s, bytes per second (`throughput_Bps` in metrics.json as in the CSV;
    /// `throughput_bps` before issue 24 renamed it).
    #[serde(rename = "throughput_Bps", alias = "throughput_bps")]
    pub throughput_bytes_per_s: Option<f64>,
    pub rexmt_pkts: Option<u64>,
    pub dupacks: Option<u64>,
    pub triple_dupacks: Option<u64>,
    pub sack_pkts: Option<u64>,
    /// Data direction (server to client): queue and error drops.
    pub drops_queue: Option<u64>,
    pub drops_error: Option<u64>,
    /// ACK direction (client to server): queue and error drops.
    pub ack_drops_queue: Option<u64>,
    pub ack_drops_error: Option<u64>,
}

/// One page (a row of `pages.csv`) with its objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageMetrics {
    /// The scenario's flow index.
    pub flow: usize,
    pub workload: String,
    /// Client side: first SYN sent to the ACK of the last client FIN received.
    pub response_s: Option<f64>,
    /// Server side: first SYN arrival to the last ACK of a client FIN sent.
    pub total_s: Option<f64>,
    pub complete: bool,
    /// In object order.
    pub objects: Vec<ObjectMetrics>,
}

/// Router queue length of one direction (from `events.csv`, which needs log level `all`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueStats {
    /// Largest queue length in packets.
    pub max_pkts: Option<f64>,
    /// Time-weighted mean over the run's transfer period.
    pub mean_pkts: Option<f64>,
    /// Median of the lengths packets found on arrival (Seawind's sampling).
    pub median_at_arrival: Option<f64>,
}

/// Link-level figures of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirMetrics {
    /// Fraction of the transfer period the serializer was busy.
    pub utilisation: Option<f64>,
    pub queue: QueueStats,
    pub drops_queue: u64,
    pub drops_red: u64,
    /// CoDel's and PIE's drops.
    #[serde(default)]
    pub drops_aqm: u64,
    pub drops_error: u64,
}

/// Seed 004's figures of one run (scheme `bottleneck`), from `link.csv` (the busier direction,
/// over the whole run) and the connections: goodput per greedy flow is its unique bytes over the
/// time from its start to the run's end, in Mbit/s, averaged over all the flows (a flow that sent
/// nothing counts as 0); short transfers are the connections of `repeat` flows, done when
/// complete. σ is the population standard deviation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BottleneckMetrics {
    pub util_pct: f64,
    pub queue_mean_pkts: f64,
    pub queue_max_pkts: f64,
    /// Packets dropped in that direction, every cause.
    pub drops: u64,
    pub marks: u64,
    pub goodput_mean_mbps: Option<f64>,
    pub goodput_sd_mbps: Option<f64>,
    pub goodput_cov: Option<f64>,
    pub goodput_jain: Option<f64>,
    pub transfers: u64,
    pub transfer_mean_ms: Option<f64>,
    pub transfer_sd_ms: Option<f64>,
    pub transfer_cov: Option<f64>,
}

/// Everything the summaries need from one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    pub point: String,
    pub replication: u64,
    pub conns: Vec<ConnMetrics>,
    /// First connection start to last connection end (the transfer period); NaN for a run
    /// without a connection (written as null, read back as NaN).
    #[serde(deserialize_with = "null_as_nan")]
    pub total_time_s: f64,
    /// Jain's index over the connections' throughputs.
    pub jain: Option<f64>,
    /// σ/μ of the connections' throughputs (population σ).
    pub throughput_cov: Option<f64>,
    /// `[down, up]`.
    pub link: [DirMetrics; 2],
    /// UDP flows (runs without any leave it out of `metrics.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<UdpMetrics>,
    /// Latency probes (`ping` flows; runs without any leave it out of `metrics.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pings: Vec<PingMetrics>,
    /// Pages of `http` flows (`pages.csv`, `page_objects.csv`; runs without any leave it out
    /// of `metrics.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<PageMetrics>,
    /// Seed 004's figures, when the experiment asks for class scheme `bottleneck`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<BottleneckMetrics>,
    /// Seed 003's per-host stream figures, when the experiment asks for class scheme `thin`
    /// and the run has `streams.csv` ([`crate::thin::compute`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thin: Option<Vec<crate::thin::HostThin>>,
    /// Seed 001's figures of parallel connections (runs with two or more connections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelMetrics>,
}

/// A number that JSON holds as null when it was NaN (serde_json writes NaN as null).
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl RunMetrics {
    pub fn load(path: &Path) -> Result<RunMetrics, crate::error::ExperimentError> {
        crate::io::read_json(path)
    }
}

/// Run-level figures of a run's parallel connections (runs with two or more connections).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ParallelMetrics {
    /// Jain's index ×100 over the first-10 KB throughputs; `None` unless every connection got
    /// that far.
    pub jain10k_x100: Option<f64>,
    /// The fewest and the most retransmissions of a connection.
    pub rx_min: u64,
    pub rx_max: u64,
    /// The same, counted before each connection's 10 KB ACK (`None` without the column).
    pub rx10k_min: Option<u64>,
    pub rx10k_max: Option<u64>,
}

impl ConnMetrics {
    /// The value of metric `m` (NaN where this connection has none, e.g. spurious RTOs
    /// without a full event log).
    pub fn value(&self, m: ConnMetric) -> f64 {
        let c = self;
        let n = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64);
        match m {
            ConnMetric::ElapsedS => c.elapsed_s,
            ConnMetric::ThroughputBps => c.throughput_bytes_per_s,
            ConnMetric::RexmtPkts => c.rexmt_pkts as f64,
            ConnMetric::Dupacks => c.dupacks as f64,
            ConnMetric::TripleDupacks => c.triple_dupacks as f64,
            ConnMetric::SackPkts => c.sack_pkts as f64,
            ConnMetric::Rtos => c.rtos as f64,
            ConnMetric::SpuriousRtos => n(c.spurious_rtos),
            ConnMetric::DropsQueue => c.drops_queue as f64,
            ConnMetric::DropsRed => c.drops_red as f64,
            ConnMetric::DropsAqm => c.drops_aqm as f64,
            ConnMetric::EcnMarks => c.ecn_marks as f64,
            ConnMetric::DropsRedMarks => (c.drops_red + c.ecn_marks) as f64,
            ConnMetric::DropsError => c.drops_error as f64,
            ConnMetric::AckDrops => c.ack_drops as f64,
            ConnMetric::UnneededRexmt => n(c.unneeded_rexmt),
            ConnMetric::PartialElapsedS => c.partial_elapsed_s.unwrap_or(f64::NAN),
            ConnMetric::PartialThroughputBps => {
                c.partial_throughput_bytes_per_s.unwrap_or(f64::NAN)
            }
            ConnMetric::PartialRexmtPkts => n(c.partial_rexmt_pkts),
        }
    }
}

impl UdpMetrics {
    /// The value of metric `m` (NaN where unknown).
    pub fn value(&self, m: UdpMetric) -> f64 {
        let u = self;
        let o = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let n = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64);
        match m {
            UdpMetric::ThroughputBps => o(u.throughput_bytes_per_s),
            UdpMetric::LossRate => o(u.loss_rate),
            UdpMetric::Lost => n(u.lost),
            UdpMetric::DropsQueue => n(u.drops_queue),
            UdpMetric::DropsRed => n(u.drops_red),
            UdpMetric::DropsAqm => n(u.drops_aqm),
            UdpMetric::DropsError => n(u.drops_error),
            UdpMetric::SpacingP50Ms => o(u.spacing_ms[0]),
            UdpMetric::SpacingP75Ms => o(u.spacing_ms[1]),
            UdpMetric::SpacingP90Ms => o(u.spacing_ms[2]),
            UdpMetric::SpacingMaxMs => o(u.spacing_ms[3]),
            UdpMetric::DelayP50Ms => o(u.delay_ms[0]),
            UdpMetric::DelayP75Ms => o(u.delay_ms[1]),
            UdpMetric::DelayP90Ms => o(u.delay_ms[2]),
            UdpMetric::DelayP99Ms => o(u.delay_ms[3]),
            UdpMetric::DelayMaxMs => o(u.delay_ms[4]),
        }
    }
}

impl ObjectMetrics {
    /// The value of metric `m` (NaN where unknown).
    pub fn value(&self, m: PageClassMetric) -> f64 {
        let o = self;
        let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let n = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64);
        match m {
            PageClassMetric::ElapsedS => f(o.elapsed_s),
            PageClassMetric::ThroughputBps => f(o.throughput_bytes_per_s),
            PageClassMetric::RexmtPkts => n(o.rexmt_pkts),
            PageClassMetric::Dupacks => n(o.dupacks),
            PageClassMetric::TripleDupacks => n(o.triple_dupacks),
            PageClassMetric::SackPkts => n(o.sack_pkts),
            PageClassMetric::DropsQueue => n(o.drops_queue),
            PageClassMetric::DropsError => n(o.drops_error),
            PageClassMetric::AckDropsQueue => n(o.ack_drops_queue),
            PageClassMetric::AckDropsError => n(o.ack_drops_error),
        }
    }
}

impl BottleneckMetrics {
    /// The value of metric `m` (NaN where unknown).
    pub fn value(&self, m: BottleneckMetric) -> f64 {
        let b = self;
        let o = |v: Option<f64>| v.unwrap_or(f64::NAN);
        match m {
            BottleneckMetric::UtilPct => b.util_pct,
            BottleneckMetric::QueueMeanPkts => b.queue_mean_pkts,
            BottleneckMetric::QueueMaxPkts => b.queue_max_pkts,
            BottleneckMetric::Drops => b.drops as f64,
            BottleneckMetric::Marks => b.marks as f64,
            BottleneckMetric::GoodputMeanMbps => o(b.goodput_mean_mbps),
            BottleneckMetric::GoodputSdMbps => o(b.goodput_sd_mbps),
            BottleneckMetric::GoodputCov => o(b.goodput_cov),
            BottleneckMetric::GoodputJain => o(b.goodput_jain),
            BottleneckMetric::Transfers => b.transfers as f64,
            BottleneckMetric::TransferMeanMs => o(b.transfer_mean_ms),
            BottleneckMetric::TransferSdMs => o(b.transfer_sd_ms),
            BottleneckMetric::TransferCov => o(b.transfer_cov),
        }
    }
}

impl RunMetrics {
    /// The value of run metric `m` (NaN where unknown: a queue statistic without `arrive`
    /// rows, seed 001's figures of a run with one connection).
    pub fn value(&self, m: RunMetric) -> f64 {
        let r = self;
        let o = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let n = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64);
        let p = |f: fn(&ParallelMetrics) -> f64| r.parallel.as_ref().map_or(f64::NAN, f);
        let [d, u] = &r.link;
        match m {
            RunMetric::TotalTimeS => r.total_time_s,
            RunMetric::Jain => o(r.jain),
            RunMetric::ThroughputCov => o(r.throughput_cov),
            RunMetric::UtilDown => o(d.utilisation),
            RunMetric::UtilUp => o(u.utilisation),
            RunMetric::QueueMaxDown => o(d.queue.max_pkts),
            RunMetric::QueueMeanDown => o(d.queue.mean_pkts),
            RunMetric::QueueMedianArrivalDown => o(d.queue.median_at_arrival),
            RunMetric::QueueMaxUp => o(u.queue.max_pkts),
            RunMetric::QueueMeanUp => o(u.queue.mean_pkts),
            RunMetric::LinkDropsQueueDown => d.drops_queue as f64,
            RunMetric::LinkDropsRedDown => d.drops_red as f64,
            RunMetric::LinkDropsAqmDown => d.drops_aqm as f64,
            RunMetric::LinkDropsErrorDown => d.drops_error as f64,
            RunMetric::Jain10kX100 => p(|p| p.jain10k_x100.unwrap_or(f64::NAN)),
            RunMetric::RxMin => p(|p| p.rx_min as f64),
            RunMetric::RxMax => p(|p| p.rx_max as f64),
            RunMetric::Rx10kMin => n(r.parallel.and_then(|p| p.rx10k_min)),
            RunMetric::Rx10kMax => n(r.parallel.and_then(|p| p.rx10k_max)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_named_for_bytes_per_second_and_aqm_drops_apart() {
        // Issue 24: metrics.json called bytes per second `throughput_bps`; it is
        // `throughput_Bps` as in the CSVs, and a file written before still reads.
        let c = ConnMetrics {
            throughput_bytes_per_s: 1500.0,
            drops_red: 1,
            drops_aqm: 2,
            ..Default::default()
        };
        let j = serde_json::to_string(&c).unwrap();
        assert!(j.contains("\"throughput_Bps\":1500.0"), "{j}");
        assert!(!j.contains("throughput_bps"), "{j}");
        assert!(j.contains("\"drops_red\":1,\"drops_aqm\":2"), "{j}");
        let old = j
            .replace("throughput_Bps", "throughput_bps")
            .replace(",\"drops_aqm\":2", "");
        let back: ConnMetrics = serde_json::from_str(&old).unwrap();
        assert_eq!(back.throughput_bytes_per_s, 1500.0);
        assert_eq!(back.drops_aqm, 0);
        let u = serde_json::to_string(&UdpMetrics::default()).unwrap();
        assert!(u.contains("\"throughput_Bps\":null"), "{u}");
    }

    #[test]
    fn a_run_without_connections_reads_back() {
        // A run of UDP or probe flows only has no transfer period: NaN, written as null,
        // which must read back (it stopped `lasthop run` of such a scenario).
        let m = RunMetrics {
            total_time_s: f64::NAN,
            pings: vec![PingMetrics {
                flow: Some(0),
                ping_flow: 1,
                sent: 20,
                received: 20,
                rtt_p99_ms: Some(621.0),
                ..Default::default()
            }],
            ..Default::default()
        };
        let j = serde_json::to_string(&m).unwrap();
        assert!(j.contains("\"total_time_s\":null"), "{j}");
        let back: RunMetrics = serde_json::from_str(&j).unwrap();
        assert!(back.total_time_s.is_nan());
        assert_eq!(back.pings, m.pings);
        assert_eq!(back.pings[0].value(PingMetric::RttP99Ms), 621.0);
        assert!(back.pings[0].value(PingMetric::RttMinMs).is_nan());
    }
}
