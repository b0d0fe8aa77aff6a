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

pub(super) use crate::config::jiffy_ns;

/// `jiffies` at `now` on the host's grid (`cfg.clock_phase`).
pub(super) fn jiffies(cfg: &TcpConfig, now: Time) -> u64 {
    crate::config::jiffies_at(cfg.hz, cfg.clock_phase, now)
}

/// When a timer armed at `now` for `timeout` fires (`cfg.timer_wheel`: Linux 4.8+'s wheel,
/// `kernel/time/timer.c` `calc_wheel_index`/`calc_index`). The timeout is taken in whole
/// jiffies, rounded up (`usecs_to_jiffies`), and the timer is queued by how far its expiry is:
/// below 63 jiffies in level 0, below 504 in level 1, below 4032 in level 2, then level 3, each
/// level's buckets 8 times the last's (1, 8, 64, 512 jiffies). It fires at the end of its
/// bucket, `((expires >> 3·level) + 1) << 3·level` jiffies ("the timer wheel has to guarantee
/// that a timer does not fire early"): 1 jiffy late at most in level 0, 32 ms in level 1 and
/// 256 ms in level 2 at HZ 250. The jiffies grid sits at `cfg.clock_phase`. Without the wheel
/// the timer fires at `now + timeout`.
pub(super) fn timer_at(cfg: &TcpConfig, now: Time, timeout: Dur) -> Time {
    if !cfg.timer_wheel {
        return now + timeout;
    }
    let tick = jiffy_ns(cfg.hz);
    let jiffies = jiffies(cfg, now);
    let delta = timeout.0.div_ceil(tick);
    let expires = jiffies + delta;
    let level = match delta {
        0..63 => 0,
        63..504 => 1,
        504..4032 => 2,
        _ => 3,
    };
    let fire = ((expires >> (3 * level)) + 1) << (3 * level);
    Time((fire * tick).saturating_sub(cfg.clock_phase.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel(phase_ms: u64) -> TcpConfig {
        TcpConfig {
            hz: 250,
            timer_wheel: true,
            clock_phase: Dur::from_millis(phase_ms),
            ..TcpConfig::default()
        }
    }

    fn ms(n: u64) -> Dur {
        Dur::from_millis(n)
    }

    #[test]
    fn wheel_fires_at_the_end_of_the_bucket() {
        // HZ 250 (4 ms jiffies), the grid at 0. A 40 ms delayed ACK armed at 1002 ms (jiffy 250):
        // 10 jiffies, level 0, expires 260, fires at jiffy 261 = 1044 ms.
        let c = wheel(0);
        assert_eq!(
            timer_at(&c, Time::ZERO + ms(1002), ms(40)),
            Time::ZERO + ms(1044)
        );
        // A 1.26 s loss probe armed at 629 ms (jiffy 157): 315 jiffies, level 1 (8 jiffies),
        // expires 472, fires at (472 >> 3) + 1 = 60 → jiffy 480 = 1920 ms: 31 ms late (the
        // emulated 6.18 host's first probe on seed 000's e0 left 1.288 s after its flight).
        assert_eq!(
            timer_at(&c, Time::ZERO + ms(629), ms(1260)),
            Time::ZERO + ms(1920)
        );
        // A 3.6 s RTO armed at 53 458 ms (jiffy 13 364): 900 jiffies, level 2 (64 jiffies),
        // expires 14 264, fires at (14 264 >> 6) + 1 = 223 → jiffy 14 272 = 57 088 ms.
        assert_eq!(
            timer_at(&c, Time::ZERO + ms(53_458), ms(3600)),
            Time::ZERO + ms(57_088)
        );
        // The grid shifted by 2 ms: jiffy boundaries at 2, 6, 10 ... ms of the simulation.
        let c = wheel(2);
        assert_eq!(
            timer_at(&c, Time::ZERO + ms(1002), ms(40)),
            Time::ZERO + ms(1046)
        );
        // Without the wheel: on time.
        let c = TcpConfig::default();
        assert_eq!(
            timer_at(&c, Time::ZERO + ms(1002), ms(40)),
            Time::ZERO + ms(1042)
        );
    }
}
