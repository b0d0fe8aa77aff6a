//! Every timer of a connection, as an absolute deadline: retransmission (which also times the
//! SYN and SYN-ACK), delayed ACK and TIME-WAIT. [`Connection::poll_timeout`] is the earliest.

use super::*;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Timers {
    /// Retransmission timer: the SYN or SYN-ACK during the handshake, then the oldest
    /// outstanding segment (armed by the send state).
    pub(super) rto: Option<Time>,
    /// Delayed ACK (armed by the receive state, [`Timers::set_delack`]).
    delack: Option<Time>,
    /// End of TIME-WAIT.
    pub(super) time_wait: Option<Time>,
    /// The timer that takes the retransmission timer's place in Linux's single slot
    /// (`icsk_pending`): the delayed early retransmit, the tail loss probe or RACK's reordering
    /// timer, and which. `rto` is `None` while it is armed.
    pub(super) alt: Option<(Time, AltTimer)>,
    /// Linux's pacing timer (`pacing_timer`, `tcp_pace_kick`): the sender waits for the
    /// earliest departure time of its next segment ([`Timers::set_pace`]).
    pace: Option<Time>,
    /// The earlier of `delack` and `pace`, kept as they change, so that [`Timers::next`] (asked
    /// after every packet) compares no more deadlines than without pacing.
    soft: Option<Time>,
}

#[inline]
fn min_opt(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// What the alternative retransmission timer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AltTimer {
    /// Linux `ICSK_TIME_EARLY_RETRANS`.
    EarlyRetrans,
    /// Linux `ICSK_TIME_LOSS_PROBE`.
    LossProbe,
    /// Linux `ICSK_TIME_REO_TIMEOUT`.
    Rack,
}

impl Timers {
    /// The earliest deadline.
    #[inline]
    pub(super) fn next(&self) -> Option<Time> {
        // Written out: the host asks every connection after every packet.
        let min = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        };
        let m = min(min(self.rto, self.soft), self.time_wait);
        match self.alt {
            None => m,
            Some((t, _)) => min(m, Some(t)),
        }
    }

    /// The connection is closed: nothing more to time.
    #[inline]
    pub(super) fn stop_all(&mut self) {
        *self = Timers::default();
    }

    #[inline]
    pub(super) fn time_wait_due(&self, now: Time) -> bool {
        self.time_wait.is_some_and(|t| t <= now)
    }

    /// The delayed-ACK deadline.
    #[inline]
    pub(super) fn delack(&self) -> Option<Time> {
        self.delack
    }

    /// Arms (or with `None` stops) the delayed-ACK timer.
    #[inline]
    pub(super) fn set_delack(&mut self, t: Option<Time>) {
        self.delack = t;
        self.soft = match self.pace {
            None => t,
            p => min_opt(t, p),
        };
    }

    /// Arms the pacing timer.
    #[inline]
    pub(super) fn set_pace(&mut self, t: Time) {
        self.pace = Some(t);
        self.soft = min_opt(self.delack, self.pace);
    }

    /// Whether the delayed-ACK timer is due; it is then stopped.
    #[inline]
    pub(super) fn take_delack(&mut self, now: Time) -> bool {
        let due = self.delack.is_some_and(|t| t <= now);
        if due {
            self.set_delack(None);
        }
        due
    }

    /// The alternative retransmission timer, if it is due; it is then stopped.
    #[inline]
    pub(super) fn take_alt(&mut self, now: Time) -> Option<AltTimer> {
        match self.alt {
            Some((t, kind)) if t <= now => {
                self.alt = None;
                Some(kind)
            }
            _ => None,
        }
    }

    /// Whether the pacing timer is due; it is then stopped (the sender may send again).
    #[inline]
    pub(super) fn take_pace(&mut self, now: Time) -> bool {
        let due = self.pace.is_some_and(|t| t <= now);
        if due {
            self.pace = None;
            self.soft = self.delack;
        }
        due
    }

    /// Whether the retransmission timer is due; it is then stopped.
    #[inline]
    pub(super) fn take_rto(&mut self, now: Time) -> bool {
        let due = self.rto.is_some_and(|t| t <= now);
        if due {
            self.rto = None;
        }
        due
    }
}
