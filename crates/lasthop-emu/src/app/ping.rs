//! `lasthop app ping-send` / `ping-recv`: the real programs of the `ping` application
//! (`lasthop_apps::ping`). The sender is a small `ping` over a raw ICMP socket, so that it can
//! set the echo's identifier to the flow's port (a ping socket's identifier is the kernel's
//! choice); the server host's kernel answers the echoes itself.

use super::{AppCommon, Log, PATTERN};
use crate::sys;
use anyhow::{bail, Context, Result};
use lasthop_apps::ping::Record;
use lasthop_core::wire;
use std::io::Write;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// A raw ICMP socket (root, or CAP_NET_RAW, in the host's namespace).
fn raw_icmp_socket() -> Result<OwnedFd> {
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()).context("opening a raw ICMP socket");
    }
    // SAFETY: a fresh descriptor of ours.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // Reads wake every 100 ms, so the reader sees the sender's end.
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 100_000,
    };
    // SAFETY: a valid timeval of the size given.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error()).context("setting SO_RCVTIMEO");
    }
    Ok(fd)
}

fn send_to(fd: &OwnedFd, to: Ipv4Addr, msg: &[u8]) -> std::io::Result<()> {
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(to.octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `msg` and `sa` are valid for the lengths given.
    let n = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// One datagram (an IPv4 packet, header included, as a raw socket gives it); `Ok(None)` on the
/// read timeout.
fn recv(fd: &OwnedFd, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for its length.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return match e.kind() {
            std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// `lasthop app ping-send`: sends `count` ICMP echo requests of `size` payload bytes to `to`
/// with identifier `ident`, request k at `start_at` + k·`interval_ns` after the epoch
/// (absolute deadlines), each payload beginning with the probe's record
/// (`lasthop_apps::ping::Record`), the rest the checked pattern; then waits for the replies,
/// `linger_ns` after the last request at most. Logs `first_byte` at the first request,
/// `last_byte` at the last reply (with the replies' payload bytes) and `close` with the bytes
/// sent. The round-trip times come from the capture (`pings.csv`), not from this program.
#[allow(clippy::too_many_arguments)]
pub fn ping_send(
    to: Ipv4Addr,
    ident: u16,
    size: usize,
    interval_ns: u64,
    count: u64,
    linger_ns: u64,
    start_at: Option<u64>,
    c: &AppCommon,
) -> Result<()> {
    let log = Log::new(c.epoch, c.log.clone());
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let result = (|| -> Result<u64> {
        if size < Record::LEN {
            bail!(
                "a size of {size} B cannot hold the {} B record",
                Record::LEN
            );
        }
        let sock = Arc::new(raw_icmp_socket()?);
        let replies = Arc::new(AtomicU64::new(0));
        let last_reply = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let reader = {
            let (sock, replies, last_reply, done) = (
                sock.clone(),
                replies.clone(),
                last_reply.clone(),
                done.clone(),
            );
            std::thread::spawn(move || -> Result<()> {
                let mut buf = vec![0u8; 65536];
                let mut seen = std::collections::HashSet::new();
                while !done.load(Ordering::Relaxed) {
                    let Some(n) = recv(&sock, &mut buf).context("receiving echo replies")? else {
                        continue;
                    };
                    let b = &buf[..n];
                    let Some(v) = wire::parse_ip(b) else { continue };
                    let Some(e) = v.transport(b).and_then(wire::parse_icmp_echo) else {
                        continue;
                    };
                    // Our replies: the identifier, the record, the first copy of each probe.
                    if !e.reply || e.ident != ident || v.src != std::net::IpAddr::V4(to) {
                        continue;
                    }
                    if let Some(r) = Record::decode(e.payload) {
                        if seen.insert(r.seq) {
                            last_reply.store(sys::monotonic_ns(), Ordering::Relaxed);
                            replies.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Ok(())
            })
        };
        let mut msg = vec![0u8; wire::ICMP_ECHO_HEADER_LEN + size];
        msg[0] = 8;
        msg[4..6].copy_from_slice(&ident.to_be_bytes());
        for (i, b) in msg[wire::ICMP_ECHO_HEADER_LEN..].iter_mut().enumerate() {
            *b = (i as u64 % PATTERN) as u8;
        }
        let epoch = log.epoch();
        let first = epoch + start_at.unwrap_or(0);
        let mut sent = 0u64;
        for k in 0..count {
            sys::sleep_until_monotonic(first + k * interval_ns);
            let now = sys::monotonic_ns();
            let seq = u32::try_from(k).context("more than 2^32 probes")?;
            let rec = Record {
                seq,
                sent_ns: now.saturating_sub(epoch),
            };
            let h = wire::ICMP_ECHO_HEADER_LEN;
            msg[h..h + Record::LEN].copy_from_slice(&rec.encode());
            msg[6..8].copy_from_slice(&(seq as u16).to_be_bytes());
            msg[2..4].fill(0);
            let sum = wire::checksum(&msg);
            msg[2..4].copy_from_slice(&sum.to_be_bytes());
            match send_to(&sock, to, &msg) {
                Ok(()) => {}
                // A full device queue (the emulator not reading under STOP): the probe is lost
                // here, as `ping` reports it, and the next one goes on time.
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
                Err(e) => return Err(e).context(format!("sending probe {k} to {to}")),
            }
            if k == 0 {
                log.at("first_byte", size as u64);
            }
            sent += size as u64;
            progress.store(sent, Ordering::Relaxed);
        }
        // The replies still on their way, `linger` after the last request at most.
        let give_up = first + count.saturating_sub(1) * interval_ns + linger_ns;
        while replies.load(Ordering::Relaxed) < count && sys::monotonic_ns() < give_up {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        done.store(true, Ordering::Relaxed);
        reader
            .join()
            .map_err(|_| anyhow::anyhow!("the reply reader panicked"))??;
        let got = replies.load(Ordering::Relaxed);
        if got > 0 {
            log.at_time(
                last_reply.load(Ordering::Relaxed),
                "last_byte",
                got * size as u64,
            );
        }
        log.at("close", sent);
        Ok(sent)
    })();
    if let Err(e) = &result {
        log.at("error", 0);
        let _ = log.save();
        return Err(anyhow::anyhow!("ping-send: {e:#}"));
    }
    log.save()
}

/// `lasthop app ping-recv`: the server end, which runs nothing (the host's kernel answers the
/// echoes): checks that this namespace answers them (`net.ipv4.icmp_echo_ignore_all` = 0),
/// prints `ready`, logs `listen` and `close`, and exits.
pub fn ping_recv(c: &AppCommon) -> Result<()> {
    let log = Log::new(c.epoch, c.log.clone());
    let path = "/proc/sys/net/ipv4/icmp_echo_ignore_all";
    let ignore = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    if ignore.trim() != "0" {
        log.at("error", 0);
        let _ = log.save();
        bail!(
            "ping-recv: {path} is {}: this host ignores echo requests, so no probe would be answered (allowed 0; set hosts.NAME.sysctl.icmp_echo_ignore_all = 0 or leave it unset)",
            ignore.trim()
        );
    }
    log.at("listen", 0);
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")?;
        out.flush()?;
    }
    log.at("close", 0);
    log.save()
}
