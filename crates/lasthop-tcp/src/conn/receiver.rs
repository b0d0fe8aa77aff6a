//! Receiver side: in-order delivery, the out-of-order queue, SACK/D-SACK blocks, delayed ACKs
//! and the advertised window.

use super::*;

impl Connection {
    /// Receiver side: payload and FIN.
    pub(super) fn on_data(&mut self, now: Time, seg: &Segment) {
        let len = u64::from(seg.payload);
        let fin = seg.has(FIN);
        if len == 0 && !fin {
            return;
        }
        let base = self.irs.wrapping_add(self.rcv_nxt as u32);
        let Some(start) = unwrap(base, self.rcv_nxt, seg.seq) else {
            return;
        };
        let end = start + len;
        if len > 0 {
            self.stats.data_pkts_rcvd += 1;
        }
        if self.fin_rcvd {
            // Everything up to the FIN is in: this is a retransmission.
            self.ack_now = true;
            if len > 0 {
                self.stats.dup_data_pkts_rcvd += 1;
                self.set_dsack(start, end);
            }
            if self.state == State::TimeWait {
                self.time_wait_deadline = Some(now + self.cfg.time_wait);
            }
            return;
        }
        if len > 0 && end <= self.rcv_nxt {
            self.stats.dup_data_pkts_rcvd += 1;
            self.set_dsack(start, end);
            self.ack_now = true;
            return;
        }
        let limit = self.rcv_nxt + self.cfg.rcvbuf.0;
        if start > self.rcv_nxt {
            // Out of order: hold it (within the buffer) and acknowledge at once with SACK.
            self.ack_now = true;
            if len > 0 {
                self.stats.ooo_pkts_rcvd += 1;
                let e = end.min(limit);
                if e > start {
                    self.insert_ooo(start, e);
                }
            }
            if fin && end <= limit {
                self.fin_at = Some(end);
            }
            return;
        }
        // In order (possibly starting below rcv_nxt).
        if len > 0 {
            if start < self.rcv_nxt {
                self.set_dsack(start, self.rcv_nxt);
            }
            let filled_hole = !self.ooo.is_empty();
            let mut nxt = end.min(limit);
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
                self.stats.bytes_delivered += delivered;
                self.events.push_back(Event::Delivered(delivered));
            }
            self.schedule_ack(now, filled_hole);
        }
        if fin && end <= limit {
            self.fin_at = Some(end);
        }
        if self.fin_at == Some(self.rcv_nxt) {
            self.rcv_nxt += 1;
            self.fin_rcvd = true;
            self.ack_now = true;
            self.events.push_back(Event::PeerFin);
            match self.state {
                State::Established => self.state = State::CloseWait,
                State::FinWait1 => self.state = State::Closing,
                State::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    /// When to acknowledge in-order data: at once for a filled hole, in quick-ACK mode or
    /// once more than one full segment is unacknowledged (Linux `__tcp_ack_snd_check`, i.e.
    /// every second full segment); otherwise on the delayed-ACK timer.
    pub(super) fn schedule_ack(&mut self, now: Time, filled_hole: bool) {
        if self.cfg.delayed_ack == DelayedAck::Adaptive {
            self.update_ato(now);
        }
        if filled_hole || self.cfg.delayed_ack == DelayedAck::Off {
            self.ack_now = true;
        } else if self.quickacks_left > 0 {
            self.quickacks_left -= 1;
            self.ack_now = true;
        } else if self.rcv_nxt - self.rcv_wup > u64::from(self.mss) {
            self.ack_now = true;
        } else if self.delack_deadline.is_none() {
            let timeout = match self.cfg.delayed_ack {
                DelayedAck::Adaptive => self.ato_timeout(),
                _ => self.cfg.delayed_ack_timeout,
            };
            self.delack_deadline = Some(now + timeout);
        }
    }

    /// Linux `tcp_event_data_recv`: ato follows the packet inter-arrival time.
    pub(super) fn update_ato(&mut self, now: Time) {
        if let Some(last) = self.last_rcv {
            let m = now.saturating_since(last);
            if m.0 <= ATO_MIN.0 / 2 {
                self.ato = Dur(self.ato.0 / 2 + ATO_MIN.0 / 2);
            } else if m < self.ato {
                self.ato = Dur((self.ato.0 / 2 + m.0).min(self.rtt.rto().0));
            }
        }
        self.last_rcv = Some(now);
    }

    /// Linux `tcp_send_delayed_ack`: ato, at most 200 ms and at most the smoothed RTT.
    pub(super) fn ato_timeout(&self) -> Dur {
        let mut max = DELACK_MAX;
        if let Some(srtt) = self.rtt.srtt() {
            max = max.min(srtt.max(ATO_MIN));
        }
        self.ato.min(max)
    }

    pub(super) fn set_dsack(&mut self, start: u64, end: u64) {
        if self.cfg.dsack && self.sack_ok {
            self.dsack = Some((start, end));
        }
    }

    /// Adds [start, end) to the out-of-order queue; the block holding it becomes the first
    /// SACK block. A segment already held is a duplicate (D-SACK).
    pub(super) fn insert_ooo(&mut self, start: u64, end: u64) {
        if self.ooo.iter().any(|&(s, e)| s <= start && end <= e) {
            self.stats.dup_data_pkts_rcvd += 1;
            self.set_dsack(start, end);
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
    pub(super) fn adv_window(&mut self) -> u16 {
        let held: u64 = self.ooo.iter().map(|&(s, e)| e - s).sum();
        let mut w = self
            .cfg
            .win_from_space(self.cfg.rcvbuf.0.saturating_sub(held));
        if let Some(c) = self.cfg.window_clamp {
            w = w.min(c.0);
        }
        if let Some(c) = self.window_cap {
            w = w.min(c);
        }
        let s = self.rcv_wscale;
        w = w
            .max(self.rcv_edge.saturating_sub(self.rcv_nxt))
            .min(65535 << s);
        // Rounded up to the scale unit, so the right edge never moves back (Linux aligns too).
        let field = w.div_ceil(1 << s).min(65535);
        self.rcv_edge = self.rcv_nxt + (field << s);
        field as u16
    }
}
