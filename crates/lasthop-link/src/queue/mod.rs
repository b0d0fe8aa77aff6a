//! Stage 1, the router queue: a FIFO limited in packets, bytes and sojourn time, whose
//! [`QueueDiscipline`] decides on each arrival (and, if it asks to, on each departure) whether
//! the packet passes, is ECN-marked or is dropped.
//!
//! Disciplines shipped, one file each: [`DropTail`] (passes everything; the limits do the
//! dropping), RED with ECN and its adaptive variant ([`red::RedQueue`]), PIE ([`pie::Pie`], at
//! enqueue) and CoDel ([`codel::Codel`], at dequeue). FQ-CoDel changes the order packets leave
//! in, so it replaces the FIFO itself ([`fq_codel::FqCodel`]); the queue's limits then drop
//! from the fattest flow instead of the arriving packet. The trait they implement is in
//! [`discipline`], which they import (never this file, which builds them).

pub mod codel;
pub mod discipline;
pub mod fq_codel;
pub mod pie;
pub mod red;

pub(crate) use discipline::Queued;
pub use discipline::{Arrival, Departure, DropTail, QueueDiscipline, Verdict};

use crate::dir::Dir;
use crate::spec::queue::{Aqm, QueueConfig};
use codel::Codel;
use fq_codel::FqCodel;
use lasthop_core::{Dur, Seeds, Time};
use pie::Pie;
use red::{AdaptiveRedQueue, Red, RedQueue};
use std::collections::VecDeque;
/// The discipline a queue config asks for. `mean_packet` is the default typical packet size
/// (the MTU).
pub fn discipline(
    cfg: &QueueConfig,
    mean_packet: u64,
    seeds: &Seeds,
    dir: Dir,
) -> Option<Box<dyn QueueDiscipline>> {
    if let Some(r) = cfg.red.clone() {
        let adaptive = r.adaptive;
        let red = RedQueue::new(
            Red::new(r, mean_packet),
            seeds.stream(&format!("link.red.{dir}")),
        );
        // A type of its own, so that plain RED makes no adaptive test per packet.
        return Some(if adaptive {
            Box::new(AdaptiveRedQueue(red))
        } else {
            Box::new(red)
        });
    }
    match &cfg.aqm {
        Some(Aqm::Codel(c)) => Some(Box::new(Codel::new(*c, mean_packet))),
        Some(Aqm::Pie(p)) => Some(Box::new(Pie::new(
            *p,
            mean_packet,
            seeds.stream(&format!("link.pie.{dir}")),
        ))),
        // FQ-CoDel acts at dequeue; this marks the queue as one with a discipline, so that
        // arrivals take the dequeue-time path.
        Some(Aqm::FqCodel(_)) => Some(Box::new(FlowQueued)),
        None => None,
    }
}

/// The arrival side of FQ-CoDel: every packet is enqueued (the limits drop from the fattest
/// flow afterwards).
struct FlowQueued;

impl QueueDiscipline for FlowQueued {
    fn on_arrival(&mut self, _: &Arrival<'_>) -> Verdict {
        Verdict::Pass
    }

    fn at_dequeue(&self) -> bool {
        true
    }
}

/// FQ-CoDel's flow queues, when the config asks for them (`mtu`: the link MTU).
pub fn flow_queues(cfg: &QueueConfig, mtu: u64, seeds: &Seeds, dir: Dir) -> Option<Box<FqCodel>> {
    match &cfg.aqm {
        Some(Aqm::FqCodel(f)) => Some(Box::new(FqCodel::new(
            *f,
            mtu,
            seeds.stream(&format!("link.fq_codel.{dir}")),
        ))),
        _ => None,
    }
}

pub(crate) struct RouterQueue {
    /// The FIFO of drop-tail and RED (empty under a discipline acting at dequeue).
    pub pkts: VecDeque<Queued>,
    pub bytes: u64,
    /// The FIFO of CoDel and PIE: apart from `pkts`, so that the drop-tail and RED code finds
    /// `pkts` empty and hands over to the dequeue-time code only when it would stop anyway.
    aqm_pkts: VecDeque<Queued>,
    /// Packets in `aqm_pkts` or FQ-CoDel's flow queues, so that `len` needs no branch.
    aqm_len: usize,
    limit_pkts: Option<u64>,
    limit_bytes: Option<u64>,
    sojourn: Option<Dur>,
    /// `None`: drop-tail, without a call per packet.
    discipline: Option<Box<dyn QueueDiscipline>>,
    /// FQ-CoDel's flow queues, replacing the FIFO.
    fq: Option<Box<FqCodel>>,
    /// Whether departures are judged (CoDel, PIE's delay estimate, FQ-CoDel). When false the
    /// model uses the FIFO methods alone, so drop-tail and RED run the code they always ran.
    pub at_dequeue: bool,
}

// The FIFO: drop-tail, RED, PIE, CoDel.
impl RouterQueue {
    #[inline]
    pub fn new(
        cfg: &QueueConfig,
        discipline: Option<Box<dyn QueueDiscipline>>,
        mut fq: Option<Box<FqCodel>>,
    ) -> RouterQueue {
        let at_dequeue = fq.is_some() || discipline.as_ref().is_some_and(|d| d.at_dequeue());
        // FQ-CoDel enqueues every packet and then drops from the fattest flow, so the tail-drop
        // test (`full`) sees no limits.
        // No queue holds more than MAX_QUEUE_PACKETS, limit or none.
        let cap = crate::spec::limits::MAX_QUEUE_PACKETS;
        let (mut limit_pkts, mut limit_bytes) =
            (Some(cfg.packets.map_or(cap, |n| n.min(cap))), cfg.bytes);
        if let Some(fq) = &mut fq {
            fq.set_limits(limit_pkts.take(), limit_bytes.take());
        }
        RouterQueue {
            pkts: VecDeque::new(),
            bytes: 0,
            aqm_pkts: VecDeque::new(),
            aqm_len: 0,
            limit_pkts,
            limit_bytes,
            sojourn: cfg.sojourn,
            discipline,
            fq,
            at_dequeue,
        }
    }

    /// Installs a discipline in place of the config's (and of FQ-CoDel's flow queues, which
    /// must be empty: call it before the first packet).
    #[inline]
    pub fn set_discipline(&mut self, d: Box<dyn QueueDiscipline>) {
        self.at_dequeue = d.at_dequeue();
        self.discipline = Some(d);
        self.fq = None;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.pkts.len() + self.aqm_len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn has_discipline(&self) -> bool {
        self.discipline.is_some()
    }

    /// The discipline's verdict on an arrival (drop-tail: pass).
    #[inline]
    pub fn judge(&mut self, a: &Arrival<'_>) -> Verdict {
        match &mut self.discipline {
            Some(d) => d.on_arrival(a),
            None => Verdict::Pass,
        }
    }

    /// Whether a packet of `len` bytes would exceed a limit.
    #[inline]
    pub fn full(&self, len: u64) -> bool {
        self.limit_pkts
            .is_some_and(|n| self.pkts.len() as u64 + 1 > n)
            || self.limit_bytes.is_some_and(|b| self.bytes + len > b)
    }

    #[inline]
    pub fn push(&mut self, q: Queued) {
        self.bytes += u64::from(q.pkt.wire_len);
        self.pkts.push_back(q);
    }

    /// The head's length, if it waited no longer than the sojourn limit; `Err` with the head
    /// removed if it waited longer.
    #[inline]
    pub fn head(&mut self, now: Time) -> Option<Result<u64, Queued>> {
        let head = self.pkts.front()?;
        if self
            .sojourn
            .is_some_and(|j| now.saturating_since(head.since) > j)
        {
            return Some(Err(self.pop()));
        }
        Some(Ok(u64::from(head.pkt.wire_len)))
    }

    #[inline]
    pub fn pop(&mut self) -> Queued {
        let q = self.pkts.pop_front().expect("head exists");
        self.bytes -= u64::from(q.pkt.wire_len);
        q
    }

    /// Tells the discipline if the FIFO is empty at `now`. True when the discipline acts at
    /// dequeue, whose packets are elsewhere: the caller then runs the dequeue-time code.
    #[inline]
    pub fn note_if_empty(&mut self, now: Time) -> bool {
        if self.pkts.is_empty() {
            if let Some(d) = &mut self.discipline {
                if self.at_dequeue {
                    return true;
                }
                d.on_empty(now);
            }
        }
        false
    }
}

// Disciplines acting at dequeue (`at_dequeue`): the FIFO judged at its head, or FQ-CoDel's flow
// queues and their scheduler.
impl RouterQueue {
    /// [`RouterQueue::full`] for CoDel and PIE (FQ-CoDel has no tail-drop limits).
    pub fn full_any(&self, len: u64) -> bool {
        self.limit_pkts.is_some_and(|n| self.aqm_len as u64 + 1 > n)
            || self.limit_bytes.is_some_and(|b| self.bytes + len > b)
    }

    /// Enqueues `q` (into its flow queue with FQ-CoDel).
    pub fn push_any(&mut self, q: Queued) {
        self.bytes += u64::from(q.pkt.wire_len);
        self.aqm_len += 1;
        match &mut self.fq {
            None => self.aqm_pkts.push_back(q),
            Some(fq) => fq.enqueue(q),
        }
    }

    /// The packet last pushed by [`RouterQueue::push_any`].
    pub fn last_any(&self) -> Option<&Queued> {
        match &self.fq {
            None => self.aqm_pkts.back(),
            Some(fq) => fq.last(),
        }
    }

    /// Whether FQ-CoDel's flow queues hold more than the limits allow (checked after
    /// enqueueing); always false for the FIFO, whose limits `full` applies before.
    pub fn over_limit(&self) -> bool {
        self.fq.as_ref().is_some_and(|f| f.over_limit(self.bytes))
    }

    /// FQ-CoDel at its limit: removes packets from the head of the flow with the largest
    /// backlog (RFC 8290 §4.1; Linux drops half of it, at most `drop_batch` packets).
    pub fn drop_fattest(&mut self) -> Vec<Queued> {
        let dropped = match &mut self.fq {
            Some(fq) => fq.drop_fattest(),
            None => Vec::new(),
        };
        for q in &dropped {
            self.bytes -= u64::from(q.pkt.wire_len);
        }
        self.aqm_len -= dropped.len();
        dropped
    }

    /// [`RouterQueue::head`], with FQ-CoDel's scheduler choosing the head; `room` says whether
    /// the LSB could take any packet now (FQ-CoDel's scheduler runs only then, as Linux
    /// dequeues only when the device has room).
    pub fn head_any(
        &mut self,
        now: Time,
        room: impl FnOnce() -> bool,
    ) -> Option<Result<u64, Queued>> {
        let head = match &mut self.fq {
            None => self.aqm_pkts.front()?,
            Some(fq) => {
                if !room() {
                    return None;
                }
                fq.head()?
            }
        };
        if self
            .sojourn
            .is_some_and(|j| now.saturating_since(head.since) > j)
        {
            return Some(Err(self.pop_any()));
        }
        Some(Ok(u64::from(head.pkt.wire_len)))
    }

    /// [`RouterQueue::note_if_empty`] for a discipline acting at dequeue.
    pub fn note_if_empty_any(&mut self, now: Time) {
        if self.aqm_len == 0 {
            if let Some(d) = &mut self.discipline {
                d.on_empty(now);
            }
        }
    }

    pub fn pop_any(&mut self) -> Queued {
        let q = match &mut self.fq {
            None => self.aqm_pkts.pop_front().expect("head exists"),
            Some(fq) => fq.pop(),
        };
        self.aqm_len -= 1;
        self.bytes -= u64::from(q.pkt.wire_len);
        q
    }

    /// The verdict on `q`, just taken from the head at `now`.
    pub fn judge_departure(&mut self, now: Time, q: &Queued) -> Verdict {
        let sojourn = now.saturating_since(q.since);
        if let Some(fq) = &mut self.fq {
            return fq.on_dequeue(now, q, sojourn, self.bytes);
        }
        match &mut self.discipline {
            Some(d) => d.on_dequeue(&Departure {
                now,
                packet: &q.pkt,
                sojourn,
                queue_pkts: self.aqm_len as u64,
                queue_bytes: self.bytes,
            }),
            None => Verdict::Pass,
        }
    }
}
