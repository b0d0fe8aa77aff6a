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
//!
//! This file holds the types, the handshake and the dispatch of incoming segments;
//! `sender.rs` the ACK side (congestion control, recovery, RTO, undo, F-RTO, ECN),
//! `receiver.rs` the data side (delivery, SACK, delayed ACK, window) and `output.rs` what goes
//! out next and how segments are built.

use crate::config::{
    DelayedAck, HandshakeRtt, RecoveryExit, RtoTimer, SackLossMarking, SsthreshFrom, TcpConfig,
};
use crate::metrics::{linux_iw, ClosingState, Metrics};
use crate::rtt::RttEstimator;
use crate::wire::{Segment, ACK, CWR, ECE, FIN, PSH, RST, SYN};
use lasthop_core::{Dur, Packet, Time};
use std::collections::VecDeque;
use std::net::SocketAddrV4;

mod output;
mod receiver;
mod sender;

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
    /// The scoreboard, in segments (Linux `packets_out`, `sacked_out`, `lost_out`,
    /// `retrans_out`); in flight = packets_out + retrans_out - sacked_out - lost_out
    /// (`tcp_packets_in_flight`), which is what cwnd is compared with.
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
}

impl TraceRecord {
    /// Linux `tcp_packets_in_flight` for this scoreboard.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
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
    /// snd_nxt when it was last retransmitted (Linux keeps it in `ack_seq`; "Event C").
    rtx_nxt: u64,
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

    /// Upper bound on the advertised window set by the host (seed 001's shared window).
    window_cap: Option<u64>,
    /// Metrics cached for the peer's host (CBI), applied when the handshake completes.
    cached: Option<Metrics>,
    aborted: bool,

    ip_id: u16,
    events: VecDeque<Event>,
    stats: Stats,
    trace: Vec<TraceRecord>,
    last_trace: Option<TraceRecord>,
    /// Whether the trace is recorded at all (a driver that writes none turns it off).
    tracing: bool,
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
            window_cap: None,
            aborted: false,
            ip_id: 0,
            events: VecDeque::new(),
            stats: Stats::default(),
            trace: Vec::new(),
            last_trace: None,
            tracing: true,
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
    pub(super) fn negotiate(&mut self, seg: &Segment) {
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
    pub(super) fn our_wscale(&self) -> u8 {
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

    /// An upper bound on the window this endpoint advertises (bytes), set by the host for seed
    /// 001's shared advertised window; `None` removes it. The right edge still never moves back.
    pub fn set_window_cap(&mut self, cap: Option<u64>) {
        self.window_cap = cap;
    }

    /// Bytes held in the out-of-order queue.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|&(s, e)| e - s).sum()
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

    /// Turns the congestion-state trace on or off (on by default); off forgets what it held.
    pub fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
        if !on {
            self.trace = Vec::new();
            self.last_trace = None;
        }
    }

    pub(super) fn record_trace(&mut self, now: Time) {
        if !self.tracing {
            return;
        }
        let r = TraceRecord {
            time: now,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            rto: self.rtt.rto(),
            ca_state: self.ca,
            packets_out: self.packets_out(),
            sacked_out: self.sacked_out(),
            lost_out: self.lost_out(),
            retrans_out: self.retrans_out(),
        };
        let same = self
            .last_trace
            .is_some_and(|l| TraceRecord { time: now, ..l } == r);
        if !same {
            self.trace.push(r);
            self.last_trace = Some(r);
        }
    }

    pub(super) fn set_closed(&mut self) {
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

    pub(super) fn abort(&mut self, why: AbortReason) {
        if self.state != State::Closed {
            self.aborted = true;
            self.events.push_back(Event::Aborted(why));
            self.state = State::Closed;
            self.rto_deadline = None;
            self.delack_deadline = None;
            self.time_wait_deadline = None;
        }
    }

    pub(super) fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.rto_deadline = None;
        self.time_wait_deadline = Some(now + self.cfg.time_wait);
        self.events.push_back(Event::Closed);
    }

    // -----------------------------------------------------------------------------------------
    // Timers.

    /// The earliest time at which [`Connection::handle_timeout`] has work to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        // Written out: the host asks every connection after every packet.
        let min = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        };
        min(
            min(self.rto_deadline, self.delack_deadline),
            self.time_wait_deadline,
        )
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

    // -----------------------------------------------------------------------------------------
    // Incoming packets.

    pub fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        if let Some(seg) = Segment::decode(pkt) {
            self.handle_segment(now, &seg);
        }
    }

    /// [`Connection::handle_packet`] for a segment already decoded (the host decodes it to find
    /// the connection).
    pub(crate) fn handle_segment(&mut self, now: Time, seg: &Segment) {
        if seg.src != Some(self.remote) || seg.dst != Some(self.local) {
            return;
        }
        self.stats.pkts_rcvd += 1;
        match self.state {
            State::Closed => {}
            State::SynSent => self.on_syn_sent(now, seg),
            State::SynRcvd => self.on_syn_rcvd(now, seg),
            _ => self.on_synchronized(now, seg),
        }
        self.record_trace(now);
    }

    pub(super) fn on_syn_sent(&mut self, now: Time, seg: &Segment) {
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

    pub(super) fn on_syn_rcvd(&mut self, now: Time, seg: &Segment) {
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
    pub(super) fn establish(&mut self, now: Time) {
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
    pub(super) fn init_metrics(&mut self) {
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

    pub(super) fn on_synchronized(&mut self, now: Time, seg: &Segment) {
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
                // RFC 1323 §4.2 / Linux tcp_store_ts_recent: remember the TSval of a segment
                // that starts at or before the last ACK sent (rcv_wup), so a delayed ACK
                // echoes the earliest unacknowledged segment and its RTT includes the delay.
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
}
