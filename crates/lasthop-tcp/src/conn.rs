//! One TCP endpoint as a sans-IO state machine.
//!
//! The driver feeds it `(now, packet)` and timer expiries and polls it for packets to send, its
//! next deadline, application events and a trace of its congestion state. Nothing inside reads a
//! clock or draws a random number: the initial sequence number comes from the caller.
//!
//! Sequence numbers are kept as `u64` offsets from the initial sequence number of each side
//! (offset 0 is the SYN, application byte k sits at offset k), so wrap-around is handled once,
//! where a segment is decoded.
//!
//! Loss recovery follows Linux 2.4's structure (`tcp_fastretrans_alert`): a congestion-avoidance
//! state (Open, Disorder, Recovery, Loss), a per-segment scoreboard (SACKed, lost, retransmitted)
//! and the packet-counting rule `in_flight = packets_out - sacked_out - lost_out + retrans_out`;
//! a segment may be sent while `in_flight < cwnd`. Without SACK, duplicate ACKs count as
//! "SACKed" segments during recovery (Linux's Reno emulation), which gives RFC 2581's window
//! inflation; partial ACKs retransmit the next hole (NewReno, RFC 2582). The seeds disable rate
//! halving, so cwnd drops to ssthresh at once.

use crate::config::{DelayedAck, HandshakeRtt, SsthreshFrom, TcpConfig};
use crate::metrics::{linux_iw, ClosingState, Metrics};
use crate::rtt::RttEstimator;
use crate::wire::{Segment, ACK, CWR, ECE, FIN, PSH, RST, SYN};
use lasthop_core::{Dur, Packet, Time};
use std::collections::VecDeque;
use std::net::SocketAddrV4;

/// RFC 793 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    SynSent,
    SynRcvd,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
    Closed,
}

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

/// Why a connection ended without a proper close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// SYN or SYN-ACK retransmissions exhausted.
    HandshakeTimeout,
    /// Data retransmissions exhausted (`retries2`).
    Timeout,
    /// The peer sent a reset.
    Reset,
}

/// What the application sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// This many more bytes were delivered in order.
    Delivered(u64),
    /// The peer's FIN arrived in order: no more data will come.
    PeerFin,
    /// Both directions are closed (TIME-WAIT or CLOSED reached).
    Closed,
    Aborted(AbortReason),
}

/// Per-connection counters, as tcptrace and the seeds count them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Every packet sent (including pure ACKs and SYNs).
    pub pkts_sent: u64,
    /// Segments sent that carry data (first transmissions and retransmissions).
    pub data_pkts_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes_sent: u64,
    /// Data/FIN segments retransmitted.
    pub retransmits: u64,
    /// SYN or SYN-ACK retransmissions.
    pub syn_retransmits: u64,
    /// Retransmission timeouts on data.
    pub rtos: u64,
    /// Entries into fast recovery (fast retransmits).
    pub fast_retransmits: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    pub pkts_rcvd: u64,
    pub data_pkts_rcvd: u64,
    /// Duplicate ACKs received.
    pub dupacks_rcvd: u64,
    /// Data segments received entirely below rcv_nxt (duplicates).
    pub dup_data_pkts_rcvd: u64,
    /// Reductions of cwnd/ssthresh undone (Linux undo: timestamps or D-SACK).
    pub undos: u64,
    /// RTOs that F-RTO declared spurious.
    pub spurious_rtos: u64,
    /// ACKs received with ECE.
    pub ece_rcvd: u64,
    /// cwnd reductions caused by ECE (entries into CWR).
    pub ecn_reductions: u64,
    /// Data segments received with CE.
    pub ce_rcvd: u64,
    /// Data segments received above rcv_nxt.
    pub ooo_pkts_rcvd: u64,
    /// SACK blocks sent (D-SACK blocks included).
    pub sack_blocks_sent: u64,
    pub dsack_blocks_sent: u64,
    /// D-SACK blocks received.
    pub dsacks_rcvd: u64,
    /// Bytes delivered in order to the application.
    pub bytes_delivered: u64,
}

/// One point of the congestion-state trace, recorded whenever a value changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub time: Time,
    /// Congestion window, in segments.
    pub cwnd: u32,
    /// Slow-start threshold, in segments (`u32::MAX >> 1` means "infinite").
    pub ssthresh: u32,
    pub srtt: Option<Dur>,
    pub rttvar: Dur,
    pub rto: Dur,
    pub ca_state: CaState,
}

/// Linux's "infinite" initial ssthresh (0x7fffffff).
pub const SSTHRESH_INFINITE: u32 = u32::MAX >> 1;
/// Linux TCP_ATO_MIN (HZ/25) for the adaptive delayed-ACK timer.
const ATO_MIN: Dur = Dur::from_millis(40);
/// Linux TCP_DELACK_MAX (HZ/5): the adaptive timeout never exceeds it.
const DELACK_MAX: Dur = Dur::from_millis(200);

/// What an incoming ACK did, for the congestion state machine (Linux's `flag`).
#[derive(Clone, Copy, Debug)]
struct AckFlags {
    acked_pkts: u32,
    is_dupack: bool,
    ece: bool,
    /// Linux `tcp_ack_is_dubious`: no data, no window update, nothing acknowledged; or SACK
    /// or ECE information; or not in the Open state.
    dubious: bool,
}

impl AckFlags {
    fn data_acked(&self) -> bool {
        self.acked_pkts > 0
    }
}

/// A segment sent and not yet cumulatively acknowledged (the retransmission queue).
#[derive(Clone, Debug)]
struct SentSeg {
    start: u64,
    /// End offset, FIN included.
    end: u64,
    fin: bool,
    sent_at: Time,
    sacked: bool,
    lost: bool,
    /// A retransmission of it is in flight (Linux TCPCB_SACKED_RETRANS).
    retrans: bool,
    /// Retransmitted at least once (Karn).
    ever_retrans: bool,
}

impl SentSeg {
    fn payload(&self) -> u32 {
        (self.end - self.start) as u32 - u32::from(self.fin)
    }
}

/// A TCP endpoint.
#[derive(Debug)]
pub struct Connection {
    cfg: TcpConfig,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    state: State,

    // Handshake.
    iss: u32,
    irs: u32,
    /// The SYN (client) or SYN-ACK (server) must be (re)sent.
    syn_pending: bool,
    syn_sent_at: Time,
    syn_retries: u32,
    /// The client's ACK of the SYN-ACK is owed as its own packet (Linux sends it at once).
    handshake_ack: bool,
    sack_ok: bool,
    ts_ok: bool,
    /// ECN negotiated; the receiver owes ECE until CWR; the sender owes CWR on new data.
    ecn_ok: bool,
    /// Window scale shifts (RFC 1323): ours for windows we advertise, the peer's for windows
    /// we receive; 0 when not negotiated.
    rcv_wscale: u8,
    snd_wscale: u8,
    ws_ok: bool,
    ece_pending: bool,
    cwr_pending: bool,
    peer_mss: u32,
    /// Effective MSS: payload bytes of a full segment.
    mss: u32,

    // Sender.
    app_bytes: u64,
    fin_queued: bool,
    fin_sent: bool,
    fin_acked: bool,
    snd_una: u64,
    snd_nxt: u64,
    snd_wnd: u32,
    rtx: VecDeque<SentSeg>,
    cwnd: u32,
    ssthresh: u32,
    cwnd_cnt: u32,
    ca: CaState,
    /// snd_nxt when Recovery or Loss was entered (Linux `high_seq`, RFC 2582 `recover`).
    high_seq: u64,
    /// snd_nxt at the last RTO (RFC 2582 `send_high`), for the Careful variant.
    send_high: Option<u64>,
    dupacks: u32,
    /// Segments sent by limited transmit since the last new ACK.
    lt_sent: u32,
    /// Duplicate ACKs counted as SACKed segments during Reno recovery.
    reno_sacked: u32,
    /// RTO expiries since the last forward progress (Linux `tp->retransmits`).
    retransmits: u32,
    /// The first retransmission of a recovery goes regardless of cwnd (RFC 2581 step 2,
    /// RFC 3517 step 4.3).
    force_head_rtx: bool,
    /// Linux undo: snd_una when the reduction happened (`undo_marker`), retransmissions not yet
    /// shown unnecessary (`undo_retrans`), TS clock of the first retransmission
    /// (`retrans_stamp`), ssthresh to restore (`prior_ssthresh`, 0 = none).
    undo_marker: Option<u64>,
    undo_retrans: i64,
    retrans_stamp: Option<u32>,
    prior_ssthresh: u32,
    /// TSecr of the ACK being processed.
    ack_ecr: Option<u32>,
    /// F-RTO progress: 0 off, 1 waiting for the first ACK after the RTO, 2 for the second.
    frto: u8,
    rtt: RttEstimator,
    rto_deadline: Option<Time>,

    // Receiver.
    rcv_nxt: u64,
    /// rcv_nxt when the last ACK was sent (Linux `rcv_wup`).
    rcv_wup: u64,
    /// Right edge of the last advertised window (never shrunk).
    rcv_edge: u64,
    /// Out-of-order data held, sorted, disjoint.
    ooo: Vec<(u64, u64)>,
    /// The same blocks, most recently changed first (RFC 2018 order).
    sack_recent: Vec<(u64, u64)>,
    /// A D-SACK block to report once.
    dsack: Option<(u64, u64)>,
    /// Offset of the peer's FIN, once seen.
    fin_at: Option<u64>,
    fin_rcvd: bool,
    ack_now: bool,
    delack_deadline: Option<Time>,
    quickacks_left: u32,
    ato: Dur,
    last_rcv: Option<Time>,
    ts_recent: u32,
    time_wait_deadline: Option<Time>,

    /// Metrics cached for the peer's host (CBI), applied when the handshake completes.
    cached: Option<Metrics>,
    aborted: bool,

    ip_id: u16,
    events: VecDeque<Event>,
    stats: Stats,
    trace: Vec<TraceRecord>,
    last_trace: Option<TraceRecord>,
}

/// `wire` as an offset near `base_rel` (whose wire value is `base_wire`); `None` below zero.
fn unwrap(base_wire: u32, base_rel: u64, wire: u32) -> Option<u64> {
    let d = i64::from(wire.wrapping_sub(base_wire) as i32);
    u64::try_from(base_rel as i64 + d).ok()
}

fn ms_stamp(now: Time) -> u32 {
    (now.0 / 1_000_000) as u32
}

impl Connection {
    fn new(
        now: Time,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        cfg: TcpConfig,
        iss: u32,
        state: State,
    ) -> Connection {
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max);
        let quickacks_left = cfg.quickacks;
        let mss = cfg.adv_mss();
        Connection {
            local,
            remote,
            state,
            iss,
            irs: 0,
            syn_pending: true,
            syn_sent_at: now,
            syn_retries: 0,
            handshake_ack: false,
            sack_ok: false,
            ts_ok: false,
            ecn_ok: false,
            rcv_wscale: 0,
            snd_wscale: 0,
            ws_ok: false,
            ece_pending: false,
            cwr_pending: false,
            peer_mss: 536,
            mss,
            app_bytes: 0,
            fin_queued: false,
            fin_sent: false,
            fin_acked: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_wnd: 0,
            rtx: VecDeque::new(),
            cwnd: 1,
            ssthresh: SSTHRESH_INFINITE,
            cwnd_cnt: 0,
            ca: CaState::Open,
            high_seq: 0,
            send_high: None,
            dupacks: 0,
            lt_sent: 0,
            reno_sacked: 0,
            retransmits: 0,
            force_head_rtx: false,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: None,
            prior_ssthresh: 0,
            ack_ecr: None,
            frto: 0,
            rtt,
            rto_deadline: None,
            rcv_nxt: 0,
            rcv_wup: 0,
            rcv_edge: 0,
            ooo: Vec::new(),
            sack_recent: Vec::new(),
            dsack: None,
            fin_at: None,
            fin_rcvd: false,
            ack_now: false,
            delack_deadline: None,
            quickacks_left,
            ato: ATO_MIN,
            last_rcv: None,
            ts_recent: 0,
            time_wait_deadline: None,
            cached: None,
            aborted: false,
            ip_id: 0,
            events: VecDeque::new(),
            stats: Stats::default(),
            trace: Vec::new(),
            last_trace: None,
            cfg,
        }
    }

    /// Opens a connection actively: the SYN is ready to be polled. `cfg` should have passed
    /// [`TcpConfig::validate`].
    pub fn connect(
        now: Time,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        cfg: TcpConfig,
        iss: u32,
    ) -> Connection {
        let mut c = Connection::new(now, local, remote, cfg, iss, State::SynSent);
        c.snd_nxt = 1;
        c.rto_deadline = Some(now + c.rtt.rto());
        c.record_trace(now);
        c
    }

    /// Accepts a connection from an incoming SYN (the packet's destination is the local
    /// address): the SYN-ACK is ready to be polled. `None` if `syn` is not a SYN.
    pub fn accept(now: Time, syn: &Packet, cfg: TcpConfig, iss: u32) -> Option<Connection> {
        let seg = Segment::decode(syn)?;
        if !seg.has(SYN) || seg.has(ACK) || seg.has(RST) {
            return None;
        }
        let (remote, local) = (seg.src?, seg.dst?);
        let mut c = Connection::new(now, local, remote, cfg, iss, State::SynRcvd);
        c.irs = seg.seq;
        c.rcv_nxt = 1;
        c.rcv_wup = 1;
        c.negotiate(&seg);
        // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR.
        c.ecn_ok = c.cfg.ecn && seg.has(ECE) && seg.has(CWR);
        c.snd_nxt = 1;
        c.snd_wnd = u32::from(seg.window);
        c.rto_deadline = Some(now + c.rtt.rto());
        c.record_trace(now);
        Some(c)
    }

    /// Options both sides agreed on, and the effective MSS.
    fn negotiate(&mut self, seg: &Segment) {
        self.sack_ok = self.cfg.sack && seg.sack_permitted;
        self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
        if let Some((val, _)) = seg.ts {
            self.ts_recent = val;
        }
        if let (true, Some(ws)) = (self.cfg.window_scaling, seg.wscale) {
            self.ws_ok = true;
            self.snd_wscale = ws.min(14);
            self.rcv_wscale = self.our_wscale();
        }
        // RFC 1122: 536 when the peer sends no MSS option.
        self.peer_mss = seg.mss.map_or(536, u32::from);
        let ts = if self.ts_ok { 12 } else { 0 };
        self.mss = self
            .peer_mss
            .min(self.cfg.adv_mss())
            .saturating_sub(ts)
            .max(1);
    }

    /// Linux `tcp_select_initial_window`: the smallest shift that fits the receive buffer.
    fn our_wscale(&self) -> u8 {
        let mut space = self
            .cfg
            .rcvbuf
            .0
            .max(self.cfg.window_clamp.map_or(0, |c| c.0));
        let mut ws = 0;
        while space > 65535 && ws < 14 {
            space >>= 1;
            ws += 1;
        }
        ws
    }

    // -----------------------------------------------------------------------------------------
    // Application side.

    /// The application writes `bytes` more (virtual) bytes.
    pub fn send(&mut self, bytes: u64) {
        if !self.fin_queued {
            self.app_bytes += bytes;
        }
    }

    /// The application closes its side: a FIN follows the data written so far.
    pub fn close(&mut self) {
        match self.state {
            State::SynSent => self.set_closed(),
            State::SynRcvd | State::Established => {
                self.fin_queued = true;
                if self.state == State::Established {
                    self.state = State::FinWait1;
                }
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn ca_state(&self) -> CaState {
        self.ca
    }
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    pub fn local(&self) -> SocketAddrV4 {
        self.local
    }
    pub fn remote(&self) -> SocketAddrV4 {
        self.remote
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// Effective MSS (payload of a full segment) once the handshake is done.
    pub fn mss(&self) -> u32 {
        self.mss
    }
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    pub fn rto(&self) -> Dur {
        self.rtt.rto()
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
    /// Bytes written by the application and not yet acknowledged by the peer.
    pub fn unacked_bytes(&self) -> u64 {
        (self.app_bytes + 1).saturating_sub(self.snd_una.max(1))
    }
    /// Metrics cached for the peer's host (CBI): call before the handshake completes; used only
    /// with `cbi = true`. [`crate::Host`] does this.
    pub fn set_cached_metrics(&mut self, m: Metrics) {
        self.cached = Some(m);
    }

    /// The connection closed properly (TIME-WAIT or CLOSED, not aborted): its metrics may be
    /// saved.
    pub fn closed_normally(&self) -> bool {
        !self.aborted && matches!(self.state, State::TimeWait | State::Closed)
    }

    /// What this connection leaves in the metrics cache (Linux `tcp_update_metrics`).
    pub fn closing_state(&self) -> ClosingState {
        ClosingState {
            srtt: self.rtt.srtt().filter(|_| !self.rtt.backed_off()),
            mdev4: self.rtt.mdev4(),
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            open: self.ca == CaState::Open,
        }
    }

    /// Takes the congestion-state trace recorded so far.
    pub fn drain_trace(&mut self) -> Vec<TraceRecord> {
        std::mem::take(&mut self.trace)
    }

    fn record_trace(&mut self, now: Time) {
        let r = TraceRecord {
            time: now,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            rto: self.rtt.rto(),
            ca_state: self.ca,
        };
        let same = self
            .last_trace
            .is_some_and(|l| TraceRecord { time: now, ..l } == r);
        if !same {
            self.trace.push(r);
            self.last_trace = Some(r);
        }
    }

    fn set_closed(&mut self) {
        if self.state != State::Closed {
            let was_tw = self.state == State::TimeWait;
            self.state = State::Closed;
            self.rto_deadline = None;
            self.delack_deadline = None;
            self.time_wait_deadline = None;
            if !was_tw {
                self.events.push_back(Event::Closed);
            }
        }
    }

    fn abort(&mut self, why: AbortReason) {
        if self.state != State::Closed {
            self.aborted = true;
            self.events.push_back(Event::Aborted(why));
            self.state = State::Closed;
            self.rto_deadline = None;
            self.delack_deadline = None;
            self.time_wait_deadline = None;
        }
    }

    fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.rto_deadline = None;
        self.time_wait_deadline = Some(now + self.cfg.time_wait);
        self.events.push_back(Event::Closed);
    }

    // -----------------------------------------------------------------------------------------
    // Timers.

    /// The earliest time at which [`Connection::handle_timeout`] has work to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        [
            self.rto_deadline,
            self.delack_deadline,
            self.time_wait_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.time_wait_deadline.is_some_and(|t| t <= now) {
            self.set_closed();
        }
        if self.delack_deadline.is_some_and(|t| t <= now) {
            self.delack_deadline = None;
            if self.rcv_nxt > self.rcv_wup {
                self.ack_now = true;
            }
            if self.cfg.delayed_ack == DelayedAck::Adaptive {
                // Linux tcp_delack_timer: the timer was too short, so lengthen it.
                self.ato = Dur((self.ato.0 * 2).min(self.rtt.rto().0));
            }
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        self.record_trace(now);
    }

    fn on_rto(&mut self, now: Time) {
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
    fn enter_loss(&mut self) {
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
    fn current_ssthresh(&self) -> u32 {
        self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
    }

    fn recalc_ssthresh(&self) -> u32 {
        let base = match self.cfg.ssthresh_from {
            SsthreshFrom::Cwnd => self.cwnd,
            SsthreshFrom::Flight => (self.rtx.len() as u32).saturating_sub(self.lt_sent),
        };
        (base / 2).max(2)
    }

    // -----------------------------------------------------------------------------------------
    // Scoreboard.

    fn packets_out(&self) -> u32 {
        self.rtx.len() as u32
    }
    fn sacked_out(&self) -> u32 {
        if self.sack_ok {
            self.rtx.iter().filter(|s| s.sacked).count() as u32
        } else {
            self.reno_sacked
        }
    }
    fn lost_out(&self) -> u32 {
        self.rtx.iter().filter(|s| s.lost).count() as u32
    }
    fn retrans_out(&self) -> u32 {
        self.rtx.iter().filter(|s| s.retrans).count() as u32
    }
    /// Linux `tcp_packets_in_flight`.
    fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out())
            .saturating_sub(self.sacked_out() + self.lost_out())
    }

    /// RFC 3517 IsLost for segment `i`: `dupthresh` SACKed segments above it; with FACK, the
    /// highest SACKed segment is `dupthresh` or more segments above it.
    fn is_lost(&self, i: usize) -> bool {
        let th = self.cfg.dupthresh as usize;
        if self.cfg.fack {
            let fack = self.rtx.iter().rposition(|s| s.sacked);
            fack.is_some_and(|f| f >= i + th)
        } else {
            self.rtx.iter().skip(i + 1).filter(|s| s.sacked).count() >= th
        }
    }

    /// Marks holes lost by the SACK rule (RFC 3517 or FACK).
    fn mark_lost_by_sack(&mut self) {
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

    fn mark_head_lost(&mut self) {
        if let Some(h) = self.rtx.front_mut() {
            if !h.sacked && !h.lost {
                h.lost = true;
                h.retrans = false;
            }
        }
    }

    /// Linux `tcp_stream_is_thin`: fewer than 4 segments out, and not in the first slow start.
    fn is_thin(&self) -> bool {
        self.packets_out() < 4 && self.ssthresh < SSTHRESH_INFINITE
    }

    /// Linux `tcp_time_to_recover`, with RFC 3517's trigger instead of the FACK count unless
    /// FACK is on.
    fn time_to_recover(&self) -> bool {
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
        self.dupacks >= self.cfg.dupthresh || (self.sack_ok && self.is_lost(0))
    }

    fn enter_recovery(&mut self) {
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
    fn cong_avoid(&mut self) {
        if self.cwnd <= self.ssthresh {
            self.cwnd += 1;
        } else if self.cwnd_cnt >= self.cwnd {
            self.cwnd += 1;
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }

    // -----------------------------------------------------------------------------------------
    // Incoming packets.

    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        let Some(seg) = Segment::decode(pkt) else {
            return;
        };
        if seg.src != Some(self.remote) || seg.dst != Some(self.local) {
            return;
        }
        self.stats.pkts_rcvd += 1;
        match self.state {
            State::Closed => {}
            State::SynSent => self.on_syn_sent(now, &seg),
            State::SynRcvd => self.on_syn_rcvd(now, &seg),
            _ => self.on_synchronized(now, &seg),
        }
        self.record_trace(now);
    }

    fn on_syn_sent(&mut self, now: Time, seg: &Segment) {
        let acks_syn = seg.has(ACK) && seg.ack == self.iss.wrapping_add(1);
        if seg.has(RST) {
            if acks_syn {
                self.abort(AbortReason::Reset);
            }
            return;
        }
        if !(seg.has(SYN) && acks_syn) {
            return; // simultaneous open is not modelled
        }
        self.irs = seg.seq;
        self.rcv_nxt = 1;
        self.rcv_wup = 1;
        self.negotiate(seg);
        // An ECN-setup SYN-ACK has ECE and not CWR.
        self.ecn_ok = self.cfg.ecn && seg.has(ECE) && !seg.has(CWR);
        self.snd_wnd = u32::from(seg.window);
        self.establish(now);
        // Linux acknowledges the SYN-ACK at once, before any data the application writes.
        self.handshake_ack = true;
    }

    fn on_syn_rcvd(&mut self, now: Time, seg: &Segment) {
        if seg.has(RST) {
            self.abort(AbortReason::Reset);
            return;
        }
        if seg.has(SYN) && !seg.has(ACK) {
            // A retransmitted SYN: Linux answers it with the SYN-ACK again.
            if seg.seq == self.irs {
                self.syn_pending = true;
            }
            return;
        }
        if !(seg.has(ACK) && seg.ack == self.iss.wrapping_add(1)) {
            return;
        }
        self.snd_wnd = u32::from(seg.window) << self.snd_wscale;
        self.establish(now);
        // The ACK may carry data (the client's ACK was lost and the request came first).
        self.on_synchronized(now, seg);
    }

    /// The SYN is acknowledged: first RTT sample (unless the SYN was retransmitted, Karn),
    /// initial window.
    fn establish(&mut self, now: Time) {
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.syn_pending = false;
        self.rto_deadline = None;
        let sample_ok = self.cfg.handshake_rtt == HandshakeRtt::Always || self.ts_ok;
        if self.syn_retries == 0 && sample_ok {
            self.rtt
                .sample(now.saturating_since(self.syn_sent_at), 1, 1);
        } else {
            // RFC 2988 §5.7 / Linux: the backed-off SYN timeout does not carry over to data.
            self.rtt.reset(self.cfg.rto_initial);
        }
        self.cwnd = self.cfg.iw_segments(self.mss);
        if self.cfg.cbi {
            self.init_metrics();
        }
        if self.syn_retries > 0 && self.cfg.iw_after_syn_loss_1 {
            self.cwnd = 1;
        }
        self.state = if self.fin_queued {
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
        let (ts, init) = (self.ts_ok, self.cfg.rto_initial);
        let Some(m) = self.cached else {
            self.rtt.forget(ts, init);
            return;
        };
        if m.ssthresh > 0 {
            self.ssthresh = m.ssthresh;
        }
        if self.rtt.seed_from_cache(m.srtt, m.mdev4, ts, init) {
            self.cwnd = linux_iw(self.mss).min(self.ssthresh);
        }
    }

    fn on_synchronized(&mut self, now: Time, seg: &Segment) {
        if seg.has(RST) {
            self.abort(AbortReason::Reset);
            return;
        }
        if seg.has(SYN) {
            // The peer did not get our ACK of its SYN (or SYN-ACK): acknowledge again.
            self.ack_now = true;
            return;
        }
        if self.ts_ok {
            if let Some((val, _)) = seg.ts {
                // RFC 1323 §4.2 (simplified): remember the newest TSval of a segment that
                // starts at or before rcv_nxt.
                let at_or_before = unwrap(
                    self.irs.wrapping_add(self.rcv_nxt as u32),
                    self.rcv_nxt,
                    seg.seq,
                )
                .is_some_and(|s| s <= self.rcv_nxt);
                if at_or_before && (val.wrapping_sub(self.ts_recent) as i32) >= 0 {
                    self.ts_recent = val;
                }
            }
        }
        if self.ecn_ok {
            // RFC 3168 §6.1.3: echo CE until a segment with CWR arrives; Linux ACKs a CE
            // segment at once (quick-ACK mode).
            if seg.has(CWR) {
                self.ece_pending = false;
            }
            if seg.ecn == 3 {
                self.stats.ce_rcvd += 1;
                self.ece_pending = true;
                self.ack_now = true;
            }
        }
        if seg.has(ACK) {
            self.on_ack(now, seg);
        }
        if self.state != State::Closed {
            self.on_data(now, seg);
        }
    }

    /// Sender side of an incoming ACK (Linux `tcp_ack`).
    fn on_ack(&mut self, now: Time, seg: &Segment) {
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
        let prior_in_flight = self.in_flight();
        let prior_packets = self.packets_out();
        let wnd = u32::from(seg.window) << self.snd_wscale;
        let window_changed = wnd != self.snd_wnd;
        self.snd_wnd = wnd;
        if self.sack_ok {
            self.tag_sacks(seg, ack);
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
            // Linux restarts the timer whenever something is acknowledged.
            self.rto_deadline = (!self.rtx.is_empty()).then(|| now + self.rtt.rto());
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
    /// ACK or inside the second block (RFC 2883); it marks nothing.
    fn tag_sacks(&mut self, seg: &Segment, ack: u64) {
        let base = self.iss.wrapping_add(self.snd_una as u32);
        for (i, &(l, r)) in seg.sacks.iter().enumerate() {
            let (Some(l), Some(r)) = (unwrap(base, self.snd_una, l), unwrap(base, self.snd_una, r))
            else {
                continue;
            };
            if r <= l || r > self.snd_nxt {
                continue;
            }
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
                if !s.sacked && s.start >= l && s.end <= r {
                    s.sacked = true;
                    s.lost = false;
                    s.retrans = false;
                }
            }
        }
    }

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
    fn may_undo(&self) -> bool {
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
    fn undo_cwnd(&mut self, restore_ssthresh: bool) {
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
    fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd(true);
        }
    }

    /// On each ACK in Loss (Linux `tcp_try_undo_loss`): a spurious RTO stops go-back-N.
    fn try_undo_loss(&mut self) -> bool {
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
    fn try_undo_partial(&mut self) -> bool {
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
    fn try_undo_dsack(&mut self) {
        if self.cfg.undo && self.undo_marker.is_some() && self.undo_retrans <= 0 {
            self.undo_cwnd(true);
        }
    }

    /// F-RTO (draft-sarolahti-tsvwg-tcp-frto / RFC 4138 §2.1, basic algorithm, as seeds 000 and
    /// 002 describe it): after the RTO retransmission, two ACKs that advance the window mean
    /// the RTO was spurious: continue with new data and cwnd = ssthresh. A duplicate ACK means
    /// it was genuine: go back to conventional recovery.
    /// Bytes written and not yet sent.
    fn unsent(&self) -> u64 {
        (self.app_bytes + 1).saturating_sub(self.snd_nxt)
    }

    fn frto_ack(&mut self, data_acked: bool, is_dupack: bool) {
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
    fn frto_conventional(&mut self, cwnd: Option<u32>) {
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
    fn fastretrans_alert(&mut self, f: AckFlags) {
        let (data_acked, acked_pkts, is_dupack, ece) =
            (f.data_acked(), f.acked_pkts, f.is_dupack, f.ece);
        if self.ca == CaState::Open {
            self.retrans_stamp = None;
        }
        if ece {
            self.prior_ssthresh = 0; // a reduction the network asked for is never undone
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
                    // Full ACK: Linux tcp_complete_cwr.
                    self.cwnd = self.cwnd.min(self.ssthresh);
                    self.ca = CaState::Open;
                    self.reno_sacked = 0;
                } else {
                    if data_acked {
                        let undone = self.try_undo_partial();
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
                    if self.sack_ok {
                        self.mark_lost_by_sack();
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
        if self.time_to_recover() {
            self.enter_recovery();
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
    fn moderate_cwnd(&mut self) {
        if self.cfg.max_burst > 0 {
            self.cwnd = self.cwnd.min(self.in_flight() + self.cfg.max_burst);
        }
    }

    /// Linux 2.4 `tcp_cwnd_down` (rate halving), on every ACK in Recovery and CWR: one segment
    /// less per two ACKs, down to ssthresh/2, and never more than in_flight + 1.
    fn cwnd_down(&mut self) {
        if !self.cfg.rate_halving {
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
    fn enter_cwr(&mut self) {
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

    /// Receiver side: payload and FIN.
    fn on_data(&mut self, now: Time, seg: &Segment) {
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
    fn schedule_ack(&mut self, now: Time, filled_hole: bool) {
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
    fn update_ato(&mut self, now: Time) {
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
    fn ato_timeout(&self) -> Dur {
        let mut max = DELACK_MAX;
        if let Some(srtt) = self.rtt.srtt() {
            max = max.min(srtt.max(ATO_MIN));
        }
        self.ato.min(max)
    }

    fn set_dsack(&mut self, start: u64, end: u64) {
        if self.cfg.dsack && self.sack_ok {
            self.dsack = Some((start, end));
        }
    }

    /// Adds [start, end) to the out-of-order queue; the block holding it becomes the first
    /// SACK block. A segment already held is a duplicate (D-SACK).
    fn insert_ooo(&mut self, start: u64, end: u64) {
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

    /// The window we advertise: the buffer minus what is held out of order, clamped, and never
    /// moving the right edge back (RFC 793).
    fn adv_window(&mut self) -> u16 {
        let held: u64 = self.ooo.iter().map(|&(s, e)| e - s).sum();
        let mut w = self.cfg.rcvbuf.0.saturating_sub(held);
        if let Some(c) = self.cfg.window_clamp {
            w = w.min(c.0);
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

    // -----------------------------------------------------------------------------------------
    // Outgoing packets.

    /// The next packet to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
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

    fn pure_ack(&mut self, now: Time) -> Packet {
        self.stats.acks_sent += 1;
        let seq = self.snd_nxt;
        self.build(now, ACK, seq, 0, false)
    }

    /// Retransmissions of segments marked lost come first (Linux
    /// `tcp_xmit_retransmit_queue`); new data only when none is waiting.
    fn transmit_data(&mut self, now: Time) -> Option<Packet> {
        if let Some(i) = self
            .rtx
            .iter()
            .position(|s| s.lost && !s.retrans && !s.sacked)
        {
            let forced = i == 0 && std::mem::take(&mut self.force_head_rtx);
            if !forced && self.in_flight() >= self.cwnd {
                return None;
            }
            let (start, payload, fin) = {
                let s = &mut self.rtx[i];
                s.retrans = true;
                s.ever_retrans = true;
                s.sent_at = now;
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
            return Some(self.build(now, flags, start, payload, false));
        }
        self.send_new(now)
    }

    fn send_new(&mut self, now: Time) -> Option<Packet> {
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
    fn cwnd_allows_new(&self) -> bool {
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
    fn build(&mut self, now: Time, mut flags: u8, seq: u64, payload: u32, ect: bool) -> Packet {
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
            seg.window = self.cfg.rcvbuf.0.min(65535) as u16;
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
