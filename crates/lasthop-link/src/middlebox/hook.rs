//! The middlebox hook: the [`Middlebox`] trait, the [`Action`]s it returns, the packets it
//! injects, and the per-direction chain the model runs (see the module above for the rules).

use crate::dir::Dir;
use lasthop_core::{Dur, Packet, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a middlebox does with a packet.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Pass it on unchanged.
    Pass(Packet),
    /// Pass on this changed packet (logged as `mbox_rewrite`).
    Rewrite(Packet),
    /// Hold it this long, then pass it on (logged as `mbox_delay`).
    Delay(Packet, Dur),
    /// Drop it (logged as `mbox_drop`; the packet is handed back so the log can name it).
    Drop(Packet),
}

/// Packets a middlebox creates: each joins the router queue of its direction.
#[derive(Default)]
pub struct Inject {
    pub(crate) packets: Vec<(Dir, Packet)>,
}

impl Inject {
    pub fn push(&mut self, dir: Dir, pkt: Packet) {
        self.packets.push((dir, pkt));
    }
}

pub trait Middlebox: Send {
    /// A packet of direction `dir` reaches this middlebox at `now`.
    fn on_packet(&mut self, now: Time, dir: Dir, pkt: Packet, inject: &mut Inject) -> Action;
    /// When the middlebox next wants [`Middlebox::handle_timeout`], if ever.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Does the middlebox's own work due at `now` (e.g. injecting packets).
    fn handle_timeout(&mut self, _now: Time, _inject: &mut Inject) {}
}

/// Sets the advertised window of a TCP/IPv4 segment and updates its TCP checksum
/// incrementally (RFC 1624), so the checksum stays right whether the payload is real or
/// virtual. Returns false (and changes nothing) if the packet is not TCP over IPv4 with a whole
/// header.
pub fn set_tcp_window(pkt: &mut Packet, window: u16) -> bool {
    if pkt.flow.proto != 6 || pkt.data.first().map(|b| b >> 4) != Some(4) {
        return false;
    }
    let ihl = usize::from(pkt.data[0] & 0x0f) * 4;
    let (w, c) = (ihl + 14, ihl + 16);
    if pkt.data.len() < ihl + 20 {
        return false;
    }
    let old = u16::from_be_bytes([pkt.data[w], pkt.data[w + 1]]);
    let sum = u16::from_be_bytes([pkt.data[c], pkt.data[c + 1]]);
    // HC' = ~(~HC + ~m + m'), in ones' complement arithmetic.
    let mut acc = u32::from(!sum) + u32::from(!old) + u32::from(window);
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    let new_sum = !(acc as u16);
    pkt.data[w..w + 2].copy_from_slice(&window.to_be_bytes());
    pkt.data[c..c + 2].copy_from_slice(&new_sum.to_be_bytes());
    true
}

/// A packet held by a `Delay` action.
struct Held {
    at: Time,
    seq: u64,
    /// The chain position it continues from.
    next: usize,
    id: u64,
    pkt: Packet,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// One direction's middleboxes and the packets they hold.
#[derive(Default)]
pub(crate) struct Chain {
    pub boxes: Vec<Box<dyn Middlebox>>,
    held: BinaryHeap<Reverse<Held>>,
    seq: u64,
}

impl Chain {
    /// Holds packet `id` until `at`, then it continues from chain position `next`.
    pub fn hold(&mut self, at: Time, next: usize, id: u64, pkt: Packet) {
        self.seq += 1;
        self.held.push(Reverse(Held {
            at,
            seq: self.seq,
            next,
            id,
            pkt,
        }));
    }

    /// The earliest time the chain needs to run.
    pub fn next(&self) -> Option<Time> {
        let held = self.held.peek().map(|h| h.0.at);
        self.boxes
            .iter()
            .filter_map(|b| b.poll_timeout())
            .chain(held)
            .min()
    }

    /// The next held packet due at `now`: (chain position, id, packet).
    pub fn pop_due(&mut self, now: Time) -> Option<(usize, u64, Packet)> {
        if self.held.peek().is_none_or(|h| h.0.at > now) {
            return None;
        }
        let h = self.held.pop().expect("peeked").0;
        Some((h.next, h.id, h.pkt))
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}
