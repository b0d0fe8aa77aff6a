//! Redundant Data Bundling (seed 003 §3): a packet carrying new data starts earlier, with
//! still-unacknowledged bytes of the preceding segments in front, so one lost packet's data
//! usually arrives in the next one and the receiver is not held up for a retransmission.
//!
//! The retransmission queue keeps each segment as first cut ([`SentSeg`] `start..end`); only
//! the packet on the wire is wider, and `SentSeg::rdb_start` remembers where it began (0: sent
//! without redundant data, the kernel's `RDB_SKB_CB(skb)->rdb_start_seq`).
//!
//! * v1 (Evensen 2008, the Linux 2.6.23 patch, extract §3.2): `tcp_trans_merge_prev` — a new
//!   segment smaller than the MSS takes in the previous segment's unacknowledged bytes (which
//!   include what that one bundled), all or nothing, up to the MSS or `rdb_max_bytes`; and
//!   `tcp_retrans_merge_redundant` — a retransmission carries the following segments' data as
//!   far as it fits. No thin test, no congestion-control change.
//! * v2 (Opstad 2015, the Linux 3.16 "rdb" module, extract §3.3–3.6): `rdb_can_bundle_check`
//!   walks back from the new segment over the previous ones while the total fits; bundling only
//!   while the stream is thin (SPIFL or DPIFL); never on retransmissions. Hidden-loss detection
//!   (`rdb_check_rtx_queue_acked`) and the congestion reaction (`tcp_rdbcong_avoid` /
//!   `tcp_rdbcong_avoid_tfrc`, ssthresh `tcp_rdb_ssthresh`).
//!
//! The hooks in `send.rs` each call one method here and do nothing when `rdb = "off"`.

use super::send::{Outgoing, SentSeg};
use super::*;
use crate::config::{Rdb, RdbSsthresh};
use crate::tfrc::{Tfrc, HEADER};

/// RDBv2's default minimum inter-transmission time for DPIFL (thesis §4.1: TFRC-SP's 10 ms).
pub(super) const ITT_MIN_DEFAULT: Dur = Dur::from_millis(10);

/// DPIFL (thesis Eq. 4.1, Listing B.7): min_srtt / itt_min, integer division.
pub(crate) fn dpif_limit(min_srtt: Dur, itt_min: Dur) -> u64 {
    min_srtt.0 / itt_min.0.max(1)
}

/// RDBv2's per-connection state (the module's `struct RDBcong`).
#[derive(Debug, Default)]
pub(super) struct RdbState {
    /// Minimum smoothed RTT seen on ACKs (`cong->minrtt_us`).
    pub(super) min_srtt: Option<Dur>,
    /// Hidden losses not yet reacted to (`cong->rdb_ack_loss_count`).
    pub(super) loss_pending: u32,
    /// TFRC-SP, with `rdb_tfrc = true`.
    pub(super) tfrc: Option<Tfrc>,
}

impl RdbState {
    pub(super) fn new(cfg: &TcpConfig) -> RdbState {
        RdbState {
            tfrc: (cfg.rdb == Rdb::V2 && cfg.rdb_tfrc == Some(true)).then(|| Tfrc::new(HEADER)),
            ..RdbState::default()
        }
    }
}

impl SentSeg {
    /// Payload bytes (the FIN excluded).
    fn data_len(&self) -> u64 {
        self.end - self.start - u64::from(self.fin)
    }

    /// Where this segment's packet began when it was last sent whole (v1 keeps the bundled
    /// bytes in the segment, as the patch rewrote the write queue).
    fn wire_start(&self) -> u64 {
        if self.rdb_start != 0 {
            self.rdb_start
        } else {
            self.start
        }
    }
}

impl SendState {
    /// The bundling limit in bytes: `rdb_max_bytes` if set (and not 0), else the MSS.
    fn rdb_limit(cx: &Ctx) -> u64 {
        let cfg = cx.cfg;
        let o = cx.o;
        match cfg.rdb_max_bytes {
            Some(b) if b.0 > 0 => b.0,
            _ => u64::from(o.mss),
        }
    }

    /// Hook in `next_segment`: a new segment `out` (the last of `rtx`) is going out; with RDB
    /// its packet may start earlier.
    #[inline]
    pub(super) fn rdb_new_segment(&mut self, cx: &mut Ctx, out: Outgoing) -> Outgoing {
        let cfg = cx.cfg;
        let now = cx.now;
        if cfg.rdb == Rdb::Off {
            return out;
        }
        if out.payload == 0 {
            return out; // a bare FIN
        }
        if let Some(t) = self.rdb.tfrc.as_mut() {
            t.on_send(now, out.payload); // `rdb_tx_update_s`: the new data's size
        }
        let from = match cfg.rdb {
            Rdb::V1 => self.rdb_v1_merge_prev(cx),
            _ => self.rdb_v2_bundle(cx),
        };
        let Some(from) = from.filter(|&f| f < out.seq) else {
            return out;
        };
        if let Some(s) = self.rtx.back_mut() {
            s.rdb_start = from;
        }
        let redundant = out.seq - from;
        cx.stats.rdb_pkts_sent += 1;
        cx.stats.rdb_bytes_sent += redundant;
        Outgoing {
            seq: from,
            payload: out.payload + redundant as u32,
            ..out
        }
    }

    /// RDBv1 `tcp_trans_merge_prev`: the previous segment's unacknowledged bytes (its packet's
    /// bytes, trimmed of what is acknowledged) go in front of a new segment smaller than the
    /// MSS, if all of them fit. Returns where the packet starts.
    fn rdb_v1_merge_prev(&self, cx: &Ctx) -> Option<u64> {
        let o = cx.o;
        let n = self.rtx.len();
        let (new, prev) = (
            self.rtx.get(n.checked_sub(1)?)?,
            self.rtx.get(n.checked_sub(2)?)?,
        );
        let len = new.data_len();
        if len >= u64::from(o.mss) || prev.sacked() || prev.fin || new.fin {
            return None;
        }
        if new.start + len > self.snd_una + u64::from(self.snd_wnd) {
            return None;
        }
        // ua_data = min(prev->len, prev.end_seq - snd_una).
        let ua = (prev.end - prev.wire_start()).min(prev.end.saturating_sub(self.snd_una));
        if ua == 0 || len + ua > Self::rdb_limit(cx) {
            return None;
        }
        Some(prev.end - ua)
    }

    /// RDBv2 `run_rdb` + `rdb_can_bundle_check`: while the stream is thin, the newest previous
    /// segments that fit whole (total ≤ MSS and `rdb_max_bytes`, at most `rdb_max_segments`),
    /// stopping at the first that does not, at a SACKed one, and skipping an acknowledged
    /// prefix. Returns where the packet starts.
    fn rdb_v2_bundle(&self, cx: &Ctx) -> Option<u64> {
        let cfg = cx.cfg;
        let o = cx.o;
        let n = self.rtx.len();
        // packets_out before this segment (the hook runs before tcp_event_new_data_sent).
        if n < 2 || !self.rdb_thin(cfg, n as u64 - 1) {
            return None;
        }
        let una = self.snd_una;
        let mss = u64::from(o.mss);
        let max_bytes = cfg.rdb_max_bytes.map_or(0, |b| b.0);
        let max_segs = cfg.rdb_max_segments.unwrap_or(0);
        let mut bytes = self.rtx[n - 1].data_len();
        let mut first = None;
        // `count` starts at 1, the new segment itself, and is tested before a segment is
        // added (Listing B.10): `rdb_max_segments = 1` gives exactly one previous segment.
        for (count, s) in (1u32..).zip(self.rtx.iter().rev().skip(1)) {
            let len = s.data_len();
            // The kernel checks only the immediately previous segment for SACK
            // (`redundant_data_bundling`); a SACKed one further back ends the run here too,
            // as the data is already at the receiver.
            if s.end <= una || s.sacked() || s.fin {
                break;
            }
            if bytes + len > mss
                || (max_bytes > 0 && bytes + len > max_bytes)
                || (max_segs > 0 && count > max_segs)
            {
                break;
            }
            bytes += len;
            first = Some(s.start.max(una)); // skip an acknowledged prefix
        }
        first
    }

    /// RDBv2's thin test: SPIFL `packets_out < rdb_pif_limit` or DPIFL `packets_out <
    /// min_srtt / rdb_itt_min`. Before the first ACK the handshake's srtt stands in for the
    /// minimum; with no RTT estimate at all the stream is not thin.
    fn rdb_thin(&self, cfg: &TcpConfig, packets_out: u64) -> bool {
        if let Some(limit) = cfg.rdb_pif_limit {
            return packets_out < u64::from(limit);
        }
        let min = match (self.rdb.min_srtt, self.rtt.srtt()) {
            (Some(m), _) => m,
            (None, Some(s)) => s,
            (None, None) => return false,
        };
        packets_out < dpif_limit(min, cfg.rdb_itt_min.unwrap_or(ITT_MIN_DEFAULT))
    }

    /// Hook in `next_segment`: RDBv1's `tcp_retrans_merge_redundant` — a retransmitted segment
    /// (its packet as v1 left it, trimmed of acknowledged bytes) carries the data of the
    /// following sent segments as far as it fits. v2 never bundles on retransmission.
    #[inline]
    pub(super) fn rdb_retransmit(&mut self, cx: &mut Ctx, out: Outgoing) -> Outgoing {
        let cfg = cx.cfg;
        if cfg.rdb != Rdb::V1 || out.payload == 0 {
            return out;
        }
        let Some(i) = self.rtx.iter().position(|s| s.start == out.seq) else {
            return out;
        };
        let s = &self.rtx[i];
        if s.fin {
            return out;
        }
        let from = s.wire_start().max(self.snd_una);
        let mut end = s.end;
        let limit = Self::rdb_limit(cx);
        let wnd_end = self.snd_una + u64::from(self.snd_wnd);
        for next in self.rtx.iter().skip(i + 1) {
            let new_data = next.end.saturating_sub(end);
            if new_data == 0
                || (end - from) + new_data > limit
                || next.fin
                || s.sacked()
                || next.sacked()
                || end + new_data > wnd_end
            {
                break;
            }
            end = next.end;
        }
        let redundant = (s.start - from) + (end - s.end);
        if redundant == 0 {
            return out;
        }
        cx.stats.rdb_pkts_sent += 1;
        cx.stats.rdb_bytes_sent += redundant;
        Outgoing {
            seq: from,
            payload: (end - from) as u32,
            ..out
        }
    }

    /// Hook in `on_ack`, before acknowledged segments leave the queue: RDBv2's hidden-loss
    /// detection (`rdb_check_rtx_queue_acked`). An ACK ending exactly at a segment sent with
    /// redundant data, with older segments still queued before it, means those older
    /// segments' own packets were lost (their data came in the bundle): each counts as lost.
    #[inline]
    pub(super) fn rdb_hidden_loss(&mut self, cx: &mut Ctx, ack: u64) -> u32 {
        let cfg = cx.cfg;
        if cfg.rdb != Rdb::V2 || ack <= self.snd_una {
            return 0;
        }
        let mut lost = 0u32;
        for (i, s) in self.rtx.iter().enumerate() {
            if s.end > ack {
                break;
            }
            if s.end == ack {
                if s.rdb_start != 0 && i > 0 {
                    lost = i as u32;
                }
                break;
            }
        }
        if lost > 0 {
            cx.stats.rdb_hidden_losses += u64::from(lost);
            self.rdb.loss_pending += lost;
        }
        lost
    }

    /// Hook in `on_ack` where Linux calls the module's `cong_avoid` (`may_cong_avoid`: data
    /// acknowledged and `tcp_may_raise_cwnd`): the minimum srtt, the TFRC loss history and
    /// rate, and the reaction to hidden losses — CWR (`tcp_enter_cwr`) without TFRC, cwnd from
    /// the TFRC rate with it. Returns true when it reacted, so Reno's increase is skipped.
    #[inline]
    pub(super) fn rdb_on_ack(
        &mut self,
        cx: &Ctx,
        lost: u32,
        acked_pkts: u32,
        may_cong_avoid: bool,
    ) -> bool {
        let cfg = cx.cfg;
        let o = cx.o;
        let now = cx.now;
        if cfg.rdb != Rdb::V2 {
            return false;
        }
        let srtt = self.rtt.srtt();
        if let Some(s) = srtt {
            self.rdb.min_srtt = Some(self.rdb.min_srtt.map_or(s, |m| m.min(s)));
        }
        if let (Some(t), Some(s)) = (self.rdb.tfrc.as_mut(), srtt) {
            t.on_ack(now, s, u64::from(acked_pkts), u64::from(lost));
        }
        if self.rdb.loss_pending == 0 || !may_cong_avoid {
            return false;
        }
        self.rdb.loss_pending = 0;
        let ssthresh = self.rdb_ssthresh(cfg).unwrap_or(2);
        if let (Some(t), Some(s)) = (self.rdb.tfrc.as_ref(), srtt) {
            // tcp_rdbcong_avoid_tfrc: no state change, cwnd straight from the rate.
            self.win.ssthresh = ssthresh;
            self.win.cwnd = t.cwnd(s);
            self.win.cnt = 0;
        } else if matches!(self.ca, CaState::Open | CaState::Disorder) {
            // tcp_enter_cwr(sk, 1) → tcp_init_cwnd_reduction; with rate halving off the
            // model drops cwnd to ssthresh at once, as its ECN CWR does.
            self.prior_ssthresh = 0;
            self.undo_marker = None;
            self.win.ssthresh = ssthresh;
            if !cfg.rate_halving {
                self.win.cwnd = self.win.cwnd.min(self.win.ssthresh);
            }
            self.win.cnt = 0;
            self.high_seq = self.snd_nxt;
            self.cwr_pending = o.ecn;
            self.ca = CaState::Cwr;
        }
        true
    }

    /// Hook in `recalc_ssthresh`: under RDBv2 the module's `ssthresh` applies to every loss
    /// (Recovery, RTO, CWR), from cwnd as Linux 3.16's hooks compute it.
    #[inline]
    pub(super) fn rdb_ssthresh(&self, cfg: &TcpConfig) -> Option<u32> {
        if cfg.rdb != Rdb::V2 {
            return None;
        }
        let shift = match cfg.rdb_ssthresh.unwrap_or(RdbSsthresh::Quarter) {
            RdbSsthresh::Quarter => 2,
            RdbSsthresh::Half => 1,
        };
        Some((self.win.cwnd >> shift).max(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpif_limits_at_150_ms() {
        // Extract §3.4: 150/10 = 15 (≤ 14 packets in flight), 150/20 = 7 (integer division).
        let m = Dur::from_millis(150);
        assert_eq!(dpif_limit(m, Dur::from_millis(10)), 15);
        assert_eq!(dpif_limit(m, Dur::from_millis(20)), 7);
        // The kernel's (srtt_us >> 3) / 1000 / itt truncates to ms first: 159.9 ms → 15.
        assert_eq!(
            dpif_limit(Dur::from_micros(159_900), Dur::from_millis(10)),
            15
        );
    }
}
