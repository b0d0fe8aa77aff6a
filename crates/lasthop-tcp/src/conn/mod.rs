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
//! A [`Connection`] is a composition of four parts, each a struct in its own file that owns
//! its state's methods: the send state (`send.rs`: the retransmission queue and scoreboard,
//! cwnd, loss recovery, undo, F-RTO, the RTT estimator and RTO), the receive state (`recv.rs`:
//! reassembly, SACK blocks, delayed ACK, the advertised window), the negotiated options
//! (`options.rs`) and the timers (`timers.rs`, from which [`Connection::poll_timeout`] is
//! computed). This file holds the composition and the entry points: the application's calls,
//! incoming packets and timer expiries. `handshake.rs` is the SYN exchange, `output.rs` picks
//! the next packet and builds it, `events.rs` holds what the connection reports (events,
//! counters, the congestion-state trace). The parts' methods take the configuration, the
//! options and the counters as arguments, so a part never reaches into another.

use crate::cc::{CaSk, Cc, CongestionOps, Window};
use crate::config::{
    DelayedAck, HandshakeRtt, RecoveryExit, RtoEstimator, RtoTimer, SackLossMarking, TcpConfig,
};
use crate::metrics::{linux_iw, ClosingState, Metrics};
use crate::rtt::RttEstimator;
use crate::wire::{Segment, ACK, CWR, ECE, FIN, PSH, RST, SYN};
use lasthop_core::{Dur, Packet, Time};
use std::collections::VecDeque;
use std::net::SocketAddrV4;

mod events;
mod gso;
mod handshake;
mod linux3;
mod options;
mod output;
mod pacing;
mod rack;
mod rate;
mod rcvbuf;
mod rdb;
mod recv;
mod send;
mod sndbuf;
mod timers;

pub use events::{AbortReason, Event, Stats, TraceRecord};
pub(crate) use rate::RateSample;
pub use send::{CaState, SSTHRESH_INFINITE};

use events::Trace;
use handshake::Handshake;
use linux3::{jiffies_up, Linux3};
use options::{our_wscale, Negotiated};
use pacing::{pacing_on, Pacer};
use rate::Rate;
use recv::RecvState;
use send::{AckOutcome, SendState};
use timers::{AltTimer, Timers};

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

/// A TCP endpoint.
#[derive(Debug)]
pub struct Connection {
    cfg: TcpConfig,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    state: State,

    /// Progress of the SYN exchange.
    hs: Handshake,
    /// What the SYN exchange agreed on, and the effective MSS.
    opts: Negotiated,
    /// What we send: the application's bytes, the scoreboard, cwnd, recovery, RTT and RTO.
    snd: SendState,
    /// What we receive: reassembly, SACK blocks, delayed ACK, the advertised window.
    rcv: RecvState,
    /// Retransmission, delayed-ACK and TIME-WAIT deadlines.
    timers: Timers,

    /// Metrics cached for the peer's host (CBI), applied when the handshake completes.
    cached: Option<Metrics>,
    aborted: bool,
    ip_id: u16,
    events: VecDeque<Event>,
    stats: Stats,
    trace: Trace,
}

/// What the parts' methods need besides their own state, as Linux's functions take `sk`: the
/// configuration, the negotiated options, the counters, the timers and the time of the call.
/// The connection builds one from its fields for each entry point.
struct Ctx<'a> {
    cfg: &'a TcpConfig,
    o: &'a Negotiated,
    stats: &'a mut Stats,
    timers: &'a mut Timers,
    now: Time,
}

/// The [`Ctx`] of a connection's call at `now`, borrowing its fields.
macro_rules! ctx {
    ($c:ident, $now:expr) => {
        Ctx {
            cfg: &$c.cfg,
            o: &$c.opts,
            stats: &mut $c.stats,
            timers: &mut $c.timers,
            now: $now,
        }
    };
}
use ctx;

impl Ctx<'_> {
    /// When a timer armed now for `timeout` fires ([`timers::timer_at`]: Linux 4.8+'s wheel
    /// with `timer_wheel`, else on time).
    #[inline]
    fn timer_at(&self, timeout: Dur) -> Time {
        timers::timer_at(self.cfg, self.now, timeout)
    }

    /// [`Ctx::timer_at`] for a timer meant to expire at `at`.
    #[inline]
    fn timer_until(&self, at: Time) -> Time {
        self.timer_at(at.saturating_since(self.now))
    }
}

/// `wire` as an offset near `base_rel` (whose wire value is `base_wire`); `None` below zero.
fn unwrap(base_wire: u32, base_rel: u64, wire: u32) -> Option<u64> {
    let d = i64::from(wire.wrapping_sub(base_wire) as i32);
    u64::try_from(base_rel as i64 + d).ok()
}

/// The timestamp clock: milliseconds.
fn ms_stamp(now: Time) -> u32 {
    (now.0 / 1_000_000) as u32
}

/// The RTT a timestamp echo `ecr` gives at `now` (whole milliseconds, the clock's unit).
fn ts_rtt(now: Time, ecr: u32) -> Dur {
    Dur(u64::from(ms_stamp(now).wrapping_sub(ecr)) * 1_000_000)
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
        Connection {
            local,
            remote,
            state,
            hs: Handshake::new(now),
            opts: Negotiated::new(&cfg),
            snd: SendState::new(&cfg, iss),
            rcv: RecvState::new(&cfg),
            timers: Timers::default(),
            cached: None,
            aborted: false,
            ip_id: 0,
            events: VecDeque::new(),
            stats: Stats::default(),
            trace: Trace::new(),
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
        c.timers.rto = Some(timers::timer_at(&c.cfg, now, c.snd.rtt.rto()));
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
        c.on_syn(now, &seg);
        c.record_trace(now);
        Some(c)
    }

    // -----------------------------------------------------------------------------------------
    // Application side.

    /// The application writes `bytes` more (virtual) bytes: one write() call. With
    /// `kernel = "linux-6.18"` it goes through the send buffer (`sndbuf.rs`) and may wait there
    /// for ACKs, as a blocking write() would.
    pub fn send(&mut self, bytes: u64) {
        self.send_calls(bytes, bytes);
    }

    /// [`Connection::send`] of `bytes` as consecutive write() calls of `call` bytes, the last
    /// one shorter.
    pub fn send_calls(&mut self, bytes: u64, call: u64) {
        if self.snd.fin_queued || self.snd.writer.as_ref().is_some_and(|w| w.close_after) {
            return;
        }
        if self.snd.writer.is_some() {
            self.snd.tso_deferred = false;
            if bytes > 0 {
                self.snd.write_calls(&self.opts, bytes, call.max(1));
            }
            return;
        }
        self.snd.check_app_limited(&self.opts);
        self.snd.app_bytes += bytes;
    }

    /// The application closes its side: a FIN follows the data written so far (with a send
    /// buffer, once the write() calls it made have been copied).
    pub fn close(&mut self) {
        if let Some(w) = self.snd.writer.as_deref_mut().filter(|w| w.pending()) {
            w.close_after = true;
            return;
        }
        match self.state {
            State::SynSent => self.set_closed(),
            State::SynRcvd | State::Established => {
                self.snd.fin_queued = true;
                if self.state == State::Established {
                    self.state = State::FinWait1;
                }
            }
            State::CloseWait => {
                self.snd.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
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
        self.snd.tso_deferred = false;
        match self.state {
            State::Closed => {}
            State::SynSent => self.on_syn_sent(now, seg),
            State::SynRcvd => self.on_syn_rcvd(now, seg),
            _ => self.on_synchronized(now, seg),
        }
        self.record_trace(now);
    }

    /// A segment once both SYNs are acknowledged: its echoes for the receiver, its ACK for the
    /// send state, then its payload and FIN for the receive state.
    fn on_synchronized(&mut self, now: Time, seg: &Segment) {
        if seg.has(RST) {
            self.abort(AbortReason::Reset);
            return;
        }
        if seg.has(SYN) {
            // The peer did not get our ACK of its SYN (or SYN-ACK): acknowledge again.
            self.rcv.ack_now = true;
            return;
        }
        if self.opts.ts {
            self.rcv.store_ts_recent(seg);
        }
        if self.opts.ecn {
            self.rcv.on_ecn(&mut self.stats, seg);
        }
        if seg.has(ACK) {
            self.on_ack(now, seg);
            if let Some(w) = self.snd.writer.as_deref_mut() {
                w.ack_came();
            }
        }
        if self.state != State::Closed {
            self.on_data(now, seg);
        }
    }

    fn on_ack(&mut self, now: Time, seg: &Segment) {
        let outcome = self.snd.on_ack(&mut ctx!(self, now), seg);
        match outcome {
            AckOutcome::Ignored => {}
            AckOutcome::BeyondSent => self.rcv.ack_now = true,
            AckOutcome::Processed => {
                if self.snd.fin_acked {
                    match self.state {
                        State::FinWait1 => self.state = State::FinWait2,
                        State::Closing => self.enter_time_wait(now),
                        State::LastAck => self.set_closed(),
                        _ => {}
                    }
                }
            }
        }
    }

    fn on_data(&mut self, now: Time, seg: &Segment) {
        let a = self.rcv.on_data(&mut ctx!(self, now), &self.snd.rtt, seg);
        if a.after_fin && self.state == State::TimeWait {
            self.timers.time_wait = Some(now + self.cfg.time_wait);
        }
        if a.delivered > 0 {
            self.events.push_back(Event::Delivered(a.delivered));
        }
        if a.peer_fin {
            self.events.push_back(Event::PeerFin);
            match self.state {
                State::Established => self.state = State::CloseWait,
                State::FinWait1 => self.state = State::Closing,
                State::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Timers.

    /// The earliest time at which [`Connection::handle_timeout`] has work to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    pub fn handle_timeout(&mut self, now: Time) {
        self.snd.tso_deferred = false;
        if self.timers.time_wait_due(now) {
            self.set_closed();
        }
        if self.timers.take_delack(now) {
            self.rcv.on_delack_timeout(&self.cfg, &self.snd.rtt);
        }
        if let Some(kind) = self.timers.take_alt(now) {
            let cx = &mut ctx!(self, now);
            match kind {
                AltTimer::EarlyRetrans => self.snd.on_early_retrans_timer(cx),
                AltTimer::LossProbe => self.snd.on_loss_probe_timer(cx),
                AltTimer::Rack => self.snd.on_rack_timer(cx),
            }
        }
        if self.timers.take_rto(now) {
            self.on_rto(now);
        }
        if self.snd.pace.on {
            self.timers.take_pace(now);
        }
        self.record_trace(now);
    }

    fn on_rto(&mut self, now: Time) {
        match self.state {
            State::SynSent | State::SynRcvd => self.on_syn_timeout(now),
            State::Closed | State::TimeWait => {}
            _ if self.snd.rtx.is_empty() => {}
            _ => {
                let established = self.state == State::Established;
                if !self.snd.on_rto(&mut ctx!(self, now), established) {
                    self.abort(AbortReason::Timeout);
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Endings.

    fn set_closed(&mut self) {
        if self.state != State::Closed {
            let was_tw = self.state == State::TimeWait;
            self.state = State::Closed;
            self.timers.stop_all();
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
            self.timers.stop_all();
        }
    }

    fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.timers.rto = None;
        self.timers.time_wait = Some(now + self.cfg.time_wait);
        self.events.push_back(Event::Closed);
    }

    // -----------------------------------------------------------------------------------------
    // Inspection and settings.

    pub fn state(&self) -> State {
        self.state
    }
    pub fn ca_state(&self) -> CaState {
        self.snd.ca
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
        self.opts.mss
    }
    pub fn cwnd(&self) -> u32 {
        self.snd.win.cwnd
    }
    pub fn ssthresh(&self) -> u32 {
        self.snd.win.ssthresh
    }
    pub fn rto(&self) -> Dur {
        self.snd.rtt.rto()
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.snd.rtt.srtt()
    }
    /// Bytes written by the application and not yet acknowledged by the peer.
    pub fn unacked_bytes(&self) -> u64 {
        (self.snd.app_bytes + 1).saturating_sub(self.snd.snd_una.max(1))
    }
    /// Metrics cached for the peer's host (CBI): call before the handshake completes; used only
    /// with `cbi = true`. [`crate::Host`] does this.
    pub fn set_cached_metrics(&mut self, m: Metrics) {
        self.cached = Some(m);
    }

    /// An upper bound on the window this endpoint advertises (bytes), set by the host for seed
    /// 001's shared advertised window; `None` removes it. The right edge still never moves back.
    pub fn set_window_cap(&mut self, cap: Option<u64>) {
        self.rcv.window_cap = cap;
    }

    /// Bytes held in the out-of-order queue.
    pub fn ooo_bytes(&self) -> u64 {
        self.rcv.ooo_bytes()
    }

    /// The connection closed properly (TIME-WAIT or CLOSED, not aborted): its metrics may be
    /// saved.
    pub fn closed_normally(&self) -> bool {
        !self.aborted && matches!(self.state, State::TimeWait | State::Closed)
    }

    /// What this connection leaves in the metrics cache (Linux `tcp_update_metrics`).
    pub fn closing_state(&self) -> ClosingState {
        let rtt = &self.snd.rtt;
        ClosingState {
            srtt: rtt.srtt().filter(|_| !rtt.backed_off()),
            mdev4: rtt.mdev4(),
            cwnd: self.snd.win.cwnd,
            ssthresh: self.snd.win.ssthresh,
            open: self.snd.ca == CaState::Open,
        }
    }

    /// Takes the congestion-state trace recorded so far.
    pub fn drain_trace(&mut self) -> Vec<TraceRecord> {
        std::mem::take(&mut self.trace.records)
    }

    /// The application's `setsockopt(TCP_CONGESTION)`: this connection uses `cc` from now on,
    /// its state started afresh (Linux `tcp_set_congestion_control` -> `bictcp_init`). HyStart
    /// stays as configured for CUBIC and is off for Reno.
    pub fn set_congestion_control(&mut self, cc: crate::config::CongestionControl) {
        self.cfg.congestion_control = cc;
        self.cfg.hystart &= cc == crate::config::CongestionControl::Cubic;
        self.snd.l3.active = Linux3::wanted(&self.cfg);
        self.snd.set_cc(Cc::new(&self.cfg, self.snd.iss));
        self.snd.pace.on = pacing_on(&self.cfg, &self.snd.cc);
    }

    /// Turns the congestion-state trace on or off (on by default); off forgets what it held.
    pub fn set_tracing(&mut self, on: bool) {
        self.trace.set_on(on);
    }

    fn record_trace(&mut self, now: Time) {
        if !self.trace.on {
            return;
        }
        let (snd, o) = (&self.snd, &self.opts);
        self.trace.push(TraceRecord {
            time: now,
            cwnd: snd.win.cwnd,
            ssthresh: snd.win.ssthresh,
            srtt: snd.rtt.srtt(),
            rttvar: snd.rtt.rttvar(),
            rto: snd.rtt.rto(),
            ca_state: snd.ca,
            packets_out: snd.packets_out(),
            sacked_out: snd.sacked_out(o),
            lost_out: snd.lost_out(),
            retrans_out: snd.retrans_out(),
            pacing_rate: snd.pace.on.then_some(snd.pace.rate),
            cc_mode: snd.cc.mode(),
        });
    }
}
