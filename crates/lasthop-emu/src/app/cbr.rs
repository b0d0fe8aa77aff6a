//! `lasthop app cbr-send` / `cbr-recv`: the real programs of the `cbr` application (a
//! constant-bit-rate UDP stream carrying `lasthop_apps::cbr::Record`).

use super::{v4, AppCommon, Log, PATTERN};
use crate::sys;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// `lasthop app cbr-send`: from UDP port `from_port`, sends `count` datagrams of `payload` bytes
/// to `to`, datagram k at `start_at` + k·`interval_ns` after the epoch (absolute deadlines, so
/// lateness does not accumulate). Each begins with the stream's 16-byte record (magic, sequence
/// number, send time since the epoch: `lasthop_apps::cbr::Record`); the rest is the checked
/// pattern. Logs `first_byte`, `last_byte` and `close` with the bytes sent.
pub fn cbr_send(
    to: SocketAddr,
    from_port: u16,
    payload: usize,
    interval_ns: u64,
    count: u64,
    start_at: Option<u64>,
    c: &AppCommon,
) -> Result<()> {
    use lasthop_apps::cbr::Record;
    let to = v4(to)?;
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let result = (|| -> Result<u64> {
        if payload < Record::LEN {
            bail!(
                "a payload of {payload} B cannot hold the {} B record",
                Record::LEN
            );
        }
        let sock = std::net::UdpSocket::bind(("0.0.0.0", from_port))
            .with_context(|| format!("binding UDP port {from_port}"))?;
        sock.connect(to)
            .with_context(|| format!("connecting to {to}"))?;
        let mut buf: Vec<u8> = (0..payload).map(|i| (i as u64 % PATTERN) as u8).collect();
        let epoch = log.epoch();
        let first = epoch + start_at.unwrap_or(0);
        let mut sent = 0u64;
        for k in 0..count {
            sys::sleep_until_monotonic(first + k * interval_ns);
            let now = sys::monotonic_ns();
            let seq = u32::try_from(k).context("more than 2^32 datagrams")?;
            let rec = Record {
                seq,
                sent_ns: now.saturating_sub(epoch),
            };
            buf[..Record::LEN].copy_from_slice(&rec.encode());
            match sock.send(&buf) {
                Ok(_) => {}
                // An ICMP port unreachable for an earlier datagram (the receiver not yet or no
                // longer there): the stream goes on, as JTG's did.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(e).context(format!("sending datagram {k}")),
            }
            if k == 0 {
                log.at("first_byte", payload as u64);
            }
            sent += payload as u64;
            progress.store(sent, Ordering::Relaxed);
        }
        log.at("last_byte", sent);
        log.at("close", sent);
        Ok(sent)
    })();
    if let Err(e) = &result {
        log.at("error", 0);
        let _ = log.save();
        return Err(anyhow::anyhow!("cbr-send: {e:#}"));
    }
    log.save()
}

/// `lasthop app cbr-recv`: binds UDP `addr`, prints `ready`, and receives datagrams until
/// `until_ns` after the epoch. Logs `first_byte` and `last_byte` at the first and last
/// datagram's arrival, and `close` with the payload bytes received.
pub fn cbr_recv(addr: SocketAddr, until_ns: u64, c: &AppCommon) -> Result<()> {
    let addr = v4(addr)?;
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let sock = std::net::UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
    log.at("listen", 0);
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")?;
        out.flush()?;
    }
    let result = (|| -> Result<u64> {
        let end = log.epoch() + until_ns;
        let mut buf = vec![0u8; 65536];
        let mut got = 0u64;
        let mut last = 0u64;
        loop {
            let now = sys::monotonic_ns();
            if now >= end {
                break;
            }
            sock.set_read_timeout(Some(std::time::Duration::from_nanos(end - now)))?;
            match sock.recv(&mut buf) {
                Ok(n) => {
                    if got == 0 {
                        log.at("first_byte", n as u64);
                    }
                    got += n as u64;
                    last = sys::monotonic_ns();
                    progress.store(got, Ordering::Relaxed);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e).context(format!("receiving after {got} bytes")),
            }
        }
        if got > 0 {
            log.at_time(last, "last_byte", got);
        }
        log.at("close", got);
        Ok(got)
    })();
    if let Err(e) = &result {
        log.at("error", 0);
        let _ = log.save();
        return Err(anyhow::anyhow!("cbr-recv: {e:#}"));
    }
    log.save()
}
