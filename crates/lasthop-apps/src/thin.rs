//! `kind = "thin"`: interactive "thin" TCP streams as seed 003's Streamzero sent them (extract
//! §4.2): `streams` connections from the client host, each writing a small payload every
//! inter-transmission time (ITT), both drawn per write from a normal distribution written
//! `mean:stdev` (Listing 5.3's Box-Muller draw), each stream starting at a random offset so that
//! streams do not stay in phase; after `duration` of sending each stream closes. The server end
//! reads every stream and closes when its client does.
//!
//! Nagle must be off for thin streams: in simulation that is the flow's (or the host's)
//! `tcp = { nagle = false }`, in emulation `TCP_NODELAY` on each socket, which `thin-send` always
//! sets; the flow's other `tcp` keys become socket options there (`SocketOptions::from_tcp_table`). Stream k's draws (its start offset, then its
//! payloads and ITTs) come from the random stream `app.thin.<flow>.<k>` of the run's seeds, so a
//! replication repeats exactly, and the real sender draws the same values. A payload is at least 1 byte and at most the
//! MSS; an ITT at least 1 ms (Streamzero's integer milliseconds could reach 0 or below).

use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, SockId, SpecCtx, Status};
use lasthop_core::rng::{unit, Stream};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::{Dur, Time};
use std::net::SocketAddrV4;
use std::path::Path;

/// A normal distribution written `mean:stdev` (or a plain mean: no spread).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normal {
    pub mean: f64,
    pub stdev: f64,
}

impl Normal {
    pub fn parse(v: &toml::Value, key: &str, unit: &str) -> Result<Normal, SpecError> {
        let bad = |why: &str| {
            err(
                key,
                format!("{v}: {why}; allowed \"mean:stdev\" in {unit} (e.g. \"30:3\") or a number"),
            )
        };
        let (mean, stdev) = match v {
            toml::Value::Integer(i) => (*i as f64, 0.0),
            toml::Value::Float(f) => (*f, 0.0),
            toml::Value::String(s) => {
                let (m, d) = s.split_once(':').unwrap_or((s, "0"));
                let m: f64 = m.trim().parse().map_err(|_| bad("not a number"))?;
                let d: f64 = d.trim().parse().map_err(|_| bad("not a number"))?;
                (m, d)
            }
            _ => return Err(bad("not a distribution")),
        };
        if !(mean.is_finite() && mean > 0.0) {
            return Err(bad("the mean must be above 0"));
        }
        if !(stdev.is_finite() && stdev >= 0.0) {
            return Err(bad("the standard deviation must be 0 or more"));
        }
        Ok(Normal { mean, stdev })
    }

    /// One draw, as Streamzero's `get_negexp_val` makes it: sqrt(-2 ln U1) cos(2π U2).
    pub fn draw(&self, rng: &mut Stream) -> f64 {
        if self.stdev == 0.0 {
            return self.mean;
        }
        let u1 = 1.0 - unit(rng); // (0, 1]: ln is finite
        let u2 = unit(rng);
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos() * self.stdev + self.mean
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    streams: Option<u16>,
    payload: toml::Value,
    itt: toml::Value,
    duration: Dur,
    start_spread: Option<Dur>,
}

/// Validated parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub streams: u16,
    /// Bytes per write.
    pub payload: Normal,
    /// Milliseconds between writes.
    pub itt: Normal,
    /// How long each stream sends after the flow's start.
    pub duration: Dur,
    /// Each stream starts at a uniform random offset in [0, start_spread).
    pub start_spread: Dur,
    /// The largest payload: the client's MSS (its MTU less 40 bytes of headers).
    pub mss: u32,
}

impl Params {
    pub fn parse(t: toml::Table, ctx: &SpecCtx) -> Result<Params, SpecError> {
        let key = &ctx.key;
        let s: Spec = from_table(t, key)?;
        let streams = s.streams.unwrap_or(1);
        if streams == 0 {
            return Err(err(format!("{key}.streams"), "0: allowed 1 or more"));
        }
        let mss = ctx.client_mtu.saturating_sub(40);
        let payload = Normal::parse(&s.payload, &format!("{key}.payload"), "bytes")?;
        if payload.mean > f64::from(mss) {
            return Err(err(
                format!("{key}.payload"),
                format!(
                    "a mean of {} bytes is larger than the MSS: allowed up to {mss} bytes (the client's MTU less 40)",
                    payload.mean
                ),
            ));
        }
        let itt = Normal::parse(&s.itt, &format!("{key}.itt"), "milliseconds")?;
        if s.duration == Dur::ZERO {
            return Err(err(format!("{key}.duration"), "0s: allowed longer than 0"));
        }
        let start_spread = s
            .start_spread
            .unwrap_or(Dur((itt.mean * 1e6).round() as u64));
        Ok(Params {
            streams,
            payload,
            itt,
            duration: s.duration,
            start_spread,
            mss,
        })
    }

    pub fn client_ports(&self) -> u16 {
        self.streams
    }

    pub(crate) fn programs(&self, f: &FlowCtx, epoch: u64, logs: [&Path; 2]) -> [Vec<String>; 2] {
        let server = SocketAddrV4::new(f.server, f.port).to_string();
        let log = |l: &Path| {
            vec![
                "--log".to_string(),
                l.display().to_string(),
                "--epoch".into(),
                epoch.to_string(),
            ]
        };
        // The receiver accepts for the whole sending time and a little more for the last writes.
        let until = f.start + self.duration + Dur::from_secs(5);
        let mut recv = vec![
            "thin-recv".to_string(),
            "--listen".into(),
            server.clone(),
            "--until".into(),
            until.as_nanos().to_string(),
        ];
        recv.extend(log(logs[0]));
        let mut send = vec![
            "thin-send".to_string(),
            "--to".into(),
            server,
            "--streams".into(),
            self.streams.to_string(),
            "--payload".into(),
            format!("{}:{}", self.payload.mean, self.payload.stdev),
            "--itt".into(),
            format!("{}:{}", self.itt.mean, self.itt.stdev),
            "--mss".into(),
            self.mss.to_string(),
            "--duration".into(),
            self.duration.as_nanos().to_string(),
            "--start-spread".into(),
            self.start_spread.as_nanos().to_string(),
            "--start-at".into(),
            f.start.as_nanos().to_string(),
            "--seed".into(),
            f.seeds.seed.to_string(),
            "--replication".into(),
            f.seeds.replication.to_string(),
            "--flow".into(),
            f.index.to_string(),
        ];
        send.extend(log(logs[1]));
        [recv, send]
    }

    pub fn describe(&self) -> String {
        format!(
            "thin x{}: {}:{} B every {}:{} ms for {}",
            self.streams,
            self.payload.mean,
            self.payload.stdev,
            self.itt.mean,
            self.itt.stdev,
            self.duration
        )
    }
}

/// The random stream of stream `k` of flow `flow`: its start offset, then its payloads and ITTs
/// in write order (the same draws in both modes).
pub fn stream_rng(seeds: &lasthop_core::Seeds, flow: usize, k: u16) -> Stream {
    seeds.stream(&format!("app.thin.{flow}.{k}"))
}

impl Params {
    /// The start offset of a stream: the first draw of its random stream.
    pub fn offset(&self, rng: &mut Stream) -> Dur {
        Dur((unit(rng) * self.start_spread.as_nanos() as f64) as u64)
    }
    /// The next ITT, at least 1 ms.
    pub fn next_itt(&self, rng: &mut Stream) -> Dur {
        Dur((self.itt.draw(rng).max(1.0) * 1e6).round() as u64)
    }
    /// The next payload, 1 byte to the MSS.
    pub fn next_payload(&self, rng: &mut Stream) -> u64 {
        self.payload
            .draw(rng)
            .round()
            .clamp(1.0, f64::from(self.mss)) as u64
    }
}

/// One stream of the client end.
struct ThinStream {
    rng: Stream,
    sock: Option<SockId>,
    /// When it connects, then when it writes next.
    next: Option<Time>,
    connected: bool,
    written: u64,
}

/// The client end: `streams` connections writing small payloads.
pub struct Client {
    p: Params,
    remote: SocketAddrV4,
    first_port: u16,
    end: Time,
    streams: Vec<ThinStream>,
    status: Status,
}

impl Client {
    pub fn new(p: &Params, f: &FlowCtx) -> Client {
        let start = Time::ZERO + f.start;
        let streams = (0..p.streams)
            .map(|k| {
                let mut rng = stream_rng(&f.seeds, f.index, k);
                let at = start + p.offset(&mut rng);
                ThinStream {
                    rng,
                    sock: None,
                    next: Some(at),
                    connected: false,
                    written: 0,
                }
            })
            .collect();
        Client {
            p: p.clone(),
            remote: SocketAddrV4::new(f.server, f.port),
            first_port: f.client_port(),
            end: start + p.duration,
            streams,
            status: Status::Running,
        }
    }
}

impl Endpoint for Client {
    fn start(&mut self, now: Time, net: &mut dyn Net) {
        self.handle_timeout(now, net);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net) {
        match ev {
            SockEvent::Connected(s) => {
                if let Some(k) = self.streams.iter().position(|t| t.sock == Some(s)) {
                    self.streams[k].connected = true;
                    self.streams[k].next = Some(now);
                    self.handle_timeout(now, net);
                }
            }
            SockEvent::Closed(s) | SockEvent::Aborted(s, _) => {
                if let Some(t) = self.streams.iter_mut().find(|t| t.sock == Some(s)) {
                    t.sock = None;
                    t.next = None;
                }
                if self
                    .streams
                    .iter()
                    .all(|t| t.sock.is_none() && t.next.is_none())
                {
                    self.status = Status::Done;
                }
            }
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.streams.iter().filter_map(|t| t.next).min()
    }

    fn handle_timeout(&mut self, now: Time, net: &mut dyn Net) {
        for k in 0..self.streams.len() {
            if self.streams[k].next.is_none_or(|t| t > now) {
                continue;
            }
            match (self.streams[k].sock, self.streams[k].connected) {
                (None, _) => {
                    let port = self.first_port + k as u16;
                    self.streams[k].sock = Some(net.connect(now, self.remote, port));
                    self.streams[k].next = None;
                }
                (Some(s), true) if now >= self.end => {
                    net.close(s);
                    self.streams[k].next = None;
                }
                (Some(s), true) => {
                    let t = &mut self.streams[k];
                    let b = self.p.next_payload(&mut t.rng);
                    net.write(s, b);
                    t.written += b;
                    t.next = Some(now + self.p.next_itt(&mut t.rng));
                }
                (Some(_), false) => self.streams[k].next = None,
            }
        }
    }

    fn status(&self) -> Status {
        self.status
    }

    fn report(&self, r: &mut FlowReport) {
        r.bytes = self.streams.iter().map(|t| t.written).sum();
        r.reliable = true;
    }
}
