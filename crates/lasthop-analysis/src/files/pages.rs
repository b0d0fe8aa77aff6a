//! `pages.csv`: one row per page of a run's `http` flows (runs with `http` flows only;
//! `docs/analysis.md`, *Pages*). Its objects are in [`super::page_objects`].

use super::{fmt, FileError};
use crate::page::PageStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `pages.csv`, in order (the fields of [`PageRow`]).
pub const COLUMNS: [&str; 14] = [
    "flow",
    "workload",
    "objects",
    "bytes",
    "client",
    "server",
    "start_s",
    "response_s",
    "total_s",
    "complete",
    // the scenario's flow (index from 0, as `flow`, and its name) and the hosts' names, as
    // connections.csv names them: the same in both modes; empty without the scenario
    "flow_index",
    "flow_name",
    "client_host",
    "server_host",
];

/// One row of `pages.csv`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageRow {
    /// The scenario's flow index.
    pub flow: usize,
    /// The seed's workload label (`s+2s`, ...), or the sizes.
    pub workload: String,
    #[serde(default)]
    pub objects: usize,
    #[serde(default)]
    pub bytes: u64,
    /// The client's address.
    #[serde(default)]
    pub client: String,
    /// The server's `address:port`.
    #[serde(default)]
    pub server: String,
    /// The first SYN sent, client side.
    #[serde(default, serialize_with = "fmt::opt_f6")]
    pub start_s: Option<f64>,
    /// Client side: first SYN sent to the ACK of the client's last FIN received.
    #[serde(serialize_with = "fmt::opt_f6")]
    pub response_s: Option<f64>,
    /// Server side: first SYN arrival to the last ACK of a client's FIN sent.
    #[serde(serialize_with = "fmt::opt_f6")]
    pub total_s: Option<f64>,
    #[serde(with = "fmt::b01")]
    pub complete: bool,
    /// The scenario's flow ([`crate::run::FlowId`]; the same as `flow`).
    #[serde(default)]
    pub flow_index: Option<usize>,
    /// Where the flow was written: `flows[2]`, `flows[2]#7` for a group's member.
    #[serde(default)]
    pub flow_name: String,
    #[serde(default)]
    pub client_host: String,
    #[serde(default)]
    pub server_host: String,
}

impl PageRow {
    pub fn of(p: &PageStats) -> PageRow {
        PageRow {
            flow: p.spec.flow,
            workload: p.spec.label.clone(),
            objects: p.spec.objects.len(),
            bytes: p.spec.objects.iter().sum(),
            client: p.spec.client.to_string(),
            server: p.spec.server.to_string(),
            start_s: p.response().map(|r| r.0 .0 as f64 / 1e9),
            response_s: p.response_s(),
            total_s: p.total_s(),
            complete: p.complete(),
            flow_index: None,
            flow_name: String::new(),
            client_host: String::new(),
            server_host: String::new(),
        }
    }

    /// The row named by the scenario's flow it belongs to (unchanged without one).
    pub fn in_flow(mut self, flows: &[crate::run::FlowId]) -> PageRow {
        if let Some(f) = flows.iter().find(|f| f.index == self.flow) {
            self.flow_index = Some(f.index);
            self.flow_name = f.name.clone();
            self.client_host = f.client_host.clone();
            self.server_host = f.server_host.clone();
        }
        self
    }
}

/// The text of `pages.csv`, its rows named by the scenario's `named` flows.
pub fn text(pages: &[PageStats], named: &[crate::run::FlowId]) -> String {
    super::to_text(
        &COLUMNS,
        pages.iter().map(|p| PageRow::of(p).in_flow(named)),
    )
}

/// Writes `pages.csv` at `path`, atomically (without the scenario's flows).
pub fn write(path: &Path, pages: &[PageStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, pages.iter().map(PageRow::of))
}

/// Reads `pages.csv`.
pub fn read(path: &Path) -> Result<Vec<PageRow>, FileError> {
    super::read_file(path)
}
