//! The retransmission timeout as Linux 2.4 computes it (`tcp_rtt_estimator`, `tcp_set_rto`).
//!
//! Kept in nanoseconds instead of jiffies (so no 10 ms granularity) but with Linux's scaling:
//! `srtt8` is 8·srtt, `mdev4` is 4·mean deviation; `rttvar` is in plain units and is what is
//! added to srtt (it plays the role of RFC 2988's 4·RTTVAR). The first sample gives
//! RTO = 3·RTT ("make sure rto = 3*rtt"); a falling RTT moves mdev with a gain of 1/32 instead
//! of 1/4; rttvar jumps up at once but decays only once per RTT, towards the largest mdev seen
//! in that RTT, and never below `rto_min`.

use lasthop_core::Dur;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt8: u64,
    mdev4: u64,
    mdev_max: u64,
    rttvar: u64,
    /// The per-RTT decay happens when snd_una passes this (relative sequence).
    rtt_seq: u64,
    rto: u64,
    rto_min: u64,
    rto_max: u64,
    /// The RTO has been backed off since the last sample (Linux `tp->backoff != 0`).
    backed_off: bool,
}

impl RttEstimator {
    pub fn new(initial: Dur, min: Dur, max: Dur) -> Self {
        RttEstimator {
            srtt8: 0,
            mdev4: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            rto: initial.0,
            rto_min: min.0,
            rto_max: max.0,
            backed_off: false,
        }
    }

    /// One RTT sample `m` by Linux 2.2/2.3's rules (`rto_estimator = "linux22"`, seed 001's
    /// Linux 2.3.99-pre9): `tcp_rtt_estimator` with mdev = 4·mean deviation and gain 1/4 both
    /// ways (the first sample: srtt = m, mdev = 4m), then `tcp_set_rto` with the current `cwnd`:
    /// RTO = (srtt + mdev) + (srtt + mdev)/4 + (srtt + mdev) >> (cwnd − 1), bounded by
    /// `tcp_bound_rto` (here `rto_min`, `rto_max`). The seed's kernels were x86, where a shift
    /// by 32 or more wraps (its "cwnd multiple of 32" bug, whose runs it excluded): here the
    /// term is 0 from cwnd 33 on.
    pub fn sample22(&mut self, m: Dur, cwnd: u32) {
        let m = m.0.max(1);
        if self.srtt8 != 0 {
            let err = m as i64 - (self.srtt8 >> 3) as i64;
            self.srtt8 = (self.srtt8 as i64 + err) as u64;
            let e = err.unsigned_abs() as i64 - (self.mdev4 >> 2) as i64;
            self.mdev4 = (self.mdev4 as i64 + e).max(0) as u64;
        } else {
            self.srtt8 = m << 3;
            self.mdev4 = m << 2;
        }
        self.rttvar = self.mdev4;
        self.backed_off = false;
        let base = (self.srtt8 >> 3) + self.mdev4;
        let shift = cwnd.max(1) - 1;
        let term = if shift < 64 { base >> shift } else { 0 };
        self.rto = (base + (base >> 2) + term).clamp(self.rto_min, self.rto_max);
    }

    /// One RTT sample `m`, taken when the ACK has moved snd_una to `snd_una`.
    pub fn sample(&mut self, m: Dur, snd_una: u64, snd_nxt: u64) {
        let m = m.0.max(1) as i64;
        if self.srtt8 != 0 {
            let mut err = m - (self.srtt8 >> 3) as i64;
            self.srtt8 = (self.srtt8 as i64 + err) as u64;
            if err < 0 {
                err = -err - (self.mdev4 >> 2) as i64;
                // An RTT that falls gets less weight (an Eifel finding, says Linux).
                if err > 0 {
                    err >>= 3;
                }
            } else {
                err -= (self.mdev4 >> 2) as i64;
            }
            self.mdev4 = (self.mdev4 as i64 + err).max(0) as u64;
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.rto_min;
            }
        } else {
            self.srtt8 = (m as u64) << 3;
            self.mdev4 = (m as u64) << 1;
            self.mdev_max = self.mdev4.max(self.rto_min);
            self.rttvar = self.mdev_max;
            self.rtt_seq = snd_nxt;
        }
        // tcp_set_rto + tcp_bound_rto; a fresh sample also ends any backoff.
        self.backed_off = false;
        self.rto = ((self.srtt8 >> 3) + self.rttvar).min(self.rto_max);
    }

    /// Exponential backoff after an expiry (Linux doubles `tp->rto` itself, so the backed-off
    /// value stays until the next valid sample: Karn's rule).
    pub fn backoff(&mut self) {
        self.backed_off = true;
        self.rto = (self.rto.saturating_mul(2)).min(self.rto_max);
    }

    /// Back to the initial RTO (after a handshake whose SYN was retransmitted, no sample).
    pub fn reset(&mut self, initial: Dur) {
        if self.srtt8 == 0 {
            self.rto = initial.0;
        }
    }

    /// Linux `tcp_init_metrics` with a cached entry: srtt is never below the cached one and
    /// the cached deviation (×4 scale) raises mdev. Returns false, after forgetting everything
    /// (RTO back to `initial`), when the result is below `initial` and timestamps are off
    /// ("FORGET ALL AND RESET").
    pub fn seed_from_cache(
        &mut self,
        srtt: Dur,
        mdev4: Dur,
        timestamps: bool,
        initial: Dur,
    ) -> bool {
        if srtt.0 == 0 || (self.srtt8 == 0 && srtt < initial) {
            self.forget(timestamps, initial);
            return false;
        }
        self.srtt8 = self.srtt8.max(srtt.0 << 3);
        if mdev4.0 > self.mdev4 {
            self.mdev4 = mdev4.0;
            self.mdev_max = self.mdev4.max(self.rto_min);
            self.rttvar = self.mdev_max;
        }
        self.rto = ((self.srtt8 >> 3) + self.rttvar).min(self.rto_max);
        if self.rto < initial.0 && !timestamps {
            self.forget(timestamps, initial);
            return false;
        }
        true
    }

    /// Linux's reset path of `tcp_init_metrics`: without timestamps a handshake sample is
    /// dropped and the RTO is the initial one.
    pub fn forget(&mut self, timestamps: bool, initial: Dur) {
        if !timestamps && self.srtt8 != 0 {
            self.srtt8 = 0;
            self.mdev4 = initial.0;
            self.mdev_max = initial.0;
            self.rttvar = initial.0;
            self.rto = initial.0;
        }
    }

    /// 4 × mean deviation (Linux `tp->mdev`), what the metrics cache keeps.
    pub fn mdev4(&self) -> Dur {
        Dur(self.mdev4)
    }

    /// The RTO without backoff, srtt + rttvar (Linux `__tcp_set_rto`), for linear timeouts.
    pub fn unbacked(&mut self) {
        if self.srtt8 != 0 {
            self.rto = ((self.srtt8 >> 3) + self.rttvar).min(self.rto_max);
            self.backed_off = false;
        }
    }

    pub fn backed_off(&self) -> bool {
        self.backed_off
    }

    pub fn rto(&self) -> Dur {
        Dur(self.rto)
    }
    pub fn srtt(&self) -> Option<Dur> {
        (self.srtt8 != 0).then_some(Dur(self.srtt8 >> 3))
    }
    pub fn rttvar(&self) -> Dur {
        Dur(self.rttvar)
    }
    pub fn mdev(&self) -> Dur {
        Dur(self.mdev4 >> 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Dur {
        Dur::from_millis(n)
    }

    #[test]
    fn first_sample_gives_three_rtt() {
        let mut r = RttEstimator::new(ms(3000), ms(200), ms(120_000));
        assert_eq!(r.rto(), ms(3000));
        r.sample(ms(611), 1, 1);
        assert_eq!(r.srtt(), Some(ms(611)));
        assert_eq!(r.rttvar(), ms(1222));
        assert_eq!(r.rto(), ms(1833));
        // A short RTT still keeps rttvar at 200 ms.
        let mut r = RttEstimator::new(ms(3000), ms(200), ms(120_000));
        r.sample(ms(10), 1, 1);
        assert_eq!(r.rto(), ms(210));
    }

    #[test]
    fn second_sample_by_hand() {
        let mut r = RttEstimator::new(ms(3000), ms(200), ms(120_000));
        r.sample(ms(800), 1, 5); // srtt 800, mdev4 1600, rttvar 1600, rtt_seq 5
                                 // m = 720: err = -80 -> srtt 790; |err| - mdev4/4 = 80 - 400 < 0 -> mdev4 = 1600 - 320.
        r.sample(ms(720), 3, 7);
        assert_eq!(r.srtt(), Some(ms(790)));
        assert_eq!(r.mdev(), ms(320));
        assert_eq!(r.rttvar(), ms(1600));
        // snd_una 6 passes rtt_seq 5: a new round. rttvar would decay towards this round's
        // mdev_max, but that is 1600 ms = rttvar, so it stays; mdev_max resets to 200 ms.
        r.sample(ms(790), 6, 9);
        // err 0 -> mdev4 = 1280 - 320 = 960; mdev_max was 1600 -> rttvar stays 1600.
        assert_eq!(r.rttvar(), ms(1600));
        assert_eq!(r.rto(), ms(790 + 1600));
        // Next round: mdev_max = max(200, 960 - 240 = 720) = 720; rttvar -= (1600 - 720)/4.
        r.sample(ms(790), 10, 12);
        assert_eq!(r.mdev(), ms(180));
        assert_eq!(r.rttvar(), ms(1600 - 220));
    }

    /// Linux 2.2/2.3 (`rto_estimator = "linux22"`). A first sample of 1 s with cwnd 2: srtt 1 s,
    /// mdev 4 s, base 5 s, RTO = 5 + 5/4 + 5 >> 1 = 8.75 s. Then 1.2 s with cwnd 3: error
    /// 0.2 s, srtt 1.025 s, mdev = 4 + 0.2 - 4/4 = 3.2 s, base 4.225 s, RTO = 4.225 + 1.05625 +
    /// 4.225/4 = 6.3375 s. From cwnd 33 the shifted term is 0 (no x86 wrap); a short RTT stops at
    /// the 200 ms floor.
    #[test]
    fn linux22_rto_by_hand() {
        let mut r = RttEstimator::new(ms(3000), ms(200), ms(120_000));
        r.sample22(ms(1000), 2);
        assert_eq!(r.srtt(), Some(ms(1000)));
        assert_eq!(r.rto(), ms(8750));
        r.sample22(ms(1200), 3);
        assert_eq!(r.srtt(), Some(ms(1025)));
        assert_eq!(r.mdev4(), ms(3200));
        assert_eq!(r.rto(), Dur(6_337_500_000));
        let mut big = r.clone();
        big.sample22(ms(1025), 40);
        // error 0: mdev = 3.2 - 0.8 = 2.4 s, base 3.425 s, RTO = 3.425 * 5/4
        assert_eq!(big.rto(), Dur(4_281_250_000));
        let mut short = RttEstimator::new(ms(3000), ms(200), ms(120_000));
        short.sample22(ms(10), 10);
        assert_eq!(short.rto(), ms(200));
        // Backoff doubles it, a new sample ends that.
        r.backoff();
        assert_eq!(r.rto(), Dur(12_675_000_000));
    }

    #[test]
    fn backoff_doubles_to_the_cap() {
        let mut r = RttEstimator::new(ms(3000), ms(200), ms(120_000));
        for want in [6000, 12000, 24000, 48000, 96000, 120000, 120000] {
            r.backoff();
            assert_eq!(r.rto(), ms(want));
        }
    }
}
