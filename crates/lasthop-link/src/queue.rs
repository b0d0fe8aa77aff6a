//! Stage 1, the router queue: a FIFO limited in packets, bytes and sojourn time, whose
//! [`QueueDiscipline`] decides on each arrival whether the packet passes, is ECN-marked or is
//! dropped.
//!
//! Disciplines shipped: [`DropTail`] (passes everything; the limits do the dropping) and RED
//! with ECN ([`crate::red::RedQueue`]). Adding one (CoDel, PIE, FQ-CoDel, ...) is one module:
//! a type implementing [`QueueDiscipline`], built in [`discipline`] from its spec.

use crate::event::Cause;
use crate::red::{Red, RedQueue};
use crate::spec::{Dir, QueueConfig};
use lasthop_core::{Dur, Packet, Rate, Seeds, Time};
use std::collections::VecDeque;

/// A packet waiting in the router queue or the link send buffer.
pub(crate) struct Queued {
    pub id: u64,
    pub pkt: Packet,
    pub since: Time,
}

impl Queued {
    #[inline]
    pub fn packet(&self) -> Option<(u64, &Packet)> {
        Some((self.id, &self.pkt))
    }
}

/// What the discipline says about an arriving packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Enqueue it (the queue's limits still apply).
    Pass,
    /// Set CE and enqueue it.
    Mark,
    /// Drop it, with this cause in the event log.
    Drop(Cause),
}

/// An arrival as the discipline sees it: the queue *before* the packet joins.
pub struct Arrival<'a> {
    pub now: Time,
    pub packet: &'a Packet,
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    /// The link rate in force and the per-packet framing overhead, for disciplines that need a
    /// packet's transmission time (RED's idle-time correction).
    pub rate: Rate,
    pub overhead: u32,
}

impl Arrival<'_> {
    /// The transmission time of a `bytes`-byte packet at the rate in force.
    #[inline]
    pub fn tx_time(&self, bytes: u64) -> Dur {
        self.rate.tx_time(bytes + u64::from(self.overhead))
    }
}

/// A router queue's active queue management. Sans-IO: randomness only from named streams the
/// discipline owns.
pub trait QueueDiscipline: Send {
    fn on_arrival(&mut self, a: &Arrival<'_>) -> Verdict;
    /// The queue became empty at `now`.
    fn on_empty(&mut self, _now: Time) {}
}

/// Drop-tail: every packet passes; the queue's limits drop what does not fit.
pub struct DropTail;

impl QueueDiscipline for DropTail {
    #[inline]
    fn on_arrival(&mut self, _: &Arrival<'_>) -> Verdict {
        Verdict::Pass
    }
}

/// The discipline a queue config asks for. `mean_packet` is the default typical packet size
/// (the MTU).
pub fn discipline(
    cfg: &QueueConfig,
    mean_packet: u64,
    seeds: &Seeds,
    dir: Dir,
) -> Option<Box<dyn QueueDiscipline>> {
    cfg.red.clone().map(|r| {
        Box::new(RedQueue::new(
            Red::new(r, mean_packet),
            seeds.stream(&format!("link.red.{dir}")),
        )) as Box<dyn QueueDiscipline>
    })
}

pub(crate) struct RouterQueue {
    pub pkts: VecDeque<Queued>,
    pub bytes: u64,
    limit_pkts: Option<u64>,
    limit_bytes: Option<u64>,
    sojourn: Option<Dur>,
    /// `None`: drop-tail, without a call per packet.
    discipline: Option<Box<dyn QueueDiscipline>>,
}

impl RouterQueue {
    #[inline]
    pub fn new(cfg: &QueueConfig, discipline: Option<Box<dyn QueueDiscipline>>) -> RouterQueue {
        RouterQueue {
            pkts: VecDeque::new(),
            bytes: 0,
            limit_pkts: cfg.packets,
            limit_bytes: cfg.bytes,
            sojourn: cfg.sojourn,
            discipline,
        }
    }

    #[inline]
    pub fn set_discipline(&mut self, d: Box<dyn QueueDiscipline>) {
        self.discipline = Some(d);
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
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

    /// Tells the discipline if the queue is empty at `now`.
    #[inline]
    pub fn note_if_empty(&mut self, now: Time) {
        if self.pkts.is_empty() {
            if let Some(d) = &mut self.discipline {
                d.on_empty(now);
            }
        }
    }
}
