//! BBR (version 1) as Linux 6.18 `net/ipv4/tcp_bbr.c` has it, with its constants, its integer
//! arithmetic and its order of updates, so that a hand calculation from the kernel source gives
//! the model's numbers.
//!
//! On each ACK (`bbr_main`, the algorithm's `cong_control`) the model of the path is updated
//! from the ACK's delivery-rate sample (`conn/rate.rs`, Linux `tcp_rate.c`): the bottleneck
//! bandwidth is the windowed maximum of the samples over 10 packet-timed round trips, the
//! minimum RTT the minimum over 10 s; then the pacing rate is pacing_gain · bw (1 % below) and
//! cwnd approaches cwnd_gain · bw · min_rtt plus what ACK aggregation needs, plus three skbs.
//!
//! The state machine: STARTUP (gains 2/ln 2 = 739/256 ≈ 2.887) until the bandwidth has not
//! grown by 25 % in three rounds; DRAIN (pacing gain 1/2.885 = 88/256) until what is in flight
//! fits one BDP; PROBE_BW, cycling the pacing gain through 5/4, 3/4 and six times 1, one phase
//! per min RTT (the probing phase longer while nothing is lost and in flight is below
//! 5/4·BDP, the draining one shorter once in flight is down to a BDP), starting at a random
//! phase other than 3/4; PROBE_RTT when the min-RTT estimate is 10 s old: cwnd 4 for 200 ms and
//! a round trip, then back. Long-term bandwidth sampling looks for a token-bucket policer (two
//! consecutive lossy intervals of 4 to 16 rounds with the same rate) and then paces at that
//! rate for 48 rounds. Packet conservation in the first round of Recovery, the cwnd of before
//! restored when Recovery or Loss ends.
//!
//! Time: `tcp_mstamp` in µs; `tcp_jiffies32` at the configured `hz` (the min-RTT window, the
//! PROBE_RTT duration). The one random draw (`prandom_u32_max(7)`, the first PROBE_BW phase)
//! comes from a generator seeded with the connection's initial sequence number: the model draws
//! no global random number.

use super::minmax::MinMax;
use super::{Acked, CaSk, CongestionOps, Window};
use crate::conn::RateSample;
use lasthop_core::Dur;

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
const CYCLE_LEN: u32 = 8;
/// Window of the bandwidth filter, in rounds.
const BW_RTTS: u32 = CYCLE_LEN + 2;
const MIN_RTT_WIN_SEC: u32 = 10;
const PROBE_RTT_MODE_MS: u32 = 200;
/// Below this rate (bits/s) an skb is one segment.
const MIN_TSO_RATE: u64 = 1_200_000;
const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1`: 2/ln 2.
pub(crate) const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain = BBR_UNIT * 1000 / 2885`.
pub(crate) const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`: PROBE_BW's cycle.
pub(crate) const PACING_GAIN: [u32; 8] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
const CYCLE_RAND: u32 = 7;
pub(crate) const CWND_MIN_TARGET: u32 = 4;
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u32 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `TCP_INIT_CWND`.
const INIT_CWND: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (x86-64: MAX_TCP_HEADER = 320).
const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;
/// Linux's CA states, in their order (`TCP_CA_Open` 0 ... `TCP_CA_Loss` 4).
const CA_RECOVERY: u8 = 3;
const CA_LOSS: u8 = 4;

/// BBR's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// Linux `struct bbr` (and `sk_pacing_rate`, which BBR alone sets).
#[derive(Clone, Debug)]
pub(crate) struct Bbr {
    pub(crate) min_rtt_us: u32,
    min_rtt_stamp: u32,
    probe_rtt_done_stamp: u32,
    bw: MinMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: u64,
    pub(crate) mode: Mode,
    prev_ca_state: u8,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u32,
    lt_last_delivered: u64,
    lt_last_stamp: u32,
    lt_last_lost: u64,
    pub(crate) pacing_gain: u32,
    pub(crate) cwnd_gain: u32,
    pub(crate) full_bw_reached: bool,
    full_bw_cnt: u32,
    pub(crate) cycle_idx: u32,
    has_seen_rtt: bool,
    pub(crate) prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: u64,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// `sk_pacing_rate`, bytes per second.
    pub(crate) pacing_rate: u64,
    /// The generator of `prandom_u32_max` (xorshift32).
    rand: u32,
    /// `HZ`.
    hz: u32,
    /// The host's jiffies at time 0 (`clock_phase`).
    phase: Dur,
}

/// The rate in bytes per second of `rate` (segments per µs << 24) times `gain`, 1 % below
/// (`bbr_rate_bytes_per_sec`).
fn rate_bytes_per_sec(rate: u64, mss: u32, gain: u32) -> u64 {
    let mut r = rate * u64::from(mss);
    r *= u64::from(gain);
    r >>= BBR_SCALE;
    r *= 1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT);
    r >> BW_SCALE
}

impl Bbr {
    /// The algorithm's state before `init` (which runs when the connection is established);
    /// `seed` seeds its one random draw.
    pub(crate) fn new(seed: u32, hz: u32, phase: Dur) -> Bbr {
        Bbr {
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: 0,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: u64::MAX,
            rand: seed | 1,
            hz,
            phase,
        }
    }

    fn jiffies(&self, sk: &CaSk) -> u32 {
        crate::config::jiffies_at(self.hz, self.phase, sk.now) as u32
    }

    /// `prandom_u32_max(n)`: uniform in 0..n.
    fn rand_below(&mut self, n: u32) -> u32 {
        let mut x = self.rand;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rand = x;
        ((u64::from(x) * u64::from(n)) >> 32) as u32
    }

    /// `bbr_max_bw`: the bandwidth filter's maximum, segments per µs << 24.
    pub(crate) fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// `bbr_bw`: the bandwidth used, the long-term one while a policer is suspected.
    pub(crate) fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    fn bw_to_pacing_rate(&self, bw: u32, gain: u32, mss: u32) -> u64 {
        rate_bytes_per_sec(u64::from(bw), mss, gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / srtt (1 ms without a sample).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u32, sk: &CaSk) {
        let rtt_us = if sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            sk.srtt_us.max(1)
        } else {
            1000
        };
        let bw = u64::from(cwnd) * BW_UNIT / u64::from(rtt_us);
        self.pacing_rate = rate_bytes_per_sec(bw, sk.mss, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never below the current rate until the pipe is full.
    fn set_pacing_rate(&mut self, bw: u32, gain: u32, cwnd: u32, sk: &CaSk) {
        let rate = self.bw_to_pacing_rate(bw, gain, sk.mss);
        if !self.has_seen_rtt && sk.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(cwnd, sk);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso(&self) -> u32 {
        if self.pacing_rate < (MIN_TSO_RATE >> 3) {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: the segments of an skb at the pacing rate.
    pub(crate) fn tso_segs_goal(&self, mss: u32) -> u32 {
        let bytes = (self.pacing_rate >> 10).min(TSO_MAX_BYTES);
        let segs = ((bytes / u64::from(mss.max(1))) as u32).max(self.min_tso());
        segs.min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CA_RECOVERY && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ⌈bw · min_rtt · gain⌉ in segments (10 before any RTT sample).
    pub(crate) fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return INIT_CWND;
        }
        let w = u64::from(bw) * u64::from(self.min_rtt_us);
        (((w * u64::from(gain)) >> BBR_SCALE).div_ceil(BW_UNIT)) as u32
    }

    /// `bbr_quantization_budget`: three skbs more, rounded up to even, 2 more in the probing
    /// phase.
    fn quantization_budget(&self, cwnd: u32, mss: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub(crate) fn inflight(&self, bw: u32, gain: u32, mss: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// `bbr_packets_in_net_at_edt`: what will still be in the network when the next skb
    /// leaves at its earliest departure time.
    fn packets_in_net_at_edt(&self, inflight_now: u32, sk: &CaSk) -> u32 {
        let edt = sk.wstamp.max(sk.now);
        let interval_us = (edt.0 - sk.now.0) / 1_000;
        let interval_delivered = ((u64::from(self.bw()) * interval_us) >> BW_SCALE) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(sk.mss);
        }
        inflight_at_edt.saturating_sub(interval_delivered)
    }

    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (u64::from(self.bw()) * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: in the first round of Recovery, packet
    /// conservation; when Recovery or Loss ends, the cwnd of before.
    fn recover_or_restore(
        &mut self,
        rs: &RateSample,
        acked: u32,
        cwnd: &mut u32,
        sk: &CaSk,
    ) -> bool {
        let (prev, state) = (self.prev_ca_state, sk.ca_state);
        let mut c = *cwnd;
        if rs.losses > 0 {
            c = (i64::from(c) - i64::from(rs.losses)).max(1) as u32;
        }
        if state == CA_RECOVERY && prev != CA_RECOVERY {
            self.packet_conservation = true;
            self.next_rtt_delivered = sk.delivered;
            c = sk.in_flight + acked;
        } else if prev >= CA_RECOVERY && state < CA_RECOVERY {
            c = c.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            *cwnd = c.max(sk.in_flight + acked);
            return true;
        }
        *cwnd = c;
        false
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(
        &mut self,
        w: &mut Window,
        rs: &RateSample,
        acked: u32,
        bw: u32,
        gain: u32,
        sk: &CaSk,
    ) {
        let mut cwnd = w.cwnd;
        if acked > 0 && !self.recover_or_restore(rs, acked, &mut cwnd, sk) {
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(target, sk.mss);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || sk.delivered < u64::from(INIT_CWND) {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        w.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample, sk: &CaSk) -> bool {
        let is_full_length =
            sk.delivered_us.saturating_sub(self.cycle_mstamp) > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight, sk);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, sk.mss));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT, sk.mss)
    }

    fn advance_cycle_phase(&mut self, sk: &CaSk) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = sk.delivered_us;
    }

    fn update_cycle_phase(&mut self, rs: &RateSample, sk: &CaSk) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, sk) {
            self.advance_cycle_phase(sk);
        }
    }

    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: PROBE_BW from a random phase other than 3/4.
    fn reset_probe_bw_mode(&mut self, sk: &CaSk) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rand_below(CYCLE_RAND);
        self.advance_cycle_phase(sk);
    }

    fn reset_mode(&mut self, sk: &CaSk) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(sk);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, sk: &CaSk) {
        self.lt_last_stamp = (sk.delivered_us / 1000) as u32;
        self.lt_last_delivered = sk.delivered;
        self.lt_last_lost = sk.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, sk: &CaSk) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// `bbr_lt_bw_interval_done`: a second interval with (within 1/8 or 4 kbit/s) the same
    /// rate means a policer: use their average.
    fn lt_bw_interval_done(&mut self, bw: u32, sk: &CaSk) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff.wrapping_mul(BBR_UNIT) <= LT_BW_RATIO.wrapping_mul(self.lt_bw)
                || rate_bytes_per_sec(u64::from(diff), sk.mss, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(sk);
    }

    /// `bbr_lt_bw_sampling`: long-term bandwidth sampling between losses.
    fn lt_bw_sampling(&mut self, rs: &RateSample, sk: &CaSk) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(sk);
                    self.reset_probe_bw_mode(sk);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(sk);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = sk.lost - self.lt_last_lost;
        let delivered = sk.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = ((sk.delivered_us / 1000) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(sk);
            return;
        }
        let t = u64::from(t) * 1000;
        let bw = delivered * BW_UNIT / t;
        self.lt_bw_interval_done(bw as u32, sk);
    }

    /// `bbr_update_bw`: a new round when the newest delivered segment was sent after the
    /// round's start; the bandwidth sample into the max filter unless app-limited and below it.
    fn update_bw(&mut self, rs: &RateSample, sk: &CaSk) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = sk.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, sk);
        let bw = (rs.delivered as u64 * BW_UNIT / rs.interval_us as u64) as u32;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the most data ACKed beyond bw · interval in an epoch.
    fn update_ack_aggregation(&mut self, rs: &RateSample, cwnd: u32, sk: &CaSk) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = sk.delivered_us.saturating_sub(self.ack_epoch_mstamp);
        let mut expected_acked = (u64::from(self.bw()) * epoch_us / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = sk.delivered_us;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected_acked).min(cwnd);
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25 % more bandwidth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((u64::from(self.full_bw) * u64::from(FULL_BW_THRESH)) >> BBR_SCALE) as u32;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, w: &mut Window, sk: &CaSk) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT, sk.mss);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(sk.in_flight, sk)
                <= self.inflight(self.max_bw(), BBR_UNIT, sk.mss)
        {
            self.reset_probe_bw_mode(sk);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, w: &mut Window, sk: &CaSk) {
        if !(self.probe_rtt_done_stamp != 0
            && (self.jiffies(sk).wrapping_sub(self.probe_rtt_done_stamp) as i32) > 0)
        {
            return;
        }
        self.min_rtt_stamp = self.jiffies(sk);
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_mode(sk);
    }

    /// `bbr_update_min_rtt`: the min-RTT filter and PROBE_RTT.
    fn update_min_rtt(
        &mut self,
        w: &mut Window,
        rs: &RateSample,
        sk: &CaSk,
        app_limited: &mut u64,
    ) {
        let now = self.jiffies(sk);
        let expire = self.min_rtt_stamp.wrapping_add(MIN_RTT_WIN_SEC * self.hz);
        let filter_expired = (now.wrapping_sub(expire) as i32) > 0;
        if rs.rtt_us >= 0
            && (rs.rtt_us <= i64::from(self.min_rtt_us) || (filter_expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = rs.rtt_us as u32;
            self.min_rtt_stamp = now;
        }
        if PROBE_RTT_MODE_MS > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low-rate samples during this mode.
            *app_limited = (sk.delivered + u64::from(sk.in_flight)).max(1);
            if self.probe_rtt_done_stamp == 0 && sk.in_flight <= CWND_MIN_TARGET {
                // msecs_to_jiffies(200), rounded up.
                let j = (u64::from(PROBE_RTT_MODE_MS) * u64::from(self.hz)).div_ceil(1000) as u32;
                self.probe_rtt_done_stamp = now.wrapping_add(j);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = sk.delivered;
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, sk);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_main`.
    pub(crate) fn main(
        &mut self,
        w: &mut Window,
        sk: &CaSk,
        rs: &RateSample,
        app_limited: &mut u64,
    ) {
        self.update_bw(rs, sk);
        self.update_ack_aggregation(rs, w.cwnd, sk);
        self.update_cycle_phase(rs, sk);
        self.check_full_bw_reached(rs);
        self.check_drain(w, sk);
        self.update_min_rtt(w, rs, sk, app_limited);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, w.cwnd, sk);
        self.set_cwnd(w, rs, rs.acked_sacked, bw, self.cwnd_gain, sk);
    }

    /// `bbr_init`, when the connection is established.
    pub(crate) fn init(&mut self, w: &mut Window, sk: &CaSk) {
        let (hz, rand, phase) = (self.hz, self.rand, self.phase);
        *self = Bbr::new(rand, hz, phase);
        w.ssthresh = crate::conn::SSTHRESH_INFINITE;
        self.min_rtt_us = sk.min_rtt_us;
        self.min_rtt_stamp = self.jiffies(sk);
        self.bw.reset(self.rtt_cnt, 0);
        self.init_pacing_rate_from_rtt(w.cwnd, sk);
        self.reset_lt_bw_sampling(sk);
        self.reset_startup_mode();
        self.ack_epoch_mstamp = sk.now.0 / 1_000;
    }
}

impl CongestionOps for Bbr {
    /// `bbr_ssthresh`: Recovery begins; the cwnd is saved, ssthresh is left as it is.
    fn ssthresh(&mut self, w: &Window, _flight: u32) -> u32 {
        self.save_cwnd(w.cwnd);
        w.ssthresh
    }

    /// BBR has no `cong_avoid`: its `cong_control` sets cwnd.
    fn cong_avoid(&mut self, _w: &mut Window, _a: &Acked) {}

    fn on_loss_state(&mut self, sk: &CaSk) {
        // `bbr_set_state(sk, TCP_CA_Loss)`: the RTO ends a round; a loss for the long-term
        // sampling.
        self.prev_ca_state = CA_LOSS;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, sk);
    }

    /// `bbr_undo_cwnd`: the slow-down was spurious; full-pipe detection starts again.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u32) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.lt_rtt_cnt = 0;
        w.cwnd
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn min_tso_segs(&self, _rate: u64) -> u32 {
        self.min_tso()
    }

    fn mode(&self) -> Option<&'static str> {
        Some(self.mode.name())
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, w: &mut Window, sk: &CaSk, rs: &RateSample, app_limited: &mut u64) {
        self.main(w, sk, rs, app_limited);
    }

    fn init(&mut self, w: &mut Window, sk: &CaSk) {
        Bbr::init(self, w, sk);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: sending again after idle while app-limited.
    fn tx_start(&mut self, w: &mut Window, sk: &CaSk) {
        if sk.app_limited == 0 {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = sk.now.0 / 1_000;
        self.ack_epoch_acked = 0;
        if self.mode == Mode::ProbeBw {
            self.set_pacing_rate(self.bw(), BBR_UNIT, w.cwnd, sk);
        } else if self.mode == Mode::ProbeRtt {
            self.check_probe_rtt_done(w, sk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::Time;

    const MSS: u32 = 1448;

    /// A BBR flow driven by hand: rate samples built as `tcp_rate_gen` would give them, a
    /// 40 ms path (srtt and the handshake's min RTT), HZ 250.
    struct H {
        b: Bbr,
        w: Window,
        now_us: u64,
        delivered: u64,
        lost: u64,
        app_limited: u64,
    }

    impl H {
        fn new() -> H {
            let mut h = H {
                b: Bbr::new(12345, 250, Dur::ZERO),
                w: Window {
                    cwnd: 10,
                    ssthresh: crate::conn::SSTHRESH_INFINITE,
                    cnt: 0,
                },
                now_us: 1_000_000,
                delivered: 0,
                lost: 0,
                app_limited: 0,
            };
            let sk = h.sk(0, 0);
            h.b.init(&mut h.w, &sk);
            h
        }

        fn sk(&self, in_flight: u32, ca_state: u8) -> CaSk {
            CaSk {
                now: Time(self.now_us * 1_000),
                snd_nxt: 0,
                mss: MSS,
                ca_state,
                in_flight,
                delivered: self.delivered,
                delivered_us: self.now_us,
                lost: self.lost,
                srtt_us: 40_000,
                min_rtt_us: 40_000,
                wstamp: Time(self.now_us * 1_000),
                app_limited: self.app_limited,
                lsnd: Time::ZERO,
            }
        }

        /// An ACK `dt_us` after the last delivering `acked` segments, of which the newest was
        /// sent when `prior` had been delivered; the sample's interval; what is in flight
        /// after it; losses it found; the CA state.
        #[allow(clippy::too_many_arguments)]
        fn ack(
            &mut self,
            dt_us: u64,
            acked: u32,
            prior: u64,
            interval_us: i64,
            in_flight: u32,
            losses: u32,
            ca: u8,
            rtt_us: i64,
        ) {
            self.now_us += dt_us;
            self.delivered += u64::from(acked);
            self.lost += u64::from(losses);
            let rs = RateSample {
                prior_delivered: prior,
                prior_us: 1,
                interval_us,
                delivered: (self.delivered - prior) as i64,
                acked_sacked: acked,
                losses,
                rtt_us,
                prior_in_flight: in_flight + acked,
                ..RateSample::default()
            };
            let sk = self.sk(in_flight, ca);
            let mut app = self.app_limited;
            self.b.main(&mut self.w, &sk, &rs, &mut app);
            self.app_limited = app;
        }

        /// One round: an ACK of `acked` segments that starts a new round (all delivered since
        /// the round began), its bandwidth `acked` segments per 40 ms.
        fn round(&mut self, acked: u32, in_flight: u32) {
            let prior = self.delivered;
            self.ack(40_000, acked, prior, 40_000, in_flight, 0, 0, 40_000);
        }
    }

    #[test]
    fn gains_as_the_kernel_computes_them() {
        // 2/ln 2 = 2.8854; 256 · 2885 / 1000 + 1 = 739, 739 / 256 = 2.8867.
        assert_eq!(HIGH_GAIN, 739);
        let g = f64::from(HIGH_GAIN) / 256.0;
        assert!((2.885..2.89).contains(&g), "{g}");
        // Drain: 256 · 1000 / 2885 = 88 (0.34375, 1/2.909).
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    }

    #[test]
    fn initial_pacing_rate_is_high_gain_times_iw_over_srtt() {
        // cwnd 10 over srtt 40 ms: bw = 10 · 2^24 / 40 000 = 4194 (segments per µs << 24);
        // 4194 · 1448 · 739 >> 8 = 17 530 788; · 990 000 >> 24 = 1 034 467 B/s
        // (2.887 · 10 · 1448 B / 40 ms = 1.045 MB/s, 1 % below).
        let h = H::new();
        assert_eq!(h.b.pacing_rate, 1_034_467);
        assert_eq!(h.b.mode, Mode::Startup);
        assert_eq!((h.b.pacing_gain, h.b.cwnd_gain), (HIGH_GAIN, HIGH_GAIN));
        assert_eq!(h.b.min_rtt_us, 40_000);
    }

    #[test]
    fn startup_exits_after_three_rounds_without_25_percent_more_bandwidth_then_drains() {
        let mut h = H::new();
        // Round 1: 10 segments per 40 ms (bw 4194); round 2: 20 (8388), at least 1.25 times
        // full_bw each time, so full_bw follows.
        h.round(10, 20);
        h.round(20, 40);
        assert!(!h.b.full_bw_reached);
        // Rounds 3, 4, 5 at 20 again: below 1.25 · 8388 = 10 485, three times.
        h.round(20, 40);
        h.round(20, 40);
        assert_eq!(h.b.mode, Mode::Startup);
        h.round(20, 40);
        assert!(h.b.full_bw_reached);
        // DRAIN, with ssthresh = bbr_inflight(8388, 1.0): BDP ⌈8388 · 40 000 / 2^24⌉ = 20, plus
        // three skbs of 2 segments (the pacing rate's ms, 2068934 >> 10 = 2020 B, is under
        // 1448 · 2) = 26.
        assert_eq!(h.b.mode, Mode::Drain);
        assert_eq!(h.w.ssthresh, 26);
        assert_eq!((h.b.pacing_gain, h.b.cwnd_gain), (DRAIN_GAIN, HIGH_GAIN));
        // Still 40 in flight after it: draining goes on. When 26 or fewer remain, PROBE_BW, in
        // a random phase but never the 3/4 one (index 1).
        h.ack(1_000, 1, h.delivered, 40_000, 30, 0, 0, 40_000);
        assert_eq!(h.b.mode, Mode::Drain);
        h.ack(1_000, 1, h.delivered, 40_000, 26, 0, 0, 40_000);
        assert_eq!(h.b.mode, Mode::ProbeBw);
        assert_ne!(h.b.cycle_idx, 1);
        assert_eq!(h.b.pacing_gain, PACING_GAIN[h.b.cycle_idx as usize]);
        assert_eq!(h.b.cwnd_gain, CWND_GAIN);
    }

    /// A flow in PROBE_BW at 20 segments per 40 ms (BDP 20), its gain cycle at phase `idx`.
    fn probing(idx: u32) -> H {
        let mut h = H::new();
        for a in [10, 20, 20, 20, 20] {
            h.round(a, 40);
        }
        h.ack(1_000, 1, h.delivered, 40_000, 20, 0, 0, 40_000);
        assert_eq!(h.b.mode, Mode::ProbeBw);
        h.b.cycle_idx = idx;
        h.b.cycle_mstamp = h.now_us;
        h.b.update_gains();
        h
    }

    #[test]
    fn probe_bw_phases_last_a_min_rtt() {
        // Phase 2 (gain 1): over after more than min_rtt (40 ms) of deliveries.
        let mut h = probing(2);
        h.ack(40_000, 1, h.delivered, 40_000, 20, 0, 0, 40_000);
        assert_eq!(h.b.cycle_idx, 2, "exactly 40 ms is not more than min_rtt");
        h.ack(1, 1, h.delivered, 40_000, 20, 0, 0, 40_000);
        assert_eq!(h.b.cycle_idx, 3);
        // Phase 0 (5/4) lasts until in flight reaches bbr_inflight(bw, 5/4): ⌈20 · 1.25⌉ = 25,
        // +6, even, +2 in this phase = 34 (prior in flight counts what the ACK delivered).
        let mut h = probing(0);
        h.ack(41_000, 1, h.delivered, 40_000, 20, 0, 0, 40_000);
        assert_eq!(h.b.cycle_idx, 0, "21 in flight before the ACK: not yet");
        h.ack(1_000, 1, h.delivered, 40_000, 33, 0, 0, 40_000);
        assert_eq!(h.b.cycle_idx, 1, "34 in flight");
        assert_eq!(h.b.pacing_gain, 192);
        // ... or until a loss, once min_rtt has passed.
        let mut h = probing(0);
        h.ack(41_000, 1, h.delivered, 40_000, 20, 1, 0, 40_000);
        assert_eq!(h.b.cycle_idx, 1);
        // Phase 1 (3/4) ends as soon as in flight is down to bbr_inflight(bw, 1) = 26.
        h.ack(1_000, 1, h.delivered, 40_000, 25, 0, 0, 40_000);
        assert_eq!(h.b.cycle_idx, 2);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_cwnd_four_for_200_ms_and_a_round() {
        let mut h = probing(2);
        let cwnd = h.w.cwnd;
        // The last 40 ms sample (at 1.201 s, jiffy 300 at HZ 250) stamped min_rtt; samples of
        // 41 ms never lower it. At 11.2 s (jiffy 2800 = 300 + 10 · 250) it is not expired yet
        // (after() is strict); at the next jiffy (11.204 s) it is.
        assert_eq!(h.now_us, 1_201_000);
        while h.now_us + 40_000 < 11_200_000 {
            h.ack(40_000, 20, h.delivered, 40_000, 20, 0, 0, 41_000);
        }
        h.ack(
            11_200_000 - h.now_us,
            20,
            h.delivered,
            40_000,
            20,
            0,
            0,
            41_000,
        );
        assert_eq!(h.b.mode, Mode::ProbeBw);
        h.ack(4_000, 20, h.delivered, 40_000, 20, 0, 0, 41_000);
        assert_eq!(h.b.mode, Mode::ProbeRtt);
        assert_eq!(
            h.b.min_rtt_us, 41_000,
            "the expired filter takes the new sample"
        );
        assert_eq!(h.w.cwnd, CWND_MIN_TARGET);
        assert!(h.b.prior_cwnd >= cwnd.min(40));
        assert_ne!(h.app_limited, 0, "samples in PROBE_RTT are app-limited");
        // In flight falls to 4: the 200 ms (50 jiffies) start now.
        h.ack(10_000, 16, h.delivered, 40_000, 4, 0, 0, 40_000);
        let start = h.now_us;
        assert_eq!(h.b.mode, Mode::ProbeRtt);
        // A round passes (an ACK of data sent after it began), but not 200 ms yet.
        h.ack(40_000, 4, h.delivered, 40_000, 4, 0, 0, 40_000);
        assert_eq!(h.b.mode, Mode::ProbeRtt);
        // 204 ms after (a jiffy is 4 ms; after() is strict): back to PROBE_BW, cwnd restored
        // to the one saved on entry, then this ACK's one segment added (below the target).
        h.now_us = start + 200_000;
        let prior = h.b.prior_cwnd;
        assert!(prior > CWND_MIN_TARGET);
        h.ack(4_000, 1, h.delivered, 40_000, 4, 0, 0, 40_000);
        assert_eq!(h.b.mode, Mode::ProbeBw);
        assert_eq!(h.w.cwnd, prior + 1);
        assert_eq!(h.b.min_rtt_us, 40_000);
    }

    #[test]
    fn packet_conservation_in_the_first_round_of_recovery_then_restore() {
        let mut h = probing(2);
        let before = h.w.cwnd;
        // Recovery begins (the send state calls ssthresh: the cwnd is saved) ...
        assert_eq!(h.b.ssthresh(&h.w, 0), h.w.ssthresh);
        assert_eq!(h.b.prior_cwnd, before);
        // ... and its first ACK: cwnd = in flight + acked = 15 + 1, whatever the model says.
        h.ack(1_000, 1, h.delivered, 40_000, 15, 1, CA_RECOVERY, 40_000);
        assert_eq!(h.w.cwnd, 16);
        // The next ACK in the same round: still conservation, at least in flight + acked.
        h.ack(
            1_000,
            2,
            h.delivered - 5,
            40_000,
            14,
            0,
            CA_RECOVERY,
            40_000,
        );
        assert_eq!(h.w.cwnd, 16);
        // Recovery ends: the saved cwnd comes back.
        h.ack(1_000, 1, h.delivered, 40_000, 14, 0, 0, 40_000);
        assert!(h.w.cwnd >= before, "{} < {before}", h.w.cwnd);
    }

    #[test]
    fn an_rto_ends_a_round_and_restarts_the_full_pipe_test() {
        let mut h = probing(2);
        let sk = h.sk(0, CA_LOSS);
        h.b.on_loss_state(&sk);
        assert!(h.b.round_start);
        assert_eq!(h.b.full_bw, 0);
        assert!(
            h.b.lt_is_sampling,
            "the RTO is a loss for the long-term sampling"
        );
        // An undo (the RTO was spurious) restarts full-pipe detection, keeps cwnd.
        let w = h.w;
        assert_eq!(h.b.undo_cwnd(&w, 0), w.cwnd);
        assert_eq!((h.b.full_bw, h.b.full_bw_cnt), (0, 0));
    }

    #[test]
    fn a_policer_is_found_in_two_lossy_intervals_with_the_same_rate() {
        let mut h = probing(2);
        // Losses of more than 20 % (50/256) over 4 rounds, twice at the same delivery rate:
        // the first loss starts the sampling, each interval ends at a lossy ACK after 4
        // rounds.
        let lossy = |h: &mut H| {
            for _ in 0..4 {
                let p = h.delivered;
                h.ack(40_000, 10, p, 40_000, 20, 3, 0, 40_000);
            }
        };
        let p = h.delivered;
        h.ack(40_000, 10, p, 40_000, 20, 3, 0, 40_000);
        assert!(h.b.lt_is_sampling);
        lossy(&mut h);
        assert!(!h.b.lt_use_bw, "one interval is not enough");
        assert_ne!(h.b.lt_bw, 0);
        lossy(&mut h);
        assert!(h.b.lt_use_bw);
        // 10 segments per 40 ms: 10 · 2^24 / 40 000 = 4194 in both: their average.
        assert_eq!(h.b.lt_bw, 4194);
        assert_eq!(h.b.bw(), 4194);
        assert_eq!(h.b.pacing_gain, BBR_UNIT);
    }
}
