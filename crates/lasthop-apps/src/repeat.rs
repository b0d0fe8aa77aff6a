//! `kind = "repeat"`: repeated short transfers, as seed 004 ran them ("every flow sends 10K bytes
//! (10 packets) and closes the connection and transfer. After a pause of 250 ms, the same source
//! would 're-open' the connection (with parameters set to initial values) and send another 10K
//! bytes"). The client end (the flow's `from` host) connects, writes `bytes`, closes, and when the
//! connection is closed (the server has read everything and closed too) waits `pause` and
//! starts the next transfer on a new connection (a new socket: a fresh cwnd, ssthresh and RTT
//! estimate) from the next port of its block, until the run ends or `count` transfers are done.
//! The server end accepts every connection, reads it to the end and closes.
//!
//! Each transfer is one connection in `connections.csv`; its time is the connection's elapsed
//! time (first SYN to the last packet, at the client) and a transfer counts as done when the
//! connection is complete. Real programs: `lasthop app repeat-send` / `repeat-recv`.

use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, SockId, SpecCtx, Status};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::{ByteCount, Dur, Time};
use std::net::SocketAddrV4;
use std::path::Path;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    bytes: ByteCount,
    pause: Dur,
    count: Option<u32>,
}

/// Validated parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Payload bytes of each transfer.
    pub bytes: u64,
    /// The wait between one connection's close and the next connect.
    pub pause: Dur,
    /// At most this many transfers (the client-port block's size).
    pub count: u32,
    /// The run's length after the flow's start: no transfer starts later.
    pub window: Dur,
}

/// The most transfers a run can hold when each takes at least `pause` after the previous one.
fn most_transfers(window: Dur, pause: Dur) -> u64 {
    window.as_nanos() / pause.as_nanos().max(1) + 1
}

impl Params {
    pub fn parse(t: toml::Table, ctx: &SpecCtx) -> Result<Params, SpecError> {
        let key = &ctx.key;
        let s: Spec = from_table(t, key)?;
        if s.bytes.0 == 0 {
            return Err(err(format!("{key}.bytes"), "0: allowed 1 or more"));
        }
        if s.pause == Dur::ZERO {
            return Err(err(
                format!("{key}.pause"),
                "0s: allowed a pause longer than 0 (each transfer needs a port of its own, and a run holds at most run length / pause of them)",
            ));
        }
        let window = Dur(ctx.run.0.saturating_sub(ctx.start.0));
        let most = most_transfers(window, s.pause);
        // Client ports are 1024..65535 for every flow of the run; keep one flow's block sane.
        const MAX_PORTS: u64 = 16_384;
        let count = match s.count {
            Some(0) => return Err(err(format!("{key}.count"), "0: allowed 1 or more")),
            Some(c) => u64::from(c).min(most),
            None => most,
        };
        if count > MAX_PORTS {
            return Err(err(
                format!("{key}.pause"),
                format!(
                    "{}: up to {count} transfers fit in the run, each on its own port: allowed at most {MAX_PORTS} (a longer pause or a count)",
                    s.pause
                ),
            ));
        }
        Ok(Params {
            bytes: s.bytes.0,
            pause: s.pause,
            count: count as u32,
            window,
        })
    }

    pub fn client_ports(&self) -> u16 {
        self.count as u16
    }

    pub fn describe(&self) -> String {
        format!(
            "repeat {} B with {} pauses (at most {})",
            self.bytes, self.pause, self.count
        )
    }

    pub(crate) fn programs(&self, f: &FlowCtx, epoch: u64, logs: [&Path; 2]) -> [Vec<String>; 2] {
        let server = SocketAddrV4::new(f.server, f.port).to_string();
        let until = (f.start + self.window).as_nanos().to_string();
        let common = |log: &Path| {
            vec![
                "--log".to_string(),
                log.display().to_string(),
                "--epoch".into(),
                epoch.to_string(),
            ]
        };
        let mut recv = vec![
            "repeat-recv".to_string(),
            "--listen".into(),
            server.clone(),
            "--until".into(),
            until.clone(),
        ];
        recv.extend(common(logs[0]));
        let mut send = vec![
            "repeat-send".to_string(),
            "--to".into(),
            server,
            "--bytes".into(),
            self.bytes.to_string(),
            "--pause".into(),
            self.pause.as_nanos().to_string(),
            "--count".into(),
            self.count.to_string(),
            "--start-at".into(),
            f.start.as_nanos().to_string(),
            "--until".into(),
            until,
        ];
        send.extend(common(logs[1]));
        [recv, send]
    }
}

/// The client end: transfer after transfer, each on a new connection.
pub struct Client {
    p: Params,
    remote: SocketAddrV4,
    first_port: u16,
    /// Transfers started so far.
    started: u32,
    sock: Option<SockId>,
    /// When the next transfer starts (during a pause).
    next: Option<Time>,
    /// The run's end for this flow: no transfer starts at or after it.
    end: Time,
    first_start: Option<Time>,
    done: u32,
    status: Status,
}

impl Client {
    pub fn new(p: &Params, f: &FlowCtx) -> Client {
        Client {
            p: p.clone(),
            remote: SocketAddrV4::new(f.server, f.port),
            first_port: f.client_port(),
            started: 0,
            sock: None,
            next: None,
            end: Time::ZERO + f.start + p.window,
            first_start: None,
            done: 0,
            status: Status::Running,
        }
    }

    fn transfer(&mut self, now: Time, net: &mut dyn Net) {
        let port = self.first_port + self.started as u16;
        self.started += 1;
        self.sock = Some(net.connect(now, self.remote, port));
        self.first_start.get_or_insert(now);
    }

    /// The connection ended (closed or aborted): pause, or stop.
    fn ended(&mut self, now: Time) {
        self.sock = None;
        let at = now + self.p.pause;
        if self.started < self.p.count && at < self.end {
            self.next = Some(at);
        } else {
            self.status = Status::Done;
        }
    }
}

impl Endpoint for Client {
    fn start(&mut self, now: Time, net: &mut dyn Net) {
        self.transfer(now, net);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net) {
        match ev {
            SockEvent::Connected(s) => {
                net.write(s, self.p.bytes);
                net.close(s);
            }
            SockEvent::Closed(s) if Some(s) == self.sock => {
                self.done += 1;
                self.ended(now);
            }
            // A transfer that fails does not stop the next (seed 004 counts completed ones).
            SockEvent::Aborted(s, _) if Some(s) == self.sock => self.ended(now),
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next
    }

    fn handle_timeout(&mut self, now: Time, net: &mut dyn Net) {
        if self.next.is_some_and(|t| t <= now) {
            self.next = None;
            self.transfer(now, net);
        }
    }

    fn status(&self) -> Status {
        self.status
    }

    fn report(&self, r: &mut FlowReport) {
        r.bytes = self.p.bytes * u64::from(self.started);
        r.reliable = true;
        r.start = self.first_start;
    }
}
