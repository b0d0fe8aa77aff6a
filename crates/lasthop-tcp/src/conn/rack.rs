//! RACK, time-based loss detection (RFC 8985; Linux 4.10+ `net/ipv4/tcp_recovery.c`): a
//! segment is lost once a segment sent after it has been delivered (ACKed or SACKed) and more
//! than RACK.rtt + the reordering window has passed since it was sent. It also finds lost
//! retransmissions. The reordering window is min_RTT/4 (at most srtt) in Open and Disorder and
//! 0 in Recovery and Loss or once `dupthresh` segments are SACKed, as RFC 8985 §6.2 and Linux
//! 4.18+ `tcp_rack_reo_wnd` set it when no reordering has been seen (the model never sees
//! any: it has no D-SACK reordering detection). Segments still inside the window arm the
//! reordering timer (Linux `ICSK_TIME_REO_TIMEOUT`, `tcp_rack_reo_timeout`).
//!
//! RACK marks segments lost in addition to the model's SACK rules (RFC 3517 or FACK and the
//! duplicate-ACK trigger), as Linux 4.10–4.17 kept `dupthresh` beside it.

use super::*;

/// RACK's state (Linux `tp->rack`, and the windowed min RTT it uses).
#[derive(Clone, Debug, Default)]
pub(super) struct Rack {
    /// Send time and end of the most recently sent segment delivered (RACK.xmit_ts,
    /// RACK.end_seq).
    xmit: Option<(Time, u64)>,
    /// RACK.rtt: the RTT of the last segment `tcp_rack_advance` took (not always the one
    /// at RACK.xmit_ts, see `rack_update`).
    rtt: Dur,
    /// The smallest RTT of a delivered segment never retransmitted: the min RTT when the
    /// connection keeps no rate samples (else Linux's `tcp_min_rtt`, the handshake's sample
    /// included, from `rate.rs`).
    min_rtt: Option<Dur>,
    /// Segments this ACK SACKed for the first time (send time, end, ever retransmitted),
    /// gathered by the SACK tagging for `rack_update`.
    pub(super) sacked_now: Vec<(Time, u64, bool)>,
    /// Something was delivered since the last detection (`rack.advanced`).
    advanced: bool,
    /// The reordering timer the ACK being processed asks for.
    pub(super) timer: Option<Time>,
}

/// RFC 8985 `RACK_sent_after`: sent later, or at the same time with a higher sequence.
#[inline]
fn sent_after(t1: Time, end1: u64, t2: Time, end2: u64) -> bool {
    t1 > t2 || (t1 == t2 && end1 > end2)
}

impl SendState {
    /// RACK_update as Linux does it (`tcp_rack_advance`, once per newly delivered skb): first
    /// the segments this ACK SACKed, in sequence order (`tcp_sacktag_write_queue` sorts the
    /// blocks), then those it cumulatively ACKed that were not SACKed before
    /// (`tcp_clean_rtx_queue`). Each sets RACK.rtt to its own RTT, unless it was retransmitted
    /// and its RTT is below the min RTT (the ACK may be for the original); RACK.xmit_ts moves
    /// only to a segment sent later. So RACK.rtt is the RTT of the last segment taken, not of
    /// the newest one, as RFC 8985 has it: an ACK that SACKs segment 50 and cumulatively ACKs
    /// 48, sent 144 ms before it with 49, leaves RACK.rtt at 48's RTT and gives 49 the whole
    /// reordering window (a real 6.18 sender armed its reordering timer 39 jiffies out on such
    /// an ACK, docs/tcp-model.md). Detection runs only when something was taken
    /// (`rack.advanced`).
    #[inline]
    pub(super) fn rack_update(&mut self, cx: &Ctx, ack: u64) {
        let cfg = cx.cfg;
        let now = cx.now;
        if cfg.rack {
            self.rack_update_on(ack, now);
        }
    }

    #[inline(never)]
    fn rack_update_on(&mut self, ack: u64, now: Time) {
        let linux_min = self.linux_min_rtt();
        let r = &mut self.l3.rack;
        let mut sacked = std::mem::take(&mut r.sacked_now);
        sacked.sort_unstable_by_key(|&(_, end, _)| end);
        let cum = self
            .rtx
            .iter()
            .take_while(|s| s.end <= ack)
            .filter(|s| !s.sacked())
            .map(|s| (s.sent_at, s.end, s.ever_retrans));
        for (t, end, ever_retrans) in sacked.iter().copied().chain(cum) {
            let rtt = now.saturating_since(t);
            if !ever_retrans && r.min_rtt.is_none_or(|m| rtt < m) {
                r.min_rtt = Some(rtt);
            }
            if ever_retrans && linux_min.or(r.min_rtt).is_some_and(|m| rtt < m) {
                continue;
            }
            r.advanced = true;
            r.rtt = rtt;
            if r.xmit.is_none_or(|(xt, xe)| sent_after(t, end, xt, xe)) {
                r.xmit = Some((t, end));
            }
        }
        sacked.clear();
        r.sacked_now = sacked;
    }

    /// Linux's `tcp_min_rtt` when the connection keeps rate samples (the 6.18 profile).
    fn linux_min_rtt(&self) -> Option<Dur> {
        let m = self.rate.as_deref()?.min_rtt_us();
        (m != u32::MAX).then(|| Dur::from_micros(u64::from(m)))
    }

    /// The reordering window (RFC 8985 §6.2 without reordering seen).
    fn rack_reo_wnd(&self, cx: &Ctx) -> Dur {
        let cfg = cx.cfg;
        let o = cx.o;
        if matches!(self.ca, CaState::Recovery | CaState::Loss)
            || self.sacked_out(o) >= cfg.dupthresh
        {
            return Dur::ZERO;
        }
        let srtt = self.rtt.srtt().unwrap_or(Dur::ZERO);
        match self.linux_min_rtt().or(self.l3.rack.min_rtt) {
            Some(m) => Dur(m.0 / 4).min(srtt),
            None => srtt,
        }
    }

    /// RACK_detect_loss (Linux `tcp_rack_detect_loss`), when something was delivered: marks
    /// lost every segment sent before RACK.xmit_ts and not delivered for RACK.rtt +
    /// reo_wnd, a retransmission included (it is then lost again); returns the time until the
    /// next one would be (0: none waits).
    fn rack_detect_loss(&mut self, cx: &Ctx) -> Dur {
        let now = cx.now;
        let Some((xt, xe)) = self.l3.rack.xmit else {
            return Dur::ZERO;
        };
        let reo_wnd = self.rack_reo_wnd(cx);
        let rtt = self.l3.rack.rtt;
        let mut wait = Dur::ZERO;
        for s in self.rtx.iter_mut() {
            if s.sacked() || (s.lost() && !s.retrans()) || !sent_after(xt, xe, s.sent_at, s.end) {
                continue;
            }
            let due = s.sent_at + rtt + reo_wnd;
            if due <= now {
                s.set_lost(&mut self.tally, true);
                s.set_retrans(&mut self.tally, false);
                self.lost_total += 1;
            } else {
                wait = wait.max(due.saturating_since(now));
            }
        }
        wait
    }

    /// Linux `tcp_rack_mark_lost` in `tcp_fastretrans_alert`: detection when RACK advanced; the
    /// reordering timer is asked for (armed at the end of the ACK). Returns whether any
    /// segment is marked lost (Linux's "Trick#1" then starts Recovery).
    #[inline]
    pub(super) fn rack_mark_lost(&mut self, cx: &Ctx) -> bool {
        let cfg = cx.cfg;
        let now = cx.now;
        if !cfg.rack || !std::mem::take(&mut self.l3.rack.advanced) {
            return false;
        }
        let wait = self.rack_detect_loss(cx);
        if wait > Dur::ZERO {
            self.l3.rack.timer = Some(if self.k6 {
                // 6.6+ ("tcp: fix excessive TLP and RACK timeouts from HZ rounding"):
                // `usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US)`, 2 ms then whole jiffies.
                now + jiffies_up(wait + Dur::from_millis(2), cfg.hz)
            } else {
                now + wait
            });
        }
        self.lost_out() > 0 && self.rtx.iter().any(|s| s.lost() && !s.retrans())
    }

    /// The reordering timer expired (Linux `tcp_rack_reo_timeout`): detection again; if it
    /// found a loss outside Recovery, Recovery starts (its ACK-less cwnd reduction included);
    /// then the RTO or a new reordering timer.
    pub(super) fn on_rack_timer(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        let o = cx.o;
        let prior = self.in_flight(o);
        let lost = self.lost_total;
        let wait = self.rack_detect_loss(cx);
        if self.k6 {
            // 6.x `tcp_rack_reo_timeout`: Recovery with `tcp_cwnd_reduction(sk, 1, newly
            // lost, 0)` unless the algorithm has its own control, then the RTO (the wait
            // found is not used).
            if self.in_flight(o) != prior && self.ca != CaState::Recovery {
                cx.stats.rack_recoveries += 1;
                self.enter_recovery(cx, false);
                if cfg.prr && !self.ctl {
                    let newly_lost = (self.lost_total - lost) as u32;
                    self.prr_reduction_6(o, 1, newly_lost, false);
                }
            }
            self.rearm_rto(cx);
            return;
        }
        if self.in_flight(o) != prior && self.ca != CaState::Recovery {
            cx.stats.rack_recoveries += 1;
            self.enter_recovery(cx, false);
            if cfg.prr {
                // `tcp_cwnd_reduction(sk, 1, 0)`: one segment counted as delivered.
                let unsacked = self.packets_out() - self.sacked_out(o).min(self.packets_out());
                self.l3_prr_set_prior_unsacked(unsacked + 1);
                self.prr_reduction(o);
            }
        }
        if wait > Dur::ZERO {
            cx.timers.rto = None;
            cx.timers.alt = Some((cx.timer_at(wait), AltTimer::Rack));
        } else {
            self.rearm_rto(cx);
        }
    }
}
