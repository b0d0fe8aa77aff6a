//! Sender side: ACK processing, congestion control and loss recovery, in Linux 2.4's structure
//! (`tcp_ack`, `tcp_fastretrans_alert`, `tcp_enter_loss`, undo, F-RTO, ECN's CWR).

use super::*;

impl Connection {
    /// Sender side of an incoming ACK (Linux `tcp_ack`).
    pub(super) fn on_ack(&mut self, now: Time, seg: &Segment) {
        let base = self.iss.wrapping_add(self.snd_una as u32);
        let Some(ack) = unwrap(base, self.snd_una, seg.ack) else {
            return;
        };
        if ack > self.snd_nxt {
            self.ack_now = true; // acknowledges something never sent
            return;
        }
        if ack < self.snd_una {
            if self.sack_ok {
                self.tag_sacks(seg, ack);
            }
            return;
        }
        self.ack_ecr = seg.ts.filter(|_| self.ts_ok).map(|(_, ecr)| ecr);
        let prior_una = self.snd_una;
        let mut prior_in_flight = self.in_flight();
        let prior_packets = self.packets_out();
        let wnd = u32::from(seg.window) << self.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        self.snd_wnd = wnd;
        let mut data_lost = false;
        if self.sack_ok {
            data_lost = self.tag_sacks(seg, ack);
            if self.linux24() {
                // Linux `tcp_ack` takes prior_in_flight after `tcp_sacktag_write_queue`.
                prior_in_flight = self.in_flight();
            }
        }

        let mut acked_pkts = 0u32;
        if ack > self.snd_una {
            let mut first_sent: Option<Time> = None;
            let mut retrans_acked = false;
            while self.rtx.front().is_some_and(|s| s.end <= ack) {
                let s = self.rtx.pop_front().expect("front checked");
                acked_pkts += 1;
                if s.ever_retrans {
                    retrans_acked = true;
                } else if first_sent.is_none() {
                    first_sent = Some(s.sent_at);
                }
                if s.fin {
                    self.fin_acked = true;
                }
            }
            self.snd_una = ack;
            self.dupacks = 0;
            self.lt_sent = 0;
            if acked_pkts > 0 {
                self.retransmits = 0;
            }
            // RTT sample: from the echoed timestamp when timestamps are on, otherwise from
            // the oldest newly acknowledged segment, unless a retransmitted one is among
            // them (Karn; Linux FLAG_RETRANS_DATA_ACKED).
            let ts_sample = match seg.ts {
                Some((_, ecr)) if self.ts_ok && ecr != 0 && acked_pkts > 0 => {
                    Some(Dur(u64::from(ms_stamp(now).wrapping_sub(ecr)) * 1_000_000))
                }
                _ => None,
            };
            let m = if self.ts_ok {
                ts_sample
            } else {
                first_sent
                    .filter(|_| !retrans_acked)
                    .map(|t| now.saturating_since(t))
            };
            if let Some(m) = m {
                self.rtt.sample(m, self.snd_una, self.snd_nxt);
            }
            // Linux restarts the timer whenever something is acknowledged: from now (2.4), or
            // (2.2/2.3, outside RTO recovery) from when the oldest outstanding segment was sent.
            self.rto_deadline = self.rtx.front().map(|head| {
                if self.cfg.rto_timer == RtoTimer::OldestSent && self.retransmits == 0 {
                    (head.sent_at + self.rtt.rto()).max(now)
                } else {
                    now + self.rtt.rto()
                }
            });
        }

        let is_dupack = ack == prior_una
            && seg.payload == 0
            && !seg.has(FIN)
            && !window_changed
            && prior_packets > 0;
        if is_dupack {
            self.stats.dupacks_rcvd += 1;
        }
        let data_acked = acked_pkts > 0;
        let ece = self.ecn_ok && seg.has(ECE);
        let flags = AckFlags {
            acked_pkts,
            is_dupack,
            ece,
            dubious: !(seg.payload > 0 || window_changed || data_acked)
                || !seg.sacks.is_empty()
                || ece
                || self.ca != CaState::Open,
            data_lost,
            head_timedout: self.cfg.head_timedout
                && self
                    .rtx
                    .front()
                    .is_some_and(|h| now.saturating_since(h.sent_at) > self.rtt.rto()),
            now,
        };
        if ece {
            self.stats.ece_rcvd += 1;
        }
        // Linux tcp_may_raise_cwnd: not in Recovery or CWR, and with ECE only in slow start.
        let may_raise = (!ece || self.cwnd < self.ssthresh)
            && !matches!(self.ca, CaState::Recovery | CaState::Cwr);
        let frto_active = self.frto > 0;
        if prior_packets == 0 {
            // Nothing was outstanding: Linux (`no_queue`) leaves the congestion state alone.
        } else if frto_active {
            self.frto_ack(data_acked, is_dupack);
            self.fastretrans_alert(flags);
        } else {
            if data_acked && prior_in_flight >= self.cwnd && may_raise {
                self.cong_avoid();
            }
            self.fastretrans_alert(flags);
        }

        if self.fin_acked {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => self.set_closed(),
                _ => {}
            }
        }
    }

    /// Marks SACKed segments. The first block is a D-SACK when it lies below the cumulative
    /// ACK or inside the second block (RFC 2883); it marks nothing. Returns whether a block
    /// reaches above `high_seq` (Linux `FLAG_DATA_LOST`, "Event B").
    pub(super) fn tag_sacks(&mut self, seg: &Segment, ack: u64) -> bool {
        let base = self.iss.wrapping_add(self.snd_una as u32);
        let linux24 = self.linux24();
        let mut data_lost = false;
        // Linux `lost_retrans`: the highest SACK end beyond the snd_nxt of a retransmission.
        let mut lost_retrans = 0u64;
        for (i, &(l, r)) in seg.sacks.iter().enumerate() {
            let (Some(l), Some(r)) = (unwrap(base, self.snd_una, l), unwrap(base, self.snd_una, r))
            else {
                continue;
            };
            if r <= l || r > self.snd_nxt {
                continue;
            }
            data_lost |= r > self.high_seq;
            if i == 0 {
                let inside_next = seg.sacks.get(1).is_some_and(|&(l2, r2)| {
                    let l2 = unwrap(base, self.snd_una, l2);
                    let r2 = unwrap(base, self.snd_una, r2);
                    matches!((l2, r2), (Some(l2), Some(r2)) if l2 <= l && r <= r2)
                });
                if r <= ack || inside_next {
                    self.stats.dsacks_rcvd += 1;
                    self.count_dsack(l, r);
                    continue;
                }
            }
            for s in self.rtx.iter_mut() {
                if s.start >= r {
                    break;
                }
                if linux24 && s.retrans && r > s.rtx_nxt {
                    lost_retrans = lost_retrans.max(r);
                }
                if !s.sacked && s.start >= l && s.end <= r {
                    s.sacked = true;
                    // Linux: a SACKed retransmission stays in flight ("S|R") unless the
                    // original was marked lost.
                    if s.lost || !linux24 {
                        s.retrans = false;
                    }
                    s.lost = false;
                }
            }
        }
        // Linux "Event C": a retransmission is lost when data sent `dupthresh` segments after
        // it has been SACKed.
        if lost_retrans > 0 && self.ca == CaState::Recovery {
            let beyond = u64::from(self.cfg.dupthresh) * u64::from(self.mss);
            for s in self.rtx.iter_mut() {
                if s.start > lost_retrans {
                    break;
                }
                if s.retrans && lost_retrans > s.rtx_nxt && lost_retrans >= s.rtx_nxt + beyond {
                    s.retrans = false;
                    if !s.sacked {
                        s.lost = true;
                    }
                }
            }
        }
        data_lost
    }

    fn linux24(&self) -> bool {
        self.cfg.sack_loss_marking == SackLossMarking::Linux24 && self.sack_ok
    }

    /// Linux `fackets_out`: segments from the head up to the highest SACKed one.
    pub(super) fn fackets_out(&self) -> u32 {
        self.rtx
            .iter()
            .rposition(|s| s.sacked)
            .map_or(0, |i| i as u32 + 1)
    }

    /// Linux `tcp_mark_head_lost(sk, tp, packets, high_seq)`: of the first `packets` segments,
    /// up to `high_seq`, those with no tag (not SACKed, lost or retransmitted) are lost.
    fn mark_head_untagged_lost(&mut self, packets: u32) {
        let high = self.high_seq;
        for s in self.rtx.iter_mut().take(packets as usize) {
            if s.end > high {
                break;
            }
            if !s.sacked && !s.lost && !s.retrans {
                s.lost = true;
            }
        }
    }

    /// A D-SACK for [l, r): a retransmission that was not needed (Linux `tcp_sacktag_write_queue`,
    /// including its "dumb counting" for data already acknowledged).
    pub(super) fn count_dsack(&mut self, l: u64, r: u64) {
        let Some(marker) = self.undo_marker else {
            return;
        };
        if r <= self.snd_una {
            if r > marker {
                self.undo_retrans -= 1;
            }
            return;
        }
        let n = self
            .rtx
            .iter()
            .filter(|s| s.ever_retrans && s.start >= l && s.end <= r && s.end > marker)
            .count();
        self.undo_retrans -= n as i64;
    }

    /// Linux `tcp_may_undo`: every retransmission was D-SACKed, or the ACK echoes a timestamp
    /// older than the first retransmission (`tcp_packet_delayed`, Eifel-like).
    pub(super) fn may_undo(&self) -> bool {
        if !self.cfg.undo || self.undo_marker.is_none() {
            return false;
        }
        let delayed = match self.retrans_stamp {
            None => true,
            Some(stamp) => self
                .ack_ecr
                .is_some_and(|e| e != 0 && (e.wrapping_sub(stamp) as i32) < 0),
        };
        self.undo_retrans <= 0 || delayed
    }

    /// Linux `tcp_undo_cwnd`.
    pub(super) fn undo_cwnd(&mut self, restore_ssthresh: bool) {
        self.stats.undos += 1;
        if self.prior_ssthresh > 0 {
            self.cwnd = self.cwnd.max(self.ssthresh.saturating_mul(2));
            // (Linux: the doubled reduced ssthresh approximates the cwnd before the loss.)
            if restore_ssthresh && self.prior_ssthresh > self.ssthresh {
                self.ssthresh = self.prior_ssthresh;
            }
        } else {
            self.cwnd = self.cwnd.max(self.ssthresh);
        }
        self.undo_marker = None;
    }

    /// On a full ACK in Recovery or Loss (Linux `tcp_try_undo_recovery`).
    pub(super) fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd(true);
        }
    }

    /// On each ACK in Loss (Linux `tcp_try_undo_loss`): a spurious RTO stops go-back-N.
    pub(super) fn try_undo_loss(&mut self) -> bool {
        if !self.may_undo() {
            return false;
        }
        for s in self.rtx.iter_mut() {
            s.lost = false;
        }
        self.undo_cwnd(true);
        self.retransmits = 0;
        self.ca = CaState::Open;
        true
    }

    /// On a partial ACK in Recovery (Linux `tcp_try_undo_partial`): the hole was filled by a
    /// delayed original. ssthresh is kept.
    pub(super) fn try_undo_partial(&mut self) -> bool {
        if !self.may_undo() {
            return false;
        }
        if self.retrans_out() == 0 {
            self.retrans_stamp = None;
        }
        self.undo_cwnd(false);
        true
    }

    /// In Disorder (Linux `tcp_try_undo_dsack`).
    pub(super) fn try_undo_dsack(&mut self) {
        if self.cfg.undo && self.undo_marker.is_some() && self.undo_retrans <= 0 {
            self.undo_cwnd(true);
        }
    }

    /// F-RTO (draft-sarolahti-tsvwg-tcp-frto / RFC 4138 §2.1, basic algorithm, as seeds 000 and
    /// 002 describe it): after the RTO retransmission, two ACKs that advance the window mean
    /// the RTO was spurious: continue with new data and cwnd = ssthresh. A duplicate ACK means
    /// it was genuine: go back to conventional recovery.
    /// Bytes written and not yet sent.
    pub(super) fn unsent(&self) -> u64 {
        (self.app_bytes + 1).saturating_sub(self.snd_nxt)
    }

    pub(super) fn frto_ack(&mut self, data_acked: bool, is_dupack: bool) {
        let unsent = self.unsent();
        match self.frto {
            1 if data_acked => {
                if self.snd_una >= self.high_seq {
                    self.frto = 0; // everything acknowledged: Loss simply ends
                } else if unsent == 0 {
                    self.frto_conventional(None);
                } else {
                    // Step 2b: let two new segments out.
                    self.frto = 2;
                    self.cwnd = self.in_flight() + 2;
                }
            }
            1 if is_dupack => self.frto_conventional(None),
            2 if data_acked => {
                // Step 3b: spurious. No undo: the halved ssthresh stays (seed 000 A.2.5).
                self.frto = 0;
                self.stats.spurious_rtos += 1;
                for s in self.rtx.iter_mut() {
                    s.lost = false;
                }
                self.cwnd = self.ssthresh;
                self.retransmits = 0;
                self.ca = CaState::Open;
            }
            2 if is_dupack => self.frto_conventional(Some(3)),
            _ => {}
        }
    }

    /// F-RTO gives up: every segment sent before the RTO and not SACKed is lost (go-back-N).
    pub(super) fn frto_conventional(&mut self, cwnd: Option<u32>) {
        self.frto = 0;
        let high = self.high_seq;
        for s in self.rtx.iter_mut() {
            if !s.sacked && !s.retrans && s.end <= high {
                s.lost = true;
            }
        }
        if let Some(c) = cwnd {
            self.cwnd = c;
        }
    }

    /// Linux `tcp_fastretrans_alert` with rate halving off.
    pub(super) fn fastretrans_alert(&mut self, f: AckFlags) {
        let (data_acked, acked_pkts, is_dupack, ece) =
            (f.data_acked(), f.acked_pkts, f.is_dupack, f.ece);
        if self.ca == CaState::Open {
            self.retrans_stamp = None;
        }
        if ece {
            self.prior_ssthresh = 0; // a reduction the network asked for is never undone
        }
        let th = self.cfg.dupthresh;
        if self.linux24()
            && f.data_lost
            && self.snd_una < self.high_seq
            && self.ca != CaState::Open
            && self.fackets_out() > th
        {
            // "Event B": data sent after this episode began is SACKed, so every hole below
            // the highest SACK but `dupthresh` is lost.
            self.mark_head_untagged_lost(self.fackets_out() - th);
        }
        match self.ca {
            CaState::Loss => {
                if self.snd_una >= self.high_seq {
                    self.retransmits = 0;
                    self.try_undo_recovery();
                    self.ca = CaState::Open;
                } else if !self.try_undo_loss() {
                    self.moderate_cwnd();
                    return; // keep retransmitting in slow start
                }
            }
            CaState::Recovery => {
                if self.snd_una >= self.high_seq {
                    self.try_undo_recovery();
                    // Full ACK: Linux tcp_complete_cwr, or seed 001's FlightSize + 1.
                    self.cwnd = match self.cfg.recovery_exit {
                        RecoveryExit::Ssthresh => self.cwnd.min(self.ssthresh),
                        RecoveryExit::FlightPlusOne => self.packets_out() + 1,
                    };
                    self.ca = CaState::Open;
                    self.reno_sacked = 0;
                } else {
                    let mut undone_partial = false;
                    if data_acked {
                        let undone = self.try_undo_partial();
                        undone_partial = undone;
                        // Partial ACK (RFC 2582): without SACK the next hole is the head.
                        if !self.sack_ok {
                            self.reno_sacked = self
                                .reno_sacked
                                .saturating_sub(acked_pkts.saturating_sub(1));
                            if !undone {
                                self.mark_head_lost();
                            }
                        }
                    } else if is_dupack && !self.sack_ok {
                        self.reno_sacked =
                            (self.reno_sacked + 1).min(self.packets_out().saturating_sub(1));
                    }
                    if self.linux24() {
                        // `tcp_update_scoreboard` runs on a duplicate ACK, or on a partial ACK
                        // that `tcp_try_undo_partial` calls "failed" (fackets_out > dupthresh).
                        let dup = if data_acked {
                            !undone_partial && self.fackets_out() > th
                        } else {
                            is_dupack
                        };
                        if dup || f.head_timedout {
                            self.mark_head_untagged_lost(1);
                        }
                    } else if self.sack_ok {
                        self.mark_lost_by_sack();
                    }
                    if f.head_timedout {
                        self.mark_timed_out_lost(f.now);
                    }
                    self.cwnd_down();
                    return;
                }
            }
            CaState::Cwr => {
                // Linux holds CWR until something above high_seq is acknowledged, so that the
                // CWR flag has reached the receiver.
                if self.snd_una > self.high_seq {
                    self.cwnd = self.cwnd.min(self.ssthresh);
                    self.ca = CaState::Open;
                }
            }
            CaState::Disorder => self.try_undo_dsack(),
            CaState::Open => {}
        }
        // Open, Disorder or CWR.
        if is_dupack {
            self.dupacks += 1;
        }
        if self.time_to_recover() || (f.head_timedout && f.dubious) {
            self.enter_recovery(is_dupack || f.head_timedout);
            if f.head_timedout {
                self.mark_timed_out_lost(f.now);
            }
            self.cwnd_down();
        } else if ece && self.ca != CaState::Cwr {
            self.enter_cwr();
            self.cwnd_down();
        } else if self.ca == CaState::Cwr {
            self.cwnd_down();
        } else {
            // Linux tcp_try_to_open.
            self.ca = if self.dupacks > 0 || self.sacked_out() > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            if f.dubious {
                self.moderate_cwnd();
            }
        }
    }

    /// Linux `tcp_moderate_cwnd`: at most `max_burst` segments leave on one ACK.
    pub(super) fn moderate_cwnd(&mut self) {
        if self.cfg.max_burst > 0 {
            self.cwnd = self.cwnd.min(self.in_flight() + self.cfg.max_burst);
        }
    }

    /// Linux 2.4 `tcp_cwnd_down` (rate halving), on every ACK in Recovery and CWR: one segment
    /// less per two ACKs, down to ssthresh/2, and never more than in_flight + 1.
    pub(super) fn cwnd_down(&mut self) {
        if !self.cfg.rate_halving {
            // The IIP patch's "no rate halving" (seed 000): cwnd fell to ssthresh at entry, and
            // with `flight_cap` the last line of `tcp_cwnd_down` still applies.
            if self.cfg.flight_cap {
                self.cwnd = self.cwnd.min(self.in_flight() + 1).max(1);
            }
            return;
        }
        let decr = self.cwnd_cnt + 1;
        self.cwnd_cnt = decr & 1;
        let decr = decr >> 1;
        if decr > 0 && self.cwnd > self.ssthresh / 2 {
            self.cwnd -= decr;
        }
        self.cwnd = self.cwnd.min(self.in_flight() + 1).max(1);
    }

    /// ECN echo (Linux `tcp_enter_cwr`, RFC 3168 §6.1.2): halve once per window. With rate
    /// halving off, cwnd drops to ssthresh at once.
    pub(super) fn enter_cwr(&mut self) {
        self.stats.ecn_reductions += 1;
        self.prior_ssthresh = 0;
        self.ssthresh = self.recalc_ssthresh();
        if !self.cfg.rate_halving {
            self.cwnd = self.cwnd.min(self.ssthresh);
        }
        self.cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.cwr_pending = true;
        self.ca = CaState::Cwr;
    }

    // -----------------------------------------------------------------------------------------
    // Retransmission timeout and the scoreboard.

    pub(super) fn on_rto(&mut self, now: Time) {
        match self.state {
            State::SynSent | State::SynRcvd => {
                let limit = if self.state == State::SynSent {
                    self.cfg.syn_retries
                } else {
                    self.cfg.synack_retries
                };
                if self.syn_retries >= limit {
                    self.abort(AbortReason::HandshakeTimeout);
                    return;
                }
                self.syn_retries += 1;
                self.syn_pending = true;
                self.rtt.backoff();
                self.rto_deadline = Some(now + self.rtt.rto());
            }
            State::Closed | State::TimeWait => {}
            _ if self.rtx.is_empty() => {}
            _ => {
                if self.retransmits >= self.cfg.retries2 {
                    self.abort(AbortReason::Timeout);
                    return;
                }
                // F-RTO only for a first timeout, not when already recovering from one
                // (RFC 4138 §2.1 step 1).
                let frto = self.cfg.frto && self.ca != CaState::Loss;
                self.enter_loss();
                if frto {
                    // Only the first segment is retransmitted until two ACKs have been seen.
                    for s in self.rtx.iter_mut().skip(1) {
                        s.lost = false;
                    }
                    self.frto = 1;
                }
                // As in Linux, the thin-stream test comes after tcp_enter_loss (so the first
                // slow start has ended by then).
                let thin = self.is_thin();
                // The RTO retransmission goes whatever the window says (Linux
                // tcp_retransmit_timer retransmits the head itself).
                self.force_head_rtx = true;
                if self.cfg.thin_linear_timeouts
                    && thin
                    && self.state == State::Established
                    && self.retransmits <= 6
                {
                    self.rtt.unbacked(); // linear timeouts (TCP_THIN_LINEAR_RETRIES = 6)
                } else {
                    self.rtt.backoff();
                }
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        }
    }

    /// RTO: go-back-N in slow start (Linux `tcp_enter_loss`). Every segment not SACKed is
    /// marked lost, so retransmissions precede new data; ssthresh is reduced only once for a
    /// run of back-to-back expiries.
    pub(super) fn enter_loss(&mut self) {
        self.stats.rtos += 1;
        if matches!(self.ca, CaState::Open | CaState::Disorder)
            || self.snd_una == self.high_seq
            || (self.ca == CaState::Loss && self.retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.ssthresh = self.recalc_ssthresh();
        }
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        // Undo is possible only if nothing outstanding was retransmitted before.
        self.undo_marker = (!self.rtx.iter().any(|s| s.ever_retrans)).then_some(self.snd_una);
        self.undo_retrans = 0;
        self.frto = 0;
        self.cwr_pending = self.ecn_ok;
        for s in self.rtx.iter_mut() {
            s.retrans = false;
            if !s.sacked {
                s.lost = true;
            }
        }
        self.high_seq = self.snd_nxt;
        self.send_high = Some(self.snd_nxt);
        self.ca = CaState::Loss;
        self.force_head_rtx = false;
        self.dupacks = 0;
        self.lt_sent = 0;
        self.reno_sacked = 0;
        self.retransmits += 1;
    }

    /// Linux `tcp_current_ssthresh`: what to restore on undo.
    pub(super) fn current_ssthresh(&self) -> u32 {
        self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
    }

    pub(super) fn recalc_ssthresh(&self) -> u32 {
        let base = match self.cfg.ssthresh_from {
            SsthreshFrom::Cwnd => self.cwnd,
            SsthreshFrom::Flight => (self.rtx.len() as u32).saturating_sub(self.lt_sent),
        };
        (base / 2).max(2)
    }

    // -----------------------------------------------------------------------------------------
    // Scoreboard.

    pub(super) fn packets_out(&self) -> u32 {
        self.rtx.len() as u32
    }
    pub(super) fn sacked_out(&self) -> u32 {
        if self.sack_ok {
            self.rtx.iter().filter(|s| s.sacked).count() as u32
        } else {
            self.reno_sacked
        }
    }
    pub(super) fn lost_out(&self) -> u32 {
        self.rtx.iter().filter(|s| s.lost).count() as u32
    }
    pub(super) fn retrans_out(&self) -> u32 {
        self.rtx.iter().filter(|s| s.retrans).count() as u32
    }
    /// Linux `tcp_packets_in_flight`.
    pub(super) fn in_flight(&self) -> u32 {
        // packets_out + retrans_out - sacked_out - lost_out, in one pass over the queue (this
        // runs on every send test).
        let (mut retrans, mut sacked, mut lost) = (0, 0, 0);
        for s in &self.rtx {
            retrans += u32::from(s.retrans);
            sacked += u32::from(s.sacked);
            lost += u32::from(s.lost);
        }
        if !self.sack_ok {
            sacked = self.reno_sacked;
        }
        (self.packets_out() + retrans).saturating_sub(sacked + lost)
    }

    /// RFC 3517 IsLost for segment `i`: `dupthresh` SACKed segments above it; with FACK, the
    /// highest SACKed segment is `dupthresh` or more segments above it.
    pub(super) fn is_lost(&self, i: usize) -> bool {
        let th = self.cfg.dupthresh as usize;
        if self.cfg.fack {
            let fack = self.rtx.iter().rposition(|s| s.sacked);
            fack.is_some_and(|f| f >= i + th)
        } else {
            self.rtx.iter().skip(i + 1).filter(|s| s.sacked).count() >= th
        }
    }

    /// Marks holes lost by the SACK rule (RFC 3517 or FACK; or, with `sack_loss_marking =
    /// "head"`, Linux 2.4 without FACK: only the first unacknowledged segment, in Recovery).
    pub(super) fn mark_lost_by_sack(&mut self) {
        if self.cfg.sack_loss_marking == SackLossMarking::Head {
            if self.ca == CaState::Recovery {
                self.mark_head_lost();
            }
            return;
        }
        let th = self.cfg.dupthresh as usize;
        let fack = self.rtx.iter().rposition(|s| s.sacked);
        let mut above = 0usize;
        for i in (0..self.rtx.len()).rev() {
            let s = &mut self.rtx[i];
            if s.sacked {
                above += 1;
            } else if !s.lost {
                let lost = if self.cfg.fack {
                    fack.is_some_and(|f| f >= i + th)
                } else {
                    above >= th
                };
                if lost {
                    s.lost = true;
                }
            }
        }
    }

    /// Linux 2.4 `tcp_update_scoreboard`'s timeout rule (`head_timedout`): every segment not
    /// SACKed and last sent more than one RTO ago is lost.
    pub(super) fn mark_timed_out_lost(&mut self, now: Time) {
        let rto = self.rtt.rto();
        for s in self.rtx.iter_mut() {
            if !s.sacked && !s.lost && !s.retrans && now.saturating_since(s.sent_at) > rto {
                s.lost = true;
            }
        }
    }

    pub(super) fn mark_head_lost(&mut self) {
        if let Some(h) = self.rtx.front_mut() {
            if !h.sacked && !h.lost {
                h.lost = true;
                h.retrans = false;
            }
        }
    }

    /// Linux `tcp_stream_is_thin`: fewer than 4 segments out, and not in the first slow start.
    pub(super) fn is_thin(&self) -> bool {
        self.packets_out() < 4 && self.ssthresh < SSTHRESH_INFINITE
    }

    /// Linux `tcp_time_to_recover`, with RFC 3517's trigger instead of the FACK count unless
    /// FACK is on.
    pub(super) fn time_to_recover(&self) -> bool {
        if self.cfg.newreno_careful && self.send_high.is_some_and(|h| self.snd_una <= h) {
            // RFC 2582 §6 Careful: dupacks that do not cover more than send_high are from
            // segments retransmitted by the RTO; no fast retransmit.
            return false;
        }
        if self.rtx.is_empty() {
            return false;
        }
        if self.cfg.thin_dupack && self.sack_ok && self.is_thin() && self.unsent() == 0 {
            // Linux tcp_dupack_heuristics: fackets_out with FACK, else sacked_out + 1.
            let heur = if self.cfg.fack {
                self.rtx.iter().rposition(|s| s.sacked).map_or(0, |f| f + 1) as u32
            } else {
                self.sacked_out() + 1
            };
            if heur > 1 {
                return true;
            }
        }
        if self.linux24() {
            // Trick#1 and the classic rule on fackets_out (Trick#3 is `head_timedout`).
            return self.rtx.iter().any(|s| s.lost) || self.fackets_out() > self.cfg.dupthresh;
        }
        self.dupacks >= self.cfg.dupthresh || (self.sack_ok && self.is_lost(0))
    }

    /// `dupack`: the ACK that starts it is a duplicate (or the head timed out); Linux marks the
    /// head lost only then (`tcp_update_scoreboard`), which matters with `linux24` marking.
    pub(super) fn enter_recovery(&mut self, dupack: bool) {
        self.stats.fast_retransmits += 1;
        self.high_seq = self.snd_nxt;
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = i64::from(self.retrans_out());
        // From CWR the window was already halved for this episode (Linux).
        if self.ca != CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.ssthresh = self.recalc_ssthresh();
        }
        self.cwr_pending = self.ecn_ok;
        // Rate halving off (the seeds' IIP patch): cwnd is reduced at once; on, it shrinks
        // one segment per two ACKs from here (`cwnd_down`).
        if !self.cfg.rate_halving {
            self.cwnd = self.ssthresh;
        }
        self.cwnd_cnt = 0;
        self.ca = CaState::Recovery;
        if !self.sack_ok {
            self.reno_sacked = self.dupacks.min(self.packets_out().saturating_sub(1));
        }
        if self.linux24() {
            // Linux 2.4 marks the head on a duplicate ACK, and retransmits it only once
            // in_flight < cwnd (`tcp_xmit_retransmit_queue`); nothing forces it.
            if dupack {
                self.mark_head_untagged_lost(1);
            }
            return;
        }
        // RFC 3517 (4.3) and Linux: the first unacknowledged segment is retransmitted.
        self.mark_head_lost();
        self.force_head_rtx = true;
        if self.sack_ok {
            self.mark_lost_by_sack();
        }
    }

    /// Linux `tcp_cong_avoid` (2.4): slow start adds one segment per ACK of new data;
    /// congestion avoidance adds one after cwnd+1 such ACKs (`snd_cwnd_cnt` counts from 0 and
    /// the increase happens once it has reached cwnd).
    pub(super) fn cong_avoid(&mut self) {
        if self.cwnd <= self.ssthresh {
            self.cwnd += 1;
        } else if self.cwnd_cnt >= self.cwnd {
            self.cwnd += 1;
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }
}
