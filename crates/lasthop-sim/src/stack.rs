//! The sockets of one simulated host: its TCP model (`lasthop_tcp::Host`) and UDP, behind the
//! socket-like API its applications use ([`lasthop_apps::Net`]). A socket belongs to one
//! application end (its owner), which is given the socket's events.

use lasthop_apps::{Net, SockEvent, SockId};
use lasthop_core::rng::Rng;
use lasthop_core::wire::build_ipv4_udp;
use lasthop_core::{Packet, Stream, Time};
use lasthop_tcp::{ConnKey, Event as TcpEvent, Host as TcpHost};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddrV4};

enum Kind {
    Conn(ConnKey),
    Listener,
    Udp { port: u16, ip_id: u16 },
}

struct Sock {
    kind: Kind,
    /// The application end the socket belongs to.
    owner: usize,
}

pub struct Stack {
    pub tcp: TcpHost,
    socks: Vec<Sock>,
    by_conn: FxHashMap<ConnKey, SockId>,
    listeners: FxHashMap<u16, SockId>,
    udp_ports: FxHashMap<u16, SockId>,
    /// Datagrams sent and not yet handed to the access link.
    udp_out: VecDeque<Packet>,
}

impl Stack {
    pub fn new(tcp: TcpHost) -> Stack {
        Stack {
            tcp,
            socks: Vec::new(),
            by_conn: FxHashMap::default(),
            listeners: FxHashMap::default(),
            udp_ports: FxHashMap::default(),
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

    fn add(&mut self, kind: Kind, owner: usize) -> SockId {
        self.socks.push(Sock { kind, owner });
        SockId(self.socks.len() as u32 - 1)
    }

    fn conn(&mut self, s: SockId) -> Option<&mut lasthop_tcp::Connection> {
        match self.socks.get(s.0 as usize)?.kind {
            Kind::Conn(key) => self.tcp.conn_mut(&key),
            _ => None,
        }
    }

    /// The pending TCP events as socket events, each with the application end it is for, in
    /// connection key order. A connection accepted on a listening port becomes a socket of the
    /// listener's owner, announced by [`SockEvent::Accepted`] before its own events.
    pub fn poll_events(&mut self, out: &mut Vec<(usize, SockEvent)>) {
        // The socket tables are fields apart from the TCP model, so they are borrowed beside it.
        let (socks, by_conn, listeners) = (&mut self.socks, &mut self.by_conn, &self.listeners);
        self.tcp.drain_events(|key, ev| {
            let sock = match by_conn.get(key) {
                Some(&s) => s,
                None => {
                    let Some(&listener) = listeners.get(&key.0.port()) else {
                        return; // a connection no application asked for
                    };
                    let owner = socks[listener.0 as usize].owner;
                    socks.push(Sock {
                        kind: Kind::Conn(*key),
                        owner,
                    });
                    let s = SockId(socks.len() as u32 - 1);
                    by_conn.insert(*key, s);
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

    /// A packet that arrived at this host: a datagram for a bound UDP port becomes an event of
    /// its owner; anything else goes to the TCP model.
    pub fn receive(&mut self, now: Time, p: &Packet) -> Option<(usize, SockEvent)> {
        if p.flow.proto != 17 {
            self.tcp.handle_packet(now, p);
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

    /// The next packet this host sends now: datagrams first, in the order written, then TCP.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.udp_out
            .pop_front()
            .or_else(|| self.tcp.poll_transmit(now))
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
        let key = self.stack.tcp.connect(now, local_port, remote, iss);
        let s = self.stack.add(Kind::Conn(key), self.owner);
        self.stack.by_conn.insert(key, s);
        s
    }

    fn listen(&mut self, port: u16) -> SockId {
        self.stack.tcp.listen(port);
        let s = self.stack.add(Kind::Listener, self.owner);
        self.stack.listeners.insert(port, s);
        s
    }

    fn peer(&self, sock: SockId) -> Option<SocketAddrV4> {
        match self.stack.socks.get(sock.0 as usize)?.kind {
            Kind::Conn((_, remote)) => Some(remote),
            _ => None,
        }
    }

    fn write(&mut self, sock: SockId, bytes: u64) {
        if let Some(c) = self.stack.conn(sock) {
            c.send(bytes);
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
}
