//! Outgoing packets: what to send next (retransmissions before new data, the cwnd and window
//! tests, Nagle) and how a segment is built (options, SACK blocks, ECN bits).

use super::*;

impl Connection {
    /// The next packet to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let p = self.next_transmit(now);
        if p.is_none() {
            // The trace's scoreboard after the segments sent in response.
            self.record_trace(now);
        }
        p
    }

    fn next_transmit(&mut self, now: Time) -> Option<Packet> {
        match self.state {
            State::Closed => return None,
            State::SynSent | State::SynRcvd => {
                if !self.syn_pending {
                    return None;
                }
                self.syn_pending = false;
                if self.syn_retries > 0 {
                    self.stats.syn_retransmits += 1;
                } else {
                    self.syn_sent_at = now;
                }
                let server = self.state == State::SynRcvd;
                let flags = match (server, self.cfg.ecn) {
                    (true, _) if self.ecn_ok => SYN | ACK | ECE,
                    (true, _) => SYN | ACK,
                    (false, true) => SYN | ECE | CWR,
                    (false, false) => SYN,
                };
                return Some(self.build(now, flags, 0, 0, false));
            }
            State::TimeWait => {
                return self.ack_now.then(|| self.pure_ack(now));
            }
            _ => {}
        }
        if self.handshake_ack {
            self.handshake_ack = false;
            return Some(self.pure_ack(now));
        }
        if let Some(p) = self.transmit_data(now) {
            return Some(p);
        }
        self.ack_now.then(|| self.pure_ack(now))
    }

    pub(super) fn pure_ack(&mut self, now: Time) -> Packet {
        self.stats.acks_sent += 1;
        let seq = self.snd_nxt;
        self.build(now, ACK, seq, 0, false)
    }

    /// Retransmissions of segments marked lost come first (Linux
    /// `tcp_xmit_retransmit_queue`); new data only when none is waiting.
    pub(super) fn transmit_data(&mut self, now: Time) -> Option<Packet> {
        if let Some(i) = self
            .rtx
            .iter()
            .position(|s| s.lost && !s.retrans && !s.sacked)
        {
            let forced = i == 0 && std::mem::take(&mut self.force_head_rtx);
            if !forced && self.in_flight() >= self.cwnd {
                return None;
            }
            return Some(self.retransmit(now, i));
        }
        if let Some(p) = self.send_new(now) {
            return Some(p);
        }
        self.forward_retransmit(now)
    }

    /// Linux 2.4 `tcp_xmit_retransmit_queue`'s second pass (`linux24` marking): in Recovery,
    /// when no new segment may go, the first hole below the highest SACK that has no tag is
    /// retransmitted, while in_flight < cwnd.
    fn forward_retransmit(&mut self, now: Time) -> Option<Packet> {
        if self.ca != CaState::Recovery
            || !self.sack_ok
            || self.cfg.sack_loss_marking != SackLossMarking::Linux24
            || self.in_flight() >= self.cwnd
        {
            return None;
        }
        let fackets = self.fackets_out() as usize;
        let i = self
            .rtx
            .iter()
            .take(fackets)
            .position(|s| !s.sacked && !s.lost && !s.retrans)?;
        Some(self.retransmit(now, i))
    }

    /// Sends segment `i` of the retransmission queue again.
    fn retransmit(&mut self, now: Time, i: usize) -> Packet {
        let snd_nxt = self.snd_nxt;
        let (start, payload, fin) = {
            let s = &mut self.rtx[i];
            s.retrans = true;
            s.ever_retrans = true;
            s.sent_at = now;
            s.rtx_nxt = snd_nxt;
            (s.start, s.payload(), s.fin)
        };
        self.stats.retransmits += 1;
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(ms_stamp(now));
        }
        self.undo_retrans += 1;
        if i == 0 {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        let flags = ACK | if fin { FIN } else { 0 } | if payload > 0 { PSH } else { 0 };
        // Retransmissions are never ECT (RFC 3168 §6.1.5).
        self.build(now, flags, start, payload, false)
    }

    pub(super) fn send_new(&mut self, now: Time) -> Option<Packet> {
        if !matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait1 | State::LastAck
        ) {
            return None;
        }
        let data_end = self.app_bytes + 1; // offset just past the last written byte
        let unsent = data_end.saturating_sub(self.snd_nxt);
        let fin_due = self.fin_queued && !self.fin_sent;
        if unsent == 0 && !fin_due {
            return None;
        }
        let mut len = unsent.min(u64::from(self.mss));
        let wnd_end = self.snd_una + u64::from(self.snd_wnd);
        let room = wnd_end.saturating_sub(self.snd_nxt);
        if len > room {
            // Only a whole segment is sent into the window (Linux 2.4 `tcp_snd_test`), unless
            // nothing is outstanding; then what fits goes, so a small window cannot deadlock.
            if !self.rtx.is_empty() || room == 0 {
                return None;
            }
            len = room;
        }
        let fin = fin_due && self.snd_nxt + len == data_end;
        // Linux 2.4 `tcp_snd_test` lets a segment carrying the FIN past the cwnd test.
        if !fin && !self.cwnd_allows_new() {
            return None;
        }
        if len < u64::from(self.mss) && !fin && self.cfg.nagle && !self.rtx.is_empty() {
            return None; // Nagle: a small segment waits while data is unacknowledged
        }
        if matches!(self.ca, CaState::Open | CaState::Disorder | CaState::Cwr)
            && self.packets_out() >= self.cwnd
        {
            self.lt_sent += 1;
        }
        let start = self.snd_nxt;
        let end = start + len + u64::from(fin);
        self.rtx.push_back(SentSeg {
            start,
            end,
            fin,
            sent_at: now,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            rtx_nxt: 0,
        });
        self.snd_nxt = end;
        if fin {
            self.fin_sent = true;
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        let mut flags = ACK | if fin { FIN } else { 0 } | if len > 0 { PSH } else { 0 };
        let ect = self.ecn_ok && len > 0;
        if ect && std::mem::take(&mut self.cwr_pending) {
            flags |= CWR;
        }
        Some(self.build(now, flags, start, len as u32, ect))
    }

    /// May a new segment go out? Linux's rule everywhere: `in_flight < cwnd`. Before recovery
    /// (Open, Disorder, CWR), SACKed segments, or without SACK the duplicate ACKs (Linux's Reno
    /// emulation), leave the flight: that is limited transmit (RFC 3042), one new segment per
    /// duplicate ACK until the third starts recovery (more if `dupthresh` is raised, as Linux
    /// does with its reordering estimate). With `limited_transmit` off they stay in it.
    pub(super) fn cwnd_allows_new(&self) -> bool {
        match self.ca {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                let left = if !self.cfg.limited_transmit {
                    0
                } else if self.sack_ok {
                    self.sacked_out()
                } else {
                    self.dupacks.min(self.packets_out().saturating_sub(1))
                };
                self.packets_out().saturating_sub(left) < self.cwnd
            }
            CaState::Recovery | CaState::Loss => self.in_flight() < self.cwnd,
        }
    }

    /// Builds a segment at offset `seq` of our sequence space; every segment after the SYN
    /// carries the ACK, the window, timestamps and (room permitting) SACK blocks.
    pub(super) fn build(
        &mut self,
        now: Time,
        mut flags: u8,
        seq: u64,
        payload: u32,
        ect: bool,
    ) -> Packet {
        let syn = flags & SYN != 0;
        if !syn && self.ece_pending {
            flags |= ECE;
        }
        let mut seg = Segment {
            ecn: if ect { 2 } else { 0 },
            src: Some(self.local),
            dst: Some(self.remote),
            seq: self.iss.wrapping_add(seq as u32),
            flags,
            payload,
            ip_id: self.ip_id,
            ..Segment::default()
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        if syn {
            seg.mss = Some(self.cfg.adv_mss().min(65535) as u16);
            let server = flags & ACK != 0;
            seg.sack_permitted = if server { self.sack_ok } else { self.cfg.sack };
            let ts = if server {
                self.ts_ok
            } else {
                self.cfg.timestamps
            };
            if ts {
                seg.ts = Some((ms_stamp(now), if server { self.ts_recent } else { 0 }));
            }
            // The client offers its shift; the server answers only an offer.
            if self.cfg.window_scaling && (!server || self.ws_ok) {
                seg.wscale = Some(self.our_wscale());
            }
            // The SYN's window is never scaled; clamp and host cap apply to it too.
            let mut w = self.cfg.win_from_space(self.cfg.rcvbuf.0).min(65535);
            if let Some(c) = self.cfg.window_clamp {
                w = w.min(c.0);
            }
            if let Some(c) = self.window_cap {
                w = w.min(c);
            }
            seg.window = w as u16;
            if server {
                seg.ack = self.irs.wrapping_add(1);
                self.rcv_edge = self.rcv_nxt + u64::from(seg.window);
            }
        } else {
            seg.ack = self.irs.wrapping_add(self.rcv_nxt as u32);
            seg.window = self.adv_window();
            if self.ts_ok {
                seg.ts = Some((ms_stamp(now), self.ts_recent));
            }
            if self.sack_ok {
                let max_blocks = if self.ts_ok { 3 } else { 4 };
                let irs = self.irs;
                let wire =
                    |(s, e): (u64, u64)| (irs.wrapping_add(s as u32), irs.wrapping_add(e as u32));
                let mut blocks: Vec<(u32, u32)> = self.dsack.take().map(wire).into_iter().collect();
                let dsack = blocks.len() as u64;
                for &b in &self.sack_recent {
                    if blocks.len() >= max_blocks {
                        break;
                    }
                    blocks.push(wire(b));
                }
                // A data segment must still fit the MTU: drop blocks that do not.
                let room = (self.cfg.mtu.0 as u32)
                    .saturating_sub(40 + payload + if self.ts_ok { 12 } else { 0 });
                while !blocks.is_empty() && 4 + 8 * blocks.len() as u32 > room {
                    blocks.pop();
                }
                self.stats.sack_blocks_sent += blocks.len() as u64;
                self.stats.dsack_blocks_sent += dsack.min(blocks.len() as u64);
                seg.sacks = blocks;
            }
            // Any segment carrying the ACK settles what the receiver owed.
            self.ack_now = false;
            self.delack_deadline = None;
            self.rcv_wup = self.rcv_nxt;
        }
        self.stats.pkts_sent += 1;
        if payload > 0 {
            self.stats.data_pkts_sent += 1;
            self.stats.data_bytes_sent += u64::from(payload);
        }
        seg.encode()
    }
}
