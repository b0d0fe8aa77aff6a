//! The socket-like API a host offers its applications, in both directions: the calls an
//! application makes ([`Net`]) and the events it is given ([`SockEvent`]). The simulator
//! implements it over its TCP model and UDP; an application never sees packets.

use lasthop_core::Time;
use std::net::{Ipv4Addr, SocketAddrV4};

/// A socket of one host, as its applications name it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct SockId(pub u32);

/// What a host's sockets tell an application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SockEvent {
    /// A connection this application opened completed its handshake (it is writable).
    Connected(SockId),
    /// A listening socket accepted a connection; the new socket's own events follow.
    Accepted { listener: SockId, sock: SockId },
    /// This many more bytes arrived in order and were read.
    Readable(SockId, u64),
    /// The peer closed its direction (its FIN was read): no more data will come.
    PeerClosed(SockId),
    /// The connection is closed in both directions.
    Closed(SockId),
    /// The connection was reset or gave up (the reason, for the report).
    Aborted(SockId, String),
    /// A UDP datagram arrived: its length (UDP payload) and the head of its payload (the bytes
    /// the sender wrote for real; the rest is virtual in simulation).
    Datagram {
        sock: SockId,
        from: SocketAddrV4,
        len: u32,
        head: Vec<u8>,
    },
}

/// The calls an application makes on its host's sockets.
pub trait Net {
    /// The host's address.
    fn addr(&self) -> Ipv4Addr;
    /// Opens a TCP connection from `local_port` to `remote`; [`SockEvent::Connected`] follows.
    fn connect(&mut self, now: Time, remote: SocketAddrV4, local_port: u16) -> SockId;
    /// Accepts TCP connections to `port`; each comes as [`SockEvent::Accepted`].
    fn listen(&mut self, port: u16) -> SockId;
    /// The remote address of a connection (`getpeername`).
    fn peer(&self, sock: SockId) -> Option<SocketAddrV4>;
    /// Queues `bytes` more bytes on a connection (the model's send buffer has no limit; the
    /// bytes themselves are virtual).
    fn write(&mut self, sock: SockId, bytes: u64);
    /// Closes a connection after what was written (`shutdown` then `close`).
    fn close(&mut self, sock: SockId);
    /// A UDP socket bound to `port`.
    fn udp_bind(&mut self, port: u16) -> SockId;
    /// Sends a datagram of `len` payload bytes whose first bytes are `head` (the rest virtual).
    fn udp_send(&mut self, now: Time, sock: SockId, to: SocketAddrV4, head: &[u8], len: u32);
}

/// Options of a real TCP socket (emulation: set by the workload programs with setsockopt; the
/// model's counterparts are the host's `tcp` switches).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketOptions {
    /// `TCP_CONGESTION`: a Linux congestion control module such as "reno" or "cubic".
    pub congestion_control: Option<String>,
    /// `TCP_WINDOW_CLAMP`, bytes.
    pub window_clamp: Option<u64>,
    /// `SO_SNDBUF`, bytes.
    pub sndbuf: Option<u64>,
    /// `SO_RCVBUF`, bytes.
    pub rcvbuf: Option<u64>,
    /// `TCP_NODELAY` (Nagle off).
    pub nodelay: Option<bool>,
}

impl SocketOptions {
    /// The `lasthop app` arguments that set these options.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![];
        if let Some(cc) = &self.congestion_control {
            a.extend(["--congestion-control".into(), cc.clone()]);
        }
        for (flag, v) in [
            ("--window-clamp", self.window_clamp),
            ("--sndbuf", self.sndbuf),
            ("--rcvbuf", self.rcvbuf),
        ] {
            if let Some(v) = v {
                a.extend([flag.to_string(), v.to_string()]);
            }
        }
        if self.nodelay == Some(true) {
            a.push("--nodelay".into());
        }
        a
    }
}
