//! `lasthop app http-server` / `http-client`: the real programs of the `http` application, one
//! HTTP/1.0 page as seed 002's generator fetched it (`lasthop_apps::http`).
//!
//! The client fetches object `k` (0 = the main object) with `GET /<k>/<size> HTTP/1.0` from
//! local port `first_port + k`, one TCP connection per object; the request is padded (`X-Pad`) to
//! exactly the page's request size. The in-line requests start when the first bytes of the main
//! response have been read; at most `concurrency` connections are open at once, the main one
//! included, and a slot frees when the client has read the server's FIN and closed its socket.
//! The server answers each request with exactly `<size>` bytes, its status line and headers
//! counted inside the size (the seed's object sizes include the headers), in one write, then
//! shuts down its sending side, reads until the client's FIN and closes.
//!
//! Both log CSV rows `time_ns,event,bytes,object,port` (times since the epoch, the peer's or the
//! local client port). Client events per object: `connect`, `connected`, `request`,
//! `first_byte`, `eof` (the server's FIN read), `close` (the client's FIN sent: the slot frees),
//! `fin_acked` (the lingering close returned: the ACK of that FIN arrived); for the page
//! `page_start` and `page_end` (after the last `fin_acked`, so it is the seed's response time's
//! end; bytes: the page's total). Server events per connection: `accept`, `request` (the request's bytes), `written`
//! (the response's bytes), `eof`, `close`; `listen` once.

use super::bulk::{listener, setsockopt_int, sockaddr, tcp_socket};
use super::{v4, AppCommon, Log, PATTERN};
use crate::sys;
use anyhow::{anyhow, bail, Context, Result};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

const COLUMNS: [&str; 2] = ["object", "port"];

/// The longest request head the server accepts.
const MAX_REQUEST: usize = 64 * 1024;

/// The largest object the programs serve (held in memory whole).
pub const MAX_OBJECT: u64 = 1 << 30;

/// The response to a request for `size` bytes: exactly `size` bytes, an HTTP/1.0 status line and
/// headers (with `Content-Length`) counted inside. An object too small for the shortest headers
/// is sent as a bare body (as HTTP/0.9 did).
pub fn response(size: u64) -> Vec<u8> {
    let size = size as usize;
    let heads = [
        "HTTP/1.0 200 OK\r\nServer: lasthop\r\nContent-Type: application/octet-stream\r\nContent-Length: ",
        // Two bytes longer: some sizes fall between two lengths of the Content-Length digits.
        "HTTP/1.0 200 OK\r\nServer: lasthop/1\r\nContent-Type: application/octet-stream\r\nContent-Length: ",
        "HTTP/1.0 200 OK\r\nContent-Length: ",
        "HTTP/1.0 200 OK\r\nServer: x\r\nContent-Length: ",
    ];
    for h in heads {
        let fixed = h.len() + 4; // the digits' "\r\n" and the empty line's
        for digits in 1..=20 {
            let Some(body) = size.checked_sub(fixed + digits) else {
                break;
            };
            if body.to_string().len() == digits {
                let mut v = Vec::with_capacity(size);
                v.extend_from_slice(format!("{h}{body}\r\n\r\n").as_bytes());
                v.extend((0..body).map(|i| (i as u64 % PATTERN) as u8));
                return v;
            }
        }
    }
    (0..size).map(|i| (i as u64 % PATTERN) as u8).collect()
}

/// Checks a whole response to a request for `size` bytes: its length and, when it has headers,
/// the status, `Content-Length` and the body's pattern.
pub fn check_response(r: &[u8], size: u64) -> Result<()> {
    if r.len() as u64 != size {
        bail!("received {} bytes, expected {size}", r.len());
    }
    if !r.starts_with(b"HTTP/") {
        return Ok(());
    }
    let Some(end) = r.windows(4).position(|w| w == b"\r\n\r\n") else {
        bail!("the response has no end of headers");
    };
    let head = String::from_utf8_lossy(&r[..end]);
    let status = head.lines().next().unwrap_or("");
    if !status.starts_with("HTTP/1.0 200 ") {
        bail!("the server answered {status:?}");
    }
    let body = &r[end + 4..];
    let len = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<u64>().ok())
            .flatten()
    });
    if len != Some(body.len() as u64) {
        bail!("Content-Length {len:?} but a body of {} bytes", body.len());
    }
    if let Some(i) = body
        .iter()
        .enumerate()
        .position(|(i, b)| *b != (i as u64 % PATTERN) as u8)
    {
        bail!("the body differs from what the server sends at byte {i}");
    }
    Ok(())
}

/// The request for object `k` of `size` bytes, padded to exactly `bytes` bytes: with a `Host`
/// header and an `X-Pad` header when there is room; a few bytes too many for those go into a
/// query string (`GET /k/size?xx`), which the server ignores.
pub fn request(k: usize, size: u64, host: &str, bytes: u64) -> Result<Vec<u8>> {
    let path = format!("/{k}/{size}");
    let line = |q: usize| {
        let query = if q == 0 {
            String::new()
        } else {
            format!("?{}", "x".repeat(q - 1))
        };
        format!("GET {path}{query} HTTP/1.0\r\n")
    };
    let host = format!("Host: {host}\r\n");
    let bytes = usize::try_from(bytes).context("request size")?;
    let shortest = line(0).len() + 2;
    let with_host = shortest + host.len();
    let r = if bytes >= with_host {
        match bytes - with_host {
            0 => format!("{}{host}\r\n", line(0)),
            // "X-Pad: " and "\r\n" are 9 bytes.
            n if n >= 9 => format!("{}{host}X-Pad: {}\r\n\r\n", line(0), "x".repeat(n - 9)),
            n => format!("{}{host}\r\n", line(n)),
        }
    } else if bytes >= shortest {
        format!("{}\r\n", line(bytes - shortest))
    } else {
        bail!(
            "a request of {bytes} bytes cannot hold {:?} and the empty line ({shortest} bytes at least)",
            line(0).trim_end()
        )
    };
    Ok(r.into_bytes())
}

/// The object number and size a request line `GET /<k>/<size> HTTP/1.0` asks for.
pub fn parse_request_line(line: &str) -> Result<(usize, u64)> {
    let bad = || anyhow!("bad request line {line:?}: expected \"GET /<object>/<size> HTTP/1.0\"");
    let mut w = line.split_whitespace();
    let (Some("GET"), Some(path), Some(v), None) = (w.next(), w.next(), w.next(), w.next()) else {
        return Err(bad());
    };
    if !v.starts_with("HTTP/1.") {
        return Err(bad());
    }
    let path = path.split_once('?').map_or(path, |x| x.0);
    let mut p = path.strip_prefix('/').ok_or_else(bad)?.split('/');
    let (Some(k), Some(size), None) = (p.next(), p.next(), p.next()) else {
        return Err(bad());
    };
    let k: usize = k.parse().map_err(|_| bad())?;
    let size: u64 = size.parse().map_err(|_| bad())?;
    if size == 0 || size > MAX_OBJECT {
        bail!("request line {line:?}: a size of {size} bytes, allowed 1..={MAX_OBJECT}");
    }
    Ok((k, size))
}

fn cols(object: Option<usize>, port: u16) -> [String; 2] {
    [
        object.map_or(String::new(), |k| k.to_string()),
        port.to_string(),
    ]
}

/// Serves one connection: reads the request head, answers, shuts down, drains, closes.
fn serve(mut s: TcpStream, port: u16, log: &Log, progress: &AtomicU64) -> Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(e) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break e;
        }
        if head.len() > MAX_REQUEST {
            bail!("no end of the request head within {MAX_REQUEST} bytes");
        }
        match s.read(&mut buf) {
            Ok(0) => bail!(
                "the client closed after {} bytes, before the end of its request",
                head.len()
            ),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(e).context(format!("reading the request after {} bytes", head.len()))
            }
        }
    };
    let text = String::from_utf8_lossy(&head[..end]);
    let line = text.lines().next().unwrap_or("");
    let (k, size) = match parse_request_line(line) {
        Ok(x) => x,
        Err(e) => {
            let _ = s.write_all(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            return Err(e);
        }
    };
    log.at_row(
        sys::monotonic_ns(),
        "request",
        head.len() as u64,
        &cols(Some(k), port),
    );
    let r = response(size);
    s.write_all(&r)
        .with_context(|| format!("writing object {k} ({size} bytes)"))?;
    progress.fetch_add(size, Ordering::Relaxed);
    log.at_row(sys::monotonic_ns(), "written", size, &cols(Some(k), port));
    s.shutdown(Shutdown::Write)
        .with_context(|| format!("shutting down after object {k}"))?;
    let mut rest = 0u64;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => rest += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context(format!("waiting for the client's FIN (object {k})")),
        }
    }
    log.at_row(sys::monotonic_ns(), "eof", rest, &cols(Some(k), port));
    drop(s);
    log.at_row(sys::monotonic_ns(), "close", size, &cols(Some(k), port));
    Ok(())
}

/// `lasthop app http-server`: listens on `addr`, prints `ready`, and serves each connection on
/// its own thread. With `connections`, it stops accepting after that many, waits for them to
/// end and exits (non-zero when any failed); without, it serves until stopped.
pub fn http_server(addr: SocketAddr, connections: Option<u64>, c: &AppCommon) -> Result<()> {
    let addr = v4(addr)?;
    let log = Log::with_columns(c.epoch, c.log.clone(), &COLUMNS);
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let l = listener(addr, &c.socket)?;
    log.at_row(sys::monotonic_ns(), "listen", 0, &cols(None, addr.port()));
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")?;
        out.flush()?;
    }
    let mut threads = vec![];
    let mut accepted = 0u64;
    let mut failures = vec![];
    while connections.is_none_or(|n| accepted < n) {
        let (s, peer) = match l.accept() {
            Ok(x) => x,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                failures.push(format!("accept: {e}"));
                break;
            }
        };
        accepted += 1;
        let port = peer.port();
        log.at_row(sys::monotonic_ns(), "accept", 0, &cols(None, port));
        let (log, progress) = (log.clone(), progress.clone());
        threads.push((
            port,
            std::thread::spawn(move || {
                let r = serve(s, port, &log, &progress);
                if r.is_err() {
                    log.at_row(sys::monotonic_ns(), "error", 0, &cols(None, port));
                }
                r
            }),
        ));
        // Without a count, forget finished connections as they end.
        if connections.is_none() {
            threads.retain(|t| !t.1.is_finished());
        }
    }
    drop(l);
    for (port, t) in threads {
        match t.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("connection from port {port}: {e:#}")),
            Err(_) => failures.push(format!("connection from port {port}: its thread panicked")),
        }
    }
    let saved = log.save();
    if !failures.is_empty() {
        bail!(
            "http-server: {} of {accepted} connections failed: {}",
            failures.len(),
            failures.join("; ")
        );
    }
    saved
}

/// What `lasthop app http-client` fetches.
#[derive(Clone, Debug)]
pub struct HttpClientArgs {
    pub to: SocketAddr,
    /// Object sizes in bytes, the main object first.
    pub objects: Vec<u64>,
    pub concurrency: u32,
    /// Request size in bytes.
    pub request: u64,
    /// The main object's local port; object k uses `first_port + k`.
    pub first_port: u16,
    /// ns after the epoch.
    pub start_at: Option<u64>,
}

enum Msg {
    FirstByte(usize),
    /// The object's response was read to EOF and the client sent its FIN: the slot is free.
    SlotFree,
    Done(usize, Result<u64>),
}

/// Connects from `port` (bound with SO_REUSEADDR) to `to`.
fn connect_from(port: u16, to: SocketAddrV4) -> Result<TcpStream> {
    let fd = tcp_socket()?;
    // SAFETY: we own fd from here.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
    // close() returns when the FIN is acknowledged (or after 10 minutes).
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 600,
    };
    // SAFETY: a struct linger option with its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("setting SO_LINGER: {}", std::io::Error::last_os_error());
    }
    let local = sockaddr(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port));
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: valid sockaddr_in.
    if unsafe { libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) } < 0 {
        bail!("bind port {port}: {}", std::io::Error::last_os_error());
    }
    let sa = sockaddr(to);
    // SAFETY: valid sockaddr_in.
    if unsafe { libc::connect(fd, (&sa as *const libc::sockaddr_in).cast(), len) } < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            bail!("connect from port {port} to {to}: {e}");
        }
        // An interrupted connect goes on in the background: wait for it as a blocking one would.
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        while unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {}
        let mut err: libc::c_int = 0;
        let mut l = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: an int option with its length.
        unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut err as *mut libc::c_int).cast(),
                &mut l,
            )
        };
        if err != 0 {
            bail!(
                "connect from port {port} to {to}: {}",
                std::io::Error::from_raw_os_error(err)
            );
        }
    }
    Ok(TcpStream::from(owned))
}

/// Fetches object `k`: connect, request, read to EOF, close, check. Returns the bytes read.
fn fetch(
    k: usize,
    size: u64,
    port: u16,
    to: SocketAddrV4,
    req: &[u8],
    log: &Log,
    tx: &mpsc::Sender<Msg>,
) -> Result<u64> {
    let at = |event: &str, bytes: u64| {
        log.at_row(sys::monotonic_ns(), event, bytes, &cols(Some(k), port));
    };
    at("connect", 0);
    let mut s = connect_from(port, to)?;
    at("connected", 0);
    s.write_all(req)
        .with_context(|| format!("sending the request from port {port}"))?;
    at("request", req.len() as u64);
    let mut got = Vec::with_capacity(size.min(MAX_OBJECT) as usize);
    let mut extra = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match s.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(e).context(format!(
                    "reading the response on port {port} after {} bytes",
                    got.len() as u64 + extra
                ))
            }
        };
        if n == 0 {
            break;
        }
        if got.is_empty() && extra == 0 {
            at("first_byte", n as u64);
            let _ = tx.send(Msg::FirstByte(k));
        }
        let room = (size as usize).saturating_sub(got.len()).min(n);
        got.extend_from_slice(&buf[..room]);
        extra += (n - room) as u64;
    }
    let total = got.len() as u64 + extra;
    at("eof", total);
    // Close: the FIN goes out now and the slot frees; the socket lingers until the FIN is
    // acknowledged (SO_LINGER), so the program lives until its connections are over.
    s.shutdown(Shutdown::Write)
        .with_context(|| format!("closing the connection from port {port}"))?;
    at("close", total);
    let _ = tx.send(Msg::SlotFree);
    drop(s);
    at("fin_acked", total);
    if extra > 0 {
        bail!("received {total} bytes on port {port}, expected {size}");
    }
    check_response(&got, size).with_context(|| format!("the response on port {port}"))?;
    Ok(total)
}

/// `lasthop app http-client`: at `start_at`, fetches the page (module comment). Fails, naming the
/// object and port, when a connection fails or a response is not exactly its object's size.
pub fn http_client(a: &HttpClientArgs, c: &AppCommon) -> Result<()> {
    let log = Log::with_columns(c.epoch, c.log.clone(), &COLUMNS);
    let progress = Arc::new(AtomicU64::new(0));
    log.save_on_stop(progress.clone());
    let result = client(a, &log, &progress);
    if let Err(e) = &result {
        log.at_row(sys::monotonic_ns(), "error", 0, &cols(None, a.first_port));
        let _ = log.save();
        return Err(anyhow!("http-client: {e:#}"));
    }
    log.save()
}

fn client(a: &HttpClientArgs, log: &Log, progress: &AtomicU64) -> Result<()> {
    let to = v4(a.to)?;
    let n = a.objects.len();
    if n == 0 {
        bail!("--objects: give at least the main object's size");
    }
    if a.concurrency == 0 {
        bail!("--concurrency 0: at least 1 connection at once");
    }
    if let Some(&s) = a.objects.iter().find(|&&s| s == 0 || s > MAX_OBJECT) {
        bail!("--objects: a size of {s} bytes, allowed 1..={MAX_OBJECT}");
    }
    if usize::from(a.first_port) + n - 1 > usize::from(u16::MAX) || a.first_port == 0 {
        bail!(
            "--first-port {}: {n} objects need ports {}..{} within 1..=65535",
            a.first_port,
            a.first_port,
            usize::from(a.first_port) + n - 1
        );
    }
    let host = to.to_string();
    let reqs = a
        .objects
        .iter()
        .enumerate()
        .map(|(k, &s)| request(k, s, &host, a.request))
        .collect::<Result<Vec<_>>>()
        .context("--request")?;
    let reqs = Arc::new(reqs);
    if let Some(s) = a.start_at {
        sys::sleep_until_monotonic(log.epoch() + s);
    }
    log.at_row(
        sys::monotonic_ns(),
        "page_start",
        0,
        &cols(None, a.first_port),
    );
    let (tx, rx) = mpsc::channel();
    let spawn = |k: usize| {
        let (tx, log, reqs) = (tx.clone(), log.clone(), reqs.clone());
        let (size, port) = (a.objects[k], a.first_port + k as u16);
        std::thread::spawn(move || {
            let r = fetch(k, size, port, to, &reqs[k], &log, &tx);
            let _ = tx.send(Msg::Done(k, r));
        });
    };
    let (mut opened, mut busy, mut done, mut inlines_go) = (0usize, 0usize, 0usize, false);
    let mut total = 0u64;
    while done < n {
        while opened < n && (opened == 0 || inlines_go) && busy < a.concurrency as usize {
            spawn(opened);
            opened += 1;
            busy += 1;
        }
        match rx.recv() {
            Ok(Msg::FirstByte(0)) => inlines_go = true,
            Ok(Msg::FirstByte(_)) => {}
            Ok(Msg::SlotFree) => busy -= 1,
            Ok(Msg::Done(k, r)) => {
                let got = r.with_context(|| format!("object {k} ({} bytes)", a.objects[k]))?;
                total += got;
                progress.store(total, Ordering::Relaxed);
                done += 1;
            }
            Err(_) => bail!("the fetching threads ended without reporting"),
        }
    }
    log.at_row(
        sys::monotonic_ns(),
        "page_end",
        total,
        &cols(None, a.first_port),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_exactly_the_object_size_headers_included() {
        for size in (1..300).chain([2096, 6288, 8384, 12576, 71788, 1_000_000]) {
            let r = response(size);
            assert_eq!(r.len() as u64, size, "{size}");
            check_response(&r, size).unwrap_or_else(|e| panic!("{size}: {e}"));
        }
        assert!(response(6288).starts_with(b"HTTP/1.0 200 OK\r\n"));
        // Sizes at the boundaries of the Content-Length digits still get headers.
        let fixed = "HTTP/1.0 200 OK\r\nServer: lasthop\r\nContent-Type: application/octet-stream\r\nContent-Length: ".len() + 4;
        for b in [10, 100, 1000, 10000] {
            let size = (fixed + b + 1) as u64; // no body length fits the first head exactly
            assert!(response(size).starts_with(b"HTTP/1.0 200"), "{size}");
        }
    }

    #[test]
    fn a_wrong_response_is_named() {
        let r = response(2096);
        let e = check_response(&r[..2000], 2096).unwrap_err().to_string();
        assert!(e.contains("received 2000 bytes, expected 2096"), "{e}");
        let mut bad = r.clone();
        *bad.last_mut().unwrap() ^= 1;
        let e = check_response(&bad, 2096).unwrap_err().to_string();
        assert!(e.contains("body differs"), "{e}");
    }

    #[test]
    fn requests_are_padded_to_exactly_the_size_and_parse_back() {
        // "GET /3/8384 HTTP/1.0" and two line ends: 24 bytes at least.
        for bytes in 24..400u64 {
            let r = request(3, 8384, "198.18.0.1:80", bytes).unwrap();
            assert_eq!(r.len() as u64, bytes);
            let t = String::from_utf8(r).unwrap();
            assert!(t.ends_with("\r\n\r\n"), "{t:?}");
            assert_eq!(t.matches("\r\n\r\n").count(), 1, "{t:?}");
            let line = t.lines().next().unwrap();
            assert_eq!(parse_request_line(line).unwrap(), (3, 8384));
        }
        let r = String::from_utf8(request(0, 6288, "198.18.0.1:80", 350).unwrap()).unwrap();
        assert!(
            r.starts_with("GET /0/6288 HTTP/1.0\r\nHost: 198.18.0.1:80\r\nX-Pad: x"),
            "{r}"
        );
        let e = request(3, 8384, "h", 23).unwrap_err().to_string();
        assert!(
            e.contains("cannot hold") && e.contains("24 bytes at least"),
            "{e}"
        );
    }

    #[test]
    fn bad_request_lines_are_refused() {
        for l in [
            "",
            "POST /0/10 HTTP/1.0",
            "GET /0 HTTP/1.0",
            "GET /x/10 HTTP/1.0",
            "GET /0/-1 HTTP/1.0",
            "GET /0/0 HTTP/1.0",
            "GET /0/10 FTP",
            "GET /0/10/2 HTTP/1.0",
            "GET 0/10 HTTP/1.0",
        ] {
            assert!(parse_request_line(l).is_err(), "{l:?}");
        }
    }
}
