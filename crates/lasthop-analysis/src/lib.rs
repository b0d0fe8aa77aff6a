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
pub mod files;
pub mod latency;
pub mod page;
pub mod ping;
pub mod report;
pub mod run;
pub mod seqspace;
mod split;
pub mod stats;
pub mod udp;

pub use capture::{
    parse_tcp, read_pcap, read_pcap_ip, read_pcapng, read_pcapng_ip, write_usec_copy, ReadSummary,
    TcpSeg,
};
pub use conn::{Analyzer, ConnStats, DataDir, DirStats, Drops, Options, RttStats};
pub use events::EventLog;
pub use latency::{CaptureLog, StreamStats};
pub use page::{format_page_table, PageSpec, PageStats};
pub use report::{
    csv_row, format_long, format_ping_table, format_table, format_udp_table, merge_sides,
    write_connections_csv, write_csv_to, CSV_COLUMNS, CSV_LEADING,
};
pub use run::{
    analyse_run, join_udp_events, AnalysisOptions, FlowId, LinkSample, RunSink, SampleKind,
};
#[doc(hidden)]
pub use split::analyze_bytes_in_chunks;
pub use udp::{UdpFlowStats, UDP_CSV_COLUMNS};

use lasthop_core::Time;
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
    /// A run file read back (`connections.csv`, ...).
    #[error(transparent)]
    File(#[from] files::FileError),
}

/// A capture's connections and what else reading it found.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub conns: Vec<ConnStats>,
    pub summary: ReadSummary,
    /// Datagrams of UDP flows (those carrying our record, see [`udp`]), in capture order; they
    /// count in `summary.other` (records that are not TCP).
    pub udp: Vec<udp::Datagram>,
}

/// Analyses a pcap file with default [`Options`].
pub fn analyze_pcap(path: impl AsRef<Path>) -> Result<Vec<ConnStats>, Error> {
    Ok(analyze_pcap_with(path, Options::default())?.conns)
}

/// Analyses a pcap file.
pub fn analyze_pcap_with(path: impl AsRef<Path>, opts: Options) -> Result<Analysis, Error> {
    analyze_file(path.as_ref(), opts, PARALLEL_BYTES)
}

/// [`analyze_pcap_with`], on two threads when the file has at least `parallel_from` bytes.
fn analyze_file(path: &Path, opts: Options, parallel_from: u64) -> Result<Analysis, Error> {
    let name = path.display().to_string();
    let open = || {
        std::fs::File::open(path).map_err(|e| Error::Io {
            path: name.clone(),
            error: e,
        })
    };
    let f = open()?;
    // A large capture is analysed by two threads, each analysing half of the connections (by
    // 4-tuple, see `conn::shard_of`); their results merge into what one thread gives. A pcap
    // file is cut into chunks (`split`), which the two threads parse and analyse by shard,
    // whichever is ready. Otherwise each thread reads the whole file itself and skips the
    // other shard's segments.
    let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let large = len.is_some_and(|l| l >= parallel_from);
    if !large || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return analyze_reader_with(f, &name, opts);
    }
    // Both read the same bytes, also of a capture still growing: its length when opened.
    let len = len.unwrap_or(0);
    // A pcap file in chunks (`split`): each record read and parsed once.
    if let Some(a) = split::analyze_split(&f, len, &name, opts)? {
        return Ok(a);
    }
    // Otherwise (pcapng, no chunk boundary found, a guessed one wrong) each thread reads the
    // whole file.
    let (mine, theirs) = std::thread::scope(|sc| {
        let other = sc.spawn(|| analyze_numbered(open()?.take(len), &name, opts, Some(true)));
        let mine = analyze_numbered(f.take(len), &name, opts, Some(false));
        let theirs = other
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (mine, theirs)
    });
    let (conns, summary, udp) = mine?;
    let (other_conns, _, _) = theirs?;
    Ok(Analysis {
        conns: conn::merge_numbered(vec![conns, other_conns]),
        summary,
        udp,
    })
}

/// Captures from this size on are analysed by two threads ([`analyze_pcap_with`]).
const PARALLEL_BYTES: u64 = 16 << 20;

/// Analyses a pcap stream with default [`Options`].
pub fn analyze_reader<R: Read>(reader: R) -> Result<Vec<ConnStats>, Error> {
    Ok(analyze_reader_with(reader, "<capture>", Options::default())?.conns)
}

/// Analyses a pcap stream; `source` names it in messages.
pub fn analyze_reader_with<R: Read>(
    reader: R,
    source: &str,
    opts: Options,
) -> Result<Analysis, Error> {
    analyze_reader_logged(reader, source, opts, None)
}

/// [`analyze_reader_with`], keeping every TCP segment in `log` too when given (for the
/// thin-stream analysis, [`latency::streams`]) in the same pass.
pub fn analyze_reader_logged<R: Read>(
    reader: R,
    source: &str,
    opts: Options,
    log: Option<&mut CaptureLog>,
) -> Result<Analysis, Error> {
    let (conns, summary, udp) = analyze_logged_numbered(reader, source, opts, log, None)?;
    Ok(Analysis {
        conns: conn::merge_numbered(vec![conns]),
        summary,
        udp,
    })
}

/// What [`analyze_logged_numbered`] found: the connections with the number of the record that
/// opened each, the summary, the datagrams of UDP flows.
type Numbered = (Vec<(u64, ConnStats)>, ReadSummary, Vec<udp::Datagram>);

/// [`analyze_logged_numbered`] without a log.
fn analyze_numbered<R: Read>(
    reader: R,
    source: &str,
    opts: Options,
    shard: Option<bool>,
) -> Result<Numbered, Error> {
    analyze_logged_numbered(reader, source, opts, None, shard)
}

/// [`analyze_reader_logged`]'s work. With `shard`, only the connections of that shard
/// (`conn::shard_of`) are analysed, and the datagrams of UDP flows are kept only for shard
/// `false`.
fn analyze_logged_numbered<R: Read>(
    mut reader: R,
    source: &str,
    opts: Options,
    mut log: Option<&mut CaptureLog>,
    shard: Option<bool>,
) -> Result<Numbered, Error> {
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
    let mut dgs = vec![];
    let chained = std::io::Cursor::new(magic).chain(reader);
    // TCP segments to the analyser, datagrams of UDP flows kept (records that are not TCP).
    // Records are numbered from 1 (the order of the connections of two shards).
    let mut n = 0u64;
    // One segment, filled in place for every record (see `capture::parse_tcp_into`).
    let mut seg = Box::new(TcpSeg::EMPTY);
    let mut each = |t: Time, ip: &[u8], wire: u32| {
        n += 1;
        // A segment of the other shard's connections in the common form (IPv4 and TCP without
        // options, not a fragment, which `parse_tcp_into` always takes) is skipped unparsed.
        if let (Some(want), Some(h)) = (shard, ip.get(..40)) {
            if capture::plain_ipv4_tcp(h) {
                let b32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
                let b16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
                if conn::shard_mix(b32(12), b32(16), b16(20), b16(22)) != want {
                    return true;
                }
            }
        }
        match capture::parse_tcp_into(t, ip, Some(wire), &mut seg) {
            true => {
                if shard.is_none_or(|s| conn::shard_of(&seg.flow) == s) {
                    an.segment_nth(&seg, n);
                    if let Some(l) = log.as_deref_mut() {
                        l.push(&seg, latency::ip_datagram_len(ip, wire));
                    }
                }
                true
            }
            false => {
                if shard != Some(true) {
                    dgs.extend(udp::parse_datagram(t, ip, Some(wire)));
                }
                false
            }
        }
    };
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let summary = read_pcapng_ip(chained, source, &mut each)?;
        return Ok((an.finish_numbered(), summary, dgs));
    }
    let known = [0xa1b2_c3d4u32, 0xa1b2_3c4d];
    let m = u32::from_be_bytes(magic);
    if !known.contains(&m) && !known.contains(&m.swap_bytes()) {
        return Err(Error::NotPcap {
            path: source.to_string(),
            detail: format!("unknown magic number {m:#010x}"),
        });
    }
    let summary = read_pcap_ip(chained, source, &mut each)?;
    Ok((an.finish_numbered(), summary, dgs))
}

/// A host's capture for [`analyse_run`]: a file, or bytes kept in memory.
pub enum Capture<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

/// What a run's captures say: one row per TCP connection, one per UDP flow, one per page.
#[derive(Clone, Debug, Default)]
pub struct RunAnalysis {
    pub conns: Vec<ConnStats>,
    pub udp: Vec<UdpFlowStats>,
    /// The pages of the run's `http` flows (empty when none was given).
    pub pages: Vec<PageStats>,
    /// The TCP streams as seed 003's analyseTCP saw them (empty unless asked for,
    /// [`AnalysisOptions::streams`]).
    pub streams: Vec<StreamStats>,
    /// What the event log says of the router queue and the serializer (empty unless asked
    /// for, [`AnalysisOptions::link_samples`]).
    pub link_samples: Vec<LinkSample>,
    /// The scenario's flows ([`AnalysisOptions::flows`]), which name the tables' rows.
    pub flows: Vec<run::FlowId>,
    /// The latency probes (`ping` flows), from the client hosts' captures.
    pub pings: Vec<ping::PingStats>,
}

/// Writes the tables of an analysed run into `dir`: `connections.csv`, and `udp_flows.csv` and
/// `udp_packets.csv` when the run has UDP flows, `ping_flows.csv` and `pings.csv` when it has
/// latency probes, `pages.csv` and `page_objects.csv` when it has pages, `streams.csv` and
/// `latency.csv` when it has streams (nothing of a kind it has none of). Every file is written atomically.
pub fn write_run_files(dir: &Path, run: &RunAnalysis) -> Result<(), Error> {
    write_run_files_with(dir, run, true)
}

/// [`write_run_files`]; with `sync` false the files are not synced one by one (the caller
/// syncs the directory once: [`lasthop_core::output::sync_dir`]).
pub fn write_run_files_with(dir: &Path, run: &RunAnalysis, sync: bool) -> Result<(), Error> {
    use files::{
        connections, latency, page_objects, pages, pings, streams, udp_flows, udp_packets,
    };
    let f = lasthop_core::layout::RunFiles::new(dir);
    let mut out: Vec<(std::path::PathBuf, String)> = vec![(
        f.connections_csv(),
        files::to_text(
            &connections::COLUMNS,
            run.conns.iter().map(|c| {
                connections::ConnRow::of(c)
                    .in_flow(run::FlowId::find(&run.flows, c.client, c.server))
            }),
        ),
    )];
    if !run.udp.is_empty() {
        out.push((f.udp_flows_csv(), udp_flows::text(&run.udp, &run.flows)));
        out.push((f.udp_packets_csv(), udp_packets::text(&run.udp)));
    }
    if !run.streams.is_empty() {
        out.push((f.streams_csv(), streams::text(&run.streams, &run.flows)));
        out.push((f.latency_csv(), latency::text(&run.streams, &run.flows)));
    }
    if !run.pings.is_empty() {
        out.push((
            f.ping_flows_csv(),
            pings::flows_text(&run.pings, &run.flows),
        ));
        out.push((f.pings_csv(), pings::text(&run.pings, &run.flows)));
    }
    if !run.pages.is_empty() {
        out.push((f.pages_csv(), pages::text(&run.pages, &run.flows)));
        out.push((
            f.page_objects_csv(),
            page_objects::text(&run.pages, &run.flows),
        ));
    }
    for (path, text) in out {
        let io = |error| Error::Io {
            path: path.display().to_string(),
            error,
        };
        let mut file = lasthop_core::output::AtomicFile::create(&path).map_err(io)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)?;
        if sync {
            file.commit().map_err(io)?;
        } else {
            file.commit_unsynced().map_err(io)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::output::{PcapSink, DEFAULT_SNAPLEN};
    use lasthop_core::Packet;

    /// An IPv4 TCP header without options (and `payload` bytes counted in its length field).
    fn tcp(c: u8, sp: u16, seq: u32, ack: u32, flags: u8, payload: u16, to_server: bool) -> Packet {
        let (a, b) = ([10, 0, 0, c], [10, 1, 0, 1]);
        let (src, dst, s, d) = if to_server {
            (a, b, sp, 80)
        } else {
            (b, a, 80, sp)
        };
        let mut p = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0];
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p.extend_from_slice(&s.to_be_bytes());
        p.extend_from_slice(&d.to_be_bytes());
        p.extend_from_slice(&seq.to_be_bytes());
        p.extend_from_slice(&ack.to_be_bytes());
        p.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        let total = 40 + payload;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        Packet::with_wire_len(p, u32::from(total))
    }

    /// The two-thread analysis of a file gives what one thread gives: the same connections, in
    /// the same order with the same numbers, and the same summary, with connections of both
    /// shards interleaved, a 4-tuple reused by a new connection, a connection seen from its
    /// SYN-ACK and retransmissions.
    #[test]
    fn two_threads_give_what_one_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.pcap");
        let f = std::fs::File::create(&path).unwrap();
        let mut sink = PcapSink::new(f, DEFAULT_SNAPLEN).unwrap();
        let mut t = 0u64;
        let mut put = |p: Packet| {
            t += 1000;
            sink.write(Time(t), &p).unwrap();
        };
        let (syn, synack, ack) = (0x02, 0x12, 0x10);
        // 8 connections from hosts 10.0.0.1-8, port 5000 + k, interleaved segment by segment.
        let ports: Vec<(u8, u16)> = (1..=8).map(|k| (k, 5000 + u16::from(k))).collect();
        for &(c, sp) in &ports {
            put(tcp(c, sp, 100, 0, syn, 0, true));
        }
        for &(c, sp) in &ports {
            put(tcp(c, sp, 900, 101, synack, 0, false));
        }
        for round in 0..20u32 {
            for &(c, sp) in &ports {
                let seq = 101 + round * 500;
                put(tcp(c, sp, seq, 901, ack, 500, true));
                // every 7th segment of host 3 retransmitted
                if c == 3 && round % 7 == 0 {
                    put(tcp(c, sp, seq, 901, ack, 500, true));
                }
                put(tcp(c, sp, 901, seq + 500, ack, 0, false));
            }
        }
        // Host 1's 4-tuple reused by a new connection (another ISN), and a connection first
        // seen at its SYN-ACK.
        put(tcp(1, 5001, 7000, 0, syn, 0, true));
        put(tcp(9, 6000, 300, 51, synack, 0, false));
        put(tcp(1, 5001, 7001, 0, ack, 100, true));
        put(tcp(9, 6000, 50, 301, ack, 10, true));
        drop(sink);

        let one = analyze_reader_with(
            std::fs::File::open(&path).unwrap(),
            &path.display().to_string(),
            Options::default(),
        )
        .unwrap();
        let two = analyze_file(&path, Options::default(), 0).unwrap();
        // 8 + the reused 4-tuple + the one seen from its SYN-ACK
        assert_eq!(one.conns.len(), 10);
        // both shards are used
        let shards: Vec<bool> = one
            .conns
            .iter()
            .map(|c| conn::shard_of(&c.flow()))
            .collect();
        assert!(shards.contains(&true) && shards.contains(&false));
        assert_eq!(two.conns, one.conns);
        assert_eq!(two.summary, one.summary);
        let ids: Vec<usize> = two.conns.iter().map(|c| c.id).collect();
        assert_eq!(ids, (1..=10).collect::<Vec<_>>());
        // host 3: 20 data segments and 3 retransmitted (rounds 0, 7, 14) of 500 bytes each
        let h3 = &two.conns[2];
        assert_eq!((h3.c2s.data_pkts, h3.c2s.rexmt_pkts), (23, 3));
        assert_eq!(h3.c2s.rexmt_bytes, 1500);
    }
}
