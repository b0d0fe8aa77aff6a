//! `connections.csv`: one row per TCP connection of a run (`docs/analysis.md`). Counters are
//! of the data direction unless named otherwise; drops are empty without an event log.

use super::{fmt, FileError};
use crate::conn::ConnStats;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::path::Path;

/// Every column of `connections.csv`, in order (the fields of [`ConnRow`]).
pub const COLUMNS: [&str; 57] = [
    "conn",
    "client",
    "server",
    "start_s",
    "end_s",
    "elapsed_s",
    "bytes",
    "throughput_Bps",
    "data_pkts",
    "rexmt_pkts",
    "dupacks",
    "triple_dupacks",
    "rtos",
    "sack_blocks",
    "drops_queue",
    "drops_error",
    // extras, data direction unless named otherwise
    "rexmt_bytes",
    "dsack_blocks",
    "drops_red",
    "drops_aqm",
    "drops_mtu",
    "ecn_marks",
    "spurious_rexmt",
    "rtt_min_ms",
    "rtt_avg_ms",
    "rtt_max_ms",
    "rtt_samples",
    "complete",
    "data_dir",
    "merged",
    "data_bytes",
    "fast_rexmts",
    "out_of_order",
    "sack_pkts",
    "zwnd_probes",
    // the acknowledging direction's own data (requests, in HTTP)
    "rev_bytes",
    "rev_data_pkts",
    "rev_rexmt_pkts",
    "rev_dupacks",
    // drops by direction
    "drops_queue_c2s",
    "drops_queue_s2c",
    "drops_error_c2s",
    "drops_error_s2c",
    "drops_red_c2s",
    "drops_red_s2c",
    "drops_aqm_c2s",
    "drops_aqm_s2c",
    "spurious_rexmt_rev",
    // seed 001's partial transfer ("first 10 KB", Options::partial_bytes)
    "partial_elapsed_s",
    "partial_throughput_Bps",
    // seeds 001/002's estimate of unnecessary retransmissions: rexmt_pkts - data-direction drops
    "rexmt_minus_drops",
    // seed 001's RxMin/RxMax of the first 10 KB: retransmissions before the partial ACK
    "partial_rexmt_pkts",
    // seed 000's spurious timeouts: RTO retransmissions of segments the link had delivered
    "spurious_rtos",
    // the scenario's flow (index from 0 and its name) and the hosts' names: the same in both
    // modes; empty for a capture analysed without its scenario (`lasthop analyze`)
    "flow_index",
    "flow_name",
    "client_host",
    "server_host",
];

/// One row of `connections.csv`. Columns added after the first files were written
/// (`triple_dupacks`, `sack_pkts`, `ecn_marks`, `drops_aqm*`, `partial_*`, `rexmt_minus_drops`,
/// `spurious_rtos`, ...) read as empty or 0 from a file without them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnRow {
    /// 1-based, in order of the connection's first packet.
    pub conn: usize,
    /// `address:port`.
    pub client: String,
    pub server: String,
    #[serde(serialize_with = "fmt::f6")]
    pub start_s: f64,
    #[serde(serialize_with = "fmt::f6")]
    pub end_s: f64,
    /// First SYN to the ACK of the client's FIN (else the last packet), at the client.
    #[serde(serialize_with = "fmt::f6")]
    pub elapsed_s: f64,
    /// Unique payload bytes of the data direction.
    pub bytes: u64,
    #[serde(rename = "throughput_Bps", serialize_with = "fmt::f3")]
    pub throughput_bytes_per_s: f64,
    #[serde(default)]
    pub data_pkts: u64,
    pub rexmt_pkts: u64,
    pub dupacks: u64,
    #[serde(default)]
    pub triple_dupacks: u64,
    pub rtos: u64,
    #[serde(default)]
    pub sack_blocks: u64,
    #[serde(default)]
    pub drops_queue: Option<u64>,
    #[serde(default)]
    pub drops_error: Option<u64>,
    #[serde(default)]
    pub rexmt_bytes: u64,
    #[serde(default)]
    pub dsack_blocks: u64,
    #[serde(default)]
    pub drops_red: Option<u64>,
    #[serde(default)]
    pub drops_aqm: Option<u64>,
    #[serde(default)]
    pub drops_mtu: Option<u64>,
    /// CE marks of the data direction.
    #[serde(default)]
    pub ecn_marks: Option<u64>,
    /// Retransmissions whose earlier copy the link had delivered (needs the full event log).
    #[serde(default)]
    pub spurious_rexmt: Option<u64>,
    #[serde(default, serialize_with = "fmt::opt_f3")]
    pub rtt_min_ms: Option<f64>,
    #[serde(default, serialize_with = "fmt::opt_f3")]
    pub rtt_avg_ms: Option<f64>,
    #[serde(default, serialize_with = "fmt::opt_f3")]
    pub rtt_max_ms: Option<f64>,
    #[serde(default)]
    pub rtt_samples: u64,
    #[serde(with = "fmt::b01")]
    pub complete: bool,
    /// `c2s` or `s2c`.
    pub data_dir: String,
    #[serde(default, with = "fmt::b01")]
    pub merged: bool,
    #[serde(default)]
    pub data_bytes: u64,
    #[serde(default)]
    pub fast_rexmts: u64,
    #[serde(default)]
    pub out_of_order: u64,
    /// ACKs carrying SACK blocks (tcptrace "sack pkts sent" of the ACK direction).
    #[serde(default)]
    pub sack_pkts: u64,
    #[serde(default)]
    pub zwnd_probes: u64,
    #[serde(default)]
    pub rev_bytes: u64,
    #[serde(default)]
    pub rev_data_pkts: u64,
    #[serde(default)]
    pub rev_rexmt_pkts: u64,
    #[serde(default)]
    pub rev_dupacks: u64,
    #[serde(default)]
    pub drops_queue_c2s: Option<u64>,
    #[serde(default)]
    pub drops_queue_s2c: Option<u64>,
    #[serde(default)]
    pub drops_error_c2s: Option<u64>,
    #[serde(default)]
    pub drops_error_s2c: Option<u64>,
    #[serde(default)]
    pub drops_red_c2s: Option<u64>,
    #[serde(default)]
    pub drops_red_s2c: Option<u64>,
    #[serde(default)]
    pub drops_aqm_c2s: Option<u64>,
    #[serde(default)]
    pub drops_aqm_s2c: Option<u64>,
    #[serde(default)]
    pub spurious_rexmt_rev: Option<u64>,
    /// Seed 001's first 10 KB: the SYN to the ACK covering them, s (empty when never reached).
    #[serde(default, serialize_with = "fmt::opt_f6")]
    pub partial_elapsed_s: Option<f64>,
    #[serde(
        default,
        rename = "partial_throughput_Bps",
        serialize_with = "fmt::opt_f3"
    )]
    pub partial_throughput_bytes_per_s: Option<f64>,
    /// Retransmissions − data-direction drops (empty without an event log).
    #[serde(default)]
    pub rexmt_minus_drops: Option<u64>,
    #[serde(default)]
    pub partial_rexmt_pkts: Option<u64>,
    /// RTO retransmissions of segments the link had delivered (needs the full event log).
    #[serde(default)]
    pub spurious_rtos: Option<u64>,
    /// The scenario's flow (`lasthop_scenario::Flow::index`), by client address, server
    /// address and port ([`crate::run::FlowId`]).
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

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

impl ConnRow {
    /// The row named by the scenario's flow it belongs to (unchanged without one).
    pub fn in_flow(mut self, flow: Option<&crate::run::FlowId>) -> ConnRow {
        if let Some(f) = flow {
            self.flow_index = Some(f.index);
            self.flow_name = f.name.clone();
            self.client_host = f.client_host.clone();
            self.server_host = f.server_host.clone();
        }
        self
    }

    /// The row of an analysed connection.
    pub fn of(c: &ConnStats) -> ConnRow {
        let d = c.data();
        let a = c.acks();
        let drops = c.drops();
        let joined = c.events_joined;
        let dropv = |v: u64| joined.then_some(v);
        let rtt = &d.rtt;
        let ms = |ns: f64| (rtt.samples > 0).then_some(ns / 1e6);
        ConnRow {
            conn: c.id,
            client: c.client.to_string(),
            server: c.server.to_string(),
            start_s: secs(c.start.0),
            end_s: secs(c.end().0),
            elapsed_s: secs(c.elapsed().0),
            bytes: c.bytes(),
            throughput_bytes_per_s: c.throughput_bytes_per_s(),
            data_pkts: d.data_pkts,
            rexmt_pkts: d.rexmt_pkts,
            dupacks: d.dupacks,
            triple_dupacks: d.triple_dupacks,
            rtos: d.rtos,
            sack_blocks: a.sack_blocks,
            drops_queue: dropv(drops.queue),
            drops_error: dropv(drops.error),
            rexmt_bytes: d.rexmt_bytes,
            dsack_blocks: a.dsack_blocks,
            drops_red: dropv(drops.red),
            drops_aqm: dropv(drops.aqm),
            drops_mtu: dropv(drops.mtu),
            ecn_marks: dropv(drops.marks),
            spurious_rexmt: d.spurious_rexmt,
            rtt_min_ms: ms(rtt.min_ns as f64),
            rtt_avg_ms: ms(rtt.avg_ns().unwrap_or(0.0)),
            rtt_max_ms: ms(rtt.max_ns as f64),
            rtt_samples: rtt.samples,
            complete: c.complete(),
            data_dir: c.data_dir().name().to_string(),
            merged: c.merged,
            data_bytes: d.data_bytes,
            fast_rexmts: d.fast_rexmts,
            out_of_order: d.out_of_order,
            sack_pkts: a.sack_pkts,
            zwnd_probes: d.zwnd_probes,
            rev_bytes: a.unique_bytes,
            rev_data_pkts: a.data_pkts,
            rev_rexmt_pkts: a.rexmt_pkts,
            rev_dupacks: a.dupacks,
            drops_queue_c2s: dropv(c.c2s.drops.queue),
            drops_queue_s2c: dropv(c.s2c.drops.queue),
            drops_error_c2s: dropv(c.c2s.drops.error),
            drops_error_s2c: dropv(c.s2c.drops.error),
            drops_red_c2s: dropv(c.c2s.drops.red),
            drops_red_s2c: dropv(c.s2c.drops.red),
            drops_aqm_c2s: dropv(c.c2s.drops.aqm),
            drops_aqm_s2c: dropv(c.s2c.drops.aqm),
            spurious_rexmt_rev: a.spurious_rexmt,
            partial_elapsed_s: c.partial_elapsed().map(|d| secs(d.0)),
            partial_throughput_bytes_per_s: c.partial_throughput_bytes_per_s(),
            rexmt_minus_drops: dropv(d.rexmt_pkts.saturating_sub(d.drops.total())),
            partial_rexmt_pkts: Some(d.partial_rexmt_pkts),
            spurious_rtos: d.spurious_rtos,
            flow_index: None,
            flow_name: String::new(),
            client_host: String::new(),
            server_host: String::new(),
        }
    }

    /// The data direction's index in the `[c2s, s2c]` pairs of [`ConnRow::drops_by_dir`].
    pub fn data_index(&self) -> usize {
        usize::from(self.data_dir == "s2c")
    }

    /// Drops of each direction, `[c2s, s2c]`, by cause: queue, RED, other AQMs, link error
    /// (0 without an event log).
    pub fn drops_by_dir(&self) -> [DirDrops; 2] {
        let z = |v: Option<u64>| v.unwrap_or(0);
        [
            DirDrops {
                queue: z(self.drops_queue_c2s),
                red: z(self.drops_red_c2s),
                aqm: z(self.drops_aqm_c2s),
                error: z(self.drops_error_c2s),
            },
            DirDrops {
                queue: z(self.drops_queue_s2c),
                red: z(self.drops_red_s2c),
                aqm: z(self.drops_aqm_s2c),
                error: z(self.drops_error_s2c),
            },
        ]
    }
}

/// One direction's drops of a connection, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirDrops {
    pub queue: u64,
    pub red: u64,
    pub aqm: u64,
    pub error: u64,
}

impl DirDrops {
    pub fn total(&self) -> u64 {
        self.queue + self.red + self.aqm + self.error
    }
}

/// Writes the header and one row per connection to `w`.
pub fn write_to<W: Write>(w: W, conns: &[ConnStats]) -> io::Result<()> {
    super::write_rows(w, &COLUMNS, conns.iter().map(ConnRow::of))
}

/// Writes `connections.csv` at `path`, atomically.
pub fn write(path: &Path, conns: &[ConnStats]) -> io::Result<()> {
    super::write_file(path, &COLUMNS, conns.iter().map(ConnRow::of))
}

/// One row as CSV text, without its line end.
pub fn row_text(c: &ConnStats) -> String {
    super::row_text(ConnRow::of(c))
}

/// Reads `connections.csv`.
pub fn read(path: &Path) -> Result<Vec<ConnRow>, FileError> {
    super::read_file(path)
}
