//! Control Block Interdependence (RFC 2140) as Linux 2.4's per-destination route metrics:
//! a connection that closes properly leaves its srtt, deviation, ssthresh and cwnd for the next
//! connection to the same host (`tcp_update_metrics`), which starts from them
//! (`tcp_init_metrics`). The cache itself lives in [`crate::Host`].

use lasthop_core::Dur;

/// One destination's cached values. Zero means "not known".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Smoothed RTT (Linux `dst->rtt`).
    pub srtt: Dur,
    /// 4 × mean deviation (Linux `dst->rttvar`, in `tp->mdev`'s scale).
    pub mdev4: Dur,
    /// Slow-start threshold in segments.
    pub ssthresh: u32,
    /// Congestion window in segments.
    pub cwnd: u32,
}

/// What a closing connection reports to the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClosingState {
    /// `None` when the connection never got an RTT sample or ended backed off.
    pub srtt: Option<Dur>,
    pub mdev4: Dur,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// In the Open state (cwnd is trustworthy).
    pub open: bool,
}

/// Linux 2.4 treats ssthresh ≥ 0xFFFF as "slow start never ended".
const SS_NOT_ENDED: u32 = 0xFFFF;

impl Metrics {
    /// Linux `tcp_update_metrics`: the stored RTT follows a larger srtt at once and a smaller
    /// one by 1/8; the deviation likewise (at least the connection's mdev, decaying by 1/4);
    /// ssthresh and cwnd by the phase the connection ended in.
    pub fn updated(self, c: &ClosingState) -> Metrics {
        let mut m = self;
        let Some(srtt) = c.srtt else {
            m.srtt = Dur::ZERO; // "this session failed to estimate rtt": forget it
            return m;
        };
        let diff = m.srtt.0 as i128 - srtt.0 as i128;
        if diff <= 0 {
            m.srtt = srtt;
        } else {
            m.srtt = Dur(m.srtt.0 - (diff as u64 >> 3));
        }
        // |diff| as a mean deviation, in the ×4 scale of mdev.
        let v = (diff.unsigned_abs() as u64)
            .saturating_mul(4)
            .max(c.mdev4.0);
        if v >= m.mdev4.0 {
            m.mdev4 = Dur(v);
        } else {
            m.mdev4 = Dur(m.mdev4.0 - ((m.mdev4.0 - v) >> 2));
        }
        if c.ssthresh >= SS_NOT_ENDED {
            if m.ssthresh != 0 && c.cwnd >> 1 > m.ssthresh {
                m.ssthresh = c.cwnd >> 1;
            }
            m.cwnd = m.cwnd.max(c.cwnd);
        } else if c.cwnd > c.ssthresh && c.open {
            // Congestion avoidance: cwnd is reliable.
            m.ssthresh = (c.cwnd >> 1).max(c.ssthresh);
            m.cwnd = (m.cwnd + c.cwnd) >> 1;
        } else {
            m.cwnd = (m.cwnd + c.ssthresh) >> 1;
            if m.ssthresh != 0 && c.ssthresh > m.ssthresh {
                m.ssthresh = c.ssthresh;
            }
        }
        m
    }
}

/// Linux `tcp_init_cwnd`: the initial window when metrics are used, by MSS (seed 000 A.2.6).
pub fn linux_iw(mss: u32) -> u32 {
    if mss > 1460 {
        2
    } else if mss > 1095 {
        3
    } else {
        4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Dur {
        Dur::from_millis(n)
    }

    #[test]
    fn update_by_hand() {
        let old = Metrics {
            srtt: ms(800),
            mdev4: ms(400),
            ssthresh: 6,
            cwnd: 10,
        };
        // A faster connection in congestion avoidance: srtt 720 -> 800 - 80/8 = 790;
        // deviation max(4·80, 200) = 320 < 400 -> 400 - 80/4 = 380; ssthresh max(12/2, 5) = 6,
        // cwnd (10 + 12) / 2 = 11.
        let c = ClosingState {
            srtt: Some(ms(720)),
            mdev4: ms(200),
            cwnd: 12,
            ssthresh: 5,
            open: true,
        };
        assert_eq!(
            old.updated(&c),
            Metrics {
                srtt: ms(790),
                mdev4: ms(380),
                ssthresh: 6,
                cwnd: 11
            }
        );
        // A slower one: srtt taken at once; deviation 4·100 = 400 >= 400 -> 400.
        let c = ClosingState {
            srtt: Some(ms(900)),
            ..c
        };
        assert_eq!(old.updated(&c).srtt, ms(900));
        // Slow start never ended: ssthresh unknown stays unknown, cwnd the larger.
        let c = ClosingState {
            srtt: Some(ms(900)),
            mdev4: ms(100),
            cwnd: 14,
            ssthresh: 0x7fff_ffff,
            open: true,
        };
        let m = Metrics::default().updated(&c);
        assert_eq!((m.ssthresh, m.cwnd, m.srtt), (0, 14, ms(900)));
        // No RTT estimate: the stored RTT is forgotten.
        let c = ClosingState { srtt: None, ..c };
        assert_eq!(old.updated(&c).srtt, Dur::ZERO);
    }

    #[test]
    fn linux_initial_window() {
        assert_eq!(linux_iw(536), 4);
        assert_eq!(linux_iw(1095), 4);
        assert_eq!(linux_iw(1460), 3);
        assert_eq!(linux_iw(9000), 2);
    }
}
