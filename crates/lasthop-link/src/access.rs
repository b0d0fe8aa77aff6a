//! A host's access link, one direction: a FIFO serializer at the access rate followed by a
//! constant delay. It stands between a host and the router in both the simulator and the
//! emulator (`access_rate`, `access_delay`), so that hosts behind one bottleneck can have their
//! own round-trip times, as seed 004's dumbbell does.

use lasthop_core::{Dur, Packet, Rate, Time};
use std::collections::VecDeque;

/// One direction of an access link, with the packets on it in order of arrival at the far end
/// (a FIFO serializer with a constant delay never reorders).
#[derive(Debug)]
pub struct AccessLink {
    rate: Rate,
    delay: Dur,
    busy_until: Time,
    on_link: VecDeque<(Time, Packet)>,
}

impl AccessLink {
    pub fn new(rate: Rate, delay: Dur) -> AccessLink {
        AccessLink {
            rate,
            delay,
            busy_until: Time::ZERO,
            on_link: VecDeque::new(),
        }
    }

    /// Puts a packet handed over at `now` on the link. Returns its arrival time at the far end
    /// if it is now the head (the caller then schedules the head's event).
    #[inline] // per packet, from the simulator's and the emulator's loops
    pub fn send(&mut self, now: Time, p: Packet) -> Option<Time> {
        let start = now.max(self.busy_until);
        self.busy_until = start + self.rate.tx_time(u64::from(p.wire_len));
        let at = self.busy_until + self.delay;
        self.on_link.push_back((at, p));
        (self.on_link.len() == 1).then_some(at)
    }

    /// When the head packet arrives at the far end, if a packet is on the link.
    #[inline]
    pub fn head(&self) -> Option<Time> {
        self.on_link.front().map(|h| h.0)
    }

    /// Takes the head packet; returns it and the arrival time of the next one, if any.
    ///
    /// # Panics
    /// If the link is empty: a head event always has a packet.
    #[inline]
    pub fn take_head(&mut self) -> (Packet, Option<Time>) {
        let (_, p) = self.on_link.pop_front().expect("a head event has a packet");
        (p, self.head())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_millis(n)
    }

    fn packet(bytes: usize) -> Packet {
        Packet::from_bytes(vec![0; bytes])
    }

    #[test]
    fn serializes_then_delays_in_order() {
        // 1 Mbit/s and 5 ms: a 1250-byte packet takes 10 ms to send, so the first one handed
        // over at 0 arrives at 10 + 5 = 15 ms; the second, handed over at 2 ms, waits for the
        // first and arrives at 20 + 5 = 25 ms; a third handed over at 40 ms (link idle) at 55 ms.
        let mut a = AccessLink::new(Rate(1_000_000), Dur::from_millis(5));
        assert_eq!(a.send(ms(0), packet(1250)), Some(ms(15)));
        assert_eq!(a.send(ms(2), packet(1250)), None);
        let (_, next) = a.take_head();
        assert_eq!(next, Some(ms(25)));
        let (_, next) = a.take_head();
        assert_eq!(next, None);
        assert_eq!(a.send(ms(40), packet(1250)), Some(ms(55)));
        assert_eq!(a.head(), Some(ms(55)));
    }

    #[test]
    fn unlimited_rate_is_the_delay_alone() {
        let mut a = AccessLink::new(Rate::UNLIMITED, Dur::from_millis(15));
        assert_eq!(a.send(ms(1), packet(1500)), Some(ms(16)));
        assert_eq!(a.send(ms(1), packet(1500)), None);
        a.take_head();
        assert_eq!(a.head(), Some(ms(16)));
    }
}
