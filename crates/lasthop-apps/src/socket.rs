//! The socket-like API a host offers its applications, in both directions: the calls an
//! application makes ([`Net`]) and the events it is given ([`SockEvent`]). The simulator
//! implements it over its TCP model and UDP; an application never sees packets.

use lasthop_core::spec::{err, SpecError};
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
    /// the sender wrote for real; the rest is virtual in simulation). Also an ICMP echo reply
    /// to a [`Net::ping_open`] socket: `from` holds the replying host and the echo's
    /// identifier, `len` and `head` its payload.
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
    /// Writes `bytes` more bytes on a connection in one write() call (the bytes themselves
    /// are virtual; the model's Linux 6.18 has a send buffer the call may wait in).
    fn write(&mut self, sock: SockId, bytes: u64);
    /// Writes `bytes` as consecutive write() calls of `call` bytes, the last one shorter, as
    /// the emulated application's loop does.
    fn write_calls(&mut self, sock: SockId, bytes: u64, call: u64) {
        let _ = call;
        self.write(sock, bytes);
    }
    /// Closes a connection after what was written (`shutdown` then `close`).
    fn close(&mut self, sock: SockId);
    /// A UDP socket bound to `port`.
    fn udp_bind(&mut self, port: u16) -> SockId;
    /// Sends a datagram of `len` payload bytes whose first bytes are `head` (the rest virtual).
    fn udp_send(&mut self, now: Time, sock: SockId, to: SocketAddrV4, head: &[u8], len: u32);
    /// An ICMP echo socket with identifier `ident` (a raw ICMP socket in emulation): the echo
    /// replies with this identifier come to it as [`SockEvent::Datagram`].
    fn ping_open(&mut self, ident: u16) -> SockId;
    /// Sends an ICMP echo request with sequence number `seq` and `len` payload bytes whose
    /// first bytes are `head` (the rest virtual).
    fn ping_send(&mut self, now: Time, sock: SockId, to: Ipv4Addr, seq: u16, head: &[u8], len: u32);
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
    /// `TCP_THIN_LINEAR_TIMEOUTS` (16): linear timeouts while the stream is thin.
    #[serde(default)]
    pub thin_linear_timeouts: Option<bool>,
    /// `TCP_THIN_DUPACK` (17): fast retransmit on the first duplicate ACK while thin (Linux
    /// 2.6.34 to 4.12; from 4.13 the kernel accepts the option and ignores it).
    #[serde(default)]
    pub thin_dupack: Option<bool>,
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
        if self.thin_linear_timeouts == Some(true) {
            a.push("--thin-linear-timeouts".into());
        }
        if self.thin_dupack == Some(true) {
            a.push("--thin-dupack".into());
        }
        a
    }

    /// A flow's `tcp` table (TCP model keys) as the socket options Linux has for them:
    /// `congestion_control` → `TCP_CONGESTION`, `nagle = false` → `TCP_NODELAY`,
    /// `thin_linear_timeouts` → `TCP_THIN_LINEAR_TIMEOUTS`, `thin_dupack` → `TCP_THIN_DUPACK`.
    /// Any other key is an error naming it (`key.KEY`): Linux sets it per host, not per socket.
    pub fn from_tcp_table(t: &toml::Table, key: &str) -> Result<SocketOptions, SpecError> {
        let mut o = SocketOptions::default();
        for (k, v) in t {
            let k2 = format!("{key}.{k}");
            let flag = || match v {
                toml::Value::Boolean(b) => Ok(*b),
                other => Err(err(&k2, format!("{other}: allowed true or false"))),
            };
            match k.as_str() {
                "congestion_control" => match v {
                    toml::Value::String(cc) => {
                        check_congestion_control(cc, &k2)?;
                        o.congestion_control = Some(cc.clone());
                    }
                    other => {
                        return Err(err(
                            &k2,
                            format!("{other}: allowed a congestion control name such as \"cubic\""),
                        ))
                    }
                },
                "nagle" => o.nodelay = Some(!flag()?),
                "thin_linear_timeouts" => o.thin_linear_timeouts = Some(flag()?),
                "thin_dupack" => o.thin_dupack = Some(flag()?),
                _ => {
                    return Err(err(
                        &k2,
                        "Linux has no socket option for this TCP model key, so emulation cannot set it per flow: set it on the host instead ([hosts.NAME.sysctl], e.g. tcp_sack = 0, or [hosts.NAME.route]); per flow emulation takes congestion_control, nagle, thin_linear_timeouts and thin_dupack",
                    ))
                }
            }
        }
        Ok(o)
    }
}

/// Checks the name of a Linux congestion control module (`TCP_CONGESTION` takes at most 15
/// bytes); whether the kernel has it is the emulator's check.
pub fn check_congestion_control(cc: &str, key: &str) -> Result<(), SpecError> {
    if cc.is_empty() || cc.len() > 15 || !cc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(err(
            key,
            format!("invalid name {cc:?}: a Linux congestion control module such as \"reno\" or \"cubic\""),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(t: &str) -> Result<SocketOptions, String> {
        SocketOptions::from_tcp_table(&t.parse().unwrap(), "flows[2].tcp")
            .map_err(|e| e.to_string())
    }

    #[test]
    fn tcp_table_keys_become_socket_options() {
        let o = opts("congestion_control = \"cubic\"\nnagle = false\nthin_linear_timeouts = true\nthin_dupack = true").unwrap();
        assert_eq!(o.congestion_control.as_deref(), Some("cubic"));
        assert_eq!(
            (o.nodelay, o.thin_linear_timeouts, o.thin_dupack),
            (Some(true), Some(true), Some(true))
        );
        assert_eq!(
            o.to_args(),
            [
                "--congestion-control",
                "cubic",
                "--nodelay",
                "--thin-linear-timeouts",
                "--thin-dupack"
            ]
        );
        // Nagle on is Linux's default: no argument.
        assert!(opts("nagle = true").unwrap().to_args().is_empty());
        assert_eq!(opts("").unwrap(), SocketOptions::default());
    }

    #[test]
    fn keys_without_a_socket_option_are_named() {
        let e = opts("nagle = false\ndelayed_ack = \"off\"").unwrap_err();
        assert!(
            e.contains("flows[2].tcp.delayed_ack") && e.contains("sysctl"),
            "{e}"
        );
        let e = opts("thin_dupack = 1").unwrap_err();
        assert!(
            e.contains("flows[2].tcp.thin_dupack") && e.contains("true or false"),
            "{e}"
        );
        let e = opts("congestion_control = \"no such\"").unwrap_err();
        assert!(e.contains("flows[2].tcp.congestion_control"), "{e}");
    }
}
