//! The receive state: in-order delivery, the out-of-order queue, SACK and D-SACK blocks, the
//! delayed ACK (whose timer is [`Timers::delack`]), the advertised window, and what the
//! receiver echoes (TS.Recent, ECE).

use super::rcvbuf::{advmss, truesize, RcvBuf};
use super::*;

/// Linux TCP_ATO_MIN (HZ/25) for the adaptive delayed-ACK timer.
const ATO_MIN: Dur = Dur::from_millis(40);
/// Linux TCP_DELACK_MAX (HZ/5): the adaptive timeout never exceeds it.
const DELACK_MAX: Dur = Dur::from_millis(200);

/// What a segment's payload and FIN did, for the connection (its events and state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Arrival {
    /// Bytes newly delivered in order.
    pub(super) delivered: u64,
    /// The segment came after the peer's FIN was complete: a retransmission.
    pub(super) after_fin: bool,
    /// The peer's FIN arrived in order.
    pub(super) peer_fin: bool,
}

/// The receive side of a connection. Sequence offsets count from `irs` (the peer's SYN is 0).
#[derive(Debug)]
pub(super) struct RecvState {
    pub(super) irs: u32,
    pub(super) rcv_nxt: u64,
    /// rcv_nxt when the last ACK was sent (Linux `rcv_wup`).
    pub(super) rcv_wup: u64,
    /// Right edge of the last advertised window (never shrunk).
    pub(super) rcv_edge: u64,
    /// Out-of-order data held, sorted, disjoint.
    pub(super) ooo: Vec<(u64, u64)>,
    /// The same blocks, most recently changed first (RFC 2018 order).
    pub(super) sack_recent: Vec<(u64, u64)>,
    /// A D-SACK block to report once.
    pub(super) dsack: Option<(u64, u64)>,
    /// Offset of the peer's FIN, once seen.
    pub(super) fin_at: Option<u64>,
    pub(super) fin_rcvd: bool,
    /// An ACK is owed now.
    pub(super) ack_now: bool,
    pub(super) quickacks_left: u32,
    /// `ack_pushed` (Linux `tcp_measure_rcv_mss`): the receiver's estimate of the sender's
    /// segment size, how many shorter ("pushed") segments wait for an ACK (ICSK_ACK_PUSHED and
    /// PUSHED2), and whether the connection is interactive (`icsk_ack.pingpong`).
    pub(super) rcv_mss: u64,
    pub(super) pushed: u8,
    pub(super) pingpong: bool,
    /// Linux's adaptive delayed-ACK timeout and the last arrival it follows.
    pub(super) ato: Dur,
    pub(super) last_rcv: Option<Time>,
    /// TS.Recent: the TSval our segments echo.
    pub(super) ts_recent: u32,
    /// ECN: ECE is owed until a segment with CWR arrives.
    pub(super) ece_pending: bool,
    /// Upper bound on the advertised window set by the host (seed 001's shared window).
    pub(super) window_cap: Option<u64>,
    /// Linux 6.x's receive-buffer autotuning and window growth (`rcvbuf_initial`).
    pub(super) autotune: Option<RcvBuf>,
    /// The bytes delivered at this instant: an ACK sent at once (in the kernel's softirq,
    /// before the application reads) finds them still in the buffer.
    unread: (Time, u64),
    /// Linux 6.18's quick-ACK accounting (`cfg.kernel`): a gap longer than the RTO re-enters
    /// quick-ACK mode (`tcp_event_data_recv`), and every ACK of new data uses up one quick ACK
    /// (`tcp_dec_quickack_mode`).
    k6: bool,
}

impl RecvState {
    pub(super) fn new(cfg: &TcpConfig) -> RecvState {
        RecvState {
            irs: 0,
            rcv_nxt: 0,
            rcv_wup: 0,
            rcv_edge: 0,
            ooo: Vec::new(),
            sack_recent: Vec::new(),
            dsack: None,
            fin_at: None,
            fin_rcvd: false,
            ack_now: false,
            quickacks_left: cfg.quickacks,
            // tcp_initialize_rcv_mss: at most TCP_MSS_DEFAULT (536) until segments say more.
            rcv_mss: u64::from(cfg.adv_mss().min(536)),
            pushed: 0,
            pingpong: false,
            ato: ATO_MIN,
            last_rcv: None,
            ts_recent: 0,
            ece_pending: false,
            window_cap: None,
            autotune: cfg.rcvbuf_initial.map(|b| RcvBuf::new(b.0, cfg.rcvbuf.0)),
            unread: (Time::ZERO, 0),
            k6: cfg.kernel == Some(crate::config::Kernel::Linux618),
        }
    }

    /// The peer's SYN (sequence number `irs`) is in.
    pub(super) fn syn_received(&mut self, irs: u32) {
        self.irs = irs;
        self.rcv_nxt = 1;
        self.rcv_wup = 1;
    }

    /// RFC 1323 §4.2 / Linux tcp_store_ts_recent: remember the TSval of a segment that starts
    /// at or before the last ACK sent (rcv_wup), so a delayed ACK echoes the earliest
    /// unacknowledged segment and its RTT includes the delay.
    #[inline]
    pub(super) fn store_ts_recent(&mut self, seg: &Segment) {
        if let Some((val, _)) = seg.ts {
            let at_or_before = unwrap(
                self.irs.wrapping_add(self.rcv_nxt as u32),
                self.rcv_nxt,
                seg.seq,
            )
            .is_some_and(|s| s <= self.rcv_wup);
            if at_or_before && (val.wrapping_sub(self.ts_recent) as i32) >= 0 {
                self.ts_recent = val;
            }
        }
    }

    /// RFC 3168 §6.1.3: echo CE until a segment with CWR arrives; Linux ACKs a CE segment at
    /// once (quick-ACK mode).
    #[inline]
    pub(super) fn on_ecn(&mut self, stats: &mut Stats, seg: &Segment) {
        if seg.has(CWR) {
            self.ece_pending = false;
        }
        if seg.ecn == 3 {
            stats.ce_rcvd += 1;
            self.ece_pending = true;
            self.ack_now = true;
        }
    }

    /// The delayed-ACK timer fired.
    pub(super) fn on_delack_timeout(&mut self, cfg: &TcpConfig, rtt: &RttEstimator) {
        if self.rcv_nxt > self.rcv_wup {
            self.ack_now = true;
        }
        if cfg.delayed_ack == DelayedAck::Adaptive {
            if self.pingpong && self.rcv_nxt > self.rcv_wup {
                // Linux tcp_delack_timer_handler: "Delayed ACK missed: leave pingpong mode".
                self.pingpong = false;
                self.ato = ATO_MIN;
            } else {
                // Linux tcp_delack_timer: the timer was too short, so lengthen it.
                self.ato = Dur((self.ato.0 * 2).min(rtt.rto().0));
            }
        }
    }

    /// We send data: Linux `tcp_event_data_sent` makes the connection interactive
    /// (`pingpong`) when it answers within ato of the last arrival, and then no longer ACKs a
    /// single pushed segment at once (`ack_pushed`).
    #[inline]
    pub(super) fn data_sent(&mut self, now: Time) {
        if let Some(last) = self.last_rcv {
            if now.saturating_since(last) < self.ato {
                self.pingpong = true;
            }
        }
    }

    /// Any segment carrying the ACK settles what the receiver owed.
    #[inline]
    pub(super) fn ack_sent(&mut self, timers: &mut Timers) {
        if self.k6 && self.quickacks_left > 0 {
            // Linux 6.x `tcp_event_ack_sent` -> `tcp_dec_quickack_mode`: an ACK sent while one
            // was scheduled (`inet_csk_ack_scheduled`: data arrived since the last ACK, in
            // order or not) uses up a quick ACK, however it was triggered; the last one
            // deflates ato.
            let scheduled =
                self.ack_now || timers.delack().is_some() || self.rcv_nxt > self.rcv_wup;
            if scheduled {
                self.quickacks_left -= 1;
                if self.quickacks_left == 0 {
                    self.ato = ATO_MIN;
                }
            }
        }
        self.ack_now = false;
        self.pushed = 0;
        timers.set_delack(None);
        self.rcv_wup = self.rcv_nxt;
    }

    /// The window last offered, from where it was offered (Linux `tp->rcv_wnd`).
    #[inline]
    fn rcv_wnd(&self) -> u64 {
        self.rcv_edge.saturating_sub(self.rcv_wup)
    }

    /// Bytes held in the out-of-order queue.
    pub(super) fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|&(s, e)| e - s).sum()
    }

    /// The buffer memory (`sk_rmem_alloc`) that `bytes` of received data cost: one
    /// `truesize` per segment of `rcv_mss` (the TUN device's linear skbs are never coalesced).
    fn mem(&self, bytes: u64, ts: bool) -> u64 {
        let mss = self.rcv_mss.max(1);
        bytes.div_ceil(mss) * truesize(mss + 40 + if ts { 12 } else { 0 })
    }

    /// A segment's payload and FIN.
    // The receiver's inputs: configuration, options, the RTT estimator (for ato), counters,
    // the delayed-ACK timer, and the segment.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn on_data(&mut self, cx: &mut Ctx, rtt: &RttEstimator, seg: &Segment) -> Arrival {
        let cfg = cx.cfg;
        let mut out = Arrival::default();
        let len = u64::from(seg.payload);
        let fin = seg.has(FIN);
        if len == 0 && !fin {
            return out;
        }
        let base = self.irs.wrapping_add(self.rcv_nxt as u32);
        let Some(start) = unwrap(base, self.rcv_nxt, seg.seq) else {
            return out;
        };
        let end = start + len;
        if len > 0 {
            cx.stats.data_pkts_rcvd += 1;
        }
        if self.fin_rcvd {
            // Everything up to the FIN is in: this is a retransmission.
            self.ack_now = true;
            if len > 0 {
                cx.stats.dup_data_pkts_rcvd += 1;
                self.set_dsack(cx, start, end);
            }
            out.after_fin = true;
            return out;
        }
        if len > 0 && end <= self.rcv_nxt {
            cx.stats.dup_data_pkts_rcvd += 1;
            self.set_dsack(cx, start, end);
            self.ack_now = true;
            return out;
        }
        let limit = self.rcv_nxt + cfg.rcvbuf.0;
        // Linux `tcp_rcv_established` takes the receiver's timestamp RTT sample
        // (`tcp_rcv_rtt_measure_ts`) before `tcp_data_queue`, so out-of-order segments give
        // one too.
        if let (Some(a), Some((_, ecr))) = (&mut self.autotune, seg.ts) {
            a.rtt_sample(len, self.rcv_mss, ecr, ms_stamp(cx.now));
        }
        if start > self.rcv_nxt {
            // Out of order: hold it (within the buffer) and acknowledge at once with SACK.
            self.ack_now = true;
            if len > 0 {
                cx.stats.ooo_pkts_rcvd += 1;
                let e = end.min(limit);
                if e > start {
                    self.insert_ooo(cx, start, e);
                }
                // Linux `tcp_data_queue_ofo` grows the window too.
                let held = self.mem(self.ooo_bytes(), cx.o.ts);
                if let Some(a) = &mut self.autotune {
                    let ip_len = len + 40 + if cx.o.ts { 12 } else { 0 };
                    let advmss = advmss(cfg, cx.o.ts);
                    if a.grow(len, ip_len, advmss, self.rcv_mss, held) {
                        self.quickacks_left |= 1;
                    }
                }
            }
            if fin && end <= limit {
                self.fin_at = Some(end);
            }
            return out;
        }
        // In order (possibly starting below rcv_nxt).
        if len > 0 {
            if start < self.rcv_nxt {
                self.set_dsack(cx, start, self.rcv_nxt);
                // Linux `tcp_data_queue`: a partly duplicate segment (seq < rcv_nxt < end_seq,
                // e.g. an RDB packet) enters quick-ACK mode, so it is ACKed at once (seed 003
                // Listing 2.3); quick-ACK mode lasts `quickacks` segments (0: just this one).
                self.ack_now = true;
                self.quickacks_left = self.quickacks_left.max(cfg.quickacks);
            }
            let filled_hole = !self.ooo.is_empty();
            // `tcp_event_data_recv` (the window-based RTT sample, the window's growth) runs
            // before `tcp_ofo_queue` moves what the segment completes: it sees rcv_nxt at the
            // segment's end and the out-of-order queue still charged to the buffer.
            let (seg_nxt, held, rcv_wnd) = (
                end.min(limit),
                self.mem(self.ooo_bytes(), cx.o.ts),
                self.rcv_wnd(),
            );
            let mut nxt = seg_nxt;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > nxt {
                    break;
                }
                nxt = nxt.max(e);
                self.ooo.remove(0);
            }
            let delivered = nxt - self.rcv_nxt;
            self.rcv_nxt = nxt;
            self.sack_recent.retain(|&(_, e)| e > nxt);
            if delivered > 0 {
                cx.stats.bytes_delivered += delivered;
                out.delivered = delivered;
                let before = if self.unread.0 == cx.now {
                    self.unread.1
                } else {
                    0
                };
                self.unread = (cx.now, before + delivered);
            }
            if let Some(a) = &mut self.autotune {
                // Linux `tcp_event_data_recv`: the ratio, then the window's growth, which asks
                // for an immediate ACK (`icsk_ack.quick |= 1`).
                let ip_len = len + 40 + if cx.o.ts { 12 } else { 0 };
                if delivered > 0 {
                    a.rtt_measure(seg_nxt, rcv_wnd, cx.now);
                }
                a.measure(len, self.rcv_mss, ip_len, rcv_wnd);
                let advmss = advmss(cfg, cx.o.ts);
                if a.grow(len, ip_len, advmss, self.rcv_mss, held) {
                    self.quickacks_left |= 1;
                }
            }
            if cfg.ack_pushed {
                self.measure_rcv_mss(len, seg.has(PSH));
            }
            self.schedule_ack(cx, rtt, filled_hole);
            if let Some(a) = &mut self.autotune {
                // The model's applications read at once (`tcp_rcv_space_adjust`).
                a.read(self.rcv_nxt, cx.now);
            }
        }
        if fin && end <= limit {
            self.fin_at = Some(end);
        }
        if self.fin_at == Some(self.rcv_nxt) {
            self.rcv_nxt += 1;
            self.fin_rcvd = true;
            self.ack_now = true;
            out.peer_fin = true;
        }
        out
    }

    /// When to acknowledge in-order data: at once for a filled hole, in quick-ACK mode or
    /// once more than one full segment is unacknowledged (Linux `__tcp_ack_snd_check`, i.e.
    /// every second full segment); otherwise on the delayed-ACK timer.
    fn schedule_ack(&mut self, cx: &mut Ctx, rtt: &RttEstimator, filled_hole: bool) {
        let cfg = cx.cfg;
        let o = cx.o;
        let now = cx.now;
        if cfg.delayed_ack == DelayedAck::Adaptive {
            self.update_ato(cfg, rtt, now);
        }
        // Linux sends the ACK of a filled hole or in quick-ACK mode from the softirq, before
        // the application reads what arrived (so its window counts that data); the others
        // come after the read (`tcp_cleanup_rbuf`: a pushed segment, or the every-second-
        // segment ACK whenever the unread data would shrink the window, as `__tcp_ack_snd_check`
        // then leaves it to the reader), or on the timer, when the data has been read.
        let charged = filled_hole
            || cfg.delayed_ack == DelayedAck::Off
            || (self.quickacks_left > 0 && self.pushed == 0);
        if !charged {
            self.unread.1 = 0;
        }
        if filled_hole || cfg.delayed_ack == DelayedAck::Off {
            self.ack_now = true;
        } else if self.pushed >= 2 || (self.pushed == 1 && !self.pingpong) {
            // `ack_pushed`: Linux `tcp_cleanup_rbuf` ACKs once the application has read a
            // pushed segment (two, if interactive); the model's applications read at once.
            self.ack_now = true;
        } else if self.quickacks_left > 0 {
            // Linux 6.x counts the quick ACK when it is sent (`ack_sent`).
            if !self.k6 {
                self.quickacks_left -= 1;
            }
            self.ack_now = true;
        } else if self.rcv_nxt - self.rcv_wup > u64::from(o.mss) {
            self.ack_now = true;
        } else if cx.timers.delack().is_none() {
            let timeout = match cfg.delayed_ack {
                DelayedAck::Adaptive => self.ato_timeout(rtt),
                _ => cfg.delayed_ack_timeout,
            };
            let at = cx.timer_at(timeout);
            cx.timers.set_delack(Some(at));
        }
    }

    /// Linux `tcp_measure_rcv_mss` (2.6+, `ack_pushed`): a segment at least as long as the
    /// estimate raises it; a shorter one is "pushed" (ICSK_ACK_PUSHED, a second PUSHED2).
    /// Since 6.6 ("tcp: fix delayed ACKs for MSS boundary condition") a full-sized segment with
    /// PSH is pushed too (ICSK_ACK_PUSHED only), so it is ACKed once read; the 6.x sender marks
    /// few segments (`gso.rs`), the older profiles every one. Linux also adopts a repeated
    /// short size without PSH as the estimate; the model's short segments are all pushed
    /// (every write of a thin stream is), so it never does.
    fn measure_rcv_mss(&mut self, len: u64, psh: bool) {
        if len >= self.rcv_mss {
            self.rcv_mss = len;
            if self.k6 && psh {
                self.pushed = self.pushed.max(1);
            }
        } else {
            self.pushed = (self.pushed + 1).min(2);
        }
    }

    /// Linux `tcp_event_data_recv`: ato follows the packet inter-arrival time. With the timer
    /// wheel on, in whole jiffies as the kernel counts them (`tcp_jiffies32`, ato halved by a
    /// shift), so ato stays a whole number of ticks.
    fn update_ato(&mut self, cfg: &TcpConfig, rtt: &RttEstimator, now: Time) {
        if let Some(last) = self.last_rcv {
            let (tick, m) = if cfg.timer_wheel {
                let j = |t| super::timers::jiffies(cfg, t);
                (super::timers::jiffy_ns(cfg.hz), j(now) - j(last))
            } else {
                (1, now.saturating_since(last).0)
            };
            let (ato, min, rto) = (
                self.ato.0 / tick,
                ATO_MIN.0 / tick,
                rtt.rto().0.div_ceil(tick),
            );
            if m <= min / 2 {
                self.ato = Dur((ato / 2 + min / 2) * tick);
            } else if m < ato {
                self.ato = Dur((ato / 2 + m).min(rto) * tick);
            } else if self.k6 && m > rto {
                // "Too long gap. Apparently sender failed to restart window, so that we send
                // ACKs quickly": `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`. The gap counts
                // from the last in-order data (`lrcvtime`), so the segment filling a hole
                // after a long out-of-order spell re-enters quick-ACK mode too.
                self.incr_quickack(cfg.quickacks);
            }
        }
        self.last_rcv = Some(now);
    }

    /// Linux `tcp_incr_quickack`: as many quick ACKs as half the window offered holds segments
    /// of the receiver's estimate (2 if none), at most `max` (TCP_MAX_QUICKACKS); never fewer
    /// than are left.
    fn incr_quickack(&mut self, max: u32) {
        let rcv_wnd = self.rcv_wnd();
        let mut quickacks = (rcv_wnd / (2 * self.rcv_mss.max(1))) as u32;
        if quickacks == 0 {
            quickacks = 2;
        }
        self.quickacks_left = self.quickacks_left.max(quickacks.min(max));
    }

    /// Linux `tcp_send_delayed_ack`: ato, at most 200 ms and at most the smoothed RTT.
    fn ato_timeout(&self, rtt: &RttEstimator) -> Dur {
        let mut max = DELACK_MAX;
        if let Some(srtt) = rtt.srtt() {
            max = max.min(srtt.max(ATO_MIN));
        }
        self.ato.min(max)
    }

    fn set_dsack(&mut self, cx: &Ctx, start: u64, end: u64) {
        let cfg = cx.cfg;
        let o = cx.o;
        if cfg.dsack && o.sack {
            self.dsack = Some((start, end));
        }
    }

    /// Adds [start, end) to the out-of-order queue; the block holding it becomes the first
    /// SACK block. A segment already held is a duplicate (D-SACK).
    fn insert_ooo(&mut self, cx: &mut Ctx, start: u64, end: u64) {
        if self.ooo.iter().any(|&(s, e)| s <= start && end <= e) {
            cx.stats.dup_data_pkts_rcvd += 1;
            self.set_dsack(cx, start, end);
        }
        let (mut s, mut e) = (start, end);
        self.ooo.retain(|&(bs, be)| {
            if be < s || bs > e {
                true
            } else {
                s = s.min(bs);
                e = e.max(be);
                false
            }
        });
        let pos = self
            .ooo
            .iter()
            .position(|&(bs, _)| bs > s)
            .unwrap_or(self.ooo.len());
        self.ooo.insert(pos, (s, e));
        self.sack_recent.retain(|&(bs, be)| be < s || bs > e);
        self.sack_recent.insert(0, (s, e));
    }

    /// The window we advertise: the buffer minus what is held out of order (of which
    /// `adv_win_scale` offers a share), clamped, and never moving the right edge back (RFC 793).
    #[inline]
    pub(super) fn adv_window(&mut self, cx: &Ctx) -> u16 {
        let cfg = cx.cfg;
        let o = cx.o;
        let held = self.ooo_bytes();
        let mut w = match &self.autotune {
            Some(a) => {
                // Linux charges the out-of-order queue and what the application has not read
                // yet: an ACK sent as data arrives finds that data unread.
                let unread = if self.unread.0 == cx.now {
                    self.unread.1
                } else {
                    0
                };
                let free = a.free_window(self.mem(held + unread, o.ts));
                // Linux `__tcp_select_window` without window scaling: keep the window last
                // offered while it is within one rcv_mss below the free space, else offer the
                // free space rounded down to whole rcv_mss (the emulated 6.18 receivers offer
                // 124 · 524 = 64 976 of a free 65 012).
                let (mss, last) = (self.rcv_mss.max(1), self.rcv_wnd());
                if o.rcv_wscale == 0 && free > mss {
                    if last + mss <= free || last > free {
                        free / mss * mss
                    } else {
                        last
                    }
                } else {
                    free
                }
            }
            None => cfg.win_from_space(cfg.rcvbuf.0.saturating_sub(held)),
        };
        if let Some(c) = cfg.window_clamp {
            w = w.min(c.0);
        }
        if let Some(c) = self.window_cap {
            w = w.min(c);
        }
        let s = o.rcv_wscale;
        w = w
            .max(self.rcv_edge.saturating_sub(self.rcv_nxt))
            .min(65535 << s);
        // Rounded up to the scale unit, so the right edge never moves back (Linux aligns too).
        let field = w.div_ceil(1 << s).min(65535);
        self.rcv_edge = self.rcv_nxt + (field << s);
        field as u16
    }

    /// The window of our SYN or SYN-ACK: never scaled; clamp and host cap apply to it too.
    /// With autotuning, whole segments of `mss` (Linux `tcp_select_initial_window`).
    pub(super) fn syn_window(&mut self, cfg: &TcpConfig, mss: u32) -> u16 {
        let mut w = match &mut self.autotune {
            Some(a) => a.syn_window(u64::from(mss)),
            None => cfg.win_from_space(cfg.rcvbuf.0).min(65535),
        };
        if let Some(c) = cfg.window_clamp {
            w = w.min(c.0);
        }
        if let Some(c) = self.window_cap {
            w = w.min(c);
        }
        w as u16
    }

    /// The SACK blocks for a segment with `payload` bytes, as wire numbers: a pending D-SACK
    /// first, then the most recently changed blocks, as many as the options and the MTU allow.
    #[inline]
    pub(super) fn sack_blocks(&mut self, cx: &mut Ctx, payload: u32) -> Vec<(u32, u32)> {
        let cfg = cx.cfg;
        let o = cx.o;
        let max_blocks = if o.ts { 3 } else { 4 };
        let irs = self.irs;
        let wire = |(s, e): (u64, u64)| (irs.wrapping_add(s as u32), irs.wrapping_add(e as u32));
        let mut blocks: Vec<(u32, u32)> = self.dsack.take().map(wire).into_iter().collect();
        let dsack = blocks.len() as u64;
        // Every Linux's block is the out-of-order skb's `end_seq`, an out-of-order FIN included
        // (`tcp_sack_new_ofo_skb`); the model's blocks leave it out unless it follows 6.18
        // (kept so for the shipped outputs: the sender then never SACKs the FIN's segment).
        let fin_end = if cfg.kernel == Some(crate::config::Kernel::Linux618) {
            self.fin_at
        } else {
            None
        };
        for &(s, e) in &self.sack_recent {
            if blocks.len() >= max_blocks {
                break;
            }
            blocks.push(wire((s, if Some(e) == fin_end { e + 1 } else { e })));
        }
        // A data segment must still fit the MTU: drop blocks that do not.
        let room = (cfg.mtu.0 as u32).saturating_sub(40 + payload + if o.ts { 12 } else { 0 });
        while !blocks.is_empty() && 4 + 8 * blocks.len() as u32 > room {
            blocks.pop();
        }
        cx.stats.sack_blocks_sent += blocks.len() as u64;
        cx.stats.dsack_blocks_sent += dsack.min(blocks.len() as u64);
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux 6.18's ato in jiffies of 4 ms (HZ 250, the wheel's clock at phase 0): arrivals at
    /// 0, 30 and 75 ms fall in jiffies 0, 7 and 18. ato starts at 10 (40 ms); 7 < 10 gives
    /// 10 >> 1 + 7 = 12 (48 ms, where nanoseconds give 20 + 30 = 50 ms); 11 < 12 gives
    /// 6 + 11 = 17 (68 ms). Without the wheel the arithmetic is in nanoseconds.
    #[test]
    fn ato_counts_whole_jiffies_with_the_timer_wheel() {
        let cfg = TcpConfig::linux_6_18();
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max);
        let ms = |m: u64| Time(m * 1_000_000);
        let mut r = RecvState::new(&cfg);
        for (at, ato) in [(0, 40), (30, 48), (75, 68)] {
            r.update_ato(&cfg, &rtt, ms(at));
            assert_eq!(r.ato, Dur::from_millis(ato), "at {at} ms");
        }
        let cfg = TcpConfig {
            timer_wheel: false,
            ..TcpConfig::linux_6_18()
        };
        let mut r = RecvState::new(&cfg);
        r.update_ato(&cfg, &rtt, ms(0));
        r.update_ato(&cfg, &rtt, ms(30));
        assert_eq!(r.ato, Dur::from_millis(50));
    }
}
