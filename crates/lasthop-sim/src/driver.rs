//! The discrete-event driver: a virtual clock, a deterministic event order (time, then insertion),
//! hosts with their access links, and the link model between the two sides.
//!
//! A packet's path:
//!
//! ```text
//! host (TCP model) ─▶ capture ─▶ access link up (rate, delay) ─▶ Link::push(dir = host's side)
//!   ─▶ Link::poll_output ─▶ access link down of the destination host ─▶ capture ─▶ host
//! ```
//!
//! Nothing happens between events, so a simulated second without packets costs nothing but the
//! link's state changes.

use crate::outputs::Outputs;
use crate::{Error, FlowReport};
use dary_heap::QuaternaryHeap;
use lasthop_core::rng::Rng;
use lasthop_core::{Dur, Packet, Rate, Seeds, Stream, Time};
use lasthop_link::{Event as LinkEvent, Link};
use lasthop_scenario::{Scenario, Side};
use lasthop_tcp::{Event as AppEvent, Host as TcpHost, TcpConfig};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddrV4};

/// First local port of client connections (Linux 2.4's `ip_local_port_range` is 1024..4999;
/// seed 000 lists it).
const FIRST_CLIENT_PORT: u16 = 1024;

/// An event. Packets on access links wait in their link's FIFO (a FIFO serializer with a
/// constant delay never reorders), so the heap holds at most one entry per access link: heap
/// operations stay cheap however many packets are in flight.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ev {
    /// A host's TCP timers may be due.
    Wake(u32),
    /// The head of a host's uplink access queue reaches the router.
    UpHead(u32),
    /// The head of a host's downlink access queue reaches the host.
    DownHead(u32),
    /// A flow's sender opens its connection.
    FlowStart(u32),
}

/// Bits of an [`Entry`] key that hold the event: 2 for its kind, 22 for the host or flow.
const EV_BITS: u32 = 24;
const EV_INDEX_BITS: u32 = EV_BITS - 2;
/// Hosts and flows a run may have, so that an index fits its event.
const MAX_INDEX: usize = 1 << EV_INDEX_BITS;

impl Ev {
    fn pack(self) -> u64 {
        let (kind, i) = match self {
            Ev::Wake(i) => (0, i),
            Ev::UpHead(i) => (1, i),
            Ev::DownHead(i) => (2, i),
            Ev::FlowStart(i) => (3, i),
        };
        debug_assert!((i as usize) < MAX_INDEX);
        (kind << EV_INDEX_BITS) | u64::from(i)
    }

    fn unpack(bits: u64) -> Ev {
        let i = (bits & ((1 << EV_INDEX_BITS) - 1)) as u32;
        match (bits >> EV_INDEX_BITS) & 3 {
            0 => Ev::Wake(i),
            1 => Ev::UpHead(i),
            2 => Ev::DownHead(i),
            _ => Ev::FlowStart(i),
        }
    }
}

/// A queued event in one 128-bit word (the heap's sifting moves and compares these, and a
/// single integer compares fastest): the time in the high half, then the insertion number, then
/// the event in the low [`EV_BITS`] bits. Insertion numbers are unique, so the order is (time,
/// then insertion), and the event never decides.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry(u128);

impl Entry {
    fn new(at: Time, seq: u64, ev: Ev) -> Entry {
        Entry((u128::from(at.0) << 64) | u128::from((seq << EV_BITS) | ev.pack()))
    }

    fn at(self) -> Time {
        Time((self.0 >> 64) as u64)
    }

    fn ev(self) -> Ev {
        Ev::unpack(self.0 as u64 & ((1 << EV_BITS) - 1))
    }
}

/// One direction of a host's access link: a FIFO serializer and a constant delay, with the
/// packets on it in order of arrival at the far end.
struct Access {
    rate: Rate,
    delay: Dur,
    busy_until: Time,
    on_link: VecDeque<(Time, Packet)>,
}

impl Access {
    fn new(rate: Rate, delay: Dur) -> Access {
        Access {
            rate,
            delay,
            busy_until: Time::ZERO,
            on_link: VecDeque::new(),
        }
    }

    /// Puts a packet handed over at `now` on the link. Returns its arrival time at the far end
    /// if it is now the head (the caller then schedules the head's event).
    fn send(&mut self, now: Time, p: Packet) -> Option<Time> {
        let start = now.max(self.busy_until);
        self.busy_until = start + self.rate.tx_time(u64::from(p.wire_len));
        let at = self.busy_until + self.delay;
        self.on_link.push_back((at, p));
        (self.on_link.len() == 1).then_some(at)
    }

    /// Takes the head packet; returns it and the arrival time of the next one, if any.
    fn take_head(&mut self) -> (Packet, Option<Time>) {
        let (_, p) = self.on_link.pop_front().expect("a head event has a packet");
        (p, self.on_link.front().map(|h| h.0))
    }
}

struct SimHost {
    side: Side,
    tcp: TcpHost,
    up: Access,
    down: Access,
    /// The earliest wake-up already in the event queue.
    wake: Option<Time>,
}

/// A flow's progress, as its application sees it.
struct FlowState {
    from: usize,
    to: usize,
    bytes: u64,
    /// The sender's connection key, once opened.
    key: Option<(SocketAddrV4, SocketAddrV4)>,
    delivered: u64,
    sender_closed: bool,
    receiver_closed: bool,
    report: FlowReport,
}

pub struct Sim<'a> {
    scenario: &'a Scenario,
    now: Time,
    /// A 4-ary heap: shallower than a binary one, so a pop compares and moves less.
    queue: QuaternaryHeap<Reverse<Entry>>,
    seq: u64,
    /// Flows whose both ends have closed.
    finished: usize,
    /// Flows by (sender host, connection key).
    flow_at_sender: FxHashMap<(usize, (SocketAddrV4, SocketAddrV4)), usize>,
    /// Reused buffer of application events.
    app_buf: Vec<((SocketAddrV4, SocketAddrV4), AppEvent)>,
    link: Link,
    hosts: Vec<SimHost>,
    by_addr: FxHashMap<Ipv4Addr, usize>,
    flows: Vec<FlowState>,
    /// Flows by (receiver host, receiver port): where a delivery or FIN is counted.
    flow_at_receiver: FxHashMap<(usize, u16), usize>,
    out: Outputs,
    link_events: Vec<LinkEvent>,
    /// Initial sequence numbers of client connections.
    iss: Stream,
    pub events_processed: u64,
}

impl<'a> Sim<'a> {
    pub fn new(scenario: &'a Scenario, out: Outputs) -> Result<Sim<'a>, Error> {
        for (what, n) in [
            ("hosts", scenario.hosts.len()),
            ("flows", scenario.flows.len()),
        ] {
            if n >= MAX_INDEX {
                return Err(Error::Spec {
                    key: what.into(),
                    message: format!("at most {} {what} per run", MAX_INDEX - 1),
                });
            }
        }
        let seeds = Seeds::new(scenario.seed, scenario.replication);
        let link = Link::new(scenario.link.clone(), seeds, scenario.log);
        let mut hosts = Vec::new();
        let mut by_addr = FxHashMap::default();
        // Hosts usually share a few TCP tables (a dumbbell's hundred senders one): each distinct
        // table is parsed once, for the first host that has it.
        let mut parsed: Vec<(&toml::Table, u32, TcpConfig)> = Vec::new();
        for (i, h) in scenario.hosts.iter().enumerate() {
            let cfg = match parsed.iter().find(|(t, m, _)| **t == h.tcp && *m == h.mtu) {
                Some((_, _, cfg)) => cfg.clone(),
                None => {
                    let cfg = tcp_config(&h.name, &h.tcp, h.mtu)?;
                    parsed.push((&h.tcp, h.mtu, cfg.clone()));
                    cfg
                }
            };
            let (rate, delay) = (
                h.access_rate.unwrap_or(Rate::UNLIMITED),
                h.access_delay.unwrap_or(Dur::ZERO),
            );
            let mut tcp = TcpHost::new(h.address, cfg);
            tcp.set_tracing(out.traces());
            hosts.push(SimHost {
                side: h.side,
                tcp,
                up: Access::new(rate, delay),
                down: Access::new(rate, delay),
                wake: None,
            });
            by_addr.insert(h.address, i);
        }
        let mut sim = Sim {
            scenario,
            now: Time::ZERO,
            queue: QuaternaryHeap::new(),
            seq: 0,
            finished: 0,
            flow_at_sender: FxHashMap::default(),
            app_buf: Vec::new(),
            link,
            hosts,
            by_addr,
            flows: Vec::new(),
            flow_at_receiver: FxHashMap::default(),
            out,
            link_events: Vec::new(),
            iss: seeds.stream("tcp.iss"),
            events_processed: 0,
        };
        for f in &scenario.flows {
            sim.hosts[f.to].tcp.listen(f.port);
            sim.flow_at_receiver.insert((f.to, f.port), sim.flows.len());
            sim.flows.push(FlowState {
                from: f.from,
                to: f.to,
                bytes: f.bytes,
                key: None,
                delivered: 0,
                sender_closed: false,
                receiver_closed: false,
                report: FlowReport {
                    flow: f.index,
                    from: scenario.hosts[f.from].name.clone(),
                    to: scenario.hosts[f.to].name.clone(),
                    bytes: f.bytes,
                    ..FlowReport::default()
                },
            });
            sim.schedule(
                Time::ZERO + f.start,
                Ev::FlowStart((sim.flows.len() - 1) as u32),
            );
        }
        Ok(sim)
    }

    fn schedule(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << (64 - EV_BITS));
        self.queue.push(Reverse(Entry::new(at, self.seq, ev)));
    }

    /// Runs until every flow has finished (both ends closed) or the scenario's duration.
    ///
    /// The link's own deadline is compared with the head of the event queue on every step
    /// rather than queued (its deadline moves earlier with nearly every packet, and each move
    /// would leave a stale entry behind). At equal times the link goes first.
    pub fn run(&mut self) -> Result<Time, Error> {
        let end = Time::ZERO + self.scenario.duration;
        loop {
            let next = self.queue.peek().map(|e| e.0.at());
            if let Some(t) = self
                .link
                .poll_timeout()
                .filter(|&t| next.is_none_or(|n| t <= n))
            {
                if t > end {
                    break;
                }
                self.now = t;
                self.events_processed += 1;
                self.link.handle_timeout(t);
                self.after_link()?;
                continue;
            }
            let Some(Reverse(e)) = self.queue.pop() else {
                break;
            };
            let at = e.at();
            if at > end {
                break;
            }
            self.now = at;
            self.events_processed += 1;
            match e.ev() {
                Ev::Wake(h) => {
                    let h = h as usize;
                    if self.hosts[h].wake == Some(at) {
                        self.hosts[h].wake = None;
                    }
                    self.hosts[h].tcp.handle_timeout(at);
                    self.after_host(h)?;
                }
                Ev::UpHead(h) => {
                    let (p, next) = self.hosts[h as usize].up.take_head();
                    if let Some(t) = next {
                        self.schedule(t, Ev::UpHead(h));
                    }
                    let dir = self.hosts[h as usize].side.dir();
                    self.link.push(at, dir, p);
                    self.after_link()?;
                }
                Ev::DownHead(h) => {
                    let (p, next) = self.hosts[h as usize].down.take_head();
                    if let Some(t) = next {
                        self.schedule(t, Ev::DownHead(h));
                    }
                    let h = h as usize;
                    self.out.capture(h, at, &p)?;
                    self.hosts[h].tcp.handle_packet(at, &p);
                    self.after_host(h)?;
                }
                Ev::FlowStart(f) => {
                    let f = f as usize;
                    self.start_flow(f);
                    self.after_host(self.flows[f].from)?;
                }
            }
            if self.finished == self.flows.len() {
                break;
            }
        }
        // Whatever the link logged up to the end.
        self.link.drain_events(&mut self.link_events);
        self.out.events(&self.link_events)?;
        self.link_events.clear();
        Ok(self.now)
    }

    pub fn flow_reports(&self) -> Vec<FlowReport> {
        self.flows.iter().map(|f| f.report.clone()).collect()
    }

    pub fn link(&self) -> &Link {
        &self.link
    }

    pub fn into_outputs(self) -> Outputs {
        self.out
    }

    fn start_flow(&mut self, f: usize) {
        let (from, to) = (self.flows[f].from, self.flows[f].to);
        let spec = &self.scenario.flows[f];
        let remote = SocketAddrV4::new(self.scenario.hosts[to].address, spec.port);
        let port = FIRST_CLIENT_PORT + f as u16;
        let iss = self.iss.random();
        let key = self.hosts[from].tcp.connect(self.now, port, remote, iss);
        self.flows[f].key = Some(key);
        self.flow_at_sender.insert((from, key), f);
        self.flows[f].report.start = Some(self.now);
    }

    /// After a host's TCP ran: send what it wants to send, run the applications, and schedule
    /// its next timer.
    fn after_host(&mut self, h: usize) -> Result<(), Error> {
        loop {
            self.app_events(h);
            let Some(p) = self.hosts[h].tcp.poll_transmit(self.now) else {
                break;
            };
            self.out.capture(h, self.now, &p)?;
            if let Some(at) = self.hosts[h].up.send(self.now, p) {
                self.schedule(at, Ev::UpHead(h as u32));
            }
        }
        if self.out.traces() {
            self.out.trace(h, &mut self.hosts[h].tcp)?;
        }
        if let Some(t) = self.hosts[h].tcp.poll_timeout() {
            let t = t.max(self.now);
            if self.hosts[h].wake.is_none_or(|w| t < w) {
                self.hosts[h].wake = Some(t);
                self.schedule(t, Ev::Wake(h as u32));
            }
        }
        Ok(())
    }

    /// The bulk applications: the sender writes everything once connected and closes; the
    /// receiver reads as data arrives and closes when the sender's FIN arrives (HTTP/1.0 style).
    fn app_events(&mut self, h: usize) {
        let now = self.now;
        let mut events = std::mem::take(&mut self.app_buf);
        for (key, conn) in self.hosts[h].tcp.conns_mut() {
            while let Some(ev) = conn.poll_event() {
                events.push((*key, ev));
            }
        }
        for (key, ev) in events.drain(..) {
            let sender = self.flow_at_sender.get(&(h, key)).copied();
            let receiver = self.flow_at_receiver.get(&(h, key.0.port())).copied();
            let conn = self.hosts[h]
                .tcp
                .conn_mut(&key)
                .expect("the connection exists");
            match (ev, sender, receiver) {
                (AppEvent::Connected, Some(f), _) => {
                    self.flows[f].report.connected = Some(now);
                    conn.send(self.flows[f].bytes);
                    conn.close();
                }
                (AppEvent::Delivered(n), _, Some(f)) => {
                    let fl = &mut self.flows[f];
                    fl.report.first_byte.get_or_insert(now);
                    fl.delivered += n;
                    fl.report.delivered = fl.delivered;
                    if fl.delivered >= fl.bytes {
                        fl.report.last_byte = Some(now);
                    }
                }
                (AppEvent::PeerFin, _, Some(_)) => conn.close(),
                (AppEvent::Closed, Some(f), _) => self.close_end(f, true),
                (AppEvent::Closed, _, Some(f)) => {
                    self.flows[f].report.end = Some(now);
                    self.close_end(f, false);
                }
                (AppEvent::Aborted(why), s, r) => {
                    if let Some(f) = s.or(r) {
                        self.flows[f].report.aborted = Some(format!("{why:?}"));
                        self.close_end(f, true);
                        self.close_end(f, false);
                    }
                }
                _ => {}
            }
        }
        self.app_buf = events;
    }

    /// One end of flow `f` has closed; the flow is finished when both have.
    fn close_end(&mut self, f: usize, sender: bool) {
        let fl = &mut self.flows[f];
        let was = fl.sender_closed && fl.receiver_closed;
        if sender {
            fl.sender_closed = true;
        } else {
            fl.receiver_closed = true;
        }
        if !was && fl.sender_closed && fl.receiver_closed {
            self.finished += 1;
        }
    }

    /// After the link ran: deliver its outputs and log its events.
    fn after_link(&mut self) -> Result<(), Error> {
        while let Some(o) = self.link.poll_output() {
            let dst = match o.packet.flow.dst {
                std::net::IpAddr::V4(a) => a,
                _ => continue,
            };
            // A packet for an address no host has leaves the model (as a router would drop it).
            let Some(&h) = self.by_addr.get(&dst) else {
                continue;
            };
            if self.hosts[h].side.dir() == o.dir {
                continue; // addressed to a host on the side it came from
            }
            if let Some(at) = self.hosts[h].down.send(o.at, o.packet) {
                self.schedule(at, Ev::DownHead(h as u32));
            }
        }
        self.link.drain_events(&mut self.link_events);
        if !self.link_events.is_empty() {
            self.out.events(&self.link_events)?;
            self.link_events.clear();
        }
        Ok(())
    }
}

/// The host's TCP configuration: its `[hosts.NAME.tcp]` table over the seeds' baseline, with
/// the host's MTU unless the table sets one.
fn tcp_config(host: &str, table: &toml::Table, mtu: u32) -> Result<TcpConfig, Error> {
    let mut t = table.clone();
    t.entry("mtu")
        .or_insert_with(|| toml::Value::String(format!("{mtu}B")));
    let text = toml::to_string(&t).expect("a TOML table serializes");
    let key = |k: &str| {
        if k.is_empty() {
            format!("hosts.{host}.tcp")
        } else {
            format!("hosts.{host}.tcp.{k}")
        }
    };
    let cfg: TcpConfig = lasthop_link::spec::from_toml(&text).map_err(|e| Error::Spec {
        key: key(&e.key),
        message: e.message,
    })?;
    cfg.validate().map_err(|e| Error::Spec {
        key: key(&e.key),
        message: e.message,
    })?;
    Ok(cfg)
}
