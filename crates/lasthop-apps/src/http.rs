//! `kind = "http"`: one HTTP/1.0 page as seed 002's generator fetched it (Saarto 2003, §3.1 and
//! §3.3 of the extract). The client end (the flow's `from` host, the mobile host) opens one TCP
//! connection per object, the main object first, at most `concurrency` at once (the main one
//! included); each connection carries a `request`-byte request; the server end (the `to` host)
//! answers with the object (its size includes the HTTP headers) and closes. The in-line requests
//! start when the first data of the main response reaches the client application; a slot frees
//! when the client has read the server's FIN and closed its side. The page is over when every
//! connection is closed at the client (the ACK of its last FIN arrived): the seed's response
//! time runs from the first SYN to that moment.
//!
//! Object `k` (0 = main, then the in-lines in order) is fetched from client port
//! `first_client_port + k`, in both modes, so that the server end of the model (whose bytes are
//! virtual) knows which object a connection asks for, and so that the analysis can tell the
//! objects of a page apart in the captures. Real programs: `lasthop app http-server` /
//! `http-client`, speaking HTTP/1.0 (`GET /<object>/<size> HTTP/1.0`).

use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, SockId, SpecCtx, Status};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::{ByteCount, Time};
use std::collections::BTreeMap;
use std::net::SocketAddrV4;
use std::path::Path;

/// Seed 002's object sizes (Table 8), bytes including the HTTP headers.
pub const SMALL_MAIN: u64 = 6288;
pub const MEDIUM_MAIN: u64 = 12576;
pub const LARGE_MAIN: u64 = 71788;
pub const SMALL_INLINE: u64 = 2096;
pub const MEDIUM_INLINE: u64 = 8384;

/// Seed 002's workloads by label (Table 9): main object, in-line object, number of in-lines.
pub const WORKLOADS: [(&str, u64, u64, u32); 6] = [
    ("s+2s", SMALL_MAIN, SMALL_INLINE, 2),
    ("s+2m", SMALL_MAIN, MEDIUM_INLINE, 2),
    ("s+8m", SMALL_MAIN, MEDIUM_INLINE, 8),
    ("m+2m", MEDIUM_MAIN, MEDIUM_INLINE, 2),
    ("m+8m", MEDIUM_MAIN, MEDIUM_INLINE, 8),
    ("l+8m", LARGE_MAIN, MEDIUM_INLINE, 8),
];

/// At most this many in-line objects (the client ports of a page are consecutive).
pub const MAX_INLINES: u32 = 1000;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    workload: Option<String>,
    main: Option<ByteCount>,
    inline: Option<ByteCount>,
    inlines: Option<i64>,
    concurrency: Option<i64>,
    request: Option<ByteCount>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The seed's label when the page is one of its workloads.
    pub workload: Option<String>,
    /// Object sizes in bytes: the main object, then each in-line object.
    pub objects: Vec<u64>,
    /// Connections open at once, the main one included (the seed: 4).
    pub concurrency: u32,
    /// Request size in bytes, one per connection (the seed: 350).
    pub request: u64,
}

impl Params {
    pub fn parse(t: toml::Table, ctx: &SpecCtx) -> Result<Params, SpecError> {
        let key = &ctx.key;
        let s: Spec = from_table(t, key)?;
        let labels = || WORKLOADS.iter().map(|w| w.0).collect::<Vec<_>>().join(", ");
        let (main, inline, inlines) = match &s.workload {
            Some(w) => {
                if s.main.is_some() || s.inline.is_some() || s.inlines.is_some() {
                    return Err(err(
                        format!("{key}.workload"),
                        "give either a workload label or main, inline and inlines, not both",
                    ));
                }
                let Some(&(_, m, i, n)) = WORKLOADS.iter().find(|x| x.0 == w) else {
                    return Err(err(
                        format!("{key}.workload"),
                        format!(
                            "unknown workload {w:?}: the seed's workloads are {}",
                            labels()
                        ),
                    ));
                };
                (m, i, n)
            }
            None => {
                let Some(main) = s.main else {
                    return Err(err(
                        format!("{key}.main"),
                        format!(
                            "missing: give the main object's size (e.g. main = \"6288B\") or a workload ({})",
                            labels()
                        ),
                    ));
                };
                let inlines = match s.inlines.unwrap_or(0) {
                    n if n < 0 || n > i64::from(MAX_INLINES) => {
                        return Err(err(
                            format!("{key}.inlines"),
                            format!("{n}: allowed 0..={MAX_INLINES}"),
                        ))
                    }
                    n => n as u32,
                };
                let inline = match (s.inline, inlines) {
                    (Some(b), _) => b.0,
                    (None, 0) => 0,
                    (None, _) => {
                        return Err(err(
                            format!("{key}.inline"),
                            "missing: the in-line objects' size (e.g. inline = \"8384B\")",
                        ))
                    }
                };
                if inlines > 0 && inline == 0 {
                    return Err(err(
                        format!("{key}.inline"),
                        "0 bytes: an object has 1 byte or more",
                    ));
                }
                (main.0, inline, inlines)
            }
        };
        if main == 0 {
            return Err(err(
                format!("{key}.main"),
                "0 bytes: an object has 1 byte or more",
            ));
        }
        let concurrency = match s.concurrency.unwrap_or(4) {
            n if !(1..=64).contains(&n) => {
                return Err(err(
                    format!("{key}.concurrency"),
                    format!("{n}: allowed 1..=64 connections at once"),
                ))
            }
            n => n as u32,
        };
        let request = s.request.map_or(350, |b| b.0);
        if request == 0 || request > 65_535 {
            return Err(err(
                format!("{key}.request"),
                format!("{request} bytes: allowed 1..=65535"),
            ));
        }
        let mut objects = vec![main];
        objects.extend(std::iter::repeat_n(inline, inlines as usize));
        Ok(Params {
            workload: s.workload,
            objects,
            concurrency,
            request,
        })
    }

    /// Client ports the page uses: one per object.
    pub fn client_ports(&self) -> u16 {
        self.objects.len() as u16
    }

    pub fn describe(&self) -> String {
        let n = self.objects.len() - 1;
        let page = match &self.workload {
            Some(w) => w.clone(),
            None if n == 0 => format!("{} B", self.objects[0]),
            None => format!("{} B + {n} x {} B", self.objects[0], self.objects[1]),
        };
        format!("http {page}, {} at once", self.concurrency)
    }

    pub(crate) fn programs(&self, f: &FlowCtx, epoch: u64, logs: [&Path; 2]) -> [Vec<String>; 2] {
        let server = SocketAddrV4::new(f.server, f.port).to_string();
        let objects = self
            .objects
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let log = |l: &Path| ["--log".to_string(), l.display().to_string()];
        // The server serves one connection per object and then exits, so the emulator sees the
        // flow end.
        let mut srv = vec![
            "http-server".to_string(),
            "--listen".into(),
            server.clone(),
            "--connections".into(),
            self.objects.len().to_string(),
        ];
        srv.extend(log(logs[0]));
        srv.extend(["--epoch".into(), epoch.to_string()]);
        let mut cli = vec![
            "http-client".to_string(),
            "--to".into(),
            server,
            "--objects".into(),
            objects,
            "--concurrency".into(),
            self.concurrency.to_string(),
            "--request".into(),
            self.request.to_string(),
            "--first-port".into(),
            f.client_port().to_string(),
            "--start-at".into(),
            f.start.as_nanos().to_string(),
        ];
        cli.extend(log(logs[1]));
        cli.extend(["--epoch".into(), epoch.to_string()]);
        [srv, cli]
    }
}

/// One object's connection as the client sees it.
#[derive(Clone, Copy, Default)]
struct Fetch {
    sock: Option<SockId>,
    /// Response bytes read.
    got: u64,
    /// The server's FIN was read and the client closed: the slot is free.
    done_reading: bool,
    closed: bool,
}

/// The client end: the page's fetches, at most `concurrency` at once.
pub struct Client {
    p: Params,
    remote: SocketAddrV4,
    first_port: u16,
    fetches: Vec<Fetch>,
    by_sock: BTreeMap<SockId, usize>,
    /// Objects whose connection was opened, in order.
    opened: usize,
    /// Whether the in-line requests may start (the main response's first data arrived).
    inlines_go: bool,
    start: Option<Time>,
    connected: Option<Time>,
    first_byte: Option<Time>,
    end: Option<Time>,
    status: Status,
    aborted: Option<String>,
}

impl Client {
    pub fn new(p: &Params, f: &FlowCtx) -> Client {
        Client {
            p: p.clone(),
            remote: SocketAddrV4::new(f.server, f.port),
            first_port: f.client_port(),
            fetches: vec![Fetch::default(); p.objects.len()],
            by_sock: BTreeMap::new(),
            opened: 0,
            inlines_go: false,
            start: None,
            connected: None,
            first_byte: None,
            end: None,
            status: Status::Running,
            aborted: None,
        }
    }

    fn busy(&self) -> usize {
        self.fetches[..self.opened]
            .iter()
            .filter(|f| !f.done_reading)
            .count()
    }

    /// Opens the next objects' connections while a slot is free (in-lines only once allowed).
    fn open_more(&mut self, now: Time, net: &mut dyn Net) {
        while self.opened < self.fetches.len()
            && (self.opened == 0 || self.inlines_go)
            && self.busy() < self.p.concurrency as usize
        {
            let k = self.opened;
            let s = net.connect(now, self.remote, self.first_port.wrapping_add(k as u16));
            self.fetches[k].sock = Some(s);
            self.by_sock.insert(s, k);
            self.opened += 1;
        }
    }
}

impl Endpoint for Client {
    fn start(&mut self, now: Time, net: &mut dyn Net) {
        self.start = Some(now);
        self.open_more(now, net);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net) {
        let sock = match &ev {
            SockEvent::Connected(s)
            | SockEvent::Readable(s, _)
            | SockEvent::PeerClosed(s)
            | SockEvent::Closed(s)
            | SockEvent::Aborted(s, _) => *s,
            _ => return,
        };
        let Some(&k) = self.by_sock.get(&sock) else {
            return;
        };
        match ev {
            SockEvent::Connected(s) => {
                self.connected.get_or_insert(now);
                net.write(s, self.p.request);
            }
            SockEvent::Readable(_, n) => {
                self.first_byte.get_or_insert(now);
                self.fetches[k].got += n;
                if k == 0 && !self.inlines_go {
                    // The main response's first data (headers and references) is here.
                    self.inlines_go = true;
                    self.open_more(now, net);
                }
            }
            SockEvent::PeerClosed(s) => {
                net.close(s);
                self.fetches[k].done_reading = true;
                self.open_more(now, net);
            }
            SockEvent::Closed(_) => {
                self.fetches[k].closed = true;
                if self.fetches.iter().all(|f| f.closed) {
                    self.end = Some(now);
                    self.status = Status::Done;
                }
            }
            SockEvent::Aborted(_, why) => {
                self.aborted = Some(format!("object {k}: {why}"));
                self.status = Status::Aborted;
            }
            _ => {}
        }
    }

    fn status(&self) -> Status {
        self.status
    }

    fn report(&self, r: &mut FlowReport) {
        r.bytes = self.p.objects.iter().sum();
        r.reliable = true;
        r.start = self.start;
        r.connected = self.connected;
        r.first_byte = self.first_byte;
        r.delivered = self.fetches.iter().map(|f| f.got).sum();
        if self.fetches.iter().all(|f| f.got >= 1) && r.delivered >= r.bytes {
            r.last_byte = self.end;
        }
        // The page's end: the client's last connection closed (the seed's response time).
        r.end = self.end;
        if self.aborted.is_some() {
            r.aborted.clone_from(&self.aborted);
        }
    }
}

/// The server end: answers each request with its object and closes.
pub struct Server {
    p: Params,
    port: u16,
    first_port: u16,
    /// Accepted connections: the object each asks for and the request bytes read so far.
    conns: BTreeMap<SockId, (usize, u64, bool)>,
    closed: usize,
    status: Status,
    aborted: Option<String>,
}

impl Server {
    pub fn new(p: &Params, f: &FlowCtx) -> Server {
        Server {
            p: p.clone(),
            port: f.port,
            first_port: f.client_port(),
            conns: BTreeMap::new(),
            closed: 0,
            status: Status::Running,
            aborted: None,
        }
    }
}

impl Endpoint for Server {
    fn start(&mut self, _now: Time, net: &mut dyn Net) {
        net.listen(self.port);
    }

    fn on_event(&mut self, _now: Time, ev: SockEvent, net: &mut dyn Net) {
        match ev {
            SockEvent::Accepted { sock, .. } => {
                // The client fetches object k from port first_port + k (the model's bytes are
                // virtual, so the port names the object; the real programs send its path).
                let k = net
                    .peer(sock)
                    .map(|a| a.port().wrapping_sub(self.first_port) as usize)
                    .filter(|&k| k < self.p.objects.len());
                match k {
                    Some(k) => {
                        self.conns.insert(sock, (k, 0, false));
                    }
                    None => net.close(sock),
                }
            }
            SockEvent::Readable(s, n) => {
                if let Some((k, got, answered)) = self.conns.get_mut(&s) {
                    *got += n;
                    if *got >= self.p.request && !*answered {
                        *answered = true;
                        net.write(s, self.p.objects[*k]);
                        net.close(s);
                    }
                }
            }
            SockEvent::Closed(s) if self.conns.contains_key(&s) => {
                self.closed += 1;
                if self.closed == self.p.objects.len() {
                    self.status = Status::Done;
                }
            }
            SockEvent::Aborted(s, why) => {
                if let Some((k, ..)) = self.conns.get(&s) {
                    self.aborted = Some(format!("object {k}: {why}"));
                    self.status = Status::Aborted;
                }
            }
            _ => {}
        }
    }

    fn status(&self) -> Status {
        self.status
    }

    fn report(&self, r: &mut FlowReport) {
        if self.aborted.is_some() && r.aborted.is_none() {
            r.aborted.clone_from(&self.aborted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::Dur;

    fn ctx() -> SpecCtx {
        SpecCtx {
            key: "flows[0]".into(),
            client_mtu: 576,
            start: Dur::ZERO,
            run: Dur::from_secs(60),
        }
    }

    fn parse(s: &str) -> Result<Params, SpecError> {
        Params::parse(toml::from_str(s).unwrap(), &ctx())
    }

    #[test]
    fn the_seeds_workloads_by_label() {
        let p = parse(r#"workload = "l+8m""#).unwrap();
        assert_eq!(p.objects.len(), 9);
        assert_eq!(p.objects[0], 71788);
        assert!(p.objects[1..].iter().all(|&b| b == 8384));
        // Table 9's downlink payload of m+8m: 12576 + 8 x 8384 = 79648 bytes.
        let p = parse(r#"workload = "m+8m""#).unwrap();
        assert_eq!(p.objects.iter().sum::<u64>(), 79648);
        assert_eq!((p.concurrency, p.request), (4, 350));
        assert_eq!(p.client_ports(), 9);
    }

    #[test]
    fn sizes_and_counts_a_user_gives() {
        let p = parse("main = \"10kB\"\ninline = \"1000B\"\ninlines = 3\nconcurrency = 2").unwrap();
        assert_eq!(p.objects, vec![10_000, 1000, 1000, 1000]);
        assert_eq!(p.concurrency, 2);
        let p = parse("main = \"500B\"").unwrap();
        assert_eq!(p.objects, vec![500]);
    }

    #[test]
    fn bad_pages_are_refused_with_the_key_and_what_is_allowed() {
        for (spec, key, says) in [
            (r#"workload = "x+9z""#, "flows[0].workload", "s+2s, s+2m"),
            ("main = \"0B\"", "flows[0].main", "1 byte or more"),
            (
                "main = \"1kB\"\ninline = \"0B\"\ninlines = 2",
                "flows[0].inline",
                "1 byte or more",
            ),
            (
                "main = \"1kB\"\ninline = \"1kB\"\ninlines = -1",
                "flows[0].inlines",
                "allowed 0..=1000",
            ),
            (
                "main = \"1kB\"\nconcurrency = 0",
                "flows[0].concurrency",
                "allowed 1..=64",
            ),
            (
                "main = \"1kB\"\nrequest = \"0B\"",
                "flows[0].request",
                "allowed 1..=65535",
            ),
            ("inline = \"1kB\"", "flows[0].main", "missing"),
            (
                "workload = \"s+2s\"\nmain = \"1kB\"",
                "flows[0].workload",
                "not both",
            ),
            ("main = \"-5B\"", "flows[0].main", ""),
        ] {
            let e = parse(spec).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(says), "{spec}: {e}");
        }
        let e = parse("main = \"1kB\"\nkeepalive = true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("keepalive"), "{e}");
    }
}
