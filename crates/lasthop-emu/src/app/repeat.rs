//! `lasthop app repeat-send` / `repeat-recv`: the real programs of the `repeat` application
//! (seed 004's repeated short transfers): transfer after transfer, each a new connection of
//! `bytes` bytes of the pattern, with `pause` between one's close and the next connect, until
//! `count` transfers or the run's end.

use super::bulk::{listener, send_one};
use super::{v4, AppCommon, Log, PATTERN};
use crate::sys;
use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// `lasthop app repeat-send`: from `start_at` (ns after the epoch), `count` transfers to `to`
/// at most, none starting at or after `until`. A failed transfer is logged (`error`) and the
/// next one follows, as in the model.
pub fn repeat_send(
    to: SocketAddr,
    bytes: u64,
    pause_ns: u64,
    count: u32,
    start_at: u64,
    until: u64,
    c: &AppCommon,
) -> Result<()> {
    let to = v4(to)?;
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    sys::sleep_until_monotonic(log.epoch() + start_at);
    let end = log.epoch() + until;
    let mut done = 0u32;
    for _ in 0..count {
        if sys::monotonic_ns() >= end {
            break;
        }
        match send_one(to, bytes, &c.socket, &log, &progress) {
            Ok(_) => done += 1,
            Err(e) => {
                log.at("error", 0);
                eprintln!("repeat-send: transfer {done}: {e:#}");
            }
        }
        let next = sys::monotonic_ns() + pause_ns;
        if next >= end {
            break;
        }
        sys::sleep_until_monotonic(next);
    }
    log.at("transfers", u64::from(done));
    log.save()
}

/// `lasthop app repeat-recv`: listens on `addr`, prints `ready`, and until `until` (ns after
/// the epoch) accepts connections, each read to its end (the pattern checked) and closed on a
/// thread of its own.
pub fn repeat_recv(addr: SocketAddr, until: u64, c: &AppCommon) -> Result<()> {
    let addr = v4(addr)?;
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let l = listener(addr, &c.socket)?;
    l.set_nonblocking(true)?;
    log.at("listen", 0);
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")?;
        out.flush()?;
    }
    let end = log.epoch() + until;
    let mut accepted = 0u64;
    while sys::monotonic_ns() < end {
        match l.accept() {
            Ok((mut s, _)) => {
                accepted += 1;
                log.at("accept", accepted);
                s.set_nonblocking(false)?;
                let (log, progress) = (log.clone(), progress.clone());
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    let mut got = 0u64;
                    loop {
                        match s.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                if let Some(i) = buf[..n]
                                    .iter()
                                    .enumerate()
                                    .position(|(i, b)| *b != ((got + i as u64) % PATTERN) as u8)
                                {
                                    eprintln!(
                                        "repeat-recv: the data differ from what was sent at byte {}",
                                        got + i as u64
                                    );
                                    log.at("error", got);
                                    return;
                                }
                                got += n as u64;
                                progress.fetch_add(n as u64, Ordering::Relaxed);
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(e) => {
                                eprintln!("repeat-recv: receiving after {got} bytes: {e}");
                                log.at("error", got);
                                return;
                            }
                        }
                    }
                    log.at("eof", got);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                log.at("error", 0);
                let _ = log.save();
                bail!("repeat-recv: accept: {e}");
            }
        }
    }
    log.at("close", progress.load(Ordering::Relaxed));
    log.save().context("repeat-recv: saving the log")
}
