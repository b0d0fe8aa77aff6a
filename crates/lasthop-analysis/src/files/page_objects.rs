//! `page_objects.csv`: one row per object of a page (one TCP connection each), pages in order,
//! objects in index order (runs with `http` flows only; `docs/analysis.md`, *Pages*).

use super::{fmt, FileError};
use crate::page::PageStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `page_objects.csv`, in order (the fields of [`PageObjectRow`]).
pub const COLUMNS: [&str; 19] = [
    "flow",
    "object",
    "class",
    "bytes",
    "client_port",
    "start_s",
    "elapsed_s",
    "throughput_Bps",
    "rexmt_pkts",
    "dupacks",
    "triple_dupacks",
    "sack_pkts",
    "drops_queue",
    "drops_error",
    "ack_drops_queue",
    "ack_drops_error",
    "client_elapsed_s",
    // the scenario's flow (index from 0, as `flow`, and its name): empty without the scenario
    "flow_index",
    "flow_name",
];

/// One row of `page_objects.csv`; an empty cell is unknown (the object's connection missing
/// from a capture, no event log).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageObjectRow {
    /// The page's flow (`flow` in `pages.csv`).
    pub flow: usize,
    /// 0 = the main object.
    pub object: usize,
    /// 1 = the main object, then the in-lines by throughput within the run, highest first.
    pub class: usize,
    pub bytes: u64,
    #[serde(default)]
    pub client_port: u16,
    /// Server side: the SYN's arrival.
    #[serde(default, serialize_with = "fmt::opt_f6")]
    pub start_s: Option<f64>,
    /// Server side: SYN arrival to the ACK of the client's FIN sent.
    #[serde(serialize_with = "fmt::opt_f6")]
    pub elapsed_s: Option<f64>,
    /// bytes / elapsed_s.
    #[serde(rename = "throughput_Bps", serialize_with = "fmt::opt_f3")]
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
    /// Client side: SYN sent to the ACK of the client's FIN received.
    #[serde(default, serialize_with = "fmt::opt_f6")]
    pub client_elapsed_s: Option<f64>,
    /// The scenario's flow ([`crate::run::FlowId`]; the same as `flow`).
    #[serde(default)]
    pub flow_index: Option<usize>,
    /// Where the flow was written: `flows[2]`, `flows[2]#7` for a group's member.
    #[serde(default)]
    pub flow_name: String,
}

impl PageObjectRow {
    /// The row named by the scenario's flow it belongs to (unchanged without one).
    pub fn in_flow(mut self, flows: &[crate::run::FlowId]) -> PageObjectRow {
        if let Some(f) = flows.iter().find(|f| f.index == self.flow) {
            self.flow_index = Some(f.index);
            self.flow_name = f.name.clone();
        }
        self
    }
}

/// The rows of every page's objects.
pub fn rows(pages: &[PageStats]) -> impl Iterator<Item = PageObjectRow> + '_ {
    pages.iter().flat_map(|p| {
        p.objects.iter().map(move |o| {
            let d = o.drops;
            PageObjectRow {
                flow: p.spec.flow,
                object: o.index,
                class: o.class,
                bytes: o.bytes,
                client_port: p.spec.first_port.wrapping_add(o.index as u16),
                start_s: o.server.map(|x| x.0 .0 as f64 / 1e9),
                elapsed_s: o.elapsed_s(),
                throughput_bytes_per_s: o.throughput_bytes_per_s(),
                rexmt_pkts: o.rexmt_pkts,
                dupacks: o.dupacks,
                triple_dupacks: o.triple_dupacks,
                sack_pkts: o.sack_pkts,
                drops_queue: d.map(|d| d.queue),
                drops_error: d.map(|d| d.error),
                ack_drops_queue: d.map(|d| d.ack_queue),
                ack_drops_error: d.map(|d| d.ack_error),
                client_elapsed_s: o.client_elapsed_s(),
                flow_index: None,
                flow_name: String::new(),
            }
        })
    })
}

/// The text of `page_objects.csv`, its rows named by the scenario's `named` flows.
pub fn text(pages: &[PageStats], named: &[crate::run::FlowId]) -> String {
    super::to_text(&COLUMNS, rows(pages).map(|r| r.in_flow(named)))
}

/// Writes `page_objects.csv` at `path`, atomically (without the scenario's flows).
pub fn write(path: &Path, pages: &[PageStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, rows(pages))
}

/// Reads `page_objects.csv`.
pub fn read(path: &Path) -> Result<Vec<PageObjectRow>, FileError> {
    super::read_file(path)
}
