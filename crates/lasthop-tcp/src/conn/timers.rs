//! Every timer of a connection, as an absolute deadline: retransmission (which also times the
//! SYN and SYN-ACK), delayed ACK and TIME-WAIT. [`Connection::poll_timeout`] is the earliest.

use super::*;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Timers {
    /// Retransmission timer: the SYN or SYN-ACK during the handshake, then the oldest
    /// outstanding segment (armed by the send state).
    pub(super) rto: Option<Time>,
    /// Delayed ACK (armed by the receive state).
    pub(super) delack: Option<Time>,
    /// End of TIME-WAIT.
    pub(super) time_wait: Option<Time>,
    /// Delayed early retransmit (Linux `ICSK_TIME_EARLY_RETRANS`); `rto` is `None` meanwhile.
    pub(super) early_retrans: Option<Time>,
    /// Tail loss probe (Linux `ICSK_TIME_LOSS_PROBE`); `rto` is `None` meanwhile.
    pub(super) loss_probe: Option<Time>,
    /// RACK's reordering timer (Linux `ICSK_TIME_REO_TIMEOUT`); `rto` is `None` meanwhile.
    pub(super) rack: Option<Time>,
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
        let m = min(min(self.rto, self.delack), self.time_wait);
        if self.early_retrans.is_none() && self.loss_probe.is_none() && self.rack.is_none() {
            return m;
        }
        min(m, min(min(self.early_retrans, self.loss_probe), self.rack))
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

    /// Whether the delayed-ACK timer is due; it is then stopped.
    #[inline]
    pub(super) fn take_delack(&mut self, now: Time) -> bool {
        let due = self.delack.is_some_and(|t| t <= now);
        if due {
            self.delack = None;
        }
        due
    }

    /// Whether the early-retransmit timer is due; it is then stopped.
    #[inline]
    pub(super) fn take_early_retrans(&mut self, now: Time) -> bool {
        let due = self.early_retrans.is_some_and(|t| t <= now);
        if due {
            self.early_retrans = None;
        }
        due
    }

    /// Whether RACK's reordering timer is due; it is then stopped.
    #[inline]
    pub(super) fn take_rack(&mut self, now: Time) -> bool {
        let due = self.rack.is_some_and(|t| t <= now);
        if due {
            self.rack = None;
        }
        due
    }

    /// Whether the loss-probe timer is due; it is then stopped.
    #[inline]
    pub(super) fn take_loss_probe(&mut self, now: Time) -> bool {
        let due = self.loss_probe.is_some_and(|t| t <= now);
        if due {
            self.loss_probe = None;
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
