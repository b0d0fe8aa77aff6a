//! The send state: what the application wrote, the retransmission queue and its scoreboard,
//! the congestion window and Linux 2.4's loss recovery (`tcp_ack`, `tcp_fastretrans_alert`,
//! `tcp_enter_loss`, undo, F-RTO, ECN's CWR), the RTT estimator and what an RTO does.
//!
//! Methods take the configuration and the negotiated options as arguments; the retransmission
//! timer they arm is [`Timers::rto`].

use super::pacing::tso_autosize;
use super::*;

/// Linux's congestion-avoidance state (`tp->ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Normal operation.
    Open,
    /// Duplicate ACKs or SACKs seen, not yet a loss.
    Disorder,
    /// cwnd reduced after an ECN echo, until the window sent before it is acknowledged.
    Cwr,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// Recovery after an RTO (go-back-N in slow start).
    Loss,
}

/// Linux's "infinite" initial ssthresh (0x7fffffff).
pub const SSTHRESH_INFINITE: u32 = u32::MAX >> 1;

/// A segment sent and not yet cumulatively acknowledged (the retransmission queue).
#[derive(Clone, Debug)]
pub(super) struct SentSeg {
    pub(super) start: u64,
    /// End offset, FIN included.
    pub(super) end: u64,
    pub(super) fin: bool,
    pub(super) sent_at: Time,
    // The three tags are changed only through the setters below, which keep the queue's
    // [`Tally`] right; other files read them through the getters.
    sacked: bool,
    lost: bool,
    /// A retransmission of it is in flight (Linux TCPCB_SACKED_RETRANS).
    retrans: bool,
    /// Retransmitted at least once (Karn).
    pub(super) ever_retrans: bool,
    /// snd_nxt when it was last retransmitted (Linux keeps it in `ack_seq`; "Event C").
    pub(super) rtx_nxt: u64,
    /// RDB: where its packet began when sent with redundant data in front; 0 if not (`rdb.rs`).
    pub(super) rdb_start: u64,
    /// It ended the (GSO) packet it first went in (`gso.rs`; every segment before 6.x).
    pub(super) pkt_end: bool,
}

impl SentSeg {
    pub(super) fn payload(&self) -> u32 {
        (self.end - self.start) as u32 - u32::from(self.fin)
    }
    #[inline]
    pub(super) fn sacked(&self) -> bool {
        self.sacked
    }
    #[inline]
    pub(super) fn lost(&self) -> bool {
        self.lost
    }
    #[inline]
    pub(super) fn retrans(&self) -> bool {
        self.retrans
    }
    #[inline]
    fn set_sacked(&mut self, n: &mut Tally, v: bool) {
        n.sacked = n.sacked - u32::from(self.sacked) + u32::from(v);
        self.sacked = v;
    }
    #[inline]
    pub(super) fn set_lost(&mut self, n: &mut Tally, v: bool) {
        n.lost = n.lost - u32::from(self.lost) + u32::from(v);
        self.lost = v;
    }
    #[inline]
    pub(super) fn set_retrans(&mut self, n: &mut Tally, v: bool) {
        n.retrans = n.retrans - u32::from(self.retrans) + u32::from(v);
        self.retrans = v;
    }
}

/// How many segments of the retransmission queue carry each tag (Linux's `sacked_out`,
/// `lost_out` and `retrans_out` counters), kept as the tags change so that `in_flight` and the
/// send tests, asked on every ACK and every poll, need not walk the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    sacked: u32,
    lost: u32,
    retrans: u32,
}

impl Tally {
    /// The tags of the queue `rtx`, counted (the check of the kept counts).
    fn of(rtx: &VecDeque<SentSeg>) -> Tally {
        let mut n = Tally::default();
        for s in rtx {
            n.sacked += u32::from(s.sacked);
            n.lost += u32::from(s.lost);
            n.retrans += u32::from(s.retrans);
        }
        n
    }

    /// `s` leaves the queue.
    #[inline]
    fn remove(&mut self, s: &SentSeg) {
        self.sacked -= u32::from(s.sacked);
        self.lost -= u32::from(s.lost);
        self.retrans -= u32::from(s.retrans);
    }
}

/// What an incoming ACK did, for the congestion state machine (Linux's `flag`).
#[derive(Clone, Copy, Debug)]
struct AckFlags {
    acked_pkts: u32,
    is_dupack: bool,
    ece: bool,
    /// Linux `tcp_ack_is_dubious`: no data, no window update, nothing acknowledged; or SACK
    /// or ECE information; or not in the Open state.
    dubious: bool,
    /// A SACK block reaches above `high_seq` (Linux `FLAG_DATA_LOST`).
    data_lost: bool,
    /// `head_timedout` is on and the first unacknowledged segment was last sent more than one
    /// RTO ago (Linux `tcp_head_timedout`).
    head_timedout: bool,
    now: Time,
}

impl AckFlags {
    fn data_acked(&self) -> bool {
        self.acked_pkts > 0
    }
}

/// What [`SendState::on_ack`] made of an ACK, for the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AckOutcome {
    /// Unreadable, or below snd_una (its SACK blocks still count).
    Ignored,
    /// It acknowledges data never sent: the receiver answers with an ACK.
    BeyondSent,
    /// Processed; the connection looks at `fin_acked`.
    Processed,
}

/// A segment the sender wants out: flags, offset, payload and whether it is ECN-capable.
#[derive(Clone, Copy, Debug)]
pub(super) struct Outgoing {
    pub(super) flags: u8,
    pub(super) seq: u64,
    pub(super) payload: u32,
    pub(super) ect: bool,
}

/// The send side of a connection. Sequence offsets count from `iss` (the SYN is offset 0).
#[derive(Debug)]
pub(super) struct SendState {
    pub(super) iss: u32,
    /// Bytes the application wrote.
    pub(super) app_bytes: u64,
    pub(super) fin_queued: bool,
    pub(super) fin_sent: bool,
    pub(super) fin_acked: bool,
    pub(super) snd_una: u64,
    pub(super) snd_nxt: u64,
    pub(super) snd_wnd: u32,
    /// The retransmission queue and its scoreboard.
    pub(super) rtx: VecDeque<SentSeg>,
    /// The counts of `rtx`'s tags.
    pub(super) tally: Tally,
    /// cwnd, ssthresh and the growth counter, which the congestion-control algorithm
    /// ([`Cc`]) and the loss recovery here both change, as in Linux.
    pub(super) win: Window,
    /// The congestion-control algorithm (Linux `icsk_ca_ops` and its private state).
    pub(super) cc: Cc,
    pub(super) ca: CaState,
    /// snd_nxt when Recovery or Loss was entered (Linux `high_seq`, RFC 2582 `recover`).
    pub(super) high_seq: u64,
    /// snd_nxt at the last RTO (RFC 2582 `send_high`), for the Careful variant.
    pub(super) send_high: Option<u64>,
    pub(super) dupacks: u32,
    /// Segments sent by limited transmit since the last new ACK.
    pub(super) lt_sent: u32,
    /// Duplicate ACKs counted as SACKed segments during Reno recovery.
    pub(super) reno_sacked: u32,
    /// RTO expiries since the last forward progress (Linux `tp->retransmits`).
    pub(super) retransmits: u32,
    /// `rto_estimator = "linux22"`: this ACK's RTT sample, applied once cwnd has grown
    /// (2.2/2.3 `tcp_ack` runs `tcp_cong_avoid` before `tcp_set_rto`).
    rtt22_pending: Option<Dur>,
    /// The first retransmission of a recovery goes regardless of cwnd (RFC 2581 step 2,
    /// RFC 3517 step 4.3).
    pub(super) force_head_rtx: bool,
    /// Linux undo: snd_una when the reduction happened (`undo_marker`), retransmissions not yet
    /// shown unnecessary (`undo_retrans`), TS clock of the first retransmission
    /// (`retrans_stamp`), ssthresh to restore (`prior_ssthresh`, 0 = none).
    pub(super) undo_marker: Option<u64>,
    pub(super) undo_retrans: i64,
    pub(super) retrans_stamp: Option<u32>,
    pub(super) prior_ssthresh: u32,
    /// `recovery_exit = "flight_plus_one_keep_four"`: cwnd was four at this recovery's third
    /// duplicate ACK, so the full ACK keeps four.
    keep_four: bool,
    /// TSecr of the ACK being processed.
    pub(super) ack_ecr: Option<u32>,
    /// F-RTO progress: 0 off, 1 waiting for the first ACK after the RTO, 2 for the second.
    /// With `kernel = "linux-6.18"` (RFC 5682's SACK-enhanced F-RTO, `tcp_process_loss`) only
    /// 0 (off) or 1 (`tp->frto`).
    pub(super) frto: u8,
    /// 6.x F-RTO step 2b (`REXMIT_NEW`): what this ACK lets out is new data, not the
    /// segments marked lost.
    frto_new_only: bool,
    /// This ACK (s)acknowledged a segment never retransmitted and sent before `high_seq`
    /// (Linux `FLAG_ORIG_SACK_ACKED`).
    orig_acked: bool,
    /// This ACK SACKed something new (Linux `FLAG_DATA_SACKED`).
    newly_sacked: bool,
    /// ECN: CWR is owed on the next new data segment.
    pub(super) cwr_pending: bool,
    pub(super) rtt: RttEstimator,
    /// Redundant Data Bundling (`rdb.rs`).
    pub(super) rdb: super::rdb::RdbState,
    /// Today's Linux mechanisms (CUBIC, the 3.15/3.16 growth gate, PRR, ER, TLP, RACK).
    pub(super) l3: Linux3,
    /// Linux's internal pacing (`pacing.rs`).
    pub(super) pace: Pacer,
    /// The algorithm has a `cong_control` (BBR): cwnd is its alone.
    pub(super) ctl: bool,
    /// Delivery-rate sampling (`rate.rs`), for an algorithm that takes the samples.
    pub(super) rate: Option<Box<Rate>>,
    /// Linux `tp->lost`: segments marked lost (a lost retransmission again), ever.
    pub(super) lost_total: u64,
    /// Linux `tp->lsndtime`: when data was last sent (kept with rate sampling).
    pub(super) last_send: Time,
    /// The `last_send` whose idle period `restart_after_idle` has looked at.
    idle_checked: Time,
    /// `kernel = "linux-6.18"`: the 6.x versions of the functions that changed.
    pub(super) k6: bool,
    /// 6.x: the skbs and GSO packets new data goes in, and where PSH falls (`gso.rs`).
    pub(super) gso: super::gso::Gso,
    /// 6.x: the send buffer and the application's write() calls (`sndbuf.rs`).
    pub(super) writer: Option<Box<super::sndbuf::Writer>>,
    /// The largest window the peer has offered (Linux `max_window`).
    pub(super) max_window: u32,
    /// When data last went, retransmissions included (6.x `tcp_wstamp_ns` without pacing).
    pub(super) last_xmit: Time,
    /// New data waits for this connection's next event (`tcp_tso_should_defer`).
    pub(super) tso_deferred: bool,
    /// Packets in `rtx` (segments that ended the packet they first went in).
    pub(super) rtx_pkts: u32,
}

impl SendState {
    pub(super) fn new(cfg: &TcpConfig, iss: u32) -> SendState {
        let cc = Cc::new(cfg, iss);
        let ctl = cc.has_cong_control();
        let k6 = cfg.kernel == Some(crate::config::Kernel::Linux618);
        SendState {
            ctl,
            rate: (ctl || k6).then(|| Box::new(Rate::new())),
            lost_total: 0,
            last_send: Time::ZERO,
            idle_checked: Time::ZERO,
            k6,
            gso: super::gso::Gso::default(),
            writer: k6.then(|| Box::new(super::sndbuf::Writer::new())),
            max_window: 0,
            last_xmit: Time::ZERO,
            tso_deferred: false,
            rtx_pkts: 0,
            pace: Pacer::new(pacing_on(cfg, &cc)),
            iss,
            app_bytes: 0,
            fin_queued: false,
            fin_sent: false,
            fin_acked: false,
            snd_una: 0,
            // The SYN takes offset 0.
            snd_nxt: 1,
            snd_wnd: 0,
            rtx: VecDeque::new(),
            tally: Tally::default(),
            win: Window {
                cwnd: 1,
                ssthresh: SSTHRESH_INFINITE,
                cnt: 0,
            },
            cc,
            ca: CaState::Open,
            high_seq: 0,
            send_high: None,
            dupacks: 0,
            lt_sent: 0,
            reno_sacked: 0,
            retransmits: 0,
            rtt22_pending: None,
            force_head_rtx: false,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: None,
            prior_ssthresh: 0,
            keep_four: false,
            ack_ecr: None,
            frto: 0,
            frto_new_only: false,
            orig_acked: false,
            newly_sacked: false,
            cwr_pending: false,
            rtt: RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            rdb: super::rdb::RdbState::new(cfg),
            l3: Linux3::new(cfg),
        }
    }

    // -----------------------------------------------------------------------------------------
    // ACKs.

    /// An incoming ACK (Linux `tcp_ack`): the window, SACK tags, what it acknowledges, the RTT
    /// sample and the retransmission timer, then congestion control and recovery.
    #[inline]
    pub(super) fn on_ack(&mut self, cx: &mut Ctx, seg: &Segment) -> AckOutcome {
        let cfg = cx.cfg;
        let o = cx.o;
        let now = cx.now;
        let base = self.iss.wrapping_add(self.snd_una as u32);
        let Some(ack) = unwrap(base, self.snd_una, seg.ack) else {
            return AckOutcome::Ignored;
        };
        if ack > self.snd_nxt {
            return AckOutcome::BeyondSent;
        }
        if ack < self.snd_una {
            if o.sack {
                self.tag_sacks(cx, seg, ack);
            }
            return AckOutcome::Ignored;
        }
        self.l3_ack_start(cx);
        self.frto_new_only = false;
        self.orig_acked = false;
        self.newly_sacked = false;
        self.ack_ecr = seg.ts.filter(|_| o.ts).map(|(_, ecr)| ecr);
        let prior_una = self.snd_una;
        let mut prior_in_flight = self.in_flight(o);
        let prior_sacked = if self.rate.is_some() {
            self.rate_ack_start(o, prior_in_flight)
        } else {
            0
        };
        let prior_packets = self.packets_out();
        let wnd = u32::from(seg.window) << o.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        self.set_snd_wnd(wnd);
        let mut data_lost = false;
        if o.sack {
            data_lost = self.tag_sacks(cx, seg, ack);
            if self.linux24(cx) {
                // Linux `tcp_ack` takes prior_in_flight after `tcp_sacktag_write_queue`.
                prior_in_flight = self.in_flight(o);
            }
        }

        let rdb_lost = self.rdb_hidden_loss(cx, ack);
        self.rack_update(cx, ack);
        let mut acked_pkts = 0u32;
        let mut rate_done = false;
        if ack > self.snd_una {
            let ca_rtt = self.cc_rtt(ack, now);
            let mut first_sent: Option<Time> = None;
            let mut retrans_acked = false;
            let mut newest: Option<(Time, bool)> = None;
            let mut last_rtx: Option<Time> = None;
            while self.rtx.front().is_some_and(|s| s.end <= ack) {
                let s = self.rtx.pop_front().expect("front checked");
                self.tally.remove(&s);
                self.rtx_pkts -= u32::from(s.pkt_end);
                if let Some(r) = self.rate.as_deref_mut() {
                    r.on_delivered(0, s.end, false, s.sacked);
                    r.tx.pop_front();
                }
                acked_pkts += 1;
                newest = Some((s.sent_at, s.ever_retrans));
                if s.ever_retrans {
                    last_rtx = last_rtx.max(Some(s.sent_at));
                }
                if s.ever_retrans {
                    retrans_acked = true;
                } else if first_sent.is_none() {
                    first_sent = Some(s.sent_at);
                }
                self.orig_acked |= !s.ever_retrans && !s.sacked && s.end <= self.high_seq;
                if s.fin {
                    self.fin_acked = true;
                }
            }
            if retrans_acked && !o.sack {
                // Without SACK the ACK cannot show that the originals arrived (Linux clears
                // FLAG_ORIG_SACK_ACKED when retransmitted data is among the acknowledged).
                self.orig_acked = false;
            }
            self.snd_una = ack;
            if self.k6 {
                self.gso.on_acked(ack);
            }
            self.dupacks = 0;
            self.lt_sent = 0;
            if acked_pkts > 0 {
                self.retransmits = 0;
            }
            // RTT sample: from the echoed timestamp when timestamps are on, otherwise from
            // the oldest newly acknowledged segment, unless a retransmitted one is among
            // them (Karn; Linux FLAG_RETRANS_DATA_ACKED).
            let ts_sample = match seg.ts {
                Some((_, ecr)) if o.ts && ecr != 0 && acked_pkts > 0 => Some(ts_rtt(now, ecr)),
                _ => None,
            };
            let r6 = if self.rate.is_some() {
                rate_done = true;
                self.rate_rtt(
                    cx,
                    ts_sample,
                    acked_pkts,
                    ack - prior_una,
                    prior_sacked,
                    seg,
                )
            } else {
                None
            };
            let m = if self.k6 {
                // Linux 4.x+ `tcp_ack_update_rtt`: the oldest newly ACKed segment never
                // retransmitted, else the oldest newly SACKed one, else the timestamp echo.
                r6
            } else if o.ts {
                ts_sample
            } else if cfg.rto_estimator == RtoEstimator::Linux22 {
                // 2.2/2.3 time the newest segment covered. With a retransmission among them
                // 2.3 took none; the seed's fix takes it when the newest is a new segment sent
                // after the retransmission (so its ACK is unambiguous, Karn); an original held
                // out of order behind the hole since before is no sample.
                newest
                    .filter(|n| !n.1 && last_rtx.is_none_or(|r| n.0 > r))
                    .map(|n| now.saturating_since(n.0))
            } else {
                first_sent
                    .filter(|_| !retrans_acked)
                    .map(|t| now.saturating_since(t))
            };
            if let Some(m) = m {
                if cfg.rto_estimator == RtoEstimator::Linux22 {
                    self.rtt22_pending = Some(m);
                } else {
                    self.rtt.sample(m, self.snd_una, self.snd_nxt);
                }
            }
            // Linux restarts the timer whenever something is acknowledged: from now (2.4), or
            // (2.2/2.3, outside RTO recovery) from when the oldest outstanding segment was sent.
            cx.timers.rto = self.rtx.front().map(|head| {
                if cfg.rto_timer == RtoTimer::OldestSent && self.retransmits == 0 {
                    cx.timer_until((head.sent_at + self.rtt.rto()).max(now))
                } else {
                    cx.timer_at(self.rtt.rto())
                }
            });
            if acked_pkts > 0 && !self.k6 {
                self.cc_pkts_acked(ack, acked_pkts, ca_rtt, now);
            }
        }
        if self.k6 {
            // Linux 4.x+: an ACK that only SACKs still samples the RTT (of the SACKed
            // segments), and the algorithm's `pkts_acked` sees every ACK's `rs->rtt_us`.
            if !rate_done {
                if let Some(m) = self.rate_rtt(cx, None, 0, 0, prior_sacked, seg) {
                    self.rtt.sample(m, self.snd_una, self.snd_nxt);
                    // 4.13+ `tcp_clean_rtx_queue`: an ACK that only SACKs restarts the RTO
                    // (FLAG_SET_XMIT_TIMER) when what it SACKed was sent before the head was
                    // last (re)transmitted, so that the timer does not creep on in recovery.
                    let sack_rtt = self.rate.as_deref().and_then(|r| r.sack_rtt_us(now));
                    let head = self
                        .rtx
                        .front()
                        .map(|h| rate::us(now) - rate::us(h.sent_at));
                    if let (Some(s), Some(h), Some(_)) = (sack_rtt, head, cx.timers.rto) {
                        if s > h {
                            cx.timers.rto = Some(cx.timer_at(self.rtt.rto()));
                        }
                    }
                }
            }
            let rtt = self
                .rate
                .as_deref()
                .map(|r| r.rs.rtt_us)
                .filter(|&r| r >= 0);
            let rtt = rtt.map(|us| Dur(us as u64 * 1_000));
            self.cc_pkts_acked(ack, acked_pkts, rtt, now);
        }

        let is_dupack = ack == prior_una
            && seg.payload == 0
            && !seg.has(FIN)
            && !window_changed
            && prior_packets > 0;
        if is_dupack {
            cx.stats.dupacks_rcvd += 1;
        }
        let data_acked = acked_pkts > 0;
        let ece = o.ecn && seg.has(ECE);
        let flags = AckFlags {
            acked_pkts,
            is_dupack,
            ece,
            dubious: !(seg.payload > 0 || window_changed || data_acked)
                || !seg.sacks.is_empty()
                || ece
                || self.ca != CaState::Open,
            data_lost,
            head_timedout: cfg.head_timedout
                && self
                    .rtx
                    .front()
                    .is_some_and(|h| now.saturating_since(h.sent_at) > self.rtt.rto()),
            now,
        };
        if ece {
            cx.stats.ece_rcvd += 1;
        }
        // Linux tcp_may_raise_cwnd: not in Recovery or CWR, and with ECE only in slow start.
        // The 2.2/2.3 FACK sender raises it in Recovery too (`should_advance_cwnd`).
        let may_raise = (!ece || self.win.cwnd < self.win.ssthresh)
            && (!matches!(self.ca, CaState::Recovery | CaState::Cwr)
                || (self.ca == CaState::Recovery && self.linux23(cx)));
        let rdb_may = may_raise && data_acked && prior_packets > 0 && self.frto == 0;
        let rdb_reacted = self.rdb_on_ack(cx, rdb_lost, acked_pkts, rdb_may);
        let may_raise = may_raise && !rdb_reacted;
        // The seeds' F-RTO (RFC 4138) runs beside the state machine; 6.x's is in it.
        let frto_active = self.frto > 0 && !self.k6;
        self.l3_before_alert(cx, ece);
        if prior_packets == 0 {
            // Nothing was outstanding: Linux (`no_queue`) leaves the congestion state alone.
            self.settle_rtt22(cx);
        } else if frto_active {
            self.settle_rtt22(cx);
            self.frto_ack(cx, data_acked, is_dupack);
            self.fastretrans_alert(cx, flags);
        } else {
            if data_acked
                && may_raise
                && !self.ctl
                && !self.k6
                && self.cwnd_gate(cfg, prior_in_flight)
            {
                self.cong_avoid_cc(ack, acked_pkts, now);
            }
            self.settle_rtt22(cx);
            self.fastretrans_alert(cx, flags);
        }
        if prior_packets > 0 && self.rate.is_some() {
            // Linux 4.9+ `tcp_ack`: `tcp_rate_gen`, then `tcp_cong_control`.
            self.rate_gen_and_control(cx);
            if self.k6 && !self.ctl {
                let una_advanced = ack > prior_una;
                self.cong_control_6(
                    cx,
                    ack,
                    data_acked && !frto_active,
                    una_advanced,
                    prior_in_flight,
                );
            }
        }
        let not_dup = seg.payload > 0 || window_changed || data_acked;
        let advanced = ack > prior_una;
        self.l3_ack_end(cx, ack, advanced, not_dup, prior_packets > 0);
        self.update_pacing_rate(cx);

        AckOutcome::Processed
    }

    /// `rto_estimator = "linux22"`: applies this ACK's RTT sample with cwnd as it is now and
    /// rearms the timer by the new RTO (2.2/2.3 `tcp_ack`: `tcp_cong_avoid`, then
    /// `tcp_rtt_estimator` and `tcp_set_rto`, then `tcp_ack_packets_out`).
    fn settle_rtt22(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        let now = cx.now;
        let Some(m) = self.rtt22_pending.take() else {
            return;
        };
        self.rtt.sample22(m, self.win.cwnd);
        cx.timers.rto = self.rtx.front().map(|head| {
            if cfg.rto_timer == RtoTimer::OldestSent && self.retransmits == 0 {
                cx.timer_until((head.sent_at + self.rtt.rto()).max(now))
            } else {
                cx.timer_at(self.rtt.rto())
            }
        });
    }

    /// Marks SACKed segments. The first block is a D-SACK when it lies below the cumulative
    /// ACK or inside the second block (RFC 2883); it marks nothing. Returns whether a block
    /// reaches above `high_seq` (Linux `FLAG_DATA_LOST`, "Event B").
    fn tag_sacks(&mut self, cx: &mut Ctx, seg: &Segment, ack: u64) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        let base = self.iss.wrapping_add(self.snd_una as u32);
        let linux24 = self.linux24(cx);
        let linux23 = self.linux23(cx);
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
                    cx.stats.dsacks_rcvd += 1;
                    self.count_dsack(l, r);
                    continue;
                }
            }
            for (k, s) in self.rtx.iter_mut().enumerate() {
                if s.start >= r {
                    break;
                }
                if (linux24 || linux23) && s.retrans && r > s.rtx_nxt {
                    lost_retrans = lost_retrans.max(r);
                }
                if !s.sacked && s.start >= l && s.end <= r {
                    if let Some(rate) = self.rate.as_deref_mut() {
                        rate.on_delivered(k, s.end, true, false);
                    }
                    self.newly_sacked = true;
                    if cfg.rack && s.end > ack {
                        self.l3
                            .rack
                            .sacked_now
                            .push((s.sent_at, s.end, s.ever_retrans));
                    }
                    self.orig_acked |= !s.ever_retrans && s.end <= self.high_seq;
                    s.set_sacked(&mut self.tally, true);
                    // Linux: a SACKed retransmission stays in flight ("S|R") unless the
                    // original was marked lost.
                    if s.lost || !linux24 {
                        s.set_retrans(&mut self.tally, false);
                    }
                    s.set_lost(&mut self.tally, false);
                }
            }
        }
        // Linux "Event C": a retransmission is lost when data sent `dupthresh` segments after
        // it has been SACKed.
        // 2.2/2.3's FACK sender never retransmits a segment twice in fast recovery (its
        // SACKED_RETRANS tag stays: a lost retransmission means an RTO, seed 001 Figure 13);
        // after an RTO it repairs what SACK shows (it "does not follow the NewReno bugfix").
        let episode = if linux23 {
            self.ca == CaState::Loss
        } else {
            self.ca == CaState::Recovery
        };
        if lost_retrans > 0 && episode {
            let beyond = u64::from(cfg.dupthresh) * u64::from(o.mss);
            for s in self.rtx.iter_mut() {
                if s.start > lost_retrans {
                    break;
                }
                if s.retrans && lost_retrans > s.rtx_nxt && lost_retrans >= s.rtx_nxt + beyond {
                    s.set_retrans(&mut self.tally, false);
                    if !s.sacked {
                        s.set_lost(&mut self.tally, true);
                        self.lost_total += 1;
                    }
                }
            }
        }
        data_lost
    }

    /// Linux 2.4's whole SACK scoreboard (`sack_loss_marking = "linux24"`) is in use.
    #[inline]
    fn linux24(&self, cx: &Ctx) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        cfg.sack_loss_marking == SackLossMarking::Linux24 && o.sack
    }

    /// Linux 4.18+ (`kernel = "linux-6.18"`) with RACK and SACK: RACK alone finds losses, the
    /// RFC 6675 dupthresh rules are off (`tcp_recovery = 1`, "tcp: disable RFC6675 loss
    /// detection").
    #[inline]
    pub(super) fn rack_only(&self, cx: &Ctx) -> bool {
        self.k6 && cx.cfg.rack && cx.o.sack
    }

    /// The 2.2/2.3 FACK sender (`sack_loss_marking = "linux23"`) with SACK in use.
    fn linux23(&self, cx: &Ctx) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        cfg.sack_loss_marking == SackLossMarking::Linux23 && o.sack
    }

    /// 2.2/2.3 `tcp_fack_retransmit`'s choice: every segment below the highest SACKed one that
    /// is neither SACKed nor retransmitted is lost.
    fn mark_fack_holes_lost(&mut self) {
        let fackets = self.fackets_out() as usize;
        for s in self.rtx.iter_mut().take(fackets) {
            if !s.sacked && !s.retrans {
                self.lost_total += u64::from(!s.lost);
                s.set_lost(&mut self.tally, true);
            }
        }
    }

    /// Linux `fackets_out`: segments from the head up to the highest SACKed one.
    fn fackets_out(&self) -> u32 {
        if self.tally().sacked == 0 {
            return 0;
        }
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
                s.set_lost(&mut self.tally, true);
                self.lost_total += 1;
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Undo.

    /// A D-SACK for [l, r): a retransmission that was not needed (Linux `tcp_sacktag_write_queue`,
    /// including its "dumb counting" for data already acknowledged).
    fn count_dsack(&mut self, l: u64, r: u64) {
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
    fn may_undo(&self, cfg: &TcpConfig) -> bool {
        if !cfg.undo || self.undo_marker.is_none() {
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
    fn undo_cwnd(&mut self, cx: &mut Ctx, restore_ssthresh: bool) {
        cx.stats.undos += 1;
        if self.prior_ssthresh > 0 {
            self.win.cwnd = self.undo_cwnd_value();
            // (Linux: the doubled reduced ssthresh approximates the cwnd before the loss.)
            if restore_ssthresh && self.prior_ssthresh > self.win.ssthresh {
                self.win.ssthresh = self.prior_ssthresh;
            }
        } else if !self.ctl && !self.k6 {
            self.win.cwnd = self.win.cwnd.max(self.win.ssthresh);
        }
        self.undo_marker = None;
    }

    /// On a full ACK in Recovery or Loss (Linux `tcp_try_undo_recovery`).
    fn try_undo_recovery(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        if self.may_undo(cfg) {
            self.undo_cwnd(cx, true);
        }
    }

    /// On each ACK in Loss (Linux `tcp_try_undo_loss`): a spurious RTO stops go-back-N.
    fn try_undo_loss(&mut self, cx: &mut Ctx) -> bool {
        let cfg = cx.cfg;
        if !self.may_undo(cfg) {
            return false;
        }
        self.undo_loss(cx);
        self.ca = CaState::Open;
        true
    }

    /// Linux `tcp_undo_cwnd_reduction(sk, true)` from Loss: the lost marks go, cwnd and
    /// ssthresh come back, the timeouts are forgotten.
    fn undo_loss(&mut self, cx: &mut Ctx) {
        for s in self.rtx.iter_mut() {
            s.set_lost(&mut self.tally, false);
        }
        self.undo_cwnd(cx, true);
        self.retransmits = 0;
    }

    /// On a partial ACK in Recovery (Linux `tcp_try_undo_partial`): the hole was filled by a
    /// delayed original. ssthresh is kept.
    fn try_undo_partial(&mut self, cx: &mut Ctx) -> bool {
        let cfg = cx.cfg;
        if !self.may_undo(cfg) {
            return false;
        }
        if self.retrans_out() == 0 {
            self.retrans_stamp = None;
        }
        self.undo_cwnd(cx, false);
        true
    }

    /// In Disorder (Linux `tcp_try_undo_dsack`).
    fn try_undo_dsack(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        if cfg.undo && self.undo_marker.is_some() && self.undo_retrans <= 0 {
            self.undo_cwnd(cx, true);
        }
    }

    /// Whether `next_segment`, the loss probe and the end of the transmission round have
    /// nothing to do: no probe asked for, no round open, nothing unsent (the FIN included), not
    /// in Recovery (no forward retransmission) and no segment waiting for its retransmission.
    #[inline]
    pub(super) fn nothing_to_send(&self) -> bool {
        self.app_bytes < self.snd_nxt
            && !self.l3.probe_rtx
            && !self.l3.round_open
            && (!self.fin_queued || self.fin_sent)
            && self.ca != CaState::Recovery
            && self.first_waiting().is_none()
    }

    /// The first segment marked lost whose retransmission has not gone yet; without a walk of
    /// the queue while none is marked lost (the common case).
    #[inline]
    fn first_waiting(&self) -> Option<usize> {
        if self.lost_out() == 0 {
            return None;
        }
        self.rtx
            .iter()
            .position(|s| s.lost && !s.retrans && !s.sacked)
    }

    /// The peer's window, and the largest it has offered (Linux `tcp_ack_update_window`).
    pub(super) fn set_snd_wnd(&mut self, wnd: u32) {
        self.snd_wnd = wnd;
        self.max_window = self.max_window.max(wnd);
    }

    /// Bytes written and not yet sent.
    pub(super) fn unsent(&self) -> u64 {
        (self.app_bytes + 1).saturating_sub(self.snd_nxt)
    }

    // -----------------------------------------------------------------------------------------
    // F-RTO.

    /// F-RTO (draft-sarolahti-tsvwg-tcp-frto / RFC 4138 §2.1, basic algorithm, as seeds 000 and
    /// 002 describe it): after the RTO retransmission, two ACKs that advance the window mean
    /// the RTO was spurious: continue with new data and cwnd = ssthresh. A duplicate ACK means
    /// it was genuine: go back to conventional recovery.
    fn frto_ack(&mut self, cx: &mut Ctx, data_acked: bool, is_dupack: bool) {
        let o = cx.o;
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
                    if !self.ctl {
                        self.win.cwnd = self.in_flight(o) + 2;
                    }
                }
            }
            1 if is_dupack => self.frto_conventional(None),
            2 if data_acked => {
                // Step 3b: spurious. No undo: the halved ssthresh stays (seed 000 A.2.5).
                self.frto = 0;
                cx.stats.spurious_rtos += 1;
                for s in self.rtx.iter_mut() {
                    s.set_lost(&mut self.tally, false);
                }
                if !self.ctl {
                    self.win.cwnd = self.win.ssthresh;
                }
                self.retransmits = 0;
                self.ca = CaState::Open;
            }
            2 if is_dupack => self.frto_conventional(Some(3)),
            _ => {}
        }
    }

    /// F-RTO gives up: every segment sent before the RTO and not SACKed is lost (go-back-N).
    fn frto_conventional(&mut self, cwnd: Option<u32>) {
        self.frto = 0;
        let high = self.high_seq;
        for s in self.rtx.iter_mut() {
            if !s.sacked && !s.retrans && s.end <= high {
                self.lost_total += u64::from(!s.lost);
                s.set_lost(&mut self.tally, true);
            }
        }
        if let (Some(c), false) = (cwnd, self.ctl) {
            self.win.cwnd = c;
        }
    }

    /// Linux 6.x `tcp_process_loss` (F-RTO as RFC 5682's SACK-enhanced version, sec. 3.1):
    /// an ACK in Loss. Returns whether Loss ended (the state machine goes on from Open).
    /// - An ACK that (s)acknowledges a segment never retransmitted and sent before `high_seq`
    ///   shows the RTO spurious (step 3b): undo, whatever `undo` says (`tcp_try_undo_loss`
    ///   with `frto_undo`): the lost marks go, cwnd = max(cwnd, prior cwnd), ssthresh back.
    /// - The first ACK that advances snd_una lets new data out instead of retransmissions
    ///   (step 2b), with `high_seq` moved to snd_nxt; a duplicate or SACKing ACK after that
    ///   means the loss was real (step 3a), and go-back-N goes on.
    fn process_loss_6(&mut self, cx: &mut Ctx, f: &AckFlags) -> bool {
        let o = cx.o;
        let advanced = f.data_acked();
        let recovered = self.snd_una >= self.high_seq;
        if advanced && self.try_undo_loss(cx) {
            return true;
        }
        if self.frto > 0 {
            if self.orig_acked {
                self.frto_undo_6(cx);
                return self.ca == CaState::Open;
            }
            if self.snd_nxt > self.high_seq {
                if self.newly_sacked || f.is_dupack {
                    self.frto = 0; // step 3a: the loss was real
                }
            } else if advanced && !recovered {
                self.high_seq = self.snd_nxt;
                if self.unsent() > 0 && self.snd_una + u64::from(self.snd_wnd) > self.snd_nxt {
                    self.frto_new_only = true; // step 2b
                    return false;
                }
                self.frto = 0;
            }
        }
        if recovered {
            // Step 2a and the first part of 3a (`tcp_try_undo_recovery`).
            self.retransmits = 0;
            self.try_undo_recovery(cx);
            self.frto = 0;
            self.ca = CaState::Open;
            return true;
        }
        if !o.sack {
            // A Reno duplicate ACK after step 2b means new data arrived: one less in flight.
            if self.snd_nxt > self.high_seq && f.is_dupack {
                self.reno_sacked = (self.reno_sacked + 1).min(self.packets_out().saturating_sub(1));
            } else if advanced {
                self.reno_sacked = 0;
            }
        }
        false
    }

    /// 6.x `tcp_try_undo_loss(sk, true)`: the RTO was spurious.
    fn frto_undo_6(&mut self, cx: &mut Ctx) {
        let o = cx.o;
        cx.stats.spurious_rtos += 1;
        self.undo_loss(cx);
        self.frto = 0;
        // `tcp_is_non_sack_preventing_reopen`: without SACK, Loss is held while snd_una
        // sits at high_seq with a retransmission out (its ACK may be a duplicate's).
        if o.sack || self.snd_una != self.high_seq || self.retrans_out() == 0 {
            self.ca = CaState::Open;
        }
    }

    // -----------------------------------------------------------------------------------------
    // The congestion state machine.

    /// Linux `tcp_fastretrans_alert` with rate halving off.
    fn fastretrans_alert(&mut self, cx: &mut Ctx, f: AckFlags) {
        let cfg = cx.cfg;
        let o = cx.o;
        let (data_acked, acked_pkts, is_dupack, ece) =
            (f.data_acked(), f.acked_pkts, f.is_dupack, f.ece);
        if self.ca == CaState::Open {
            self.retrans_stamp = None;
        }
        if ece {
            self.prior_ssthresh = 0; // a reduction the network asked for is never undone
        }
        let th = cfg.dupthresh;
        if self.linux24(cx)
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
            CaState::Loss if self.k6 => {
                if !self.process_loss_6(cx, &f) {
                    return;
                }
            }
            CaState::Loss => {
                if self.snd_una >= self.high_seq {
                    self.retransmits = 0;
                    self.try_undo_recovery(cx);
                    self.ca = CaState::Open;
                } else if !self.try_undo_loss(cx) {
                    self.moderate_cwnd(cx);
                    return; // keep retransmitting in slow start
                }
            }
            CaState::Recovery => {
                if self.snd_una >= self.high_seq {
                    self.try_undo_recovery(cx);
                    let cwnd_undone = self.win.cwnd;
                    // Full ACK: Linux tcp_complete_cwr, or seed 001's FlightSize + 1 (an
                    // algorithm with its own `cong_control` keeps its cwnd: Linux 4.9+
                    // `tcp_end_cwnd_reduction`).
                    if !self.ctl {
                        self.win.cwnd = match cfg.recovery_exit {
                            // The 2.2/2.3 FACK sender's `clear_fast_retransmit`: cwnd =
                            // ssthresh (after more than 3 duplicate ACKs, as always here).
                            _ if self.linux23(cx) => self.win.ssthresh,
                            RecoveryExit::Ssthresh => self.win.cwnd.min(self.win.ssthresh),
                            RecoveryExit::FlightPlusOneKeepFour if self.keep_four => 4,
                            RecoveryExit::FlightPlusOne | RecoveryExit::FlightPlusOneKeepFour => {
                                self.packets_out() + 1
                            }
                        };
                        if cfg.prr {
                            self.prr_end_recovery(cwnd_undone);
                        }
                    }
                    self.ca = CaState::Open;
                    self.reno_sacked = 0;
                } else {
                    let mut undone_partial = false;
                    if data_acked {
                        let undone = self.try_undo_partial(cx);
                        undone_partial = undone;
                        // Partial ACK (RFC 2582): without SACK the next hole is the head.
                        if !o.sack {
                            self.reno_sacked = self
                                .reno_sacked
                                .saturating_sub(acked_pkts.saturating_sub(1));
                            if !undone {
                                self.mark_head_lost();
                            }
                        }
                    } else if is_dupack && !o.sack {
                        self.reno_sacked =
                            (self.reno_sacked + 1).min(self.packets_out().saturating_sub(1));
                    }
                    if self.linux23(cx) {
                        // 2.2/2.3 `tcp_fast_retrans`: `tcp_fack_retransmit` on every further
                        // duplicate ACK and partial ACK; cwnd is not deflated.
                        self.mark_fack_holes_lost();
                        return;
                    }
                    if self.linux24(cx) {
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
                    } else if o.sack && !self.rack_only(cx) {
                        self.mark_lost_by_sack(cfg);
                    }
                    self.rack_mark_lost(cx);
                    if f.head_timedout {
                        self.mark_timed_out_lost(f.now);
                    }
                    self.cwnd_down(cx);
                    return;
                }
            }
            CaState::Cwr => {
                // Linux holds CWR until something above high_seq is acknowledged, so that the
                // CWR flag has reached the receiver.
                if self.snd_una > self.high_seq {
                    if !self.ctl {
                        self.win.cwnd = self.win.cwnd.min(self.win.ssthresh);
                        if cfg.prr {
                            self.win.cwnd = self.win.ssthresh; // 3.16 tcp_end_cwnd_reduction
                        }
                    }
                    self.ca = CaState::Open;
                }
            }
            CaState::Disorder => self.try_undo_dsack(cx),
            CaState::Open => {}
        }
        // Open, Disorder or CWR.
        if is_dupack {
            self.dupacks += 1;
        }
        if self.rack_mark_lost(cx)
            || self.time_to_recover(cx)
            || (f.head_timedout && f.dubious)
            || self.early_retransmit_due(cx)
        {
            self.enter_recovery(cx, is_dupack || f.head_timedout);
            if f.head_timedout {
                self.mark_timed_out_lost(f.now);
            }
            self.cwnd_down(cx);
        } else if ece && self.ca != CaState::Cwr {
            self.enter_cwr(cx);
            self.cwnd_down(cx);
        } else if self.ca == CaState::Cwr {
            self.cwnd_down(cx);
        } else {
            // Linux tcp_try_to_open.
            self.ca = if self.dupacks > 0 || self.sacked_out(o) > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            if f.dubious {
                self.moderate_cwnd(cx);
            }
        }
    }

    /// Linux `tcp_moderate_cwnd`: at most `max_burst` segments leave on one ACK.
    fn moderate_cwnd(&mut self, cx: &Ctx) {
        let cfg = cx.cfg;
        let o = cx.o;
        if cfg.max_burst > 0 && !self.ctl {
            self.win.cwnd = self.win.cwnd.min(self.in_flight(o) + cfg.max_burst);
        }
    }

    /// Linux 2.4 `tcp_cwnd_down` (rate halving), on every ACK in Recovery and CWR: one segment
    /// less per two ACKs, down to ssthresh/2, and never more than in_flight + 1.
    fn cwnd_down(&mut self, cx: &Ctx) {
        let cfg = cx.cfg;
        let o = cx.o;
        if self.ctl || self.k6 {
            // Linux 4.9+ `tcp_cong_control`: the algorithm's own, or (6.x) PRR after the
            // alert (`cong_control_6`).
            return;
        }
        if cfg.prr {
            self.prr_reduction(o);
            return;
        }
        if !cfg.rate_halving {
            // The IIP patch's "no rate halving" (seed 000): cwnd fell to ssthresh at entry, and
            // with `flight_cap` the last line of `tcp_cwnd_down` still applies.
            if cfg.flight_cap {
                self.win.cwnd = self.win.cwnd.min(self.in_flight(o) + 1).max(1);
            }
            return;
        }
        let decr = self.win.cnt + 1;
        self.win.cnt = decr & 1;
        let decr = decr >> 1;
        if decr > 0 && self.win.cwnd > self.win.ssthresh / 2 {
            self.win.cwnd -= decr;
        }
        self.win.cwnd = self.win.cwnd.min(self.in_flight(o) + 1).max(1);
    }

    /// ECN echo (Linux `tcp_enter_cwr`, RFC 3168 §6.1.2): halve once per window. With rate
    /// halving off, cwnd drops to ssthresh at once.
    fn enter_cwr(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        cx.stats.ecn_reductions += 1;
        self.prior_ssthresh = 0;
        self.prr_enter_cwr();
        self.win.ssthresh = self.recalc_ssthresh(cfg);
        if !cfg.rate_halving && !cfg.prr && !self.ctl {
            self.win.cwnd = self.win.cwnd.min(self.win.ssthresh);
        }
        self.win.cnt = 0;
        self.high_seq = self.snd_nxt;
        self.cwr_pending = true;
        self.ca = CaState::Cwr;
    }

    // -----------------------------------------------------------------------------------------
    // Retransmission timeout.

    /// The retransmission timer expired with data outstanding (Linux `tcp_retransmit_timer`).
    /// Returns `false` when `retries2` timeouts without progress mean giving up.
    /// `established`: the thin-stream linear timeouts apply only in ESTABLISHED.
    pub(super) fn on_rto(&mut self, cx: &mut Ctx, established: bool) -> bool {
        let cfg = cx.cfg;
        if self.retransmits >= cfg.retries2 {
            return false;
        }
        // F-RTO only for a first timeout, not when already recovering from one
        // (RFC 4138 §2.1 step 1). 6.x `tcp_enter_loss`: from Open, Disorder or CWR, or a
        // timeout again in the same episode (`icsk_retransmits`); its segments stay marked.
        let frto = cfg.frto && self.ca != CaState::Loss;
        let frto6 = cfg.frto
            && (matches!(self.ca, CaState::Open | CaState::Disorder | CaState::Cwr)
                || self.retransmits > 0);
        self.enter_loss(cx);
        self.cc_on_loss(cx);
        if self.k6 {
            self.frto = u8::from(frto6);
        } else if frto {
            // Only the first segment is retransmitted until two ACKs have been seen.
            for s in self.rtx.iter_mut().skip(1) {
                s.set_lost(&mut self.tally, false);
            }
            self.frto = 1;
        }
        // As in Linux, the thin-stream test comes after tcp_enter_loss (so the first
        // slow start has ended by then).
        let thin = self.is_thin();
        // The RTO retransmission goes whatever the window says (Linux
        // tcp_retransmit_timer retransmits the head itself).
        self.force_head_rtx = true;
        if cfg.thin_linear_timeouts && thin && established && self.retransmits <= 6 {
            self.rtt.unbacked(); // linear timeouts (TCP_THIN_LINEAR_RETRIES = 6)
        } else {
            self.rtt.backoff();
        }
        cx.timers.rto = Some(cx.timer_at(self.rtt.rto()));
        true
    }

    /// RTO: go-back-N in slow start (Linux `tcp_enter_loss`). Every segment not SACKed is
    /// marked lost, so retransmissions precede new data; ssthresh is reduced only once for a
    /// run of back-to-back expiries.
    fn enter_loss(&mut self, cx: &mut Ctx) {
        let cfg = cx.cfg;
        let o = cx.o;
        cx.stats.rtos += 1;
        if matches!(self.ca, CaState::Open | CaState::Disorder)
            || self.snd_una == self.high_seq
            || (self.ca == CaState::Loss && self.retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            if self.k6 {
                self.l3.prior_cwnd = self.win.cwnd; // 6.x `tcp_enter_loss`, for the undo
            }
            self.win.ssthresh = self.recalc_ssthresh(cfg);
        }
        self.win.cwnd = 1;
        self.win.cnt = 0;
        // Undo is possible only if nothing outstanding was retransmitted before.
        self.undo_marker = (!self.rtx.iter().any(|s| s.ever_retrans)).then_some(self.snd_una);
        self.undo_retrans = 0;
        self.frto = 0;
        self.frto_new_only = false;
        self.cwr_pending = o.ecn;
        // 2.3 `tcp_retransmit_timer` clears the SACK tags ("the sender may have dropped out of
        // order frames", RFC 2018); 2.4 keeps them.
        let clear = self.linux23(cx);
        for s in self.rtx.iter_mut() {
            let was = !s.lost || s.retrans;
            s.set_retrans(&mut self.tally, false);
            if clear {
                s.set_sacked(&mut self.tally, false);
            }
            if !s.sacked {
                s.set_lost(&mut self.tally, true);
                self.lost_total += u64::from(was);
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
    fn current_ssthresh(&self) -> u32 {
        self.win
            .ssthresh
            .max((self.win.cwnd >> 1) + (self.win.cwnd >> 2))
    }

    pub(super) fn recalc_ssthresh(&mut self, cfg: &TcpConfig) -> u32 {
        if let Some(s) = self.rdb_ssthresh(cfg) {
            return s; // RDBv2's module ssthresh (rdb.rs)
        }
        let flight = (self.rtx.len() as u32).saturating_sub(self.lt_sent);
        self.cc.ssthresh(&self.win, flight)
    }

    // -----------------------------------------------------------------------------------------
    // Scoreboard.

    #[inline]
    pub(super) fn packets_out(&self) -> u32 {
        self.rtx.len() as u32
    }
    #[inline]
    pub(super) fn sacked_out(&self, o: &Negotiated) -> u32 {
        if o.sack {
            self.tally().sacked
        } else {
            self.reno_sacked
        }
    }
    #[inline]
    pub(super) fn lost_out(&self) -> u32 {
        self.tally().lost
    }
    #[inline]
    pub(super) fn retrans_out(&self) -> u32 {
        self.tally().retrans
    }
    /// Linux `tcp_packets_in_flight`.
    #[inline]
    pub(super) fn in_flight(&self, o: &Negotiated) -> u32 {
        let n = self.tally();
        let sacked = if o.sack { n.sacked } else { self.reno_sacked };
        (self.packets_out() + n.retrans).saturating_sub(sacked + n.lost)
    }
    /// The kept counts of the tags; a debug build checks them against the queue.
    #[inline]
    fn tally(&self) -> Tally {
        debug_assert_eq!(self.tally, Tally::of(&self.rtx), "the tag counts drifted");
        self.tally
    }

    /// RFC 3517 IsLost for segment `i`: `dupthresh` SACKed segments above it; with FACK, the
    /// highest SACKed segment is `dupthresh` or more segments above it.
    fn is_lost(&self, cfg: &TcpConfig, i: usize) -> bool {
        let th = cfg.dupthresh as usize;
        if cfg.fack {
            let fack = self.rtx.iter().rposition(|s| s.sacked);
            fack.is_some_and(|f| f >= i + th)
        } else {
            // Fewer than `th` SACKed in the whole queue: none to count above `i`.
            (self.tally().sacked as usize) >= th
                && self.rtx.iter().skip(i + 1).filter(|s| s.sacked).count() >= th
        }
    }

    /// Marks holes lost by the SACK rule (RFC 3517 or FACK; or, with `sack_loss_marking =
    /// "head"`, Linux 2.4 without FACK: only the first unacknowledged segment, in Recovery).
    fn mark_lost_by_sack(&mut self, cfg: &TcpConfig) {
        if cfg.sack_loss_marking == SackLossMarking::Head {
            if self.ca == CaState::Recovery {
                self.mark_head_lost();
            }
            return;
        }
        let th = cfg.dupthresh as usize;
        let fack = self.rtx.iter().rposition(|s| s.sacked);
        let mut above = 0usize;
        for i in (0..self.rtx.len()).rev() {
            let s = &mut self.rtx[i];
            if s.sacked {
                above += 1;
            } else if !s.lost {
                let lost = if cfg.fack {
                    fack.is_some_and(|f| f >= i + th)
                } else {
                    above >= th
                };
                if lost {
                    s.set_lost(&mut self.tally, true);
                    self.lost_total += 1;
                }
            }
        }
    }

    /// Linux 2.4 `tcp_update_scoreboard`'s timeout rule (`head_timedout`): every segment not
    /// SACKed and last sent more than one RTO ago is lost.
    fn mark_timed_out_lost(&mut self, now: Time) {
        let rto = self.rtt.rto();
        for s in self.rtx.iter_mut() {
            if !s.sacked && !s.lost && !s.retrans && now.saturating_since(s.sent_at) > rto {
                s.set_lost(&mut self.tally, true);
                self.lost_total += 1;
            }
        }
    }

    fn mark_head_lost(&mut self) {
        if let Some(h) = self.rtx.front_mut() {
            if !h.sacked && !h.lost {
                h.set_lost(&mut self.tally, true);
                h.set_retrans(&mut self.tally, false);
                self.lost_total += 1;
            }
        }
    }

    /// Linux `tcp_stream_is_thin`: fewer than 4 segments out, and not in the first slow start.
    #[inline]
    fn is_thin(&self) -> bool {
        self.packets_out() < 4 && self.win.ssthresh < SSTHRESH_INFINITE
    }

    /// Linux `tcp_time_to_recover`, with RFC 3517's trigger instead of the FACK count unless
    /// FACK is on.
    #[inline]
    fn time_to_recover(&self, cx: &Ctx) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        if cfg.newreno_careful && self.send_high.is_some_and(|h| self.snd_una <= h) {
            // RFC 2582 §6 Careful: dupacks that do not cover more than send_high are from
            // segments retransmitted by the RTO; no fast retransmit.
            return false;
        }
        if self.rtx.is_empty() {
            return false;
        }
        if cfg.thin_dupack && o.sack && self.is_thin() && self.unsent() == 0 {
            // Linux tcp_dupack_heuristics: fackets_out with FACK, else sacked_out + 1.
            let heur = if cfg.fack {
                self.rtx.iter().rposition(|s| s.sacked).map_or(0, |f| f + 1) as u32
            } else {
                self.sacked_out(o) + 1
            };
            if heur > 1 {
                return true;
            }
        }
        if self.linux23(cx) {
            // 2.2/2.3: `(tp->fackets_out > 3) || (tp->dup_acks == 3)`.
            return self.dupacks >= cfg.dupthresh || self.fackets_out() > cfg.dupthresh;
        }
        if self.linux24(cx) {
            // Trick#1 and the classic rule on fackets_out (Trick#3 is `head_timedout`).
            return self.lost_out() > 0 || self.fackets_out() > cfg.dupthresh;
        }
        if self.rack_only(cx) {
            // Linux 4.18+ with RACK (`tcp_recovery = 1`): only what RACK marked lost.
            return self.lost_out() > 0;
        }
        self.dupacks >= cfg.dupthresh || (o.sack && self.is_lost(cfg, 0))
    }

    /// `dupack`: the ACK that starts it is a duplicate (or the head timed out); Linux marks the
    /// head lost only then (`tcp_update_scoreboard`), which matters with `linux24` marking.
    pub(super) fn enter_recovery(&mut self, cx: &mut Ctx, dupack: bool) {
        let cfg = cx.cfg;
        let o = cx.o;
        cx.stats.fast_retransmits += 1;
        self.prr_enter_recovery(self.ca == CaState::Cwr);
        self.high_seq = self.snd_nxt;
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = i64::from(self.retrans_out());
        // From CWR the window was already halved for this episode (Linux).
        if self.ca != CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.win.ssthresh = self.recalc_ssthresh(cfg);
        }
        self.cwr_pending = o.ecn;
        self.keep_four =
            cfg.recovery_exit == RecoveryExit::FlightPlusOneKeepFour && self.win.cwnd == 4;
        // Rate halving off (the seeds' IIP patch): cwnd is reduced at once; on, it shrinks
        // one segment per two ACKs from here (`cwnd_down`).
        if !cfg.rate_halving && !cfg.prr && !self.ctl {
            self.win.cwnd = self.win.ssthresh;
        }
        self.win.cnt = 0;
        self.ca = CaState::Recovery;
        if !o.sack {
            self.reno_sacked = self.dupacks.min(self.packets_out().saturating_sub(1));
        }
        if self.linux23(cx) {
            // 2.2/2.3: cwnd = ssthresh + 3 and `tcp_fack_retransmit` (the head first).
            self.win.cwnd = self.win.ssthresh + 3;
            self.mark_head_lost();
            self.force_head_rtx = true;
            self.mark_fack_holes_lost();
            return;
        }
        if self.linux24(cx) {
            // Linux 2.4 marks the head on a duplicate ACK, and retransmits it only once
            // in_flight < cwnd (`tcp_xmit_retransmit_queue`); nothing forces it.
            if dupack {
                self.mark_head_untagged_lost(1);
            }
            return;
        }
        if self.rack_only(cx) {
            // Linux 4.18+: RACK marked what is lost; PRR lets the first one go.
            return;
        }
        // RFC 3517 (4.3) and Linux: the first unacknowledged segment is retransmitted.
        self.mark_head_lost();
        self.force_head_rtx = true;
        if o.sack {
            self.mark_lost_by_sack(cfg);
        }
    }

    // -----------------------------------------------------------------------------------------
    // What goes out next.

    /// The next data segment to send now (`new_data`: the state lets new data go).
    /// Retransmissions of segments marked lost come first (Linux `tcp_xmit_retransmit_queue`);
    /// new data only when none is waiting.
    #[inline]
    pub(super) fn next_segment(&mut self, cx: &mut Ctx, new_data: bool) -> Option<Outgoing> {
        let o = cx.o;
        if self.frto_new_only {
            // 6.x `tcp_xmit_recovery` with REXMIT_NEW: new data; if none could go, F-RTO
            // gives up and the lost segments are retransmitted.
            if new_data {
                if let Some(p) = self.send_new(cx) {
                    return Some(self.rdb_new_segment(cx, p));
                }
            }
            if self.snd_nxt > self.high_seq {
                return None;
            }
            self.frto_new_only = false;
            self.frto = 0;
        }
        if let Some(i) = self.first_waiting() {
            let forced = i == 0 && self.force_head_rtx;
            if !forced
                && (self.in_flight(o) >= self.win.cwnd || (self.pace.on && self.pace_wait(cx)))
            {
                return None;
            }
            self.force_head_rtx &= !forced;
            let out = self.retransmit(cx, i);
            return Some(self.rdb_retransmit(cx, out));
        }
        if new_data {
            if let Some(p) = self.send_new(cx) {
                return Some(self.rdb_new_segment(cx, p));
            }
        }
        self.forward_retransmit(cx)
            .map(|out| self.rdb_retransmit(cx, out))
    }

    /// Linux 2.4 `tcp_xmit_retransmit_queue`'s second pass (`linux24` marking): in Recovery,
    /// when no new segment may go, the first hole below the highest SACK that has no tag is
    /// retransmitted, while in_flight < cwnd.
    #[inline]
    fn forward_retransmit(&mut self, cx: &mut Ctx) -> Option<Outgoing> {
        let cfg = cx.cfg;
        let o = cx.o;
        if self.ca != CaState::Recovery
            || !o.sack
            || cfg.sack_loss_marking != SackLossMarking::Linux24
            || self.in_flight(o) >= self.win.cwnd
        {
            return None;
        }
        if self.pace.on && self.pace_wait(cx) {
            return None;
        }
        let fackets = self.fackets_out() as usize;
        let i = self
            .rtx
            .iter()
            .take(fackets)
            .position(|s| !s.sacked && !s.lost && !s.retrans)?;
        Some(self.retransmit(cx, i))
    }

    /// Sends segment `i` of the retransmission queue again.
    #[inline]
    fn retransmit(&mut self, cx: &mut Ctx, i: usize) -> Outgoing {
        let now = cx.now;
        let snd_nxt = self.snd_nxt;
        let in_flight_before = if self.ctl || self.k6 {
            self.in_flight(cx.o)
        } else {
            1
        };
        let gso = self.k6.then(|| self.rtx_packet_room(i, in_flight_before));
        let (start, payload, fin) = {
            let s = &mut self.rtx[i];
            s.set_retrans(&mut self.tally, true);
            s.ever_retrans = true;
            s.sent_at = now;
            s.rtx_nxt = snd_nxt;
            (s.start, s.payload(), s.fin)
        };
        cx.stats.retransmits += 1;
        self.last_xmit = now;
        if self.pace.on {
            self.pace_sent(cx, payload, 1);
        }
        if self.rate.is_some() {
            self.rate_sent(cx, Some(i), in_flight_before);
        }
        self.prr_on_retransmit();
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(ms_stamp(now));
        }
        self.undo_retrans += 1;
        if i == 0 {
            cx.timers.rto = Some(cx.timer_at(self.rtt.rto()));
        }
        let psh = match gso {
            Some((room, last)) => {
                let end = start + u64::from(payload);
                payload > 0 && self.gso.on_segment(start, end, room, last).0
            }
            None => payload > 0,
        };
        let flags = ACK | if fin { FIN } else { 0 } | if psh { PSH } else { 0 };
        // Retransmissions are never ECT (RFC 3168 §6.1.5).
        Outgoing {
            flags,
            seq: start,
            payload,
            ect: false,
        }
    }

    /// 6.x: the segments an skb takes (`tcp_tso_autosize` at the pacing rate).
    pub(super) fn tso_goal(&self, mss: u32) -> u32 {
        let rate = self.pace.rate;
        tso_autosize(rate, mss, self.cc.min_tso_segs(rate))
    }

    /// 6.x: how a retransmission of segment `i` goes (`gso.rs`): the segments its packet may
    /// take if it starts one (those from `i` on that wait and went in the same packet first,
    /// at most cwnd − in flight), and whether `i` ended that packet.
    fn rtx_packet_room(&self, i: usize, in_flight: u32) -> (u32, bool) {
        let quota = self.win.cwnd.saturating_sub(in_flight).max(1);
        let mut n = 0;
        for s in self.rtx.iter().skip(i) {
            if !s.lost || s.retrans || s.sacked {
                break;
            }
            n += 1;
            if s.pkt_end {
                break;
            }
        }
        (n.min(quota), self.rtx[i].pkt_end)
    }

    /// Linux `tcp_slow_start_after_idle_check` / `tcp_cwnd_restart` (RFC 2861): data written
    /// with nothing outstanding after more than an RTO without sending restarts the window:
    /// ssthresh keeps 3/4 of cwnd (`tcp_current_ssthresh`), and cwnd halves once per RTO idle
    /// beyond the first, down to the initial window. Once per idle period.
    fn restart_after_idle(&mut self, now: Time, iw: u32) {
        if self.idle_checked == self.last_send {
            return;
        }
        self.idle_checked = self.last_send;
        let rto = self.rtt.rto();
        let idle = now.saturating_since(self.last_send);
        if idle <= rto || rto == Dur::ZERO {
            return;
        }
        let cwnd = self.win.cwnd;
        if !matches!(self.ca, CaState::Cwr | CaState::Recovery) {
            self.win.ssthresh = self.win.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
        }
        let restart = iw.min(cwnd);
        let mut c = cwnd;
        let mut left = idle.0 - rto.0;
        while left > 0 && c > restart {
            c >>= 1;
            left = left.saturating_sub(rto.0);
        }
        self.win.cwnd = c.max(restart);
    }

    /// A new segment, cut now: full MSS unless less is written, whole into the peer's window.
    #[inline]
    fn send_new(&mut self, cx: &mut Ctx) -> Option<Outgoing> {
        let cfg = cx.cfg;
        let o = cx.o;
        let now = cx.now;
        let data_end = self.app_bytes + 1; // offset just past the last written byte
        let unsent = data_end.saturating_sub(self.snd_nxt);
        let fin_due = self.fin_queued && !self.fin_sent;
        if unsent == 0 && !fin_due {
            return None;
        }
        if cfg.slow_start_after_idle && self.rtx.is_empty() && !self.ctl {
            self.restart_after_idle(now, cfg.iw_segments(o.mss));
        }
        // Linux `tcp_write_xmit`: the pacing check comes first, before cwnd's.
        if self.pace.on && self.pace_wait(cx) {
            return None;
        }
        let mut len = unsent.min(u64::from(o.mss));
        let mut skb_end = data_end;
        if self.k6 {
            // A segment never spans two skbs (`gso.rs`).
            skb_end = self
                .gso
                .skb_end(self.snd_nxt, data_end, self.tso_goal(o.mss), o.mss);
            len = len.min(skb_end - self.snd_nxt);
        }
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
        if !fin && !self.cwnd_allows_new(cx) {
            self.on_cwnd_blocked();
            if !self.l3.probe_new {
                return None;
            }
        }
        if self.k6 && !fin && (self.tso_deferred || self.tso_defers(cx, data_end, room)) {
            // Until this connection's next ACK, timer or write calls `tcp_write_xmit` again.
            self.tso_deferred = true;
            self.on_cwnd_blocked();
            return None;
        }
        if len < u64::from(o.mss) && !fin && cfg.nagle && !self.rtx.is_empty() && !self.l3.probe_new
        {
            return None; // Nagle: a small segment waits while data is unacknowledged
        }
        if matches!(self.ca, CaState::Open | CaState::Disorder | CaState::Cwr)
            && self.packets_out() >= self.win.cwnd
        {
            self.lt_sent += 1;
        }
        let start = self.snd_nxt;
        let end = start + len + u64::from(fin);
        let in_flight_before = if self.ctl || self.k6 {
            self.in_flight(o)
        } else {
            1
        };
        let (psh, pkt_end) = if self.k6 {
            let room = if self.gso.continues_at(start) {
                0
            } else {
                // `tcp_mss_split_point`: the quota, the skb's size goal and the window.
                let mss = u64::from(o.mss.max(1));
                let in_skb = (skb_end - start).div_ceil(mss) as u32;
                let in_wnd = (room / mss).max(1) as u32;
                super::gso::cwnd_quota(self.win.cwnd, in_flight_before)
                    .min(self.tso_goal(o.mss))
                    .min(in_skb)
                    .min(in_wnd)
            };
            let (psh, pkt_end) =
                self.gso
                    .on_segment(start, start + len, room, start + len >= skb_end);
            (psh && len > 0, pkt_end)
        } else {
            (len > 0, true)
        };
        self.rtx_pkts += u32::from(pkt_end);
        self.last_xmit = now;
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
            rdb_start: 0,
            pkt_end,
        });
        self.snd_nxt = end;
        if fin {
            self.fin_sent = true;
        }
        if self.rate.is_some() {
            self.rate_sent(cx, None, in_flight_before);
        }
        if self.pace.on {
            // cwnd's room before this segment, itself included (in flight now counts it).
            let quota = self.win.cwnd.saturating_sub(self.in_flight(o)) + 1;
            self.pace_sent(cx, len as u32, quota);
        }
        self.on_new_data_sent(cx);
        if cx.timers.rto.is_none() {
            cx.timers.rto = Some(cx.timer_at(self.rtt.rto()));
        }
        let mut flags = ACK | if fin { FIN } else { 0 } | if psh { PSH } else { 0 };
        let ect = o.ecn && len > 0;
        if ect && std::mem::take(&mut self.cwr_pending) {
            flags |= CWR;
        }
        Some(Outgoing {
            flags,
            seq: start,
            payload: len as u32,
            ect,
        })
    }

    /// 6.x `tcp_tso_should_defer`: within a burst (data sent in the last millisecond), an skb of
    /// more than one segment waits for the next ACK when less than a full GSO packet fits in
    /// cwnd and the window, that room is under a third of min(cwnd, window) (`tcp_tso_win_divisor`
    /// 3), and the oldest outstanding segment's ACK is due (sent at least srtt − min(srtt / 2,
    /// 1 ms) ago: a hole at the head). Not in Recovery or Loss, and not for a packet under way.
    fn tso_defers(&self, cx: &Ctx, data_end: u64, wnd_room: u64) -> bool {
        let (o, now) = (cx.o, cx.now);
        let mss = u64::from(o.mss.max(1));
        let skb_end = self.gso.writer_skb_end(self.snd_nxt, data_end);
        if matches!(self.ca, CaState::Recovery | CaState::Loss)
            || self.gso.continues_at(self.snd_nxt)
            || now.saturating_since(self.last_xmit) > Dur::from_millis(1)
            || skb_end.saturating_sub(self.snd_nxt) <= mss
        {
            return false;
        }
        let cwnd = u64::from(self.win.cwnd);
        let cong_win = cwnd.saturating_sub(u64::from(self.in_flight(o))) * mss;
        let limit = wnd_room.min(cong_win);
        if limit >= u64::from(self.tso_goal(o.mss)) * mss
            || limit >= u64::from(self.snd_wnd).min(cwnd * mss) / 3
        {
            return false;
        }
        let (Some(head), Some(srtt)) = (self.rtx.front(), self.rtt.srtt()) else {
            return false;
        };
        let threshold = Dur((srtt.0 / 2).min(1_000_000));
        head.sent_at + srtt <= now + threshold
    }

    /// May a new segment go out? Linux's rule everywhere: `in_flight < cwnd`. Before recovery
    /// (Open, Disorder, CWR), SACKed segments, or without SACK the duplicate ACKs (Linux's Reno
    /// emulation), leave the flight: that is limited transmit (RFC 3042), one new segment per
    /// duplicate ACK until the third starts recovery (more if `dupthresh` is raised, as Linux
    /// does with its reordering estimate). With `limited_transmit` off they stay in it.
    #[inline]
    pub(super) fn cwnd_allows_new(&self, cx: &Ctx) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        match self.ca {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                let left = if !cfg.limited_transmit {
                    0
                } else if o.sack {
                    self.sacked_out(o)
                } else {
                    self.dupacks.min(self.packets_out().saturating_sub(1))
                };
                self.packets_out().saturating_sub(left) < self.win.cwnd
            }
            CaState::Recovery | CaState::Loss => self.in_flight(o) < self.win.cwnd,
        }
    }
}
