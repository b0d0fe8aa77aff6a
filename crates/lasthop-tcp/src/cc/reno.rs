//! Reno, in two kernels' versions:
//!
//! * Linux 2.4 `tcp_cong_avoid` (the default, and the seeds' and the `linux-3.16` profile's
//!   growth): slow start adds one segment per ACK of new data, whatever it covers;
//!   congestion avoidance adds one after cwnd + 1 such ACKs (`snd_cwnd_cnt` counts from 0 and
//!   the increase happens once it has reached cwnd).
//! * Linux 3.16 `tcp_reno_cong_avoid` (`kernel = "linux-3.16"`): slow start adds the
//!   segments the ACK covers, up to ssthresh + 1 (`tcp_slow_start`); congestion avoidance is
//!   2.4's (`tcp_cong_avoid_ai(tp, snd_cwnd)`: one per cwnd + 1 ACKs).
//! * Linux 6.18 `tcp_reno_cong_avoid` (`kernel = "linux-6.18"`): slow start while cwnd <
//!   ssthresh adds the segments delivered, to at most ssthresh, the rest going to congestion
//!   avoidance, which adds one per cwnd segments delivered (`tcp_cong_avoid_ai` with `acked`);
//!   an undo restores the cwnd before the reduction (`tcp_reno_undo_cwnd`).
//!
//! ssthresh is `tcp_reno_ssthresh`, max(cwnd/2, 2), or with `ssthresh_from = "flight"` (the
//! default) half the segments outstanding, as the seeds describe it. An undo restores
//! max(cwnd, 2·ssthresh) (3.16 `tcp_undo_cwnd_reduction` without an `undo_cwnd` hook).

use super::{Acked, CongestionOps, Window};
use crate::config::{Kernel, SsthreshFrom, TcpConfig};

/// Which kernel's Reno growth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenoGrowth {
    /// 2.4 `tcp_cong_avoid`.
    Linux24,
    /// 3.16 `tcp_reno_cong_avoid`.
    Linux316,
    /// 6.18 `tcp_reno_cong_avoid`.
    Linux618,
}

#[derive(Clone, Debug)]
pub(crate) struct Reno {
    growth: RenoGrowth,
    from: SsthreshFrom,
}

impl Reno {
    pub(crate) fn new(cfg: &TcpConfig) -> Reno {
        Reno {
            growth: match cfg.kernel {
                Some(Kernel::Linux316) => RenoGrowth::Linux316,
                Some(Kernel::Linux618) => RenoGrowth::Linux618,
                None => RenoGrowth::Linux24,
            },
            from: cfg.ssthresh_from,
        }
    }
}

/// 3.16 `tcp_slow_start`: cwnd += segments ACKed, to at most ssthresh + 1.
#[inline]
pub(crate) fn slow_start_316(w: &mut Window, acked: u32) {
    let c = w.cwnd + acked;
    w.cwnd = if c > w.ssthresh { w.ssthresh + 1 } else { c };
}

/// 2.4 `tcp_cong_avoid`'s congestion avoidance and 3.16 `tcp_cong_avoid_ai(tp, cnt)`: one more
/// segment once `cnt` ACKs have been counted beyond the last increase.
#[inline]
pub(crate) fn cong_avoid_ai_316(w: &mut Window, cnt: u32) {
    if w.cnt >= cnt {
        w.cwnd += 1;
        w.cnt = 0;
    } else {
        w.cnt += 1;
    }
}

/// 6.x `tcp_slow_start`: cwnd += segments ACKed, to at most ssthresh; returns what is left of
/// them for congestion avoidance.
#[inline]
pub(crate) fn slow_start_6(w: &mut Window, acked: u32) -> u32 {
    let c = (w.cwnd + acked).min(w.ssthresh);
    let left = acked - (c - w.cwnd);
    w.cwnd = c;
    left
}

/// 6.x `tcp_cong_avoid_ai(tp, cnt, acked)`: one segment per `cnt` segments ACKed (credits
/// accumulated at a larger `cnt` are applied first).
#[inline]
pub(crate) fn cong_avoid_ai_6(w: &mut Window, cnt: u32, acked: u32) {
    let cnt = cnt.max(1);
    if w.cnt >= cnt {
        w.cnt = 0;
        w.cwnd += 1;
    }
    w.cnt += acked;
    if w.cnt >= cnt {
        let delta = w.cnt / cnt;
        w.cnt -= delta * cnt;
        w.cwnd += delta;
    }
}

impl CongestionOps for Reno {
    #[inline]
    fn ssthresh(&mut self, w: &Window, flight: u32) -> u32 {
        let base = match self.from {
            SsthreshFrom::Cwnd => w.cwnd,
            SsthreshFrom::Flight => flight,
        };
        (base / 2).max(2)
    }

    #[inline]
    fn cong_avoid(&mut self, w: &mut Window, a: &Acked) {
        if self.growth == RenoGrowth::Linux618 {
            // `tcp_in_slow_start` is cwnd < ssthresh since 4.x.
            let mut acked = a.segs;
            if w.cwnd < w.ssthresh {
                acked = slow_start_6(w, acked);
                if acked == 0 {
                    return;
                }
            }
            let cwnd = w.cwnd;
            cong_avoid_ai_6(w, cwnd, acked);
            return;
        }
        if w.cwnd <= w.ssthresh {
            match self.growth {
                RenoGrowth::Linux24 => w.cwnd += 1,
                RenoGrowth::Linux316 | RenoGrowth::Linux618 => slow_start_316(w, a.segs),
            }
        } else {
            cong_avoid_ai_316(w, w.cwnd);
        }
    }

    #[inline]
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        if self.growth == RenoGrowth::Linux618 {
            // 6.x `tcp_reno_undo_cwnd`: the cwnd before the reduction.
            return w.cwnd.max(prior_cwnd);
        }
        w.cwnd.max(w.ssthresh.saturating_mul(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::Time;

    fn acked(segs: u32) -> Acked {
        Acked {
            now: Time::ZERO,
            ack: 0,
            snd_nxt: 0,
            segs,
            pacing_rate: 0,
            paced: false,
        }
    }

    fn reno(growth: RenoGrowth, from: SsthreshFrom) -> Reno {
        Reno { growth, from }
    }

    #[test]
    fn linux24_slow_start_counts_acks_and_316_counts_segments() {
        // An ACK covering 2 segments at cwnd 4: 2.4 adds 1 (5), 3.16 adds 2 (6); with
        // ssthresh 4 3.16 stops at ssthresh + 1 = 5.
        let mut w = Window {
            cwnd: 4,
            ssthresh: 100,
            cnt: 0,
        };
        reno(RenoGrowth::Linux24, SsthreshFrom::Cwnd).cong_avoid(&mut w, &acked(2));
        assert_eq!(w.cwnd, 5);
        let mut w = Window {
            cwnd: 4,
            ssthresh: 100,
            cnt: 0,
        };
        reno(RenoGrowth::Linux316, SsthreshFrom::Cwnd).cong_avoid(&mut w, &acked(2));
        assert_eq!(w.cwnd, 6);
        let mut w = Window {
            cwnd: 4,
            ssthresh: 4,
            cnt: 0,
        };
        reno(RenoGrowth::Linux316, SsthreshFrom::Cwnd).cong_avoid(&mut w, &acked(3));
        assert_eq!(w.cwnd, 5);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_cwnd_plus_one_acks() {
        // cwnd 5 above ssthresh 4: the counter goes 0..5, the sixth ACK raises cwnd to 6.
        for growth in [RenoGrowth::Linux24, RenoGrowth::Linux316] {
            let mut r = reno(growth, SsthreshFrom::Cwnd);
            let mut w = Window {
                cwnd: 5,
                ssthresh: 4,
                cnt: 0,
            };
            for k in 1..=5 {
                r.cong_avoid(&mut w, &acked(2));
                assert_eq!((w.cwnd, w.cnt), (5, k), "{growth:?}");
            }
            r.cong_avoid(&mut w, &acked(2));
            assert_eq!((w.cwnd, w.cnt), (6, 0));
        }
    }

    #[test]
    fn linux6_slow_start_stops_at_ssthresh_and_counts_the_rest() {
        // cwnd 8, ssthresh 10, 5 delivered: slow start to 10, 3 left for avoidance (counter 3
        // of 10); then 17 more: counter 20 = 2 · 10: cwnd 12, counter 0.
        let mut r = reno(RenoGrowth::Linux618, SsthreshFrom::Cwnd);
        let mut w = Window {
            cwnd: 8,
            ssthresh: 10,
            cnt: 0,
        };
        r.cong_avoid(&mut w, &acked(5));
        assert_eq!((w.cwnd, w.cnt), (10, 3));
        r.cong_avoid(&mut w, &acked(17));
        assert_eq!((w.cwnd, w.cnt), (12, 0));
        // Undo: the cwnd before the reduction.
        assert_eq!(r.undo_cwnd(&w, 20), 20);
        assert_eq!(r.undo_cwnd(&w, 5), 12);
    }

    #[test]
    fn ssthresh_halves_cwnd_or_the_flight_and_undo_doubles_it() {
        let w = Window {
            cwnd: 11,
            ssthresh: 100,
            cnt: 0,
        };
        assert_eq!(
            reno(RenoGrowth::Linux24, SsthreshFrom::Cwnd).ssthresh(&w, 7),
            5
        );
        assert_eq!(
            reno(RenoGrowth::Linux24, SsthreshFrom::Flight).ssthresh(&w, 7),
            3
        );
        assert_eq!(
            reno(RenoGrowth::Linux24, SsthreshFrom::Flight).ssthresh(&w, 3),
            2
        );
        let w = Window {
            cwnd: 3,
            ssthresh: 5,
            cnt: 0,
        };
        assert_eq!(
            reno(RenoGrowth::Linux24, SsthreshFrom::Cwnd).undo_cwnd(&w, 0),
            10
        );
    }
}
