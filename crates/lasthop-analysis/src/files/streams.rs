//! `streams.csv`: seed 003's streams, one row per data direction of a TCP connection, as
//! analyseTCP saw them (runs with `thin` flows only; `docs/analysis.md`, *Thin streams*).
//! Times in seconds with 6 decimals, ms with 3, rates and percentages with 3; an empty cell is
//! unknown (no receiver capture, no sample). The histograms are in [`super::latency`].

use super::{fmt, FileError};
use crate::latency::StreamStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::net::SocketAddr;
use std::path::Path;

/// Every column of `streams.csv`, in order (the fields of [`StreamRow`]).
pub const COLUMNS: [&str; 35] = [
    "stream",
    "sender",
    "receiver",
    "first_s",
    "last_s",
    "data_pkts",
    "new_pkts",
    "retr_pkts",
    "rdb_pkts",
    "payload_bytes",
    "unique_bytes",
    "redundant_bytes",
    "retr_bytes",
    "rdb_bytes",
    "dupacks",
    "itt_avg_ms",
    "payload_avg_B",
    "lat_ranges",
    "lat_mean_ms",
    "lat_min_ms",
    "lat_max_ms",
    "unacked_ranges",
    "recv_pkts",
    "lost_pkts",
    "lost_bytes",
    "loss_pkts_pct",
    "loss_bytes_pct",
    "rdb_hits",
    "rdb_misses",
    "throughput_Bps",
    "goodput_Bps",
    // the scenario's flow (index from 0 and its name), found by the sender's and receiver's
    // addresses and the server's port, and the hosts' names: the same in both modes; empty
    // without the scenario
    "flow_index",
    "flow_name",
    "sender_host",
    "receiver_host",
];

/// One row of `streams.csv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamRow {
    /// 1-based, in order of the first data packet.
    pub stream: u64,
    /// `address:port` (empty when unknown).
    pub sender: String,
    pub receiver: String,
    #[serde(serialize_with = "fmt::f6")]
    pub first_s: f64,
    #[serde(serialize_with = "fmt::f6")]
    pub last_s: f64,
    pub data_pkts: u64,
    pub new_pkts: u64,
    pub retr_pkts: u64,
    pub rdb_pkts: u64,
    pub payload_bytes: u64,
    pub unique_bytes: u64,
    pub redundant_bytes: u64,
    pub retr_bytes: u64,
    pub rdb_bytes: u64,
    pub dupacks: u64,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub itt_avg_ms: Option<f64>,
    #[serde(rename = "payload_avg_B", serialize_with = "fmt::opt_f3")]
    pub payload_avg_bytes: Option<f64>,
    pub lat_ranges: u64,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub lat_mean_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub lat_min_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub lat_max_ms: Option<f64>,
    pub unacked_ranges: u64,
    pub recv_pkts: Option<u64>,
    pub lost_pkts: Option<u64>,
    pub lost_bytes: Option<u64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub loss_pkts_pct: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub loss_bytes_pct: Option<f64>,
    pub rdb_hits: Option<u64>,
    pub rdb_misses: Option<u64>,
    #[serde(rename = "throughput_Bps", serialize_with = "fmt::opt_f3")]
    pub throughput_bytes_per_s: Option<f64>,
    #[serde(rename = "goodput_Bps", serialize_with = "fmt::opt_f3")]
    pub goodput_bytes_per_s: Option<f64>,
    /// The scenario's flow ([`crate::run::FlowId`]).
    #[serde(default)]
    pub flow_index: Option<usize>,
    /// Where the flow was written: `flows[2]`, `flows[2]#7` for a group's member.
    #[serde(default)]
    pub flow_name: String,
    #[serde(default)]
    pub sender_host: String,
    #[serde(default)]
    pub receiver_host: String,
}

impl StreamRow {
    pub fn of(st: &StreamStats) -> StreamRow {
        let l = &st.latency;
        let ms = |ns: u64| (l.n > 0).then(|| ns as f64 / 1e6);
        let addr = |a: Option<SocketAddr>| a.map_or(String::new(), |a| a.to_string());
        let r = st.received.as_ref();
        let pct = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64 * 100.0);
        StreamRow {
            stream: st.id as u64,
            sender: addr(st.sender),
            receiver: addr(st.receiver),
            first_s: st.first_ns as f64 / 1e9,
            last_s: st.last_ns as f64 / 1e9,
            data_pkts: st.data_pkts,
            new_pkts: st.new_pkts,
            retr_pkts: st.retr_pkts,
            rdb_pkts: st.rdb_pkts,
            payload_bytes: st.payload_bytes,
            unique_bytes: st.unique_bytes,
            redundant_bytes: st.redundant_bytes,
            retr_bytes: st.retr_bytes,
            rdb_bytes: st.rdb_bytes,
            dupacks: st.dupacks,
            itt_avg_ms: st.itt_avg_ms(),
            payload_avg_bytes: st.payload_avg(),
            lat_ranges: l.n,
            lat_mean_ms: l.mean_ms(),
            lat_min_ms: ms(l.min_ns),
            lat_max_ms: ms(l.max_ns),
            unacked_ranges: st.unacked_ranges,
            recv_pkts: r.map(|r| r.pkts),
            lost_pkts: r.map(|r| r.lost_pkts),
            lost_bytes: r.map(|r| r.lost_bytes),
            loss_pkts_pct: r.and_then(|r| pct(r.lost_pkts, st.data_pkts)),
            loss_bytes_pct: r.and_then(|r| pct(r.lost_bytes, st.payload_bytes)),
            rdb_hits: r.map(|r| r.rdb_hits),
            rdb_misses: r.map(|r| r.rdb_misses),
            throughput_bytes_per_s: r.and_then(|r| r.throughput_bytes_per_s()),
            goodput_bytes_per_s: r.and_then(|r| r.goodput_bytes_per_s()),
            flow_index: None,
            flow_name: String::new(),
            sender_host: String::new(),
            receiver_host: String::new(),
        }
    }

    /// The row named by the scenario's flow it belongs to (unchanged without one): a stream
    /// from the flow's client or from its server.
    pub fn in_flow(mut self, flows: &[crate::run::FlowId]) -> StreamRow {
        let (Ok(snd), Ok(rcv)) = (self.sender.parse(), self.receiver.parse()) else {
            return self;
        };
        if let Some(f) = crate::run::FlowId::find(flows, snd, rcv) {
            self.flow_index = Some(f.index);
            self.flow_name = f.name.clone();
            let from_client = f.client == snd.ip();
            let (a, b) = (f.client_host.clone(), f.server_host.clone());
            (self.sender_host, self.receiver_host) = if from_client { (a, b) } else { (b, a) };
        }
        self
    }

    /// The sender's address without its port (`[` `]` of an IPv6 address removed).
    pub fn sender_ip(&self) -> &str {
        let ip = self
            .sender
            .rsplit_once(':')
            .map_or(self.sender.as_str(), |(ip, _)| ip);
        ip.trim_matches(['[', ']'])
    }
}

/// The text of `streams.csv`, its rows named by the scenario's `named` flows.
pub fn text(streams: &[StreamStats], named: &[crate::run::FlowId]) -> String {
    super::to_text(
        &COLUMNS,
        streams.iter().map(|s| StreamRow::of(s).in_flow(named)),
    )
}

/// Writes `streams.csv` at `path`, atomically (without the scenario's flows).
pub fn write(path: &Path, streams: &[StreamStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, streams.iter().map(StreamRow::of))
}

/// Reads `streams.csv`.
pub fn read(path: &Path) -> Result<Vec<StreamRow>, FileError> {
    super::read_file(path)
}
