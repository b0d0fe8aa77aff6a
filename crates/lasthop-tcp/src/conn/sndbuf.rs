//! 6.x: the send buffer and the application's blocking write() calls (`kernel = "linux-6.18"`).
//!
//! * `tcp_sendmsg_locked` copies a write() into skbs of `size_goal` (half the largest window
//!   the peer has offered, in whole segments, at most 64 KiB: `tcp_xmit_size_goal`), appending
//!   to the last skb while it is unsent and shorter. It takes a new skb only while the queues'
//!   memory (`sk_wmem_queued`) is below `sk_sndbuf`; otherwise it marks the last skb PSH if the
//!   call has copied something (`tcp_push`) and sleeps until woken.
//! * The end of a call marks its last skb PSH (`tcp_push`); the next call's first copy clears
//!   it again when it appends to that skb (`if (!copied)`). A full skb that ends more than half
//!   the largest window after the last mark is marked too (`forced_push`).
//! * Every skb costs its data and 832 B (`ss -m` on the emulated 6.18 hosts: its `sk_buff`,
//!   shared info and a 256 B head); the retransmission queue is counted as the packets first
//!   sent (the kernel also splits and merges skbs on SACK and retransmission).
//! * `sk_sndbuf` is `tcp_wmem[1]` (16 KiB) until the connection is established, then
//!   `tcp_sndbuf_expand`: 2 x max(10, cwnd, reordering + 1) x 2304 B (BBR 3 x), at most
//!   `tcp_wmem[2]` (4 MiB); again when an ACK comes while the writer sleeps and fewer than cwnd
//!   segments are in flight (`tcp_new_space`). The emulated hosts take that test after the
//!   ACK's first packet has gone (they grew the buffer at the first ACK that released two
//!   packets, never at one that released one; the second presumably waits for TSQ's handler).
//! * The writer wakes when an ACK leaves free at least half of what is queued
//!   (`sk_stream_write_space`), and carries on with the call it was in.
//! * The application asks for a send buffer of its own with SO_SNDBUF: not modelled (the
//!   scenario refuses `sndbuf` in simulation).

use super::*;

/// Bytes an skb costs besides its data (`SKB_TRUESIZE` of a `MAX_TCP_HEADER` head).
const SKB_OVERHEAD: u64 = 832;
/// `tcp_wmem` (bytes): the buffer before the connection is established, and the most.
const WMEM_DEFAULT: u64 = 16 * 1024;
const WMEM_MAX: u64 = 4 * 1024 * 1024;
/// `sk_gso_max_size` of the hosts' devices (`GSO_LEGACY_MAX_SIZE`).
const GSO_MAX_SIZE: u32 = 65536;
/// `tp->reordering`'s default (`sysctl_tcp_reordering`); the model never raises it.
const REORDERING: u32 = 3;

/// The writer's state (Linux `sk_sndbuf`, `SOCK_NOSPACE`, `pushed_seq`, `gso_segs` and the
/// write() calls the application is blocked in or has queued behind).
#[derive(Debug)]
pub(super) struct Writer {
    sndbuf: u64,
    /// The write() calls not yet copied, the one being copied first.
    calls: VecDeque<Calls>,
    /// Bytes of the first call copied so far (`copied`).
    copied: u64,
    /// The first call has begun (`tcp_rate_check_app_limited` ran for it).
    started: bool,
    /// Waiting for space (`SOCK_NOSPACE`).
    nospace: bool,
    /// An ACK came since the last space check (`tcp_check_space` is owed).
    check_due: bool,
    /// A packet has gone since that ACK.
    pkt_gone: bool,
    /// The application closed after its writes: the FIN waits for them.
    pub(super) close_after: bool,
    /// The unsent skbs of the write queue, [start, end) (the first may be partly sent).
    skbs: VecDeque<(u64, u64)>,
    pushed_seq: u64,
    gso_segs: u32,
}

/// Consecutive write() calls of `size` bytes (the last one shorter): `left` bytes in all, of
/// which `call_left` in the first.
#[derive(Debug)]
struct Calls {
    left: u64,
    size: u64,
    call_left: u64,
}

impl Writer {
    pub(super) fn new() -> Writer {
        Writer {
            sndbuf: WMEM_DEFAULT,
            calls: VecDeque::new(),
            copied: 0,
            started: false,
            nospace: false,
            check_due: false,
            pkt_gone: false,
            close_after: false,
            skbs: VecDeque::new(),
            // The SYN's offset is 0; data starts at 1 (`tcp_connect_init`: write_seq).
            pushed_seq: 1,
            gso_segs: 0,
        }
    }

    /// Whether write() calls are still being copied.
    pub(super) fn pending(&self) -> bool {
        !self.calls.is_empty()
    }

    /// An ACK came: the space check is owed once its first packet has gone.
    pub(super) fn ack_came(&mut self) {
        self.check_due = self.nospace;
        self.pkt_gone = false;
    }

    /// A packet went (its last segment).
    pub(super) fn packet_gone(&mut self) {
        self.pkt_gone = true;
    }

    /// Whether the space check is owed and the ACK's first packet has gone.
    pub(super) fn first_packet_gone(&self) -> bool {
        self.check_due && self.pkt_gone
    }

    /// `tcp_xmit_size_goal`: whole segments of `mss` in half the largest window (or the whole
    /// when it is at most 536 B), at most 64 KiB; changed only when that moves by a segment.
    fn size_goal(&mut self, mss: u32, max_window: u32) -> u64 {
        let cutoff = if max_window > 536 {
            max_window >> 1
        } else {
            max_window
        };
        let new_goal = if cutoff > 0 && GSO_MAX_SIZE > cutoff {
            // `tcp_bound_to_half_wnd`: at least 68 bytes less the TCP header (with timestamps).
            cutoff.max(68 - 32)
        } else {
            GSO_MAX_SIZE
        };
        let mss = mss.max(1);
        let goal = self.gso_segs * mss;
        if new_goal < goal || new_goal >= goal + mss {
            self.gso_segs = new_goal / mss;
        }
        u64::from((self.gso_segs * mss).max(mss))
    }
}

/// `tcp_sndbuf_expand`'s size for `cwnd`: per MSS, the data, `MAX_TCP_HEADER` (256) and the
/// shared info (320) rounded up to a power of two, and the `sk_buff` (256).
fn sndbuf_for(cwnd: u32, mss_clamp: u32, factor: u64) -> u64 {
    let per_mss = u64::from(mss_clamp + 256 + 320).next_power_of_two() + 256;
    let segs = u64::from(cwnd.max(10).max(REORDERING + 1));
    (factor * segs * per_mss).min(WMEM_MAX)
}

impl SendState {
    /// The memory the queues hold (`sk_wmem_queued`).
    fn wmem_queued(&self, w: &Writer) -> u64 {
        let data = (self.app_bytes + 1).saturating_sub(self.snd_una.max(1));
        let unsent = w.skbs.iter().filter(|&&(_, e)| e > self.snd_nxt).count() as u64;
        data + SKB_OVERHEAD * (u64::from(self.rtx_pkts) + unsent)
    }

    /// `tcp_init_buffer_space` (the connection is established) for a peer that sent `peer_mss`.
    pub(super) fn writer_established(&mut self, peer_mss: u32) {
        let factor = if self.ctl { 3 } else { 2 };
        let size = sndbuf_for(self.win.cwnd, peer_mss, factor);
        if let Some(w) = self.writer.as_deref_mut() {
            w.sndbuf = w.sndbuf.max(size);
        }
    }

    /// The application's write() calls of `size`, `bytes` in all: copied now, as far as the
    /// buffer lets them.
    pub(super) fn write_calls(&mut self, o: &Negotiated, bytes: u64, size: u64) {
        let Some(w) = self.writer.as_deref_mut() else {
            return;
        };
        w.calls.push_back(Calls {
            left: bytes,
            size,
            call_left: size.min(bytes),
        });
        if w.calls.len() == 1 && !w.nospace {
            self.copy(o);
        }
    }

    /// `tcp_sendmsg_locked`'s loop for the calls waiting, until they are copied or the writer
    /// has to wait for space.
    fn copy(&mut self, o: &Negotiated) {
        let Some(mut w) = self.writer.take() else {
            return;
        };
        // What the copy sends as it goes (`tcp_push_one`, `__tcp_push_pending_frames`): the
        // packets go when the host polls, at this same instant; here they only make room in
        // the skb being sent.
        let mut snd_nxt = self.snd_nxt;
        let mut in_flight = self.in_flight(o);
        let mut sent_pkts = 0u64;
        while w.skbs.front().is_some_and(|&(_, e)| e <= snd_nxt) {
            w.skbs.pop_front();
        }
        while let Some(left) = w.calls.front().map(|c| c.call_left) {
            if !w.started {
                w.started = true;
                self.check_app_limited(o);
            }
            let goal = w.size_goal(o.mss, self.max_window);
            let write_seq = self.app_bytes + 1;
            let tail_len = match w.skbs.back() {
                Some(&(s, e)) if e == write_seq && e > snd_nxt => e - s.max(snd_nxt),
                _ => goal,
            };
            let copy = if tail_len < goal {
                let copy = (goal - tail_len).min(left);
                self.gso
                    .grow_tail(write_seq, write_seq + copy, w.copied == 0);
                if let Some(t) = w.skbs.back_mut() {
                    t.1 += copy;
                }
                copy
            } else {
                if self.wmem_queued(&w) + SKB_OVERHEAD * sent_pkts >= w.sndbuf {
                    // wait_for_space: the call's last skb is pushed, and the writer sleeps.
                    w.nospace = true;
                    if w.copied > 0 {
                        self.gso.mark_push(write_seq);
                        w.pushed_seq = write_seq;
                    }
                    break;
                }
                let copy = goal.min(left);
                w.skbs.push_back((write_seq, write_seq + copy));
                self.gso.new_skb(write_seq + copy);
                copy
            };
            self.app_bytes += copy;
            w.copied += copy;
            let end = write_seq + copy;
            let c = w.calls.front_mut().expect("a call is being copied");
            c.left -= copy;
            c.call_left -= copy;
            if c.call_left == 0 {
                // The call returns: `tcp_push` marks its last skb.
                c.call_left = c.size.min(c.left);
                if c.left == 0 {
                    w.calls.pop_front();
                }
                w.copied = 0;
                w.started = false;
                self.gso.mark_push(end);
                w.pushed_seq = end;
            } else {
                let head = w.skbs.len() == 1 || w.skbs.back().is_some_and(|&(s, _)| s <= snd_nxt);
                let full = w
                    .skbs
                    .back()
                    .is_some_and(|&(s, e)| e - s.max(snd_nxt) >= goal);
                if full && end > w.pushed_seq + u64::from(self.max_window >> 1) {
                    self.gso.mark_push(end);
                    w.pushed_seq = end;
                    while self.copy_sends(o, end, &mut snd_nxt, &mut in_flight) {
                        sent_pkts += 1;
                    }
                } else if full && head && self.copy_sends(o, end, &mut snd_nxt, &mut in_flight) {
                    sent_pkts += 1;
                }
            }
        }
        self.writer = Some(w);
    }

    /// One packet the copy sends from `snd_nxt` (data ends at `end`): as many segments as
    /// `tcp_write_xmit` puts in one, if cwnd and the peer's window let any go.
    fn copy_sends(&self, o: &Negotiated, end: u64, snd_nxt: &mut u64, in_flight: &mut u32) -> bool {
        let cwnd = self.win.cwnd;
        let wnd_end = self.snd_una + u64::from(self.snd_wnd);
        let mss = u64::from(o.mss.max(1));
        if *in_flight >= cwnd || *snd_nxt >= end || *snd_nxt + mss.min(end - *snd_nxt) > wnd_end {
            return false;
        }
        let segs = super::gso::cwnd_quota(cwnd, *in_flight).min(self.tso_goal(o.mss));
        let bytes = (u64::from(segs) * mss)
            .min(end - *snd_nxt)
            .min(wnd_end - *snd_nxt);
        let sent = bytes.div_ceil(mss) as u32;
        *snd_nxt += bytes;
        *in_flight += sent;
        true
    }

    /// `tcp_check_space` after an ACK's first packet: a sleeping writer may get a larger buffer
    /// (fewer than cwnd segments in flight) and wakes when half of what is queued is free.
    /// Returns whether it copied anything.
    pub(super) fn check_space(&mut self, o: &Negotiated) -> bool {
        let Some(mut w) = self.writer.take() else {
            return false;
        };
        let mut wake = false;
        if std::mem::take(&mut w.check_due) && w.nospace {
            if self.in_flight(o) < self.win.cwnd {
                let factor = if self.ctl { 3 } else { 2 };
                w.sndbuf = w.sndbuf.max(sndbuf_for(self.win.cwnd, o.peer_mss, factor));
            }
            let wmem = self.wmem_queued(&w);
            wake = wmem < w.sndbuf && w.sndbuf - wmem >= wmem >> 1;
            w.nospace = !wake;
        }
        self.writer = Some(w);
        if !wake {
            return false;
        }
        let before = self.app_bytes;
        self.copy(o);
        self.app_bytes > before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_is_two_windows_of_2304_byte_segments() {
        // 536 B MSS: 536 + 256 + 320 = 1112 -> 2048, + 256 = 2304 per segment.
        assert_eq!(sndbuf_for(10, 536, 2), 46_080);
        // The emulated hosts' buffer at cwnd 30 (ss -m: tb138240).
        assert_eq!(sndbuf_for(30, 536, 2), 138_240);
        // Never below ten segments; 1460 B still fits 2048.
        assert_eq!(sndbuf_for(4, 1460, 2), 46_080);
        // BBR provisions three windows; 4 MiB at most.
        assert_eq!(sndbuf_for(10, 536, 3), 69_120);
        assert_eq!(sndbuf_for(10_000, 1460, 2), 4 * 1024 * 1024);
    }

    #[test]
    fn the_size_goal_is_half_the_largest_window_in_segments() {
        let mut w = Writer::new();
        // 65500 B offered: half is 32750, 62 segments of 524.
        assert_eq!(w.size_goal(524, 65_500), 62 * 524);
        // Within a segment of the goal it stays.
        assert_eq!(w.size_goal(524, 65_500 + 400), 62 * 524);
        // A window of 200 KB: 64 KiB at most, 125 segments.
        assert_eq!(w.size_goal(524, 200_000), 125 * 524);
    }
}
