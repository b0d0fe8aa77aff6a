//! `pages.csv`: one row per page of a run's `http` flows (runs with `http` flows only;
//! `docs/analysis.md`, *Pages*). Its objects are in [`super::page_objects`].

use super::{fmt, FileError};
use crate::page::PageStats;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Every column of `pages.csv`, in order (the fields of [`PageRow`]).
pub const COLUMNS: [&str; 10] = [
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
        }
    }
}

/// The text of `pages.csv`.
pub fn text(pages: &[PageStats]) -> String {
    super::to_text(&COLUMNS, pages.iter().map(PageRow::of))
}

/// Writes `pages.csv` at `path`, atomically.
pub fn write(path: &Path, pages: &[PageStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, pages.iter().map(PageRow::of))
}

/// Reads `pages.csv`.
pub fn read(path: &Path) -> Result<Vec<PageRow>, FileError> {
    super::read_file(path)
}
