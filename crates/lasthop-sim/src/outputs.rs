//! What a simulation run writes: a pcap per host, `events.csv`, `tcp_trace.csv`, and (after
//! the run, from the captures and the event log) `connections.csv`. Every file is written
//! atomically: it appears complete or not at all.

use crate::Error;
use lasthop_analysis::files::tcp_trace::{TraceFields, TraceWriter};
use lasthop_core::layout::{self, RunFiles};
use lasthop_core::output::{AtomicFile, PcapSink, DEFAULT_SNAPLEN};
use lasthop_core::{Packet, Time};
use lasthop_link::{Event, EventCsv};
use lasthop_tcp::Host as TcpHost;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A capture kept in memory (no output directory) or going to a file.
pub enum Sink {
    Mem(Vec<u8>),
    File(AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Mem(v) => v.write(b),
            Sink::File(f) => f.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Mem(_) => Ok(()),
            Sink::File(f) => f.flush(),
        }
    }
}

pub struct Outputs {
    pub dir: Option<PathBuf>,
    /// One capture per host (in scenario order), when capturing.
    pcaps: Vec<Option<PcapSink<Sink>>>,
    events: Option<EventCsv<AtomicFile>>,
    trace: Option<TraceWriter<AtomicFile>>,
    host_names: Vec<String>,
}

/// Which outputs to produce.
#[derive(Clone, Debug, Default)]
pub struct OutputOptions {
    /// Write files here; without it, captures stay in memory for the analysis only.
    pub dir: Option<PathBuf>,
    /// Capture packets at the hosts (needed for `connections.csv`).
    pub capture: bool,
}

fn io_err(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

impl Outputs {
    pub fn new(opts: &OutputOptions, host_names: &[String]) -> Result<Outputs, Error> {
        let mut pcaps = Vec::new();
        let mut events = None;
        let mut trace = None;
        if let Some(dir) = &opts.dir {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
            let files = RunFiles::new(dir);
            let path = files.events_csv();
            let f = AtomicFile::create(&path).map_err(io_err(&path))?;
            events = Some(EventCsv::new(f).map_err(io_err(&path))?);
            let path = files.tcp_trace_csv();
            let f = AtomicFile::create(&path).map_err(io_err(&path))?;
            trace = Some(TraceWriter::new(f).map_err(io_err(&path))?);
        }
        for name in host_names {
            let sink = match (&opts.dir, opts.capture) {
                (_, false) => None,
                (None, true) => Some(Sink::Mem(Vec::new())),
                (Some(dir), true) => {
                    let path = RunFiles::new(dir).pcap(name);
                    Some(Sink::File(
                        AtomicFile::create(&path).map_err(io_err(&path))?,
                    ))
                }
            };
            pcaps.push(match sink {
                Some(s) => Some(PcapSink::new(s, DEFAULT_SNAPLEN).map_err(|e| Error::Io {
                    path: layout::pcap_name(name),
                    source: e,
                })?),
                None => None,
            });
        }
        Ok(Outputs {
            dir: opts.dir.clone(),
            pcaps,
            events,
            trace,
            host_names: host_names.to_vec(),
        })
    }

    /// Records a packet sent or received by host `h` at `at`.
    pub fn capture(&mut self, h: usize, at: Time, p: &Packet) -> Result<(), Error> {
        if let Some(Some(sink)) = self.pcaps.get_mut(h) {
            sink.write(at, p).map_err(|e| Error::Io {
                path: layout::pcap_name(&self.host_names[h]),
                source: e,
            })?;
        }
        Ok(())
    }

    pub fn events(&mut self, events: &[Event]) -> Result<(), Error> {
        if let Some(csv) = &mut self.events {
            for e in events {
                csv.write(e, None).map_err(|e| Error::Io {
                    path: layout::EVENTS_CSV.into(),
                    source: e,
                })?;
            }
        }
        Ok(())
    }

    /// Whether `tcp_trace.csv` is written.
    pub fn traces(&self) -> bool {
        self.trace.is_some()
    }

    /// Appends the congestion-state changes of host `h`'s connections to `tcp_trace.csv`.
    pub fn trace(&mut self, h: usize, tcp: &mut TcpHost) -> Result<(), Error> {
        let Some(f) = &mut self.trace else {
            return Ok(());
        };
        let name = &self.host_names[h];
        for (key, conn) in tcp.conns_mut() {
            for r in conn.drain_trace() {
                let row = TraceFields {
                    time_ns: r.time.as_nanos(),
                    cwnd: r.cwnd,
                    ssthresh: r.ssthresh,
                    srtt_ns: r.srtt.map(|d| d.as_nanos()),
                    rttvar_ns: r.rttvar.as_nanos(),
                    rto_ns: r.rto.as_nanos(),
                    ca_state: &r.ca_state,
                    packets_out: r.packets_out,
                    sacked_out: r.sacked_out,
                    lost_out: r.lost_out,
                    retrans_out: r.retrans_out,
                    in_flight: r.in_flight(),
                };
                f.row(name, &key.0, &key.1, &row).map_err(|e| Error::Io {
                    path: layout::TCP_TRACE_CSV.into(),
                    source: e,
                })?;
            }
        }
        Ok(())
    }

    /// Commits every file and returns the captures that stayed in memory, per host.
    pub fn finish(self) -> Result<Vec<Option<Vec<u8>>>, Error> {
        let mut mem = Vec::new();
        for (i, p) in self.pcaps.into_iter().enumerate() {
            let path = layout::pcap_name(&self.host_names[i]);
            match p.map(PcapSink::into_inner) {
                Some(Sink::File(f)) => {
                    f.commit().map_err(|e| Error::Io { path, source: e })?;
                    mem.push(None);
                }
                Some(Sink::Mem(v)) => mem.push(Some(v)),
                None => mem.push(None),
            }
        }
        if let Some(csv) = self.events {
            csv.into_inner().commit().map_err(|e| Error::Io {
                path: layout::EVENTS_CSV.into(),
                source: e,
            })?;
        }
        if let Some(f) = self.trace {
            f.into_inner().commit().map_err(|e| Error::Io {
                path: layout::TCP_TRACE_CSV.into(),
                source: e,
            })?;
        }
        Ok(mem)
    }
}
