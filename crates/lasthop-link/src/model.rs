//! The link model: Seawind's pipeline for each direction, as a sans-IO state machine.
//!
//! ```text
//! push ─▶ middleboxes ─▶ router queue ─▶ link send buffer ─▶ serializer ─▶ propagation (+ extra delays)
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

use crate::background::Load;
use crate::dir::Dir;
use crate::error_model::{self, Attempt, ErrorModel, ErrorStage};
use crate::event::{Cause, Event, EventKind, LogLevel, PacketFields};
use crate::input::Input;
use crate::lrb::ReceiveBuffer;
use crate::lsb::SendBuffer;
pub use crate::meter::DirStats;
use crate::meter::Meter;
use crate::middlebox::hook::{self as middlebox, Action, Inject, Middlebox};
use crate::netem::{Netem, NetemConfig};
use crate::queue::{self, Arrival, QueueDiscipline, Queued, RouterQueue, Verdict};
use crate::serializer::Serializer;
use crate::spec::config::LinkConfig;
use crate::spec::queue::Overflow;
use crate::spec::schema::Handling;
use crate::timers::{Timer, Timers};
use crate::trace_summary::{Recorder, TraceSummary};
use lasthop_core::rng::{unit, Stream};
use lasthop_core::{Dur, Packet, Seeds, Time};
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

impl Pipe {
    /// The LSB's head starts its transmission: its slot in the link order.
    #[inline(always)]
    fn begin_tx(&mut self) -> u64 {
        let q = self.lsb.wait.pop_front().expect("head exists");
        self.ser.sent += 1;
        let seq = self.lrb.start(q.id, q.pkt, self.ser.sent);
        self.ser.transmitting = Some(seq);
        seq
    }
}

pub struct Link {
    cfg: LinkConfig,
    dirs: [Pipe; 2],
    chain: Chain,
    timers: Timers,
    next_id: u64,
    /// The model's time: the latest scheduled time it has processed or the latest push.
    now: Time,
    out: VecDeque<Output>,
    log: Log,
    /// Each direction's middleboxes, before the router queue.
    mbox: [middlebox::Chain; 2],
    /// Whether any middlebox is installed: without one, no middlebox work is done.
    mbox_on: bool,
    /// Middleboxes or netem's duplication: pushes take [`Link::push_with_extras`].
    push_extras: bool,
}

/// One direction's state: its stages in the order a packet meets them. Each stage's file owns
/// its state and methods; the [`Link`] methods below move packets between them.
struct Pipe {
    queue: RouterQueue,
    lsb: SendBuffer,
    ser: Serializer,
    errors: ErrorStage,
    lrb: ReceiveBuffer,
    /// Packets left unread while the queue is full (STOP, FLOW CONTROL); `None` under DROP.
    input: Option<Box<Input>>,
    /// An unread input or a trace summary: arrivals take [`Link::arrival_extras`].
    arrive_extras: bool,
    /// Other users' traffic on the channel (`background`).
    bg: Option<Box<Load>>,
    /// netem's jitter, reordering and duplication (`[DIR.netem]`).
    netem: Option<Box<Netem>>,
    /// netem or a delay trace: a packet's propagation takes [`Link::netem_propagation`].
    prop_extras: bool,
    /// `link.output.{dir}`, with an output dropper.
    dropper: Option<Box<Stream>>,
    stats: DirStats,
}

/// The event log being recorded. Kept apart from the rest of the state so that the model can
/// log while it holds its config and a direction's state; a packet's fields are read only for
/// events the level records.
struct Log {
    level: LogLevel,
    events: Vec<Event>,
    state_names: Vec<Arc<str>>,
    /// Each direction's queue and serializer figures, kept whatever the level.
    meters: [Meter; 2],
    /// A traced direction's Mahimahi figures (`trace_summary.csv`), whatever the level.
    record: [Option<Box<Recorder>>; 2],
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
            Pipe {
                queue: RouterQueue::new(
                    &dc.queue,
                    queue::discipline(&dc.queue, mean_packet, &seeds, d),
                    queue::flow_queues(&dc.queue, mean_packet, &seeds, d),
                ),
                lsb: SendBuffer::new(dc),
                ser: Serializer::new(dc, &seeds, d),
                errors: ErrorStage {
                    model: error_model::build(&dc.loss, &seeds, d),
                    rng: seeds.stream(&format!("link.errors.{d}")),
                },
                lrb: ReceiveBuffer::new(dc.lrb, dc.in_order),
                input: (dc.queue.overflow != Overflow::Drop)
                    .then(|| Box::new(Input::new(dc.queue.input))),
                arrive_extras: dc.queue.overflow != Overflow::Drop || dc.trace.is_some(),
                prop_extras: dc.netem != NetemConfig::default()
                    || dc.delay_trace.is_some()
                    || dc.cellreplay.is_some(),
                netem: (dc.netem != NetemConfig::default())
                    .then(|| Box::new(Netem::new(&dc.netem, &seeds, d))),
                bg: dc
                    .background
                    .as_ref()
                    .map(|b| Box::new(Load::new(b, seeds.stream(&format!("link.background.{d}"))))),
                dropper: dc
                    .output_dropper
                    .as_ref()
                    .map(|_| Box::new(seeds.stream(&format!("link.output.{d}")))),
                stats: DirStats::default(),
            }
        });
        let cfg_dup = cfg.dirs.iter().any(|dc| dc.netem.duplicate.is_some());
        let record = Dir::BOTH.map(|d| {
            let trace = cfg.dirs[d.index()].trace.clone();
            trace.map(|t| Box::new(Recorder::new(t)))
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
                meters: Default::default(),
                record,
            },
            mbox: Default::default(),
            mbox_on: false,
            push_extras: cfg_dup,
        };
        link.log.state(Time::ZERO, link.chain.current);
        for d in Dir::BOTH {
            if let Some(bg) = &link.dirs[d.index()].bg {
                link.timers.schedule(bg.next, Timer::Background(d));
            }
        }
        if let Some(at) = link.chain.next_change {
            link.timers.schedule(at, Timer::StateChange);
        }
        link
    }

    /// Replaces direction `dir`'s error model (by default the one the spec's `loss` chose): which
    /// transmission attempts fail. The handling of a failure stays the state's.
    pub fn set_error_model(&mut self, dir: Dir, model: Box<dyn ErrorModel>) {
        self.dirs[dir.index()].errors.model = Some(model);
    }

    /// Replaces direction `dir`'s router queue discipline (by default the one the spec's
    /// `queue.policy` chose). Call it before the first packet.
    pub fn set_queue_discipline(&mut self, dir: Dir, d: Box<dyn QueueDiscipline>) {
        self.dirs[dir.index()].queue.set_discipline(d);
    }

    /// Appends a middlebox to direction `dir`'s chain, which every packet pushed in that
    /// direction passes before the router queue (see [`crate::middlebox`]).
    pub fn add_middlebox(&mut self, dir: Dir, mbox: Box<dyn Middlebox>) {
        self.mbox[dir.index()].boxes.push(mbox);
        self.mbox_on = true;
        self.push_extras = true;
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
        if self.push_extras {
            self.push_with_extras(now, dir, id, pkt);
        } else {
            self.arrive(now, dir, id, pkt);
        }
        self.process(now);
        id
    }

    /// [`Link::push`] with middleboxes or netem's duplication.
    #[cold]
    #[inline(never)]
    fn push_with_extras(&mut self, now: Time, dir: Dir, id: u64, pkt: Packet) {
        // netem's duplication: the copy follows the packet into the router queue.
        let copy = match &mut self.dirs[dir.index()].netem {
            Some(n) => n.duplicates().then(|| pkt.clone()),
            None => None,
        };
        if self.mbox_on {
            self.through_middleboxes(now, dir, 0, id, pkt);
        } else {
            self.arrive(now, dir, id, pkt);
        }
        if let Some(copy) = copy {
            self.duplicate(now, dir, copy);
        }
    }

    /// A copy of the packet just pushed (netem's `duplicate`) reaches the router, with a new id.
    #[cold]
    fn duplicate(&mut self, now: Time, d: Dir, copy: Packet) {
        let id = self.next_id;
        self.next_id += 1;
        let ds = &mut self.dirs[d.index()];
        ds.stats.duplicated += 1;
        self.log
            .event(now, d, EventKind::Duplicate, ds, Some((id, &copy)), None);
        if self.mbox_on {
            self.through_middleboxes(now, d, 0, id, copy);
        } else {
            self.arrive(now, d, id, copy);
        }
    }

    /// When the model next needs [`Link::handle_timeout`], if ever.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.mbox_on {
            return self.timers.next().into_iter().chain(self.mbox_next()).min();
        }
        self.timers.next()
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

    /// Direction `dir`'s router-queue length over time and serializer busy time (see
    /// [`crate::meter`]).
    pub fn meter(&self, dir: Dir) -> &Meter {
        &self.log.meters[dir.index()]
    }

    /// Mahimahi's figures over `[0, end]` of each direction with a trace (none without one):
    /// what `trace_summary::write_files` writes.
    pub fn trace_summaries(&self, end: Time) -> Vec<TraceSummary> {
        Dir::BOTH
            .iter()
            .filter_map(|&d| Some(self.log.record[d.index()].as_ref()?.summary(d, end)))
            .collect()
    }

    /// Whether no packet is anywhere in the link (queues, buffers, on the wire, in recovery).
    /// `poll_timeout` cannot tell: a link with states always has a next state change.
    pub fn is_empty(&self) -> bool {
        self.dirs.iter().all(|d| {
            d.queue.is_empty()
                && d.lsb.wait.is_empty()
                && d.lrb.is_empty()
                && d.input.as_ref().is_none_or(|i| i.is_empty())
        }) && self.mbox.iter().all(|c| c.is_empty())
    }

    /// Whether packets of `dir` wait unread at the router's input (STOP, FLOW CONTROL): the
    /// emulator then stops reading the TUN devices of the hosts that send into `dir`, as
    /// Seawind's router stops reading its input, until the queue has taken them all.
    pub fn input_waiting(&self, dir: Dir) -> bool {
        self.dirs[dir.index()]
            .input
            .as_ref()
            .is_some_and(|i| !i.is_empty())
    }

    /// Router queue length of `dir` in packets and bytes.
    pub fn queue_len(&self, dir: Dir) -> (usize, u64) {
        let d = &self.dirs[dir.index()];
        (d.queue.len(), d.queue.bytes)
    }

    // -----------------------------------------------------------------------------------------

    fn process(&mut self, now: Time) {
        debug_assert!(
            now >= self.now,
            "time went backwards: {now:?} < {:?}",
            self.now
        );
        if self.mbox_on {
            self.process_with_middleboxes(now);
        } else {
            while let Some((t, timer)) = self.timers.pop_due(now) {
                self.on_timer(t, timer);
            }
        }
        self.now = self.now.max(now);
        self.advance_chain(now);
    }

    /// [`Link::process`]'s loop when middleboxes are installed, out of line so that the loop
    /// without them stays small.
    #[inline(never)]
    fn process_with_middleboxes(&mut self, now: Time) {
        // Timers and middleboxes in time order (timers first at the same time).
        loop {
            let mbox = self.mbox_next().filter(|&m| m <= now);
            match (self.timers.next().filter(|&t| t <= now), mbox) {
                (Some(t), Some(m)) if m < t => self.middleboxes_due(m),
                (Some(_), _) => {
                    let (t, timer) = self.timers.pop_due(now).expect("due");
                    self.on_timer(t, timer);
                }
                (None, Some(m)) => self.middleboxes_due(m),
                (None, None) => break,
            }
        }
    }

    #[inline(always)] // once per timer, from the loop above
    fn on_timer(&mut self, t: Time, timer: Timer) {
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
            Timer::LsbFree(d, len) => {
                self.dirs[d.index()].lsb.left_link(len);
                self.pump(t, d);
            }
            Timer::Background(d) => self.background_arrives(t, d),
            Timer::BackgroundEnd(d) => self.background_sent(t, d),
        }
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

    // ---- 0. middleboxes ---------------------------------------------------------------------

    fn mbox_next(&self) -> Option<Time> {
        self.mbox.iter().filter_map(|c| c.next()).min()
    }

    /// Runs packet `id` through direction `d`'s middleboxes from position `from`, then into the
    /// router queue unless one of them holds or drops it.
    fn through_middleboxes(&mut self, now: Time, d: Dir, from: usize, id: u64, mut pkt: Packet) {
        let mut inject = Inject::default();
        let mut i = from;
        while i < self.mbox[d.index()].boxes.len() {
            let action = self.mbox[d.index()].boxes[i].on_packet(now, d, pkt, &mut inject);
            let ds = &mut self.dirs[d.index()];
            match action {
                Action::Pass(p) => pkt = p,
                Action::Rewrite(p) => {
                    self.log
                        .event(now, d, EventKind::MboxRewrite, ds, Some((id, &p)), None);
                    pkt = p;
                }
                Action::Delay(p, delay) => {
                    self.log.event(
                        now,
                        d,
                        EventKind::MboxDelay,
                        ds,
                        Some((id, &p)),
                        Some(delay.0),
                    );
                    self.mbox[d.index()].hold(now + delay, i + 1, id, p);
                    return self.inject(now, inject);
                }
                Action::Drop(pkt) => {
                    ds.stats.drops_middlebox += 1;
                    self.log
                        .event(now, d, EventKind::MboxDrop, ds, Some((id, &pkt)), None);
                    return self.inject(now, inject);
                }
            }
            i += 1;
        }
        self.arrive(now, d, id, pkt);
        self.inject(now, inject);
    }

    /// Puts packets middleboxes created into the router queues, each with a new id.
    fn inject(&mut self, now: Time, inject: Inject) {
        for (d, pkt) in inject.packets {
            let id = self.next_id;
            self.next_id += 1;
            let ds = &mut self.dirs[d.index()];
            ds.stats.injected += 1;
            self.log
                .event(now, d, EventKind::MboxInject, ds, Some((id, &pkt)), None);
            self.arrive(now, d, id, pkt);
        }
    }

    /// Middlebox work due at `t`: held packets whose delay is over, and the middleboxes' own
    /// timeouts.
    fn middleboxes_due(&mut self, t: Time) {
        self.now = self.now.max(t);
        self.advance_chain(t);
        for d in Dir::BOTH {
            while let Some((from, id, pkt)) = self.mbox[d.index()].pop_due(t) {
                self.through_middleboxes(t, d, from, id, pkt);
            }
            for i in 0..self.mbox[d.index()].boxes.len() {
                let b = &mut self.mbox[d.index()].boxes[i];
                if b.poll_timeout().is_some_and(|at| at <= t) {
                    let mut inject = Inject::default();
                    b.handle_timeout(t, &mut inject);
                    self.inject(t, inject);
                }
            }
        }
    }

    // ---- 1. router queue --------------------------------------------------------------------

    #[inline(always)] // into `push`, once per packet: the packet is not moved through a call
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
        if ds.arrive_extras && self.arrival_extras(now, d, len) {
            return self.leave_unread(now, d, id, pkt);
        }
        let ds = &mut self.dirs[d.index()];
        if ds.queue.has_discipline() {
            if !self.judge_arrival(now, d, id, &mut pkt) {
                return;
            }
            if self.dirs[d.index()].queue.at_dequeue {
                return self.enqueue_at_dequeue(now, d, id, pkt);
            }
        }
        let ds = &mut self.dirs[d.index()];
        // A packet that finds the queue empty and room in the LSB passes straight through, so
        // even a zero-length router queue forwards while the link keeps up.
        let passes = ds.queue.is_empty() && ds.lsb.fits(len);
        if ds.queue.full(len) && !passes {
            return self.drop_queued(now, d, id, &pkt, Cause::Queue);
        }
        self.enqueue(now, d, id, pkt);
        self.pump(now, d);
    }

    /// The packet joins the router queue's FIFO.
    #[inline(always)]
    fn enqueue(&mut self, now: Time, d: Dir, id: u64, pkt: Packet) {
        let ds = &mut self.dirs[d.index()];
        ds.queue.push(Queued {
            id,
            pkt,
            since: now,
        });
        let q = ds.queue.pkts.back().expect("just pushed");
        self.log
            .event(now, d, EventKind::Enqueue, ds, q.packet(), None);
    }

    /// The discipline's verdict on a packet entering the router queue: it may mark it (CE) or
    /// drop it. False when it dropped it.
    #[inline(always)]
    fn judge_arrival(&mut self, now: Time, d: Dir, id: u64, pkt: &mut Packet) -> bool {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let p = &dc.per_state[self.chain.current];
        let arrival = Arrival {
            now,
            packet: pkt,
            queue_pkts: ds.queue.len() as u64,
            queue_bytes: ds.queue.bytes,
            rate: ds.ser.rate(dc, p, now),
            overhead: dc.overhead,
        };
        match ds.queue.judge(&arrival) {
            Verdict::Pass => true,
            Verdict::Mark => {
                pkt.set_ce();
                ds.stats.marks += 1;
                self.log
                    .event(now, d, EventKind::Mark, ds, Some((id, pkt)), None);
                true
            }
            Verdict::Drop(cause) => {
                self.drop_queued(now, d, id, pkt, cause);
                false
            }
        }
    }

    /// An arrival where the direction has a trace (its summary's ingress) or an unread input:
    /// whether the packet must wait unread (STOP or FLOW CONTROL: the queue is full, or
    /// packets wait already).
    #[cold]
    #[inline(never)]
    fn arrival_extras(&mut self, now: Time, d: Dir, len: u64) -> bool {
        if let Some(r) = &mut self.log.record[d.index()] {
            r.arrived(now, len);
        }
        let ds = &self.dirs[d.index()];
        ds.input.as_ref().is_some_and(|input| {
            !input.is_empty() || (ds.queue.full(len) && !(ds.queue.is_empty() && ds.lsb.fits(len)))
        })
    }

    /// STOP or FLOW CONTROL: the packet waits unread at the router's input (or, past STOP's
    /// limit, is dropped there with cause `input`).
    #[cold]
    #[inline(never)]
    fn leave_unread(&mut self, now: Time, d: Dir, id: u64, pkt: Packet) {
        let ds = &mut self.dirs[d.index()];
        let input = ds.input.as_mut().expect("an input");
        if !input.has_room() {
            return self.drop_queued(now, d, id, &pkt, Cause::Input);
        }
        input.push(Queued {
            id,
            pkt,
            since: now,
        });
        let q = ds
            .input
            .as_ref()
            .and_then(|i| i.back())
            .expect("just pushed");
        self.log
            .event(now, d, EventKind::Unread, ds, q.packet(), None);
    }

    /// Reads the packets left unread, in order, while the queue has room: each is judged and
    /// enqueued as an arrival is at this moment. Whether any entered the queue.
    #[cold]
    #[inline(never)]
    fn read_input(&mut self, now: Time, d: Dir) -> bool {
        let mut entered = false;
        loop {
            let ds = &mut self.dirs[d.index()];
            let Some(input) = &mut ds.input else {
                return entered;
            };
            let Some(len) = input.head_len() else {
                return entered;
            };
            if ds.queue.full(len) && !(ds.queue.is_empty() && ds.lsb.fits(len)) {
                return entered;
            }
            let Queued { id, mut pkt, .. } = input.pop();
            if ds.queue.has_discipline() && !self.judge_arrival(now, d, id, &mut pkt) {
                continue;
            }
            self.enqueue(now, d, id, pkt);
            entered = true;
        }
    }

    /// [`Link::arrive`]'s end when the discipline acts at dequeue (CoDel, PIE, FQ-CoDel, whose
    /// flow queues come with a discipline that passes every arrival): out of line, so that
    /// drop-tail and RED keep their code.
    #[cold]
    #[inline(never)]
    fn enqueue_at_dequeue(&mut self, now: Time, d: Dir, id: u64, pkt: Packet) {
        let ds = &mut self.dirs[d.index()];
        let len = u64::from(pkt.wire_len);
        let passes = ds.queue.is_empty() && ds.lsb.fits(len);
        if ds.queue.full_any(len) && !passes {
            return self.drop_queued(now, d, id, &pkt, Cause::Queue);
        }
        ds.queue.push_any(Queued {
            id,
            pkt,
            since: now,
        });
        let q = ds.queue.last_any().expect("just pushed");
        self.log
            .event(now, d, EventKind::Enqueue, ds, q.packet(), None);
        if ds.queue.over_limit() {
            // FQ-CoDel: drops from the fattest flow's head, with cause `queue`.
            for q in ds.queue.drop_fattest() {
                count_drop(&mut ds.stats, Cause::Queue);
                self.log
                    .event(now, d, EventKind::Drop(Cause::Queue), ds, q.packet(), None);
            }
        }
        self.pump_at_dequeue(now, d);
    }

    fn drop_queued(&mut self, now: Time, d: Dir, id: u64, pkt: &Packet, cause: Cause) {
        let ds = &mut self.dirs[d.index()];
        count_drop(&mut ds.stats, cause);
        self.log
            .event(now, d, EventKind::Drop(cause), ds, Some((id, pkt)), None);
    }

    // ---- 2. link send buffer ----------------------------------------------------------------

    /// Moves packets from the head of the router queue into the LSB while they fit, then starts
    /// a transmission if the serializer is idle. Under a discipline acting at dequeue the FIFO
    /// is empty and [`Link::pump_at_dequeue`] takes over.
    fn pump(&mut self, now: Time, d: Dir) {
        self.pump_fifo(now, d);
        let ds = &mut self.dirs[d.index()];
        if ds.input.is_some() {
            return self.pump_with_input(now, d);
        }
        if ds.queue.note_if_empty(now) {
            return self.pump_at_dequeue(now, d);
        }
        self.start_tx(now, d);
    }

    /// [`Link::pump`]'s end with an unread input (STOP, FLOW CONTROL): room in the queue reads
    /// what waits there, which then moves on.
    #[cold]
    #[inline(never)]
    fn pump_with_input(&mut self, now: Time, d: Dir) {
        while self.dirs[d.index()]
            .input
            .as_ref()
            .is_some_and(|i| !i.is_empty())
            && self.read_input(now, d)
        {
            self.pump_fifo(now, d);
        }
        let ds = &mut self.dirs[d.index()];
        if ds.queue.note_if_empty(now) {
            return self.pump_at_dequeue(now, d);
        }
        self.start_tx(now, d);
    }

    /// Moves packets from the head of the router queue into the LSB while they fit.
    #[inline(always)]
    fn pump_fifo(&mut self, now: Time, d: Dir) {
        let ds = &mut self.dirs[d.index()];
        while let Some(head) = ds.queue.head(now) {
            let len = match head {
                Ok(len) => len,
                Err(expired) => {
                    count_drop(&mut ds.stats, Cause::Queue);
                    self.log.event(
                        now,
                        d,
                        EventKind::Drop(Cause::Queue),
                        ds,
                        expired.packet(),
                        None,
                    );
                    continue;
                }
            };
            if !ds.lsb.fits(len) {
                break;
            }
            let q = ds.queue.pop();
            ds.lsb.push(q);
            let q = ds.lsb.wait.back().expect("just pushed");
            self.log.event(now, d, EventKind::Lsb, ds, q.packet(), None);
        }
    }

    /// [`Link::pump`] when the discipline judges departures: CoDel and FQ-CoDel decide here,
    /// on the sojourn time; PIE measures it. After a drop the next head is dequeued at once.
    #[inline(never)]
    fn pump_at_dequeue(&mut self, now: Time, d: Dir) {
        let ds = &mut self.dirs[d.index()];
        loop {
            let lsb = &ds.lsb;
            let Some(head) = ds.queue.head_any(now, || lsb.fits(1)) else {
                break;
            };
            let len = match head {
                Ok(len) => len,
                Err(expired) => {
                    count_drop(&mut ds.stats, Cause::Queue);
                    self.log.event(
                        now,
                        d,
                        EventKind::Drop(Cause::Queue),
                        ds,
                        expired.packet(),
                        None,
                    );
                    continue;
                }
            };
            if !ds.lsb.fits(len) {
                break;
            }
            let mut q = ds.queue.pop_any();
            match ds.queue.judge_departure(now, &q) {
                Verdict::Pass => {}
                Verdict::Mark => {
                    q.pkt.set_ce();
                    ds.stats.marks += 1;
                    self.log
                        .event(now, d, EventKind::Mark, ds, q.packet(), None);
                }
                Verdict::Drop(cause) => {
                    count_drop(&mut ds.stats, cause);
                    self.log
                        .event(now, d, EventKind::Drop(cause), ds, q.packet(), None);
                    continue;
                }
            }
            ds.lsb.push(q);
            let q = ds.lsb.wait.back().expect("just pushed");
            self.log.event(now, d, EventKind::Lsb, ds, q.packet(), None);
        }
        ds.queue.note_if_empty_any(now);
        self.start_tx(now, d);
    }

    // ---- 3. serializer and propagation ------------------------------------------------------

    fn start_tx(&mut self, now: Time, d: Dir) {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let Some(head) = ds.lsb.wait.front() else {
            return;
        };
        let len = u64::from(head.pkt.wire_len);
        if ds.ser.transmitting.is_some() || !ds.lrb.can_reserve(len) {
            return;
        }
        if ds.ser.extras {
            return self.start_tx_extras(now, d);
        }
        let p = &dc.per_state[self.chain.current];
        let tx = ds
            .ser
            .rate(dc, p, now)
            .tx_time(len + u64::from(dc.overhead));
        let seq = ds.begin_tx();
        self.log.event(
            now,
            d,
            EventKind::TxStart,
            ds,
            ds.lrb.slot(seq).packet(),
            None,
        );
        self.timers.schedule(now + tx, Timer::TxEnd(d));
    }

    /// [`Link::start_tx`] where the serializer has a trace, an allocation delay, an available
    /// rate or a background load: the background may go first, the start may wait for the
    /// allocation, the end follows the trace; the trace summary records it.
    #[cold]
    #[inline(never)]
    fn start_tx_extras(&mut self, now: Time, d: Dir) {
        if self.dirs[d.index()].bg.is_some() && self.background_first(now, d) {
            return;
        }
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let Some(head) = ds.lsb.wait.front() else {
            return;
        };
        let (len, since) = (u64::from(head.pkt.wire_len), head.since);
        if ds.ser.transmitting.is_some() || !ds.lrb.can_reserve(len) {
            return;
        }
        let p = &dc.per_state[self.chain.current];
        // A trace that ended sends nothing more: the packet waits.
        let Some((start, end)) = ds.ser.plan(dc, p, now, len + u64::from(dc.overhead), since)
        else {
            return;
        };
        let seq = ds.begin_tx();
        if start > now {
            self.log.event(
                now,
                d,
                EventKind::Alloc,
                ds,
                ds.lrb.slot(seq).packet(),
                Some((start - now).0),
            );
        }
        self.log.event(
            now,
            d,
            EventKind::TxStart,
            ds,
            ds.lrb.slot(seq).packet(),
            None,
        );
        if let Some(r) = &mut self.log.record[d.index()] {
            r.sent(since, end, len);
        }
        self.timers.schedule(end, Timer::TxEnd(d));
    }

    /// Whether the channel is the background's now: it is sending one of theirs, or one of
    /// theirs goes before ours (`priority`), which then starts.
    #[cold]
    #[inline(never)]
    fn background_first(&mut self, now: Time, d: Dir) -> bool {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let bg = ds.bg.as_mut().expect("a background load");
        if bg.busy {
            return true;
        }
        if ds.ser.transmitting.is_some() {
            return false;
        }
        let b = dc.background.as_ref().expect("a background load");
        // Ours that could start now, and since when it waited.
        let ours = ds
            .lsb
            .wait
            .front()
            .filter(|q| ds.lrb.can_reserve(u64::from(q.pkt.wire_len)))
            .map(|q| q.since);
        if !bg.goes_first(b, ours) {
            return false;
        }
        let p = &dc.per_state[self.chain.current];
        let Some(end) = ds.ser.tx_end(dc, p, now, b.packet + u64::from(dc.overhead)) else {
            return true; // a trace that ended carries nothing more
        };
        let bg = ds.bg.as_mut().expect("a background load");
        bg.waiting.pop_front();
        bg.busy = true;
        let queue = ds.queue.len() as u64;
        self.log.meters[d.index()].on_event(now, EventKind::TxStart, queue);
        self.timers.schedule(end, Timer::BackgroundEnd(d));
        true
    }

    /// A background packet arrives at the serializer; it starts if the channel is free.
    #[cold]
    fn background_arrives(&mut self, now: Time, d: Dir) {
        let b = self.cfg.dirs[d.index()]
            .background
            .as_ref()
            .expect("a background load");
        let bg = self.dirs[d.index()].bg.as_mut().expect("a background load");
        let next = bg.arrive(b);
        self.timers.schedule(next, Timer::Background(d));
        self.start_tx_extras(now, d);
    }

    /// The end of a transmission where the serializer has extras: a waiting background packet
    /// may take the channel none of ours took, and an idle serializer loses the rest of a
    /// trace's opportunity.
    #[cold]
    #[inline(never)]
    fn after_tx_extras(&mut self, now: Time, d: Dir) {
        let ds = &mut self.dirs[d.index()];
        if ds.ser.transmitting.is_none()
            && ds
                .bg
                .as_ref()
                .is_some_and(|bg| !bg.busy && !bg.waiting.is_empty())
        {
            self.start_tx_extras(now, d);
        }
        self.dirs[d.index()].ser.settle();
    }

    /// A background packet's transmission ended: it leaves (discarded); the channel is free.
    #[cold]
    fn background_sent(&mut self, now: Time, d: Dir) {
        let ds = &mut self.dirs[d.index()];
        let bg = ds.bg.as_mut().expect("a background load");
        bg.busy = false;
        bg.sent += 1;
        ds.stats.background += 1;
        ds.ser.ended_background(now);
        let queue = ds.queue.len() as u64;
        self.log.meters[d.index()].on_event(now, EventKind::TxEnd, queue);
        self.start_tx_extras(now, d);
        self.dirs[d.index()].ser.settle();
    }

    #[inline(always)] // into the timer loop, once per packet
    fn tx_end(&mut self, now: Time, d: Dir) {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let seq = ds.ser.end(now);
        let (len, nth) = {
            let s = ds.lrb.slot(seq);
            (s.len, s.nth)
        };
        ds.lsb.sent(len);
        self.log.event(
            now,
            d,
            EventKind::TxEnd,
            ds,
            ds.lrb.slot(seq).packet(),
            None,
        );
        // Propagation, plus the state's jitter and any scripted delay for this packet.
        let p = &dc.per_state[self.chain.current];
        let extra = ds.ser.extra_delay(dc, p, nth);
        if extra > Dur::ZERO {
            self.log.event(
                now,
                d,
                EventKind::Delay,
                ds,
                ds.lrb.slot(seq).packet(),
                Some(extra.0),
            );
        }
        let (delay, link_ack) = (p.delay, dc.link_ack);
        let delay = match ds.prop_extras {
            false => delay,
            true => self.netem_propagation(now, d, seq, delay),
        };
        self.timers
            .schedule(now + delay + extra, Timer::Arrive(d, seq));
        if !link_ack {
            self.pump(now, d);
        } else {
            self.start_tx(now, d);
        }
        if self.dirs[d.index()].ser.extras {
            self.after_tx_extras(now, d);
        }
    }

    /// A packet's propagation with a delay trace (the delay in force now, instead of
    /// `delay`), CellReplay's pair (the rest of its release time) or netem's jitter and
    /// reordering.
    #[cold]
    #[inline(never)]
    fn netem_propagation(&mut self, now: Time, d: Dir, seq: u64, delay: Dur) -> Dur {
        let delay = match &self.cfg.dirs[d.index()].delay_trace {
            Some(t) => t.at(now),
            None => self.dirs[d.index()].ser.cell_delay().unwrap_or(delay),
        };
        let ds = &mut self.dirs[d.index()];
        let Some(netem) = ds.netem.as_mut() else {
            return delay;
        };
        let g = netem.propagation(delay);
        if g.jittered {
            let packet = ds.lrb.slot(seq).packet();
            self.log
                .event(now, d, EventKind::Jitter, ds, packet, Some(g.delay.0));
        }
        if g.reordered {
            ds.stats.reordered += 1;
            let packet = ds.lrb.slot(seq).packet();
            self.log
                .event(now, d, EventKind::Reorder, ds, packet, Some(0));
        }
        g.delay
    }

    // ---- 4. error process -------------------------------------------------------------------

    /// Attempt number `attempts + 1` of packet `seq` reaches the far end at `now`.
    fn attempt(&mut self, now: Time, d: Dir, seq: u64) {
        let dc = &self.cfg.dirs[d.index()];
        let p = &dc.per_state[self.chain.current];
        let ds = &mut self.dirs[d.index()];
        let slot = ds.lrb.slot_mut(seq);
        slot.attempts += 1;
        let (attempt, acc) = (slot.attempts, slot.error_delay);
        let (len, overhead) = (slot.len, dc.overhead);
        let fails = ds.errors.fails(p, len, overhead, || Attempt {
            now,
            dir: d,
            packet: slot.pkt.as_ref().expect("a packet on the link"),
            attempt,
            params: p,
            bits: (len + u64::from(overhead)) * 8,
        });
        if !fails {
            return self.at_far_end(now, d, seq);
        }
        ds.stats.errors += 1;
        if p.handling == Handling::Forward {
            return self.forward_damaged(now, d, seq);
        }
        let delay = p.error_delay.as_ref().map(|x| x.sample(&mut ds.errors.rng));
        let kind = ds.errors.event(attempt);
        match (p.handling, delay) {
            (Handling::Delay, Some(delay)) => {
                self.log
                    .event(now, d, kind, ds, ds.lrb.slot(seq).packet(), Some(delay.0));
                self.timers.schedule(now + delay, Timer::Recovered(d, seq));
            }
            (Handling::Arq, Some(delay))
                if p.retries.is_none_or(|n| attempt <= n)
                    && p.drop_threshold.is_none_or(|t| acc + delay <= t) =>
            {
                ds.lrb.slot_mut(seq).error_delay = acc + delay;
                self.log
                    .event(now, d, kind, ds, ds.lrb.slot(seq).packet(), Some(delay.0));
                self.timers.schedule(now + delay, Timer::Retry(d, seq));
            }
            _ => {
                self.log
                    .event(now, d, kind, ds, ds.lrb.slot(seq).packet(), Some(0));
                self.drop_on_link(now, d, seq);
            }
        }
    }

    /// Seawind's FORWARD: the failed attempt goes on with a damaged byte, for the receiver's
    /// checksum to discard.
    #[cold]
    fn forward_damaged(&mut self, now: Time, d: Dir, seq: u64) {
        let ds = &mut self.dirs[d.index()];
        let slot = ds.lrb.slot_mut(seq);
        slot.pkt.as_mut().expect("a packet on the link").damage();
        ds.stats.corrupted += 1;
        self.log.event(
            now,
            d,
            EventKind::Corrupt,
            ds,
            ds.lrb.slot(seq).packet(),
            None,
        );
        self.at_far_end(now, d, seq);
    }

    fn drop_on_link(&mut self, now: Time, d: Dir, seq: u64) {
        let ds = &mut self.dirs[d.index()];
        let (id, pkt, len) = ds.lrb.take(seq);
        ds.lsb.left_link(len);
        ds.stats.drops_error += 1;
        let packet = pkt.as_ref().map(|p| (id, p));
        self.log
            .event(now, d, EventKind::Drop(Cause::Error), ds, packet, None);
        self.release_in_order(now, d);
        self.pump(now, d);
    }

    // ---- 5. link receive buffer -------------------------------------------------------------

    /// Packet `seq` has arrived intact at the far end.
    fn at_far_end(&mut self, now: Time, d: Dir, seq: u64) {
        let ds = &mut self.dirs[d.index()];
        if !ds.lrb.in_order || ds.lrb.is_front(seq) {
            self.release(now, d, seq);
            self.release_in_order(now, d);
        } else {
            ds.lrb.hold(seq);
            self.log
                .event(now, d, EventKind::Hold, ds, ds.lrb.slot(seq).packet(), None);
        }
        self.pump(now, d);
    }

    /// Releases held packets from the front of the link order, and forgets gone ones.
    fn release_in_order(&mut self, now: Time, d: Dir) {
        while let Some(seq) = self.dirs[d.index()].lrb.front_held() {
            self.release(now, d, seq);
        }
    }

    /// Seawind's output dropper on a packet being released: one draw of the probability (a
    /// distribution's), then the test; true when it dropped the packet.
    #[cold]
    #[inline(never)]
    fn output_drops(&mut self, now: Time, d: Dir, id: u64, pkt: &Packet) -> bool {
        let dc = &self.cfg.dirs[d.index()];
        let ds = &mut self.dirs[d.index()];
        let Some(rng) = &mut ds.dropper else {
            return false;
        };
        let p = dc
            .output_dropper
            .as_ref()
            .expect("a dropper")
            .probability(rng);
        if !(p > 0.0 && (p >= 1.0 || unit(rng) < p)) {
            return false;
        }
        ds.stats.drops_output += 1;
        self.log.event(
            now,
            d,
            EventKind::Drop(Cause::Output),
            ds,
            Some((id, pkt)),
            None,
        );
        true
    }

    fn release(&mut self, now: Time, d: Dir, seq: u64) {
        let ds = &mut self.dirs[d.index()];
        let (id, pkt, len) = ds.lrb.take(seq);
        let pkt = pkt.expect("a released packet is still on the link");
        // The LSB space goes when the link-level ACK is back: at once, or `link_ack_delay` later
        // (a packet the ARQ gives up on frees it at once: the sender gave up, no ACK comes).
        let back = self.cfg.dirs[d.index()].link_ack_delay;
        if ds.lsb.link_ack && back > Dur::ZERO {
            self.timers.schedule(now + back, Timer::LsbFree(d, len));
        } else {
            ds.lsb.left_link(len);
        }
        if ds.dropper.is_some() && self.output_drops(now, d, id, &pkt) {
            return;
        }
        let ds = &mut self.dirs[d.index()];
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

impl Log {
    /// Records an event of direction `d` with the buffer occupancy after it (`ds`).
    fn event(
        &mut self,
        t: Time,
        d: Dir,
        kind: EventKind,
        ds: &Pipe,
        packet: Option<(u64, &Packet)>,
        delay_ns: Option<u64>,
    ) {
        self.meters[d.index()].on_event(t, kind, ds.queue.len() as u64);
        if kind.level() > self.level {
            return;
        }
        self.events.push(Event {
            time: t,
            kind,
            dir: Some(d),
            packet: packet.map(|(id, p)| PacketFields::of(id, p)),
            queue_pkts: ds.queue.len() as u32,
            queue_bytes: ds.queue.bytes,
            lsb_bytes: ds.lsb.bytes,
            lrb_bytes: ds.lrb.held,
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
        Cause::Middlebox => st.drops_middlebox += 1,
        Cause::Codel | Cause::Pie => st.drops_aqm += 1,
        Cause::Output => st.drops_output += 1,
        Cause::Input => st.drops_input += 1,
        // Loss models name themselves on `error` rows; their drops are the link's errors.
        Cause::Gemodel | Cause::FourState | Cause::LossTrace => st.drops_error += 1,
        // Never drop causes.
        Cause::Jitter | Cause::Reorder | Cause::Duplicate => {}
    }
}
