//! tcptrace-class per-connection TCP statistics from pcap captures (ours or anyone's), joined
//! with the link's event log for what captures cannot tell: drop causes and spurious
//! retransmissions. Definitions are in `docs/analysis.md`.
//!
//! ```no_run
//! use lasthop_analysis as la;
//! let mut conns = la::analyze_pcap("server.pcap")?;
//! la::EventLog::load("events.csv")?.join(&mut conns);
//! la::write_connections_csv("connections.csv", &conns)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod capture;
pub mod conn;
pub mod events;
pub mod report;
pub mod seqspace;

pub use capture::{parse_tcp, read_pcap, read_pcapng, write_usec_copy, ReadSummary, TcpSeg};
pub use conn::{Analyzer, ConnStats, DataDir, DirStats, Drops, Options, RttStats};
pub use events::EventLog;
pub use report::{
    csv_row, format_long, format_table, merge_sides, write_connections_csv, write_csv_to,
    CSV_COLUMNS, CSV_LEADING,
};

use std::io::Read;
use std::path::Path;

/// Everything that can go wrong reading inputs. Messages name the file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: not a pcap capture ({detail})")]
    NotPcap { path: String, detail: String },
    #[error("{path}: unsupported link type {linktype} (supported: 0 NULL, 1 EN10MB, 101 RAW, 108 LOOP, 113 LINUX_SLL, 228 IPV4, 229 IPV6, 276 LINUX_SLL2)")]
    UnsupportedLinkType { path: String, linktype: u32 },
    #[error("{path}:{line}: {msg}")]
    Events {
        path: String,
        line: u64,
        msg: String,
    },
}

/// A capture's connections and what else reading it found.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub conns: Vec<ConnStats>,
    pub summary: ReadSummary,
}

/// Analyses a pcap file with default [`Options`].
pub fn analyze_pcap(path: impl AsRef<Path>) -> Result<Vec<ConnStats>, Error> {
    Ok(analyze_pcap_with(path, Options::default())?.conns)
}

/// Analyses a pcap file.
pub fn analyze_pcap_with(path: impl AsRef<Path>, opts: Options) -> Result<Analysis, Error> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| Error::Io {
        path: name.clone(),
        error: e,
    })?;
    analyze_reader_with(f, &name, opts)
}

/// Analyses a pcap stream with default [`Options`].
pub fn analyze_reader<R: Read>(reader: R) -> Result<Vec<ConnStats>, Error> {
    Ok(analyze_reader_with(reader, "<capture>", Options::default())?.conns)
}

/// Analyses a pcap stream; `source` names it in messages.
pub fn analyze_reader_with<R: Read>(
    mut reader: R,
    source: &str,
    opts: Options,
) -> Result<Analysis, Error> {
    // Peek at the magic number: pcap or pcapng, and a clear message for anything else.
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match reader.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::Io {
                    path: source.to_string(),
                    error: e,
                })
            }
        }
    }
    if got < 4 {
        return Err(Error::NotPcap {
            path: source.to_string(),
            detail: format!("{got} bytes, too short for a pcap header"),
        });
    }
    let mut an = Analyzer::new(opts);
    let chained = std::io::Cursor::new(magic).chain(reader);
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let summary = read_pcapng(chained, source, |seg| an.segment(&seg))?;
        return Ok(Analysis {
            conns: an.finish(),
            summary,
        });
    }
    let known = [0xa1b2_c3d4u32, 0xa1b2_3c4d];
    let m = u32::from_be_bytes(magic);
    if !known.contains(&m) && !known.contains(&m.swap_bytes()) {
        return Err(Error::NotPcap {
            path: source.to_string(),
            detail: format!("unknown magic number {m:#010x}"),
        });
    }
    let summary = read_pcap(chained, source, |seg| an.segment(&seg))?;
    Ok(Analysis {
        conns: an.finish(),
        summary,
    })
}

/// A host's capture for [`run_connections`]: a file, or bytes kept in memory.
pub enum Capture<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

/// One row per connection of a run that captured at every host (the simulator and the
/// emulator both do): each capture is analysed, a connection seen at its client host (which
/// gives the elapsed time, as seed 002 defines it) is merged with its view at the server host
/// (counts come from the data sender's side, see [`merge_sides`]), and the event log, when
/// given, is joined for drops by cause and spurious retransmissions.
pub fn run_connections(
    hosts: &[(std::net::IpAddr, Capture<'_>)],
    events: Option<&Path>,
) -> Result<Vec<ConnStats>, Error> {
    let (mut client_side, mut server_side) = (vec![], vec![]);
    for (addr, capture) in hosts {
        let conns = match capture {
            Capture::File(p) => analyze_pcap(p)?,
            Capture::Bytes(b) => analyze_reader_with(*b, "<capture>", Options::default())?.conns,
        };
        for c in conns {
            if c.client.ip() == *addr {
                client_side.push(c);
            } else if c.server.ip() == *addr {
                server_side.push(c);
            }
        }
    }
    let mut conns = merge_sides(&client_side, &server_side);
    if let Some(ev) = events {
        EventLog::load(ev)?.join(&mut conns);
    }
    Ok(conns)
}
