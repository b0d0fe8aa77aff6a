//! `udp_flows.csv`: one row per UDP flow of a run (runs with UDP flows only;
//! `docs/analysis.md`, *UDP flows*). An empty cell is unknown: no sender capture, no event log,
//! too few packets.

use super::{fmt, FileError};
use crate::udp::UdpFlowStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `udp_flows.csv`, in order (the fields of [`UdpFlowRow`]).
pub const COLUMNS: [&str; 30] = [
    "flow",
    "src",
    "dst",
    "sent",
    "received",
    "lost",
    "loss_rate",
    "duplicates",
    "bytes",
    "first_s",
    "last_s",
    "throughput_Bps",
    "drops_queue",
    "drops_red",
    "drops_aqm",
    "drops_error",
    "drops_mtu",
    "spacing_p50_ms",
    "spacing_p75_ms",
    "spacing_p90_ms",
    "spacing_max_ms",
    "delay_p50_ms",
    "delay_p75_ms",
    "delay_p90_ms",
    "delay_p99_ms",
    "delay_max_ms",
    // the scenario's flow (index from 0 and its name; `flow` is the run's own numbering) and
    // the hosts' names: the same in both modes, empty without the scenario
    "flow_index",
    "flow_name",
    "src_host",
    "dst_host",
];

/// One row of `udp_flows.csv`. `drops_aqm` (added later) reads as empty from a file without it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpFlowRow {
    /// 1-based, in order of the flow's first datagram.
    pub flow: usize,
    /// `address:port`.
    pub src: String,
    pub dst: String,
    pub sent: Option<u64>,
    pub received: u64,
    pub lost: Option<u64>,
    #[serde(serialize_with = "fmt::opt_f6")]
    pub loss_rate: Option<f64>,
    #[serde(default)]
    pub duplicates: u64,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default, serialize_with = "fmt::opt_f6")]
    pub first_s: Option<f64>,
    #[serde(default, serialize_with = "fmt::opt_f6")]
    pub last_s: Option<f64>,
    #[serde(rename = "throughput_Bps", serialize_with = "fmt::opt_f3")]
    pub throughput_bytes_per_s: Option<f64>,
    pub drops_queue: Option<u64>,
    /// RED drops and ECN marks (seed 000's "r").
    pub drops_red: Option<u64>,
    /// CoDel's and PIE's drops.
    #[serde(default)]
    pub drops_aqm: Option<u64>,
    pub drops_error: Option<u64>,
    #[serde(default)]
    pub drops_mtu: Option<u64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub spacing_p50_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub spacing_p75_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub spacing_p90_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub spacing_max_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub delay_p50_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub delay_p75_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub delay_p90_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub delay_p99_ms: Option<f64>,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub delay_max_ms: Option<f64>,
    /// The scenario's flow (`lasthop_scenario::Flow::index`), by addresses and server port.
    #[serde(default)]
    pub flow_index: Option<usize>,
    /// Where the flow was written: `flows[2]`, `flows[2]#7` for a group's member.
    #[serde(default)]
    pub flow_name: String,
    #[serde(default)]
    pub src_host: String,
    #[serde(default)]
    pub dst_host: String,
}

fn secs(t: Option<lasthop_core::Time>) -> Option<f64> {
    t.map(|t| t.0 as f64 / 1e9)
}

impl UdpFlowRow {
    /// The row of flow number `n` (from 1).
    pub fn of(n: usize, f: &UdpFlowStats) -> UdpFlowRow {
        let sp = f.spacing_ms();
        let de = f.delay_ms();
        let d = f.drops;
        let addr = |ip, port| std::net::SocketAddr::new(ip, port).to_string();
        UdpFlowRow {
            flow: n,
            src: addr(f.flow.src, f.flow.sport),
            dst: addr(f.flow.dst, f.flow.dport),
            sent: f.sent,
            received: f.received,
            lost: f.lost(),
            loss_rate: f.loss_rate(),
            duplicates: f.duplicates,
            bytes: f.bytes,
            first_s: secs(f.packets.first().map(|p| p.time)),
            last_s: secs(f.packets.last().map(|p| p.time)),
            throughput_bytes_per_s: f.throughput_bytes_per_s(),
            drops_queue: d.map(|d| d.queue),
            drops_red: d.map(|d| d.red),
            drops_aqm: d.map(|d| d.aqm),
            drops_error: d.map(|d| d.error),
            drops_mtu: d.map(|d| d.mtu),
            spacing_p50_ms: sp.p50,
            spacing_p75_ms: sp.p75,
            spacing_p90_ms: sp.p90,
            spacing_max_ms: sp.max,
            delay_p50_ms: de.p50,
            delay_p75_ms: de.p75,
            delay_p90_ms: de.p90,
            delay_p99_ms: de.p99,
            delay_max_ms: de.max,
            flow_index: None,
            flow_name: String::new(),
            src_host: String::new(),
            dst_host: String::new(),
        }
    }

    /// The row named by the scenario's flow it belongs to (unchanged without one).
    pub fn in_flow(mut self, flows: &[crate::run::FlowId]) -> UdpFlowRow {
        let (Ok(src), Ok(dst)) = (self.src.parse(), self.dst.parse()) else {
            return self;
        };
        if let Some(f) = crate::run::FlowId::find(flows, src, dst) {
            self.flow_index = Some(f.index);
            self.flow_name = f.name.clone();
            let from_client = f.client == src.ip();
            let (a, b) = (f.client_host.clone(), f.server_host.clone());
            (self.src_host, self.dst_host) = if from_client { (a, b) } else { (b, a) };
        }
        self
    }

    /// Spacing 50/75/90 % and max, ms.
    pub fn spacing_ms(&self) -> [Option<f64>; 4] {
        [
            self.spacing_p50_ms,
            self.spacing_p75_ms,
            self.spacing_p90_ms,
            self.spacing_max_ms,
        ]
    }

    /// One-way delay 50/75/90/99 % and max, ms.
    pub fn delay_ms(&self) -> [Option<f64>; 5] {
        [
            self.delay_p50_ms,
            self.delay_p75_ms,
            self.delay_p90_ms,
            self.delay_p99_ms,
            self.delay_max_ms,
        ]
    }
}

/// The rows of `flows`, numbered from 1.
pub fn rows(flows: &[UdpFlowStats]) -> impl Iterator<Item = UdpFlowRow> + '_ {
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| UdpFlowRow::of(i + 1, f))
}

/// The text of `udp_flows.csv`, its rows named by the scenario's `named` flows.
pub fn text(flows: &[UdpFlowStats], named: &[crate::run::FlowId]) -> String {
    super::to_text(&COLUMNS, rows(flows).map(|r| r.in_flow(named)))
}

/// Writes `udp_flows.csv` at `path`, atomically (without the scenario's flows).
pub fn write(path: &Path, flows: &[UdpFlowStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, rows(flows))
}

/// Reads `udp_flows.csv`.
pub fn read(path: &Path) -> Result<Vec<UdpFlowRow>, FileError> {
    super::read_file(path)
}
