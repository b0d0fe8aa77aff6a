//! A tiny wire for timeline tests: per direction a serializer (FIFO, `rate` bit/s) and a fixed
//! one-way delay, with chosen transmissions dropped. Seed 000's e0 link: 64 kbit/s, 300 ms,
//! 576-byte MTU, so a full segment takes 72 ms and a 40-byte ACK 5 ms.

#![allow(dead_code)]

use lasthop_core::{Dur, Packet, Time};
use lasthop_tcp::wire::{Segment, ACK, FIN, SYN};
use lasthop_tcp::{Connection, Event, TcpConfig};
use std::net::{Ipv4Addr, SocketAddrV4};

pub const CLIENT_ISS: u32 = 1000;
pub const SERVER_ISS: u32 = 0xffff_ff00; // wraps during the transfer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client to server (uplink).
    Up,
    /// Server to client (downlink).
    Down,
}

/// One transmission seen on the wire.
#[derive(Clone, Debug)]
pub struct Tx {
    /// When serialization starts (= when the endpoint sent it, unless the link was busy).
    pub start: Time,
    pub arrive: Time,
    pub dir: Dir,
    pub flags: u8,
    /// Data segment number (1-based, full segments of `mss` bytes), 0 for no payload.
    pub seg_no: u64,
    /// Cumulative ACK as a segment number of the peer's data (bytes acked / mss).
    pub ack_no: u64,
    pub payload: u32,
    pub wire_len: u32,
    /// This is the n-th transmission of this segment (1 = original).
    pub nth: u32,
    pub dropped: bool,
    pub sacks: Vec<(u64, u64)>,
}

pub fn ms(x: f64) -> Time {
    Time((x * 1e6).round() as u64)
}

pub struct Sim {
    pub client: Connection,
    pub server: Option<Connection>,
    server_cfg: TcpConfig,
    pub now: Time,
    rate: u64,
    delay: Dur,
    busy: [Time; 2],
    queue: Vec<(Time, u64, Dir, Packet)>,
    order: u64,
    pub log: Vec<Tx>,
    /// (dir, seg_no, nth) transmissions to drop; seg_no 0 with SYN flag means the SYN.
    pub drops: Vec<(Dir, u64, u32)>,
    pub drop_syn: Vec<u32>,
    /// Packets to drop by their index in their direction (0-based, every packet counted).
    pub drop_idx: std::collections::HashSet<(u8, usize)>,
    /// Packets to mark CE (if ECT) by their index in their direction.
    pub mark_idx: std::collections::HashSet<(u8, usize)>,
    sent_count: [usize; 2],
    pub server_sends: u64,
    /// Cached metrics given to the server endpoint when it is created (CBI).
    pub server_metrics: Option<lasthop_tcp::Metrics>,
    pub server_closes: bool,
    pub client_closes_on_fin: bool,
    pub client_events: Vec<(Time, Event)>,
    pub server_events: Vec<(Time, Event)>,
    server_mss: u64,
    client_mss: u64,
    seen: std::collections::HashMap<(u8, u64, u8), u32>,
}

pub fn addrs() -> (SocketAddrV4, SocketAddrV4) {
    (
        SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 1), 1025),
        SocketAddrV4::new(Ipv4Addr::new(198, 19, 0, 1), 80),
    )
}

impl Sim {
    /// Seed 000's e0 link; the client connects at 0, the server writes `server_sends` bytes
    /// when the connection is established.
    pub fn new(client_cfg: TcpConfig, server_cfg: TcpConfig, server_sends: u64) -> Sim {
        let (c, s) = addrs();
        let client = Connection::connect(Time::ZERO, c, s, client_cfg, CLIENT_ISS);
        let _ = s;
        Sim {
            client,
            server: None,
            server_cfg,
            now: Time::ZERO,
            rate: 64_000,
            delay: Dur::from_millis(300),
            busy: [Time::ZERO; 2],
            queue: Vec::new(),
            order: 0,
            log: Vec::new(),
            drops: Vec::new(),
            drop_syn: Vec::new(),
            drop_idx: Default::default(),
            mark_idx: Default::default(),
            sent_count: [0; 2],
            server_sends,
            server_metrics: None,
            server_closes: false,
            client_closes_on_fin: false,
            client_events: Vec::new(),
            server_events: Vec::new(),
            server_mss: 536,
            client_mss: 536,
            seen: Default::default(),
        }
    }

    /// The server endpoint (created from the first SYN that arrives).
    pub fn srv(&self) -> &Connection {
        self.server.as_ref().expect("server created")
    }

    fn send(&mut self, dir: Dir, mut p: Packet) {
        let seg = Segment::decode(&p).unwrap();
        let (iss, peer_iss, mss, peer_mss) = match dir {
            Dir::Up => (CLIENT_ISS, SERVER_ISS, self.client_mss, self.server_mss),
            Dir::Down => (SERVER_ISS, CLIENT_ISS, self.server_mss, self.client_mss),
        };
        let off = u64::from(seg.seq.wrapping_sub(iss).wrapping_sub(1));
        let seg_no = if seg.payload > 0 { off / mss + 1 } else { 0 };
        let ack_no = if seg.flags & ACK != 0 {
            u64::from(seg.ack.wrapping_sub(peer_iss).wrapping_sub(1)) / peer_mss
        } else {
            0
        };
        let key = (dir as u8, seg_no, seg.flags & (SYN | FIN));
        let nth = {
            let n = self.seen.entry(key).or_insert(0);
            if seg.payload > 0 || seg.flags & (SYN | FIN) != 0 {
                *n += 1;
            }
            *n
        };
        let d = dir as usize;
        let start = self.now.max(self.busy[d]);
        let end = start + Dur::for_bits(u64::from(p.wire_len) * 8, self.rate);
        self.busy[d] = end;
        let arrive = end + self.delay;
        let idx = self.sent_count[d];
        self.sent_count[d] += 1;
        if p.ecn().is_ect() && self.mark_idx.contains(&(dir as u8, idx)) {
            p.set_ce();
        }
        let dropped = self.drop_idx.contains(&(dir as u8, idx))
            || (seg.payload > 0 && self.drops.contains(&(dir, seg_no, nth)))
            || (seg.flags & SYN != 0 && dir == Dir::Up && self.drop_syn.contains(&nth));
        let sacks = seg
            .sacks
            .iter()
            .map(|&(l, r)| {
                let f = |x: u32| u64::from(x.wrapping_sub(peer_iss).wrapping_sub(1)) / peer_mss;
                (f(l) + 1, f(r))
            })
            .collect();
        self.log.push(Tx {
            start,
            arrive,
            dir,
            flags: seg.flags,
            seg_no,
            ack_no,
            payload: seg.payload,
            wire_len: p.wire_len,
            nth,
            dropped,
            sacks,
        });
        if !dropped {
            self.order += 1;
            self.queue.push((arrive, self.order, dir, p));
        }
    }

    fn flush(&mut self) {
        while let Some(p) = self.client.poll_transmit(self.now) {
            self.send(Dir::Up, p);
        }
        while let Some(p) = self.server.as_mut().and_then(|s| s.poll_transmit(self.now)) {
            self.send(Dir::Down, p);
        }
    }

    fn apps(&mut self) {
        while let Some(e) = self.client.poll_event() {
            self.client_events.push((self.now, e));
            if e == Event::Connected {
                self.client_mss = u64::from(self.client.mss());
            }
            if e == Event::PeerFin && self.client_closes_on_fin {
                self.client.close();
            }
        }
        if let Some(srv) = self.server.as_mut() {
            while let Some(e) = srv.poll_event() {
                self.server_events.push((self.now, e));
                if e == Event::Connected {
                    self.server_mss = u64::from(srv.mss());
                    srv.send(self.server_sends);
                    if self.server_closes {
                        srv.close();
                    }
                }
            }
        }
    }

    fn deliver(&mut self, dir: Dir, p: Packet) {
        match dir {
            Dir::Down => self.client.handle_packet(self.now, &p),
            Dir::Up => match self.server.as_mut() {
                Some(s) => s.handle_packet(self.now, &p),
                None => {
                    self.server =
                        Connection::accept(self.now, &p, self.server_cfg.clone(), SERVER_ISS);
                    if let (Some(s), Some(m)) = (self.server.as_mut(), self.server_metrics) {
                        s.set_cached_metrics(m);
                    }
                }
            },
        }
    }

    /// Runs until nothing is left to do or `until`.
    pub fn run(&mut self, until: Time) {
        self.flush();
        loop {
            let next_pkt = self.queue.iter().map(|q| (q.0, q.1)).min();
            let mut next = next_pkt.map(|q| q.0);
            for t in [self.client.poll_timeout(), self.server_timeout()]
                .into_iter()
                .flatten()
            {
                next = Some(next.map_or(t, |n: Time| n.min(t)));
            }
            let Some(t) = next else { break };
            if t > until {
                break;
            }
            self.now = t;
            // Packets arriving now, in order of sending.
            let mut due: Vec<_> = Vec::new();
            let mut i = 0;
            while i < self.queue.len() {
                if self.queue[i].0 == t {
                    due.push(self.queue.remove(i));
                } else {
                    i += 1;
                }
            }
            due.sort_by_key(|q| q.1);
            for (_, _, dir, p) in due {
                self.deliver(dir, p);
            }
            if self.client.poll_timeout().is_some_and(|d| d <= t) {
                self.client.handle_timeout(t);
            }
            if self.server_timeout().is_some_and(|d| d <= t) {
                self.server.as_mut().unwrap().handle_timeout(t);
            }
            self.apps();
            self.flush();
        }
    }

    fn server_timeout(&self) -> Option<Time> {
        self.server.as_ref().and_then(|s| s.poll_timeout())
    }

    /// Data transmissions in a direction: (start, seg_no, nth).
    pub fn data(&self, dir: Dir) -> Vec<(Time, u64, u32)> {
        self.log
            .iter()
            .filter(|t| t.dir == dir && t.payload > 0)
            .map(|t| (t.start, t.seg_no, t.nth))
            .collect()
    }

    /// Retransmissions in a direction: (start, seg_no).
    pub fn retransmissions(&self, dir: Dir) -> Vec<(Time, u64)> {
        self.log
            .iter()
            .filter(|t| t.dir == dir && t.payload > 0 && t.nth > 1)
            .map(|t| (t.start, t.seg_no))
            .collect()
    }

    /// When segment `seg_no` was first sent downstream.
    pub fn sent(&self, seg_no: u64) -> Time {
        self.log
            .iter()
            .find(|t| t.dir == Dir::Down && t.seg_no == seg_no && t.payload > 0)
            .map(|t| t.start)
            .unwrap_or_else(|| panic!("segment {seg_no} never sent"))
    }

    pub fn dump(&self) -> String {
        let mut s = String::new();
        for t in &self.log {
            s += &format!(
                "{:>10.3} -> {:>10.3} {:?} flags={:02x} seg={} nth={} ack={} len={} wire={} sacks={:?}{}\n",
                t.start.as_secs_f64() * 1e3,
                t.arrive.as_secs_f64() * 1e3,
                t.dir,
                t.flags,
                t.seg_no,
                t.nth,
                t.ack_no,
                t.payload,
                t.wire_len,
                t.sacks,
                if t.dropped { " DROPPED" } else { "" }
            );
        }
        s
    }
}
