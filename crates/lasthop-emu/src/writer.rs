//! The output writer: captures and the event log are written on their own thread, so the
//! real-time loop never waits for the disk (page-cache write-back can stall a `write` for
//! milliseconds). The loop queues records and hands them over in batches (once per loop
//! iteration, [`Writer::send_batch`], or every [`BATCH`] records): one channel message and one
//! wake-up of the writer per packet cost more than the packet's own processing at Gbit/s.
//! [`Writer::finish`] drains everything and commits every file atomically. The first write
//! error (a full disk) is kept for the loop, which stops the run at once ([`Writer::failed`]);
//! the message names the output file, not its temporary file.

use lasthop_core::output::{AtomicFile, PcapSink};
use lasthop_core::{Packet, Time};
use lasthop_link::{Event, EventCsv};
use std::cell::RefCell;
use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

enum Msg {
    Pcap(usize, Time, Packet),
    Event(Event, Option<Time>),
}

struct Sinks {
    pcaps: Vec<(PcapSink<AtomicFile>, PathBuf)>,
    events: Option<(EventCsv<AtomicFile>, PathBuf)>,
}

/// Records queued before a batch is handed over regardless of the loop.
pub const BATCH: usize = 256;

pub struct Writer {
    tx: Option<Sender<Vec<Msg>>>,
    /// Records not yet handed over (the loop is single-threaded; `RefCell` keeps `&self`).
    batch: RefCell<Vec<Msg>>,
    handle: Option<JoinHandle<io::Result<Sinks>>>,
    /// The writer thread's first error, as soon as it happens.
    failed: Arc<OnceLock<String>>,
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
        let (tx, rx) = channel::<Vec<Msg>>();
        let failed = Arc::new(OnceLock::new());
        let failed_in_thread = failed.clone();
        let handle = std::thread::Builder::new()
            .name("lasthop-writer".into())
            .spawn(move || {
                let mut err: Option<io::Error> = None;
                for m in rx.into_iter().flatten() {
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
                        // Writes to an output name it (`AtomicFile`).
                        let _ = failed_in_thread.set(e.to_string());
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
            batch: RefCell::new(Vec::with_capacity(BATCH)),
            handle: Some(handle),
            failed,
        })
    }

    /// The first error writing an output, if one happened (an atomic load: the loop asks every
    /// round).
    #[inline]
    pub fn failed(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// Records `p` in host `host`'s capture at `t`.
    pub fn pcap(&self, host: usize, t: Time, p: Packet) {
        self.queue(Msg::Pcap(host, t, p));
    }

    pub fn event(&self, e: Event, actual: Option<Time>) {
        self.queue(Msg::Event(e, actual));
    }

    fn queue(&self, m: Msg) {
        let full = {
            let mut b = self.batch.borrow_mut();
            b.push(m);
            b.len() >= BATCH
        };
        if full {
            self.send_batch();
        }
    }

    /// Hands the queued records to the writer thread.
    pub fn send_batch(&self) {
        let mut b = self.batch.borrow_mut();
        // Called every round of the loop, also while it spins before a deadline: an empty batch
        // must cost nothing (no fresh buffer of BATCH records each time).
        if b.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut *b, Vec::with_capacity(BATCH));
        if let Some(tx) = &self.tx {
            let _ = tx.send(batch);
        }
    }

    /// Writes everything still queued and commits the files.
    pub fn finish(mut self) -> io::Result<()> {
        self.send_batch();
        drop(self.tx.take());
        let sinks = self
            .handle
            .take()
            .expect("finished once")
            .join()
            .map_err(|_| io::Error::other("the output writer panicked"))??;
        // A commit's error names its file.
        for (s, _) in sinks.pcaps {
            s.into_inner().commit()?;
        }
        if let Some((csv, _)) = sinks.events {
            csv.into_inner().commit()?;
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
