//! Linux 6.x's receive-buffer autotuning and window growth (`rcvbuf_initial`), read from
//! `tcp_input.c` and checked against the emulated Linux 6.18 hosts (`ss -tmi`, captures):
//!
//! * the buffer starts at `tcp_rmem[1]` (`rcvbuf_initial`) and the window offered for it is
//!   `space · scaling_ratio / 256`, the ratio being a full segment's payload over the memory it
//!   costs (`tcp_measure_rcv_mss`);
//! * the window grows from the SYN's (`rcv_ssthresh`) by two segments per data segment while
//!   there is room (`tcp_grow_window`), and every growth asks for an immediate ACK
//!   (`icsk_ack.quick |= 1`): with 16 quick ACKs and six growths a bulk receiver on a
//!   1500-byte path ACKs its first 22 segments at once, as the kernel does;
//! * once per receiver RTT (`rcv_rtt_est`, from the timestamps the sender echoes) the buffer
//!   grows to let the sender double its rate (`tcp_rcv_space_adjust`): the window clamp
//!   becomes 2·copied + 4·copied·(copied − space)/space, where copied is what the
//!   application read in the last RTT and space the most read in one before.
//!
//! The model's applications read at once, so the buffer holds only the segment being received,
//! the out-of-order queue and, for an ACK sent as data arrives, that data (`recv.rs` charges
//! each segment its `truesize`).

use crate::config::TcpConfig;
use lasthop_core::{Dur, Time};

/// `TCP_RMEM_TO_WIN_SCALE`: the scaling ratio is in 1/256ths.
const RATIO_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: half the buffer, until a full segment says more.
const DEFAULT_RATIO: u64 = 1 << (RATIO_SCALE - 1);
/// `tcp_grow_window` is called only for segments of at least 128 bytes.
const GROW_MIN_LEN: u64 = 128;

/// The memory a received packet of `ip_len` bytes costs the host (`skb->truesize`), as the
/// emulated hosts' TUN device allocates it (`tun_alloc_skb`, a linear skb): the `sk_buff`
/// (256 B cache-aligned) plus the kmalloc bucket holding 64 B of headroom (`NET_SKB_PAD`), the
/// packet and 320 B of `skb_shared_info`. A 1500-byte packet costs 2 304 B (ratio 160/256: the
/// kernel's rcv_ssthresh plateau of (131 072 − 2 304) · 160/256 = 80 480, read with `ss -tmi`);
/// a 576-byte one 1 280 B (ratio 104: no room to grow beyond the established clamp, 65 012).
pub(super) fn truesize(ip_len: u64) -> u64 {
    let data = 64 + ip_len + 320;
    let bucket = match data {
        0..=96 => 96,
        97..=192 => 192,
        _ => data.next_power_of_two(),
    };
    256 + bucket
}

/// Linux `tp->advmss` once established: the MSS we advertised less the timestamp option when
/// the connection carries it.
pub(super) fn advmss(cfg: &TcpConfig, ts: bool) -> u64 {
    u64::from(cfg.adv_mss()) - if ts { 12 } else { 0 }
}

/// The autotuned receive buffer of one connection.
#[derive(Debug)]
pub(super) struct RcvBuf {
    /// `sk_rcvbuf`, and its ceiling `tcp_rmem[2]`.
    rcvbuf: u64,
    rmem_max: u64,
    /// `scaling_ratio`: window bytes per 256 bytes of buffer.
    ratio: u64,
    /// `window_clamp`, and `rcv_ssthresh`: the window offered grows up to the clamp.
    window_clamp: u64,
    pub(super) rcv_ssthresh: u64,
    /// `rcvq_space`: the most read in one receiver RTT, and where and when this RTT's count
    /// began.
    space: u64,
    space_seq: u64,
    space_time: Time,
    /// `rcv_rtt_est.rtt_us`, in µs · 8; 0 until the first sample.
    rtt_us8: u64,
    last_tsecr: Option<u32>,
    /// `rcv_rtt_est.seq` and `.time`: the window's worth of data the current sample waits for
    /// and when it began (`tcp_rcv_rtt_measure`).
    est_seq: u64,
    est_time: Option<Time>,
}

impl RcvBuf {
    pub(super) fn new(initial: u64, rmem_max: u64) -> RcvBuf {
        RcvBuf {
            rcvbuf: initial,
            rmem_max,
            ratio: DEFAULT_RATIO,
            window_clamp: win_from_space(initial, DEFAULT_RATIO),
            rcv_ssthresh: 0,
            space: 0,
            space_seq: 0,
            space_time: Time::ZERO,
            rtt_us8: 0,
            last_tsecr: None,
            est_seq: 0,
            est_time: None,
        }
    }

    /// `tcp_select_initial_window`: the SYN's window, the initial buffer's at the default
    /// ratio, at most 65 535 and rounded down to whole segments of `mss`.
    pub(super) fn syn_window(&mut self, mss: u64) -> u64 {
        let space = win_from_space(self.rcvbuf, DEFAULT_RATIO).min(65535);
        let w = if space > mss {
            space / mss * mss
        } else {
            space
        };
        self.rcv_ssthresh = w;
        w
    }

    /// The connection is established with `mss` (`tcp_init_buffer_space`): the first RTT may
    /// bring ten segments (`rcvq_space.space`); `rcv_nxt` and `now` start its count. The window
    /// clamp, `65 535 << rcv_wscale` from `tcp_select_initial_window`, becomes at most the
    /// buffer's full window, less one `advmss` ("force reservation of one segment",
    /// `tcp_app_win`), and rcv_ssthresh at most that. Without window scaling on a 576-byte path
    /// this is 65 536 − 536 = 65 000: the emulated 6.18 receivers' windows after the SYN-ACK's
    /// are 64 856 (121 · 536) without timestamps and 64 976 (124 · 524) with them.
    pub(super) fn established(
        &mut self,
        mss: u64,
        advmss: u64,
        rcv_wscale: u8,
        rcv_nxt: u64,
        now: Time,
    ) {
        self.space = self.rcv_ssthresh.min(10 * mss);
        self.space_seq = rcv_nxt;
        self.space_time = now;
        let maxwin = win_from_space(self.rcvbuf, self.ratio);
        let mut clamp = 65_535u64 << rcv_wscale;
        if clamp >= maxwin {
            clamp = maxwin;
        }
        if clamp > 2 * advmss && clamp + advmss > maxwin {
            clamp = (2 * advmss).max(maxwin - advmss);
        }
        self.window_clamp = clamp;
        self.rcv_ssthresh = self.rcv_ssthresh.min(clamp);
    }

    /// `tcp_rcv_rtt_measure_ts`: a data segment of at least `rcv_mss` echoing a new TSecr
    /// gives the receiver an RTT sample (`tcp_rcv_rtt_update`: a smaller sample at once,
    /// a larger one with weight 1/8).
    pub(super) fn rtt_sample(&mut self, len: u64, rcv_mss: u64, tsecr: u32, now_ms: u32) {
        if self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        let delta_ms = now_ms.wrapping_sub(tsecr) as i32;
        if len < rcv_mss || delta_ms <= 0 {
            return;
        }
        let sample = delta_ms as u64 * 1000;
        let m = sample << 3;
        self.rtt_us8 = if self.rtt_us8 == 0 || m < self.rtt_us8 {
            m
        } else {
            self.rtt_us8 - (self.rtt_us8 >> 3) + sample
        };
    }

    /// `tcp_rcv_rtt_measure`, for in-order data with or without timestamps: the time the
    /// receiver takes to get a whole window (`rcv_wnd`, what it last advertised) past the point
    /// where the sample began is an RTT sample. It can only lower the estimate
    /// (`tcp_rcv_rtt_update` with `win_dep`: a sender that does not fill the window would make it
    /// too large), so without timestamps the estimate is the fastest window seen so far.
    pub(super) fn rtt_measure(&mut self, rcv_nxt: u64, rcv_wnd: u64, now: Time) {
        if let Some(began) = self.est_time {
            if rcv_nxt < self.est_seq {
                return;
            }
            let m = (now.saturating_since(began).0 / 1000).max(1) << 3;
            if self.rtt_us8 == 0 || m < self.rtt_us8 {
                self.rtt_us8 = m;
            }
        }
        self.est_seq = rcv_nxt + rcv_wnd;
        self.est_time = Some(now);
    }

    /// `tcp_measure_rcv_mss`: a full segment longer than the receiver's estimate (`rcv_mss`,
    /// before this segment updates it) sets the scaling ratio from its payload over the memory
    /// it costs, and the window clamp follows (`tcp_set_window_clamp`: rcv_ssthresh becomes
    /// at least the smaller of the clamp and `rcv_wnd`, the window last offered).
    pub(super) fn measure(&mut self, len: u64, rcv_mss: u64, ip_len: u64, rcv_wnd: u64) {
        if len > rcv_mss {
            let ratio = ((len << RATIO_SCALE) / truesize(ip_len)).clamp(1, 255);
            if ratio != self.ratio {
                self.ratio = ratio;
                self.window_clamp = win_from_space(self.rcvbuf, ratio);
                self.rcv_ssthresh = self.rcv_ssthresh.max(rcv_wnd.min(self.window_clamp));
            }
        }
    }

    /// `tcp_grow_window` for a segment of `len` payload bytes (`ip_len` on the wire) while
    /// other segments cost `held` bytes of the buffer (`sk_rmem_alloc`: the out-of-order queue,
    /// data not yet read): grow rcv_ssthresh by two segments (`advmss`) up to the room left.
    /// Returns whether it grew, which asks for an immediate ACK.
    pub(super) fn grow(
        &mut self,
        len: u64,
        ip_len: u64,
        advmss: u64,
        rcv_mss: u64,
        held: u64,
    ) -> bool {
        if len < GROW_MIN_LEN {
            return false;
        }
        // `tcp_space`: the buffer less what this segment and the out-of-order queue cost.
        let rmem = truesize(ip_len) + held;
        let room = self
            .window_clamp
            .min(win_from_space(self.rcvbuf.saturating_sub(rmem), self.ratio))
            .saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let incr = if win_from_space(truesize(ip_len), self.ratio) <= len {
            2 * advmss
        } else {
            self.grow_small(len, ip_len, rcv_mss)
        };
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min(incr.max(2 * len));
        true
    }

    /// `__tcp_grow_window`: a segment costing more than it carries grows the window only while
    /// rcv_ssthresh is small against the buffer's ceiling, halving both until it fits.
    fn grow_small(&self, len: u64, ip_len: u64, rcv_mss: u64) -> u64 {
        let mut cost = win_from_space(truesize(ip_len), self.ratio) >> 1;
        let mut window = win_from_space(self.rmem_max, self.ratio) >> 1;
        while self.rcv_ssthresh <= window {
            if cost <= len {
                return 2 * rcv_mss;
            }
            cost >>= 1;
            window >>= 1;
        }
        0
    }

    /// `tcp_rcv_space_adjust`, when the application has read up to `copied_seq`: once a
    /// receiver RTT has passed, a new high of bytes read in one RTT grows the buffer (at most
    /// to `tcp_rmem[2]`) and the window clamp with it.
    pub(super) fn read(&mut self, copied_seq: u64, now: Time) {
        if self.rtt_us8 == 0
            || now.saturating_since(self.space_time) < Dur::from_micros(self.rtt_us8 >> 3)
        {
            return;
        }
        let copied = copied_seq - self.space_seq;
        if copied > self.space {
            let mut rcvwin = copied << 1;
            if let Some(grow) = (rcvwin * (copied - self.space)).checked_div(self.space) {
                rcvwin += grow << 1;
                let rcvbuf = self.space_from_win(rcvwin).min(self.rmem_max);
                if rcvbuf > self.rcvbuf {
                    self.rcvbuf = rcvbuf;
                    self.window_clamp = win_from_space(rcvbuf, self.ratio);
                }
            }
            self.space = copied;
        }
        self.space_seq = copied_seq;
        self.space_time = now;
    }

    /// `__tcp_select_window`'s free space: the buffer less the `held` bytes its segments cost
    /// (`tcp_space`), at most rcv_ssthresh (before the caller's alignment to the window scale).
    pub(super) fn free_window(&self, held: u64) -> u64 {
        let free = win_from_space(self.rcvbuf.saturating_sub(held), self.ratio);
        free.min(self.rcv_ssthresh).min(self.window_clamp)
    }

    /// `tcp_space_from_win`: the buffer that offers `win` bytes of window.
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RATIO_SCALE) / self.ratio
    }
}

/// `tcp_win_from_space`: the window `space` bytes of buffer offer at `ratio`/256.
fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> RATIO_SCALE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn a_segment_costs_what_the_tun_device_allocates() {
        // 64 + 1500 + 320 = 1884 B in a 2 KiB bucket, plus the 256-byte sk_buff.
        assert_eq!(truesize(1500), 2304);
        // 64 + 576 + 320 = 960 B in a 1 KiB bucket.
        assert_eq!(truesize(576), 1280);
        // A pure ACK-sized packet: 64 + 52 + 320 = 436 B in 512.
        assert_eq!(truesize(52), 768);
    }

    #[test]
    fn a_full_segment_grows_the_window_six_times_to_the_kernels_plateau() {
        // Linux 6.18, 1500-byte path, timestamps: mss 1448, the SYN-ACK offers
        // rounddown(131 072 / 2, 1448) = 65 160. Established, the clamp is 65 536 less one
        // advmss (1448): 64 088, and rcv_ssthresh with it. The first segment sets the ratio
        // to 1448 · 256 / 2304 = 160, the clamp to 131 072 · 160/256 = 81 920 and
        // rcv_ssthresh back to the window offered, 65 160; the room is min(81 920,
        // (131 072 − 2304) · 160/256 = 80 480) − rcv_ssthresh.
        let mut b = RcvBuf::new(131_072, 6_291_456);
        assert_eq!(b.syn_window(1448), 65_160);
        b.established(1448, 1448, 7, 1, Time::ZERO);
        assert_eq!((b.window_clamp, b.rcv_ssthresh), (64_088, 64_088));
        b.measure(1448, 536, 1500, 65_160);
        assert_eq!(b.ratio, 160);
        assert_eq!((b.window_clamp, b.rcv_ssthresh), (81_920, 65_160));
        let mut seen = Vec::new();
        let mut grew = 0;
        for _ in 0..10 {
            if b.grow(1448, 1500, 1448, 1448, 0) {
                grew += 1;
            }
            seen.push(b.rcv_ssthresh);
        }
        // 65 160 + 2896 · k for five segments, then the last 840 bytes: the kernel's windows
        // 67, 70, 73, 75, 78, 79 (× 1024, rounded up) and ss's rcv_ssthresh 80 480.
        assert_eq!(grew, 6);
        assert_eq!(
            &seen[..7],
            &[68_056, 70_952, 73_848, 76_744, 79_640, 80_480, 80_480]
        );
    }

    #[test]
    fn a_small_mtu_leaves_no_room_to_grow() {
        // MTU 576 with timestamps, no window scaling (seed 000): mss 524, SYN-ACK 125 · 524 =
        // 65 500. Established, the clamp 65 535 (no scaling) is within one advmss of the
        // buffer's full window 65 536, so it becomes 65 536 − 524 = 65 012, and rcv_ssthresh
        // too: the emulated receivers then offer rounddown(65 012, 524) = 64 976. The first
        // segment is as long as rcv_mss (524), so the ratio stays 128: tcp_space is
        // (131 072 − 1280) / 2 = 64 896 < 65 012.
        let mut b = RcvBuf::new(131_072, 6_291_456);
        assert_eq!(b.syn_window(524), 65_500);
        b.established(524, 524, 0, 1, Time::ZERO);
        assert_eq!((b.window_clamp, b.rcv_ssthresh), (65_012, 65_012));
        b.measure(524, 524, 576, 65_500);
        assert_eq!(b.ratio, 128);
        assert!(!b.grow(524, 576, 524, 524, 0));
        assert_eq!(b.rcv_ssthresh, 65_012);
        assert_eq!(b.free_window(0), 65_012);
        // Without timestamps: 122 · 536 = 65 392 in the SYN-ACK, then 65 536 − 536 = 65 000
        // (the emulated receivers offer 121 · 536 = 64 856).
        let mut b = RcvBuf::new(131_072, 6_291_456);
        assert_eq!(b.syn_window(536), 65_392);
        b.established(536, 536, 0, 1, Time::ZERO);
        assert_eq!((b.window_clamp, b.rcv_ssthresh), (65_000, 65_000));
    }

    #[test]
    fn the_buffer_doubles_the_rate_once_per_receiver_rtt() {
        // The kernel's second growth (ss -tmi): 28 960 read in an RTT after a high of 15 928
        // gives rcvwin 57 920 + 2 · (57 920 · 13 032 / 15 928 = 47 389) = 152 698, so
        // sk_rcvbuf = 152 698 · 256 / 160 = 244 316 and the clamp 152 697.
        let mut b = RcvBuf::new(131_072, 6_291_456);
        b.syn_window(1448);
        b.established(1448, 1448, 7, 1, Time::ZERO);
        b.measure(1448, 536, 1500, 65_160);
        assert_eq!(b.space, 14_480);
        b.rtt_sample(1448, 1448, 0, 20);
        assert_eq!(b.rtt_us8, 160_000);
        // Within an RTT nothing changes.
        b.read(1 + 15_928, ms(10));
        assert_eq!(b.space, 14_480);
        // 15 928 read in the first RTT: a new high, but the buffer it asks for is smaller.
        b.read(1 + 15_928, ms(20));
        assert_eq!((b.space, b.rcvbuf), (15_928, 131_072));
        b.read(1 + 15_928 + 28_960, ms(40));
        assert_eq!(
            (b.space, b.rcvbuf, b.window_clamp),
            (28_960, 244_316, 152_697)
        );
        // Less than the high: no growth, the count starts again.
        b.read(1 + 15_928 + 28_960 + 1448, ms(60));
        assert_eq!((b.space, b.rcvbuf), (28_960, 244_316));
    }

    /// Without timestamps: the first in-order segment at 1 s starts a sample that waits for
    /// rcv_nxt to pass 1 000 + 65 535; at 9 s it has (66 600): 8 s. The next sample began there
    /// and takes 10 s: larger, ignored. The one after takes 5 s: smaller, taken at once.
    #[test]
    fn the_receiver_rtt_without_timestamps_is_the_fastest_window() {
        let mut b = RcvBuf::new(131_072, 6_291_456);
        b.rtt_measure(1_000, 65_535, ms(1_000));
        b.rtt_measure(30_000, 65_535, ms(5_000));
        assert_eq!(b.rtt_us8, 0, "the window is not through yet");
        b.rtt_measure(66_600, 65_535, ms(9_000));
        assert_eq!(b.rtt_us8, 8_000_000 << 3);
        b.rtt_measure(66_600 + 65_535, 65_535, ms(19_000));
        assert_eq!(b.rtt_us8, 8_000_000 << 3);
        b.rtt_measure(66_600 + 2 * 65_535, 65_535, ms(24_000));
        assert_eq!(b.rtt_us8, 5_000_000 << 3);
    }

    #[test]
    fn the_receiver_rtt_takes_a_smaller_sample_at_once_and_a_larger_one_by_an_eighth() {
        let mut b = RcvBuf::new(131_072, 6_291_456);
        b.rtt_sample(1448, 1448, 100, 140);
        assert_eq!(b.rtt_us8, 40_000 * 8);
        // The same echo again: no sample.
        b.rtt_sample(1448, 1448, 100, 200);
        assert_eq!(b.rtt_us8, 40_000 * 8);
        // 80 ms: 320 000 − 40 000 + 80 000.
        b.rtt_sample(1448, 1448, 120, 200);
        assert_eq!(b.rtt_us8, 360_000);
        // A short segment gives none.
        b.rtt_sample(100, 1448, 130, 140);
        assert_eq!(b.rtt_us8, 360_000);
        // 10 ms: smaller, taken at once.
        b.rtt_sample(1448, 1448, 190, 200);
        assert_eq!(b.rtt_us8, 80_000);
    }
}
