//! `kind = "ping"`: a latency probe, as `ping -i INTERVAL -s SIZE` measures round-trip time
//! under load. The client end (the flow's `from` host) sends an ICMP echo request of `size`
//! payload bytes every `interval` from its start for `duration` (by default until the run's
//! end); the server host's stack answers each with an echo reply, as every Linux host does
//! (`net.ipv4.icmp_echo_ignore_all = 0`, the default), so the server end runs no program.
//!
//! A request's identifier is the flow's `port` (so the analyser finds the flow, as it finds a
//! UDP flow by its server port) and its sequence number the probe's number modulo 2^16. Its
//! payload begins with a 16-byte record, big-endian: the magic `LHP1`, the probe's number (u32,
//! from 0) and the send time in ns (u64, run-relative); a reply carries the request's payload
//! back. In simulation only the record is real (the rest of the payload is virtual zeros); in
//! emulation the whole message is. The round-trip time of a probe is the time between its
//! request and its reply in the client host's capture (`pings.csv`), the same in both modes.
//! Real programs: `lasthop app ping-send` (a raw ICMP socket) and `ping-recv` (which only
//! checks that the server host answers echoes).

use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, SockId, SpecCtx, Status};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::{ByteCount, Dur, Time};
use std::net::Ipv4Addr;
use std::path::Path;

/// The record at the head of every echo payload: the `cbr` record's layout (its bytes are
/// written and read there) under the probes' own magic, so a probe is never taken for a
/// datagram of a UDP stream or the other way round.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Record {
    /// The probe's number, from 0 (the echo's sequence number is its low 16 bits).
    pub seq: u32,
    /// Send time, ns since the run's start.
    pub sent_ns: u64,
}

impl Record {
    pub const MAGIC: [u8; 4] = *b"LHP1";
    pub const LEN: usize = crate::cbr::Record::LEN;

    pub fn encode(&self) -> [u8; Record::LEN] {
        crate::cbr::Record {
            seq: self.seq,
            sent_ns: self.sent_ns,
        }
        .encode_with(Record::MAGIC)
    }

    /// The record at the head of an echo payload, if it has one.
    pub fn decode(payload: &[u8]) -> Option<Record> {
        crate::cbr::Record::decode_with(Record::MAGIC, payload).map(|r| Record {
            seq: r.seq,
            sent_ns: r.sent_ns,
        })
    }
}

/// IPv4 and ICMP echo headers: what a probe adds to its payload on the link.
pub const HEADERS: u32 = 28;

/// iputils `ping`'s defaults: 56 payload bytes (84 on the wire), one probe a second.
pub const DEFAULT_SIZE: u32 = 56;
pub const DEFAULT_INTERVAL: Dur = Dur::from_secs(1);
/// How long the client waits for the replies after its last request (iputils' `MAXWAIT`, 10 s,
/// is the most `ping -c` waits for a last reply).
pub const DEFAULT_LINGER: Dur = Dur::from_secs(10);

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    interval: Option<Dur>,
    size: Option<ByteCount>,
    duration: Option<Dur>,
    linger: Option<Dur>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// ICMP payload bytes per probe (`ping -s`).
    pub size: u32,
    pub interval: Dur,
    /// How long the client sends.
    pub duration: Dur,
    /// How long the client waits for replies after its last request.
    pub linger: Dur,
}

impl Params {
    pub fn parse(t: toml::Table, ctx: &SpecCtx) -> Result<Params, SpecError> {
        let key = &ctx.key;
        for k in ["interval", "duration", "linger", "size"] {
            if let Some(toml::Value::String(s)) = t.get(k) {
                if s.trim_start().starts_with('-') {
                    return Err(err(
                        format!("{key}.{k}"),
                        format!("{s:?} is negative: allowed more than 0"),
                    ));
                }
            }
        }
        let s: Spec = from_table(t, key)?;
        let size = match s.size {
            None => DEFAULT_SIZE,
            Some(b) => {
                let max = ctx.client_mtu.saturating_sub(HEADERS);
                let min = Record::LEN as u64;
                if b.0 < min || b.0 > u64::from(max) {
                    return Err(err(
                        format!("{key}.size"),
                        format!(
                            "{} B: allowed {min} B (the probe's record) to {max} B (the sending host's MTU of {} B less {HEADERS} B of IP and ICMP headers)",
                            b.0, ctx.client_mtu
                        ),
                    ));
                }
                b.0 as u32
            }
        };
        let interval = s.interval.unwrap_or(DEFAULT_INTERVAL);
        if interval == Dur::ZERO {
            return Err(err(
                format!("{key}.interval"),
                "0s: allowed more than 0 (one probe per interval, e.g. \"10ms\")",
            ));
        }
        let duration = match s.duration {
            Some(d) if d == Dur::ZERO => {
                return Err(err(format!("{key}.duration"), "0s: allowed more than 0s"))
            }
            Some(d) => d,
            // Until the run's end.
            None if ctx.run > ctx.start => Dur(ctx.run.0 - ctx.start.0),
            None => {
                return Err(err(
                    format!("{key}.start"),
                    format!(
                        "{}: at or after the run's end ({}), so a probe without a duration sends nothing",
                        ctx.start, ctx.run
                    ),
                ))
            }
        };
        Ok(Params {
            size,
            interval,
            duration,
            linger: s.linger.unwrap_or(DEFAULT_LINGER),
        })
    }

    /// Probes the client sends: one at every multiple of the interval before the duration.
    pub fn count(&self) -> u64 {
        self.duration.0.div_ceil(self.interval.0)
    }

    pub fn describe(&self) -> String {
        format!(
            "ping {} B every {} for {}",
            self.size, self.interval, self.duration
        )
    }

    pub(crate) fn programs(&self, f: &FlowCtx, epoch: u64, logs: [&Path; 2]) -> [Vec<String>; 2] {
        let common = |log: &Path| {
            vec![
                "--log".to_string(),
                log.display().to_string(),
                "--epoch".into(),
                epoch.to_string(),
            ]
        };
        let mut recv = vec!["ping-recv".to_string()];
        recv.extend(common(logs[0]));
        let mut send = vec![
            "ping-send".to_string(),
            "--to".into(),
            f.server.to_string(),
            "--ident".into(),
            f.port.to_string(),
            "--size".into(),
            self.size.to_string(),
            "--interval".into(),
            self.interval.as_nanos().to_string(),
            "--count".into(),
            self.count().to_string(),
            "--linger".into(),
            self.linger.as_nanos().to_string(),
            "--start-at".into(),
            f.start.as_nanos().to_string(),
        ];
        send.extend(common(logs[1]));
        [recv, send]
    }
}

/// The client end: an echo request at start + k·interval for every k below the count; done
/// when every reply came or `linger` after the last request.
pub struct Prober {
    p: Params,
    server: Ipv4Addr,
    ident: u16,
    sock: Option<SockId>,
    start: Option<Time>,
    sent: u64,
    replies: u64,
    first_reply: Option<Time>,
    last_reply: Option<Time>,
    end: Option<Time>,
}

impl Prober {
    pub fn new(p: &Params, f: &FlowCtx) -> Prober {
        Prober {
            p: p.clone(),
            server: f.server,
            ident: f.port,
            sock: None,
            start: None,
            sent: 0,
            replies: 0,
            first_reply: None,
            last_reply: None,
            end: None,
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
        net.ping_send(now, sock, self.server, seq as u16, &head, self.p.size);
        self.sent += 1;
    }

    fn next_send(&self) -> Option<Time> {
        let start = self.start?;
        (self.sent < self.p.count()).then(|| start + Dur(self.p.interval.0 * self.sent))
    }

    /// When the client stops waiting for replies: `linger` after its last request.
    fn give_up(&self) -> Option<Time> {
        let start = self.start?;
        let last = start + Dur(self.p.interval.0 * self.p.count().saturating_sub(1));
        (self.end.is_none() && self.sent >= self.p.count()).then_some(last + self.p.linger)
    }
}

impl Endpoint for Prober {
    fn start(&mut self, now: Time, net: &mut dyn Net) {
        self.sock = Some(net.ping_open(self.ident));
        self.start = Some(now);
        self.send(now, net);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, _net: &mut dyn Net) {
        if let SockEvent::Datagram { head, .. } = ev {
            if Record::decode(&head).is_some() {
                self.replies += 1;
                self.first_reply.get_or_insert(now);
                self.last_reply = Some(now);
                if self.sent >= self.p.count() && self.replies >= self.sent {
                    self.end.get_or_insert(now);
                }
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next_send().or_else(|| self.give_up())
    }

    fn handle_timeout(&mut self, now: Time, net: &mut dyn Net) {
        if self.next_send().is_some_and(|t| t <= now) {
            self.send(now, net);
        } else if self.give_up().is_some_and(|t| t <= now) {
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
        r.bytes = self.sent * u64::from(self.p.size);
        r.reliable = false;
        r.start = self.start;
        r.first_byte = self.first_reply;
        r.last_byte = self.last_reply;
        r.end = self.end;
        r.delivered = self.replies * u64::from(self.p.size);
    }
}

/// The server end: the host's stack answers the echoes; nothing to run.
pub struct Answerer;

impl Endpoint for Answerer {
    fn start(&mut self, _now: Time, _net: &mut dyn Net) {}
    fn on_event(&mut self, _now: Time, _ev: SockEvent, _net: &mut dyn Net) {}
    fn status(&self) -> Status {
        Status::Done
    }
    fn report(&self, _r: &mut FlowReport) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> SpecCtx {
        SpecCtx {
            key: "flows[1]".into(),
            client_mtu: 576,
            start: Dur::from_secs(2),
            run: Dur::from_secs(60),
        }
    }

    fn parse(text: &str) -> Result<Params, SpecError> {
        Params::parse(toml::from_str(text).unwrap(), &ctx())
    }

    #[test]
    fn defaults_are_pings_and_run_to_the_end() {
        let p = parse("").unwrap();
        assert_eq!((p.size, p.interval), (56, Dur::from_secs(1)));
        // From its start at 2 s to the run's end at 60 s: probes at 2, 3, ..., 59 s.
        assert_eq!(p.duration, Dur::from_secs(58));
        assert_eq!(p.count(), 58);
        let p = parse("interval = \"10ms\"\nduration = \"1s\"\nsize = 16").unwrap();
        assert_eq!((p.count(), p.size), (100, 16));
        // 1.005 s / 10 ms: a probe at 1.000 s too.
        assert_eq!(
            parse("interval = \"10ms\"\nduration = \"1005ms\"")
                .unwrap()
                .count(),
            101
        );
    }

    #[test]
    fn bad_parameters_name_the_key_and_what_is_allowed() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("size = 549", "flows[1].size", &["549", "548", "576"]),
            ("size = 8", "flows[1].size", &["16"]),
            ("interval = \"0s\"", "flows[1].interval", &["0s"]),
            ("interval = \"-1s\"", "flows[1].interval", &["negative"]),
            ("duration = \"0s\"", "flows[1].duration", &["0s"]),
            ("bytes = 3", "flows[1].bytes", &["unknown field"]),
        ];
        for (text, key, wants) in cases {
            let e = parse(text).expect_err(text);
            assert_eq!(e.key, *key, "{text}: {e}");
            for w in *wants {
                assert!(e.message.contains(w), "{text}: {e} lacks {w:?}");
            }
        }
        let late = SpecCtx {
            start: Dur::from_secs(60),
            ..ctx()
        };
        let e = Params::parse(toml::Table::new(), &late).unwrap_err();
        assert_eq!(e.key, "flows[1].start", "{e}");
    }

    #[test]
    fn the_record_round_trips_and_needs_its_magic() {
        let r = Record {
            seq: 70_000,
            sent_ns: 1_500_000_000,
        };
        let b = r.encode();
        assert_eq!(&b[..4], b"LHP1");
        assert_eq!(Record::decode(&b), Some(r));
        // A CBR record is not a probe's.
        let cbr = crate::cbr::Record { seq: 1, sent_ns: 2 }.encode();
        assert_eq!(Record::decode(&cbr), None);
        assert_eq!(Record::decode(&b[..15]), None);
    }
}
