//! `lasthop app thin-send`: the real sender of the `thin` application (seed 003's Streamzero):
//! `streams` TCP connections with `TCP_NODELAY`, each writing a payload drawn from `payload`
//! every ITT drawn from `itt` for `duration`, started at a random offset; the draws are the
//! model's (`lasthop_apps::thin::stream_rng`: the same seed, replication and flow give the same
//! values). The receiver is `repeat-recv`.

use super::bulk::{apply_options, sockaddr, tcp_socket};
use super::{v4, AppCommon, Log, PATTERN};
use crate::sys;
use anyhow::{bail, Context, Result};
use lasthop_apps::thin::{stream_rng, Normal, Params};
use lasthop_core::{Dur, Seeds};
use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What `thin-send` is told.
pub struct ThinArgs {
    pub to: SocketAddr,
    pub streams: u16,
    pub payload: String,
    pub itt: String,
    pub mss: u32,
    pub duration_ns: u64,
    pub start_spread_ns: u64,
    pub start_at: u64,
    pub seed: u64,
    pub replication: u64,
    pub flow: usize,
}

fn normal(s: &str, what: &str) -> Result<Normal> {
    Normal::parse(&toml::Value::String(s.to_string()), what, "").map_err(|e| anyhow::anyhow!("{e}"))
}

/// One stream: connect at its offset, write until the end, close, wait for the receiver's close.
fn one_stream(
    a: &ThinArgs,
    p: &Params,
    k: u16,
    to: SocketAddrV4,
    c: &AppCommon,
    log: &Log,
    sent: &AtomicU64,
) -> Result<()> {
    let mut rng = stream_rng(&Seeds::new(a.seed, a.replication), a.flow, k);
    let t0 = log.epoch() + a.start_at;
    let end = t0 + a.duration_ns;
    sys::sleep_until_monotonic(t0 + p.offset(&mut rng).as_nanos());
    let fd = tcp_socket()?;
    // SAFETY: we own fd from here.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    let mut opts = c.socket.clone();
    opts.nodelay = Some(true);
    apply_options(fd, &opts)?;
    let sa = sockaddr(to);
    // SAFETY: valid sockaddr_in.
    let r = unsafe {
        libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!(
            "stream {k}: connect to {to}: {}",
            std::io::Error::last_os_error()
        );
    }
    let mut stream = TcpStream::from(owned);
    let mut buf = vec![0u8; p.mss as usize];
    let mut off = 0u64;
    let mut next = sys::monotonic_ns();
    while next < end {
        sys::sleep_until_monotonic(next);
        let n = p.next_payload(&mut rng) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = ((off + i as u64) % PATTERN) as u8;
        }
        stream
            .write_all(&buf[..n])
            .with_context(|| format!("stream {k}: sending after {off} bytes"))?;
        off += n as u64;
        sent.fetch_add(n as u64, Ordering::Relaxed);
        next += p.next_itt(&mut rng).as_nanos();
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut rest = [0u8; 256];
    while stream
        .read(&mut rest)
        .context("waiting for the receiver to close")?
        > 0
    {}
    log.at("close", off);
    Ok(())
}

/// `lasthop app thin-send`: the streams, one thread each.
pub fn thin_send(a: &ThinArgs, c: &AppCommon) -> Result<()> {
    let to = v4(a.to)?;
    let p = Params {
        streams: a.streams,
        payload: normal(&a.payload, "--payload")?,
        itt: normal(&a.itt, "--itt")?,
        duration: Dur(a.duration_ns),
        start_spread: Dur(a.start_spread_ns),
        mss: a.mss,
    };
    let log = Log::new(c.epoch, c.log.clone());
    let sent = Arc::new(AtomicU64::new(0));
    log.save_on_stop(sent.clone());
    let errors: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.streams)
            .map(|k| {
                let (p, log, sent) = (&p, &log, &sent);
                s.spawn(move || one_stream(a, p, k, to, c, log, sent))
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("{e:#}")),
                Err(_) => Some("a stream's thread panicked".into()),
            })
            .collect()
    });
    log.at("sent", sent.load(Ordering::Relaxed));
    if !errors.is_empty() {
        log.at("error", 0);
        let _ = log.save();
        bail!("thin-send: {}", errors.join("; "));
    }
    log.save()
}
