//! Per-connection statistics: the streaming [`Analyzer`] and what it produces, [`ConnStats`].

use crate::capture::{TcpSeg, ACK, FIN, RST, SYN};
use crate::seqspace::SeqSpace;
use lasthop_core::{Dur, FlowKey, Packet, Time};
use rustc_hash::FxHashMap;
use std::net::SocketAddr;

/// Knobs of the inferences that are not tcptrace's (RTO detection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// For the partial-transfer metric (seed 001's "first 10 KB"): the ACK that first covers this
    /// many payload bytes of a direction ends its partial transfer. Default 10 240.
    pub partial_bytes: u64,
    /// A retransmission counts as an RTO when it starts at the cumulative ACK point, at least
    /// this long has passed since the cumulative ACK last advanced (or since the sender started
    /// sending with nothing outstanding), no ACK at all arrived during the last half of this,
    /// and either fewer than 3 duplicate ACKs arrived since the last advance, or that segment was
    /// already retransmitted (failed recovery), or the third of them came at least an RTT (and
    /// this long) before (no fast retransmit followed it). Default 200 ms, Linux's minimum RTO.
    pub rto_gap: Dur,
    /// Every sender runs RACK (RFC 8985; Linux 4.18 and later with SACK): it resends a segment
    /// once a segment sent after it has been SACKed and that one's RTT (and a reordering
    /// window) has passed since the first was sent, from an ACK or, after a silence, from its
    /// reordering timer. A resend of the first unacknowledged segment that RACK explains so is
    /// not an RTO, whatever the silence before it (an RTO comes at least srtt + 200 ms after
    /// the head's last transmission, RACK's timer an RTT and a quarter of the minimum: timing
    /// alone cannot tell them apart). Off by default (a capture does not say its stack); a
    /// run's analysis sets it from its hosts' TCP.
    pub rack: bool,
    /// Every sender sends tail loss probes (Linux 3.10 and later with SACK): in the Open state
    /// (no duplicate ACK nor SACK since the cumulative ACK last advanced, nothing resent) the
    /// first timer is the probe's (`tcp_schedule_loss_probe`: 2·srtt, at most the RTO), which
    /// resends the last segment when there is no new data: with one segment outstanding, the
    /// head, after a silence. That resend is not an RTO; the timeout can only follow it.
    /// Off by default; a run's analysis sets it from its hosts' TCP.
    pub tlp: bool,
    /// Some sender may fast retransmit from a timer a quarter RTT after a duplicate ACK
    /// (Linux 3.5–4.10's delayed early retransmit, `tcp_early_retrans` 2 or 3; removed in 4.11
    /// for RACK). Without it (the default), a head already resent and resent again at least
    /// 1 ms after the last ACK and `rto_gap` after its last transmission is an RTO even with
    /// duplicate ACKs arriving every few tens of ms (a lost retransmission recovered by the
    /// timer; see docs/analysis.md, rule 3); with it, rule 3's `rto_gap / 2` of silence holds.
    pub delayed_er: bool,
}

/// A transmission this long after the last ACK was not that ACK's doing (the stack sends what
/// an ACK allows as it processes it: in a capture within microseconds).
const TIMER_NOT_ACK: Dur = Dur::from_millis(1);

impl Default for Options {
    fn default() -> Self {
        Options {
            partial_bytes: 10_240,
            rto_gap: Dur::from_millis(200),
            rack: false,
            tlp: false,
            delayed_er: false,
        }
    }
}

/// RTT samples (tcptrace's: data segment to the ACK that exactly covers it; Karn's rule).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RttStats {
    pub samples: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u128,
    /// ACKs that exactly covered a retransmitted segment (no sample taken).
    pub ambiguous: u64,
}

impl RttStats {
    fn add(&mut self, ns: u64) {
        if self.samples == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
        self.samples += 1;
    }
    pub fn avg_ns(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum_ns as f64 / self.samples as f64)
    }
}

/// Link drops of one direction's packets, by cause (from the event log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    pub queue: u64,
    /// RED's early drops (cause `red`).
    pub red: u64,
    /// The other AQMs' drops: CoDel's, PIE's and FQ-CoDel's CoDel (causes `codel`, `pie`).
    pub aqm: u64,
    pub error: u64,
    pub mtu: u64,
    /// ECN CE marks set by the queue (not drops, counted alongside).
    pub marks: u64,
}

impl Drops {
    pub fn total(&self) -> u64 {
        self.queue + self.red + self.aqm + self.error + self.mtu
    }
    pub(crate) fn add(&mut self, o: &Drops) {
        self.queue += o.queue;
        self.red += o.red;
        self.aqm += o.aqm;
        self.error += o.error;
        self.mtu += o.mtu;
        self.marks += o.marks;
    }
}

/// Statistics of one direction of a connection: the segments sent that way, and the
/// acknowledgement feedback *for those segments* (so `dupacks` of the client→server direction
/// are duplicate ACKs sent by the server), as in tcptrace's per-direction columns. SACK counters
/// are for the blocks carried by this direction's packets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirStats {
    pub packets: u64,
    /// Packets with the ACK flag.
    pub ack_pkts: u64,
    /// ACK packets without data, SYN, FIN or RST.
    pub pure_acks: u64,
    /// Segments with payload, retransmissions included (tcptrace "actual data pkts").
    pub data_pkts: u64,
    /// Payload bytes of those (tcptrace "actual data bytes").
    pub data_bytes: u64,
    /// Payload bytes sent for the first time (tcptrace "unique bytes sent").
    pub unique_bytes: u64,
    /// Segments carrying bytes already sent, SYN and FIN included (tcptrace "rexmt data pkts").
    pub rexmt_pkts: u64,
    /// The already-sent bytes in those, SYN and FIN counting one each ("rexmt data bytes").
    pub rexmt_bytes: u64,
    /// Segments that started before, and ended before the end of, a range already sent.
    pub out_of_order: u64,
    /// Segments sent while the peer's last advertised window was zero (not rexmt-checked).
    pub zwnd_probes: u64,
    pub syns: u64,
    pub fins: u64,
    pub rsts: u64,
    pub max_seg: u32,
    /// Duplicate ACKs received for this direction's data (tcptrace rule).
    pub dupacks: u64,
    /// Triple duplicate ACKs received for this direction's data (tcptrace rule).
    pub triple_dupacks: u64,
    /// Retransmissions inferred to be timer-driven (see [`Options::rto_gap`]).
    pub rtos: u64,
    /// The wire sequence numbers of those retransmissions, in order (to tell spurious ones).
    pub rto_seqs: Vec<u32>,
    /// Retransmissions sent after at least 3 duplicate ACKs since the last ACK advance.
    pub fast_rexmts: u64,
    /// Packets of this direction carrying SACK blocks (tcptrace "sack pkts sent").
    pub sack_pkts: u64,
    /// SACK blocks carried, D-SACK blocks included.
    pub sack_blocks: u64,
    /// D-SACK blocks carried (RFC 2883: the first block lies at or below the cumulative ACK,
    /// or inside the second block). At most one per packet.
    pub dsack_blocks: u64,
    pub rtt: RttStats,
    pub first: Option<Time>,
    pub last: Option<Time>,
    /// When an ACK first covered [`Options::partial_bytes`] payload bytes of this direction.
    pub partial_acked: Option<Time>,
    /// When this direction's first segment with payload was sent (seen).
    pub first_data: Option<Time>,
    /// Retransmissions (as `rexmt_pkts` counts them) before `partial_acked`: seed 001's
    /// RxMin/RxMax of its "first 10 KB" tables.
    pub partial_rexmt_pkts: u64,
    /// From the event log, when one was joined.
    pub drops: Drops,
    /// Retransmissions of this direction whose earlier copy the link delivered (event log,
    /// `None` when no log with `arrive` and `release` rows was joined).
    pub spurious_rexmt: Option<u64>,
    /// Of the timer-driven retransmissions (`rtos`), those whose earlier copy the link
    /// delivered: spurious timeouts (seed 000's r6 finding). Same condition as above.
    pub spurious_rtos: Option<u64>,
}

/// Which way the data of a connection went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataDir {
    ClientToServer,
    ServerToClient,
}

impl DataDir {
    pub fn name(self) -> &'static str {
        match self {
            DataDir::ClientToServer => "c2s",
            DataDir::ServerToClient => "s2c",
        }
    }
}

/// One TCP connection, with per-direction statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnStats {
    /// 1-based, in the order of each connection's first packet.
    pub id: usize,
    /// The sender of the first SYN (without ACK); without one, the receiver of the first SYN-ACK,
    /// or else the sender of the connection's first packet.
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Whether the client's SYN was seen.
    pub syn_seen: bool,
    /// The client's initial sequence number, when its SYN was seen (it tells connections on a
    /// reused 4-tuple apart, and pairs the two sides' views in [`crate::merge_sides`]).
    pub client_isn: Option<u32>,
    /// The client's first SYN, else the connection's first packet.
    pub start: Time,
    /// The first server→client ACK covering the client's FIN, if seen.
    pub fin_acked: Option<Time>,
    /// The last server→client ACK covering the client's FIN, if seen (later than
    /// `fin_acked` when the client retransmitted its FIN: the server's last ACK sent, seed 002's
    /// server-side end).
    pub fin_acked_last: Option<Time>,
    /// Time of the connection's first and last packet.
    pub first: Time,
    pub last: Time,
    pub c2s: DirStats,
    pub s2c: DirStats,
    /// Whether an event log was joined (drops are meaningful).
    pub events_joined: bool,
    /// The client capture's ConnStats supplied start/end and the server's the counts.
    pub merged: bool,
    /// The byte count of the partial-transfer metric ([`Options::partial_bytes`]).
    pub partial_bytes: u64,
}

impl ConnStats {
    /// `fin_acked`, or the last packet when the client's FIN was never acknowledged.
    pub fn end(&self) -> Time {
        self.fin_acked.unwrap_or(self.last)
    }
    /// Whether the connection ran from the client's SYN to the ACK of the client's FIN.
    pub fn complete(&self) -> bool {
        self.syn_seen && self.fin_acked.is_some()
    }
    pub fn elapsed(&self) -> Dur {
        self.end().saturating_since(self.start)
    }
    /// The direction that carried more unique payload bytes (server→client on a tie).
    pub fn data_dir(&self) -> DataDir {
        if self.c2s.unique_bytes > self.s2c.unique_bytes {
            DataDir::ClientToServer
        } else {
            DataDir::ServerToClient
        }
    }
    /// Statistics of the data direction.
    pub fn data(&self) -> &DirStats {
        match self.data_dir() {
            DataDir::ClientToServer => &self.c2s,
            DataDir::ServerToClient => &self.s2c,
        }
    }
    /// Statistics of the acknowledging direction.
    pub fn acks(&self) -> &DirStats {
        match self.data_dir() {
            DataDir::ClientToServer => &self.s2c,
            DataDir::ServerToClient => &self.c2s,
        }
    }
    /// Unique payload bytes of the data direction.
    pub fn bytes(&self) -> u64 {
        self.data().unique_bytes
    }
    /// `bytes / elapsed` in bytes per second (0 when elapsed is 0).
    pub fn throughput_bytes_per_s(&self) -> f64 {
        let e = self.elapsed().as_secs_f64();
        if e > 0.0 {
            self.bytes() as f64 / e
        } else {
            0.0
        }
    }
    /// The partial transfer of the data direction: from `start` to the first ACK covering
    /// `partial_bytes` (seed 001's "first 10 KB"), if it happened.
    pub fn partial_elapsed(&self) -> Option<Dur> {
        self.data()
            .partial_acked
            .map(|t| t.saturating_since(self.start))
    }
    /// `partial_bytes` over the time from the data direction's first data segment to the ACK
    /// covering `partial_bytes`, in bytes per second: seed 001's throughput of the first 10 KB
    /// (Tables 6, 8, 10 and 13), which starts at "the first packet transmitted" with data, while
    /// its appendix times ([`ConnStats::partial_elapsed`]) start at the SYN. Its tables show it:
    /// 10 240 bytes over the appendix's median time less the 0.485 s handshake give the
    /// published throughputs within 0.2 % (buffer 20: 10 240 / (40.77 − 0.485) = 254.2 against
    /// 254.48; buffer 3: 490.5 against 491.55).
    pub fn partial_throughput_bytes_per_s(&self) -> Option<f64> {
        let d = self.data();
        let e = d
            .partial_acked?
            .saturating_since(d.first_data?)
            .as_secs_f64();
        (e > 0.0).then(|| self.partial_bytes as f64 / e)
    }
    /// Drops of both directions.
    pub fn drops(&self) -> Drops {
        let mut d = self.c2s.drops;
        d.add(&self.s2c.drops);
        d
    }
    /// The client→server flow key.
    pub fn flow(&self) -> FlowKey {
        FlowKey {
            proto: 6,
            src: self.client.ip(),
            dst: self.server.ip(),
            sport: self.client.port(),
            dport: self.server.port(),
        }
    }
}

/// Sequence-space state of one direction.
#[derive(Debug, Default)]
struct DirState {
    space: SeqSpace,
    /// Highest unwrapped sequence number seen (end of data), the reference for unwrapping.
    top: Option<u64>,
    /// tcptrace's `win_last`: the (scaled) window of this direction's last packet, 0 for a
    /// packet with neither ACK nor SYN.
    win_last: u32,
    /// tcptrace's `ack`: the ACK number of this direction's last ACK (or the peer's SYN
    /// sequence number).
    ack_field: u32,
    /// Window scale from this direction's SYN.
    wscale: Option<u8>,
    /// tcptrace's `owin_tot > 0`: this direction has had data outstanding.
    owin_positive: bool,
    /// Highest cumulative ACK received for this direction's data (unwrapped).
    snd_una: Option<u64>,
    /// When the cumulative ACK last advanced, or the sender last started from nothing
    /// outstanding.
    last_progress: Option<Time>,
    /// Last ACK of any kind received for this direction.
    last_ack: Option<Time>,
    dupacks_since_progress: u32,
    /// When the third duplicate ACK since the last advance arrived: a fast retransmit is due
    /// then (or one pacing interval later).
    third_dupack: Option<Time>,
    /// Smoothed RTT of this direction's samples (RFC 6298's 1/8 gain), 0 before the first.
    srtt_ns: u64,
    /// RACK's view of this direction's data: when the most recently sent segment that a SACK
    /// block has covered was (last) sent and its last byte (sent at the same instant, the higher
    /// sequence is the later: `tcp_rack_sent_after`), and its RTT (to that SACK).
    rack_xmit: Option<(Time, u64)>,
    rack_rtt: Dur,
    /// A SACK block arrived since the cumulative ACK last advanced.
    sacked_since_progress: bool,
    /// A tail loss probe (or what the inference took for one) was sent since then.
    probed: bool,
    /// The segment at the cumulative ACK point has been retransmitted (before or since the ACK
    /// reached it).
    una_rexmitted: bool,
    /// The highest sequence sent (`top`) when the first retransmission since the cumulative ACK
    /// last passed it left, other than a tail loss probe: until the ACK reaches it the sender is
    /// in Recovery or Loss (Linux `high_seq`), where it sends no loss probe.
    recovery_high: Option<u64>,
    /// Retransmitted ranges above the cumulative ACK point (start, end), so that an ACK reaching
    /// a segment already retransmitted knows it: a timeout then resends a lost retransmission
    /// after duplicate ACKs.
    rexmitted: Vec<(u64, u64)>,
    /// Unwrapped sequence number of the FIN.
    fin_seq: Option<u64>,
    isn: Option<u32>,
    /// Unwrapped sequence number of the first payload byte (after the SYN, or the first data).
    data_base: Option<u64>,
}

const WRAP: u64 = 1 << 32;

impl DirState {
    /// Maps a 32-bit sequence number of this direction's space to 64 bits, nearest `top`.
    fn unwrap(&self, s: u32) -> u64 {
        let Some(r) = self.top else {
            return WRAP + u64::from(s);
        };
        let cand = (r & !(WRAP - 1)) | u64::from(s);
        // The usual case: within half the space of `top` (neither neighbour is strictly nearer).
        if cand.abs_diff(r) <= WRAP / 2 {
            return cand;
        }
        let up = cand + WRAP;
        let down = cand.checked_sub(WRAP);
        let mut best = cand;
        let dist = |x: u64| x.abs_diff(r);
        if dist(up) < dist(best) {
            best = up;
        }
        if let Some(d) = down {
            if dist(d) < dist(best) {
                best = d;
            }
        }
        best
    }
}

struct Conn {
    /// Which segment fed to the analyser first opened it (orders the connections of two
    /// analysers that shared a capture's connections, see [`Analyzer::finish_numbered`]).
    order: u64,
    stats: ConnStats,
    c2s: DirState,
    s2c: DirState,
}

/// Streaming analyser: feed it TCP segments in time order, then [`Analyzer::finish`].
///
/// The simulator and the emulator can feed packets directly with [`Analyzer::packet`] instead of
/// writing and re-reading a capture.
pub struct Analyzer {
    opts: Options,
    conns: Vec<Conn>,
    /// Flow key of either direction → (index of its latest connection, whether the key is the
    /// client→server direction). One lookup per packet, with a fast deterministic hash: this
    /// map is the analyser's hottest spot.
    by_key: FxHashMap<FlowKey, (usize, bool)>,
    /// The last entry found in `by_key`: packets of a connection come in runs, and both of its
    /// directions map to the same connection (see [`Analyzer::cached`]).
    last: Option<(FlowKey, usize, bool)>,
    /// [`Analyzer::segment_tuple`]'s table of 4-tuples.
    by_tuple: Vec<u64>,
    /// Packets that were not TCP.
    pub other_packets: u64,
    /// The number of the next segment (see [`Analyzer::segment_nth`]).
    next: u64,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new(Options::default())
    }
}

impl Analyzer {
    pub fn new(opts: Options) -> Analyzer {
        Analyzer {
            opts,
            conns: Vec::new(),
            by_key: FxHashMap::default(),
            last: None,
            by_tuple: Vec::new(),
            other_packets: 0,
            next: 0,
        }
    }

    /// Feeds one IP packet (a `lasthop_core::Packet`, virtual payload allowed) seen at `at`.
    pub fn packet(&mut self, at: Time, p: &Packet) {
        match crate::capture::parse_tcp(at, &p.data, Some(p.wire_len)) {
            Some(seg) => self.segment(&seg),
            None => self.other_packets += 1,
        }
    }

    /// `by_key`'s entry for `k`, if it is the last one found or its reverse. Both directions of a
    /// 4-tuple are always inserted together, pointing at the same connection with opposite
    /// flags (a key that is its own reverse matches the first test).
    fn cached(&self, k: &FlowKey) -> Option<(usize, bool)> {
        let (c, i, fc) = self.last.as_ref()?;
        if k.proto != c.proto {
            return None;
        }
        if k.sport == c.sport && k.dport == c.dport && k.src == c.src && k.dst == c.dst {
            return Some((*i, *fc));
        }
        if k.sport == c.dport && k.dport == c.sport && k.src == c.dst && k.dst == c.src {
            return Some((*i, !*fc));
        }
        None
    }

    fn find(&mut self, seg: &TcpSeg, n: u64) -> (usize, bool) {
        let fwd = &seg.flow;
        let found = match self.cached(fwd) {
            Some(hit) => Some(hit),
            None => {
                let found = self.by_key.get(fwd).copied();
                if let Some((i, fc)) = found {
                    self.last = Some((*fwd, i, fc));
                }
                found
            }
        };
        if let Some((i, from_client)) = found {
            let c = &self.conns[i];
            // A new SYN with another ISN on the same 4-tuple starts a new connection.
            let new_syn = seg.has(SYN) && !seg.has(ACK);
            let stale = new_syn && from_client && c.c2s.isn.is_some_and(|isn| isn != seg.seq);
            if !stale {
                return (i, from_client);
            }
        }
        let (i, from_client, key) = self.new_conn(fwd, seg, n);
        // Both directions point at the new connection (replacing any older one on the 4-tuple).
        self.by_key.insert(key, (i, true));
        self.by_key.insert(key.reversed(), (i, false));
        self.last = None;
        (i, from_client)
    }

    /// Opens a connection for `seg` (of flow `fwd`, the `n`th segment); returns its index,
    /// whether `seg` is from its client, and its client→server key.
    fn new_conn(&mut self, fwd: &FlowKey, seg: &TcpSeg, n: u64) -> (usize, bool, FlowKey) {
        // A new connection. The client is the SYN sender; the receiver of a SYN-ACK; or else the
        // sender of this first packet.
        let from_client = !(seg.has(SYN) && seg.has(ACK));
        let rev = fwd.reversed();
        let key = if from_client { *fwd } else { rev };
        let id = self.conns.len() + 1;
        let sock = |ip, port| SocketAddr::new(ip, port);
        self.conns.push(Conn {
            order: n,
            stats: ConnStats {
                id,
                client: sock(key.src, key.sport),
                server: sock(key.dst, key.dport),
                syn_seen: false,
                client_isn: None,
                start: seg.time,
                fin_acked: None,
                fin_acked_last: None,
                first: seg.time,
                last: seg.time,
                c2s: DirStats::default(),
                s2c: DirStats::default(),
                events_joined: false,
                merged: false,
                partial_bytes: self.opts.partial_bytes,
            },
            c2s: DirState::default(),
            s2c: DirState::default(),
        });
        (id - 1, from_client, key)
    }

    /// [`Analyzer::segment_nth`] for a segment whose 4-tuple was numbered beforehand
    /// (`crate::split`): `tuple` is the 4-tuple's number, `key` the 4-tuple in the numbering's
    /// orientation, and `canon` tells whether `seg` goes that way (its `flow` is not read). A
    /// table indexed by the number replaces the flow-key hash map; the connections are those
    /// `segment_nth` finds (an analyser uses one of the two ways only). `n`, the segment's
    /// number, is needed only when it opens a connection: it is given for every segment that
    /// can (a SYN, or the first segment of its 4-tuple in a chunk).
    #[inline(always)]
    pub(crate) fn segment_tuple(
        &mut self,
        tuple: u32,
        canon: bool,
        key: &FlowKey,
        seg: &TcpSeg,
        n: Option<u64>,
    ) {
        let t = tuple as usize;
        if t >= self.by_tuple.len() {
            self.by_tuple.resize(t + 1, 0);
        }
        // `by_tuple[t]`: 0 for none, else (index + 1) << 1 | whether `key` is the
        // client→server direction.
        let e = self.by_tuple[t];
        let mut found = None;
        if e != 0 {
            let (i, from_client) = ((e >> 1) as usize - 1, (e & 1 == 1) == canon);
            let c = &self.conns[i];
            // A new SYN with another ISN on the same 4-tuple starts a new connection.
            let new_syn = seg.has(SYN) && !seg.has(ACK);
            let stale = new_syn && from_client && c.c2s.isn.is_some_and(|isn| isn != seg.seq);
            if !stale {
                found = Some((i, from_client));
            }
        }
        let (i, from_client) = match found {
            Some(hit) => hit,
            None => {
                let k = key;
                let fwd = if canon { *k } else { k.reversed() };
                let n = n.expect("the number of a segment that opens a connection");
                let (i, from_client, key) = self.new_conn(&fwd, seg, n);
                // As `find`'s two insertions: the later, reverse one wins for a 4-tuple that
                // is its own reverse.
                let key_is_canon = key == *k && key != key.reversed();
                self.by_tuple[t] = ((i as u64 + 1) << 1) | u64::from(key_is_canon);
                (i, from_client)
            }
        };
        self.apply(i, from_client, seg);
    }

    /// Feeds one parsed TCP segment. The order of the steps follows tcptrace's, on which the
    /// counters depend.
    pub fn segment(&mut self, seg: &TcpSeg) {
        self.segment_nth(seg, self.next);
    }

    /// [`Analyzer::segment`] for the `n`th segment (or record) of a capture, `n` growing: two
    /// analysers can share a capture's connections (each fed every segment of its own ones,
    /// every connection's segments to the same one) and [`merge_numbered`] their results.
    pub(crate) fn segment_nth(&mut self, seg: &TcpSeg, n: u64) {
        self.next = n + 1;
        let (i, from_client) = self.find(seg, n);
        self.apply(i, from_client, seg);
    }

    /// The tcptrace rules for `seg` of connection `i` (`from_client`: its direction).
    #[inline(always)]
    fn apply(&mut self, i: usize, from_client: bool, seg: &TcpSeg) {
        let rto_gap = self.opts.rto_gap;
        let rack = self.opts.rack;
        let tlp = self.opts.tlp;
        let delayed_er = self.opts.delayed_er;
        let partial_bytes = self.opts.partial_bytes;
        let conn = &mut self.conns[i];
        let now = seg.time;
        // The flags, read once (the stores below could alias `seg` for all the compiler knows).
        let (syn, ack_flag, fin, rst) = (seg.has(SYN), seg.has(ACK), seg.has(FIN), seg.has(RST));
        let st = &mut conn.stats;
        if now < st.first {
            st.first = now;
        }
        if now > st.last {
            st.last = now;
        }
        if from_client && syn && !ack_flag && !st.syn_seen {
            st.syn_seen = true;
            st.start = now;
            st.client_isn = Some(seg.seq);
        }
        let (this, other, ts, os) = if from_client {
            (&mut conn.c2s, &mut conn.s2c, &mut st.c2s, &mut st.s2c)
        } else {
            (&mut conn.s2c, &mut conn.c2s, &mut st.s2c, &mut st.c2s)
        };

        ts.packets += 1;
        ts.first.get_or_insert(now);
        ts.last = Some(now);
        let len = seg.payload_len;
        if syn {
            ts.syns += 1;
            this.isn.get_or_insert(seg.seq);
            // tcptrace: the peer's "last ACK" becomes our SYN's sequence number
            other.ack_field = seg.seq;
            if let Some(ws) = seg.wscale {
                this.wscale = Some(ws);
            }
        }
        if rst {
            ts.rsts += 1;
        }
        let eff_win = if ack_flag || syn {
            let w = u32::from(seg.window);
            match (this.wscale, other.wscale) {
                (Some(a), Some(_)) if !syn => w << a.min(14),
                _ => w,
            }
        } else {
            0
        };
        let start = this.unwrap(seg.seq);
        if this.data_base.is_none() && (syn || len > 0) {
            this.data_base = Some(start + u64::from(syn));
        }
        if fin {
            ts.fins += 1;
            this.fin_seq = Some(start + u64::from(len));
        }
        if len > 0 {
            ts.first_data.get_or_insert(now);
            ts.data_pkts += 1;
            ts.data_bytes += u64::from(len);
            ts.max_seg = ts.max_seg.max(len);
        }

        // Retransmissions (tcptrace's rule), unique bytes, RTO inference.
        let mut rexlen = 0u64;
        let mut head_sent = None;
        let mut ooo = false;
        if syn || fin || len > 0 {
            let mut span = u64::from(len) + u64::from(syn) + u64::from(fin);
            let probe = other.win_last == 0 && os.packets > 0;
            if probe {
                ts.zwnd_probes += 1;
            } else {
                // Nothing outstanding before this segment: the retransmission timer starts now.
                let idle = match (this.top, this.snd_una) {
                    (None, _) => true,
                    (Some(top), Some(una)) => una >= top,
                    (Some(_), None) => false,
                };
                head_sent = this.space.sent_at(start);
                let (r, o) = this.space.send(start, span, now);
                rexlen = r;
                ooo = o;
                if ooo {
                    ts.out_of_order += 1;
                }
                if idle && rexlen == 0 {
                    this.last_progress = Some(now);
                }
            }
            let mut counted = rexlen as i64;
            if syn {
                span -= 1;
                if ts.syns > 1 {
                    counted -= 1;
                }
            }
            if fin {
                span -= 1;
                if ts.fins > 1 {
                    counted -= 1;
                }
            }
            if !probe && counted < span as i64 {
                ts.unique_bytes += (span as i64 - counted) as u64;
            }
            if rexlen > 0 {
                ts.rexmt_pkts += 1;
                if ts.partial_acked.is_none() {
                    ts.partial_rexmt_pkts += 1;
                }
                ts.rexmt_bytes += rexlen;
                let since = |t: Option<Time>| t.map_or(Dur::MAX, |t| now.saturating_since(t));
                // A timeout retransmits from the cumulative ACK point (a tail loss probe
                // resends the last segment instead), after a silence.
                let from_una = this.snd_una.is_none_or(|u| start == u);
                // A resend of a head already resent, away from any ACK (a sender's reaction to
                // an ACK leaves with it) and at least `rto_gap` after the head last left: no
                // recovery sends it but a timer's (RACK's is rule 5's; a delayed early
                // retransmit's, RTT/4 after a duplicate ACK, is why `delayed_er` turns this off).
                let lost_rexmit = !delayed_er
                    && this.una_rexmitted
                    && since(this.last_ack) >= TIMER_NOT_ACK
                    && since(head_sent) >= rto_gap;
                let timed_out = from_una
                    && since(this.last_progress) >= rto_gap
                    && (since(this.last_ack).0 >= rto_gap.0 / 2 || lost_rexmit);
                // Fast recovery explains a retransmission after 3 dupacks, unless it resends the
                // first unacknowledged segment a second time without progress (the recovery
                // failed and the timer fired).
                let fast = this.dupacks_since_progress >= 3;
                // ... or the sender let the third duplicate ACK pass without a fast retransmit
                // (a dupthresh raised by reordering, or no room in the window) and the timer
                // resent the head at least an RTT (and `rto_gap`) later. A fast retransmit
                // comes at that ACK or, paced, within one pacing interval of the last send:
                // less than an RTT, since Linux paces at 1.2-2 cwnd per srtt (BBR: its gain
                // times the bottleneck rate, which the RTT's own transmission time bounds).
                let wait = Dur(rto_gap.0.max(this.srtt_ns));
                let stalled = since(this.third_dupack) >= wait;
                // RACK could have resent it: a segment sent later was SACKed, and that one's
                // RTT has passed since this one was sent (its reordering window is >= 0).
                let rack_lost = rack
                    && head_sent.is_some_and(|h| {
                        this.rack_xmit
                            .is_some_and(|(x, seq)| x > h || (x == h && seq >= start))
                            && now >= h + this.rack_rtt
                    });
                // The loss probe of the only segment outstanding, the first timer in the Open
                // state (with more out, a probe of new data cannot be told from the
                // application's: those resends stay RTOs).
                let open = this.dupacks_since_progress == 0
                    && !this.sacked_since_progress
                    && !this.una_rexmitted
                    && this.rexmitted.is_empty()
                    && this.recovery_high.is_none();
                let only = this
                    .top
                    .is_some_and(|t| start + u64::from(len) + u64::from(fin) >= t);
                let probe = tlp && !this.probed && open && from_una && only && len > 0;
                if probe || !from_una {
                    this.probed = true;
                }
                if !probe && this.recovery_high.is_none() {
                    this.recovery_high = this.top;
                }
                if timed_out && (!fast || this.una_rexmitted || stalled) && !rack_lost && !probe {
                    ts.rtos += 1;
                    ts.rto_seqs.push(seg.seq);
                } else if fast {
                    ts.fast_rexmts += 1;
                }
                if from_una {
                    this.una_rexmitted = true;
                }
                this.rexmitted.push((start, start + rexlen.max(1)));
            }
            let end = start + u64::from(len) + u64::from(syn) + u64::from(fin);
            if this.top.is_none_or(|t| end > t) {
                this.top = Some(end);
            }
        }

        // ACK processing against the other direction's sequence space.
        if ack_flag {
            let ack = other.unwrap(seg.ack);
            let dup_ok =
                seg.ack == this.ack_field && eff_win == this.win_last && other.owin_positive;
            let out = other.space.ack(ack, len, dup_ok, now);
            if out.dupack {
                os.dupacks += 1;
            }
            if out.triple {
                os.triple_dupacks += 1;
            }
            if let Some(rtt) = out.rtt {
                os.rtt.add(rtt);
                other.srtt_ns = if other.srtt_ns == 0 {
                    rtt
                } else {
                    (7 * other.srtt_ns + rtt) / 8
                };
            }
            if out.ambiguous {
                os.rtt.ambiguous += 1;
            }
            // Only ACKs of data actually sent count as progress.
            let sent = other.top.is_some_and(|t| ack <= t);
            if sent && other.snd_una.is_none_or(|u| ack > u) {
                other.snd_una = Some(ack);
                other.last_progress = Some(now);
                other.dupacks_since_progress = 0;
                other.third_dupack = None;
                other.sacked_since_progress = false;
                other.probed = false;
                if other.recovery_high.is_some_and(|h| ack >= h) {
                    other.recovery_high = None;
                }
                other.rexmitted.retain(|&(_, e)| e > ack);
                other.una_rexmitted = other.rexmitted.iter().any(|&(b, e)| b <= ack && ack < e);
            } else if out.dupack {
                other.dupacks_since_progress += 1;
                if other.dupacks_since_progress == 3 {
                    other.third_dupack = Some(now);
                }
            }
            other.last_ack = Some(now);
            if os.partial_acked.is_none()
                && sent
                && other
                    .data_base
                    .is_some_and(|b| ack.saturating_sub(b) >= partial_bytes)
            {
                os.partial_acked = Some(now);
            }
            // The end of the connection: the server acknowledges the client's FIN.
            if !from_client {
                if let Some(fin) = other.fin_seq {
                    if ack > fin {
                        st.fin_acked.get_or_insert(now);
                        st.fin_acked_last = Some(now);
                    }
                }
            }
        }

        // tcptrace stops here for resets: no window, ACK, SACK or outstanding-data bookkeeping.
        if rst {
            if ack_flag {
                ts.ack_pkts += 1;
            }
            return;
        }
        this.win_last = eff_win;
        if ack_flag {
            ts.ack_pkts += 1;
            if len == 0 && !syn && !fin {
                ts.pure_acks += 1;
            }
            // SACK blocks carried by this packet.
            if seg.sack_count > 0 {
                ts.sack_pkts += 1;
                ts.sack_blocks += u64::from(seg.sack_count);
                let b = seg.sacks();
                let le = |a: u32, b: u32| (b.wrapping_sub(a) as i32) >= 0;
                let below = le(b[0].1, seg.ack);
                let inside = b.len() > 1 && le(b[1].0, b[0].0) && le(b[0].1, b[1].1);
                if below || inside {
                    ts.dsack_blocks += 1;
                }
                // RACK's most recently sent delivered segment, from the blocks' last bytes.
                for &(_, end) in &b[usize::from(below || inside)..] {
                    other.sacked_since_progress = true;
                    let last = other.unwrap(end).saturating_sub(1);
                    if let Some(x) = other.space.sent_at(last) {
                        if other.rack_xmit.is_none_or(|r| (x, last) > r) {
                            other.rack_xmit = Some((x, last));
                            other.rack_rtt = now.saturating_since(x);
                        }
                    }
                }
            }
            this.ack_field = seg.ack;
        }
        // tcptrace's outstanding-window sample, which gates duplicate ACKs for this direction
        // (only its first positive value matters: `owin_positive` is never reset).
        if !this.owin_positive && !syn && !ooo && rexlen == 0 {
            let end = u64::from(seg.seq) + u64::from(len);
            let peer_ack = u64::from(other.ack_field);
            let owin = if peer_ack == 0 {
                u64::from(len)
            } else {
                end.wrapping_sub(peer_ack - 1)
            };
            if owin != 0 {
                this.owin_positive = true;
            }
        }
    }

    /// The statistics of every connection, in order of first packet.
    pub fn finish(self) -> Vec<ConnStats> {
        self.conns.into_iter().map(|c| c.stats).collect()
    }

    /// [`Analyzer::finish`], each connection with the number of the segment that opened it.
    pub(crate) fn finish_numbered(self) -> Vec<(u64, ConnStats)> {
        self.conns.into_iter().map(|c| (c.order, c.stats)).collect()
    }
}

/// The connections of analysers that shared a capture's connections, as one analyser would
/// have given them: in the order of the segments that opened them, numbered from 1.
pub(crate) fn merge_numbered(parts: Vec<Vec<(u64, ConnStats)>>) -> Vec<ConnStats> {
    let mut all: Vec<(u64, ConnStats)> = parts.into_iter().flatten().collect();
    all.sort_by_key(|(n, _)| *n);
    all.into_iter()
        .enumerate()
        .map(|(i, (_, mut c))| {
            c.id = i + 1;
            c
        })
        .collect()
}

/// Which of two analysers a segment's connection goes to: the same for both directions of a
/// 4-tuple (a symmetric mix of addresses and ports), so every connection, and every
/// connection reusing its 4-tuple, goes to one of them.
pub(crate) fn shard_of(k: &FlowKey) -> bool {
    let ip = |a: std::net::IpAddr| match a {
        std::net::IpAddr::V4(a) => u32::from(a),
        std::net::IpAddr::V6(a) => {
            let o = a.octets();
            u32::from_be_bytes([o[12], o[13], o[14], o[15]])
                ^ u32::from_be_bytes([o[8], o[9], o[10], o[11]])
        }
    };
    shard_mix(ip(k.src), ip(k.dst), k.sport, k.dport)
}

/// [`shard_of`] from the addresses (IPv4's as numbers) and ports.
#[inline(always)]
pub(crate) fn shard_mix(src: u32, dst: u32, sport: u16, dport: u16) -> bool {
    let h = src ^ dst ^ u32::from(sport ^ dport);
    (h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)).count_ones() & 1 == 1
}
