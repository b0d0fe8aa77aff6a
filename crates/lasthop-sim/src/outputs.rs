//! What a simulation run writes: a pcap per host, `events.csv`, `tcp_trace.csv`, and (after
//! the run, from the captures and the event log) `connections.csv`. Every file is written
//! atomically: it appears complete or not at all.

use crate::Error;
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
    trace: Option<AtomicFile>,
    /// `tcp_trace.csv` has the columns `pacing_rate_Bps` and `cc_mode` (some host may pace).
    trace_pacing: bool,
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
    /// `pacing`: a host may pace, so `tcp_trace.csv` gets the pacing rate and the congestion
    /// control's state as two more columns.
    pub fn new(
        opts: &OutputOptions,
        host_names: &[String],
        pacing: bool,
    ) -> Result<Outputs, Error> {
        let mut pcaps = Vec::new();
        let mut events = None;
        let mut trace = None;
        if let Some(dir) = &opts.dir {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
            let path = dir.join("events.csv");
            let f = AtomicFile::create(&path).map_err(io_err(&path))?;
            events = Some(EventCsv::new(f).map_err(io_err(&path))?);
            let path = dir.join("tcp_trace.csv");
            let mut f = AtomicFile::create(&path).map_err(io_err(&path))?;
            f.write_all(
                b"time_ns,host,local,remote,cwnd_segs,ssthresh_segs,srtt_ns,rttvar_ns,rto_ns,ca_state,packets_out,sacked_out,lost_out,retrans_out,in_flight",
            )
            .and_then(|()| f.write_all(if pacing { b",pacing_rate_Bps,cc_mode\n" } else { b"\n" }))
            .map_err(io_err(&path))?;
            trace = Some(f);
        }
        for name in host_names {
            let sink = match (&opts.dir, opts.capture) {
                (_, false) => None,
                (None, true) => Some(Sink::Mem(Vec::new())),
                (Some(dir), true) => {
                    let path = dir.join(format!("{name}.pcap"));
                    Some(Sink::File(
                        AtomicFile::create(&path).map_err(io_err(&path))?,
                    ))
                }
            };
            pcaps.push(match sink {
                Some(s) => Some(PcapSink::new(s, DEFAULT_SNAPLEN).map_err(|e| Error::Io {
                    path: format!("{name}.pcap"),
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
            trace_pacing: pacing,
            host_names: host_names.to_vec(),
        })
    }

    /// Records a packet sent or received by host `h` at `at`.
    pub fn capture(&mut self, h: usize, at: Time, p: &Packet) -> Result<(), Error> {
        if let Some(Some(sink)) = self.pcaps.get_mut(h) {
            sink.write(at, p).map_err(|e| Error::Io {
                path: format!("{}.pcap", self.host_names[h]),
                source: e,
            })?;
        }
        Ok(())
    }

    pub fn events(&mut self, events: &[Event]) -> Result<(), Error> {
        if let Some(csv) = &mut self.events {
            for e in events {
                csv.write(e, None).map_err(|e| Error::Io {
                    path: "events.csv".into(),
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
                write!(
                    f,
                    "{},{name},{},{},{},{},{},{},{},{:?},{},{},{},{},{}",
                    r.time.as_nanos(),
                    key.0,
                    key.1,
                    r.cwnd,
                    r.ssthresh,
                    r.srtt.map(|d| d.as_nanos().to_string()).unwrap_or_default(),
                    r.rttvar.as_nanos(),
                    r.rto.as_nanos(),
                    r.ca_state,
                    r.packets_out,
                    r.sacked_out,
                    r.lost_out,
                    r.retrans_out,
                    r.in_flight()
                )
                .and_then(|()| {
                    if !self.trace_pacing {
                        return writeln!(f);
                    }
                    match r.pacing_rate {
                        Some(u64::MAX) => write!(f, ",unlimited"),
                        Some(rate) => write!(f, ",{rate}"),
                        None => write!(f, ","),
                    }?;
                    writeln!(f, ",{}", r.cc_mode.unwrap_or(""))
                })
                .map_err(|e| Error::Io {
                    path: "tcp_trace.csv".into(),
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
            let path = format!("{}.pcap", self.host_names[i]);
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
                path: "events.csv".into(),
                source: e,
            })?;
        }
        if let Some(f) = self.trace {
            f.commit().map_err(|e| Error::Io {
                path: "tcp_trace.csv".into(),
                source: e,
            })?;
        }
        Ok(mem)
    }
}
