//! `lasthop app bulk-send` / `bulk-recv`: the real programs of the `bulk` application (one TCP
//! transfer of a checked pattern), with the socket options a scenario may set.

use super::{v4, AppCommon, Log, PATTERN};
use crate::sys;
use anyhow::{bail, Context, Result};
use lasthop_scenario::SocketOptions;
use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub(crate) fn setsockopt_int(fd: RawFd, level: i32, opt: i32, v: i32, what: &str) -> Result<()> {
    // SAFETY: an int option.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("setting {what} = {v}: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// Applies the options that must be set before connect / listen.
pub(crate) fn apply_options(fd: RawFd, s: &SocketOptions) -> Result<()> {
    if let Some(cc) = &s.congestion_control {
        // SAFETY: a byte string option.
        let r = unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                cc.as_ptr().cast(),
                cc.len() as libc::socklen_t,
            )
        };
        if r < 0 {
            bail!(
                "setting congestion control {cc:?}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    let int = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
    if let Some(v) = s.sndbuf {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, int(v), "SO_SNDBUF")?;
    }
    if let Some(v) = s.rcvbuf {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, int(v), "SO_RCVBUF")?;
    }
    if let Some(v) = s.window_clamp {
        setsockopt_int(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_WINDOW_CLAMP,
            int(v),
            "TCP_WINDOW_CLAMP",
        )?;
    }
    // Seed 003's thin-stream mechanisms, per socket (Linux 2.6.34+; TCP_THIN_DUPACK is
    // accepted and ignored from Linux 4.13, which removed the mechanism).
    if let Some(v) = s.thin_linear_timeouts {
        setsockopt_int(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_THIN_LINEAR_TIMEOUTS,
            i32::from(v),
            "TCP_THIN_LINEAR_TIMEOUTS",
        )?;
    }
    if let Some(v) = s.thin_dupack {
        setsockopt_int(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_THIN_DUPACK,
            i32::from(v),
            "TCP_THIN_DUPACK",
        )?;
    }
    if let Some(v) = s.nodelay {
        setsockopt_int(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            i32::from(v),
            "TCP_NODELAY",
        )?;
    }
    Ok(())
}

pub(crate) fn tcp_socket() -> Result<RawFd> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        bail!("socket: {}", std::io::Error::last_os_error());
    }
    Ok(fd)
}

pub(crate) fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// `lasthop app bulk-send`: waits until `start_at` (ns after the epoch), connects to `to`, sends
/// `bytes` bytes, shuts down its sending side and waits for the receiver to close.
pub fn bulk_send(to: SocketAddr, bytes: u64, start_at: Option<u64>, c: &AppCommon) -> Result<()> {
    let to = v4(to)?;
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    if let Some(s) = start_at {
        sys::sleep_until_monotonic(log.epoch() + s);
    }
    let result = send_one(to, bytes, &c.socket, &log, &progress);
    if let Err(e) = &result {
        log.at("error", 0);
        let _ = log.save();
        return Err(anyhow::anyhow!("bulk-send: {e:#}"));
    }
    log.save()
}

/// One transfer: connects to `to`, sends `bytes` bytes of the pattern, shuts down its sending
/// side and waits for the receiver to close (so the connection ends in the capture).
pub(crate) fn send_one(
    to: SocketAddrV4,
    bytes: u64,
    socket: &SocketOptions,
    log: &Log,
    progress: &AtomicU64,
) -> Result<u64> {
    let fd = tcp_socket()?;
    // SAFETY: we own fd from here.
    let stream_fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    apply_options(fd, socket)?;
    let sa = sockaddr(to);
    log.at("connect", 0);
    // SAFETY: valid sockaddr_in.
    let r = unsafe {
        libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("connect to {to}: {}", std::io::Error::last_os_error());
    }
    log.at("connected", 0);
    let mut stream = TcpStream::from(stream_fd);
    let mut buf = vec![0u8; lasthop_apps::bulk::WRITE_CALL as usize];
    let mut sent = 0u64;
    while sent < bytes {
        let n = (bytes - sent).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = ((sent + i as u64) % PATTERN) as u8;
        }
        stream
            .write_all(&buf[..n])
            .with_context(|| format!("sending to {to} after {sent} bytes"))?;
        if sent == 0 {
            log.at("first_byte", n as u64);
        }
        sent += n as u64;
        progress.store(sent, Ordering::Relaxed);
    }
    log.at("last_byte", sent);
    stream.shutdown(std::net::Shutdown::Write)?;
    // Wait for the receiver's close so the connection ends in the capture.
    let mut rest = 0u64;
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => rest += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("waiting for the receiver to close"),
        }
    }
    log.at("eof", rest);
    drop(stream);
    log.at("close", sent);
    Ok(sent)
}

/// Creates the listening socket with the options set before `listen` (buffer sizes decide the
/// window scale).
pub(crate) fn listener(addr: SocketAddrV4, s: &SocketOptions) -> Result<TcpListener> {
    let fd = tcp_socket()?;
    // SAFETY: we own fd from here.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
    apply_options(fd, s)?;
    let sa = sockaddr(addr);
    // SAFETY: valid sockaddr_in.
    let r = unsafe {
        libc::bind(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("bind {addr}: {}", std::io::Error::last_os_error());
    }
    // SAFETY: plain syscall.
    if unsafe { libc::listen(fd, 16) } < 0 {
        bail!("listen {addr}: {}", std::io::Error::last_os_error());
    }
    Ok(TcpListener::from(owned))
}

/// `lasthop app bulk-recv`: listens on `addr`, prints `ready` on stdout, accepts one connection,
/// reads (and checks) everything until the sender closes, then closes. With `expect`, a different
/// byte count is an error.
pub fn bulk_recv(addr: SocketAddr, expect: Option<u64>, c: &AppCommon) -> Result<()> {
    let addr = v4(addr)?;
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let l = listener(addr, &c.socket)?;
    log.at("listen", 0);
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")?;
        out.flush()?;
    }
    let result = (|| -> Result<u64> {
        let (mut s, peer) = l.accept().context("accept")?;
        log.at("accept", 0);
        drop(l);
        let _ = peer;
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = 0u64;
        let mut bad: Option<u64> = None;
        let mut last_read = 0u64;
        loop {
            let n = match s.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).context(format!("receiving after {got} bytes")),
            };
            if n == 0 {
                break;
            }
            if got == 0 {
                log.at("first_byte", n as u64);
            }
            if bad.is_none() {
                if let Some(i) = buf[..n]
                    .iter()
                    .enumerate()
                    .position(|(i, b)| *b != ((got + i as u64) % PATTERN) as u8)
                {
                    bad = Some(got + i as u64);
                }
            }
            got += n as u64;
            progress.store(got, Ordering::Relaxed);
            last_read = sys::monotonic_ns();
        }
        if got > 0 {
            log.at_time(last_read, "last_byte", got);
        }
        log.at("eof", got);
        drop(s);
        log.at("close", got);
        if let Some(at) = bad {
            bail!("the data differ from what was sent at byte {at}");
        }
        if let Some(e) = expect {
            if e != got {
                bail!("received {got} bytes, expected {e}");
            }
        }
        Ok(got)
    })();
    if let Err(e) = &result {
        log.at("error", 0);
        let _ = log.save();
        return Err(anyhow::anyhow!("bulk-recv: {e:#}"));
    }
    log.save()
}
