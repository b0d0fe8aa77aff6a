//! Reno, in two kernels' versions:
//!
//! * Linux 2.4 `tcp_cong_avoid` (the default, and the seeds' and the `linux-3.16` profile's
//!   growth): slow start adds one segment per ACK of new data, whatever it covers;
//!   congestion avoidance adds one after cwnd + 1 such ACKs (`snd_cwnd_cnt` counts from 0 and
//!   the increase happens once it has reached cwnd).
//! * Linux 3.16 `tcp_reno_cong_avoid` (`cc_kernel = "linux-3.16"`): slow start adds the
//!   segments the ACK covers, up to ssthresh + 1 (`tcp_slow_start`); congestion avoidance is
//!   2.4's (`tcp_cong_avoid_ai(tp, snd_cwnd)`: one per cwnd + 1 ACKs).
//!
//! ssthresh is `tcp_reno_ssthresh`, max(cwnd/2, 2), or with `ssthresh_from = "flight"` (the
//! default) half the segments outstanding, as the seeds describe it. An undo restores
//! max(cwnd, 2·ssthresh) (3.16 `tcp_undo_cwnd_reduction` without an `undo_cwnd` hook).

use super::{Acked, CongestionOps, Window};
use crate::config::{CcKernel, SsthreshFrom, TcpConfig};

/// Which kernel's Reno growth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenoGrowth {
    /// 2.4 `tcp_cong_avoid`.
    Linux24,
    /// 3.16 `tcp_reno_cong_avoid`.
    Linux316,
}

#[derive(Clone, Debug)]
pub(crate) struct Reno {
    growth: RenoGrowth,
    from: SsthreshFrom,
}

impl Reno {
    pub(crate) fn new(cfg: &TcpConfig) -> Reno {
        Reno {
            growth: match cfg.cc_kernel {
                Some(CcKernel::Linux316) => RenoGrowth::Linux316,
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
        if w.cwnd <= w.ssthresh {
            match self.growth {
                RenoGrowth::Linux24 => w.cwnd += 1,
                RenoGrowth::Linux316 => slow_start_316(w, a.segs),
            }
        } else {
            cong_avoid_ai_316(w, w.cwnd);
        }
    }

    #[inline]
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u32) -> u32 {
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
