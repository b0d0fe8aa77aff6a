//! Today's Linux on top of the 2.4-like send state, each a switch of [`TcpConfig`]: the
//! growth gate `tcp_is_cwnd_limited` of 3.15 and 3.16, proportional rate
//! reduction (3.2+ `tcp_cwnd_reduction`), early retransmit (3.5+, with 3.16's delay) and the
//! tail loss probe (3.10–3.16). Each function names the kernel function it follows.
//!
//! Linux keeps one retransmission timer whose meaning changes (`icsk_pending`: RTO, early
//! retransmit, loss probe, RACK's reordering timeout). The model keeps the other three in one
//! field, [`Timers::alt`], and `Timers::rto` is `None` while it is armed, so one of them is
//! pending at a time, as in Linux; `rearm_rto` puts the RTO back.

use super::rack::Rack;
use super::send::Outgoing;
use super::timers::AltTimer;
use super::*;
use crate::cc::{Acked, CongestionOps};
use crate::config::{CongestionControl, CwndLimited, EarlyRetransmit};

/// The state these mechanisms add to [`SendState`].
#[derive(Debug)]
pub(super) struct Linux3 {
    /// Any of these mechanisms is on: otherwise the hooks return at once (the seeds' baseline
    /// pays one test per hook).
    pub(super) active: bool,
    /// Linux 3.16 `tcp_cwnd_validate`: the most segments out in the current window, the
    /// snd_nxt that ends that window, and whether cwnd stopped the transmission that set it.
    max_packets_out: u32,
    max_packets_seq: u64,
    is_cwnd_limited: bool,
    /// The transmission round under way (Linux `tcp_write_xmit`): new segments sent, whether
    /// cwnd stopped new data, whether it is the loss probe's (no probe is scheduled after it).
    pub(super) round_sent: u32,
    pub(super) round_cwnd_limited: bool,
    pub(super) round_open: bool,
    /// PRR (Linux `prior_cwnd`, `prr_delivered`, `prr_out`), `packets_out - sacked_out` before
    /// the ACK, and whether the ACK being processed started Recovery (`fast_rexmit`).
    pub(super) prior_cwnd: u32,
    prr_delivered: u32,
    pub(super) prr_out: u32,
    prior_unsacked: u32,
    fast_rexmit: bool,
    /// Early retransmit: when `tcp_pause_early_retransmit` asked for the delayed timer; the RTO
    /// deadline and ECE flag of the ACK being processed.
    er_pause: Option<Time>,
    ack_rto_at: Option<Time>,
    ack_ece: bool,
    ack_now: Time,
    /// TLP: snd_nxt when the probe retransmission went (`tlp_high_seq`); the probe the timer
    /// asked for (a retransmission of the last segment, or new data past cwnd and Nagle);
    /// SACKed segments and D-SACKs before the ACK.
    tlp_high_seq: Option<u64>,
    pub(super) probe_rtx: bool,
    pub(super) probe_new: bool,
    probe_round: bool,
    prior_sacked: u32,
    prior_dsacks: u64,
    /// RACK (`rack.rs`).
    pub(super) rack: Rack,
}

impl Linux3 {
    /// Whether `cfg` switches on anything here.
    pub(super) fn wanted(cfg: &TcpConfig) -> bool {
        cfg.congestion_control != CongestionControl::Reno
            // Both gates read `max_packets_out` / `is_cwnd_limited`, kept only when active:
            // without them a 6.18 Reno host with PRR, RACK and TLP off never grew cwnd.
            || matches!(cfg.cwnd_limited, CwndLimited::Linux316 | CwndLimited::Linux618)
            || cfg.prr
            || cfg.early_retransmit != EarlyRetransmit::Off
            || cfg.tlp
            || cfg.rack
    }

    pub(super) fn new(cfg: &TcpConfig) -> Linux3 {
        Linux3 {
            active: Self::wanted(cfg),
            max_packets_out: 0,
            max_packets_seq: 0,
            is_cwnd_limited: false,
            round_sent: 0,
            round_cwnd_limited: false,
            round_open: false,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            prior_unsacked: 0,
            fast_rexmit: false,
            er_pause: None,
            ack_rto_at: None,
            ack_ece: false,
            ack_now: Time::ZERO,
            tlp_high_seq: None,
            probe_rtx: false,
            probe_new: false,
            probe_round: false,
            prior_sacked: 0,
            prior_dsacks: 0,
            rack: Rack::default(),
        }
    }
}

/// `usecs_to_jiffies`: `d` rounded up to whole jiffies at `hz`.
pub(super) fn jiffies_up(d: Dur, hz: u32) -> Dur {
    let j = super::timers::jiffy_ns(hz);
    Dur(d.0.div_ceil(j) * j)
}

/// Linux `TCP_DELACK_MAX`, the delayed-ACK allowance of the loss probe for one segment out.
const TLP_DELACK_MAX: Dur = Dur::from_millis(200);

impl SendState {
    // -----------------------------------------------------------------------------------------
    // Growth.

    /// May this ACK of new data raise cwnd (`cwnd_limited`)? `prior_in_flight` is the flight
    /// before the ACK.
    #[inline]
    pub(super) fn cwnd_gate(&self, cfg: &TcpConfig, prior_in_flight: u32) -> bool {
        match cfg.cwnd_limited {
            CwndLimited::Linux24 => prior_in_flight >= self.win.cwnd,
            // 3.15: in_flight >= cwnd, or `left <= tcp_max_tso_deferred_mss` (3).
            CwndLimited::Linux315 => {
                prior_in_flight >= self.win.cwnd || self.win.cwnd - prior_in_flight <= 3
            }
            CwndLimited::Linux316 => {
                if self.win.cwnd <= self.win.ssthresh {
                    self.win.cwnd < 2 * self.l3.max_packets_out
                } else {
                    self.l3.is_cwnd_limited
                }
            }
            // 6.x: the last cwnd-limited transmission, or in slow start (cwnd < ssthresh)
            // cwnd below twice what was out.
            CwndLimited::Linux618 => {
                self.l3.is_cwnd_limited
                    || (self.win.cwnd < self.win.ssthresh
                        && self.win.cwnd < 2 * self.l3.max_packets_out)
            }
        }
    }

    /// `tcp_cong_avoid`: the algorithm's growth for an ACK of `acked` new segments.
    #[inline]
    pub(super) fn cong_avoid_cc(&mut self, ack: u64, acked: u32, now: Time) {
        let a = Acked {
            now,
            ack,
            snd_nxt: self.snd_nxt,
            segs: acked,
            pacing_rate: self.pace.rate,
            paced: self.pace.on,
        };
        self.cc.cong_avoid(&mut self.win, &a);
    }

    /// The algorithm's `pkts_acked` (before the ACK's growth, as `tcp_clean_rtx_queue` calls
    /// it): `acked` segments were cumulatively ACKed, `rtt` since the last of them not
    /// retransmitted was sent. CUBIC's HyStart may end slow start here (ssthresh = cwnd).
    #[inline]
    pub(super) fn cc_pkts_acked(&mut self, ack: u64, acked: u32, rtt: Option<Dur>, now: Time) {
        let a = Acked {
            now,
            ack,
            snd_nxt: self.snd_nxt,
            segs: acked,
            pacing_rate: self.pace.rate,
            paced: self.pace.on,
        };
        let open = self.ca == CaState::Open;
        self.cc.pkts_acked(&mut self.win, &a, rtt, open);
    }

    /// The RTT the algorithm's `pkts_acked` is given (Linux `ca_seq_rtt_us`): from the last
    /// segment that `ack` covers and that was never retransmitted. Call before the queue is
    /// cleaned; `None` when the algorithm takes none.
    #[inline]
    pub(super) fn cc_rtt(&self, ack: u64, now: Time) -> Option<Dur> {
        if !self.cc.wants_rtt() {
            return None;
        }
        self.rtx
            .iter()
            .take_while(|s| s.end <= ack)
            .filter(|s| !s.ever_retrans)
            .last()
            .map(|s| now.saturating_since(s.sent_at))
    }

    /// cwnd restored by an undo with a prior ssthresh (Linux `icsk_ca_ops->undo_cwnd`):
    /// Reno max(cwnd, 2·ssthresh), CUBIC max(cwnd, cwnd at the loss).
    #[inline]
    pub(super) fn undo_cwnd_value(&mut self) -> u32 {
        let prior = self.l3.prior_cwnd;
        self.cc.undo_cwnd(&self.win, prior)
    }

    /// An RTO entered Loss: the algorithm's `set_state(TCP_CA_Loss)`.
    pub(super) fn cc_on_loss(&mut self, cx: &Ctx) {
        let sk = self.ca_sk(cx);
        self.cc.on_loss_state(&sk);
    }

    /// The end of a transmission round (`tcp_write_xmit` returning): Linux 3.16
    /// `tcp_cwnd_validate` and `tcp_schedule_loss_probe`, if new data went.
    #[inline]
    pub(super) fn end_round(&mut self, cx: &mut Ctx) {
        self.pace.end_round();
        self.gso.end_round();
        if self.l3.round_open {
            self.end_round_open(cx);
        }
    }

    #[inline(never)]
    fn end_round_open(&mut self, cx: &mut Ctx) {
        let probe_round = std::mem::take(&mut self.l3.probe_round);
        self.l3.probe_new = false;
        self.l3.round_open = false;
        let sent = std::mem::take(&mut self.l3.round_sent);
        let mut limited = std::mem::take(&mut self.l3.round_cwnd_limited);
        if cx.cfg.cwnd_limited == CwndLimited::Linux618 {
            // 6.x `tcp_write_xmit`: also cwnd-limited when in flight fills cwnd at the end,
            // and `tcp_cwnd_validate` runs then even if nothing went; it takes any
            // cwnd-limited round, or (while the last was not) a larger flight.
            limited |= self.in_flight(cx.o) >= self.win.cwnd;
            if sent == 0 && !limited {
                return;
            }
            let l = &mut self.l3;
            let out = self.rtx.len() as u32;
            if self.snd_una >= l.max_packets_seq
                || limited
                || (!l.is_cwnd_limited && out > l.max_packets_out)
            {
                l.is_cwnd_limited = limited;
                l.max_packets_out = out;
                l.max_packets_seq = self.snd_nxt;
            }
            if sent == 0 {
                return;
            }
        } else {
            if sent == 0 {
                return;
            }
            let l = &mut self.l3;
            if self.snd_una >= l.max_packets_seq || self.rtx.len() as u32 > l.max_packets_out {
                l.max_packets_out = self.rtx.len() as u32;
                l.max_packets_seq = self.snd_nxt;
                l.is_cwnd_limited = limited;
            }
        }
        if !probe_round {
            self.schedule_loss_probe(cx);
        }
    }

    /// A new segment went out (Linux `tcp_event_new_data_sent` and `tcp_write_xmit`'s
    /// accounting): counted for the round and for PRR; a pending early-retransmit or
    /// loss-probe timer gives way to the RTO (RACK's reordering timer stays: 4.10+
    /// `tcp_event_new_data_sent` rearms only from `ICSK_TIME_EARLY_RETRANS` and
    /// `ICSK_TIME_LOSS_PROBE`).
    #[inline]
    pub(super) fn on_new_data_sent(&mut self, cx: &mut Ctx) {
        if !self.l3.active {
            return;
        }
        self.l3.round_open = true;
        self.l3.round_sent += 1;
        self.l3.probe_new = false;
        if matches!(self.ca, CaState::Recovery | CaState::Cwr) {
            self.l3.prr_out += 1;
        }
        if matches!(
            cx.timers.alt,
            Some((_, AltTimer::EarlyRetrans | AltTimer::LossProbe))
        ) {
            self.rearm_rto(cx);
        }
    }

    /// New data waits for cwnd in this round (Linux `tcp_write_xmit`: `is_cwnd_limited`).
    #[inline]
    pub(super) fn on_cwnd_blocked(&mut self) {
        if !self.l3.active {
            return;
        }
        self.l3.round_open = true;
        self.l3.round_cwnd_limited = true;
    }

    /// Linux `tcp_rearm_rto`: the RTO replaces an early-retransmit or loss-probe timer, due one
    /// RTO after the first outstanding segment was sent (or one RTO from now if that is past).
    pub(super) fn rearm_rto(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        cx.timers.alt = None;
        let rto = self.rtt.rto();
        cx.timers.rto = self.rtx.front().map(|h| {
            let at = h.sent_at + rto;
            if at > now {
                cx.timer_until(at)
            } else {
                cx.timer_at(rto)
            }
        });
    }

    // -----------------------------------------------------------------------------------------
    // ACK hooks.

    /// Start of an ACK that is neither old nor beyond snd_nxt (Linux `tcp_ack`): a pending
    /// early-retransmit or loss-probe timer gives way to the RTO; what PRR and TLP compare
    /// with after the ACK.
    #[inline]
    pub(super) fn l3_ack_start(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        let o = cx.o;
        let now = cx.now;
        if !self.l3.active {
            return;
        }
        if cx.timers.alt.is_some() {
            self.rearm_rto(cx);
        }
        if cfg.prr || self.l3.tlp_high_seq.is_some() {
            let sacked = self.sacked_out(o);
            self.l3.prior_unsacked = self.packets_out() - sacked.min(self.packets_out());
            self.l3.prior_sacked = sacked;
            self.l3.prior_dsacks = cx.stats.dsacks_rcvd;
        }
        self.l3.ack_now = now;
    }

    /// Just before the congestion state machine: what `tcp_pause_early_retransmit` looks at.
    #[inline]
    pub(super) fn l3_before_alert(&mut self, cx: &Ctx, ece: bool) {
        if !self.l3.active {
            return;
        }
        self.l3.ack_rto_at = cx.timers.rto;
        self.l3.ack_ece = ece;
    }

    /// End of an ACK (Linux `tcp_ack` after `tcp_fastretrans_alert`): the delayed early
    /// retransmit's timer, `tcp_process_tlp_ack`, and `tcp_schedule_loss_probe` while the RTO
    /// is what is pending.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn l3_ack_end(
        &mut self,
        cx: &mut Ctx,
        ack: u64,
        una_advanced: bool,
        not_dup: bool,
        main_path: bool,
    ) {
        if self.l3.active {
            let flags = (una_advanced, not_dup, main_path);
            self.l3_ack_end_active(cx, ack, flags);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn l3_ack_end_active(
        &mut self,
        cx: &mut Ctx,
        ack: u64,
        (una_advanced, not_dup, main_path): (bool, bool, bool),
    ) {
        let cfg = cx.cfg;
        let o = cx.o;
        if let Some(at) = self.l3.er_pause.take() {
            cx.timers.rto = None;
            cx.timers.alt = Some((cx.timer_until(at), AltTimer::EarlyRetrans));
        }
        if let Some(at) = self.l3.rack.timer.take() {
            cx.timers.rto = None;
            cx.timers.alt = Some((cx.timer_until(at), AltTimer::Rack));
        }
        if let Some(high) = self.l3.tlp_high_seq {
            let sacked_new = self.sacked_out(o) > self.l3.prior_sacked;
            let dsack = cx.stats.dsacks_rcvd > self.l3.prior_dsacks;
            if ack == high && !(una_advanced || not_dup || sacked_new) {
                // The probe's duplicate ACK: the probe itself was redundant, no loss.
                self.l3.tlp_high_seq = None;
            } else if ack > high {
                self.l3.tlp_high_seq = None;
                if !dsack {
                    // The probe repaired a loss: reduce cwnd as in CWR, at once.
                    cx.stats.tlp_recoveries += 1;
                    self.init_cwnd_reduction(cfg, true);
                    if !self.ctl {
                        self.win.cwnd = self.win.ssthresh;
                    }
                    self.cwr_pending = o.ecn;
                    // tcp_try_keep_open.
                    let left = self.sacked_out(o) + self.lost_out() + self.retrans_out();
                    self.ca = if left > 0 || self.rtx.iter().any(|s| s.ever_retrans) {
                        CaState::Disorder
                    } else {
                        CaState::Open
                    };
                    self.high_seq = self.snd_nxt;
                }
            }
        }
        if main_path && cx.timers.rto.is_some() {
            self.schedule_loss_probe(cx);
        }
    }

    // -----------------------------------------------------------------------------------------
    // PRR.

    /// Linux `tcp_init_cwnd_reduction` (entering Recovery from Open or Disorder, CWR, or a
    /// loss shown by TLP): PRR starts counting; with `set_ssthresh` ssthresh is reduced.
    pub(super) fn init_cwnd_reduction(&mut self, cfg: &TcpConfig, set_ssthresh: bool) {
        self.high_seq = self.snd_nxt;
        self.l3.tlp_high_seq = None;
        self.win.cnt = 0;
        self.l3.prior_cwnd = self.win.cwnd;
        self.l3.prr_delivered = 0;
        self.l3.prr_out = 0;
        if set_ssthresh {
            self.win.ssthresh = self.recalc_ssthresh(cfg);
        }
    }

    /// Recovery starts (`tcp_enter_recovery` with `fast_rexmit`): PRR's state, unless it was
    /// started in CWR; the TLP episode ends.
    pub(super) fn prr_enter_recovery(&mut self, from_cwr: bool) {
        self.l3.tlp_high_seq = None;
        self.l3.fast_rexmit = true;
        if !from_cwr {
            self.l3.prior_cwnd = self.win.cwnd;
            self.l3.prr_delivered = 0;
            self.l3.prr_out = 0;
        }
    }

    /// CWR starts (`tcp_enter_cwr` -> `tcp_init_cwnd_reduction`).
    pub(super) fn prr_enter_cwr(&mut self) {
        self.l3.tlp_high_seq = None;
        self.l3.prior_cwnd = self.win.cwnd;
        self.l3.prr_delivered = 0;
        self.l3.prr_out = 0;
    }

    /// Linux `tcp_cwnd_reduction` (RFC 6937 PRR with slow-start reduction bound), on every
    /// ACK in Recovery and CWR: while more than ssthresh is in flight, send
    /// ceil(ssthresh·delivered / prior_cwnd) - out; below it, grow back towards ssthresh by at
    /// most one more than was delivered. The ACK that starts Recovery sends at least one.
    pub(super) fn prr_reduction(&mut self, o: &Negotiated) {
        let unsacked = self.packets_out() - self.sacked_out(o).min(self.packets_out());
        let newly = self.l3.prior_unsacked.saturating_sub(unsacked) as i64;
        // (The prior count is taken once per ACK; later calls in the same ACK add nothing.)
        self.l3.prior_unsacked = unsacked;
        let in_flight = i64::from(self.in_flight(o));
        let l = &mut self.l3;
        l.prr_delivered += newly as u32;
        let ssthresh = i64::from(self.win.ssthresh);
        let (delivered, out) = (i64::from(l.prr_delivered), i64::from(l.prr_out));
        let mut sndcnt = if in_flight > ssthresh {
            let prior = i64::from(l.prior_cwnd.max(1));
            (ssthresh * delivered + prior - 1) / prior - out
        } else {
            (ssthresh - in_flight).min((delivered - out).max(newly) + 1)
        };
        sndcnt = sndcnt.max(i64::from(std::mem::take(&mut l.fast_rexmit)));
        self.win.cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// Linux 6.x `tcp_cong_control` for an algorithm without its own: in CWR or Recovery PRR
    /// (`tcp_cwnd_reduction` with the ACK's `acked_sacked` and newly lost), otherwise, if the
    /// ACK acknowledged data (`tcp_may_raise_cwnd`) and the growth gate lets it, the
    /// algorithm's `cong_avoid` with the segments delivered; the pacing rate follows at the end
    /// of the ACK (`SendState::on_ack`).
    pub(super) fn cong_control_6(
        &mut self,
        cx: &Ctx,
        ack: u64,
        data_acked: bool,
        una_advanced: bool,
        prior_in_flight: u32,
    ) {
        let Some(rs) = self.rate.as_deref().map(|r| r.rs) else {
            return;
        };
        if matches!(self.ca, CaState::Cwr | CaState::Recovery) {
            if cx.cfg.prr {
                self.prr_reduction_6(cx.o, rs.acked_sacked, rs.losses, una_advanced);
            }
        } else if data_acked && self.cwnd_gate(cx.cfg, prior_in_flight) {
            self.cong_avoid_cc(ack, rs.acked_sacked, cx.now);
        }
    }

    /// Linux 5.x+ `tcp_cwnd_reduction(sk, newly_acked_sacked, newly_lost, flag)`: while more
    /// than ssthresh is in flight, ⌈ssthresh · delivered / prior_cwnd⌉ − out; below it, as
    /// much as was delivered (or, if delivery outran sending, that), one more when snd_una
    /// advanced without a new loss, never beyond ssthresh; at least one while nothing has been
    /// sent in the reduction (the fast retransmit).
    pub(super) fn prr_reduction_6(
        &mut self,
        o: &Negotiated,
        newly_acked_sacked: u32,
        newly_lost: u32,
        una_advanced: bool,
    ) {
        if newly_acked_sacked == 0 || self.l3.prior_cwnd == 0 {
            return;
        }
        let in_flight = i64::from(self.in_flight(o));
        let ssthresh = i64::from(self.win.ssthresh);
        let delta = ssthresh - in_flight;
        let l = &mut self.l3;
        l.prr_delivered += newly_acked_sacked;
        let (delivered, out) = (i64::from(l.prr_delivered), i64::from(l.prr_out));
        let mut sndcnt = if delta < 0 {
            let prior = i64::from(l.prior_cwnd);
            (ssthresh * delivered + prior - 1) / prior - out
        } else {
            let mut s = (delivered - out).max(i64::from(newly_acked_sacked));
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            delta.min(s)
        };
        sndcnt = sndcnt.max(i64::from(l.prr_out == 0));
        self.win.cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// Sets the `packets_out - sacked_out` PRR compares the next reduction with.
    pub(super) fn l3_prr_set_prior_unsacked(&mut self, n: u32) {
        self.l3.prior_unsacked = n;
    }

    /// Linux `tcp_end_cwnd_reduction` when Recovery ends: cwnd = ssthresh unless the
    /// reduction was undone.
    pub(super) fn prr_end_recovery(&mut self, cwnd_before: u32) {
        self.win.cwnd = if self.undo_marker.is_some() && self.win.ssthresh < SSTHRESH_INFINITE {
            self.win.ssthresh
        } else {
            cwnd_before
        };
    }

    /// A retransmission went (`tcp_xmit_retransmit_queue` counts it for PRR in Recovery and
    /// CWR).
    #[inline]
    pub(super) fn prr_on_retransmit(&mut self) {
        if self.l3.active && matches!(self.ca, CaState::Recovery | CaState::Cwr) {
            self.l3.prr_out += 1;
        }
    }

    // -----------------------------------------------------------------------------------------
    // Early retransmit.

    /// Linux `tcp_enable_early_retrans`: on, and not with the thin-stream dupack rule or a
    /// changed `dupthresh` (`sysctl_tcp_reordering == 3`).
    #[inline]
    fn do_early_retrans(cfg: &TcpConfig) -> bool {
        cfg.early_retransmit != EarlyRetransmit::Off && !cfg.thin_dupack && cfg.dupthresh == 3
    }

    /// Linux 3.16 `tcp_time_to_recover`'s Trick#6 (RFC 5827 segment-based ER), asked after
    /// every other trigger has said no: no retransmission out, something SACKed (or, without
    /// SACK, duplicate ACKs), fewer than 4 segments out of which at least one is not SACKed,
    /// and no new segment may go now (`tcp_may_send_now`). Returns true to start Recovery now;
    /// with "delayed" it arms the timer instead (`tcp_pause_early_retransmit`: max(srtt/4,
    /// 2 ms), unless the RTO comes first, the ACK has ECE or there is no RTT sample yet).
    #[inline]
    pub(super) fn early_retransmit_due(&mut self, cx: &mut Ctx) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        if cfg.early_retransmit == EarlyRetransmit::Off {
            return false;
        }
        // packets_out first: the scans below then look at 3 segments at most.
        let packets_out = self.packets_out();
        if !Self::do_early_retrans(cfg) || packets_out >= 4 || self.retrans_out() > 0 {
            return false;
        }
        let sacked = if o.sack {
            self.sacked_out(o)
        } else {
            self.dupacks.min(packets_out.saturating_sub(1))
        };
        if sacked == 0 || packets_out < sacked + 1 || packets_out >= 4 || self.may_send_now(cx) {
            return false;
        }
        let pause = match self.rtt.srtt() {
            Some(srtt) if cfg.early_retransmit == EarlyRetransmit::Delayed && !self.l3.ack_ece => {
                let at = self.l3.ack_now + Dur(srtt.0 / 4).max(Dur::from_millis(2));
                self.l3.ack_rto_at.is_some_and(|rto| rto > at).then_some(at)
            }
            _ => None,
        };
        if pause.is_some() {
            self.l3.er_pause = pause;
            return false;
        }
        cx.stats.early_retransmits += 1;
        true
    }

    /// Linux `tcp_may_send_now`: a new segment is written and cwnd, the peer's window and
    /// Nagle let it go now.
    fn may_send_now(&self, cx: &Ctx) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        let unsent = self.unsent();
        if unsent == 0 {
            return self.fin_queued && !self.fin_sent;
        }
        let len = unsent.min(u64::from(o.mss));
        let room = (self.snd_una + u64::from(self.snd_wnd)).saturating_sub(self.snd_nxt);
        if len > room && (!self.rtx.is_empty() || room == 0) {
            return false;
        }
        if len < u64::from(o.mss) && cfg.nagle && !self.rtx.is_empty() {
            return false;
        }
        self.cwnd_allows_new(cx)
    }

    /// The delayed early-retransmit timer expired (Linux `tcp_resume_early_retransmit`):
    /// the RTO is rearmed, Recovery starts and the head is retransmitted.
    pub(super) fn on_early_retrans_timer(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        self.rearm_rto(cx);
        if !Self::do_early_retrans(cfg) || self.rtx.is_empty() {
            return;
        }
        cx.stats.early_retransmits += 1;
        self.enter_recovery(cx, true);
        // Linux does not call tcp_cwnd_reduction here: the first ACK in Recovery does, as a
        // plain one.
        self.l3.fast_rexmit = false;
    }

    // -----------------------------------------------------------------------------------------
    // Tail loss probe.

    /// Linux 3.16 `tcp_schedule_loss_probe`: with SACK, an RTT sample, data out and the Open
    /// state, and unless cwnd would let unsent data go, the RTO is replaced by a probe timer:
    /// PTO = 2·srtt; with one segment out at least 1.5·srtt + 200 ms (a delayed ACK); at least
    /// 10 ms; never after the RTO would have fired.
    pub(super) fn schedule_loss_probe(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        let o = cx.o;
        let now = cx.now;
        if self.k6 {
            self.schedule_loss_probe_6(cx);
            return;
        }
        if !cfg.tlp || !o.sack || self.rtx.is_empty() || self.ca != CaState::Open {
            return;
        }
        let Some(rto_at) = cx.timers.rto else {
            return; // an early-retransmit or probe timer is pending, or none at all
        };
        let Some(srtt) = self.rtt.srtt() else {
            return;
        };
        let send_head = self.unsent() > 0 || (self.fin_queued && !self.fin_sent);
        if self.win.cwnd > self.in_flight(o) && send_head {
            return;
        }
        let mut timeout = Dur(srtt.0 * 2);
        if self.rtx.len() == 1 {
            timeout = timeout.max(Dur(srtt.0 + srtt.0 / 2) + TLP_DELACK_MAX);
        }
        timeout = timeout.max(Dur::from_millis(10));
        let mut at = now + timeout;
        if at > rto_at && rto_at > now {
            at = rto_at;
        }
        cx.timers.rto = None;
        cx.timers.alt = Some((cx.timer_until(at), AltTimer::LossProbe));
    }

    /// Linux 6.x `tcp_schedule_loss_probe`: in Open or CWR, with SACK and data out, PTO =
    /// 2·srtt + 2 ms (one segment out: + `rto_min`, for a delayed ACK), 1 s without a sample,
    /// in whole jiffies rounded up (6.6+: the 2 ms `TCP_TIMEOUT_MIN_US` added before the
    /// rounding), never after the RTO.
    fn schedule_loss_probe_6(&mut self, cx: &mut Ctx) {
        let (cfg, o, now) = (cx.cfg, cx.o, cx.now);
        if !cfg.tlp
            || !o.sack
            || self.rtx.is_empty()
            || !matches!(self.ca, CaState::Open | CaState::Cwr)
        {
            return;
        }
        let Some(rto_at) = cx.timers.rto else {
            return;
        };
        let timeout = match self.rtt.srtt() {
            Some(srtt) => {
                let extra = if self.rtx.len() == 1 {
                    cfg.rto_min
                } else {
                    Dur::from_millis(2)
                };
                jiffies_up(Dur(srtt.0 * 2) + extra, cfg.hz)
            }
            None => Dur::from_secs(1),
        };
        let mut at = now + timeout;
        if rto_at > now {
            at = at.min(now + jiffies_up(rto_at.saturating_since(now), cfg.hz));
        }
        cx.timers.rto = None;
        cx.timers.alt = Some((cx.timer_until(at), AltTimer::LossProbe));
    }

    /// The probe timer expired (Linux `tcp_send_loss_probe`): new data goes if any is written
    /// (past cwnd and Nagle, within the peer's window); otherwise, unless a probe is already
    /// out, the last segment is sent again and `tlp_high_seq` remembers snd_nxt. The RTO is
    /// rearmed from now.
    pub(super) fn on_loss_probe_timer(&mut self, cx: &mut Ctx) {
        if self.unsent() > 0 || (self.fin_queued && !self.fin_sent) {
            self.l3.probe_new = true;
            self.l3.probe_round = true;
            self.l3.round_open = true;
            cx.stats.loss_probes += 1;
        } else if self.l3.tlp_high_seq.is_none() && !self.rtx.is_empty() {
            self.l3.probe_rtx = true;
            self.l3.tlp_high_seq = Some(self.snd_nxt);
            cx.stats.loss_probes += 1;
        }
        cx.timers.rto = (!self.rtx.is_empty()).then(|| cx.timer_at(self.rtt.rto()));
    }

    /// The probe retransmission the timer asked for: the last segment, sent again without the
    /// marks of a retransmission (Linux uses `__tcp_retransmit_skb`, which leaves
    /// `retrans_out` and the RETRANS tag alone).
    #[inline]
    pub(super) fn loss_probe_segment(&mut self, cx: &mut Ctx) -> Option<Outgoing> {
        let now = cx.now;
        if !self.l3.probe_rtx {
            return None;
        }
        self.l3.probe_rtx = false;
        let s = self.rtx.back_mut()?;
        s.sent_at = now;
        let (start, payload, fin) = (s.start, s.payload(), s.fin);
        cx.stats.retransmits += 1;
        if self.pace.on {
            self.pace_sent(cx, payload, 1);
        }
        if self.rate.is_some() {
            let last = self.rtx.len() - 1;
            self.rate_sent(cx, Some(last), 1);
        }
        // 6.x: one segment, pushed only where a write ended (`gso.rs`).
        let psh = payload > 0 && (!self.k6 || self.gso.pushed(start + u64::from(payload)));
        self.gso.end_round();
        let flags = ACK | if fin { FIN } else { 0 } | if psh { PSH } else { 0 };
        Some(Outgoing {
            flags,
            seq: start,
            payload,
            ect: false,
        })
    }
}
