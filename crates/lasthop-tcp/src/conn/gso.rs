//! Today's Linux sends GSO packets, and the PSH flag follows them (`kernel = "linux-6.18"`).
//!
//! * The writer (`sndbuf.rs`) cuts what the application writes into skbs of `size_goal` and
//!   marks PSH on the skb a write() ends in, or the one it stops at when the send buffer is
//!   full (`tcp_push`), and on every skb that ends half the peer's largest window after the
//!   last mark (`forced_push`). It tells this file where its skbs end and which are pushed.
//! * `tcp_write_xmit` sends an skb as packets of `tcp_tso_autosize` segments (the pacing
//!   rate's 1 ms worth, at least 2, so 2 on the seeds' links), each at most `tcp_cwnd_test`'s
//!   quota, min(cwnd / 2, cwnd − in flight) ("at least 2 GSO packets in flight"), splitting
//!   the skb after each packet (`tso_fragment`): the next packet is cut from what is left, and
//!   a packet never spans two skbs.
//! * `__tcp_transmit_skb` forces PSH on every packet of more than one segment ("to expedite GRO
//!   flush at receiver", Linux 4.11), and software GSO leaves it on the packet's last segment.
//!   A one-segment packet carries PSH only if it ends a pushed skb (`tso_fragment` leaves the
//!   flag on the skb's second part).
//! * A retransmission goes as the skb was sent (the retransmission queue holds the packets), up
//!   to cwnd − in flight segments at once (`tcp_xmit_retransmit_queue`); the tail loss probe
//!   resends one segment.
//!
//! Measured on emulated 6.18 hosts (docs/sim-vs-emu.md): on seed 000's link the sender marks
//! the second of each pair an ACK releases in slow start, once per window in congestion
//! avoidance, and nothing while cwnd is 2 or 3 (quota 1), besides the writer's marks. A 6.6+
//! receiver ACKs a full-sized PSH segment once it is read (`recv.rs`), so where PSH falls moves
//! the ACKs.
//!
//! * Within a burst, an skb of more than one segment waits for the connection's next event when
//!   less than a packet fits (`tcp_tso_should_defer`, in `send.rs`: `tso_defers`).

use std::collections::VecDeque;

/// The GSO state of a 6.x sender.
#[derive(Clone, Debug, Default)]
pub(super) struct Gso {
    /// End offset of the skb `snd_nxt` is in (0: cut one at the next new segment).
    skb_end: u64,
    /// The packet being sent: where it continues, segments it may still take, segments so far.
    next: u64,
    left: u32,
    segs: u32,
    /// Offsets where a pushed skb ends (`tcp_mark_push`), in order.
    push_marks: VecDeque<u64>,
    /// Where the writer's skbs end, in order (those at or below `snd_nxt` are forgotten).
    bounds: VecDeque<u64>,
}

impl Gso {
    /// The writer cut a new skb ending at `end`.
    pub(super) fn new_skb(&mut self, end: u64) {
        self.bounds.push_back(end);
    }

    /// The writer appended to its last skb, which ended at `old_end` and now ends at
    /// `new_end`. The first copy of a write() clears the skb's PSH (`if (!copied)`); a write
    /// resumed after waiting for space keeps it, and the mark moves with the skb's end.
    pub(super) fn grow_tail(&mut self, old_end: u64, new_end: u64, clear_push: bool) {
        if let Some(b) = self.bounds.back_mut().filter(|b| **b == old_end) {
            *b = new_end;
        } else {
            self.bounds.push_back(new_end);
        }
        if self.push_marks.back() == Some(&old_end) {
            self.push_marks.pop_back();
            if !clear_push {
                self.push_marks.push_back(new_end);
            }
        }
        if self.skb_end == old_end {
            // The packet being cut grows with the skb (up to its size goal).
            self.skb_end = 0;
        }
    }

    /// `tcp_mark_push` on the writer's last skb, which ends at `end`.
    pub(super) fn mark_push(&mut self, end: u64) {
        if self.push_marks.back().is_none_or(|&m| m < end) {
            self.push_marks.push_back(end);
        }
    }

    /// Forgets the marks at or below `snd_una` (acknowledged data is never resent).
    pub(super) fn on_acked(&mut self, snd_una: u64) {
        while self.push_marks.front().is_some_and(|&m| m <= snd_una) {
            self.push_marks.pop_front();
        }
    }

    /// The end of the skb a new segment at `snd_nxt` goes in: the current one, or a new one
    /// of `goal` segments of `mss` that stops at the next pushed write end.
    pub(super) fn skb_end(&mut self, snd_nxt: u64, data_end: u64, goal: u32, mss: u32) -> u64 {
        if self.skb_end <= snd_nxt {
            while self.bounds.front().is_some_and(|&b| b <= snd_nxt) {
                self.bounds.pop_front();
            }
            let mut end = (snd_nxt + u64::from(goal.max(1)) * u64::from(mss)).min(data_end);
            if let Some(&b) = self.bounds.front() {
                end = end.min(b);
            }
            if let Some(&m) = self.push_marks.iter().find(|&&m| m > snd_nxt) {
                end = end.min(m);
            }
            self.skb_end = end;
        }
        self.skb_end
    }

    /// Where the writer's skb holding `snd_nxt` ends (at most `data_end`).
    pub(super) fn writer_skb_end(&self, snd_nxt: u64, data_end: u64) -> u64 {
        let b = self.bounds.iter().find(|&&b| b > snd_nxt).copied();
        b.map_or(data_end, |b| b.min(data_end))
    }

    /// A segment [start, end) goes out. `room`: segments the packet may hold if this segment
    /// starts one (quota, skb and window already applied), `last_in_skb`: it ends its skb.
    /// Returns (PSH, the segment ends its packet).
    pub(super) fn on_segment(
        &mut self,
        start: u64,
        end: u64,
        room: u32,
        last_in_skb: bool,
    ) -> (bool, bool) {
        if self.left == 0 || self.next != start {
            self.left = room.max(1);
            self.segs = 0;
        }
        self.left -= 1;
        self.segs += 1;
        self.next = end;
        if last_in_skb {
            self.left = 0;
        }
        let pkt_end = self.left == 0;
        if pkt_end {
            // `tso_fragment` split the skb here: the next packet is cut from what is left.
            self.skb_end = 0;
        }
        let psh = (pkt_end && self.segs >= 2) || self.pushed(end);
        (psh, pkt_end)
    }

    /// Whether a packet is being cut (its next segment has not gone yet).
    pub(super) fn packet_open(&self) -> bool {
        self.left > 0
    }

    /// Whether a packet is under way that continues at `start`.
    pub(super) fn continues_at(&self, start: u64) -> bool {
        self.left > 0 && self.next == start
    }

    /// Whether the data ending at `end` ends a pushed skb.
    pub(super) fn pushed(&self, end: u64) -> bool {
        self.push_marks.binary_search(&end).is_ok()
    }

    /// The transmission round ended (`tcp_write_xmit` returned): no packet continues.
    pub(super) fn end_round(&mut self) {
        self.left = 0;
    }
}

/// `tcp_cwnd_test`: segments one packet may take, min(cwnd / 2, cwnd − in flight), at least
/// one (a segment the window test let go regardless, a FIN, goes alone).
pub(super) fn cwnd_quota(cwnd: u32, in_flight: u32) -> u32 {
    let half = (cwnd >> 1).max(1);
    half.min(cwnd.saturating_sub(in_flight)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_is_half_the_window_at_most() {
        // cwnd 2 or 3: one segment per packet (seed 000's first flights go unpushed).
        assert_eq!(cwnd_quota(2, 0), 1);
        assert_eq!(cwnd_quota(3, 1), 1);
        // cwnd 4, 2 in flight: a pair.
        assert_eq!(cwnd_quota(4, 2), 2);
        // cwnd 10, none in flight: 5.
        assert_eq!(cwnd_quota(10, 0), 5);
        assert_eq!(cwnd_quota(10, 9), 1);
        assert_eq!(cwnd_quota(10, 10), 1);
    }

    #[test]
    fn a_pair_is_pushed_on_its_second_segment_and_a_single_is_not() {
        let mut g = Gso::default();
        g.new_skb(1 + 10 * 536);
        g.mark_push(1 + 10 * 536);
        // skb of 2 × 536 from offset 1.
        assert_eq!(g.skb_end(1, 1 + 10 * 536, 2, 536), 1 + 1072);
        assert_eq!(g.on_segment(1, 537, 2, false), (false, false));
        assert_eq!(g.on_segment(537, 1073, 2, true), (true, true));
        // Quota 1: one segment goes, unpushed; `tso_fragment` splits the skb there, so the
        // next packet is cut afresh from the segment after it.
        assert_eq!(g.skb_end(1073, 1 + 10 * 536, 2, 536), 1 + 4 * 536);
        assert_eq!(g.on_segment(1073, 1609, 1, false), (false, true));
        g.end_round();
        assert_eq!(g.skb_end(1609, 1 + 10 * 536, 2, 536), 1 + 5 * 536);
        assert_eq!(g.on_segment(1609, 2145, 2, false), (false, false));
        assert_eq!(g.on_segment(2145, 2681, 2, true), (true, true));
        // The last segment of the write is pushed even alone.
        assert!(g.pushed(1 + 10 * 536));
        assert_eq!(
            g.on_segment(1 + 9 * 536, 1 + 10 * 536, 1, true),
            (true, true)
        );
    }

    #[test]
    fn a_write_appended_to_an_unsent_skb_clears_its_push() {
        let mut g = Gso::default();
        g.new_skb(101);
        g.mark_push(101);
        assert!(g.pushed(101));
        // Nothing sent yet: the second write joins the first skb and clears its PSH.
        g.grow_tail(101, 201, true);
        g.mark_push(201);
        assert!(!g.pushed(101) && g.pushed(201));
        assert_eq!(g.skb_end(1, 201, 2, 536), 201);
        // A write resumed after waiting for space keeps the mark, at the skb's new end.
        let mut g = Gso::default();
        g.new_skb(101);
        g.mark_push(101);
        g.grow_tail(101, 201, false);
        assert!(!g.pushed(101) && g.pushed(201));
        // Once the first write is out, the next write starts a new skb and keeps both marks.
        let mut g = Gso::default();
        g.new_skb(101);
        g.mark_push(101);
        g.new_skb(201);
        g.mark_push(201);
        assert!(g.pushed(101) && g.pushed(201));
        g.on_acked(101);
        assert!(!g.pushed(101) && g.pushed(201));
    }

    #[test]
    fn a_packet_never_spans_two_skbs() {
        // skbs of 3 and 3 segments of 536 from offset 1, none pushed.
        let mut g = Gso::default();
        g.new_skb(1 + 3 * 536);
        g.new_skb(1 + 6 * 536);
        assert_eq!(g.skb_end(1, 1 + 6 * 536, 2, 536), 1 + 2 * 536);
        assert_eq!(g.on_segment(1, 537, 2, false), (false, false));
        assert_eq!(g.on_segment(537, 1073, 2, true), (true, true));
        // The first skb's last segment goes alone, unpushed; the next pair starts the second.
        assert_eq!(g.skb_end(1073, 1 + 6 * 536, 2, 536), 1 + 3 * 536);
        assert_eq!(g.on_segment(1073, 1609, 2, true), (false, true));
        assert_eq!(g.skb_end(1609, 1 + 6 * 536, 2, 536), 1 + 5 * 536);
    }
}
