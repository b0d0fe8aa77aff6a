//! Switches of the TCP model. Defaults are the seeds' baseline (seed 000 Table 6, Linux 2.4.20 with
//! the IIP patches): SACK, limited transmit, static 200 ms delayed ACK, IW 2, no quick ACKs, no rate
//! halving, no timestamps, no D-SACK, no FACK, no window scaling.
//!
//! A switch whose mechanism is not implemented yet is refused by [`TcpConfig::validate`], never
//! silently ignored.

use lasthop_core::{Bytes, Dur, Time};
use serde::Deserialize;

/// Initial congestion window: a number of segments (1..=10; 10 is RFC 6928 and Linux 3.0+), or RFC 3390's
/// `min(4·MSS, max(2·MSS, 4380 B))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    Segments(u32),
    Rfc3390,
}

impl<'de> Deserialize<'de> for InitialWindow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u32),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(InitialWindow::Segments(n)),
            Raw::S(s) if s == "rfc3390" => Ok(InitialWindow::Rfc3390),
            Raw::S(s) => Err(serde::de::Error::custom(format!(
                "invalid initial window {s:?}: write a number of segments 1..=10 or \"rfc3390\""
            ))),
        }
    }
}

/// How the receiver delays ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayedAck {
    /// Every ACK is sent at once.
    Off,
    /// A fixed timeout (`delayed_ack_timeout`), the seeds' modification.
    Static,
    /// Linux's adaptive ACK timeout (`ato`, from packet inter-arrival times).
    Adaptive,
}

/// What the slow-start threshold is halved from on a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SsthreshFrom {
    /// Segments outstanding (RFC 2581 FlightSize, without limited-transmit segments, RFC 5681).
    Flight,
    /// The congestion window (Linux 2.4 `tcp_recalc_ssthresh`).
    Cwnd,
}

/// cwnd when NewReno/SACK recovery ends (the full ACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryExit {
    /// min(cwnd, ssthresh): Linux 2.4 `tcp_complete_cwr`, RFC 2582 option (2).
    Ssthresh,
    /// FlightSize + 1 segment: seed 001's Linux 2.3.99 baseline (Appendix C.1.1), RFC 2582
    /// option (1) without its min with ssthresh; slow start follows up to ssthresh.
    FlightPlusOne,
    /// FlightSize + 1, except that a cwnd of exactly four segments at the third duplicate ACK
    /// is kept when the recovery ends (seed 001 C.1.1: "the cwnd is not lowered beyond four
    /// segments, and the possibility to use fast retransmits is maintained"); congestion
    /// avoidance follows, ssthresh being 2.
    FlightPlusOneKeepFour,
}

/// Which holes SACK recovery marks lost (without FACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SackLossMarking {
    /// RFC 3517 IsLost: every hole with `dupthresh` SACKed segments above it (seed 000 A.2.3's
    /// description of Linux).
    Rfc3517,
    /// Linux 2.4 `tcp_update_scoreboard` without FACK: `tcp_mark_head_lost(sk, tp, 1, ...)`
    /// marks only the first unacknowledged segment; the next hole is marked once the cumulative
    /// ACK has reached it, so at most one hole is repaired per round trip.
    Head,
    /// The whole of Linux 2.4's SACK scoreboard without FACK (`tcp_input.c`,
    /// `tcp_sacktag_write_queue` and `tcp_fastretrans_alert`): Recovery starts when the highest
    /// SACKed segment is more than `dupthresh` segments above the head (`fackets_out`, kept
    /// with FACK off too); the head is marked lost on a duplicate ACK, or on a partial ACK
    /// while `fackets_out > dupthresh`; once a SACK reaches above the data outstanding when
    /// Recovery began ("Event B"), every untagged hole below it is marked at once; a
    /// retransmission counts in flight until it is cumulatively ACKed, SACKed or not, unless
    /// it was marked lost ("S|R"); a retransmission is lost again when data sent
    /// `dupthresh` segments after it is SACKed ("Event C"); and when no new data may go (window,
    /// Nagle, nothing written) Recovery retransmits the untagged holes below the highest SACK
    /// ("forward retransmission", `tcp_xmit_retransmit_queue`). Combine with `head_timedout`
    /// for 2.4.20's timed-out marking.
    Linux24,
    /// The SACK sender of Linux 2.2/2.3 (2.3.99-pre9, seed 001's SACK variant: Linux's FACK,
    /// `tcp_fast_retrans` with `tcp_fack_retransmit`): Recovery starts on the third duplicate
    /// ACK or once the highest SACKed segment is more than `dupthresh` above the head
    /// (`fackets_out > 3`); ssthresh is halved but cwnd is set to ssthresh + 3 and never
    /// deflated ("does not decrease the congestion window after the slow start overshooting",
    /// seed 001 §6.5), and it still grows on ACKs of new data (`should_advance_cwnd` with
    /// `fackets_out`); every hole below the highest SACK that has not been retransmitted is
    /// retransmitted as soon as in_flight (packets_out − fackets_out + retrans_out) < cwnd, so
    /// almost every ACK sends a retransmission (§6.1). A retransmission is marked again when
    /// data sent `dupthresh` segments after it is SACKed, in Recovery and after an RTO too: the
    /// SACK sender "does not follow the NewReno bugfix" and repairs what SACK shows without a
    /// second RTO (§6.1, Figure 15). An RTO clears the SACK tags (2.3 `tcp_retransmit_timer`,
    /// RFC 2018). Recovery ends with cwnd = ssthresh, whatever `recovery_exit` says (2.2/2.3
    /// `clear_fast_retransmit`; the seed's FlightSize + 1 was its NewReno fix: with it the
    /// no-delay runs drop 27 / 25 / 34 packets at buffers 3 / 7 / 20, with ssthresh 19 / 20 /
    /// 29 against the seed's 19 / 22 / 29, Table 19).
    Linux23,
}

/// When an ACK of new data rearms the retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtoTimer {
    /// RTO from now (Linux 2.4, RFC 2988 5.3).
    Ack,
    /// RTO from the (re)transmission of the oldest outstanding segment, unless recovering from
    /// an RTO: Linux 2.2/2.3 `tcp_ack_packets_out` (`when = rto - (now - skb->when)`), the
    /// stack of seed 001.
    OldestSent,
}

/// How the RTO is computed from RTT samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtoEstimator {
    /// Linux 2.4 (`tcp_rtt_estimator`, `tcp_set_rto`): RTO = srtt + rttvar, rttvar at least
    /// `rto_min` and decaying once per RTT; the first sample gives 3·RTT; the sample is the
    /// oldest segment an ACK newly covers.
    Linux24,
    /// Linux 2.2/2.3 (2.3.99-pre9, seed 001's stack, "unchanged" by the seed, C.1.3): mdev is
    /// 4·mean deviation with gain 1/4 either way, the first sample sets srtt = m and mdev = 4m;
    /// RTO = (srtt + mdev) · 5/4 + (srtt + mdev) >> (cwnd − 1), cwnd after this ACK's increase,
    /// bounded to `rto_min`..`rto_max`. The sample is the newest segment the ACK covers
    /// (2.2/2.3 `tcp_clean_rtx_queue`); with a retransmitted segment among those covered, only
    /// when the newest was sent after that retransmission (the seed's fix, C.2.2: an ACK
    /// covering a retransmitted and a new segment gives a sample).
    Linux22,
}

/// Which handshakes give the first RTT sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandshakeRtt {
    /// Both sides, whenever the SYN (SYN-ACK) was not retransmitted (seed 000: "the first RTT
    /// sample ... is got from SYN - SYNACK pair").
    Always,
    /// Only with timestamps, as Linux 2.4 without cached metrics does: `tcp_init_metrics`
    /// forgets the handshake sample ("FORGET ALL AND RESET") when the peer has no timestamps,
    /// and a server only times the SYN-ACK from the echo.
    TimestampsOnly,
}

/// Redundant Data Bundling (seed 003 §3; `conn/rdb.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rdb {
    Off,
    /// Evensen 2008 (Linux 2.6.23 patch): every new segment smaller than the MSS carries the
    /// previous segment's unacknowledged bytes; retransmissions carry the following data.
    V1,
    /// Opstad 2015 (the Linux 3.16 "rdb" congestion-control module): a new segment of a thin
    /// stream goes out with the previous unacknowledged segments in front; hidden-loss
    /// detection and a congestion reaction.
    V2,
}

/// RDBv2's ssthresh on a loss (the module's `ssthresh` hook).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RdbSsthresh {
    /// max(cwnd/4, 2): Listing B.23 `tcp_rdb_ssthresh`.
    Quarter,
    /// max(cwnd/2, 2): Reno's `tcp_reno_ssthresh`.
    Half,
}

/// Every mechanism of the endpoint is a switch here. Deserialized from a TOML table; a
/// `profile` key in it starts from that profile instead of the seeds' baseline, and every key
/// written beside it overrides the profile (see [`Profile`]).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(from = "TcpConfigToml")]
pub struct TcpConfig {
    /// Path MTU; the advertised MSS defaults to `mtu - 40`.
    pub mtu: Bytes,
    /// MSS advertised in the SYN (at most `mtu - 40`); `None` means `mtu - 40`.
    pub mss: Option<Bytes>,
    /// SACK (RFC 2018) negotiation, generation and SACK-based recovery (RFC 3517 loss marking).
    pub sack: bool,
    /// FACK loss marking instead of RFC 3517's (needs `sack`).
    pub fack: bool,
    /// Which holes SACK recovery marks lost when FACK is off.
    pub sack_loss_marking: SackLossMarking,
    /// D-SACK generation (RFC 2883) by the receiver.
    pub dsack: bool,
    /// Timestamps (RFC 1323): RTT sampling from echoes; takes 12 bytes of every segment.
    pub timestamps: bool,
    /// Window scaling (RFC 1323): lets `rcvbuf` and `window_clamp` exceed 64 KB; the shift is
    /// the smallest that fits `rcvbuf` (Linux `tcp_select_initial_window`).
    pub window_scaling: bool,
    /// Limited transmit (RFC 3042).
    pub limited_transmit: bool,
    /// Linux 2.4 rate halving (`tcp_cwnd_down`) in Recovery and CWR; off in the seeds, where cwnd
    /// drops to ssthresh at once.
    pub rate_halving: bool,
    /// With `rate_halving` off: still cap cwnd at in_flight + 1 on every ACK in Recovery and
    /// CWR, the last line of Linux 2.4 `tcp_cwnd_down` (seed 000 §5.1.1: "the `cwnd` was only
    /// one packet greater than the number of packets in flight"). Rate halving always caps.
    pub flight_cap: bool,
    /// Linux 2.4 `tcp_head_timedout`: on a dubious ACK, if the first unacknowledged segment was
    /// last sent more than one RTO ago, enter Recovery (`tcp_time_to_recover`, "Trick#3"), and
    /// in Recovery mark every segment not SACKed that was last sent more than one RTO ago as
    /// lost (`tcp_update_scoreboard`). Seed 000 §5.2.1 describes it: in fast recovery "Linux TCP
    /// marked the packet that triggered RTO only as lost and did not start the RTO algorithm".
    pub head_timedout: bool,
    /// Initial congestion window.
    pub initial_window: InitialWindow,
    /// Initial window 1 when the SYN or SYN-ACK was retransmitted (RFC 3390 §2).
    pub iw_after_syn_loss_1: bool,
    /// Which handshakes give the first RTT sample.
    pub handshake_rtt: HandshakeRtt,
    /// cwnd at the end of fast recovery.
    pub recovery_exit: RecoveryExit,
    /// Control Block Interdependence: Linux 2.4's per-destination metrics cache (needs a
    /// [`crate::Host`], which keeps the cache). Off in the seeds' baseline.
    pub cbi: bool,
    /// What ssthresh is halved from on fast retransmit and RTO.
    pub ssthresh_from: SsthreshFrom,
    /// Linear timeouts for thin streams (Linux 2.6.34+ `tcp_thin_linear_timeouts`, seed 003):
    /// while fewer than 4 segments are out and the first slow start is over, the first 6 RTOs
    /// are not backed off (RTO = srtt + rttvar).
    pub thin_linear_timeouts: bool,
    /// Modified fast retransmit for thin streams (Linux 2.6.34+ `tcp_thin_dupack`, seed 003):
    /// with SACK, a thin stream with nothing unsent retransmits on the first duplicate ACK.
    pub thin_dupack: bool,
    /// Linux `tcp_moderate_cwnd` (`tcp_max_burst`): on a "dubious" ACK outside Recovery and CWR
    /// (duplicate, SACK, ECE, or any ACK while not Open), cwnd is cut to in_flight + this, so an
    /// ACK burst releases at most this many segments at once. 0 turns it off.
    pub max_burst: u32,
    /// Duplicate ACKs (or SACKed segments above a hole) that mark a loss (Linux `tcp_reordering`).
    pub dupthresh: u32,
    /// NewReno "Careful" variant of RFC 2582 §6: after an RTO, fast retransmit needs an ACK above
    /// the highest sequence sent before the RTO. `false` is the "Less Careful" variant.
    pub newreno_careful: bool,
    /// Delayed ACK mode.
    pub delayed_ack: DelayedAck,
    /// Timeout of the static delayed ACK.
    pub delayed_ack_timeout: Dur,
    /// Number of segments ACKed at once at the start of the connection (Linux quick ACK mode).
    pub quickacks: u32,
    /// Nagle's algorithm (RFC 896).
    pub nagle: bool,
    /// RFC 2861's restart (Linux `tcp_slow_start_after_idle` = 1, `tcp_cwnd_restart`): data
    /// written with nothing outstanding after more than an RTO without sending halves cwnd
    /// once per RTO idle beyond the first, down to the initial window; ssthresh keeps 3/4 of
    /// the old cwnd. Not for an algorithm with its own `cong_control` (BBR).
    pub slow_start_after_idle: bool,
    /// Receive buffer: the most the receiver advertises (and holds out of order).
    pub rcvbuf: Bytes,
    /// Receive-buffer autotuning (Linux `tcp_moderate_rcvbuf`, 6.x's rules): the buffer
    /// starts at this size (`tcp_rmem[1]`) and grows once per receiver RTT up to `rcvbuf`
    /// (`tcp_rmem[2]`), and the advertised window grows with it by two segments per segment
    /// received, each growth acknowledged at once (`conn/rcvbuf.rs`). `None`: a fixed buffer of
    /// `rcvbuf`, all of it offered (the older profiles).
    pub rcvbuf_initial: Option<Bytes>,
    /// Window clamp: an upper bound on the advertised window.
    pub window_clamp: Option<Bytes>,
    /// How much of the free receive buffer is offered as window (Linux `tcp_adv_win_scale`,
    /// `tcp_win_from_space`): `n > 0` offers `space - space/2^n`, `n < 0` offers `space/2^-n`;
    /// `None` offers all of it. Linux 2.2/2.3 (seed 001's stack) offered half: `tcp_space` =
    /// (rcvbuf - rmem_alloc) / 2, i.e. `-1`.
    pub adv_win_scale: Option<i8>,
    /// RTO before any RTT sample (also the SYN timeout).
    pub rto_initial: Dur,
    /// Lower bound of the RTO (Linux: rttvar never falls below it).
    pub rto_min: Dur,
    /// Upper bound of the (backed-off) RTO.
    pub rto_max: Dur,
    /// When an ACK of new data rearms the retransmission timer.
    pub rto_timer: RtoTimer,
    /// How the RTO follows the RTT samples (`linux24`, or seed 001's `linux22`).
    pub rto_estimator: RtoEstimator,
    /// SYN retransmissions before the connection attempt fails (Linux `tcp_syn_retries`).
    pub syn_retries: u32,
    /// SYN-ACK retransmissions before the server gives up (Linux `tcp_synack_retries`).
    pub synack_retries: u32,
    /// RTO expiries on data before the connection is aborted (Linux `tcp_retries2`).
    pub retries2: u32,
    /// TIME-WAIT length.
    pub time_wait: Dur,
    /// ECN (RFC 3168): negotiated in the handshake; new data is sent ECT(0); the receiver
    /// echoes CE with ECE until CWR; the sender halves once per window (CWR state).
    pub ecn: bool,
    /// F-RTO (basic algorithm of draft-sarolahti-tsvwg-tcp-frto, RFC 4138 §2.1).
    pub frto: bool,
    /// Linux undo of cwnd/ssthresh reductions shown unnecessary, by timestamps (Eifel-like, needs
    /// `timestamps`) or by D-SACK (needs `dsack`). Always present in Linux 2.4.
    pub undo: bool,
    /// Congestion control: Reno (today's Linux 2.4 growth) or CUBIC (Linux 3.16 `tcp_cubic.c`).
    pub congestion_control: CongestionControl,
    /// Which kernel's version of the functions that changed between kernels the model
    /// follows: none (the default) is Reno with Linux 2.4's growth (`tcp_cong_avoid`, also the
    /// `linux-3.16` profile's) and CUBIC as Linux 3.16 has it, with everything else as the
    /// switches say; `"linux-3.16"` gives Reno 3.16's slow start (`tcp_slow_start`: cwnd +=
    /// segments ACKed, to at most ssthresh + 1); `"linux-6.18"` the 6.18 versions (see
    /// [`Kernel::Linux618`]).
    pub kernel: Option<Kernel>,
    /// HyStart (Linux 3.16 `tcp_cubic.c`: ACK-train and delay-increase detection, both on,
    /// from cwnd 16): ends slow start early. Part of CUBIC (needs `congestion_control = "cubic"`).
    pub hystart: bool,
    /// Which ACKs of new data may raise cwnd (Linux `tcp_is_cwnd_limited`).
    pub cwnd_limited: CwndLimited,
    /// Proportional rate reduction (RFC 6937 PRR-SSRB, Linux 3.2+ `tcp_cwnd_reduction`) in
    /// Recovery and CWR instead of `rate_halving` or the at-once drop to ssthresh.
    pub prr: bool,
    /// Early retransmit (RFC 5827, Linux 3.5+ `tcp_early_retrans`); off while `thin_dupack`
    /// is on or `dupthresh` is not 3, as in Linux (`tcp_enable_early_retrans`).
    pub early_retransmit: EarlyRetransmit,
    /// Tail loss probe (Linux 3.10–3.16 `tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
    /// `tcp_process_tlp_ack`; needs SACK).
    pub tlp: bool,
    /// RACK time-based loss detection (RFC 8985, Linux 4.10+ `tcp_recovery.c`), in addition to
    /// the SACK loss-marking rules; needs SACK.
    pub rack: bool,
    /// Linux's internal TCP pacing (4.13+): `"none"` (the kernel cannot pace: the seeds' 2.4,
    /// 2.3.99 and 3.16), `"when_needed"` (the algorithm asks for it, as BBR does: Linux 6.18
    /// without the `fq` qdisc) or `"always"` (every connection, as with `fq`).
    pub pacing: Pacing,
    /// Linux `tcp_pacing_ss_ratio`: the pacing rate in slow start (cwnd < ssthresh / 2), in
    /// percent of cwnd · mss / srtt, for algorithms without a rate of their own.
    pub pacing_ss_ratio: u32,
    /// Linux `tcp_pacing_ca_ratio`: the same in congestion avoidance.
    pub pacing_ca_ratio: u32,
    /// The kernel's `HZ` (100, 250, 300 or 1000): the tick of `tcp_jiffies32`, which BBR's
    /// min-RTT window and PROBE_RTT duration count in. (CUBIC of Linux 3.16 counts in ms.)
    pub hz: u32,
    /// Linux 4.8+'s timer wheel (`kernel/time/timer.c`): the retransmission timer (RTO, loss
    /// probe, RACK, early retransmit) and the delayed ACK fire at the end of their wheel
    /// bucket, up to 1 jiffy late below 63 jiffies, 8 below 504, 64 below 4032 (at `hz`); off,
    /// they fire on time (the seeds' kernels cascaded exactly, to the model's finer clock).
    pub timer_wheel: bool,
    /// Where the kernel's jiffies stand at the simulation's time 0, as a time (the bucket
    /// boundaries fall at whole multiples of the wheel's granularity): set per host and
    /// replication by the simulator, not a key.
    pub clock_phase: Dur,
    /// Linux 2.6+ `tcp_measure_rcv_mss` / `tcp_cleanup_rbuf`: a segment shorter than the
    /// receiver's estimate of the sender's MSS is ACKed as soon as the application reads it,
    /// unless the connection is interactive (it answered within ato: `pingpong`), then every
    /// second one. A thin stream's small writes are so ACKed at once. Off: Linux 2.4's
    /// delayed ACK, which waits for a second full segment or the timer.
    pub ack_pushed: bool,
    /// Redundant Data Bundling (seed 003): "off", "v1" or "v2".
    pub rdb: Rdb,
    /// RDB: most payload bytes in a bundled packet (0 or absent: the MSS only).
    pub rdb_max_bytes: Option<Bytes>,
    /// RDBv2: most previous segments bundled (0 or absent: unlimited).
    pub rdb_max_segments: Option<u32>,
    /// RDBv2 SPIFL thin test: bundle while packets_out < this.
    pub rdb_pif_limit: Option<u32>,
    /// RDBv2 DPIFL thin test: bundle while packets_out < min_srtt / this (default 10 ms).
    pub rdb_itt_min: Option<Dur>,
    /// RDBv2: cwnd from the sender-side TFRC-SP rate on a hidden loss (else CWR).
    pub rdb_tfrc: Option<bool>,
    /// RDBv2: ssthresh on a loss, "quarter" (default) or "half".
    pub rdb_ssthresh: Option<RdbSsthresh>,
}

/// The congestion-control algorithm (Linux `tcp_congestion_control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControl {
    /// Today's growth (Linux 2.4 `tcp_cong_avoid`) and ssthresh (`ssthresh_from`).
    Reno,
    /// Linux 3.16 `tcp_cubic.c`: beta 717/1024, C = 0.4 (`bic_scale` 41), fast convergence,
    /// TCP friendliness; slow start by `tcp_slow_start` (cwnd += segments ACKed).
    Cubic,
    /// Linux 6.18 `tcp_bbr.c` (BBR v1): cwnd and the pacing rate from a model of the path's
    /// bottleneck bandwidth and minimum RTT (`cc/bbr.rs`); needs pacing.
    Bbr,
}

/// Whether and when the sender paces its segments (Linux's internal pacing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// The kernel cannot pace (Linux before 4.13's internal pacing).
    None,
    /// When the congestion-control algorithm asks for it (`SK_PACING_NEEDED`: BBR).
    WhenNeeded,
    /// Always (Linux with the `fq` qdisc).
    Always,
}

/// The kernel whose version of the functions that changed between kernels the model follows
/// (`kernel`), where it has more than one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Kernel {
    /// Linux 3.16: Reno's `tcp_reno_cong_avoid` (`tcp_slow_start`); CUBIC as without a kernel.
    #[serde(rename = "linux-3.16")]
    Linux316,
    /// Linux 6.18 (docs/tcp-model.md, the profile "linux-6.18"): Reno's and CUBIC's 6.x
    /// growth (`tcp_slow_start` with the rest of the ACK into `tcp_cong_avoid_ai`, HyStart in
    /// µs), the ACK's order (`tcp_cong_control` after `tcp_fastretrans_alert`, with PRR there),
    /// RACK alone finding losses (`tcp_recovery = 1`), the RTT samples, the loss probe's and
    /// the reordering timer's timeouts in jiffies, the growth gate and undo.
    #[serde(rename = "linux-6.18")]
    Linux618,
}

/// The growth gate: whether an ACK of new data may raise cwnd.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CwndLimited {
    /// Today's gate, Linux 2.4 `tcp_ack`: the flight before the ACK filled cwnd
    /// (`prior_in_flight >= snd_cwnd`). Also written `"always"`.
    #[serde(alias = "always")]
    Linux24,
    /// Linux 3.15 `tcp_is_cwnd_limited(sk, in_flight)` without TSO: the flight before the ACK
    /// filled cwnd or came within 3 segments of it (`tcp_max_tso_deferred_mss`).
    Linux315,
    /// Linux 3.16 `tcp_is_cwnd_limited(sk)`: in slow start, `cwnd < 2·max_packets_out`;
    /// above ssthresh, whether the last transmission of new data that set `max_packets_out`
    /// was stopped by cwnd (`tcp_cwnd_validate`).
    Linux316,
    /// Linux 6.18 `tcp_is_cwnd_limited(sk)`: the last cwnd-limited transmission round, or in
    /// slow start (cwnd < ssthresh) `cwnd < 2·max_packets_out`; `tcp_cwnd_validate` also
    /// takes a round that sent nothing but found cwnd full, and any cwnd-limited round.
    Linux618,
}

/// Early retransmit (Linux `tcp_early_retrans` 1 and 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EarlyRetransmit {
    Off,
    /// Recovery at once (`tcp_early_retrans = 1`).
    On,
    /// Recovery after max(RTT/4, 2 ms) unless an ACK comes first (`tcp_early_retrans` 2 and
    /// 3, `tcp_pause_early_retransmit`).
    Delayed,
}

/// A named set of defaults for the TCP table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Profile {
    /// Linux 3.16's defaults for every switch the model has (see [`TcpConfig::linux_3_16`]).
    #[serde(rename = "linux-3.16")]
    Linux316,
    /// Seed 001's "Baseline TCP", a modified Linux 2.3.99-pre9 (see
    /// [`TcpConfig::linux_2_3_99`]).
    #[serde(rename = "linux-2.3.99")]
    Linux2399,
    /// Linux 6.18, the kernel the emulated hosts run (see [`TcpConfig::linux_6_18`]).
    #[serde(rename = "linux-6.18")]
    Linux618,
}

impl CongestionControl {
    /// The algorithm a Linux module name (`TCP_CONGESTION`, `tcp_congestion_control`) stands
    /// for, if the model has it.
    pub fn from_linux_name(name: &str) -> Option<CongestionControl> {
        match name {
            "reno" => Some(CongestionControl::Reno),
            "cubic" => Some(CongestionControl::Cubic),
            "bbr" => Some(CongestionControl::Bbr),
            _ => None,
        }
    }
}

impl Profile {
    /// The configuration the profile starts from.
    pub fn config(self) -> TcpConfig {
        match self {
            Profile::Linux316 => TcpConfig::linux_3_16(),
            Profile::Linux2399 => TcpConfig::linux_2_3_99(),
            Profile::Linux618 => TcpConfig::linux_6_18(),
        }
    }
}

impl TcpConfig {
    /// Whether the sender may fast retransmit from a timer a quarter RTT after a duplicate
    /// ACK (delayed early retransmit, as Linux enables it: `tcp_enable_early_retrans`).
    pub fn delayed_early_retransmit(&self) -> bool {
        self.early_retransmit == EarlyRetransmit::Delayed
    }

    /// Seed 001's "Baseline TCP" (Sarolahti 2000, Table 48 and Appendix C), a modified Linux
    /// 2.3.99-pre9, where it differs from the seeds' 2.4 baseline: SACK off (Table 48; the SACK
    /// variant turns it on and gets 2.2/2.3's FACK sender, `sack_loss_marking = "linux23"`);
    /// NewReno "Less Careful" (C.1.1); no limited transmit (RFC 3042 is from 2001); cwnd =
    /// FlightSize + 1 when NewReno recovery ends (C.1.1); ssthresh = max(cwnd/2, 2) (2.2/2.3
    /// `tcp_recalc_ssthresh`); the 2.2/2.3 RTO (`rto_estimator = "linux22"`, "unchanged", C.1.3)
    /// and retransmission timer (`rto_timer = "oldest_sent"`, `tcp_ack_packets_out`); no RTT
    /// sample from the handshake without timestamps (`tcp_init_metrics`'s reset, so the first
    /// data RTO is 3 s); each segment acknowledged at once (at 9600 bit/s "each data segment is
    /// acknowledged separately", C.1.4, footnote 12); a 64 KB socket buffer of which half is
    /// offered (C.1.5, 2.2/2.3 `tcp_space`). docs/tcp-model.md lists each choice.
    pub fn linux_2_3_99() -> TcpConfig {
        TcpConfig {
            sack: false,
            sack_loss_marking: SackLossMarking::Linux23,
            newreno_careful: false,
            limited_transmit: false,
            recovery_exit: RecoveryExit::FlightPlusOneKeepFour,
            ssthresh_from: SsthreshFrom::Cwnd,
            rto_estimator: RtoEstimator::Linux22,
            rto_timer: RtoTimer::OldestSent,
            handshake_rtt: HandshakeRtt::TimestampsOnly,
            delayed_ack: DelayedAck::Off,
            rcvbuf: Bytes(65535),
            adv_win_scale: Some(-1),
            ..TcpConfig::default()
        }
    }

    /// Linux 3.16's defaults for the model's switches (sysctls and `tcp_cubic.c` module
    /// parameters of a stock 3.16 kernel): SACK, D-SACK, FACK, timestamps, window scaling,
    /// IW 10 (`TCP_INIT_CWND`), CUBIC with HyStart, PRR, delayed ER + TLP
    /// (`tcp_early_retrans = 3`), the 3.16 growth gate, F-RTO (`tcp_frto = 2`), adaptive
    /// delayed ACK with 16 quick ACKs (`tcp_incr_quickack` at the first data segment: initial
    /// rcv_wnd 20·1460 / (2·536) for small segments, capped at `TCP_MAX_QUICKACKS`; a bulk
    /// sender's full first segment gives 20/2 = 10), RTO 1 s initially
    /// (`TCP_TIMEOUT_INIT`, RFC 6298) and at least 200 ms, no `tcp_moderate_cwnd` in Open,
    /// Disorder or Loss (3.16 calls it only on a Reno undo), `tcp_adv_win_scale = 1`,
    /// `tcp_syn_retries = 6`, ssthresh from cwnd. The receive buffer is `tcp_rmem`'s maximum
    /// (6 MB), standing in for receive-buffer autotuning, which the model does not have.
    pub fn linux_3_16() -> TcpConfig {
        TcpConfig {
            sack: true,
            fack: true,
            dsack: true,
            timestamps: true,
            window_scaling: true,
            limited_transmit: true,
            rate_halving: false,
            flight_cap: false,
            head_timedout: false,
            initial_window: InitialWindow::Segments(10),
            // 3.16 `tcp_init_metrics` falls back to IW 1 only after more than one
            // retransmission of the handshake (`total_retrans > 1`).
            iw_after_syn_loss_1: false,
            ssthresh_from: SsthreshFrom::Cwnd,
            handshake_rtt: HandshakeRtt::Always,
            recovery_exit: RecoveryExit::Ssthresh,
            max_burst: 0,
            dupthresh: 3,
            delayed_ack: DelayedAck::Adaptive,
            quickacks: 16,
            nagle: true,
            rcvbuf: Bytes(6_291_456),
            adv_win_scale: Some(1),
            rto_initial: Dur::from_secs(1),
            rto_min: Dur::from_millis(200),
            rto_max: Dur::from_secs(120),
            syn_retries: 6,
            synack_retries: 5,
            retries2: 15,
            ecn: false,
            frto: true,
            undo: true,
            congestion_control: CongestionControl::Cubic,
            hystart: true,
            cwnd_limited: CwndLimited::Linux316,
            prr: true,
            early_retransmit: EarlyRetransmit::Delayed,
            tlp: true,
            ack_pushed: true,
            slow_start_after_idle: true,
            ..TcpConfig::default()
        }
    }
}

impl TcpConfig {
    /// Linux 6.18 (the kernel the emulated hosts run) with its defaults, the switches set as
    /// its code does (docs/tcp-model.md, *Linux 6.18*, names the kernel function of each):
    /// SACK, D-SACK, timestamps and window scaling on, IW 10, CUBIC with HyStart (6.x's, in
    /// µs), RACK as the loss detector without the dupthresh rules (`tcp_recovery = 1`), the tail
    /// loss probe, PRR (5.x's `tcp_cwnd_reduction`), F-RTO, no FACK (gone in 4.15), no early
    /// retransmit (gone in 4.10), undo, the adaptive delayed ACK with 16 quick ACKs, RTO 1 s
    /// initial, 200 ms min, 120 s max, and internal pacing when the algorithm asks for it (BBR).
    /// Jiffies are 4 ms (`CONFIG_HZ = 250`, the emulating machine's); the receive buffer is
    /// autotuned from `tcp_rmem[1]` (128 KiB) up to `tcp_rmem[2]`'s default of 32 MiB (6 MiB
    /// before 6.16's "tcp: increase tcp_rmem[2] to 32 MB"; a new namespace on the emulating
    /// machine reads 33 554 432), which also makes the window scale 10, as the emulated hosts
    /// offer, the window growing as 6.x's does (`rcvbuf_initial`). Where 3.16 and 6.18 share a function the model's 3.16
    /// code runs; where they differ, `kernel = "linux-6.18"` selects the 6.x one.
    pub fn linux_6_18() -> TcpConfig {
        TcpConfig {
            fack: false,
            early_retransmit: EarlyRetransmit::Off,
            rack: true,
            kernel: Some(Kernel::Linux618),
            cwnd_limited: CwndLimited::Linux618,
            pacing: Pacing::WhenNeeded,
            hz: 250,
            timer_wheel: true,
            // `tcp_rmem[1]`: the buffer autotuning starts from (`tcp_rcv_space_adjust`).
            rcvbuf_initial: Some(Bytes(131_072)),
            // `tcp_rmem[2]`: what autotuning may reach; it sets the window scale.
            rcvbuf: Bytes(33_554_432),
            slow_start_after_idle: true,
            ..TcpConfig::linux_3_16()
        }
    }
}

/// Declares the TOML form of [`TcpConfig`]: every field optional (so a profile can tell what
/// was written), plus `profile`. A new field of [`TcpConfig`] must be listed here too.
macro_rules! tcp_config_toml {
    ($($field:ident: $ty:ty,)*) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct TcpConfigToml {
            #[serde(default)]
            profile: Option<Profile>,
            $(#[serde(default)] $field: Option<$ty>,)*
        }

        impl TcpConfigToml {
            fn apply(self) -> TcpConfig {
                let mut c = self.profile.map_or_else(TcpConfig::default, Profile::config);
                $(if let Some(v) = self.$field { c.$field = v; })*
                c
            }
        }
    };
}

impl From<TcpConfigToml> for TcpConfig {
    fn from(t: TcpConfigToml) -> TcpConfig {
        // HyStart belongs to the profile's CUBIC: Reno written beside a profile drops it,
        // unless `hystart` is written too.
        let profile_hystart = t.profile.is_some() && t.hystart.is_none();
        let mut c = t.apply();
        if profile_hystart && c.congestion_control != CongestionControl::Cubic {
            c.hystart = false;
        }
        c
    }
}

tcp_config_toml! {
    mtu: Bytes,
    mss: Option<Bytes>,
    sack: bool,
    fack: bool,
    sack_loss_marking: SackLossMarking,
    dsack: bool,
    timestamps: bool,
    window_scaling: bool,
    limited_transmit: bool,
    rate_halving: bool,
    flight_cap: bool,
    head_timedout: bool,
    initial_window: InitialWindow,
    iw_after_syn_loss_1: bool,
    handshake_rtt: HandshakeRtt,
    recovery_exit: RecoveryExit,
    cbi: bool,
    ssthresh_from: SsthreshFrom,
    thin_linear_timeouts: bool,
    thin_dupack: bool,
    max_burst: u32,
    dupthresh: u32,
    newreno_careful: bool,
    delayed_ack: DelayedAck,
    delayed_ack_timeout: Dur,
    quickacks: u32,
    nagle: bool,
    slow_start_after_idle: bool,
    rcvbuf: Bytes,
    rcvbuf_initial: Option<Bytes>,
    window_clamp: Option<Bytes>,
    adv_win_scale: Option<i8>,
    rto_initial: Dur,
    rto_min: Dur,
    rto_max: Dur,
    rto_timer: RtoTimer,
    rto_estimator: RtoEstimator,
    syn_retries: u32,
    synack_retries: u32,
    retries2: u32,
    time_wait: Dur,
    ecn: bool,
    frto: bool,
    undo: bool,
    congestion_control: CongestionControl,
    kernel: Option<Kernel>,
    hystart: bool,
    cwnd_limited: CwndLimited,
    prr: bool,
    early_retransmit: EarlyRetransmit,
    tlp: bool,
    rack: bool,
    ack_pushed: bool,
    pacing: Pacing,
    pacing_ss_ratio: u32,
    pacing_ca_ratio: u32,
    hz: u32,
    timer_wheel: bool,
    rdb: Rdb,
    rdb_max_bytes: Option<Bytes>,
    rdb_max_segments: Option<u32>,
    rdb_pif_limit: Option<u32>,
    rdb_itt_min: Option<Dur>,
    rdb_tfrc: Option<bool>,
    rdb_ssthresh: Option<RdbSsthresh>,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mtu: Bytes(576),
            mss: None,
            sack: true,
            fack: false,
            sack_loss_marking: SackLossMarking::Rfc3517,
            dsack: false,
            timestamps: false,
            window_scaling: false,
            limited_transmit: true,
            rate_halving: false,
            flight_cap: false,
            head_timedout: false,
            initial_window: InitialWindow::Segments(2),
            iw_after_syn_loss_1: true,
            ssthresh_from: SsthreshFrom::Flight,
            handshake_rtt: HandshakeRtt::Always,
            recovery_exit: RecoveryExit::Ssthresh,
            cbi: false,
            thin_linear_timeouts: false,
            thin_dupack: false,
            max_burst: 3,
            dupthresh: 3,
            newreno_careful: false,
            delayed_ack: DelayedAck::Static,
            delayed_ack_timeout: Dur::from_millis(200),
            quickacks: 0,
            nagle: true,
            // Linux 2.4.20 `tcp_event_data_sent` (and every later kernel): no shipped output
            // changes with it (every experiment's summary identical).
            slow_start_after_idle: true,
            rcvbuf: Bytes(65535),
            rcvbuf_initial: None,
            window_clamp: None,
            adv_win_scale: None,
            rto_initial: Dur::from_secs(3),
            rto_min: Dur::from_millis(200),
            rto_max: Dur::from_secs(120),
            rto_timer: RtoTimer::Ack,
            rto_estimator: RtoEstimator::Linux24,
            syn_retries: 5,
            synack_retries: 5,
            retries2: 15,
            time_wait: Dur::from_secs(60),
            ecn: false,
            frto: false,
            undo: true,
            rdb: Rdb::Off,
            rdb_max_bytes: None,
            rdb_max_segments: None,
            rdb_pif_limit: None,
            rdb_itt_min: None,
            rdb_tfrc: None,
            rdb_ssthresh: None,
            congestion_control: CongestionControl::Reno,
            kernel: None,
            hystart: false,
            cwnd_limited: CwndLimited::Linux24,
            prr: false,
            early_retransmit: EarlyRetransmit::Off,
            tlp: false,
            rack: false,
            ack_pushed: false,
            pacing: Pacing::None,
            pacing_ss_ratio: 200,
            pacing_ca_ratio: 120,
            hz: 1000,
            timer_wheel: false,
            clock_phase: Dur::ZERO,
        }
    }
}

/// A configuration that cannot be used: the key, and what is allowed (the spec error every
/// spec shares).
pub type ConfigError = lasthop_core::spec::SpecError;

fn err(key: &str, message: impl Into<String>) -> ConfigError {
    lasthop_core::spec::err(key, message)
}

impl TcpConfig {
    /// Parses a TOML table and validates it.
    pub fn from_toml(text: &str) -> Result<TcpConfig, ConfigError> {
        let cfg: TcpConfig = lasthop_core::spec::from_toml(text)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The MSS advertised in our SYN.
    pub fn adv_mss(&self) -> u32 {
        self.mss.map_or(self.mtu.0.saturating_sub(40), |m| m.0) as u32
    }

    /// Checks ranges and refuses switches that are not implemented yet.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(68..=65535).contains(&self.mtu.0) {
            return Err(err(
                "mtu",
                format!("{} is out of range: allowed 68B..=65535B", self.mtu),
            ));
        }
        let max_mss = self.mtu.0 - 40;
        if let Some(m) = self.mss {
            if m.0 > max_mss || m.0 < 64 {
                return Err(err(
                    "mss",
                    format!("{m} is out of range: allowed 64B..=mtu-40 ({max_mss}B)"),
                ));
            }
        }
        if self.adv_mss() < 64 {
            return Err(err("mtu", "mtu-40 must leave an MSS of at least 64B"));
        }
        if self.fack && !self.sack {
            return Err(err("fack", "FACK needs `sack = true`"));
        }
        if self.fack && self.sack_loss_marking != SackLossMarking::Rfc3517 {
            return Err(err(
                "sack_loss_marking",
                "\"head\" and \"linux24\" are Linux 2.4's marking without FACK; they cannot be combined with `fack = true`",
            ));
        }
        if self.dsack && !self.sack {
            return Err(err("dsack", "D-SACK needs `sack = true`"));
        }
        if let InitialWindow::Segments(n) = self.initial_window {
            if !(1..=10).contains(&n) {
                return Err(err(
                    "initial_window",
                    format!("{n} is out of range: allowed 1..=10 segments or \"rfc3390\""),
                ));
            }
        }
        if self.hystart && self.congestion_control != CongestionControl::Cubic {
            return Err(err(
                "hystart",
                "HyStart is part of CUBIC: it needs `congestion_control = \"cubic\"` (write `hystart = false` with \"reno\")",
            ));
        }
        if self.tlp && !self.sack {
            return Err(err("tlp", "the tail loss probe needs `sack = true`"));
        }
        if self.rack && !self.sack {
            return Err(err("rack", "RACK needs `sack = true`"));
        }
        if self.prr && self.rate_halving {
            return Err(err(
                "prr",
                "PRR replaces rate halving: write `rate_halving = false` with `prr = true`",
            ));
        }
        if !(1..=64).contains(&self.dupthresh) {
            return Err(err("dupthresh", "out of range: allowed 1..=64"));
        }
        if self.delayed_ack == DelayedAck::Static
            && (self.delayed_ack_timeout == Dur::ZERO
                || self.delayed_ack_timeout > Dur::from_millis(500))
        {
            return Err(err(
                "delayed_ack_timeout",
                "out of range: allowed 1ns..=500ms (RFC 1122)",
            ));
        }
        // Without window scaling the buffer may still be larger than 64 KB (Linux keeps
        // `tcp_rmem` and grows it; only the 16-bit window field stops at 65 535, which
        // `recv.rs` applies): it holds out-of-order data beyond what the window says.
        let (max_wnd, why) = (65535u64 << 14, "1B..=1073725440B (65535 << 14)");
        if !(1..=max_wnd).contains(&self.rcvbuf.0) {
            return Err(err(
                "rcvbuf",
                format!("{} is out of range: allowed {why}", self.rcvbuf),
            ));
        }
        if let Some(b) = self.rcvbuf_initial {
            if !(1..=self.rcvbuf.0).contains(&b.0) {
                return Err(err(
                    "rcvbuf_initial",
                    format!(
                        "{b} is out of range: allowed 1B..={} (`rcvbuf`, the most autotuning grows it to)",
                        self.rcvbuf
                    ),
                ));
            }
        }
        if let Some(c) = self.window_clamp {
            if !(1..=max_wnd).contains(&c.0) {
                return Err(err(
                    "window_clamp",
                    format!("{c} is out of range: allowed {why}"),
                ));
            }
        }
        if let Some(n) = self.adv_win_scale {
            if n == 0 || !(-14..=14).contains(&n) {
                return Err(err(
                    "adv_win_scale",
                    format!("{n} is out of range: allowed -14..=-1 or 1..=14 (leave it out to offer the whole buffer)"),
                ));
            }
        }
        if self.rto_min == Dur::ZERO || self.rto_min > self.rto_max {
            return Err(err("rto_min", "must be positive and at most `rto_max`"));
        }
        if self.rto_initial < self.rto_min || self.rto_initial > self.rto_max {
            return Err(err(
                "rto_initial",
                "must lie between `rto_min` and `rto_max`",
            ));
        }
        for (key, v) in [
            ("pacing_ss_ratio", self.pacing_ss_ratio),
            ("pacing_ca_ratio", self.pacing_ca_ratio),
        ] {
            if v > 3000 {
                return Err(err(
                    key,
                    format!("{v} is out of range: allowed 0..=3000 (percent of cwnd · mss / srtt, as Linux's tcp_{key} sysctl)"),
                ));
            }
        }
        if ![100, 250, 300, 1000].contains(&self.hz) {
            return Err(err(
                "hz",
                format!(
                    "{} is out of range: allowed 100, 250, 300 or 1000 (Linux's CONFIG_HZ choices)",
                    self.hz
                ),
            ));
        }
        if self.congestion_control == CongestionControl::Bbr {
            if self.pacing == Pacing::None {
                return Err(err(
                    "congestion_control",
                    "\"bbr\" paces its segments (Linux 4.13+'s internal pacing, or the fq qdisc): it needs `pacing = \"when_needed\"` or `\"always\"`, which `profile = \"linux-6.18\"` has; with `pacing = \"none\"` (the seeds' kernels and the linux-3.16 and linux-2.3.99 profiles cannot pace) choose \"reno\" or \"cubic\"",
                ));
            }
            if self.kernel == Some(Kernel::Linux316) {
                return Err(err(
                    "kernel",
                    "\"linux-3.16\" has no BBR (Linux 4.9+): leave `kernel` out with `congestion_control = \"bbr\"` (BBR is Linux 6.18's)",
                ));
            }
        }
        self.validate_rdb()?;
        Ok(())
    }

    /// The window offered for `space` free bytes of receive buffer (Linux `tcp_win_from_space`).
    pub fn win_from_space(&self, space: u64) -> u64 {
        match self.adv_win_scale {
            None => space,
            Some(n) if n > 0 => space - (space >> n),
            Some(n) => space >> (-n),
        }
    }

    /// Initial window in segments for an effective MSS.
    pub(crate) fn iw_segments(&self, mss: u32) -> u32 {
        match self.initial_window {
            InitialWindow::Segments(n) => n,
            // RFC 3390: min(4·MSS, max(2·MSS, 4380)) bytes, in whole segments.
            InitialWindow::Rfc3390 => (4 * mss).min((2 * mss).max(4380)) / mss,
        }
    }
}

impl TcpConfig {
    /// The RDB keys: each only with the variant that has it.
    fn validate_rdb(&self) -> Result<(), ConfigError> {
        // RDBv2 is a Reno congestion-control module (its cong_avoid is Reno's, its ssthresh
        // its own): it cannot run beside CUBIC, as a socket has one module.
        if self.rdb == Rdb::V2 && self.congestion_control != CongestionControl::Reno {
            return Err(err(
                "rdb",
                "\"v2\" is the Linux 3.16 \"rdb\" congestion-control module (Reno-based): it needs `congestion_control = \"reno\"`",
            ));
        }
        let v2_only = [
            ("rdb_max_segments", self.rdb_max_segments.is_some()),
            ("rdb_pif_limit", self.rdb_pif_limit.is_some()),
            ("rdb_itt_min", self.rdb_itt_min.is_some()),
            ("rdb_tfrc", self.rdb_tfrc.is_some()),
            ("rdb_ssthresh", self.rdb_ssthresh.is_some()),
        ];
        if self.rdb == Rdb::Off && self.rdb_max_bytes.is_some() {
            return Err(err(
                "rdb_max_bytes",
                "needs `rdb = \"v1\"` or `rdb = \"v2\"`",
            ));
        }
        for (key, given) in v2_only {
            if given && self.rdb != Rdb::V2 {
                return Err(err(key, "is an RDBv2 setting: it needs `rdb = \"v2\"`"));
            }
        }
        if self.rdb_pif_limit.is_some() && self.rdb_itt_min.is_some() {
            return Err(err(
                "rdb_pif_limit",
                "give either `rdb_pif_limit` (SPIFL) or `rdb_itt_min` (DPIFL), not both",
            ));
        }
        if self.rdb_pif_limit == Some(0) {
            return Err(err(
                "rdb_pif_limit",
                "0 is out of range: allowed 1 or more packets (bundling while packets_out < limit)",
            ));
        }
        if self.rdb_itt_min == Some(Dur::ZERO) {
            return Err(err("rdb_itt_min", "must be positive, e.g. \"10ms\""));
        }
        Ok(())
    }
}

/// A jiffy at `hz`, in nanoseconds: Linux's `TICK_NSEC`, (10^9 + HZ/2) / HZ rounded down as
/// the model has always taken it (exact at 100, 250 and 1000).
pub(crate) fn jiffy_ns(hz: u32) -> u64 {
    1_000_000_000 / u64::from(hz.max(1))
}

/// `jiffies` at `now` on a host's clock of `hz` ticks standing at `phase` at time 0 (its
/// `clock_phase`): what its timer wheel, its receiver's ato and its congestion control's
/// `tcp_jiffies32` all read.
pub(crate) fn jiffies_at(hz: u32, phase: Dur, now: Time) -> u64 {
    (now.0 + phase.0) / jiffy_ns(hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_baseline() {
        let c = TcpConfig::from_toml("").unwrap();
        assert_eq!(c, TcpConfig::default());
        assert_eq!(c.adv_mss(), 536);
        assert!(c.sack && c.limited_transmit && !c.timestamps && !c.fack && !c.dsack);
        assert_eq!(c.iw_segments(536), 2);
    }

    #[test]
    fn parses_units_and_variants() {
        let c = TcpConfig::from_toml(
            "timestamps = true\ndelayed_ack_timeout = \"100ms\"\ninitial_window = \"rfc3390\"\nmss = \"256B\"\nmtu = \"296B\"",
        )
        .unwrap();
        assert_eq!(c.delayed_ack_timeout, Dur::from_millis(100));
        assert_eq!(c.iw_segments(256), 4);
        assert_eq!(c.iw_segments(1460), 3);
    }

    #[test]
    fn errors_name_the_key() {
        let e = TcpConfig::from_toml("mss = \"600B\"").unwrap_err();
        assert_eq!(e.key, "mss");
        assert!(e.message.contains("mtu-40"), "{e}");
        // A buffer above 64 KB without window scaling is Linux's too (the field stops at
        // 65 535); beyond 65535 << 14 is no buffer a window could describe.
        TcpConfig::from_toml("rcvbuf = \"100000B\"").unwrap();
        let e = TcpConfig::from_toml("rcvbuf = \"2000000000B\"").unwrap_err();
        assert_eq!(e.key, "rcvbuf");
        assert!(e.message.contains("65535 << 14"), "{e}");
        let e = TcpConfig::from_toml("sack = \"yes\"").unwrap_err();
        assert_eq!(e.key, "sack", "{e}");
        let e = TcpConfig::from_toml("delayed_ack_timeout = \"200\"").unwrap_err();
        assert_eq!(e.key, "delayed_ack_timeout", "{e}");
        assert!(e.message.contains("ms"), "{e}");
        let e = TcpConfig::from_toml("bogus = 1").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = TcpConfig::from_toml("initial_window = 11").unwrap_err();
        assert_eq!(e.key, "initial_window");
        let e = TcpConfig::from_toml("adv_win_scale = 0").unwrap_err();
        assert_eq!(e.key, "adv_win_scale");
        // RDBv2 is a Reno module: not beside CUBIC (the profile's), unless Reno is written.
        let e = TcpConfig::from_toml("profile = \"linux-3.16\"\nrdb = \"v2\"").unwrap_err();
        assert_eq!(e.key, "rdb");
        assert!(e.message.contains("reno"), "{e}");
        TcpConfig::from_toml(
            "profile = \"linux-3.16\"\nrdb = \"v2\"\ncongestion_control = \"reno\"",
        )
        .unwrap();
    }

    #[test]
    fn window_from_space_as_linux() {
        let mut c = TcpConfig::default();
        assert_eq!(c.win_from_space(65535), 65535);
        // Linux 2.2/2.3 tcp_space: half the free buffer.
        c.adv_win_scale = Some(-1);
        assert_eq!(c.win_from_space(65535), 32767);
        // Linux 2.4 default tcp_adv_win_scale = 2: three quarters (87380 -> 65535).
        c.adv_win_scale = Some(2);
        assert_eq!(c.win_from_space(87380), 65535);
    }
}
