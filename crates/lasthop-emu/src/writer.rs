//! The output writer: captures and the event log are written on their own thread, so the
//! real-time loop never waits for the disk (page-cache write-back can stall a `write` for
//! milliseconds). The loop sends records through a channel; [`Writer::finish`] drains it and
//! commits every file atomically.

use lasthop_core::output::{AtomicFile, PcapSink};
use lasthop_core::{Packet, Time};
use lasthop_link::{Event, EventCsv};
use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

enum Msg {
    Pcap(usize, Time, Packet),
    Event(Event, Option<Time>),
}

struct Sinks {
    pcaps: Vec<(PcapSink<AtomicFile>, PathBuf)>,
    events: Option<(EventCsv<AtomicFile>, PathBuf)>,
}

pub struct Writer {
    tx: Option<Sender<Msg>>,
    handle: Option<JoinHandle<io::Result<Sinks>>>,
}

impl Writer {
    /// Creates (as temporary files) one capture per path in `pcaps` and, with `events`, the
    /// event log.
    pub fn new(pcaps: &[PathBuf], snaplen: u32, events: Option<PathBuf>) -> io::Result<Writer> {
        let mut sinks = Sinks {
            pcaps: vec![],
            events: None,
        };
        for p in pcaps {
            let f = AtomicFile::create(p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
            sinks.pcaps.push((PcapSink::new(f, snaplen)?, p.clone()));
        }
        if let Some(p) = events {
            sinks.events = Some((EventCsv::new(AtomicFile::create(&p)?)?, p));
        }
        let (tx, rx) = channel::<Msg>();
        let handle = std::thread::Builder::new()
            .name("lasthop-writer".into())
            .spawn(move || {
                let mut err: Option<io::Error> = None;
                for m in rx {
                    if err.is_some() {
                        continue;
                    }
                    let r = match m {
                        Msg::Pcap(i, t, p) => sinks.pcaps[i].0.write(t, &p),
                        Msg::Event(e, actual) => match &mut sinks.events {
                            Some((csv, _)) => csv.write(&e, actual),
                            None => Ok(()),
                        },
                    };
                    if let Err(e) = r {
                        err = Some(e);
                    }
                }
                match err {
                    Some(e) => Err(e),
                    None => Ok(sinks),
                }
            })?;
        Ok(Writer {
            tx: Some(tx),
            handle: Some(handle),
        })
    }

    /// Records `p` in host `host`'s capture at `t`.
    pub fn pcap(&self, host: usize, t: Time, p: Packet) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Msg::Pcap(host, t, p));
        }
    }

    pub fn event(&self, e: Event, actual: Option<Time>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Msg::Event(e, actual));
        }
    }

    /// Writes everything still queued and commits the files.
    pub fn finish(mut self) -> io::Result<()> {
        drop(self.tx.take());
        let sinks = self
            .handle
            .take()
            .expect("finished once")
            .join()
            .map_err(|_| io::Error::other("the output writer panicked"))??;
        for (s, path) in sinks.pcaps {
            s.into_inner()
                .commit()
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        }
        if let Some((csv, path)) = sinks.events {
            csv.into_inner()
                .commit()
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }
}

impl Drop for Writer {
    /// Without [`Writer::finish`] (an error ended the run) nothing is committed: the temporary
    /// files are removed.
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet() -> Packet {
        let mut p = vec![0x45, 0, 0, 20, 0, 1, 0, 0, 64, 17, 0, 0];
        p.extend_from_slice(&[198, 18, 0, 1, 198, 19, 0, 1]);
        Packet::from_bytes(p)
    }

    #[test]
    fn commits_on_finish_only() {
        let dir = tempfile::tempdir().unwrap();
        let pcap = dir.path().join("a.pcap");
        let ev = dir.path().join("events.csv");
        let w = Writer::new(std::slice::from_ref(&pcap), 65_535, Some(ev.clone())).unwrap();
        w.pcap(0, Time(5), packet());
        assert!(!pcap.exists());
        w.finish().unwrap();
        // 24-byte file header, 16-byte record header, 20-byte packet.
        assert_eq!(std::fs::metadata(&pcap).unwrap().len(), 60);
        assert!(std::fs::read_to_string(&ev)
            .unwrap()
            .starts_with("time_ns,"));

        let dir = tempfile::tempdir().unwrap();
        let pcap = dir.path().join("b.pcap");
        let w = Writer::new(std::slice::from_ref(&pcap), 65_535, None).unwrap();
        w.pcap(0, Time(5), packet());
        drop(w);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
