//! The three-way handshake: the SYN and SYN-ACK with their retransmissions, what the peer's
//! SYN negotiates, the first RTT sample and the initial window.

use super::*;

/// Progress of the handshake.
#[derive(Clone, Copy, Debug)]
pub(super) struct Handshake {
    /// The SYN (client) or SYN-ACK (server) must be (re)sent.
    pub(super) syn_pending: bool,
    pub(super) syn_sent_at: Time,
    pub(super) syn_retries: u32,
    /// The client's ACK of the SYN-ACK is owed as its own packet (Linux sends it at once).
    pub(super) ack_owed: bool,
}

impl Handshake {
    pub(super) fn new(now: Time) -> Handshake {
        Handshake {
            syn_pending: true,
            syn_sent_at: now,
            syn_retries: 0,
            ack_owed: false,
        }
    }
}

impl Connection {
    /// The peer's SYN or SYN-ACK: options, TS.Recent and the effective MSS.
    fn negotiate(&mut self, seg: &Segment) {
        self.opts.negotiate(&self.cfg, seg);
        if let Some((val, _)) = seg.ts {
            self.rcv.ts_recent = val;
        }
    }

    /// The server's side of the SYN (from [`Connection::accept`]).
    pub(super) fn on_syn(&mut self, now: Time, seg: &Segment) {
        self.rcv.syn_received(seg.seq);
        self.negotiate(seg);
        // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR.
        self.opts.ecn = self.cfg.ecn && seg.has(ECE) && seg.has(CWR);
        self.snd.set_snd_wnd(u32::from(seg.window));
        self.timers.rto = Some(timers::timer_at(&self.cfg, now, self.snd.rtt.rto()));
    }

    pub(super) fn on_syn_sent(&mut self, now: Time, seg: &Segment) {
        let acks_syn = seg.has(ACK) && seg.ack == self.snd.iss.wrapping_add(1);
        if seg.has(RST) {
            if acks_syn {
                self.abort(AbortReason::Reset);
            }
            return;
        }
        if !(seg.has(SYN) && acks_syn) {
            return; // simultaneous open is not modelled
        }
        self.rcv.syn_received(seg.seq);
        self.negotiate(seg);
        // An ECN-setup SYN-ACK has ECE and not CWR.
        self.opts.ecn = self.cfg.ecn && seg.has(ECE) && !seg.has(CWR);
        self.snd.set_snd_wnd(u32::from(seg.window));
        self.establish(now, seg.ts.map(|(_, ecr)| ecr));
        // Linux acknowledges the SYN-ACK at once, before any data the application writes.
        self.hs.ack_owed = true;
    }

    pub(super) fn on_syn_rcvd(&mut self, now: Time, seg: &Segment) {
        if seg.has(RST) {
            self.abort(AbortReason::Reset);
            return;
        }
        if seg.has(SYN) && !seg.has(ACK) {
            // A retransmitted SYN: Linux answers it with the SYN-ACK again.
            if seg.seq == self.rcv.irs {
                self.hs.syn_pending = true;
            }
            return;
        }
        if !(seg.has(ACK) && seg.ack == self.snd.iss.wrapping_add(1)) {
            return;
        }
        self.snd
            .set_snd_wnd(u32::from(seg.window) << self.opts.snd_wscale);
        self.establish(now, seg.ts.map(|(_, ecr)| ecr));
        // The ACK may carry data (the client's ACK was lost and the request came first).
        self.on_synchronized(now, seg);
    }

    /// The SYN (or SYN-ACK) is acknowledged, by a segment echoing `ecr` if it has timestamps:
    /// first RTT sample, initial window. A retransmitted SYN gives no sample from its send time
    /// (Karn); with timestamps Linux takes one from the echo (`tcp_ack_update_rtt`: the TSecr
    /// of an ACK that acknowledges the SYN, FLAG_SYN_ACKED being part of FLAG_ACKED).
    fn establish(&mut self, now: Time, ecr: Option<u32>) {
        let (cfg, snd) = (&self.cfg, &mut self.snd);
        snd.snd_una = 1;
        snd.snd_nxt = 1;
        self.hs.syn_pending = false;
        self.timers.rto = None;
        let sample_ok = cfg.handshake_rtt == HandshakeRtt::Always || self.opts.ts;
        let hs_rtt = if self.hs.syn_retries == 0 {
            Some(now.saturating_since(self.hs.syn_sent_at))
        } else {
            ecr.filter(|&e| self.opts.ts && e != 0)
                .map(|e| ts_rtt(now, e))
        };
        if let (Some(m), true) = (hs_rtt, sample_ok) {
            snd.rtt.sample(m, 1, 1);
        } else {
            // RFC 6298 §5.7: with no sample from a handshake that timed out, the RTO starts
            // from 3 s, not from a shorter initial one (Linux 3.1+ `tcp_init_metrics`,
            // TCP_TIMEOUT_FALLBACK; 2.4's initial RTO is 3 s already). The backed-off SYN
            // timeout does not carry over to data.
            let fallback = if self.hs.syn_retries > 0 {
                cfg.rto_initial.max(Dur::from_secs(3))
            } else {
                cfg.rto_initial
            };
            snd.rtt.reset(fallback);
        }
        snd.win.cwnd = cfg.iw_segments(self.opts.mss);
        if cfg.cbi {
            self.init_metrics();
        }
        if self.hs.syn_retries > 0 && self.cfg.iw_after_syn_loss_1 {
            self.snd.win.cwnd = 1;
        }
        // Linux times the SYN (or SYN-ACK) in `tcp_ack_update_rtt`: the min-RTT filter's first
        // sample, the one RACK's reordering window and BBR start from.
        if let (Some(r), Some(d)) = (self.snd.rate.as_deref_mut(), hs_rtt) {
            r.update_min_rtt(now, d.0 / 1_000, false);
        }
        self.snd.writer_established(self.opts.peer_mss);
        let cx = ctx!(self, now);
        if self.snd.ctl {
            self.snd.cc_established(&cx);
        }
        self.snd.update_pacing_rate(&cx);
        if let Some(a) = &mut self.rcv.autotune {
            a.established(
                u64::from(self.opts.mss),
                rcvbuf::advmss(&self.cfg, self.opts.ts),
                self.opts.rcv_wscale,
                self.rcv.rcv_nxt,
                now,
            );
        }
        // Linux `tcp_initialize_rcv_mss`: min(advmss, mss_cache), at most TCP_MSS_DEFAULT. The
        // cached MSS leaves out the timestamp option, so a full segment with timestamps (524 B
        // on a 576 B MTU) is not taken for a short, pushed one.
        self.rcv.rcv_mss = u64::from(self.cfg.adv_mss().min(self.opts.mss).min(536));
        self.state = if self.snd.fin_queued {
            State::FinWait1
        } else {
            State::Established
        };
        self.events.push_back(Event::Connected);
    }

    /// Linux `tcp_init_metrics` (CBI on): ssthresh from the cache; srtt and deviation from it
    /// when usable, and then the Linux initial window (4 segments at our MSS), capped by the
    /// cached ssthresh (seed 000 A.2.6). Without a usable entry, Linux's reset path: no
    /// timestamps means the handshake sample is forgotten and the RTO is 3 s.
    fn init_metrics(&mut self) {
        let (ts, init) = (self.opts.ts, self.cfg.rto_initial);
        let snd = &mut self.snd;
        let Some(m) = self.cached else {
            snd.rtt.forget(ts, init);
            return;
        };
        if m.ssthresh > 0 {
            snd.win.ssthresh = m.ssthresh;
        }
        if snd.rtt.seed_from_cache(m.srtt, m.mdev4, ts, init) {
            snd.win.cwnd = linux_iw(self.opts.mss).min(snd.win.ssthresh);
        }
    }

    /// The SYN or SYN-ACK timed out: again, with the timeout doubled, until the retries are
    /// exhausted.
    pub(super) fn on_syn_timeout(&mut self, now: Time) {
        let limit = if self.state == State::SynSent {
            self.cfg.syn_retries
        } else {
            self.cfg.synack_retries
        };
        if self.hs.syn_retries >= limit {
            self.abort(AbortReason::HandshakeTimeout);
            return;
        }
        self.hs.syn_retries += 1;
        self.hs.syn_pending = true;
        self.snd.rtt.backoff();
        self.timers.rto = Some(timers::timer_at(&self.cfg, now, self.snd.rtt.rto()));
    }

    /// The SYN or SYN-ACK, when one is due.
    pub(super) fn syn_packet(&mut self, now: Time) -> Option<Packet> {
        if !self.hs.syn_pending {
            return None;
        }
        self.hs.syn_pending = false;
        if self.hs.syn_retries > 0 {
            self.stats.syn_retransmits += 1;
        } else {
            self.hs.syn_sent_at = now;
        }
        let server = self.state == State::SynRcvd;
        let flags = match (server, self.cfg.ecn) {
            (true, _) if self.opts.ecn => SYN | ACK | ECE,
            (true, _) => SYN | ACK,
            (false, true) => SYN | ECE | CWR,
            (false, false) => SYN,
        };
        Some(self.build(now, flags, 0, 0, false))
    }
}
