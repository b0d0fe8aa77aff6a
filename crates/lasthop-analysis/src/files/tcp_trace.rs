//! `tcp_trace.csv` (simulation only): the TCP model's congestion state after every change, one
//! row per data sender and change (`docs/simulator.md`). The simulator writes it row by row
//! while it runs ([`TraceWriter`]); the report reads it back ([`read`]). A run whose hosts may
//! pace has two more columns, [`PACING_COLUMNS`] (the reader ignores them).

use super::FileError;
use serde::{Deserialize, Serialize};
use std::fmt::{Debug, Display};
use std::io::{self, Write};
use std::path::Path;

/// Every column of `tcp_trace.csv`, in order (the fields of [`TraceRow`]).
pub const COLUMNS: [&str; 15] = [
    "time_ns",
    "host",
    "local",
    "remote",
    "cwnd_segs",
    "ssthresh_segs",
    "srtt_ns",
    "rttvar_ns",
    "rto_ns",
    "ca_state",
    "packets_out",
    "sacked_out",
    "lost_out",
    "retrans_out",
    "in_flight",
];

/// The columns after [`COLUMNS`] when a host may pace: `sk_pacing_rate` (empty for a
/// connection that does not pace, `unlimited` before its first rate) and the algorithm's own
/// state (BBR's mode).
pub const PACING_COLUMNS: [&str; 2] = ["pacing_rate_Bps", "cc_mode"];

/// One row of `tcp_trace.csv` as read back. `cwnd_segs` and `ssthresh_segs` were `cwnd` and
/// `ssthresh` before issue 24 put the unit in the name; the scoreboard's columns came later
/// (they read as empty from a file without them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    pub time_ns: u64,
    pub host: String,
    /// The connection's local and remote `address:port`.
    pub local: String,
    pub remote: String,
    #[serde(alias = "cwnd")]
    pub cwnd_segs: u64,
    /// `u32::MAX >> 1` while "infinite".
    #[serde(alias = "ssthresh")]
    pub ssthresh_segs: u64,
    #[serde(default)]
    pub srtt_ns: Option<u64>,
    #[serde(default)]
    pub rttvar_ns: Option<u64>,
    #[serde(default)]
    pub rto_ns: Option<u64>,
    #[serde(default)]
    pub ca_state: String,
    #[serde(default)]
    pub packets_out: Option<u32>,
    #[serde(default)]
    pub sacked_out: Option<u32>,
    #[serde(default)]
    pub lost_out: Option<u32>,
    #[serde(default)]
    pub retrans_out: Option<u32>,
    #[serde(default)]
    pub in_flight: Option<u32>,
}

/// One change of a connection's congestion state, as the simulator hands it to
/// [`TraceWriter::row`] (borrowed: no row is built).
pub struct TraceFields<'a> {
    pub time_ns: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_ns: Option<u64>,
    pub rttvar_ns: u64,
    pub rto_ns: u64,
    pub ca_state: &'a dyn Debug,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub in_flight: u32,
    /// B/s (`u64::MAX`: unlimited); None: the connection does not pace.
    pub pacing_rate: Option<u64>,
    pub cc_mode: Option<&'a str>,
}

/// Streams `tcp_trace.csv`: the header, then a row per [`TraceWriter::row`] (formatted
/// directly: a run writes one after every ACK of every connection).
pub struct TraceWriter<W: Write> {
    w: W,
    /// With [`PACING_COLUMNS`].
    pacing: bool,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut w: W, pacing: bool) -> io::Result<TraceWriter<W>> {
        w.write_all(COLUMNS.join(",").as_bytes())?;
        if pacing {
            w.write_all(b",")?;
            w.write_all(PACING_COLUMNS.join(",").as_bytes())?;
        }
        w.write_all(b"\n")?;
        Ok(TraceWriter { w, pacing })
    }

    pub fn row(
        &mut self,
        host: &str,
        local: &dyn Display,
        remote: &dyn Display,
        r: &TraceFields,
    ) -> io::Result<()> {
        write!(
            self.w,
            "{},{host},{local},{remote},{},{},",
            r.time_ns, r.cwnd, r.ssthresh
        )?;
        if let Some(s) = r.srtt_ns {
            write!(self.w, "{s}")?;
        }
        write!(
            self.w,
            ",{},{},{:?},{},{},{},{},{}",
            r.rttvar_ns,
            r.rto_ns,
            r.ca_state,
            r.packets_out,
            r.sacked_out,
            r.lost_out,
            r.retrans_out,
            r.in_flight
        )?;
        if self.pacing {
            match r.pacing_rate {
                Some(u64::MAX) => write!(self.w, ",unlimited")?,
                Some(rate) => write!(self.w, ",{rate}")?,
                None => write!(self.w, ",")?,
            }
            write!(self.w, ",{}", r.cc_mode.unwrap_or(""))?;
        }
        writeln!(self.w)
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

/// Reads `tcp_trace.csv`.
pub fn read(path: &Path) -> Result<Vec<TraceRow>, FileError> {
    super::read_file(path)
}

/// Reads `tcp_trace.csv` in whichever form the run kept it (the CSV file at `path` or its
/// Parquet file, [`super::columnar`]); `None` when it kept neither.
pub fn read_either(path: &Path) -> Result<Option<Vec<TraceRow>>, FileError> {
    match super::columnar::open(path)? {
        Some(r) => super::read_from(r, &path.display().to_string()).map(Some),
        None => Ok(None),
    }
}
