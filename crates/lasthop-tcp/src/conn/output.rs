//! Outgoing packets: which comes next (the SYN, the handshake's ACK, what the send state wants
//! out, an ACK the receive state owes) and how a segment is built (options, SACK blocks, ECN
//! bits).

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
            State::SynSent | State::SynRcvd => return self.syn_packet(now),
            State::TimeWait => {
                return self.rcv.ack_now.then(|| self.pure_ack(now));
            }
            _ => {}
        }
        if self.hs.ack_owed {
            self.hs.ack_owed = false;
            return Some(self.pure_ack(now));
        }
        let packet_gone = !self.snd.gso.packet_open();
        if packet_gone && self.check_space(true) {
            return self.next_transmit(now);
        }
        if !self.rcv.ack_now && self.snd.nothing_to_send() {
            // What follows would find nothing (the host asks every connection after every
            // packet, so this is the common case).
            self.snd.pace.end_round();
            self.snd.gso.end_round();
            if self.check_space(false) {
                return self.next_transmit(now);
            }
            return None;
        }
        let new_data = matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait1 | State::LastAck
        );
        let cx = &mut ctx!(self, now);
        if let Some(o) = self.snd.loss_probe_segment(cx) {
            return Some(self.build(now, o.flags, o.seq, o.payload, o.ect));
        }
        if let Some(o) = self.snd.next_segment(cx, new_data) {
            if !self.snd.gso.packet_open() {
                if let Some(w) = self.snd.writer.as_deref_mut() {
                    w.packet_gone();
                }
            }
            return Some(self.build(now, o.flags, o.seq, o.payload, o.ect));
        }
        self.snd.end_round(cx);
        if self.check_space(false) {
            return self.next_transmit(now);
        }
        self.rcv.ack_now.then(|| self.pure_ack(now))
    }

    /// 6.x: the space check an ACK owes (`sndbuf.rs`), once its first packet has gone
    /// (`after_packet`) or nothing more goes: the writer may copy more, and the application's
    /// close may come due. Returns whether there is more to send.
    fn check_space(&mut self, after_packet: bool) -> bool {
        let Some(w) = self.snd.writer.as_deref() else {
            return false;
        };
        if after_packet && !w.first_packet_gone() {
            return false;
        }
        let copied = self.snd.check_space(&self.opts);
        if self
            .snd
            .writer
            .as_ref()
            .is_some_and(|w| w.close_after && !w.pending())
        {
            if let Some(w) = self.snd.writer.as_deref_mut() {
                w.close_after = false;
            }
            self.close();
        }
        copied
    }

    fn pure_ack(&mut self, now: Time) -> Packet {
        self.stats.acks_sent += 1;
        let seq = self.snd.snd_nxt;
        self.build(now, ACK, seq, 0, false)
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
        if !syn && self.rcv.ece_pending {
            flags |= ECE;
        }
        let mut seg = Segment {
            ecn: if ect { 2 } else { 0 },
            src: Some(self.local),
            dst: Some(self.remote),
            seq: self.snd.iss.wrapping_add(seq as u32),
            flags,
            payload,
            ip_id: self.ip_id,
            ..Segment::default()
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        let (cfg, o) = (&self.cfg, &self.opts);
        if syn {
            seg.mss = Some(cfg.adv_mss().min(65535) as u16);
            let server = flags & ACK != 0;
            seg.sack_permitted = if server { o.sack } else { cfg.sack };
            let ts = if server { o.ts } else { cfg.timestamps };
            if ts {
                seg.ts = Some((ms_stamp(now), if server { self.rcv.ts_recent } else { 0 }));
            }
            // The client offers its shift; the server answers only an offer.
            if cfg.window_scaling && (!server || o.ws) {
                seg.wscale = Some(our_wscale(cfg));
            }
            // Linux rounds the SYN's window to segments of its own MSS, less the timestamp
            // option the server knows it will carry (`tcp_openreq_init_rwin`).
            let mss = cfg.adv_mss() - if server && o.ts { 12 } else { 0 };
            seg.window = self.rcv.syn_window(cfg, mss);
            if server {
                seg.ack = self.rcv.irs.wrapping_add(1);
                self.rcv.rcv_edge = self.rcv.rcv_nxt + u64::from(seg.window);
            }
        } else {
            seg.ack = self.rcv.irs.wrapping_add(self.rcv.rcv_nxt as u32);
            let cx = &mut ctx!(self, now);
            seg.window = self.rcv.adv_window(cx);
            if o.ts {
                seg.ts = Some((ms_stamp(now), self.rcv.ts_recent));
            }
            if o.sack {
                seg.sacks = self.rcv.sack_blocks(cx, payload);
            }
            self.rcv.ack_sent(cx.timers);
        }
        self.stats.pkts_sent += 1;
        if payload > 0 {
            if self.cfg.ack_pushed && !syn {
                self.rcv.data_sent(now);
            }
            self.stats.data_pkts_sent += 1;
            self.stats.data_bytes_sent += u64::from(payload);
        }
        seg.encode()
    }
}
