//! The real workload programs the emulator starts inside the host namespaces, one module per
//! application (`lasthop app bulk-send` / `bulk-recv`, `cbr-send` / `cbr-recv`, `http-server` /
//! `http-client`, `repeat-send` / `repeat-recv`, `thin-send`, `ping-send` / `ping-recv`); their command lines come from `lasthop_apps::AppParams::programs`.
//!
//! Each logs application-level timestamps as CSV (`time_ns,event,bytes`), with times relative to
//! `--epoch` (a `CLOCK_MONOTONIC` reading: the emulator passes its run start, so the log shares
//! the time base of the captures and the event log). Events: `listen`, `connect`, `connected`,
//! `accept`, `first_byte`, `last_byte`, `eof`, `close`, `error`. The HTTP programs' logs have two
//! more columns, `object,port` (`http.rs`).
//!
//! The payload is a fixed pattern (byte i is `i % 251`); the bulk receiver checks it, so a
//! transfer is known to have arrived intact.

use crate::sys;
use anyhow::{bail, Context, Result};
use lasthop_core::output::AtomicFile;
use lasthop_scenario::SocketOptions;
use std::net::{SocketAddr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Options shared by both programs.
#[derive(Debug, Clone, Default)]
pub struct AppCommon {
    pub socket: SocketOptions,
    /// Where to write the timestamp log (atomically, at exit).
    pub log: Option<PathBuf>,
    /// `CLOCK_MONOTONIC` ns that is time 0 of the log (default: the program's start).
    pub epoch: Option<u64>,
}

struct LogInner {
    epoch: u64,
    rows: String,
    path: Option<PathBuf>,
    /// Empty columns after `bytes` in rows written by `at` (a log with more columns).
    extra: usize,
}

/// The timestamp log, shared with the thread that saves it when a stop signal comes.
#[derive(Clone)]
pub(crate) struct Log(Arc<Mutex<LogInner>>);

impl Log {
    pub(crate) fn new(epoch: Option<u64>, path: Option<PathBuf>) -> Log {
        Log::with_columns(epoch, path, &[])
    }
    /// A log with more columns after `time_ns,event,bytes` (filled by `at_row`).
    pub(crate) fn with_columns(epoch: Option<u64>, path: Option<PathBuf>, extra: &[&str]) -> Log {
        let mut rows = String::from("time_ns,event,bytes");
        for c in extra {
            rows.push(',');
            rows.push_str(c);
        }
        rows.push('\n');
        Log(Arc::new(Mutex::new(LogInner {
            epoch: epoch.unwrap_or_else(sys::monotonic_ns),
            rows,
            path,
            extra: extra.len(),
        })))
    }
    pub(crate) fn epoch(&self) -> u64 {
        self.0.lock().map(|l| l.epoch).unwrap_or(0)
    }
    pub(crate) fn at(&self, event: &str, bytes: u64) {
        self.at_time(sys::monotonic_ns(), event, bytes);
    }
    pub(crate) fn at_time(&self, mono_ns: u64, event: &str, bytes: u64) {
        if let Ok(mut l) = self.0.lock() {
            let t = mono_ns as i128 - l.epoch as i128;
            let pad = ",".repeat(l.extra);
            l.rows.push_str(&format!("{t},{event},{bytes}{pad}\n"));
        }
    }
    /// A row with the extra columns' values (`values` joined by commas).
    pub(crate) fn at_row(&self, mono_ns: u64, event: &str, bytes: u64, values: &[String]) {
        if let Ok(mut l) = self.0.lock() {
            let t = mono_ns as i128 - l.epoch as i128;
            let mut row = format!("{t},{event},{bytes}");
            for v in values {
                row.push(',');
                row.push_str(v);
            }
            row.push('\n');
            l.rows.push_str(&row);
        }
    }
    pub(crate) fn save(&self) -> Result<()> {
        let l = self
            .0
            .lock()
            .map_err(|_| anyhow::anyhow!("log lock poisoned"))?;
        if let Some(p) = &l.path {
            AtomicFile::write_all_to(p, l.rows.as_bytes())
                .with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(())
    }

    /// On SIGINT, SIGTERM or SIGHUP (the emulator stopping the run), logs `stopped` with the
    /// bytes counted so far, saves the log and exits with 128 + the signal.
    pub(crate) fn save_on_stop(&self, progress: Arc<AtomicU64>) {
        // SAFETY: sigset manipulation on locals; the mask is inherited by the thread below.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut set, s);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        let log = self.clone();
        std::thread::spawn(move || {
            let mut sig: libc::c_int = 0;
            // SAFETY: valid set and out pointer.
            if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                log.at("stopped", progress.load(Ordering::Relaxed));
                let _ = log.save();
                // Also removes a temporary file another thread had not committed yet.
                lasthop_core::output::exit_cleanly(128 + sig);
            }
        });
    }
}

pub(crate) const PATTERN: u64 = 251;

pub(crate) fn v4(a: SocketAddr) -> Result<SocketAddrV4> {
    match a {
        SocketAddr::V4(a) => Ok(a),
        SocketAddr::V6(_) => bail!("{a}: only IPv4 for now"),
    }
}

mod bulk;
mod cbr;
mod http;
mod ping;
mod repeat;
mod thin;

pub use bulk::{bulk_recv, bulk_send};
pub use cbr::{cbr_recv, cbr_send};
pub use http::{http_client, http_server, HttpClientArgs};
pub use ping::{ping_recv, ping_send};
pub use repeat::{repeat_recv, repeat_send};
pub use thin::{thin_send, ThinArgs};
