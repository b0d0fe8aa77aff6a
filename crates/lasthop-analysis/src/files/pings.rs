//! The latency probes' files (runs with `ping` flows; `docs/analysis.md`, *Latency probes*):
//! `ping_flows.csv`, one row per probe flow with what `ping` prints at its end (sent, received,
//! loss, round-trip min/mean/max and the p50/p90/p99 a researcher plots), and `pings.csv`, one
//! row per probe with its round-trip time (empty: no reply). Both name the scenario's flow.

use super::{fmt, FileError};
use crate::ping::PingStats;
use crate::run::FlowId;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Every column of `ping_flows.csv`, in order (the fields of [`PingFlowRow`]).
pub const FLOW_COLUMNS: [&str; 18] = [
    "flow",
    "src",
    "dst",
    "ident",
    "sent",
    "received",
    "lost",
    "loss_rate",
    "duplicates",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p90_ms",
    "rtt_p99_ms",
    "rtt_max_ms",
    "flow_index",
    "flow_name",
    "src_host",
];

/// One row of `ping_flows.csv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PingFlowRow {
    /// 1-based, in order of the flow's first probe.
    pub flow: usize,
    /// The client's address.
    pub src: String,
    /// The server's address.
    pub dst: String,
    /// The echoes' identifier (the flow's port).
    pub ident: u16,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    #[serde(serialize_with = "fmt::opt_f6")]
    pub loss_rate: Option<f64>,
    pub duplicates: u64,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_min_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_mean_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_p50_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_p90_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_p99_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_max_ms: Option<f64>,
    /// The scenario's flow (by the client's and server's addresses and the identifier).
    pub flow_index: Option<usize>,
    #[serde(default)]
    pub flow_name: String,
    #[serde(default)]
    pub src_host: String,
}

/// Every column of `pings.csv`, in order (the fields of [`PingRow`]).
pub const COLUMNS: [&str; 6] = ["flow", "flow_index", "seq", "sent_s", "replied_s", "rtt_ms"];

/// One row of `pings.csv`: a probe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PingRow {
    /// The flow's number in `ping_flows.csv`.
    pub flow: usize,
    pub flow_index: Option<usize>,
    /// The probe's number, from 0.
    pub seq: u32,
    /// The request's capture time at the client.
    #[serde(serialize_with = "fmt::f6")]
    pub sent_s: f64,
    /// The reply's (empty: none came).
    #[serde(serialize_with = "fmt::opt_f6")]
    pub replied_s: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub rtt_ms: Option<f64>,
}

fn named<'a>(p: &PingStats, flows: &'a [FlowId]) -> Option<&'a FlowId> {
    let c = std::net::SocketAddr::new(p.flow.src, p.flow.sport);
    let s = std::net::SocketAddr::new(p.flow.dst, p.flow.sport);
    FlowId::find(flows, c, s).filter(|f| f.client == p.flow.src)
}

impl PingFlowRow {
    /// The row of flow number `n` (from 1), named by the scenario's `flows`.
    pub fn of(n: usize, p: &PingStats, flows: &[FlowId]) -> PingFlowRow {
        let s = p.rtt_summary_ms();
        let f = named(p, flows);
        PingFlowRow {
            flow: n,
            src: p.flow.src.to_string(),
            dst: p.flow.dst.to_string(),
            ident: p.flow.sport,
            sent: p.sent(),
            received: p.replied(),
            lost: p.sent() - p.replied(),
            loss_rate: (p.sent() > 0).then(|| (p.sent() - p.replied()) as f64 / p.sent() as f64),
            duplicates: p.duplicates,
            rtt_min_ms: s.map(|s| s.min),
            rtt_mean_ms: s.map(|s| s.mean),
            rtt_p50_ms: s.map(|s| s.p50),
            rtt_p90_ms: s.map(|s| s.p90),
            rtt_p99_ms: s.map(|s| s.p99),
            rtt_max_ms: s.map(|s| s.max),
            flow_index: f.map(|f| f.index),
            flow_name: f.map(|f| f.name.clone()).unwrap_or_default(),
            src_host: f.map(|f| f.client_host.clone()).unwrap_or_default(),
        }
    }
}

/// The text of `ping_flows.csv`.
pub fn flows_text(pings: &[PingStats], flows: &[FlowId]) -> String {
    super::to_text(
        &FLOW_COLUMNS,
        pings
            .iter()
            .enumerate()
            .map(|(i, p)| PingFlowRow::of(i + 1, p, flows)),
    )
}

/// The text of `pings.csv`.
pub fn text(pings: &[PingStats], flows: &[FlowId]) -> String {
    let rows = pings.iter().enumerate().flat_map(|(i, p)| {
        let index = named(p, flows).map(|f| f.index);
        p.probes.iter().map(move |q| PingRow {
            flow: i + 1,
            flow_index: index,
            seq: q.seq,
            sent_s: q.sent.0 as f64 / 1e9,
            replied_s: q.reply.map(|t| t.0 as f64 / 1e9),
            rtt_ms: q.rtt_ns().map(|n| n as f64 / 1e6),
        })
    });
    super::to_text(&COLUMNS, rows)
}

/// Reads `ping_flows.csv`.
pub fn read_flows(path: &Path) -> Result<Vec<PingFlowRow>, FileError> {
    super::read_file(path)
}

/// Reads `pings.csv`.
pub fn read(path: &Path) -> Result<Vec<PingRow>, FileError> {
    super::read_file(path)
}
