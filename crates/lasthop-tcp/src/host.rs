//! A host: a set of connections demultiplexed by 4-tuple, plus listening ports that accept SYNs.
//! Iteration is in key order so runs are repeatable.

use crate::config::TcpConfig;
use crate::conn::Connection;
use crate::metrics::Metrics;
use crate::wire::{Segment, ACK, RST, SYN};
use lasthop_core::{Packet, Time};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, SocketAddrV4};

/// (local, remote) addresses of a connection.
pub type ConnKey = (SocketAddrV4, SocketAddrV4);

#[derive(Debug)]
pub struct Host {
    addr: Ipv4Addr,
    cfg: TcpConfig,
    listening: BTreeSet<u16>,
    conns: BTreeMap<ConnKey, Connection>,
    /// Per-destination metrics (CBI), and the connections already saved into it.
    metrics: BTreeMap<Ipv4Addr, Metrics>,
    saved: BTreeSet<ConnKey>,
    /// Seed 001's shared advertised window: connections from this peer share this many bytes.
    shared_window: Option<(Ipv4Addr, u64)>,
    /// Whether connections record their congestion-state trace.
    tracing: bool,
    /// Whether a connection may have application events: set by whatever can raise one
    /// (segments, timers, the application's calls), cleared by [`Host::drain_events`].
    events_hint: bool,
}

/// A deterministic initial sequence number for an accepted connection (FNV-1a of the 4-tuple):
/// no clock and no global RNG, and different connections get different numbers.
fn iss_for(key: &ConnKey) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in key
        .0
        .ip()
        .octets()
        .iter()
        .chain(&key.0.port().to_be_bytes())
        .chain(&key.1.ip().octets())
        .chain(&key.1.port().to_be_bytes())
    {
        h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    }
    h
}

impl Host {
    pub fn new(addr: Ipv4Addr, cfg: TcpConfig) -> Host {
        Host {
            addr,
            cfg,
            listening: BTreeSet::new(),
            conns: BTreeMap::new(),
            metrics: BTreeMap::new(),
            saved: BTreeSet::new(),
            shared_window: None,
            tracing: true,
            events_hint: false,
        }
    }

    /// Seed 001's shared advertised window (`iwtcp_srwnd_addr`, `iwtcp_srwnd_size`): the
    /// connections from `peer` share `size` bytes; each advertises at most
    /// (size - bytes they hold) / number of open connections from `peer`. Applications read at
    /// once here, so only out-of-order data holds space. Shares are recomputed whenever a
    /// connection sends, and a window is never shrunk: a connection above its share decays.
    pub fn set_shared_window(&mut self, peer: Ipv4Addr, size: u64) {
        self.shared_window = Some((peer, size));
    }

    fn update_shared_window(&mut self) {
        let Some((peer, size)) = self.shared_window else {
            return;
        };
        let sharing = |c: &Connection| *c.remote().ip() == peer && !c.is_closed();
        let count = self.conns.values().filter(|c| sharing(c)).count() as u64;
        let held: u64 = self
            .conns
            .values()
            .filter(|c| sharing(c))
            .map(|c| c.ooo_bytes())
            .sum();
        let share = size.saturating_sub(held) / count.max(1);
        for c in self.conns.values_mut().filter(|c| sharing(c)) {
            c.set_window_cap(Some(share));
        }
    }

    /// Cached metrics for a destination (CBI).
    pub fn metrics(&self, dst: Ipv4Addr) -> Option<Metrics> {
        self.metrics.get(&dst).copied()
    }

    /// Seeds or overwrites the metrics of a destination.
    pub fn set_metrics(&mut self, dst: Ipv4Addr, m: Metrics) {
        self.metrics.insert(dst, m);
    }

    /// Every cached destination, in address order (what a chained replication hands on).
    pub fn cached_metrics(&self) -> impl Iterator<Item = (Ipv4Addr, Metrics)> + '_ {
        self.metrics.iter().map(|(a, m)| (*a, *m))
    }

    /// Whether this host's connections record their congestion-state trace (on by default; a
    /// driver that writes no trace saves the work).
    pub fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
        for c in self.conns.values_mut() {
            c.set_tracing(on);
        }
    }

    /// A new connection, given the host's tracing setting and cached metrics (CBI).
    fn adopt(&self, mut c: Connection) -> Connection {
        if !self.tracing {
            c.set_tracing(false);
        }
        if self.cfg.cbi {
            if let Some(m) = self.metrics.get(c.remote().ip()) {
                c.set_cached_metrics(*m);
            }
        }
        c
    }

    /// Saves a properly closed connection's metrics once (Linux `tcp_update_metrics`).
    fn save_metrics(&mut self, key: ConnKey) {
        if !self.cfg.cbi || self.saved.contains(&key) {
            return;
        }
        let Some(c) = self.conns.get(&key) else {
            return;
        };
        if c.closed_normally() {
            let ip = *key.1.ip();
            let old = self.metrics.get(&ip).copied().unwrap_or_default();
            self.metrics.insert(ip, old.updated(&c.closing_state()));
            self.saved.insert(key);
        }
    }

    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// Accept SYNs to `port`.
    pub fn listen(&mut self, port: u16) {
        self.listening.insert(port);
    }

    /// Opens a connection from `local_port` to `remote` with the host's configuration.
    pub fn connect(
        &mut self,
        now: Time,
        local_port: u16,
        remote: SocketAddrV4,
        iss: u32,
    ) -> ConnKey {
        let local = SocketAddrV4::new(self.addr, local_port);
        let c = self.adopt(Connection::connect(
            now,
            local,
            remote,
            self.cfg.clone(),
            iss,
        ));
        self.saved.remove(&(local, remote));
        self.conns.insert((local, remote), c);
        self.events_hint = true;
        (local, remote)
    }

    /// Delivers a packet to its connection, creating one for a SYN to a listening port.
    /// Returns the connection's key, or `None` when no connection takes the packet.
    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) -> Option<ConnKey> {
        let seg = Segment::decode(pkt)?;
        let key = (seg.dst?, seg.src?);
        if let Some(c) = self.conns.get_mut(&key) {
            if !c.is_closed() {
                self.events_hint = true;
                c.handle_segment(now, &seg);
                self.save_metrics(key);
                return Some(key);
            }
        }
        let is_syn = seg.has(SYN) && !seg.has(ACK) && !seg.has(RST);
        if is_syn && *key.0.ip() == self.addr && self.listening.contains(&key.0.port()) {
            let c = Connection::accept(now, pkt, self.cfg.clone(), iss_for(&key))?;
            let c = self.adopt(c);
            self.saved.remove(&key);
            self.conns.insert(key, c);
            self.events_hint = true;
            return Some(key);
        }
        None
    }

    pub fn conn(&self, key: &ConnKey) -> Option<&Connection> {
        self.conns.get(key)
    }
    pub fn conn_mut(&mut self, key: &ConnKey) -> Option<&mut Connection> {
        self.events_hint = true;
        self.conns.get_mut(key)
    }
    pub fn conns(&self) -> impl Iterator<Item = (&ConnKey, &Connection)> {
        self.conns.iter()
    }
    pub fn conns_mut(&mut self) -> impl Iterator<Item = (&ConnKey, &mut Connection)> {
        self.events_hint = true;
        self.conns.iter_mut()
    }

    /// Removes a connection (e.g. once closed and its metrics are taken).
    pub fn remove(&mut self, key: &ConnKey) -> Option<Connection> {
        self.conns.remove(key)
    }

    /// The next application event of any connection, in key order.
    pub fn poll_event(&mut self) -> Option<(ConnKey, crate::conn::Event)> {
        self.conns
            .iter_mut()
            .find_map(|(k, c)| c.poll_event().map(|e| (*k, e)))
    }

    /// Hands every pending application event to `f`, connection by connection in key order
    /// (the order [`Host::poll_event`] gives). Costs nothing when no connection can have one:
    /// a driver calls it after every step of a host, and most steps only send.
    #[inline]
    pub fn drain_events(&mut self, mut f: impl FnMut(&ConnKey, crate::conn::Event)) {
        if !std::mem::take(&mut self.events_hint) {
            return;
        }
        for (k, c) in self.conns.iter_mut() {
            while let Some(e) = c.poll_event() {
                f(k, e);
            }
        }
    }

    /// The next packet any connection wants to send now.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.update_shared_window();
        self.conns.values_mut().find_map(|c| c.poll_transmit(now))
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.conns.values().filter_map(|c| c.poll_timeout()).min()
    }

    /// Runs every connection's due timers.
    pub fn handle_timeout(&mut self, now: Time) {
        let mut fired = Vec::new();
        for (k, c) in self.conns.iter_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                self.events_hint = true;
                c.handle_timeout(now);
                fired.push(*k);
            }
        }
        for k in fired {
            self.save_metrics(k);
        }
    }
}
