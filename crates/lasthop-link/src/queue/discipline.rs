//! What a router queue's discipline sees and says: the [`QueueDiscipline`] trait, an
//! [`Arrival`] and a [`Departure`], its [`Verdict`], and the packet as queued.

use crate::event::Cause;
use lasthop_core::{Dur, Packet, Rate, Time};

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

/// A departure as the discipline sees it: the packet leaving the router queue for the link
/// send buffer, and the queue *after* it left.
pub struct Departure<'a> {
    pub now: Time,
    pub packet: &'a Packet,
    /// How long it waited in the router queue.
    pub sojourn: Dur,
    pub queue_pkts: u64,
    pub queue_bytes: u64,
}

/// A router queue's active queue management. Sans-IO: randomness only from named streams the
/// discipline owns.
pub trait QueueDiscipline: Send {
    fn on_arrival(&mut self, a: &Arrival<'_>) -> Verdict;
    /// The queue became empty at `now`.
    fn on_empty(&mut self, _now: Time) {}
    /// Whether [`QueueDiscipline::on_dequeue`] must be called (read once, when installed).
    fn at_dequeue(&self) -> bool {
        false
    }
    /// The packet at the head leaves the queue: `Pass` sends it on, `Mark` sets CE first, `Drop`
    /// drops it (and the next head is dequeued at once, at the same `now`).
    fn on_dequeue(&mut self, _d: &Departure<'_>) -> Verdict {
        Verdict::Pass
    }
}

/// Drop-tail: every packet passes; the queue's limits drop what does not fit.
pub struct DropTail;

impl QueueDiscipline for DropTail {
    #[inline]
    fn on_arrival(&mut self, _: &Arrival<'_>) -> Verdict {
        Verdict::Pass
    }
}
