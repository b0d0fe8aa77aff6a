//! The report's view of a run's `events.csv`: the columns its plots use, read with
//! `lasthop-link`'s one typed reader.

use lasthop_analysis::files::FileError;
use std::path::Path;

/// The kinds of link event (`event` column): lasthop-link's own.
pub use lasthop_link::event::RowKind as Ev;

/// One row of `events.csv` (the columns the plots need).
#[derive(Clone, Debug)]
pub struct EventRow {
    pub time_ns: u64,
    pub event: Ev,
    /// 0 = down, 1 = up, 2 = none (state rows).
    pub dir: u8,
    pub packet: u64,
    pub flow: String,
    pub tcp_seq: Option<u32>,
    pub tcp_ack: Option<u32>,
    pub tcp_len: Option<u32>,
    pub bytes: u32,
    pub queue_pkts: Option<u32>,
    pub cause: String,
    pub state: String,
}

/// Reads `events.csv`, or the run's `events.parquet` in its place
/// (`lasthop_analysis::files::columnar`).
pub fn read_events(path: &Path) -> Result<Vec<EventRow>, FileError> {
    let p = path.display().to_string();
    let Some(f) = lasthop_analysis::files::columnar::open(path)? else {
        return Err(FileError::Io {
            path: p,
            error: std::io::ErrorKind::NotFound.into(),
        });
    };
    let mut out = vec![];
    for row in lasthop_link::event::read_events(f) {
        let r = row.map_err(|e| FileError::Parse {
            path: p.clone(),
            line: e.line as usize,
            msg: e.message,
        })?;
        out.push(EventRow {
            time_ns: r.time_ns,
            event: r.event,
            dir: r.dir.map_or(2, |d| d.index() as u8),
            packet: r.packet.unwrap_or(0),
            flow: r.flow,
            tcp_seq: r.tcp_seq,
            tcp_ack: r.tcp_ack,
            tcp_len: r.tcp_len,
            bytes: r.bytes.unwrap_or(0),
            queue_pkts: r.queue_pkts,
            cause: r.cause.map(|c| c.name().to_string()).unwrap_or_default(),
            state: r.state.unwrap_or_default(),
        });
    }
    Ok(out)
}
