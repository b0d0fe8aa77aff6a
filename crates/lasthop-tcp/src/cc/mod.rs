//! Congestion control as a component: Linux's `struct tcp_congestion_ops`, one file per
//! algorithm (`reno.rs`, `cubic.rs`, `bbr.rs`), each implementing [`CongestionOps`].
//!
//! The send state owns a [`Window`] (Linux `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`) and a
//! [`Cc`], and calls the algorithm where Linux calls `icsk_ca_ops`: `init` when the connection
//! is established, `ssthresh` when a loss or an ECN echo reduces the window, `cong_avoid` on an
//! ACK that may raise it, `pkts_acked` when segments are cumulatively acknowledged,
//! `set_state(TCP_CA_Loss)` on an RTO, `undo_cwnd` when a reduction is undone,
//! `cwnd_event(CA_EVENT_TX_START)` when data is sent with nothing in flight. An algorithm with
//! a `cong_control` (BBR) sets cwnd and its pacing rate itself from each ACK's delivery-rate
//! sample, and the send state's own reductions (PRR, rate halving, the cwnd = ssthresh of the
//! seeds' kernels) leave cwnd to it, as Linux 4.9+'s `tcp_cong_control` does. Loss recovery
//! itself (Recovery, Loss, CWR, undo) stays in the send state, as it stays in `tcp_input.c`.
//!
//! [`Cc`] is an enum of the algorithms, so the send path dispatches with a `match` the compiler
//! can inline, not through a vtable. A new algorithm is a file here with a type implementing
//! [`CongestionOps`], a variant of [`Cc`] and of [`crate::CongestionControl`], and its arm in
//! [`Cc::new`].

use crate::config::{CongestionControl, Kernel, TcpConfig};
use crate::conn::RateSample;
use lasthop_core::{Dur, Time};

mod bbr;
mod cubic;
pub(crate) mod minmax;
mod reno;

pub(crate) use bbr::Bbr;
pub(crate) use cubic::{Cubic, Cubic6};
pub(crate) use reno::Reno;

/// The window the algorithm and the loss recovery both change (Linux `snd_cwnd`,
/// `snd_ssthresh`, `snd_cwnd_cnt`), in segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) cwnd: u32,
    pub(crate) ssthresh: u32,
    /// The growth counter of congestion avoidance (`snd_cwnd_cnt`).
    pub(crate) cnt: u32,
}

/// What an ACK of new data tells the algorithm (the `sk` fields Linux's hooks read).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acked {
    pub(crate) now: Time,
    /// The cumulative ACK, as an offset of our sequence space.
    pub(crate) ack: u64,
    pub(crate) snd_nxt: u64,
    /// Segments it cumulatively acknowledged (with `kernel = "linux-6.18"`: ACKed or SACKed,
    /// Linux's `acked_sacked`).
    pub(crate) segs: u32,
    /// `sk_pacing_rate` and whether the socket paces (HyStart's ACK train of 5.7+).
    pub(crate) pacing_rate: u64,
    pub(crate) paced: bool,
}

/// The rest of the socket an algorithm reads (Linux's `sk`): for `init`, `cong_control`,
/// `set_state` and `cwnd_event`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CaSk {
    /// `tcp_mstamp` / `tcp_clock_cache`.
    pub(crate) now: Time,
    pub(crate) snd_nxt: u64,
    /// `mss_cache`: the effective MSS.
    pub(crate) mss: u32,
    /// `icsk_ca_state`: Open 0, Disorder 1, CWR 2, Recovery 3, Loss 4.
    pub(crate) ca_state: u8,
    /// `tcp_packets_in_flight`.
    pub(crate) in_flight: u32,
    /// `tp->delivered`, `tp->delivered_mstamp` (µs), `tp->lost`.
    pub(crate) delivered: u64,
    pub(crate) delivered_us: u64,
    pub(crate) lost: u64,
    /// srtt in µs (0: no sample yet).
    pub(crate) srtt_us: u32,
    /// `tcp_min_rtt` in µs (`u32::MAX`: none yet).
    pub(crate) min_rtt_us: u32,
    /// `tcp_wstamp_ns`: the earliest departure time of the next skb.
    pub(crate) wstamp: Time,
    /// `tp->app_limited`.
    pub(crate) app_limited: u64,
    /// `tp->lsndtime`: when data was last sent.
    pub(crate) lsnd: Time,
}

/// Linux `struct tcp_congestion_ops`, the hooks the model has.
pub(crate) trait CongestionOps {
    /// `.ssthresh`: the slow-start threshold after a loss or an ECN echo, from the window before
    /// the reduction. `flight` is the segments outstanding, not counting limited-transmit
    /// segments (the seeds' "½ × packets outstanding").
    fn ssthresh(&mut self, w: &Window, flight: u32) -> u32;

    /// `.cong_avoid`, once the growth gate (`tcp_is_cwnd_limited`, `tcp_may_raise_cwnd`) has
    /// let the ACK through.
    fn cong_avoid(&mut self, w: &mut Window, a: &Acked);

    /// Whether `pkts_acked` wants the RTT of the newest segment acknowledged (computing it costs
    /// a pass over the acknowledged segments).
    fn wants_rtt(&self) -> bool {
        false
    }

    /// `.pkts_acked`, before the ACK's growth (`tcp_clean_rtx_queue`): `rtt` since the newest
    /// acknowledged segment never retransmitted was sent; `open` whether the state is Open.
    fn pkts_acked(&mut self, _w: &mut Window, _a: &Acked, _rtt: Option<Dur>, _open: bool) {}

    /// `.set_state(TCP_CA_Loss)`: an RTO.
    fn on_loss_state(&mut self, _sk: &CaSk) {}

    /// `.undo_cwnd`: cwnd when a reduction shown unnecessary is undone (with a prior ssthresh);
    /// `prior_cwnd` is Linux's `tp->prior_cwnd`, cwnd when the reduction began.
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32;

    /// Whether the algorithm needs pacing (`SK_PACING_NEEDED`, as BBR sets it).
    fn needs_pacing(&self) -> bool {
        false
    }

    /// The pacing rate the algorithm sets itself (bytes per second), if it does; otherwise
    /// Linux's `tcp_update_pacing_rate` applies.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// `.min_tso_segs`: the fewest segments an skb holds when paced at `rate` (Linux's sysctl
    /// `tcp_min_tso_segs`, 2, unless the algorithm says otherwise).
    fn min_tso_segs(&self, _rate: u64) -> u32 {
        2
    }

    /// The algorithm's own state, for the trace (BBR's mode).
    fn mode(&self) -> Option<&'static str> {
        None
    }

    /// Whether the algorithm has a `.cong_control` (and so takes delivery-rate samples).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `.cong_control`: cwnd (and the pacing rate) from this ACK's rate sample, in place of
    /// `cong_avoid` and the send state's reductions. `app_limited` is `tp->app_limited`.
    fn cong_control(
        &mut self,
        _w: &mut Window,
        _sk: &CaSk,
        _rs: &RateSample,
        _app_limited: &mut u64,
    ) {
    }

    /// `.init`, when the connection is established (`tcp_init_congestion_control`).
    fn init(&mut self, _w: &mut Window, _sk: &CaSk) {}

    /// `.cwnd_event(CA_EVENT_TX_START)`: data is sent with nothing in flight.
    fn tx_start(&mut self, _w: &mut Window, _sk: &CaSk) {}
}

/// The algorithms, as one type the send state owns.
#[derive(Clone, Debug)]
pub(crate) enum Cc {
    Reno(Reno),
    Cubic(Cubic),
    Cubic6(Box<Cubic6>),
    Bbr(Box<Bbr>),
}

impl Cc {
    /// The algorithm `cfg` names, its state fresh (Linux `tcp_init_congestion_control`);
    /// `seed` seeds an algorithm's random draws (BBR's first PROBE_BW phase).
    pub(crate) fn new(cfg: &TcpConfig, seed: u32) -> Cc {
        match cfg.congestion_control {
            CongestionControl::Reno => Cc::Reno(Reno::new(cfg)),
            CongestionControl::Cubic if cfg.kernel == Some(Kernel::Linux618) => {
                Cc::Cubic6(Box::new(Cubic6::new(cfg.hystart, cfg.hz, cfg.clock_phase)))
            }
            CongestionControl::Cubic => Cc::Cubic(Cubic::new(cfg.hystart)),
            CongestionControl::Bbr => Cc::Bbr(Box::new(Bbr::new(seed, cfg.hz, cfg.clock_phase))),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::Reno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Cubic6($c) => $e,
            Cc::Bbr($c) => $e,
        }
    };
}

impl CongestionOps for Cc {
    #[inline]
    fn ssthresh(&mut self, w: &Window, flight: u32) -> u32 {
        dispatch!(self, c => c.ssthresh(w, flight))
    }
    #[inline]
    fn cong_avoid(&mut self, w: &mut Window, a: &Acked) {
        dispatch!(self, c => c.cong_avoid(w, a))
    }
    #[inline]
    fn wants_rtt(&self) -> bool {
        dispatch!(self, c => c.wants_rtt())
    }
    #[inline]
    fn pkts_acked(&mut self, w: &mut Window, a: &Acked, rtt: Option<Dur>, open: bool) {
        dispatch!(self, c => c.pkts_acked(w, a, rtt, open))
    }
    #[inline]
    fn on_loss_state(&mut self, sk: &CaSk) {
        dispatch!(self, c => c.on_loss_state(sk))
    }
    #[inline]
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        dispatch!(self, c => c.undo_cwnd(w, prior_cwnd))
    }
    #[inline]
    fn needs_pacing(&self) -> bool {
        dispatch!(self, c => c.needs_pacing())
    }
    #[inline]
    fn pacing_rate(&self) -> Option<u64> {
        dispatch!(self, c => c.pacing_rate())
    }
    #[inline]
    fn min_tso_segs(&self, rate: u64) -> u32 {
        dispatch!(self, c => c.min_tso_segs(rate))
    }
    #[inline]
    fn mode(&self) -> Option<&'static str> {
        dispatch!(self, c => c.mode())
    }
    #[inline]
    fn has_cong_control(&self) -> bool {
        dispatch!(self, c => c.has_cong_control())
    }
    #[inline]
    fn cong_control(&mut self, w: &mut Window, sk: &CaSk, rs: &RateSample, app_limited: &mut u64) {
        dispatch!(self, c => c.cong_control(w, sk, rs, app_limited))
    }
    #[inline]
    fn init(&mut self, w: &mut Window, sk: &CaSk) {
        dispatch!(self, c => c.init(w, sk))
    }
    #[inline]
    fn tx_start(&mut self, w: &mut Window, sk: &CaSk) {
        dispatch!(self, c => c.tx_start(w, sk))
    }
}
