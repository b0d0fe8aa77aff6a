//! The sockets of one simulated host: its TCP model (`lasthop_tcp::Host`), UDP and ICMP echo,
//! behind the socket-like API its applications use ([`lasthop_apps::Net`]). Like Linux, the
//! host answers every ICMP echo request addressed to it at once, with no application. A socket belongs to one
//! application end (its owner), which is given the socket's events.
//!
//! Per-flow TCP options (a flow's `tcp` table): an application end may have its own TCP
//! configuration ([`Stack::set_owner_config`]), as a Linux socket option acts on the socket it
//! is set on. Its connections then live in a TCP model host of their own with that
//! configuration and the same address; packets find theirs by connection, then by listening
//! port. Such hosts share nothing with the host's own (per-destination metrics, seed 001's
//! shared window). A stack without per-flow options has only its own host and works as before.

use lasthop_apps::{Net, SockEvent, SockId};
use lasthop_core::rng::Rng;
use lasthop_core::wire::{self, build_ipv4_icmp_echo, build_ipv4_udp};
use lasthop_core::{Packet, Stream, Time};
use lasthop_tcp::{ConnKey, Event as TcpEvent, Host as TcpHost, TcpConfig};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddrV4};

enum Kind {
    /// A connection, and the TCP model host it lives in (0 the host's own, k `alt[k - 1]`).
    Conn(ConnKey, usize),
    Listener,
    Udp {
        port: u16,
        ip_id: u16,
    },
    /// An ICMP echo socket (`ping`): its identifier.
    Ping(u16),
}

struct Sock {
    kind: Kind,
    /// The application end the socket belongs to.
    owner: usize,
}

pub struct Stack {
    pub tcp: TcpHost,
    /// TCP model hosts with a flow's own configuration, one per distinct configuration.
    alt: Vec<(TcpConfig, TcpHost)>,
    /// Application ends with their own configuration: the model host they use.
    owner_host: FxHashMap<usize, usize>,
    /// Connections and listening ports in a host other than the host's own.
    conn_host: FxHashMap<ConnKey, usize>,
    port_host: FxHashMap<u16, usize>,
    socks: Vec<Sock>,
    by_conn: FxHashMap<ConnKey, SockId>,
    listeners: FxHashMap<u16, SockId>,
    udp_ports: FxHashMap<u16, SockId>,
    /// ICMP echo sockets by identifier.
    pings: FxHashMap<u16, SockId>,
    /// The IP identification of the host's ICMP messages (Linux: one counter per socket or
    /// per destination; the simulator's datagrams carry no meaning in it).
    icmp_ip_id: u16,
    /// Datagrams (UDP and ICMP) sent and not yet handed to the access link.
    udp_out: VecDeque<Packet>,
}

impl Stack {
    pub fn new(tcp: TcpHost) -> Stack {
        Stack {
            tcp,
            alt: Vec::new(),
            owner_host: FxHashMap::default(),
            conn_host: FxHashMap::default(),
            port_host: FxHashMap::default(),
            socks: Vec::new(),
            by_conn: FxHashMap::default(),
            listeners: FxHashMap::default(),
            udp_ports: FxHashMap::default(),
            pings: FxHashMap::default(),
            icmp_ip_id: 0,
            udp_out: VecDeque::new(),
        }
    }

    /// The socket API as application end `owner` sees it; `iss` gives the initial sequence
    /// numbers of the connections it opens.
    pub fn net<'a>(&'a mut self, owner: usize, iss: &'a mut Stream) -> HostNet<'a> {
        HostNet {
            stack: self,
            owner,
            iss,
        }
    }

    /// Application end `owner`'s connections use `cfg` instead of the host's configuration.
    pub fn set_owner_config(&mut self, owner: usize, cfg: TcpConfig, tracing: bool) {
        let k = match self.alt.iter().position(|(c, _)| *c == cfg) {
            Some(i) => i + 1,
            None => {
                let mut h = TcpHost::new(self.tcp.addr(), cfg.clone());
                h.set_tracing(tracing);
                self.alt.push((cfg, h));
                self.alt.len()
            }
        };
        self.owner_host.insert(owner, k);
    }

    fn host_mut(&mut self, k: usize) -> &mut TcpHost {
        match k {
            0 => &mut self.tcp,
            k => &mut self.alt[k - 1].1,
        }
    }

    /// Every TCP model host of the stack: its own, then those of per-flow configurations.
    pub fn tcp_hosts_mut(&mut self) -> impl Iterator<Item = &mut TcpHost> {
        std::iter::once(&mut self.tcp).chain(self.alt.iter_mut().map(|(_, h)| h))
    }

    /// Runs the due timers of every TCP model host.
    pub fn handle_timeout(&mut self, now: Time) {
        for h in self.tcp_hosts_mut() {
            h.handle_timeout(now);
        }
    }

    /// The earliest timer of any TCP model host.
    pub fn poll_timeout(&self) -> Option<Time> {
        let alt = self.alt.iter().filter_map(|(_, h)| h.poll_timeout());
        self.tcp.poll_timeout().into_iter().chain(alt).min()
    }

    fn add(&mut self, kind: Kind, owner: usize) -> SockId {
        self.socks.push(Sock { kind, owner });
        SockId(self.socks.len() as u32 - 1)
    }

    fn conn(&mut self, s: SockId) -> Option<&mut lasthop_tcp::Connection> {
        match self.socks.get(s.0 as usize)?.kind {
            Kind::Conn(key, k) => self.host_mut(k).conn_mut(&key),
            _ => None,
        }
    }

    /// The pending TCP events as socket events, each with the application end it is for, in
    /// connection key order. A connection accepted on a listening port becomes a socket of the
    /// listener's owner, announced by [`SockEvent::Accepted`] before its own events.
    pub fn poll_events(&mut self, out: &mut Vec<(usize, SockEvent)>) {
        // The socket tables are fields apart from the TCP model, so they are borrowed beside it.
        let (socks, by_conn, listeners, conn_host) = (
            &mut self.socks,
            &mut self.by_conn,
            &self.listeners,
            &mut self.conn_host,
        );
        let alt = self.alt.iter_mut().map(|(_, h)| h);
        for (k, host) in std::iter::once(&mut self.tcp).chain(alt).enumerate() {
            host.drain_events(|key, ev| {
                let sock = match by_conn.get(key) {
                    Some(&s) => s,
                    None => {
                        let Some(&listener) = listeners.get(&key.0.port()) else {
                            return; // a connection no application asked for
                        };
                        let owner = socks[listener.0 as usize].owner;
                        socks.push(Sock {
                            kind: Kind::Conn(*key, k),
                            owner,
                        });
                        let s = SockId(socks.len() as u32 - 1);
                        by_conn.insert(*key, s);
                        if k != 0 {
                            conn_host.insert(*key, k);
                        }
                        out.push((owner, SockEvent::Accepted { listener, sock: s }));
                        s
                    }
                };
                let owner = socks[sock.0 as usize].owner;
                out.push((
                    owner,
                    match ev {
                        TcpEvent::Connected => SockEvent::Connected(sock),
                        TcpEvent::Delivered(n) => SockEvent::Readable(sock, n),
                        TcpEvent::PeerFin => SockEvent::PeerClosed(sock),
                        TcpEvent::Closed => SockEvent::Closed(sock),
                        TcpEvent::Aborted(why) => SockEvent::Aborted(sock, format!("{why:?}")),
                    },
                ));
            });
        }
    }

    /// A packet that arrived at this host: a datagram for a bound UDP port becomes an event of
    /// its owner; anything else goes to the TCP model.
    pub fn receive(&mut self, now: Time, p: &Packet) -> Option<(usize, SockEvent)> {
        if p.flow.proto == wire::PROTO_ICMP {
            return self.receive_icmp(p);
        }
        if p.flow.proto != 17 {
            let k = self.tcp_host_of(p);
            self.host_mut(k).handle_packet(now, p);
            return None;
        }
        let &sock = self.udp_ports.get(&p.flow.dport)?;
        let IpAddr::V4(src) = p.flow.src else {
            return None;
        };
        let ihl = usize::from(p.data.first()? & 0x0f) * 4;
        let head = p.data.get(ihl + 8..).unwrap_or(&[]).to_vec();
        let len = p.wire_len.saturating_sub(ihl as u32 + 8);
        Some((
            self.socks[sock.0 as usize].owner,
            SockEvent::Datagram {
                sock,
                from: SocketAddrV4::new(src, p.flow.sport),
                len,
                head,
            },
        ))
    }

    /// An ICMP message to this host: an echo request is answered at once (as Linux does, with
    /// the request's identifier, sequence number and payload), an echo reply goes to the echo
    /// socket with its identifier; anything else is dropped.
    fn receive_icmp(&mut self, p: &Packet) -> Option<(usize, SockEvent)> {
        let v = wire::parse_ip(&p.data)?;
        let (IpAddr::V4(src), IpAddr::V4(dst)) = (v.src, v.dst) else {
            return None;
        };
        let echo = wire::parse_icmp_echo(v.transport(&p.data)?)?;
        let len = v
            .datagram_len(Some(p.wire_len), p.data.len())
            .saturating_sub((v.header_len + wire::ICMP_ECHO_HEADER_LEN) as u32);
        if !echo.reply {
            let reply = build_ipv4_icmp_echo(
                dst,
                src,
                true,
                echo.ident,
                echo.seq,
                self.icmp_ip_id,
                echo.payload,
                p.wire_len,
            );
            self.icmp_ip_id = self.icmp_ip_id.wrapping_add(1);
            self.udp_out.push_back(reply);
            return None;
        }
        let &sock = self.pings.get(&echo.ident)?;
        Some((
            self.socks[sock.0 as usize].owner,
            SockEvent::Datagram {
                sock,
                from: SocketAddrV4::new(src, echo.ident),
                len,
                head: echo.payload.to_vec(),
            },
        ))
    }

    /// The TCP model host a segment is for: its connection's, else its listening port's, else
    /// the host's own.
    fn tcp_host_of(&self, p: &Packet) -> usize {
        if self.alt.is_empty() {
            return 0;
        }
        let (IpAddr::V4(dst), IpAddr::V4(src)) = (p.flow.dst, p.flow.src) else {
            return 0;
        };
        let key = (
            SocketAddrV4::new(dst, p.flow.dport),
            SocketAddrV4::new(src, p.flow.sport),
        );
        if let Some(&k) = self.conn_host.get(&key) {
            return k;
        }
        if self.tcp.conn(&key).is_some() {
            return 0;
        }
        self.port_host.get(&p.flow.dport).copied().unwrap_or(0)
    }

    /// The next packet this host sends now: datagrams first, in the order written, then TCP
    /// (the host's own connections, then those with a flow's own configuration).
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(p) = self.udp_out.pop_front() {
            return Some(p);
        }
        self.tcp_hosts_mut().find_map(|h| h.poll_transmit(now))
    }
}

/// A host's sockets as one application end sees them.
pub struct HostNet<'a> {
    stack: &'a mut Stack,
    owner: usize,
    iss: &'a mut Stream,
}

impl Net for HostNet<'_> {
    fn addr(&self) -> Ipv4Addr {
        self.stack.tcp.addr()
    }

    fn connect(&mut self, now: Time, remote: SocketAddrV4, local_port: u16) -> SockId {
        let iss = self.iss.random();
        let k = self.stack.owner_host.get(&self.owner).copied().unwrap_or(0);
        let key = self.stack.host_mut(k).connect(now, local_port, remote, iss);
        if k != 0 {
            self.stack.conn_host.insert(key, k);
        }
        let s = self.stack.add(Kind::Conn(key, k), self.owner);
        self.stack.by_conn.insert(key, s);
        s
    }

    fn listen(&mut self, port: u16) -> SockId {
        let k = self.stack.owner_host.get(&self.owner).copied().unwrap_or(0);
        self.stack.host_mut(k).listen(port);
        if k != 0 {
            self.stack.port_host.insert(port, k);
        }
        let s = self.stack.add(Kind::Listener, self.owner);
        self.stack.listeners.insert(port, s);
        s
    }

    fn peer(&self, sock: SockId) -> Option<SocketAddrV4> {
        match self.stack.socks.get(sock.0 as usize)?.kind {
            Kind::Conn((_, remote), _) => Some(remote),
            _ => None,
        }
    }

    fn write(&mut self, sock: SockId, bytes: u64) {
        if let Some(c) = self.stack.conn(sock) {
            c.send(bytes);
        }
    }

    fn write_calls(&mut self, sock: SockId, bytes: u64, call: u64) {
        if let Some(c) = self.stack.conn(sock) {
            c.send_calls(bytes, call);
        }
    }

    fn close(&mut self, sock: SockId) {
        if let Some(c) = self.stack.conn(sock) {
            c.close();
        }
    }

    fn udp_bind(&mut self, port: u16) -> SockId {
        let s = self.stack.add(Kind::Udp { port, ip_id: 0 }, self.owner);
        self.stack.udp_ports.insert(port, s);
        s
    }

    fn udp_send(&mut self, _now: Time, sock: SockId, to: SocketAddrV4, head: &[u8], len: u32) {
        let addr = self.stack.tcp.addr();
        let Some(Sock {
            kind: Kind::Udp { port, ip_id },
            ..
        }) = self.stack.socks.get_mut(sock.0 as usize)
        else {
            return;
        };
        // Linux sends UDP with DF set (path MTU discovery) and not ECN-capable.
        let head = &head[..head.len().min(len as usize)];
        let p = build_ipv4_udp(
            SocketAddrV4::new(addr, *port),
            to,
            *ip_id,
            0,
            head,
            28 + len,
        );
        *ip_id = ip_id.wrapping_add(1);
        self.stack.udp_out.push_back(p);
    }

    fn ping_open(&mut self, ident: u16) -> SockId {
        let s = self.stack.add(Kind::Ping(ident), self.owner);
        self.stack.pings.insert(ident, s);
        s
    }

    fn ping_send(
        &mut self,
        _now: Time,
        sock: SockId,
        to: Ipv4Addr,
        seq: u16,
        head: &[u8],
        len: u32,
    ) {
        let Some(Sock {
            kind: Kind::Ping(ident),
            ..
        }) = self.stack.socks.get(sock.0 as usize)
        else {
            return;
        };
        let head = &head[..head.len().min(len as usize)];
        let wire_len = wire::ICMP_ECHO_HEADER_LEN as u32 + 20 + len;
        let ip_id = self.stack.icmp_ip_id;
        self.stack.icmp_ip_id = ip_id.wrapping_add(1);
        let p = build_ipv4_icmp_echo(
            self.stack.tcp.addr(),
            to,
            false,
            *ident,
            seq,
            ip_id,
            head,
            wire_len,
        );
        self.stack.udp_out.push_back(p);
    }
}
