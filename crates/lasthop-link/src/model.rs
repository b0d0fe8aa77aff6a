//! The link model: Seawind's pipeline for each direction, as a sans-IO state machine.
//!
//! ```text
//! push ─▶ router queue ─▶ link send buffer ─▶ serializer ─▶ propagation (+ extra delays)
//!      ─▶ error process (drop / delay / arq) ─▶ link receive buffer (in-order) ─▶ poll_output
//! ```
//!
//! The model has no clock, no I/O and no threads. A driver calls [`Link::push`] when a packet
//! reaches the router, [`Link::handle_timeout`] when [`Link::poll_timeout`] says, and drains
//! [`Link::poll_output`] and [`Link::drain_events`]. All internal work happens at the *scheduled*
//! times, so an emulator that wakes late still gets the model's exact timeline, and the release
//! times it reports are the scheduled ones (it logs its actual times beside them).
//!
//! Choices where the seeds are silent (see `docs/link-model.md`):
//! - the rate in force when a transmission starts applies to the whole packet;
//! - the error test happens when the packet arrives at the far end (after propagation and any
//!   extra delay), with the state in force then; each ARQ retry repeats it with the state at the
//!   retry (seed 000: r3 and r6 hide every loss only if retries see the state at their time);
//! - an ARQ packet is dropped at the failed attempt after which the next retry would pass the
//!   limit, and the packets behind it leave the LRB at that moment;
//! - a packet starts transmission only when the LRB could hold it, so the LRB never overflows.

use crate::error_model::{self, Attempt, ErrorModel};
use crate::event::{Cause, Event, EventKind, LogLevel, PacketFields};
use crate::red::{Red, Verdict};
use crate::spec::{Dir, DirConfig, Handling, LinkConfig, LsbAdmit};
use dary_heap::QuaternaryHeap;
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, Packet, Rate, Seeds, Time};
use std::cmp::Reverse;
use std::collections::VecDeque;
use std::sync::Arc;

/// A packet leaving the link towards a host.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub dir: Dir,
    /// The id [`Link::push`] gave it.
    pub id: u64,
    pub packet: Packet,
    /// When the model released it (the scheduled time).
    pub at: Time,
}

/// Counters a driver can report without reading the event log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirStats {
    pub arrived: u64,
    pub released: u64,
    pub drops_queue: u64,
    pub drops_red: u64,
    pub drops_error: u64,
    pub drops_mtu: u64,
    pub marks: u64,
    /// Failed transmission attempts (each ARQ retry that failed counts).
    pub errors: u64,
}

pub struct Link {
    cfg: LinkConfig,
    dirs: [DirState; 2],
    chain: Chain,
    timers: Timers,
    next_id: u64,
    /// The model's time: the latest scheduled time it has processed or the latest push.
    now: Time,
    out: VecDeque<Output>,
    log: Log,
}

/// The timer queue, ordered by (time, insertion). Each direction's end of transmission (at most
/// one at a time, and one per packet) waits in its own slot rather than in the heap, which then
/// holds mostly the packets propagating; the slots and the heap share the (time, insertion) key,
/// so the order is the same as with one heap.
#[derive(Default)]
struct Timers {
    heap: QuaternaryHeap<Reverse<TimerEntry>>,
    tx_end: [Option<TimerEntry>; 2],
    seq: u64,
}

/// Where the next timer is.
enum Next {
    Heap,
    TxEnd(usize),
}

impl Timers {
    fn schedule(&mut self, at: Time, timer: Timer) {
        self.seq += 1;
        let e = TimerEntry {
            at,
            seq: self.seq,
            timer,
        };
        match timer {
            Timer::TxEnd(d) => {
                debug_assert!(self.tx_end[d.index()].is_none());
                self.tx_end[d.index()] = Some(e);
            }
            _ => self.heap.push(Reverse(e)),
        }
    }

    fn next(&self) -> Option<(TimerEntry, Next)> {
        let mut best = self.heap.peek().map(|e| (e.0, Next::Heap));
        for (i, slot) in self.tx_end.iter().enumerate() {
            if let Some(e) = *slot {
                if best.as_ref().is_none_or(|(b, _)| e < *b) {
                    best = Some((e, Next::TxEnd(i)));
                }
            }
        }
        best
    }

    /// Removes and returns the next timer if it is due at `now`.
    fn pop_due(&mut self, now: Time) -> Option<TimerEntry> {
        let (e, from) = self.next().filter(|(e, _)| e.at <= now)?;
        match from {
            Next::Heap => {
                self.heap.pop();
            }
            Next::TxEnd(i) => self.tx_end[i] = None,
        }
        Some(e)
    }
}

/// Compared by (time, insertion) only: insertion numbers are unique, so the timer never decides
/// and need not be compared.
#[derive(Clone, Copy)]
struct TimerEntry {
    at: Time,
    seq: u64,
    timer: Timer,
}

impl TimerEntry {
    /// (time, insertion) as one integer, which compares fastest.
    fn order(&self) -> u128 {
        (u128::from(self.at.0) << 64) | u128::from(self.seq)
    }
}
impl PartialEq for TimerEntry {
    fn eq(&self, o: &Self) -> bool {
        self.order() == o.order()
    }
}
impl Eq for TimerEntry {}
impl PartialOrd for TimerEntry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TimerEntry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.order().cmp(&o.order())
    }
}

/// The event log being recorded. Kept apart from the rest of the state so that the model can
/// log while it holds its config and a direction's state; a packet's fields are read only for
/// events the level records.
struct Log {
    level: LogLevel,
    events: Vec<Event>,
    state_names: Vec<Arc<str>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Timer {
    StateChange,
    TxEnd(Dir),
    /// The packet with this link sequence number reaches the far end.
    Arrive(Dir, u64),
    /// An ARQ retry of this link sequence number completes.
    Retry(Dir, u64),
    /// A `delay`-handled error of this link sequence number is over.
    Recovered(Dir, u64),
}

struct Queued {
    id: u64,
    pkt: Packet,
    since: Time,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Status {
    /// Being transmitted, propagating, or in recovery.
    OnLink,
    /// At the far end, waiting for an earlier packet.
    Held,
    /// Released or dropped; popped when it reaches the front.
    Gone,
}

struct Slot {
    id: u64,
    pkt: Option<Packet>,
    len: u64,
    status: Status,
    /// Transmission attempts so far (1 = the first).
    attempts: u32,
    /// Error delay accumulated by ARQ retries.
    error_delay: Dur,
    /// Transmission number in this direction (1-based), for scripted delays.
    nth: u64,
}

struct DirState {
    queue: VecDeque<Queued>,
    q_bytes: u64,
    red: Option<Red>,
    /// Packets in the LSB not yet transmitted.
    lsb_wait: VecDeque<Queued>,
    /// LSB occupancy: waiting packets, plus (with link-layer ACK emulation) packets sent and not
    /// yet released from the LRB.
    lsb_bytes: u64,
    /// Bytes sent and not yet released or dropped: what the LRB might have to hold.
    lrb_reserved: u64,
    /// Bytes held in the LRB behind an earlier packet.
    lrb_bytes: u64,
    /// Link sequence number of the packet being transmitted.
    transmitting: Option<u64>,
    /// Packets on the link and in the LRB, in link order; `slots[0]` has sequence `base`.
    slots: VecDeque<Slot>,
    base: u64,
    sent: u64,
    sched_pos: usize,
    /// Which attempts fail.
    errors: Box<dyn ErrorModel>,
    errors_rng: Stream,
    delays_rng: Stream,
    red_rng: Stream,
    stats: DirStats,
}

/// The Markov chain of link states. It draws from its own stream only, so its timeline depends
/// on the seed and the replication and never on the traffic.
struct Chain {
    current: usize,
    next_change: Option<Time>,
    rng: Stream,
}

impl Chain {
    fn new(cfg: &LinkConfig, seeds: &Seeds) -> Chain {
        let mut rng = seeds.stream("link.states");
        let current = pick(&cfg.initial, &mut rng);
        let next_change = cfg.states[current]
            .duration
            .as_ref()
            .map(|d| Time::ZERO + d.sample(&mut rng));
        Chain {
            current,
            next_change,
            rng,
        }
    }

    /// Moves to the state in force at `t`, calling `changed(at, state)` for each change.
    fn advance_to(&mut self, cfg: &LinkConfig, t: Time, mut changed: impl FnMut(Time, usize)) {
        while let Some(at) = self.next_change.filter(|&at| at <= t) {
            self.current = pick(&cfg.states[self.current].next, &mut self.rng);
            self.next_change = cfg.states[self.current]
                .duration
                .as_ref()
                .map(|d| at + d.sample(&mut self.rng).max(Dur(1)));
            changed(at, self.current);
        }
    }
}

fn pick(choices: &[(usize, f64)], rng: &mut Stream) -> usize {
    if let [(only, _)] = choices {
        return *only;
    }
    let u = unit(rng);
    let mut acc = 0.0;
    for &(i, p) in choices {
        acc += p;
        if u < acc {
            return i;
        }
    }
    choices.last().map(|c| c.0).unwrap_or(0)
}

impl Link {
    /// A link in its initial state at time zero. `seeds` fixes every random stream of the run.
    pub fn new(cfg: LinkConfig, seeds: Seeds, level: LogLevel) -> Link {
        let chain = Chain::new(&cfg, &seeds);
        let mean_packet = u64::from(cfg.mtu.unwrap_or(1500));
        let dirs = Dir::BOTH.map(|d| {
            let dc = &cfg.dirs[d.index()];
            DirState {
                queue: VecDeque::new(),
                q_bytes: 0,
                red: dc.queue.red.clone().map(|r| Red::new(r, mean_packet)),
                lsb_wait: VecDeque::new(),
                lsb_bytes: 0,
                lrb_reserved: 0,
                lrb_bytes: 0,
                transmitting: None,
                slots: VecDeque::new(),
                base: 0,
                sent: 0,
                sched_pos: 0,
                errors: error_model::build(&dc.loss, &seeds, d),
                errors_rng: seeds.stream(&format!("link.errors.{d}")),
                delays_rng: seeds.stream(&format!("link.delays.{d}")),
                red_rng: seeds.stream(&format!("link.red.{d}")),
                stats: DirStats::default(),
            }
        });
        let state_names = cfg
            .states
            .iter()
            .map(|s| Arc::from(s.name.as_str()))
            .collect();
        let mut link = Link {
            cfg,
            dirs,
            chain,
            timers: Timers::default(),
            next_id: 0,
            now: Time::ZERO,
            out: VecDeque::new(),
            log: Log {
                level,
                events: Vec::new(),
                state_names,
            },
        };
        link.log.state(Time::ZERO, link.chain.current);
        if let Some(at) = link.chain.next_change {
            link.timers.schedule(at, Timer::StateChange);
        }
        link
    }

    /// Replaces direction `dir`'s error model (by default the one the spec's `loss` chose): which
    /// transmission attempts fail. The handling of a failure stays the state's.
    pub fn set_error_model(&mut self, dir: Dir, model: Box<dyn ErrorModel>) {
        self.dirs[dir.index()].errors = model;
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// A packet reaches the router for direction `dir` at `now`. Returns the id the event log and
    /// [`Output`] use for it. `now` must not go backwards.
    pub fn push(&mut self, now: Time, dir: Dir, pkt: Packet) -> u64 {
        self.process(now);
        let id = self.next_id;
        self.next_id += 1;
        self.arrive(now, dir, id, pkt);
        self.process(now);
        id
    }

    /// When the model next needs [`Link::handle_timeout`], if ever.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timers.next().map(|(e, _)| e.at)
    }

    /// Does all work scheduled at or before `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        self.process(now);
    }

    /// The next packet leaving the link, with its release time.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Moves the events recorded since the last call into `into`, in time order.
    pub fn drain_events(&mut self, into: &mut Vec<Event>) {
        into.append(&mut self.log.events);
    }

    /// The name of the state in force (after the last processed time).
    pub fn state(&self) -> &str {
        &self.log.state_names[self.chain.current]
    }

    pub fn stats(&self, dir: Dir) -> DirStats {
        self.dirs[dir.index()].stats
    }

    /// Whether no packet is anywhere in the link (queues, buffers, on the wire, in recovery).
    /// `poll_timeout` cannot tell: a link with states always has a next state change.
    pub fn is_empty(&self) -> bool {
        self.dirs
            .iter()
            .all(|d| d.queue.is_empty() && d.lsb_wait.is_empty() && d.slots.is_empty())
    }

    /// Router queue length of `dir` in packets and bytes.
    pub fn queue_len(&self, dir: Dir) -> (usize, u64) {
        let d = &self.dirs[dir.index()];
        (d.queue.len(), d.q_bytes)
    }

    // -----------------------------------------------------------------------------------------

    fn process(&mut self, now: Time) {
        debug_assert!(
            now >= self.now,
            "time went backwards: {now:?} < {:?}",
            self.now
        );
        while let Some(TimerEntry { at: t, timer, .. }) = self.timers.pop_due(now) {
            self.now = self.now.max(t);
            self.advance_chain(t);
            match timer {
                Timer::StateChange => {
                    if let Some(at) = self.chain.next_change {
                        self.timers.schedule(at, Timer::StateChange);
                    }
                }
                Timer::TxEnd(d) => self.tx_end(t, d),
                Timer::Arrive(d, seq) => self.attempt(t, d, seq),
                Timer::Retry(d, seq) => self.attempt(t, d, seq),
                Timer::Recovered(d, seq) => self.at_far_end(t, d, seq),
            }
        }
        self.now = self.now.max(now);
        self.advance_chain(now);
    }

    #[inline] // twice per timer; almost always returns at once
    fn advance_chain(&mut self, t: Time) {
        if self.chain.next_change.is_none_or(|at| at > t) {
            return; // the common case: no state change due
        }
        let log = &mut self.log;
        self.chain
            .advance_to(&self.cfg, t, |at, s| log.state(at, s));
    }

    // ---- router queue ---------------------------------------------------------------------

    fn arrive(&mut self, now: Time, d: Dir, id: u64, mut pkt: Packet) {
        let len = u64::from(pkt.wire_len);
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        ds.stats.arrived += 1;
        self.log
            .event(now, d, EventKind::Arrive, ds, Some((id, &pkt)), None);
        // Larger than the MTU, or than a link buffer could ever hold (it would block the queue
        // head forever): dropped with cause `mtu`.
        if self.cfg.mtu.is_some_and(|m| pkt.wire_len > m)
            || dc.lsb.is_some_and(|b| len > b)
            || dc.lrb.is_some_and(|b| len > b)
        {
            return self.drop_queued(now, d, id, &pkt, Cause::Mtu);
        }
        if let Some(mean) = ds.red.as_ref().map(Red::mean_packet) {
            let s = rate(&self.cfg, self.chain.current, ds, now, d)
                .tx_time(mean + u64::from(dc.overhead));
            let u = unit(&mut ds.red_rng);
            let (qp, qb) = (ds.queue.len() as u64, ds.q_bytes);
            let red = ds.red.as_mut().expect("checked above");
            if let Verdict::Congested { forced } = red.on_arrival(now, qp, qb, pkt.wire_len, s, u) {
                let mark = red.spec.ecn && pkt.ecn().is_ect() && !(forced && red.spec.harddrop);
                if !mark {
                    return self.drop_queued(now, d, id, &pkt, Cause::Red);
                }
                pkt.set_ce();
                ds.stats.marks += 1;
                self.log
                    .event(now, d, EventKind::Mark, ds, Some((id, &pkt)), None);
            }
        }
        // A packet that finds the queue empty and room in the LSB passes straight through, so
        // even a zero-length router queue forwards while the link keeps up.
        let passes = ds.queue.is_empty() && lsb_fits(dc, ds, len);
        let full = dc
            .queue
            .packets
            .is_some_and(|n| ds.queue.len() as u64 + 1 > n)
            || dc.queue.bytes.is_some_and(|b| ds.q_bytes + len > b);
        if full && !passes {
            return self.drop_queued(now, d, id, &pkt, Cause::Queue);
        }
        ds.q_bytes += len;
        ds.queue.push_back(Queued {
            id,
            pkt,
            since: now,
        });
        let q = ds.queue.back().expect("just pushed");
        self.log
            .event(now, d, EventKind::Enqueue, ds, q.packet(), None);
        self.pump(now, d);
    }

    fn drop_queued(&mut self, now: Time, d: Dir, id: u64, pkt: &Packet, cause: Cause) {
        let ds = &mut self.dirs[d.index()];
        count_drop(&mut ds.stats, cause);
        self.log
            .event(now, d, EventKind::Drop(cause), ds, Some((id, pkt)), None);
    }

    /// Moves packets from the head of the router queue into the LSB while they fit, then starts
    /// a transmission if the serializer is idle.
    fn pump(&mut self, now: Time, d: Dir) {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        while let Some(head) = ds.queue.front() {
            let len = u64::from(head.pkt.wire_len);
            if dc
                .queue
                .sojourn
                .is_some_and(|j| now.saturating_since(head.since) > j)
            {
                let q = ds.queue.pop_front().expect("head exists");
                ds.q_bytes -= len;
                count_drop(&mut ds.stats, Cause::Queue);
                self.log
                    .event(now, d, EventKind::Drop(Cause::Queue), ds, q.packet(), None);
                continue;
            }
            if !lsb_fits(dc, ds, len) {
                break;
            }
            let q = ds.queue.pop_front().expect("head exists");
            ds.q_bytes -= len;
            ds.lsb_bytes += len;
            ds.lsb_wait.push_back(q);
            let q = ds.lsb_wait.back().expect("just pushed");
            self.log.event(now, d, EventKind::Lsb, ds, q.packet(), None);
        }
        if ds.queue.is_empty() {
            if let Some(red) = ds.red.as_mut() {
                red.went_idle(now);
            }
        }
        self.start_tx(now, d);
    }

    // ---- serializer and propagation -------------------------------------------------------

    fn start_tx(&mut self, now: Time, d: Dir) {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let Some(head) = ds.lsb_wait.front() else {
            return;
        };
        let len = u64::from(head.pkt.wire_len);
        if ds.transmitting.is_some() || dc.lrb.is_some_and(|l| ds.lrb_reserved + len > l) {
            return;
        }
        let overhead = u64::from(dc.overhead);
        let tx = rate(&self.cfg, self.chain.current, ds, now, d).tx_time(len + overhead);
        let q = ds.lsb_wait.pop_front().expect("head exists");
        ds.sent += 1;
        ds.lrb_reserved += len;
        let seq = ds.base + ds.slots.len() as u64;
        ds.transmitting = Some(seq);
        ds.slots.push_back(Slot {
            id: q.id,
            pkt: Some(q.pkt),
            len,
            status: Status::OnLink,
            attempts: 0,
            error_delay: Dur::ZERO,
            nth: ds.sent,
        });
        let slot = ds.slots.back().expect("just pushed");
        self.log
            .event(now, d, EventKind::TxStart, ds, slot.packet(), None);
        self.timers.schedule(now + tx, Timer::TxEnd(d));
    }

    fn tx_end(&mut self, now: Time, d: Dir) {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let seq = ds.transmitting.take().expect("a transmission was running");
        let idx = (seq - ds.base) as usize;
        let (len, nth) = (ds.slots[idx].len, ds.slots[idx].nth);
        if !dc.link_ack {
            ds.lsb_bytes -= len;
        }
        self.log
            .event(now, d, EventKind::TxEnd, ds, ds.slots[idx].packet(), None);
        // Propagation, plus the state's jitter and any scripted delay for this packet.
        let p = &dc.per_state[self.chain.current];
        let mut extra = Dur::ZERO;
        let rng = &mut ds.delays_rng;
        if let Some(x) = &p.extra_delay {
            extra += x.sample(rng);
        }
        for sd in &dc.delays {
            let hit = match (sd.nth, sd.probability) {
                (Some(n), _) => n == nth,
                (_, Some(prob)) => prob > 0.0 && (prob >= 1.0 || unit(rng) < prob),
                _ => false,
            };
            if hit {
                extra += sd.delay.sample(rng);
            }
        }
        let arrive = now + p.delay + extra;
        if extra > Dur::ZERO {
            self.log.event(
                now,
                d,
                EventKind::Delay,
                ds,
                ds.slots[idx].packet(),
                Some(extra.0),
            );
        }
        self.timers.schedule(arrive, Timer::Arrive(d, seq));
        if !dc.link_ack {
            self.pump(now, d);
        } else {
            self.start_tx(now, d);
        }
    }

    // ---- error process ----------------------------------------------------------------------

    /// Attempt number `attempts + 1` of packet `seq` reaches the far end at `now`.
    fn attempt(&mut self, now: Time, d: Dir, seq: u64) {
        let p = &self.cfg.dirs[d.index()].per_state[self.chain.current];
        let ds = &mut self.dirs[d.index()];
        let idx = (seq - ds.base) as usize;
        let slot = &mut ds.slots[idx];
        slot.attempts += 1;
        let attempt = Attempt {
            now,
            dir: d,
            packet: slot.pkt.as_ref().expect("a packet on the link"),
            attempt: slot.attempts,
            params: p,
        };
        if !ds.errors.fails(&attempt, &mut ds.errors_rng) {
            return self.at_far_end(now, d, seq);
        }
        ds.stats.errors += 1;
        let (attempt, acc) = (ds.slots[idx].attempts, ds.slots[idx].error_delay);
        let delay = p.error_delay.as_ref().map(|x| x.sample(&mut ds.errors_rng));
        let kind = EventKind::Error(attempt);
        match (p.handling, delay) {
            (Handling::Delay, Some(delay)) => {
                self.log
                    .event(now, d, kind, ds, ds.slots[idx].packet(), Some(delay.0));
                self.timers.schedule(now + delay, Timer::Recovered(d, seq));
            }
            (Handling::Arq, Some(delay))
                if p.retries.is_none_or(|n| attempt <= n)
                    && p.drop_threshold.is_none_or(|t| acc + delay <= t) =>
            {
                ds.slots[idx].error_delay = acc + delay;
                self.log
                    .event(now, d, kind, ds, ds.slots[idx].packet(), Some(delay.0));
                self.timers.schedule(now + delay, Timer::Retry(d, seq));
            }
            _ => {
                self.log
                    .event(now, d, kind, ds, ds.slots[idx].packet(), Some(0));
                self.drop_on_link(now, d, seq);
            }
        }
    }

    fn drop_on_link(&mut self, now: Time, d: Dir, seq: u64) {
        let link_ack = self.cfg.dirs[d.index()].link_ack;
        let ds = &mut self.dirs[d.index()];
        let slot = &mut ds.slots[(seq - ds.base) as usize];
        slot.status = Status::Gone;
        let (id, pkt, len) = (slot.id, slot.pkt.take(), slot.len);
        ds.lrb_reserved -= len;
        if link_ack {
            ds.lsb_bytes -= len;
        }
        ds.stats.drops_error += 1;
        let packet = pkt.as_ref().map(|p| (id, p));
        self.log
            .event(now, d, EventKind::Drop(Cause::Error), ds, packet, None);
        self.release_in_order(now, d);
        self.pump(now, d);
    }

    // ---- link receive buffer ----------------------------------------------------------------

    /// Packet `seq` has arrived intact at the far end.
    fn at_far_end(&mut self, now: Time, d: Dir, seq: u64) {
        let in_order = self.cfg.dirs[d.index()].in_order;
        let ds = &mut self.dirs[d.index()];
        let idx = (seq - ds.base) as usize;
        if !in_order || idx == 0 {
            self.release(now, d, idx);
            self.release_in_order(now, d);
        } else {
            let slot = &mut ds.slots[idx];
            slot.status = Status::Held;
            ds.lrb_bytes += slot.len;
            self.log
                .event(now, d, EventKind::Hold, ds, ds.slots[idx].packet(), None);
        }
        self.pump(now, d);
    }

    /// Releases held packets from the front of the link order, and forgets gone ones.
    fn release_in_order(&mut self, now: Time, d: Dir) {
        loop {
            let ds = &mut self.dirs[d.index()];
            match ds.slots.front().map(|s| s.status) {
                Some(Status::Gone) => {
                    ds.slots.pop_front();
                    ds.base += 1;
                }
                Some(Status::Held) => self.release(now, d, 0),
                _ => break,
            }
        }
    }

    fn release(&mut self, now: Time, d: Dir, idx: usize) {
        let link_ack = self.cfg.dirs[d.index()].link_ack;
        let ds = &mut self.dirs[d.index()];
        let slot = &mut ds.slots[idx];
        if slot.status == Status::Held {
            ds.lrb_bytes -= slot.len;
        }
        slot.status = Status::Gone;
        let pkt = slot
            .pkt
            .take()
            .expect("a released packet is still on the link");
        let (id, len) = (slot.id, slot.len);
        ds.lrb_reserved -= len;
        if link_ack {
            ds.lsb_bytes -= len;
        }
        ds.stats.released += 1;
        self.log
            .event(now, d, EventKind::Release, ds, Some((id, &pkt)), None);
        self.out.push_back(Output {
            dir: d,
            id,
            packet: pkt,
            at: now,
        });
    }
}

impl Queued {
    fn packet(&self) -> Option<(u64, &Packet)> {
        Some((self.id, &self.pkt))
    }
}

impl Slot {
    /// The packet and its id, while it is on the link or held.
    fn packet(&self) -> Option<(u64, &Packet)> {
        self.pkt.as_ref().map(|p| (self.id, p))
    }
}

impl Log {
    /// Records an event of direction `d` with the buffer occupancy after it (`ds`).
    fn event(
        &mut self,
        t: Time,
        d: Dir,
        kind: EventKind,
        ds: &DirState,
        packet: Option<(u64, &Packet)>,
        delay_ns: Option<u64>,
    ) {
        if kind.level() > self.level {
            return;
        }
        self.events.push(Event {
            time: t,
            kind,
            dir: Some(d),
            packet: packet.map(|(id, p)| PacketFields::of(id, p)),
            queue_pkts: ds.queue.len() as u32,
            queue_bytes: ds.q_bytes,
            lsb_bytes: ds.lsb_bytes,
            lrb_bytes: ds.lrb_bytes,
            state: None,
            delay_ns,
        });
    }

    fn state(&mut self, t: Time, state: usize) {
        if EventKind::State.level() > self.level {
            return;
        }
        self.events.push(Event {
            time: t,
            kind: EventKind::State,
            dir: None,
            packet: None,
            queue_pkts: 0,
            queue_bytes: 0,
            lsb_bytes: 0,
            lrb_bytes: 0,
            state: Some(self.state_names[state].clone()),
            delay_ns: None,
        });
    }
}

fn count_drop(st: &mut DirStats, cause: Cause) {
    match cause {
        Cause::Queue => st.drops_queue += 1,
        Cause::Red => st.drops_red += 1,
        Cause::Error => st.drops_error += 1,
        Cause::Mtu => st.drops_mtu += 1,
    }
}

/// The rate in force for direction `d` at `t`: the state's override, else the base rate or the
/// scheduled rate (advancing the direction's place in its schedule).
fn rate(cfg: &LinkConfig, current: usize, ds: &mut DirState, t: Time, d: Dir) -> Rate {
    let p = &cfg.dirs[d.index()].per_state[current];
    if let Some(r) = p.rate_override {
        return r;
    }
    let sched = &cfg.dirs[d.index()].schedule;
    while ds.sched_pos < sched.len() && sched[ds.sched_pos].0 <= t {
        ds.sched_pos += 1;
    }
    match ds.sched_pos {
        0 => p.base_rate,
        n => sched[n - 1].1,
    }
}

fn lsb_fits(dc: &DirConfig, ds: &DirState, len: u64) -> bool {
    dc.lsb.is_none_or(|cap| match dc.lsb_admit {
        LsbAdmit::Fits => ds.lsb_bytes + len <= cap,
        LsbAdmit::Below => ds.lsb_bytes < cap,
    })
}
