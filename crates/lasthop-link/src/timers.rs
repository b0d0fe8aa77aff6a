//! The link's timer queue, ordered by (time, insertion).

use crate::dir::Dir;
use dary_heap::QuaternaryHeap;
use lasthop_core::Time;
use std::cmp::Reverse;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Timer {
    StateChange,
    TxEnd(Dir),
    /// The packet with this link sequence number reaches the far end.
    Arrive(Dir, u64),
    /// An ARQ retry of this link sequence number completes.
    Retry(Dir, u64),
    /// A `delay`-handled error of this link sequence number is over.
    Recovered(Dir, u64),
    /// The link-level ACK of a released packet of this many bytes reaches the sender: its LSB
    /// space is freed (`link_ack_delay`).
    LsbFree(Dir, u64),
    /// A background packet arrives at the serializer.
    Background(Dir),
    /// A background packet's transmission ends.
    BackgroundEnd(Dir),
}

/// The timer queue, ordered by (time, insertion). Each direction's end of transmission (at most
/// one at a time, and one per packet) waits in its own slot rather than in the heap, which then
/// holds mostly the packets propagating; the slots and the heap share the (time, insertion) key,
/// so the order is the same as with one heap.
#[derive(Default)]
pub(crate) struct Timers {
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
    #[inline]
    pub fn schedule(&mut self, at: Time, timer: Timer) {
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

    #[inline]
    fn next_entry(&self) -> Option<(TimerEntry, Next)> {
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

    /// The time of the next timer.
    #[inline]
    pub fn next(&self) -> Option<Time> {
        self.next_entry().map(|(e, _)| e.at)
    }

    /// Removes and returns the next timer if it is due at `now`.
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, Timer)> {
        let (e, from) = self.next_entry().filter(|(e, _)| e.at <= now)?;
        match from {
            Next::Heap => {
                self.heap.pop();
            }
            Next::TxEnd(i) => self.tx_end[i] = None,
        }
        Some((e.at, e.timer))
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
