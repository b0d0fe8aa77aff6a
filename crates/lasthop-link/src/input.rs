//! The router's input, before its queue: packets it has not read because its queue was full,
//! under Seawind's `queue_overflow_handling` other than DROP (seed 001, E.1.2):
//!
//! - **STOP** (`overflow = "stop"`): "the router stops reading when the queue becomes full".
//!   Arrivals wait unread, in order, and are read (judged by RED, enqueued) as the queue has room
//!   again; the unread input holds at most `input` packets (default 1000, Linux's `txqueuelen`,
//!   where unread packets wait in front of a device), and arrivals beyond it are dropped (cause
//!   `input`).
//! - **FLOW CONTROL** (`overflow = "flow_control"`): the router "blocks the neighbouring
//!   component from sending new data until there is more room": nothing is lost at the router;
//!   the packets wait in the neighbour's hands (here, the same unread input, without a limit but
//!   the queue's ceiling of [`MAX_QUEUE_PACKETS`]).
//!
//! Both modes run it in the model: in emulation the emulator has already read the packet from
//! the host's TUN device, and the hosts' own stacks are not blocked (their TCP sees the delay,
//! not a full device).

use crate::queue::discipline::Queued;
use crate::spec::limits::MAX_QUEUE_PACKETS;
use std::collections::VecDeque;

pub(crate) struct Input {
    pkts: VecDeque<Queued>,
    /// The most packets it holds (STOP's limit; FLOW CONTROL: the queue ceiling).
    limit: u64,
}

impl Input {
    pub fn new(limit: Option<u64>) -> Input {
        Input {
            pkts: VecDeque::new(),
            limit: limit.unwrap_or(MAX_QUEUE_PACKETS),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Whether one more packet may wait.
    pub fn has_room(&self) -> bool {
        (self.pkts.len() as u64) < self.limit
    }

    pub fn push(&mut self, q: Queued) {
        self.pkts.push_back(q);
    }

    /// The length of the first unread packet.
    pub fn head_len(&self) -> Option<u64> {
        self.pkts.front().map(|q| u64::from(q.pkt.wire_len))
    }

    pub fn pop(&mut self) -> Queued {
        self.pkts.pop_front().expect("an unread packet")
    }

    pub fn back(&self) -> Option<&Queued> {
        self.pkts.back()
    }
}
