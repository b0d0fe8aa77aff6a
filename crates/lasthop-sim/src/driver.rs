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
use crate::stack::Stack;
use crate::{Error, ModelConn};
use dary_heap::QuaternaryHeap;
use lasthop_apps::{Endpoint, FlowReport, SockEvent, Status};
use lasthop_core::rng::Rng;
use lasthop_core::{Dur, Rate, Seeds, Stream, Time};
use lasthop_link::{AccessLink, Event as LinkEvent, Link};
use lasthop_scenario::{ClockPhase, Scenario, Side};
use lasthop_tcp::{Host as TcpHost, Metrics};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::net::Ipv4Addr;

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
    /// An application end starts, or its timer may be due.
    App(u32),
}

/// Bits of an [`Entry`] key that hold the event: 2 for its kind, 22 for the host or application end.
const EV_BITS: u32 = 24;
const EV_INDEX_BITS: u32 = EV_BITS - 2;
/// Hosts and application ends a run may have, so that an index fits its event.
const MAX_INDEX: usize = 1 << EV_INDEX_BITS;

impl Ev {
    fn pack(self) -> u64 {
        let (kind, i) = match self {
            Ev::Wake(i) => (0, i),
            Ev::UpHead(i) => (1, i),
            Ev::DownHead(i) => (2, i),
            Ev::App(i) => (3, i),
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
            _ => Ev::App(i),
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

struct SimHost {
    side: Side,
    stack: Stack,
    up: AccessLink,
    down: AccessLink,
    /// The earliest wake-up already in the event queue.
    wake: Option<Time>,
}

/// One end of a flow's application, on its host.
struct End {
    app: Box<dyn Endpoint>,
    host: usize,
    flow: usize,
    started: bool,
    /// Its status when it last ran.
    status: Status,
    /// The earliest timer already in the event queue.
    wake: Option<Time>,
}

pub struct Sim<'a> {
    scenario: &'a Scenario,
    now: Time,
    /// A 4-ary heap: shallower than a binary one, so a pop compares and moves less.
    queue: QuaternaryHeap<Reverse<Entry>>,
    seq: u64,
    /// Application ends: flow `f` has its server end at `2f` and its client end at `2f + 1`.
    ends: Vec<End>,
    /// Flows that are over (both ends done, or one aborted), and how many.
    flow_over: Vec<bool>,
    finished: usize,
    /// Reused buffer of socket events.
    sock_events: Vec<(usize, SockEvent)>,
    link: Link,
    hosts: Vec<SimHost>,
    by_addr: FxHashMap<Ipv4Addr, usize>,
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
            ("flows", 2 * scenario.flows.len()),
        ] {
            if n >= MAX_INDEX {
                return Err(Error::Spec {
                    key: what.into(),
                    message: format!("at most {} {what} per run", MAX_INDEX / 2 - 1),
                });
            }
        }
        let seeds = Seeds::new(scenario.seed, scenario.replication);
        let link = scenario.new_link(seeds);
        let mut hosts = Vec::new();
        let mut phases = Vec::new();
        let mut by_addr = FxHashMap::default();
        // Where each host's jiffies stand at time 0 (its timer wheel's bucket boundaries): a
        // booted kernel's clock is anywhere in its 2^15-jiffy cycle of level-3 buckets. Hosts
        // on one kernel (`clock_phase = "shared"` or given) share one.
        let mut clocks = seeds.stream("tcp.clock_phase");
        let mut draw =
            |hz: u32| Dur(clocks.random_range(0..(1_000_000_000 / u64::from(hz.max(1))) << 15));
        let one_kernel = match scenario.clock_phase {
            None | Some(ClockPhase::PerHost) => None,
            Some(ClockPhase::Shared) => scenario.hosts.first().map(|h| draw(h.tcp.hz)),
            Some(ClockPhase::Given(phase)) => Some(phase),
        };
        for (i, h) in scenario.hosts.iter().enumerate() {
            let (rate, delay) = (
                h.access_rate.unwrap_or(Rate::UNLIMITED),
                h.access_delay.unwrap_or(Dur::ZERO),
            );
            let mut cfg = h.tcp.clone();
            cfg.clock_phase = one_kernel.unwrap_or_else(|| draw(cfg.hz));
            phases.push(cfg.clock_phase);
            let mut tcp = TcpHost::new(h.address, cfg);
            tcp.set_tracing(out.traces());
            if let Some(sw) = h
                .shared_window
                .filter(|sw| sw.enforce == lasthop_scenario::SharedWindowAt::Receiver)
            {
                tcp.set_shared_window(sw.peer, sw.size);
            }
            hosts.push(SimHost {
                side: h.side,
                stack: Stack::new(tcp),
                up: AccessLink::new(rate, delay),
                down: AccessLink::new(rate, delay),
                wake: None,
            });
            by_addr.insert(h.address, i);
        }
        let mut sim = Sim {
            scenario,
            now: Time::ZERO,
            queue: QuaternaryHeap::new(),
            seq: 0,
            ends: Vec::new(),
            flow_over: vec![false; scenario.flows.len()],
            finished: 0,
            sock_events: Vec::new(),
            link,
            hosts,
            by_addr,
            out,
            link_events: Vec::new(),
            iss: seeds.stream("tcp.iss"),
            events_processed: 0,
        };
        // Server ends start at once (they listen before anything happens); client ends at the
        // flow's start.
        for (fi, f) in scenario.flows.iter().enumerate() {
            let [server, client] = f.app.endpoints(&f.ctx(scenario));
            for (app, host) in [(server, f.to), (client, f.from)] {
                sim.ends.push(End {
                    app,
                    host,
                    flow: fi,
                    started: false,
                    status: Status::Running,
                    wake: None,
                });
            }
            let s = sim.ends.len() - 2;
            // The flow's `tcp` table (its client end's connections) and a bulk flow's socket
            // options (both ends'); what the model cannot do is refused here, naming the key.
            let [server_cfg, client_cfg] = f.sim_tcp(scenario).map_err(|e| Error::Spec {
                key: e.key,
                message: e.message,
            })?;
            let traces = sim.out.traces();
            // A flow's own configuration runs on its host's kernel, at the host's clock.
            if let Some(mut cfg) = server_cfg {
                cfg.clock_phase = phases[f.to];
                sim.hosts[f.to].stack.set_owner_config(s, cfg, traces);
            }
            if let Some(mut cfg) = client_cfg {
                cfg.clock_phase = phases[f.from];
                sim.hosts[f.from].stack.set_owner_config(s + 1, cfg, traces);
            }
            sim.start_end(s);
            sim.schedule(Time::ZERO + f.start, Ev::App(s as u32 + 1));
        }
        Ok(sim)
    }

    fn schedule(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << (64 - EV_BITS));
        self.queue.push(Reverse(Entry::new(at, self.seq, ev)));
    }

    /// Runs until every flow has finished or the scenario's duration.
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
                    self.hosts[h].stack.handle_timeout(at);
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
                    // A packet the link damaged fails the host's checksum: captured, then
                    // discarded (the link counts it), as real Linux does.
                    if p.damaged {
                        continue;
                    }
                    if let Some((owner, ev)) = self.hosts[h].stack.receive(at, &p) {
                        self.dispatch(owner, ev);
                    }
                    self.after_host(h)?;
                }
                Ev::App(i) => {
                    let i = i as usize;
                    if self.ends[i].wake == Some(at) {
                        self.ends[i].wake = None;
                    }
                    if !self.ends[i].started {
                        self.start_end(i);
                    } else if self.ends[i].app.poll_timeout().is_some_and(|t| t <= at) {
                        let h = self.ends[i].host;
                        let mut net = self.hosts[h].stack.net(i, &mut self.iss);
                        self.ends[i].app.handle_timeout(at, &mut net);
                        self.after_end(i);
                    }
                    self.after_host(self.ends[i].host)?;
                }
            }
            if self.finished == self.flow_over.len() {
                break;
            }
        }
        // Whatever the link logged up to the end.
        self.link.drain_events(&mut self.link_events);
        self.out.events(&self.link_events)?;
        self.link_events.clear();
        Ok(self.now)
    }

    /// What the applications of every flow saw.
    pub fn flow_reports(&self) -> Vec<FlowReport> {
        let sc = self.scenario;
        sc.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut r = FlowReport {
                    flow: f.index,
                    kind: f.kind(),
                    from: sc.hosts[f.from].name.clone(),
                    to: sc.hosts[f.to].name.clone(),
                    ..FlowReport::default()
                };
                self.ends[2 * i].app.report(&mut r);
                self.ends[2 * i + 1].app.report(&mut r);
                r
            })
            .collect()
    }

    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Seeds host `host`'s CBI caches (its own TCP host and those of per-flow configurations)
    /// with `m` for destination `dst`: the state a previous replication left (chained
    /// replications, `lasthop-experiment`'s `replications_chain`).
    pub fn seed_tcp_metrics(&mut self, host: usize, dst: Ipv4Addr, m: Metrics) {
        for h in self.hosts[host].stack.tcp_hosts_mut() {
            h.set_metrics(dst, m);
        }
    }

    /// Every host's CBI cache at this point: (host index, destination, values). A host whose
    /// flows use their own `tcp` tables keeps a cache per configuration; they are merged in
    /// configuration order, the last one's entry winning (Linux keeps one per destination).
    pub fn tcp_metrics(&mut self) -> Vec<(usize, Ipv4Addr, Metrics)> {
        let mut out = vec![];
        for (i, h) in self.hosts.iter_mut().enumerate() {
            let mut merged = std::collections::BTreeMap::new();
            for t in h.stack.tcp_hosts_mut() {
                merged.extend(t.cached_metrics());
            }
            out.extend(merged.into_iter().map(|(a, m)| (i, a, m)));
        }
        out
    }

    /// Every TCP connection the hosts' models hold at this point, with its own counters (what
    /// the model did, beside what the analysis infers from the captures): (host index,
    /// connection). The simulator never removes a connection, so at the end this is all of them.
    pub fn tcp_conn_stats(&mut self) -> Vec<(usize, ModelConn)> {
        let mut out = vec![];
        for (i, h) in self.hosts.iter_mut().enumerate() {
            for t in h.stack.tcp_hosts_mut() {
                out.extend(t.conns().map(|(_, c)| {
                    let conn = ModelConn {
                        local: c.local(),
                        remote: c.remote(),
                        stats: c.stats().clone(),
                    };
                    (i, conn)
                }));
            }
        }
        out
    }

    pub fn into_outputs(self) -> Outputs {
        self.out
    }

    fn start_end(&mut self, i: usize) {
        let h = self.ends[i].host;
        self.ends[i].started = true;
        let mut net = self.hosts[h].stack.net(i, &mut self.iss);
        self.ends[i].app.start(self.now, &mut net);
        self.after_end(i);
    }

    /// Gives application end `i` a socket event.
    fn dispatch(&mut self, i: usize, ev: SockEvent) {
        let h = self.ends[i].host;
        let mut net = self.hosts[h].stack.net(i, &mut self.iss);
        self.ends[i].app.on_event(self.now, ev, &mut net);
        self.after_end(i);
    }

    /// After application end `i` ran: arm its timer, and count its flow as over when it is.
    fn after_end(&mut self, i: usize) {
        if let Some(t) = self.ends[i].app.poll_timeout() {
            let t = t.max(self.now);
            if self.ends[i].wake.is_none_or(|w| t < w) {
                self.ends[i].wake = Some(t);
                self.schedule(t, Ev::App(i as u32));
            }
        }
        let f = self.ends[i].flow;
        self.ends[i].status = self.ends[i].app.status();
        // The two ends of flow f are 2f and 2f + 1.
        let (a, b) = (self.ends[i].status, self.ends[i ^ 1].status);
        let over = (a == Status::Done && b == Status::Done)
            || a == Status::Aborted
            || b == Status::Aborted;
        if over && !self.flow_over[f] {
            self.flow_over[f] = true;
            self.finished += 1;
        }
    }

    /// After a host's sockets ran: give the applications their events, send what the host
    /// wants to send, and schedule its next timer.
    fn after_host(&mut self, h: usize) -> Result<(), Error> {
        // Socket events come from received segments, timers and the applications' own calls
        // (a close), never from sending: so the applications see all of them first (their
        // reactions may raise more), then the host sends what it has.
        loop {
            let mut evs = std::mem::take(&mut self.sock_events);
            self.hosts[h].stack.poll_events(&mut evs);
            let none = evs.is_empty();
            for (owner, ev) in evs.drain(..) {
                self.dispatch(owner, ev);
            }
            self.sock_events = evs;
            if none {
                break;
            }
        }
        while let Some(p) = self.hosts[h].stack.poll_transmit(self.now) {
            self.out.capture(h, self.now, &p)?;
            if let Some(at) = self.hosts[h].up.send(self.now, p) {
                self.schedule(at, Ev::UpHead(h as u32));
            }
        }
        if self.out.traces() {
            for tcp in self.hosts[h].stack.tcp_hosts_mut() {
                self.out.trace(h, tcp)?;
            }
        }
        if let Some(t) = self.hosts[h].stack.poll_timeout() {
            let t = t.max(self.now);
            if self.hosts[h].wake.is_none_or(|w| t < w) {
                self.hosts[h].wake = Some(t);
                self.schedule(t, Ev::Wake(h as u32));
            }
        }
        Ok(())
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
