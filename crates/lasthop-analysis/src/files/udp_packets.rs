//! `udp_packets.csv`: one row per received datagram of a UDP flow (its first copy), per flow
//! in receive order: the series behind the report's spacing CDF and delay plot.

use super::{fmt, FileError};
use crate::udp::UdpFlowStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `udp_packets.csv`, in order (the fields of [`UdpPacketRow`]).
pub const COLUMNS: [&str; 5] = ["flow", "seq", "sent_s", "received_s", "delay_ms"];

/// One row of `udp_packets.csv`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpPacketRow {
    /// The flow's number in `udp_flows.csv`.
    pub flow: usize,
    pub seq: u32,
    /// Sender capture time (empty when the sender's capture did not see it).
    #[serde(serialize_with = "fmt::opt_f6")]
    pub sent_s: Option<f64>,
    /// Receiver capture time.
    #[serde(serialize_with = "fmt::f6")]
    pub received_s: f64,
    #[serde(serialize_with = "fmt::opt_f3")]
    pub delay_ms: Option<f64>,
}

/// The rows of `flows`' received datagrams, flows numbered from 1.
pub fn rows(flows: &[UdpFlowStats]) -> impl Iterator<Item = UdpPacketRow> + '_ {
    flows.iter().enumerate().flat_map(|(i, f)| {
        f.packets.iter().map(move |p| UdpPacketRow {
            flow: i + 1,
            seq: p.seq,
            sent_s: p.sent.map(|t| t.0 as f64 / 1e9),
            received_s: p.time.0 as f64 / 1e9,
            delay_ms: p.delay_ns().map(|d| d as f64 / 1e6),
        })
    })
}

/// The text of `udp_packets.csv`.
pub fn text(flows: &[UdpFlowStats]) -> String {
    super::to_text(&COLUMNS, rows(flows))
}

/// Writes `udp_packets.csv` at `path`, atomically.
pub fn write(path: &Path, flows: &[UdpFlowStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, rows(flows))
}

/// Reads `udp_packets.csv`.
pub fn read(path: &Path) -> Result<Vec<UdpPacketRow>, FileError> {
    super::read_file(path)
}
