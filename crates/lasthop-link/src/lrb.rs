//! Stage 5, the link receive buffer (LRB) and the link order: every packet from the start of its
//! transmission until it is released or dropped has a slot, in link order; a packet that arrives
//! intact behind one still on the link waits (is *held*) here.

use lasthop_core::{Dur, Packet};
use std::collections::VecDeque;

#[derive(PartialEq, Eq, Clone, Copy)]
pub(crate) enum Status {
    /// Being transmitted, propagating, or in recovery.
    OnLink,
    /// At the far end, waiting for an earlier packet.
    Held,
    /// Released or dropped; popped when it reaches the front.
    Gone,
}

pub(crate) struct Slot {
    pub id: u64,
    pub pkt: Option<Packet>,
    pub len: u64,
    pub status: Status,
    /// Transmission attempts so far (1 = the first).
    pub attempts: u32,
    /// Error delay accumulated by ARQ retries.
    pub error_delay: Dur,
    /// Transmission number in this direction (1-based), for scripted delays.
    pub nth: u64,
}

impl Slot {
    /// The packet and its id, while it is on the link or held.
    #[inline]
    pub fn packet(&self) -> Option<(u64, &Packet)> {
        self.pkt.as_ref().map(|p| (self.id, p))
    }
}

pub(crate) struct ReceiveBuffer {
    /// Packets on the link and in the LRB, in link order; `slots[0]` has sequence `base`.
    slots: VecDeque<Slot>,
    base: u64,
    /// Bytes sent and not yet released or dropped: what the LRB might have to hold.
    reserved: u64,
    /// Bytes held behind an earlier packet.
    pub held: u64,
    cap: Option<u64>,
    pub in_order: bool,
}

impl ReceiveBuffer {
    #[inline]
    pub fn new(cap: Option<u64>, in_order: bool) -> ReceiveBuffer {
        ReceiveBuffer {
            slots: VecDeque::new(),
            base: 0,
            reserved: 0,
            held: 0,
            cap,
            in_order,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether a packet of `len` bytes may start its transmission: the LRB could hold it.
    #[inline]
    pub fn can_reserve(&self, len: u64) -> bool {
        self.cap.is_none_or(|l| self.reserved + len <= l)
    }

    /// A transmission starts: its slot, at the end of the link order. Returns its sequence.
    #[inline]
    pub fn start(&mut self, id: u64, pkt: Packet, nth: u64) -> u64 {
        let len = u64::from(pkt.wire_len);
        self.reserved += len;
        let seq = self.base + self.slots.len() as u64;
        self.slots.push_back(Slot {
            id,
            pkt: Some(pkt),
            len,
            status: Status::OnLink,
            attempts: 0,
            error_delay: Dur::ZERO,
            nth,
        });
        seq
    }

    #[inline]
    pub fn slot(&self, seq: u64) -> &Slot {
        &self.slots[(seq - self.base) as usize]
    }

    #[inline]
    pub fn slot_mut(&mut self, seq: u64) -> &mut Slot {
        &mut self.slots[(seq - self.base) as usize]
    }

    /// Whether `seq` is first in link order.
    #[inline]
    pub fn is_front(&self, seq: u64) -> bool {
        seq == self.base
    }

    /// Packet `seq` arrived intact but waits behind an earlier one.
    #[inline]
    pub fn hold(&mut self, seq: u64) {
        let slot = self.slot_mut(seq);
        slot.status = Status::Held;
        let len = slot.len;
        self.held += len;
    }

    /// Packet `seq` leaves the link (released, or dropped if `None` is wanted): its slot is gone
    /// and its reservation freed. Returns its id, packet and length.
    #[inline]
    pub fn take(&mut self, seq: u64) -> (u64, Option<Packet>, u64) {
        let i = (seq - self.base) as usize;
        let slot = &mut self.slots[i];
        if slot.status == Status::Held {
            self.held -= slot.len;
        }
        slot.status = Status::Gone;
        let (id, pkt, len) = (slot.id, slot.pkt.take(), slot.len);
        self.reserved -= len;
        (id, pkt, len)
    }

    /// Forgets gone slots at the front; returns the sequence of the front one if it is held.
    #[inline]
    pub fn front_held(&mut self) -> Option<u64> {
        loop {
            match self.slots.front().map(|s| s.status) {
                Some(Status::Gone) => {
                    self.slots.pop_front();
                    self.base += 1;
                }
                Some(Status::Held) => return Some(self.base),
                _ => return None,
            }
        }
    }
}
