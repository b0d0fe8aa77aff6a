//! tcptrace's record of the sequence space one side has sent: which byte ranges were sent, when,
//! how often, and how often each was acknowledged. It decides what is a retransmission, what is a
//! duplicate ACK and which ACKs give RTT samples, with tcptrace's rules (see `docs/analysis.md`):
//!
//! * a segment (SYN and FIN count one byte each) whose bytes lie in ranges already sent is
//!   retransmitted, for those bytes; one that starts before a recorded range and ends before it
//!   ends is out of order;
//! * an ACK covers every recorded range starting below it. A range covered for the first time is
//!   acknowledged; if the ACK is exactly its end, that is an RTT sample, unless the range was
//!   retransmitted (Karn) or a range before it was (re)sent later (no sample);
//! * an ACK exactly at the end of an already acknowledged range is a duplicate ACK when it
//!   carries no data, repeats the ACK number and the window of the acknowledging side's previous
//!   ACK, and the data sender has had data outstanding (tcptrace 6.6.7's default "BSD" rule); the
//!   one that makes the range acknowledged for the 4th time in a row is a triple duplicate ACK.
//!   Any other ACK covering the range restarts its count;
//! * adjacent acknowledged ranges merge, keeping the later range's ACK count and send time.
//!
//! Sequence numbers are unwrapped into 64 bits here (tcptrace uses quadrants), so the rules hold
//! across wrap-around.

use lasthop_core::Time;
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq)]
struct Range {
    first: u64,
    /// Last byte, inclusive.
    last: u64,
    /// Time of the latest (re)transmission.
    time: Time,
    retrans: u32,
    acked: u32,
}

/// What an ACK did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    pub dupack: bool,
    pub triple: bool,
    /// An RTT sample in nanoseconds.
    pub rtt: Option<u64>,
    pub ambiguous: bool,
}

#[derive(Clone, Debug, Default)]
pub struct SeqSpace {
    ranges: VecDeque<Range>,
}

impl SeqSpace {
    /// Records a segment covering `len` (> 0) bytes from `first`; returns the retransmitted
    /// byte count and whether the segment was out of order.
    #[inline(always)]
    pub fn send(&mut self, first: u64, len: u64, now: Time) -> (u64, bool) {
        debug_assert!(len > 0);
        // The expected case: beyond everything recorded.
        if self.ranges.back().is_none_or(|t| first > t.last) {
            self.ranges.push_back(Range {
                first,
                last: first + len - 1,
                time: now,
                retrans: 0,
                acked: 0,
            });
            return (0, false);
        }
        self.send_within(first, len, now)
    }

    /// [`SeqSpace::send`] of a segment that does not start beyond everything recorded.
    #[inline(never)]
    fn send_within(&mut self, mut first: u64, len: u64, now: Time) -> (u64, bool) {
        let last = first + len - 1;
        let mut rexlen = 0;
        let mut out_of_order = false;
        let mut split = false;
        let new = |first: u64, last: u64| Range {
            first,
            last,
            time: now,
            retrans: 0,
            acked: 0,
        };
        // Ranges are sorted and disjoint, so those ending before `first` can be skipped.
        let mut i = self.ranges.partition_point(|r| r.last < first);
        while i < self.ranges.len() {
            let r = &self.ranges[i];
            if first > r.last {
                i += 1;
                continue;
            }
            if first < r.first {
                if last < r.last {
                    out_of_order = true;
                }
                if last < r.first {
                    self.ranges.insert(i, new(first, last));
                    return (rexlen, out_of_order);
                }
                let rf = r.first;
                self.ranges.insert(i, new(first, rf - 1));
                i += 1;
                first = rf;
            }
            // Starts within the recorded range at `i`.
            let r = &mut self.ranges[i];
            r.retrans += 1;
            if !split {
                r.time = now;
            }
            if last <= r.last {
                rexlen += last - first + 1;
                return (rexlen, out_of_order);
            }
            split = true;
            rexlen += r.last - first + 1;
            first = r.last + 1;
            i += 1;
        }
        self.ranges.push_back(new(first, last));
        (rexlen, out_of_order)
    }

    /// When the byte at `seq` was last (re)transmitted, if it was recorded.
    pub fn sent_at(&self, seq: u64) -> Option<Time> {
        let i = self.ranges.partition_point(|r| r.last < seq);
        self.ranges
            .get(i)
            .filter(|r| r.first <= seq)
            .map(|r| r.time)
    }

    /// Processes a cumulative ACK of `ack` (the next byte expected) arriving at `now`, carried by
    /// a segment with `data_len` payload bytes. `dup_ok` tells whether the ACK can be a
    /// duplicate at all (tcptrace's BSD rules, checked by the caller: the same ACK number and
    /// the same window as the acknowledging side's previous ACK, and the data sender has had
    /// data outstanding).
    #[inline(always)]
    pub fn ack(&mut self, ack: u64, data_len: u32, dup_ok: bool, now: Time) -> AckOutcome {
        let mut out = AckOutcome::default();
        // The common case: an ACK within the first range, already acknowledged (the ranges
        // after it start beyond it, so the loop below would touch only this one).
        if let Some(r) = self.ranges.front_mut() {
            if ack <= r.first {
                return out;
            }
            if r.acked > 0 && ack <= r.last + 1 {
                if ack == r.last + 1 && data_len == 0 && dup_ok {
                    out.dupack = true;
                    r.acked = r.acked.saturating_add(1);
                    out.triple = r.acked == 4;
                } else {
                    r.acked = 1;
                }
                return out;
            }
        }
        self.ack_beyond_first(ack, data_len, dup_ok, now)
    }

    /// [`SeqSpace::ack`] of an ACK beyond the first range or with it unacknowledged (out of
    /// line: the case above, inlined, is most ACKs).
    #[inline(never)]
    fn ack_beyond_first(&mut self, ack: u64, data_len: u32, dup_ok: bool, now: Time) -> AckOutcome {
        if let Some(out) = self.ack_next_ranges(ack, now) {
            return out;
        }
        self.ack_general(ack, data_len, dup_ok, now)
    }

    /// [`SeqSpace::ack`]'s other common case, a bulk transfer's new ACK: the first range is
    /// acknowledged, and the ACK ends exactly at the end of a later range, acknowledging for the
    /// first time every range up to it, all adjacent, the range after it (if any) not yet
    /// acknowledged (so the merge stops there). The general loop and [`SeqSpace::collapse`]
    /// would merge them all into the first one; done here in one pass. `None` (nothing changed) when the case does not hold.
    #[inline]
    fn ack_next_ranges(&mut self, ack: u64, now: Time) -> Option<AckOutcome> {
        let r0 = self.ranges.front()?;
        if r0.acked == 0 || ack <= r0.last + 1 {
            return None;
        }
        let mut end = r0.last;
        let mut last_xmit = r0.time;
        let mut out = AckOutcome::default();
        let mut k = 1;
        loop {
            let r = self.ranges.get(k)?;
            if r.acked > 0 || r.first != end + 1 || ack <= r.first {
                return None;
            }
            let intervening = last_xmit > r.time;
            if r.time > last_xmit {
                last_xmit = r.time;
            }
            end = r.last;
            if ack == end + 1 {
                if intervening {
                    // A range before this one was sent later: no sample.
                } else if r.retrans == 0 {
                    out.rtt = Some(now.0.saturating_sub(r.time.0));
                } else {
                    out.ambiguous = true;
                }
                break;
            }
            if ack <= end {
                // ends inside this range
                return None;
            }
            k += 1;
        }
        if self.ranges.get(k + 1).is_some_and(|n| n.acked > 0) {
            return None;
        }
        // The merged range replaces the `k`th, the ones before it go (cheaper than a drain).
        let r0 = &self.ranges[0];
        let merged = Range {
            first: r0.first,
            last: end,
            time: last_xmit,
            retrans: r0.retrans,
            acked: 1,
        };
        self.ranges[k] = merged;
        for _ in 0..k {
            self.ranges.pop_front();
        }
        Some(out)
    }

    /// [`SeqSpace::ack`] in general: every range starting below the ACK, then the merge.
    fn ack_general(&mut self, ack: u64, data_len: u32, dup_ok: bool, now: Time) -> AckOutcome {
        let mut out = AckOutcome::default();
        let mut changed = false;
        let mut last_xmit = Time::ZERO;
        let mut have_xmit = false;
        for r in self.ranges.iter_mut() {
            if ack <= r.first {
                break;
            }
            let intervening = have_xmit && last_xmit > r.time;
            if !have_xmit || r.time > last_xmit {
                last_xmit = r.time;
                have_xmit = true;
            }
            if r.acked > 0 {
                if ack == r.last + 1 && data_len == 0 && dup_ok {
                    out.dupack = true;
                    r.acked = r.acked.saturating_add(1);
                    if r.acked == 4 {
                        out.triple = true;
                    }
                } else {
                    // anything but a pure duplicate restarts the count
                    r.acked = 1;
                }
                continue;
            }
            r.acked = 1;
            changed = true;
            if ack == r.last + 1 {
                if intervening {
                    // A range before this one was sent later: no sample.
                } else if r.retrans == 0 {
                    out.rtt = Some(now.0.saturating_sub(r.time.0));
                } else {
                    out.ambiguous = true;
                }
            }
        }
        if changed {
            self.collapse();
        }
        out
    }

    /// Merges adjacent acknowledged ranges of the acknowledged prefix, in one pass: a range
    /// absorbs the next when both are acknowledged and adjacent, taking its ACK count and the
    /// later send time; the first unacknowledged range ends the pass.
    fn collapse(&mut self) {
        let n = self.ranges.len();
        let mut w = 0;
        let mut r = 1;
        while r < n && self.ranges[w].acked > 0 {
            let b = self.ranges[r].clone();
            let a = &mut self.ranges[w];
            if b.acked > 0 && a.last + 1 == b.first {
                a.last = b.last;
                a.acked = b.acked;
                if b.time > a.time {
                    a.time = b.time;
                }
            } else {
                w += 1;
                if w != r {
                    self.ranges[w] = b;
                }
            }
            r += 1;
        }
        if r > w + 1 {
            self.ranges.drain(w + 1..r);
        }
    }

    /// Number of recorded ranges (for tests and memory checks).
    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl SeqSpace {
        fn ack_t(&mut self, ack: u64, len: u32, now: Time) -> AckOutcome {
            self.ack(ack, len, true, now)
        }
    }

    #[test]
    fn retransmission_and_dupacks() {
        let mut s = SeqSpace::default();
        let t = Time(0);
        assert_eq!(s.send(0, 1, t), (0, false)); // SYN
        assert_eq!(s.ack_t(1, 0, Time(10)).rtt, Some(10));
        for k in 0..4 {
            assert_eq!(s.send(1 + k * 100, 100, t).0, 0);
        }
        let a = s.ack_t(101, 0, Time(20));
        assert!(!a.dupack);
        // segment 2 lost: three dupacks, the third is the triple
        assert!(s.ack_t(101, 0, t).dupack);
        assert!(s.ack_t(101, 0, t).dupack);
        let a = s.ack_t(101, 0, t);
        assert!(a.dupack && a.triple);
        assert!(!s.ack_t(101, 0, t).triple);
        assert_eq!(s.send(101, 100, Time(30)), (100, false));
        // D4 was sent before the retransmission of D2: no sample
        assert_eq!(s.ack_t(401, 0, Time(40)).rtt, None);
        assert_eq!(s.ranges(), 1);
        // a segment covering old and new bytes
        assert_eq!(s.send(351, 100, t), (50, false));
    }

    /// The fast paths of `ack` give what the general loop and merge give, outcome and ranges,
    /// over random transfers: segments mostly in order, some resent, some beyond a hole; ACKs
    /// at range ends, inside ranges, behind and ahead, with and without data.
    #[test]
    fn fast_paths_match_the_general_loop() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut fast_hits = 0;
        for _ in 0..200 {
            let (mut a, mut b) = (SeqSpace::default(), SeqSpace::default());
            let mut top = 1000u64;
            for step in 0..300u64 {
                let now = Time(step * 10);
                if next(3) < 2 {
                    // a new segment, a retransmission, or one beyond a hole
                    let first = match next(10) {
                        0 => top.saturating_sub(next(5) * 100),
                        1 => top + 100,
                        _ => top,
                    };
                    let len = 100;
                    assert_eq!(a.send(first, len, now), b.send(first, len, now));
                    top = top.max(first + len);
                } else {
                    let ack = match next(4) {
                        0 => top - next(20) * 50,
                        1 => top + 1 - next(10) * 100,
                        _ => a
                            .ranges
                            .iter()
                            .map(|r| r.last + 1)
                            .nth(next(4) as usize)
                            .unwrap_or(top),
                    };
                    let (len, ok) = (next(2) as u32 * 100, next(4) > 0);
                    if a.clone().ack_next_ranges(ack, now).is_some() {
                        fast_hits += 1;
                    }
                    let x = a.ack(ack, len, ok, now);
                    let y = b.ack_general(ack, len, ok, now);
                    assert_eq!(x, y, "ack {ack}");
                }
                assert_eq!(a.ranges, b.ranges);
            }
        }
        // the new fast path was taken often
        assert!(fast_hits > 100, "{fast_hits}");
    }

    #[test]
    fn out_of_order_fill() {
        let mut s = SeqSpace::default();
        let t = Time(0);
        s.send(100, 100, t);
        assert_eq!(s.send(0, 50, t), (0, true));
        // starts before a range and ends inside it: out of order (tcptrace's rule)
        assert_eq!(s.send(50, 100, t), (50, true));
    }
}
