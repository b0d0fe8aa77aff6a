//! CUBIC and HyStart as Linux 3.16 `net/ipv4/tcp_cubic.c` has them, with its module
//! parameters' defaults: `beta` 717/1024, `bic_scale` 41 (C = 0.4, `cube_rtt_scale` 410),
//! `fast_convergence` and `tcp_friendliness` on, `hystart_detect` 3 (ACK train and delay),
//! `hystart_low_window` 16, `hystart_ack_delta` 2 ms; HZ = 1000, so `tcp_time_stamp` and
//! `bictcp_clock` are both milliseconds. The integer arithmetic is the kernel's, cube root
//! included, so a hand calculation from the kernel source gives the model's numbers.

use super::{Acked, CaSk, CongestionOps, Window};
use lasthop_core::{Dur, Time};

const BETA_SCALE: u32 = 1024;
const BETA: u32 = 717;
const BICTCP_HZ: u32 = 10;
/// `cube_rtt_scale = bic_scale * 10`.
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// `cube_factor = 2^40 / (bic_scale * 10)`.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (41 * 10);
/// `beta_scale = 8 * (1024 + beta) / 3 / (1024 - beta)` = 15.
const BETA_SCALE_FRIENDLY: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
const ACK_RATIO_SHIFT: u32 = 4;
const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;
const HYSTART_ACK_TRAIN: u8 = 1;
const HYSTART_DELAY: u8 = 2;
const HYSTART_MIN_SAMPLES: u8 = 8;
const HYSTART_DELAY_MIN: u32 = 4 << 3;
const HYSTART_DELAY_MAX: u32 = 16 << 3;
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_ACK_DELTA: u32 = 2;

/// `tcp_time_stamp` with HZ = 1000.
#[inline]
pub(super) fn jiffies(now: Time) -> u32 {
    (now.0 / 1_000_000) as u32
}

/// Linux `struct bictcp`.
#[derive(Clone, Debug)]
pub(crate) struct Cubic {
    hystart: bool,
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    bic_origin_point: u32,
    bic_k: u32,
    /// Minimum delay seen, ms << 3 (0: none yet).
    delay_min: u32,
    /// Start of the current epoch (`epoch_start`, 0 in Linux meaning none).
    epoch_start: Option<u32>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// Packets per ACK << 4.
    delayed_ack: u32,
    sample_cnt: u8,
    found: u8,
    round_start: u32,
    end_seq: u64,
    last_ack: u32,
    curr_rtt: u32,
}

impl Cubic {
    /// `bictcp_init`; HyStart's round starts at the first ACK (Linux starts it at connection
    /// setup, which makes no difference: that ACK is past `end_seq` either way).
    pub(crate) fn new(hystart: bool) -> Cubic {
        let mut c = Cubic {
            hystart,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            sample_cnt: 0,
            found: 0,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: 0,
        };
        c.reset();
        c
    }

    /// `bictcp_reset`: everything but `loss_cwnd`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = 0;
    }

    /// `bictcp_hystart_reset`: a new round starts.
    fn hystart_reset(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = jiffies(now);
        self.last_ack = self.round_start;
        self.end_seq = snd_nxt;
        self.curr_rtt = 0;
        self.sample_cnt = 0;
    }

    /// `bictcp_state(sk, TCP_CA_Loss)`: an RTO forgets W_max and the delay history.
    pub(super) fn loss_state(&mut self, now: Time, snd_nxt: u64) {
        self.reset();
        self.hystart_reset(now, snd_nxt);
    }

    /// `bictcp_recalc_ssthresh`: the epoch ends; W_max (lowered by fast convergence when the
    /// window did not regain the previous maximum); ssthresh = max(cwnd·717/1024, 2).
    pub(super) fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        if cwnd < self.last_max_cwnd {
            self.last_max_cwnd = cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE);
        } else {
            self.last_max_cwnd = cwnd;
        }
        self.loss_cwnd = cwnd;
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `bictcp_undo_cwnd`.
    pub(super) fn undo(&self, cwnd: u32) -> u32 {
        cwnd.max(self.loss_cwnd)
    }

    /// `bictcp_cong_avoid` once `tcp_is_cwnd_limited` has let it through: slow start
    /// (`tcp_slow_start`: cwnd += ACKed segments, to at most ssthresh + 1), or the cubic
    /// increase (`tcp_cong_avoid_ai` with `cnt`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn avoid(
        &mut self,
        cwnd: &mut u32,
        cwnd_cnt: &mut u32,
        ssthresh: u32,
        ack: u64,
        acked: u32,
        snd_nxt: u64,
        now: Time,
    ) {
        if *cwnd <= ssthresh {
            if self.hystart && ack > self.end_seq {
                self.hystart_reset(now, snd_nxt);
            }
            let mut c = *cwnd + acked;
            if c > ssthresh {
                c = ssthresh + 1;
            }
            *cwnd = c;
        } else {
            self.update(*cwnd, now);
            if *cwnd_cnt >= self.cnt {
                *cwnd += 1;
                *cwnd_cnt = 0;
            } else {
                *cwnd_cnt += 1;
            }
        }
    }

    /// `bictcp_update`: `cnt`, the ACKs per one-segment increase.
    fn update(&mut self, cwnd: u32, now: Time) {
        let ts = jiffies(now);
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && ts.wrapping_sub(self.last_time) as i32 <= 1000 / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = ts;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(ts);
                self.ack_cnt = 1;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    self.bic_k = cubic_root(CUBE_FACTOR * u64::from(self.last_max_cwnd - cwnd));
                    self.bic_origin_point = self.last_max_cwnd;
                }
                ts
            }
        };
        // t = (now - epoch_start + delay_min) in units of 2^-10 s.
        let mut t = u64::from(ts.wrapping_sub(epoch) as i32 as u32);
        t += u64::from(self.delay_min >> 3);
        t <<= BICTCP_HZ;
        t /= 1000;
        let k = u64::from(self.bic_k);
        let offs = k.abs_diff(t);
        let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u32;
        let bic_target = if t < k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point + delta
        };
        self.cnt = if bic_target > cwnd {
            cwnd / (bic_target - cwnd)
        } else {
            100 * cwnd
        };
        // No W_max yet: at least 5 % growth per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        // TCP friendliness: never slower than Reno with the same beta would be.
        let delta = (cwnd * BETA_SCALE_FRIENDLY) >> 3;
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack;
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    /// `bictcp_acked`: `cnt` segments were cumulatively ACKed; `rtt` is the time since the
    /// last of them (not retransmitted) was sent. Updates the packets-per-ACK ratio (in Open)
    /// and feeds HyStart. Returns the ssthresh HyStart sets, if it ends slow start now.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn acked(
        &mut self,
        cnt: u32,
        rtt_ns: Option<u64>,
        open: bool,
        cwnd: u32,
        ssthresh: u32,
        now: Time,
    ) -> Option<u32> {
        if open {
            let ratio = self.delayed_ack - (self.delayed_ack >> ACK_RATIO_SHIFT) + cnt;
            self.delayed_ack = ratio.clamp(1, ACK_RATIO_LIMIT);
        }
        let rtt_us = rtt_ns? / 1000;
        let ts = jiffies(now);
        // No delay samples in the first second of an epoch (after a recovery).
        if self
            .epoch_start
            .is_some_and(|e| (ts.wrapping_sub(e) as i32) < 1000)
        {
            return None;
        }
        let delay = (((rtt_us << 3) / 1000) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.hystart && cwnd <= ssthresh && cwnd >= HYSTART_LOW_WINDOW {
            return self.hystart_update(delay, cwnd, ts);
        }
        None
    }

    /// `hystart_update`.
    fn hystart_update(&mut self, delay: u32, cwnd: u32, now_ms: u32) -> Option<u32> {
        if self.found & (HYSTART_ACK_TRAIN | HYSTART_DELAY) != 0 {
            return None;
        }
        // ACK train: ACKs at most 2 ms apart for longer than delay_min >> 4.
        if (now_ms.wrapping_sub(self.last_ack) as i32) <= HYSTART_ACK_DELTA as i32 {
            self.last_ack = now_ms;
            if (now_ms.wrapping_sub(self.round_start) as i32) > (self.delay_min >> 4) as i32 {
                self.found |= HYSTART_ACK_TRAIN;
            }
        }
        // Delay increase: the round's minimum of its first 8 samples exceeds delay_min by
        // clamp(delay_min / 16, 4 ms, 16 ms).
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt == 0 || self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            self.sample_cnt += 1;
        } else if self.curr_rtt
            > self.delay_min + (self.delay_min >> 4).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
        {
            self.found |= HYSTART_DELAY;
        }
        (self.found != 0).then_some(cwnd)
    }

    #[cfg(test)]
    fn k(&self) -> u32 {
        self.bic_k
    }
}

impl CongestionOps for Cubic {
    #[inline]
    fn ssthresh(&mut self, w: &Window, _flight: u32) -> u32 {
        self.recalc_ssthresh(w.cwnd)
    }

    #[inline]
    fn cong_avoid(&mut self, w: &mut Window, a: &Acked) {
        let ssthresh = w.ssthresh;
        self.avoid(
            &mut w.cwnd,
            &mut w.cnt,
            ssthresh,
            a.ack,
            a.segs,
            a.snd_nxt,
            a.now,
        );
    }

    #[inline]
    fn wants_rtt(&self) -> bool {
        true
    }

    #[inline]
    fn pkts_acked(&mut self, w: &mut Window, a: &Acked, rtt: Option<Dur>, open: bool) {
        let (cwnd, ssthresh) = (w.cwnd, w.ssthresh);
        if let Some(s) = self.acked(a.segs, rtt.map(|d| d.0), open, cwnd, ssthresh, a.now) {
            w.ssthresh = s;
        }
    }

    #[inline]
    fn on_loss_state(&mut self, sk: &CaSk) {
        self.loss_state(sk.now, sk.snd_nxt);
    }

    #[inline]
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u32) -> u32 {
        self.undo(w.cwnd)
    }
}

/// `hystart_ack_delta_us`, `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX` of Linux 5.7+ (µs).
const HYSTART6_ACK_DELTA_US: u32 = 2000;
const HYSTART6_DELAY_MIN_US: u32 = 4000;
const HYSTART6_DELAY_MAX_US: u32 = 16000;
/// `sk_gso_max_size` of the emulated hosts' devices (`GSO_LEGACY_MAX_SIZE`).
const GSO_MAX_SIZE: u64 = 65536;

/// CUBIC and HyStart as Linux 6.18 `tcp_cubic.c` has them (`kernel = "linux-6.18"`): the
/// same curve and constants as 3.16, with the 4.x–6.x changes: the increase counted in
/// segments delivered (`bictcp_update(ca, cwnd, acked)` and `tcp_cong_avoid_ai(tp, cnt,
/// acked)`, `cnt` at least 2, recomputed at most once per jiffy), the clock in
/// `tcp_jiffies32` at `hz`, delays in µs (`delay_min`), an undo to the cwnd before the
/// reduction (`tcp_reno_undo_cwnd`), the epoch moved on by an idle period
/// (`cubictcp_cwnd_event`), and HyStart of 5.7+: rounds begin in `hystart_update` once snd_una
/// passes the round's end, whatever the window (the low window, 16, is checked after that
/// since the 2024 fix), an ACK train is ACKs at most 2 ms apart for longer than (delay_min +
/// `hystart_ack_delay`) / 2 when not paced, the delay threshold is delay_min / 8 clamped to
/// 4..16 ms, and its samples are the RTTs of the newest segment each ACK delivers, SACKed ones
/// included (`rs->rtt_us`).
#[derive(Clone, Debug)]
pub(crate) struct Cubic6 {
    hystart: bool,
    hz: u32,
    /// The host's jiffies at time 0 (`clock_phase`).
    phase: Dur,
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    bic_origin_point: u32,
    bic_k: u32,
    /// µs (0: none yet).
    delay_min: u32,
    epoch_start: Option<u32>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    sample_cnt: u8,
    found: bool,
    /// µs.
    round_start: u32,
    end_seq: u64,
    /// µs.
    last_ack: u32,
    /// µs.
    curr_rtt: u32,
}

impl Cubic6 {
    pub(crate) fn new(hystart: bool, hz: u32, phase: Dur) -> Cubic6 {
        Cubic6 {
            hystart,
            hz,
            phase,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u32::MAX,
        }
    }

    fn jiffies(&self, now: Time) -> u32 {
        crate::config::jiffies_at(self.hz, self.phase, now) as u32
    }

    fn us(now: Time) -> u32 {
        (now.0 / 1_000) as u32
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset`.
    fn hystart_reset(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = Self::us(now);
        self.last_ack = self.round_start;
        self.end_seq = snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`.
    fn update(&mut self, cwnd: u32, acked: u32, now: Time) {
        let j = self.jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && j.wrapping_sub(self.last_time) as i32 <= (self.hz / 32) as i32
        {
            return;
        }
        // `cnt` is recomputed at most once per jiffy (cwnd reductions clear epoch_start).
        if !(self.epoch_start.is_some() && j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = j;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(j);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        self.bic_k = cubic_root(CUBE_FACTOR * u64::from(self.last_max_cwnd - cwnd));
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    j
                }
            };
            // t = (now - epoch_start + delay_min) in units of 2^-10 s: jiffies, plus
            // usecs_to_jiffies(delay_min) (rounded up), << 10, / HZ.
            let mut t = u64::from(j.wrapping_sub(epoch) as i32 as u32);
            t += (u64::from(self.delay_min) * u64::from(self.hz)).div_ceil(1_000_000);
            t <<= BICTCP_HZ;
            t /= u64::from(self.hz);
            let k = u64::from(self.bic_k);
            let offs = k.abs_diff(t);
            let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k {
                self.bic_origin_point.wrapping_sub(delta)
            } else {
                self.bic_origin_point + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness.
        let delta = (cwnd * BETA_SCALE_FRIENDLY) >> 3;
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_ack_delay`: a cushion for a TSO packet in flight each way, at most 1 ms.
    fn ack_delay(pacing_rate: u64) -> u32 {
        if pacing_rate == 0 {
            return 0;
        }
        (GSO_MAX_SIZE * 4 * 1_000_000 / pacing_rate).min(1000) as u32
    }

    /// `hystart_update`; returns the ssthresh it sets.
    fn hystart_update(&mut self, delay: u32, cwnd: u32, a: &Acked) -> Option<u32> {
        if a.ack > self.end_seq {
            self.hystart_reset(a.now, a.snd_nxt);
        }
        // Below the low window only the rounds are kept: 6.12+ and the 6.6/6.1 stable trees
        // (the fix of 4e1fddc98d25, 2024) check the window after the round's reset, so a round
        // that began under 16 segments ends on time and the samples start afresh in the next.
        if cwnd < HYSTART_LOW_WINDOW {
            return None;
        }
        let mut found = None;
        let now = Self::us(a.now);
        if (now.wrapping_sub(self.last_ack) as i32) <= HYSTART6_ACK_DELTA_US as i32 {
            self.last_ack = now;
            let mut threshold = self.delay_min + Self::ack_delay(a.pacing_rate);
            if !a.paced {
                threshold >>= 1;
            }
            if (now.wrapping_sub(self.round_start) as i32) > threshold as i32 {
                self.found = true;
                found = Some(cwnd);
            }
        }
        if self.curr_rtt > delay {
            self.curr_rtt = delay;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt
            > self.delay_min
                + (self.delay_min >> 3).clamp(HYSTART6_DELAY_MIN_US, HYSTART6_DELAY_MAX_US)
        {
            self.found = true;
            found = Some(cwnd);
        }
        found
    }
}

impl CongestionOps for Cubic6 {
    /// `cubictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, w: &Window, _flight: u32) -> u32 {
        let cwnd = w.cwnd;
        self.epoch_start = None;
        if cwnd < self.last_max_cwnd {
            self.last_max_cwnd = cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE);
        } else {
            self.last_max_cwnd = cwnd;
        }
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `cubictcp_cong_avoid` (the growth gate already passed).
    fn cong_avoid(&mut self, w: &mut Window, a: &Acked) {
        let mut acked = a.segs;
        if w.cwnd < w.ssthresh {
            acked = super::reno::slow_start_6(w, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(w.cwnd, acked, a.now);
        let cnt = self.cnt;
        super::reno::cong_avoid_ai_6(w, cnt, acked);
    }

    fn wants_rtt(&self) -> bool {
        true
    }

    /// `cubictcp_acked`, on every ACK with its `rs->rtt_us`.
    fn pkts_acked(&mut self, w: &mut Window, a: &Acked, rtt: Option<Dur>, _open: bool) {
        let Some(rtt) = rtt else {
            return;
        };
        if let Some(e) = self.epoch_start {
            if (self.jiffies(a.now).wrapping_sub(e) as i32) < self.hz as i32 {
                return; // no delay samples in the first second after a reduction
            }
        }
        let delay = ((rtt.0 / 1_000) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && w.cwnd < w.ssthresh && self.hystart {
            if let Some(s) = self.hystart_update(delay, w.cwnd, a) {
                w.ssthresh = s;
            }
        }
    }

    /// `cubictcp_state(TCP_CA_Loss)`.
    fn on_loss_state(&mut self, sk: &CaSk) {
        self.reset();
        self.hystart_reset(sk.now, sk.snd_nxt);
    }

    /// `tcp_reno_undo_cwnd`.
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        w.cwnd.max(prior_cwnd)
    }

    /// `cubictcp_init`.
    fn init(&mut self, _w: &mut Window, sk: &CaSk) {
        self.reset();
        if self.hystart {
            self.hystart_reset(sk.now, sk.snd_nxt);
        }
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: the epoch moves on by the idle time.
    fn tx_start(&mut self, _w: &mut Window, sk: &CaSk) {
        let now = self.jiffies(sk.now);
        let delta = now.wrapping_sub(self.jiffies(sk.lsnd)) as i32;
        if let (Some(e), true) = (self.epoch_start, delta > 0) {
            let mut e = e.wrapping_add(delta as u32);
            if (e.wrapping_sub(now) as i32) > 0 {
                e = now;
            }
            self.epoch_start = Some(e);
        }
    }
}

/// Linux `cubic_root`: a table lookup and one Newton-Raphson step (about 0.2 % error).
fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = 64 - a.leading_zeros(); // fls64
    if b < 7 {
        return (u32::from(V[a as usize]) + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let mut x = ((u32::from(V[shift]) + 10) << b) >> 6;
    x = 2 * x + (a / (u64::from(x) * u64::from(x - 1))) as u32;
    (x * 341) >> 10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn constants_as_the_kernel_computes_them() {
        // 2^40 / 410 = 2681735677.6 -> 2681735677; 8·1741/3 = 4642; 4642/307 = 15.
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(BETA_SCALE_FRIENDLY, 15);
    }

    #[test]
    fn cube_root_near_exact() {
        // cbrt(1000) = 10; cbrt(2^30) = 1024; cbrt(27) = 3 via the table ((v[27] + 35) >> 6
        // = (190 + 35) >> 6 = 3).
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(1000), 10);
        assert_eq!(cubic_root(1 << 30), 1024);
    }

    #[test]
    fn loss_sets_wmax_and_ssthresh_with_fast_convergence() {
        let mut c = Cubic::new(false);
        // cwnd 100: ssthresh = 100·717/1024 = 70 (70.02); W_max = 100.
        assert_eq!(c.recalc_ssthresh(100), 70);
        assert_eq!(c.last_max_cwnd, 100);
        // A second loss at 80 < W_max: fast convergence, W_max = 80·1741/2048 = 68 (68.0).
        assert_eq!(c.recalc_ssthresh(80), 56); // 80·717/1024 = 56.01
        assert_eq!(c.last_max_cwnd, 68);
        assert_eq!(c.undo(50), 80);
        // Small windows: never below 2.
        assert_eq!(c.recalc_ssthresh(2), 2);
    }

    #[test]
    fn epoch_k_and_growth_towards_wmax() {
        // A loss at cwnd 100: W_max 100, cwnd 70. The epoch starts on the next update:
        // K = cubic_root(cube_factor · (100 - 70)) = cubic_root(80452070310): fls64 = 37,
        // b = (37·84 >> 8) - 1 = 11, shift = a >> 33 = 9, x = ((v[9] + 10) << 11) >> 6 =
        // 139·32 = 4448; Newton: x = 2·4448 + a / (4448·4447) = 8896 + 4067 = 12963,
        // x·341 >> 10 = 4316 (exact: cbrt(30 / 0.4) s = 4318 / 1024 s).
        let mut c = Cubic::new(false);
        assert_eq!(c.recalc_ssthresh(100), 70);
        c.update(70, ms(10_000));
        assert_eq!(c.k(), 4316);
        // t = 0: delta = 410·4316^3 >> 40 = 29, target = 100 - 29 = 71, cnt = 70 / (71 - 70)
        // = 70; scaled by the ACK ratio (2 segments per ACK: << 4 / 32): 35.
        assert_eq!(c.cnt, 35);
        // 4215 ms later, t = 4215·1024 / 1000 = 4316 = K: target = W_max = 100, cnt = 70 / 30
        // = 2, halved by the ACK ratio: 1.
        c.update(70, ms(10_000 + 4_215));
        assert_eq!(c.cnt, 1);
        // Within HZ/32 = 31 ms at the same cwnd nothing is recomputed.
        c.cnt = 99;
        c.update(70, ms(10_000 + 4_240));
        assert_eq!(c.cnt, 99);
    }

    #[test]
    fn slow_start_counts_acked_segments_up_to_ssthresh_plus_one() {
        // tcp_slow_start: cwnd 10 + 3 ACKed = 13; with ssthresh 11 it stops at 12.
        let mut c = Cubic::new(false);
        let (mut cwnd, mut cnt) = (10, 0);
        c.avoid(&mut cwnd, &mut cnt, SSTHRESH, 100, 3, 200, ms(1));
        assert_eq!(cwnd, 13);
        let mut cwnd = 10;
        c.avoid(&mut cwnd, &mut cnt, 11, 100, 3, 200, ms(1));
        assert_eq!(cwnd, 12);
    }

    const SSTHRESH: u32 = u32::MAX >> 1;

    #[test]
    fn hystart_ack_train_and_delay() {
        // Round 1 starts at 0 (first ACK beyond end_seq 0). Min RTT 100 ms: delay_min = 800.
        // ACK train: ACKs at most 2 ms apart for more than delay_min >> 4 = 50 ms.
        let mut c = Cubic::new(true);
        let (mut cwnd, mut cnt) = (16, 0);
        c.avoid(&mut cwnd, &mut cnt, SSTHRESH, 1, 0, 1000, ms(0));
        let mut found = None;
        let mut t = 0;
        while found.is_none() && t <= 60 {
            found = c.acked(1, Some(100_000_000), true, 16, SSTHRESH, ms(t));
            t += 2;
        }
        // The first ACK more than 50 ms after the round start: t = 52.
        assert_eq!((found, t - 2), (Some(16), 52));

        // Delay: 8 samples of 100 ms in round 1 set delay_min; round 2's first 8 samples are
        // 120 ms: curr_rtt 960 > 800 + clamp(800 >> 4 = 50, 32, 128) = 850, found on the 9th.
        let mut c = Cubic::new(true);
        c.avoid(&mut cwnd, &mut cnt, SSTHRESH, 1, 0, 1000, ms(0));
        for k in 0..8 {
            // 10 ms apart: no ACK train.
            assert_eq!(
                c.acked(1, Some(100_000_000), true, 16, SSTHRESH, ms(10 * k)),
                None
            );
        }
        let (mut cwnd, mut cnt) = (16, 0);
        c.avoid(&mut cwnd, &mut cnt, SSTHRESH, 1001, 0, 2000, ms(100)); // round 2
        for k in 0..8 {
            let r = c.acked(1, Some(120_000_000), true, 16, SSTHRESH, ms(200 + 10 * k));
            assert_eq!(r, None, "sample {k}");
        }
        assert_eq!(
            c.acked(1, Some(120_000_000), true, 16, SSTHRESH, ms(290)),
            Some(16)
        );
        // Below hystart_low_window (16) nothing is looked at.
        let mut c = Cubic::new(true);
        c.avoid(&mut cwnd, &mut cnt, SSTHRESH, 1, 0, 1000, ms(0));
        for t in 0..40 {
            assert_eq!(
                c.acked(1, Some(100_000_000), true, 15, SSTHRESH, ms(t)),
                None
            );
        }
    }

    fn acked6(now: Time, ack: u64, snd_nxt: u64) -> Acked {
        Acked {
            now,
            ack,
            snd_nxt,
            segs: 1,
            pacing_rate: 0,
            paced: false,
        }
    }

    #[test]
    fn linux6_hystart_rounds_run_below_the_low_window() {
        // IW10, one segment per ACK (quick ACKs), every segment sent as cwnd allows; RTT
        // 20 ms for the initial window's ACKs, 30 ms after: delay_min 20 ms, threshold
        // 20 + max(20/8, 4) = 24 ms. Round 1 begins at ACK 1 (end_seq 10) although cwnd is
        // 10; ACKs 7-10 (cwnd 16-19) are 4 samples of it; ACK 11 (past 10) begins round 2
        // at cwnd 20, its ACKs 11-18 are the 8 samples (min 30 ms), and ACK 19, at cwnd 28,
        // finds 30 > 24: ssthresh 28. (Before the fix the first round began at cwnd 16, so
        // its samples mixed both RTTs and the exit came a round later, at 40; the kernel's
        // counters show 28 for the fidelity matrix's four CUBIC flows, docs/sim-vs-emu.md.)
        let mut c = Cubic6::new(true, 1000, Dur::ZERO);
        c.hystart_reset(Time(0), 0);
        let mut w = Window {
            cwnd: 10,
            ssthresh: SSTHRESH,
            cnt: 0,
        };
        let mut snd_nxt = 10u64;
        let mut exit = None;
        for k in 1..=40u64 {
            // ACKs 3 ms apart: more than hystart_ack_delta (2 ms), no ACK train.
            let a = acked6(ms(100 + 3 * k), k, snd_nxt);
            let rtt = Dur::from_millis(if k <= 10 { 20 } else { 30 });
            let before = w.cwnd;
            c.pkts_acked(&mut w, &a, Some(rtt), true);
            if w.ssthresh != SSTHRESH && exit.is_none() {
                exit = Some((k, before, w.ssthresh));
            }
            c.cong_avoid(&mut w, &a);
            snd_nxt = k + u64::from(w.cwnd);
        }
        assert_eq!(exit, Some((19, 28, 28)));
        assert_eq!(c.delay_min, 20_000);
    }

    #[test]
    fn linux6_counts_jiffies_on_its_hosts_clock() {
        // HZ 250 (4 ms jiffies). 1.5 ms into the run a host whose clock stood at 2.5 ms at
        // time 0 is in jiffy 1 (4 ms), one at phase 0 still in jiffy 0, one at 130 ms in
        // jiffy 32 (131.5 ms): CUBIC reads the clock the host's timers run on
        // (`clock_phase`), as BBR does.
        let mut cfg = crate::config::TcpConfig {
            congestion_control: crate::config::CongestionControl::Cubic,
            kernel: Some(crate::config::Kernel::Linux618),
            hz: 250,
            ..Default::default()
        };
        for (phase, jiffy) in [(2_500_000, 1), (0, 0), (130_000_000, 32)] {
            cfg.clock_phase = Dur(phase);
            let super::super::Cc::Cubic6(c) = super::super::Cc::new(&cfg, 1) else {
                panic!("not Linux 6.18's CUBIC")
            };
            assert_eq!(c.jiffies(Time(1_500_000)), jiffy, "phase {phase}");
        }
    }

    #[test]
    fn linux6_epoch_counts_in_jiffies_with_delay_min_and_no_ack_ratio() {
        // HZ 250 (4 ms jiffies). A loss at cwnd 100: ssthresh 70, W_max 100.
        let mut c = Cubic6::new(false, 250, Dur::ZERO);
        let w = Window {
            cwnd: 100,
            ssthresh: SSTHRESH,
            cnt: 0,
        };
        assert_eq!(c.ssthresh(&w, 100), 70);
        assert_eq!(c.last_max_cwnd, 100);
        // First update at 10 s = jiffy 2500: the epoch starts, K = 4316 (as 3.16's), t = 0,
        // delta = 410·4316^3 >> 40 = 29, target 71, cnt = 70 / 1 = 70: no ACK-ratio scaling
        // in 6.x (`delayed_ack` is gone), and friendliness (ack_cnt 1 ≤ 70·15 >> 3 = 131)
        // leaves it.
        c.update(70, 1, ms(10_000));
        assert_eq!((c.epoch_start, c.bic_k, c.cnt), (Some(2500), 4316, 70));
        // Within HZ/32 = 7 jiffies at the same cwnd nothing is recomputed (28 ms = 7 jiffies).
        c.delay_min = 40_000;
        c.cnt = 99;
        c.update(70, 1, ms(10_028));
        assert_eq!((c.cnt, c.ack_cnt), (99, 2));
        // At 10.032 s (jiffy 2508): t = 8 + usecs_to_jiffies(40 ms) = 18 jiffies, << 10 / 250
        // = 73; offs = 4316 − 73 = 4243, delta = 410·4243^3 >> 40 = 28, target 72,
        // cnt = 70 / 2 = 35.
        c.update(70, 1, ms(10_032));
        assert_eq!(c.cnt, 35);
        // Undo (`tcp_reno_undo_cwnd`): the cwnd before the reduction.
        let w = Window {
            cwnd: 70,
            ssthresh: 70,
            cnt: 0,
        };
        assert_eq!(c.undo_cwnd(&w, 100), 100);
        // An idle period of 1 s before a send moves the epoch on by 250 jiffies
        // (`cubictcp_cwnd_event`); the next, from 11.1 s (jiffy 2775) to 40 s (10 000), by
        // 7225: 9975.
        let sk = |now: Time, lsnd: Time| CaSk {
            now,
            snd_nxt: 0,
            mss: 1448,
            ca_state: 0,
            in_flight: 0,
            delivered: 0,
            delivered_us: 0,
            lost: 0,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            wstamp: now,
            app_limited: 0,
            lsnd,
        };
        c.tx_start(&mut w.clone(), &sk(ms(11_100), ms(10_100)));
        assert_eq!(c.epoch_start, Some(2750));
        c.tx_start(&mut w.clone(), &sk(ms(40_000), ms(11_100)));
        assert_eq!(c.epoch_start, Some(9975));
    }

    #[test]
    fn linux6_growth_is_per_segment_delivered_and_at_most_one_per_two() {
        // Slow start at cwnd 8, ssthresh 10, with 5 delivered: cwnd 10, and the 3 left go to
        // congestion avoidance. The first update: W_max 0 ≤ cwnd, K = 0, origin 10, t = 0:
        // target 10, cnt = 100·10 = 1000, capped at 20 while W_max is 0; 3 of 20 counted.
        let mut c = Cubic6::new(false, 250, Dur::ZERO);
        let mut w = Window {
            cwnd: 8,
            ssthresh: 10,
            cnt: 0,
        };
        let a = Acked {
            segs: 5,
            ..acked6(ms(1_000), 0, 0)
        };
        c.cong_avoid(&mut w, &a);
        assert_eq!((w.cwnd, w.cnt, c.cnt), (10, 3, 20));
        // 100 s later the curve is far above cwnd: cnt = 10 / (target − 10) = 0, raised to 2
        // (1.5× per RTT at most). 7 delivered: the 3 credits at cnt 20 ≥ 2 first give one
        // (counter 0), then 7 / 2 = 3 more, 1 left.
        let a = Acked {
            segs: 7,
            ..acked6(ms(101_000), 0, 0)
        };
        c.cong_avoid(&mut w, &a);
        assert_eq!(c.cnt, 2);
        assert_eq!((w.cwnd, w.cnt), (14, 1));
    }

    #[test]
    fn linux6_hystart_in_microseconds() {
        // delay_min 40 ms. Delay: threshold 40 000 + clamp(40 000 >> 3 = 5000, 4000, 16 000)
        // = 45 000 µs; 8 samples are taken first, the 9th compares their minimum.
        let mut c = Cubic6::new(true, 250, Dur::ZERO);
        let mut w = Window {
            cwnd: 16,
            ssthresh: SSTHRESH,
            cnt: 0,
        };
        c.pkts_acked(
            &mut w,
            &acked6(ms(0), 1, 100),
            Some(Dur::from_millis(40)),
            true,
        );
        assert_eq!(c.delay_min, 40_000);
        // A new round (snd_una 101 passes end_seq 100) at 1 s; samples 10 ms apart (no ACK
        // train), 45.001 ms each.
        for k in 0..8 {
            let a = acked6(ms(1_000 + 10 * k), 101 + k, 200);
            c.pkts_acked(&mut w, &a, Some(Dur(45_001_000)), true);
            assert_eq!(w.ssthresh, SSTHRESH, "sample {k}");
        }
        let a = acked6(ms(1_080), 110, 200);
        c.pkts_acked(&mut w, &a, Some(Dur(45_001_000)), true);
        assert_eq!(w.ssthresh, 16);

        // ACK train, unpaced, no pacing rate: ACKs at most 2 ms apart for more than
        // (delay_min + 0) / 2 = 20 ms after the round's start. A round starts at 1 s; ACKs
        // every 2 ms of 40 ms RTTs: found on the first more than 20 ms in, at 1.022 s.
        let mut c = Cubic6::new(true, 250, Dur::ZERO);
        let mut w = Window {
            cwnd: 16,
            ssthresh: SSTHRESH,
            cnt: 0,
        };
        c.pkts_acked(
            &mut w,
            &acked6(ms(0), 1, 100),
            Some(Dur::from_millis(40)),
            true,
        );
        let mut t = 1_000;
        while w.ssthresh == SSTHRESH && t < 1_100 {
            let a = acked6(ms(t), 101, 200);
            c.pkts_acked(&mut w, &a, Some(Dur::from_millis(40)), true);
            t += 2;
        }
        assert_eq!((w.ssthresh, t - 2), (16, 1_022));
        // Paced at 1 MB/s: the cushion is min(1 ms, 65 536 · 4 / 1 MB/s = 262 ms) = 1 ms and
        // the threshold is not halved: 41 ms.
        assert_eq!(Cubic6::ack_delay(1_000_000), 1_000);
    }
}
