//! `kind = "bulk"`: one TCP connection carries `bytes` bytes from the client end (the flow's
//! `from` host) to the server end, then closes: the seeds' bulk transfer. The client writes
//! everything once connected and closes; the server reads as data arrives and closes when the
//! client's FIN arrives (HTTP/1.0 style). `bytes = "unlimited"` is a greedy flow: the client
//! sends until the run ends. Real programs: `lasthop app bulk-send` / `bulk-recv`.

use crate::socket::SocketOptions;
use crate::{Endpoint, FlowCtx, FlowReport, Net, SockEvent, SockId, SpecCtx, Status};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::{ByteCount, Time};
use std::net::SocketAddrV4;
use std::path::Path;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    /// A byte count, or "unlimited".
    bytes: toml::Value,
    congestion_control: Option<String>,
    window_clamp: Option<ByteCount>,
    sndbuf: Option<ByteCount>,
    rcvbuf: Option<ByteCount>,
    nodelay: Option<bool>,
}

/// `bytes` of a greedy flow: more than any run carries, 1 PiB (the model's data is virtual; the
/// real sender stops when the emulator ends the run), and far enough from u64::MAX that no sum
/// of sequence space overflows.
pub const UNLIMITED: u64 = 1 << 50;

/// The sender's write() calls: its 64 KiB buffer, written whole each time (the emulator's
/// `bulk-send`; the model's Linux 6.18 copies the calls as the kernel does).
pub const WRITE_CALL: u64 = 64 * 1024;

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub bytes: u64,
    /// Emulation: options of both ends' sockets.
    pub socket: SocketOptions,
}

fn sock_size(key: String, v: Option<ByteCount>) -> Result<Option<u64>, SpecError> {
    match v {
        Some(ByteCount(n)) if n == 0 || n > i32::MAX as u64 => Err(err(
            key,
            format!(
                "{n} bytes is not a valid socket size: allowed 1..{}",
                i32::MAX
            ),
        )),
        Some(ByteCount(n)) => Ok(Some(n)),
        None => Ok(None),
    }
}

impl Params {
    pub fn parse(t: toml::Table, ctx: &SpecCtx) -> Result<Params, SpecError> {
        let key = &ctx.key;
        let s: Spec = from_table(t, key)?;
        let bkey = format!("{key}.bytes");
        let bytes = match &s.bytes {
            toml::Value::String(u) if u == "unlimited" => UNLIMITED,
            v => {
                lasthop_core::spec::from_value::<ByteCount>(v.clone(), &bkey)
                    .map_err(|e| {
                        err(
                            &bkey,
                            format!("{} (or \"unlimited\" for a greedy flow)", e.message),
                        )
                    })?
                    .0
            }
        };
        if bytes == 0 || bytes > UNLIMITED {
            return Err(err(
                bkey,
                format!("{bytes}: allowed 1 to {UNLIMITED} (1 PiB), or \"unlimited\""),
            ));
        }
        if let Some(cc) = &s.congestion_control {
            crate::socket::check_congestion_control(cc, &format!("{key}.congestion_control"))?;
        }
        Ok(Params {
            bytes,
            socket: SocketOptions {
                congestion_control: s.congestion_control,
                window_clamp: sock_size(format!("{key}.window_clamp"), s.window_clamp)?,
                sndbuf: sock_size(format!("{key}.sndbuf"), s.sndbuf)?,
                rcvbuf: sock_size(format!("{key}.rcvbuf"), s.rcvbuf)?,
                nodelay: s.nodelay,
                ..SocketOptions::default()
            },
        })
    }

    pub(crate) fn programs(&self, f: &FlowCtx, epoch: u64, logs: [&Path; 2]) -> [Vec<String>; 2] {
        let common = |log: &Path| {
            let mut a = self.socket.to_args();
            a.extend([
                "--log".into(),
                log.display().to_string(),
                "--epoch".into(),
                epoch.to_string(),
            ]);
            a
        };
        let server = SocketAddrV4::new(f.server, f.port).to_string();
        let mut recv = vec!["bulk-recv".to_string(), "--listen".into(), server.clone()];
        if self.bytes != UNLIMITED {
            recv.extend(["--expect".into(), self.bytes.to_string()]);
        }
        recv.extend(common(logs[0]));
        let mut send = vec![
            "bulk-send".to_string(),
            "--to".into(),
            server,
            "--bytes".into(),
            self.bytes.to_string(),
            "--start-at".into(),
            f.start.as_nanos().to_string(),
        ];
        send.extend(common(logs[1]));
        [recv, send]
    }
}

/// The client end: connect, write everything, close.
pub struct Sender {
    bytes: u64,
    remote: SocketAddrV4,
    local_port: u16,
    sock: Option<SockId>,
    start: Option<Time>,
    connected: Option<Time>,
    status: Status,
    aborted: Option<String>,
}

impl Sender {
    pub fn new(p: &Params, f: &FlowCtx) -> Sender {
        Sender {
            bytes: p.bytes,
            remote: SocketAddrV4::new(f.server, f.port),
            local_port: f.client_port(),
            sock: None,
            start: None,
            connected: None,
            status: Status::Running,
            aborted: None,
        }
    }
}

impl Endpoint for Sender {
    fn start(&mut self, now: Time, net: &mut dyn Net) {
        self.sock = Some(net.connect(now, self.remote, self.local_port));
        self.start = Some(now);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net) {
        match ev {
            SockEvent::Connected(s) => {
                self.connected = Some(now);
                net.write_calls(s, self.bytes, WRITE_CALL);
                net.close(s);
            }
            SockEvent::Closed(_) => self.status = Status::Done,
            SockEvent::Aborted(_, why) => {
                self.aborted = Some(why);
                self.status = Status::Aborted;
            }
            _ => {}
        }
    }

    fn status(&self) -> Status {
        self.status
    }

    fn report(&self, r: &mut FlowReport) {
        r.bytes = self.bytes;
        r.reliable = true;
        r.start = self.start;
        r.connected = self.connected;
        if self.aborted.is_some() {
            r.aborted.clone_from(&self.aborted);
        }
    }
}

/// The server end: listen, read everything, close when the client has closed.
pub struct Receiver {
    bytes: u64,
    port: u16,
    delivered: u64,
    first_byte: Option<Time>,
    last_byte: Option<Time>,
    end: Option<Time>,
    status: Status,
    aborted: Option<String>,
}

impl Receiver {
    pub fn new(p: &Params, f: &FlowCtx) -> Receiver {
        Receiver {
            bytes: p.bytes,
            port: f.port,
            delivered: 0,
            first_byte: None,
            last_byte: None,
            end: None,
            status: Status::Running,
            aborted: None,
        }
    }
}

impl Endpoint for Receiver {
    fn start(&mut self, _now: Time, net: &mut dyn Net) {
        net.listen(self.port);
    }

    fn on_event(&mut self, now: Time, ev: SockEvent, net: &mut dyn Net) {
        match ev {
            SockEvent::Readable(_, n) => {
                self.first_byte.get_or_insert(now);
                self.delivered += n;
                if self.delivered >= self.bytes {
                    self.last_byte = Some(now);
                }
            }
            SockEvent::PeerClosed(s) => net.close(s),
            SockEvent::Closed(_) => {
                self.end = Some(now);
                self.status = Status::Done;
            }
            SockEvent::Aborted(_, why) => {
                self.aborted = Some(why);
                self.status = Status::Aborted;
            }
            _ => {}
        }
    }

    fn status(&self) -> Status {
        self.status
    }

    fn report(&self, r: &mut FlowReport) {
        r.first_byte = self.first_byte;
        r.last_byte = self.last_byte;
        r.end = self.end;
        r.delivered = self.delivered;
        if self.aborted.is_some() {
            r.aborted.clone_from(&self.aborted);
        }
    }
}
