//! The real workload programs the emulator starts inside the host namespaces
//! (`lasthop app bulk-send` / `lasthop app bulk-recv`), and the command lines that start them.
//!
//! Each logs application-level timestamps as CSV (`time_ns,event,bytes`), with times relative to
//! `--epoch` (a `CLOCK_MONOTONIC` reading: the emulator passes its run start, so the log shares
//! the time base of the captures and the event log). Events: `listen`, `connect`, `connected`,
//! `accept`, `first_byte`, `last_byte`, `eof`, `close`, `error`.
//!
//! The payload is a fixed pattern (byte i is `i % 251`) that the receiver checks, so a transfer
//! is known to have arrived intact.

use crate::sys;
use anyhow::{bail, Context, Result};
use lasthop_core::output::AtomicFile;
use lasthop_scenario::SocketOptions;
use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, RawFd};
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

impl AppCommon {
    /// The command-line arguments that recreate these options.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![];
        let s = &self.socket;
        if let Some(cc) = &s.congestion_control {
            a.extend(["--congestion-control".into(), cc.clone()]);
        }
        for (flag, v) in [
            ("--window-clamp", s.window_clamp),
            ("--sndbuf", s.sndbuf),
            ("--rcvbuf", s.rcvbuf),
        ] {
            if let Some(v) = v {
                a.extend([flag.to_string(), v.to_string()]);
            }
        }
        if s.nodelay == Some(true) {
            a.push("--nodelay".into());
        }
        if let Some(l) = &self.log {
            a.extend(["--log".into(), l.display().to_string()]);
        }
        if let Some(e) = self.epoch {
            a.extend(["--epoch".into(), e.to_string()]);
        }
        a
    }
}

struct LogInner {
    epoch: u64,
    rows: String,
    path: Option<PathBuf>,
}

/// The timestamp log, shared with the thread that saves it when a stop signal comes.
#[derive(Clone)]
struct Log(Arc<Mutex<LogInner>>);

impl Log {
    fn new(epoch: Option<u64>, path: Option<PathBuf>) -> Log {
        Log(Arc::new(Mutex::new(LogInner {
            epoch: epoch.unwrap_or_else(sys::monotonic_ns),
            rows: String::from("time_ns,event,bytes\n"),
            path,
        })))
    }
    fn epoch(&self) -> u64 {
        self.0.lock().map(|l| l.epoch).unwrap_or(0)
    }
    fn at(&self, event: &str, bytes: u64) {
        self.at_time(sys::monotonic_ns(), event, bytes);
    }
    fn at_time(&self, mono_ns: u64, event: &str, bytes: u64) {
        if let Ok(mut l) = self.0.lock() {
            let t = mono_ns as i128 - l.epoch as i128;
            l.rows.push_str(&format!("{t},{event},{bytes}\n"));
        }
    }
    fn save(&self) -> Result<()> {
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
    fn save_on_stop(&self, progress: Arc<AtomicU64>) {
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
                std::process::exit(128 + sig);
            }
        });
    }
}

fn setsockopt_int(fd: RawFd, level: i32, opt: i32, v: i32, what: &str) -> Result<()> {
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
fn apply_options(fd: RawFd, s: &SocketOptions) -> Result<()> {
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

fn tcp_socket() -> Result<RawFd> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        bail!("socket: {}", std::io::Error::last_os_error());
    }
    Ok(fd)
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

const PATTERN: u64 = 251;

fn v4(a: SocketAddr) -> Result<SocketAddrV4> {
    match a {
        SocketAddr::V4(a) => Ok(a),
        SocketAddr::V6(_) => bail!("{a}: only IPv4 for now"),
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
    let result = (|| -> Result<u64> {
        let fd = tcp_socket()?;
        // SAFETY: we own fd from here.
        let stream_fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        apply_options(fd, &c.socket)?;
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
        let mut buf = vec![0u8; 64 * 1024];
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
    })();
    if let Err(e) = &result {
        log.at("error", 0);
        let _ = log.save();
        return Err(anyhow::anyhow!("bulk-send: {e:#}"));
    }
    log.save()
}

/// Creates the listening socket with the options set before `listen` (buffer sizes decide the
/// window scale).
fn listener(addr: SocketAddrV4, s: &SocketOptions) -> Result<TcpListener> {
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
