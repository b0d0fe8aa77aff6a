//! What a connection reports: application events, counters and the congestion-state trace.

use super::*;

/// Why a connection ended without a proper close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// SYN or SYN-ACK retransmissions exhausted.
    HandshakeTimeout,
    /// Data retransmissions exhausted (`retries2`).
    Timeout,
    /// The peer sent a reset.
    Reset,
}

/// What the application sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// This many more bytes were delivered in order.
    Delivered(u64),
    /// The peer's FIN arrived in order: no more data will come.
    PeerFin,
    /// Both directions are closed (TIME-WAIT or CLOSED reached).
    Closed,
    Aborted(AbortReason),
}

/// Per-connection counters, as tcptrace and the seeds count them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Every packet sent (including pure ACKs and SYNs).
    pub pkts_sent: u64,
    /// Segments sent that carry data (first transmissions and retransmissions).
    pub data_pkts_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes_sent: u64,
    /// Data/FIN segments retransmitted.
    pub retransmits: u64,
    /// SYN or SYN-ACK retransmissions.
    pub syn_retransmits: u64,
    /// Retransmission timeouts on data.
    pub rtos: u64,
    /// Entries into fast recovery (fast retransmits).
    pub fast_retransmits: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    pub pkts_rcvd: u64,
    pub data_pkts_rcvd: u64,
    /// Duplicate ACKs received.
    pub dupacks_rcvd: u64,
    /// Data segments received entirely below rcv_nxt (duplicates).
    pub dup_data_pkts_rcvd: u64,
    /// Reductions of cwnd/ssthresh undone (Linux undo: timestamps or D-SACK).
    pub undos: u64,
    /// RTOs that F-RTO declared spurious.
    pub spurious_rtos: u64,
    /// ACKs received with ECE.
    pub ece_rcvd: u64,
    /// cwnd reductions caused by ECE (entries into CWR).
    pub ecn_reductions: u64,
    /// Data segments received with CE.
    pub ce_rcvd: u64,
    /// Data segments received above rcv_nxt.
    pub ooo_pkts_rcvd: u64,
    /// SACK blocks sent (D-SACK blocks included).
    pub sack_blocks_sent: u64,
    pub dsack_blocks_sent: u64,
    /// D-SACK blocks received.
    pub dsacks_rcvd: u64,
    /// Bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// RDB: packets sent with redundant (bundled) data, and those redundant bytes.
    pub rdb_pkts_sent: u64,
    pub rdb_bytes_sent: u64,
    /// RDBv2: segments counted lost by hidden-loss detection.
    pub rdb_hidden_losses: u64,
    /// Tail loss probes sent (new data or the last segment again).
    pub loss_probes: u64,
    /// Recoveries started by early retransmit (also counted in `fast_retransmits`).
    pub early_retransmits: u64,
    /// cwnd reductions after a tail loss probe repaired a loss (Linux
    /// `TCPLossProbeRecovery`).
    pub tlp_recoveries: u64,
    /// Recoveries started by RACK's reordering timer (those started on an ACK count only in
    /// `fast_retransmits`).
    pub rack_recoveries: u64,
}

/// One point of the congestion-state trace, recorded whenever a value changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub time: Time,
    /// Congestion window, in segments.
    pub cwnd: u32,
    /// Slow-start threshold, in segments (`u32::MAX >> 1` means "infinite").
    pub ssthresh: u32,
    pub srtt: Option<Dur>,
    pub rttvar: Dur,
    pub rto: Dur,
    pub ca_state: CaState,
    /// The scoreboard, in segments (Linux `packets_out`, `sacked_out`, `lost_out`,
    /// `retrans_out`); in flight = packets_out + retrans_out - sacked_out - lost_out
    /// (`tcp_packets_in_flight`), which is what cwnd is compared with.
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// The pacing rate in bytes per second (Linux `sk_pacing_rate`) when the sender paces;
    /// `u64::MAX` while it is unlimited.
    pub pacing_rate: Option<u64>,
    /// The congestion-control algorithm's own state, if it has one (BBR's mode).
    pub cc_mode: Option<&'static str>,
}

impl TraceRecord {
    /// Linux `tcp_packets_in_flight` for this scoreboard.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
}

/// The congestion-state trace as it is recorded.
#[derive(Debug)]
pub(super) struct Trace {
    pub(super) records: Vec<TraceRecord>,
    last: Option<TraceRecord>,
    /// Whether the trace is recorded at all (a driver that writes none turns it off).
    pub(super) on: bool,
}

impl Trace {
    pub(super) fn new() -> Trace {
        Trace {
            records: Vec::new(),
            last: None,
            on: true,
        }
    }

    pub(super) fn set_on(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.records = Vec::new();
            self.last = None;
        }
    }

    /// Records `r` unless only its time differs from the last record.
    #[inline]
    pub(super) fn push(&mut self, r: TraceRecord) {
        let same = self
            .last
            .is_some_and(|l| TraceRecord { time: r.time, ..l } == r);
        if !same {
            self.records.push(r);
            self.last = Some(r);
        }
    }
}
