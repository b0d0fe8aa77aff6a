//! `kind = "cbr"`: a constant-bit-rate UDP stream, as seed 000's JTG sent it (512 bytes every
//! 128 ms for 180 s). The client end (the flow's `from` host) sends a datagram of `payload`
//! bytes every `interval` (or at `rate` payload bits per second) from its start for `duration`;
//! the server end receives until `linger` after the last send (JTG's `-e`, 10 s).
//!
//! Every datagram begins with a 16-byte record, big-endian: the magic `LHU1`, the sequence
//! number (u32, from 0) and the send time in ns (u64, run-relative). In simulation only the
//! record is real (the rest of the payload is virtual); in emulation the whole datagram is. The
//! analyser reads the record from the captures of both ends (`udp_flows.csv`). Real programs:
//! `lasthop app cbr-send` / `cbr-recv`.

use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, SockId, SpecCtx, Status};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::{ByteCount, Dur, Rate, Time};
use std::net::SocketAddrV4;
use std::path::Path;

/// The record at the head of every datagram.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Record {
    pub seq: u32,
    /// Send time, ns since the run's start.
    pub sent_ns: u64,
}

impl Record {
    pub const MAGIC: [u8; 4] = *b"LHU1";
    pub const LEN: usize = 16;

    pub fn encode(&self) -> [u8; Record::LEN] {
        self.encode_with(Record::MAGIC)
    }

    /// The record at the head of a payload, if it has one.
    pub fn decode(payload: &[u8]) -> Option<Record> {
        Record::decode_with(Record::MAGIC, payload)
    }

    /// The same layout under another application's magic (the `ping` probes' `LHP1`).
    pub fn encode_with(&self, magic: [u8; 4]) -> [u8; Record::LEN] {
        let mut b = [0u8; Record::LEN];
        b[..4].copy_from_slice(&magic);
        b[4..8].copy_from_slice(&self.seq.to_be_bytes());
        b[8..].copy_from_slice(&self.sent_ns.to_be_bytes());
        b
    }

    /// The record under `magic` at the head of a payload, if it has one.
    pub fn decode_with(magic: [u8; 4], payload: &[u8]) -> Option<Record> {
        let b = payload.get(..Record::LEN)?;
        (b[..4] == magic).then(|| Record {
            seq: u32::from_be_bytes(b[4..8].try_into().unwrap()),
            sent_ns: u64::from_be_bytes(b[8..].try_into().unwrap()),
        })
    }
}

/// IPv4 and UDP headers: what a datagram adds to its payload on the link.
pub const HEADERS: u32 = 28;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    payload: ByteCount,
    interval: Option<Dur>,
    rate: Option<Rate>,
    duration: Dur,
    linger: Option<Dur>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// UDP payload bytes per datagram.
    pub payload: u32,
    pub interval: Dur,
    /// How long the client sends.
    pub duration: Dur,
    /// How long the server waits after the last send.
    pub linger: Dur,
}

/// JTG's `-e 10`: the receiver's wait after the sender's end.
const DEFAULT_LINGER: Dur = Dur::from_secs(10);

/// A negative duration reads as "not a number" to the unit parser; say what it is.
fn refuse_negative(t: &toml::Table, key: &str) -> Result<(), SpecError> {
    for k in ["interval", "duration", "linger", "rate", "payload"] {
        let neg = match t.get(k) {
            Some(toml::Value::String(s)) => s.trim_start().starts_with('-'),
            Some(toml::Value::Integer(i)) => *i < 0,
            Some(toml::Value::Float(f)) => *f < 0.0,
            _ => false,
        };
        if neg {
            return Err(err(
                format!("{key}.{k}"),
                format!("{} is negative: allowed more than 0", t[k]),
            ));
        }
    }
    Ok(())
}

impl Params {
    pub fn parse(t: toml::Table, ctx: &SpecCtx) -> Result<Params, SpecError> {
        let key = &ctx.key;
        refuse_negative(&t, key)?;
        let s: Spec = from_table(t, key)?;
        let max = ctx.client_mtu.saturating_sub(HEADERS);
        let min = Record::LEN as u64;
        if s.payload.0 < min || s.payload.0 > u64::from(max) {
            return Err(err(
                format!("{key}.payload"),
                format!(
                    "{} B: allowed {min} B (the sequence record) to {max} B (the sending host's MTU of {} B less {HEADERS} B of IP and UDP headers)",
                    s.payload.0, ctx.client_mtu
                ),
            ));
        }
        let payload = s.payload.0 as u32;
        let interval = match (s.interval, s.rate) {
            (Some(_), Some(_)) => {
                return Err(err(
                    format!("{key}.rate"),
                    "give either interval or rate, not both",
                ))
            }
            (None, None) => {
                return Err(err(
                    format!("{key}.interval"),
                    "missing: give interval (e.g. \"128ms\") or rate (payload bits per second, e.g. \"32kbit\")",
                ))
            }
            (Some(i), None) => i,
            // The interval that carries `rate` payload bits per second, to the nearest ns.
            (None, Some(r)) if r.0 == 0 => {
                return Err(err(format!("{key}.rate"), "0: allowed more than 0 bit/s"))
            }
            (None, Some(r)) => {
                let ns = (u128::from(payload) * 8 * 1_000_000_000 + u128::from(r.0) / 2)
                    / u128::from(r.0);
                Dur(u64::try_from(ns).unwrap_or(u64::MAX))
            }
        };
        if interval == Dur::ZERO {
            return Err(err(
                format!(
                    "{key}.{}",
                    if s.rate.is_some() { "rate" } else { "interval" }
                ),
                "an interval of 0: allowed more than 0 (one datagram per interval)",
            ));
        }
        if s.duration == Dur::ZERO {
            return Err(err(format!("{key}.duration"), "0s: allowed more than 0s"));
        }
        Ok(Params {
            payload,
            interval,
            duration: s.duration,
            linger: s.linger.unwrap_or(DEFAULT_LINGER),
        })
    }

    /// Datagrams the client sends: one at every multiple of the interval before the duration.
    pub fn count(&self) -> u64 {
        self.duration.0.div_ceil(self.interval.0)
    }

    /// When the server stops listening, relative to the run's start.
    pub fn server_end(&self, start: Dur) -> Dur {
        start + self.duration + self.linger
    }

    pub(crate) fn programs(&self, f: &FlowCtx, epoch: u64, logs: [&Path; 2]) -> [Vec<String>; 2] {
        let server = SocketAddrV4::new(f.server, f.port).to_string();
        let common = |log: &Path| {
            vec![
                "--log".to_string(),
                log.display().to_string(),
                "--epoch".into(),
                epoch.to_string(),
            ]
        };
        let mut recv = vec![
            "cbr-recv".to_string(),
            "--listen".into(),
            server.clone(),
            "--until".into(),
            self.server_end(f.start).as_nanos().to_string(),
        ];
        recv.extend(common(logs[0]));
        let mut send = vec![
            "cbr-send".to_string(),
            "--to".into(),
            server,
            "--from-port".into(),
            f.client_port().to_string(),
            "--payload".into(),
            self.payload.to_string(),
            "--interval".into(),
            self.interval.as_nanos().to_string(),
            "--count".into(),
            self.count().to_string(),
            "--start-at".into(),
            f.start.as_nanos().to_string(),
        ];
        send.extend(common(logs[1]));
        [recv, send]
    }
}

/// The client end: a datagram at start + k·interval for every k below the count.
pub struct Sender {
    p: Params,
    remote: SocketAddrV4,
    local_port: u16,
    sock: Option<SockId>,
    start: Option<Time>,
    sent: u64,
}

impl Sender {
    pub fn new(p: &Params, f: &FlowCtx) -> Sender {
        Sender {
            p: p.clone(),
            remote: SocketAddrV4::new(f.server, f.port),
            local_port: f.client_port(),
            sock: None,
            start: None,
            sent: 0,
        }
    }

    fn send(&mut self, now: Time, net: &mut dyn Net) {
        let (Some(sock), Ok(seq)) = (self.sock, u32::try_from(self.sent)) else {
            return;
        };
        let head = Record {
            seq,
            sent_ns: now.0,
        }
        .encode();
        net.udp_send(now, sock, self.remote, &head, self.p.payload);
        self.sent += 1;
    }
}

impl Endpoint for Sender {
    fn start(&mut self, now: Time, net: &mut dyn Net) {
        self.sock = Some(net.udp_bind(self.local_port));
        self.start = Some(now);
        self.send(now, net);
    }

    fn on_event(&mut self, _now: Time, _ev: SockEvent, _net: &mut dyn Net) {}

    fn poll_timeout(&self) -> Option<Time> {
        let start = self.start?;
        (self.sent < self.p.count()).then(|| start + Dur(self.p.interval.0 * self.sent))
    }

    fn handle_timeout(&mut self, now: Time, net: &mut dyn Net) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.send(now, net);
        }
    }

    fn status(&self) -> Status {
        if self.start.is_some() && self.sent >= self.p.count() {
            Status::Done
        } else {
            Status::Running
        }
    }

    fn report(&self, r: &mut FlowReport) {
        r.bytes = self.sent * u64::from(self.p.payload);
        r.reliable = false;
        r.start = self.start;
    }
}

/// The server end: counts datagrams until `linger` after the client's last send.
pub struct Receiver {
    port: u16,
    until: Time,
    received: u64,
    delivered: u64,
    first: Option<Time>,
    last: Option<Time>,
    end: Option<Time>,
}

impl Receiver {
    pub fn new(p: &Params, f: &FlowCtx) -> Receiver {
        Receiver {
            port: f.port,
            until: Time::ZERO + p.server_end(f.start),
            received: 0,
            delivered: 0,
            first: None,
            last: None,
            end: None,
        }
    }
}

impl Endpoint for Receiver {
    fn start(&mut self, _now: Time, net: &mut dyn Net) {
        net.udp_bind(self.port);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, _net: &mut dyn Net) {
        if let SockEvent::Datagram { len, .. } = ev {
            self.received += 1;
            self.delivered += u64::from(len);
            self.first.get_or_insert(now);
            self.last = Some(now);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.end.is_none().then_some(self.until)
    }

    fn handle_timeout(&mut self, now: Time, _net: &mut dyn Net) {
        if now >= self.until {
            self.end = Some(now);
        }
    }

    fn status(&self) -> Status {
        if self.end.is_some() {
            Status::Done
        } else {
            Status::Running
        }
    }

    fn report(&self, r: &mut FlowReport) {
        r.first_byte = self.first;
        r.last_byte = self.last;
        r.end = self.end;
        r.delivered = self.delivered;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> SpecCtx {
        SpecCtx {
            key: "flows[2]".into(),
            client_mtu: 576,
            start: Dur::ZERO,
            run: Dur::from_secs(300),
        }
    }

    fn parse(text: &str) -> Result<Params, SpecError> {
        Params::parse(toml::from_str(text).unwrap(), &ctx())
    }

    #[test]
    fn seed000_stream_is_512_bytes_every_128ms() {
        let by_rate = parse("payload = 512\nrate = \"32kbit\"\nduration = \"180s\"").unwrap();
        let by_interval =
            parse("payload = \"512B\"\ninterval = \"128ms\"\nduration = \"180s\"").unwrap();
        assert_eq!(by_rate, by_interval);
        assert_eq!(by_rate.interval, Dur::from_millis(128));
        assert_eq!(by_rate.linger, Dur::from_secs(10));
        // 180 s / 128 ms = 1406.25: sends at 0, 0.128, ..., 179.968 s.
        assert_eq!(by_rate.count(), 1407);
    }

    #[test]
    fn bad_parameters_name_the_key_and_what_is_allowed() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "payload = 549\ninterval = \"1s\"\nduration = \"1s\"",
                "flows[2].payload",
                &["549", "548", "576"],
            ),
            (
                "payload = 8\ninterval = \"1s\"\nduration = \"1s\"",
                "flows[2].payload",
                &["16"],
            ),
            (
                "payload = 512\ninterval = \"0s\"\nduration = \"1s\"",
                "flows[2].interval",
                &["0"],
            ),
            (
                "payload = 512\nduration = \"1s\"",
                "flows[2].interval",
                &["missing", "rate"],
            ),
            (
                "payload = 512\ninterval = \"1s\"\nrate = \"1kbit\"\nduration = \"1s\"",
                "flows[2].rate",
                &["not both"],
            ),
            (
                "payload = 512\ninterval = \"1s\"\nduration = \"-5s\"",
                "flows[2].duration",
                &["negative"],
            ),
            (
                "payload = 512\ninterval = \"1s\"\nduration = \"0s\"",
                "flows[2].duration",
                &["0s"],
            ),
            (
                "payload = 512\ninterval = \"1s\"\nduration = \"1s\"\nbytes = 3",
                "flows[2].bytes",
                &["unknown field"],
            ),
        ];
        for (text, key, wants) in cases {
            let e = parse(text).expect_err(text);
            assert_eq!(e.key, *key, "{text}: {e}");
            for w in *wants {
                assert!(e.message.contains(w), "{text}: {e} lacks {w:?}");
            }
        }
    }

    #[test]
    fn the_record_round_trips_and_needs_its_magic() {
        let r = Record {
            seq: 0x0102_0304,
            sent_ns: 0x0a0b_0c0d_0e0f_1011,
        };
        let b = r.encode();
        assert_eq!(&b[..4], b"LHU1");
        assert_eq!(&b[4..8], &[1, 2, 3, 4]);
        assert_eq!(&b[8..], &[0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11]);
        assert_eq!(Record::decode(&b), Some(r));
        assert_eq!(Record::decode(&b[..15]), None);
        let mut other = b;
        other[0] = b'X';
        assert_eq!(Record::decode(&other), None);
    }
}
