//! Thin-stream analysis as seed 003's analyseTCP did it (extract §4.3–4.4): per stream (the
//! data direction of a TCP connection) the ACK latency of every byte range as first sent, from
//! the data sender's capture, and the packet and byte counters of the seed's tables
//! (retransmissions, redundant data bundling, redundant bytes, duplicate ACKs, ITT, payload per
//! packet); with the receiver's capture too, exact packet and byte loss, RDB hits and misses,
//! throughput and goodput. Definitions are in `docs/analysis.md` (*Thin streams*).
//!
//! Everything comes from sequence numbers and lengths (the IP length field), never from payload
//! bytes: the simulator's captures carry virtual payload.

use crate::capture::{TcpSeg, ACK, FIN, RST, SYN};
use crate::Error;
use lasthop_core::FlowKey;
use rustc_hash::FxHashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;

/// One TCP segment of a capture as the stream analysis keeps it (24 bytes).
#[derive(Clone, Copy, Debug)]
struct Rec {
    t: u64,
    seq: u32,
    ack: u32,
    len: u32,
    /// The IP datagram's length (headers included).
    ip_len: u32,
    win: u16,
    flags: u8,
}

/// The TCP segments of one capture, by direction, in capture order.
#[derive(Debug, Default)]
pub struct CaptureLog {
    by_dir: FxHashMap<FlowKey, Vec<Rec>>,
}

impl CaptureLog {
    /// Keeps `seg`; `ip_len` is its IP datagram's length (headers included).
    pub fn push(&mut self, seg: &TcpSeg, ip_len: u32) {
        let r = Rec {
            t: seg.time.0,
            seq: seg.seq,
            ack: seg.ack,
            len: seg.payload_len,
            ip_len,
            win: seg.window,
            flags: seg.flags,
        };
        self.by_dir.entry(seg.flow).or_default().push(r);
    }
}

/// The length of an IP datagram from its header (IPv4 total length, IPv6 40 + payload length),
/// or `wire` when the field is 0 (segmentation offload).
pub fn ip_datagram_len(ip: &[u8], wire: u32) -> u32 {
    let field = match ip.first().map(|b| b >> 4) {
        Some(4) if ip.len() >= 4 => u32::from(u16::from_be_bytes([ip[2], ip[3]])),
        Some(6) if ip.len() >= 6 => match u16::from_be_bytes([ip[4], ip[5]]) {
            0 => 0,
            n => 40 + u32::from(n),
        },
        _ => 0,
    };
    if field == 0 {
        wire
    } else {
        field
    }
}

/// ACK latencies of a stream's byte ranges: count, exact sum, minimum and maximum, and the
/// histogram at 1 ms resolution (`(ms, count)` for each non-empty millisecond, ascending; a
/// latency of 150.7 ms counts in 150, as analyseTCP printed whole milliseconds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latency {
    pub n: u64,
    pub sum_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
    pub hist: Vec<(u32, u64)>,
}

impl Latency {
    fn of(mut ms_ns: Vec<u64>) -> Latency {
        if ms_ns.is_empty() {
            return Latency::default();
        }
        ms_ns.sort_unstable();
        let mut hist: Vec<(u32, u64)> = vec![];
        for &ns in &ms_ns {
            let ms = (ns / 1_000_000).min(u64::from(u32::MAX)) as u32;
            match hist.last_mut() {
                Some((m, c)) if *m == ms => *c += 1,
                _ => hist.push((ms, 1)),
            }
        }
        Latency {
            n: ms_ns.len() as u64,
            sum_ns: ms_ns.iter().map(|&x| u128::from(x)).sum(),
            min_ns: ms_ns[0],
            max_ns: *ms_ns.last().unwrap(),
            hist,
        }
    }
    /// Mean latency in ms.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_ns as f64 / self.n as f64 / 1e6)
    }
}

/// The nearest-rank percentile (`p` in 0..=100) of a 1 ms histogram (`(ms, count)` ascending):
/// the smallest ms whose cumulative count reaches ⌈p/100 · n⌉ (at least the first sample).
/// `None` for an empty histogram.
pub fn hist_percentile(hist: &[(u32, u64)], p: f64) -> Option<f64> {
    let n: u64 = hist.iter().map(|h| h.1).sum();
    if n == 0 {
        return None;
    }
    // The rank in 1..=n; a tiny tolerance keeps p = 99.9 of 1000 samples at rank 999.
    let rank = ((p / 100.0 * n as f64) - 1e-9).ceil().clamp(1.0, n as f64) as u64;
    let mut cum = 0;
    for &(ms, c) in hist {
        cum += c;
        if cum >= rank {
            return Some(f64::from(ms));
        }
    }
    hist.last().map(|h| f64::from(h.0))
}

/// Adds histogram `b` into `a` (both ascending by ms).
pub fn hist_add(a: &[(u32, u64)], b: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                out.push((x.0, x.1 + y.1));
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                out.push(*x);
                i += 1;
            }
            (Some(x), None) => {
                out.push(*x);
                i += 1;
            }
            (_, Some(y)) => {
                out.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// What the receiver's capture tells of a stream.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Received {
    /// Data packets (payload > 0) of the stream the receiver saw.
    pub pkts: u64,
    /// Data packets sent and never seen by the receiver (each sent copy of a segment, matched
    /// by sequence number and length).
    pub lost_pkts: u64,
    /// Their payload bytes.
    pub lost_bytes: u64,
    /// Received RDB packets whose redundant bytes were, at least partly, not yet received: they
    /// filled a hole left by lost packets.
    pub rdb_hits: u64,
    /// Received RDB packets whose redundant bytes had all been received already.
    pub rdb_misses: u64,
    /// IP bytes (IP and TCP headers included) of every packet of the stream's direction.
    pub ip_bytes: u64,
    /// Payload bytes received for the first time.
    pub goodput_bytes: u64,
    /// From the first to the last packet of the stream's direction in the receiver's capture.
    pub duration_ns: u64,
}

impl Received {
    /// `ip_bytes / duration`, bytes per second.
    pub fn throughput_bytes_per_s(&self) -> Option<f64> {
        (self.duration_ns > 0).then(|| self.ip_bytes as f64 / (self.duration_ns as f64 / 1e9))
    }
    /// `goodput_bytes / duration`, bytes per second.
    pub fn goodput_bytes_per_s(&self) -> Option<f64> {
        (self.duration_ns > 0).then(|| self.goodput_bytes as f64 / (self.duration_ns as f64 / 1e9))
    }
}

/// One stream: the data direction of a TCP connection, seen at its sender (and receiver).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamStats {
    /// 1-based, in order of the first data packet.
    pub id: usize,
    pub sender: Option<SocketAddr>,
    pub receiver: Option<SocketAddr>,
    /// The first and last data packet in the sender's capture (capture time, ns).
    pub first_ns: u64,
    pub last_ns: u64,
    /// Data packets sent (payload > 0), retransmissions and RDB packets included.
    pub data_pkts: u64,
    /// Data packets carrying bytes never sent before.
    pub new_pkts: u64,
    /// Data packets all of whose bytes were sent before.
    pub retr_pkts: u64,
    /// Data packets carrying both bytes sent before and new bytes (redundant data bundling).
    pub rdb_pkts: u64,
    pub payload_bytes: u64,
    /// Bytes sent for the first time.
    pub unique_bytes: u64,
    /// `retr_bytes + rdb_bytes` (= payload − unique).
    pub redundant_bytes: u64,
    pub retr_bytes: u64,
    /// The already-sent bytes of RDB packets.
    pub rdb_bytes: u64,
    /// Pure ACKs from the receiver repeating the previous ACK number and window while data is
    /// outstanding (RFC 5681's definition).
    pub dupacks: u64,
    /// Sum and count of the gaps between consecutive packets carrying new data.
    pub itt_sum_ns: u64,
    pub itt_n: u64,
    pub latency: Latency,
    /// Byte ranges never acknowledged in the sender's capture (no latency sample).
    pub unacked_ranges: u64,
    /// `None` without the receiver's capture.
    pub received: Option<Received>,
}

impl StreamStats {
    /// Average time between packets carrying new data, ms.
    pub fn itt_avg_ms(&self) -> Option<f64> {
        (self.itt_n > 0).then(|| self.itt_sum_ns as f64 / self.itt_n as f64 / 1e6)
    }
    /// Average payload per data packet, bytes.
    pub fn payload_avg(&self) -> Option<f64> {
        (self.data_pkts > 0).then(|| self.payload_bytes as f64 / self.data_pkts as f64)
    }
}

const WRAP: u64 = 1 << 32;

/// Unwraps 32-bit sequence numbers to 64 bits, nearest the last one.
#[derive(Clone, Copy)]
struct Unwrap(u64);

impl Unwrap {
    fn at(&mut self, s: u32) -> u64 {
        let r = self.0;
        let cand = (r & !(WRAP - 1)) | u64::from(s);
        [cand.wrapping_sub(WRAP), cand, cand + WRAP]
            .into_iter()
            .filter(|&c| c >= WRAP / 2)
            .min_by_key(|c| c.abs_diff(r))
            .unwrap_or(cand)
    }
}

/// The byte ranges received so far: sorted, disjoint, not adjacent.
#[derive(Default)]
struct Have(Vec<(u64, u64)>);

impl Have {
    /// Whether every byte of `[a, b)` was received.
    fn covers(&self, a: u64, b: u64) -> bool {
        let i = self.0.partition_point(|r| r.1 < b);
        self.0.get(i).is_some_and(|r| r.0 <= a && b <= r.1)
    }
    /// Adds `[a, b)`; returns how many of its bytes are new.
    fn insert(&mut self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        // The common case: at or after the end of the last range.
        if let Some(last) = self.0.last_mut() {
            if a >= last.0 && a <= last.1 {
                let new = b.saturating_sub(last.1);
                last.1 = last.1.max(b);
                return new;
            }
        }
        let i = self.0.partition_point(|r| r.1 < a);
        let mut j = i;
        let (mut lo, mut hi) = (a, b);
        let mut old = 0;
        while j < self.0.len() && self.0[j].0 <= b {
            let r = self.0[j];
            old += r.1.min(b).saturating_sub(r.0.max(a));
            lo = lo.min(r.0);
            hi = hi.max(r.1);
            j += 1;
        }
        self.0.splice(i..j, [(lo, hi)]);
        (b - a) - old
    }
}

/// What the sender sent with one end sequence number: copies, and the first copy's length and
/// the offset where its new bytes began (its start when none was sent before; its end when all
/// were).
#[derive(Clone, Copy, Debug)]
struct Sent {
    copies: u32,
    len: u32,
    new_from: u64,
}

/// The sender's view of one stream: counters, latencies, and per segment end what was sent.
/// Packets are matched at the receiver by their end: a middlebox that bundles earlier bytes in
/// front of the new data (the RDB middlebox) keeps the end, so its packets still match.
struct SenderSide {
    stats: StreamStats,
    base: u64,
    sent: FxHashMap<u64, Sent>,
}

fn sender_side(data: &[Rec], acks: &[Rec]) -> SenderSide {
    let first = data.iter().find(|r| r.len > 0).expect("a stream has data");
    let base = WRAP + u64::from(first.seq);
    let mut un = Unwrap(base);
    let mut st = StreamStats {
        first_ns: first.t,
        ..Default::default()
    };
    let mut sent: FxHashMap<u64, Sent> = FxHashMap::default();
    let mut top = base;
    // Ranges as first sent: (end, send time); the next one not yet acknowledged.
    let mut ranges: Vec<(u64, u64)> = vec![];
    let mut next = 0;
    let mut lat: Vec<u64> = vec![];
    let mut last_new: Option<u64> = None;
    let mut prev_ack: Option<(u64, u16)> = None;
    let (mut i, mut j) = (0, 0);
    // Merge data and ACKs by time; at equal times data first (capture order within a host is
    // send order, and an ACK cannot cover data sent at the same instant).
    while i < data.len() || j < acks.len() {
        let take_data = match (data.get(i), acks.get(j)) {
            (Some(d), Some(a)) => d.t <= a.t,
            (Some(_), None) => true,
            _ => false,
        };
        if take_data {
            let r = data[i];
            i += 1;
            if r.len == 0 {
                continue;
            }
            let s = un.at(r.seq);
            un.0 = s;
            let e = s + u64::from(r.len);
            st.data_pkts += 1;
            st.payload_bytes += u64::from(r.len);
            st.last_ns = r.t;
            let entry = sent.entry(e).or_insert(Sent {
                copies: 0,
                len: r.len,
                new_from: top.clamp(s, e),
            });
            entry.copies += 1;
            if e <= top {
                st.retr_pkts += 1;
                st.retr_bytes += u64::from(r.len);
                continue;
            }
            if s < top {
                st.rdb_pkts += 1;
                st.rdb_bytes += top - s;
            }
            // New bytes: [max(s, top), e), one range. (A start beyond `top` means the capture
            // missed packets: the bytes between were never seen sent.)
            st.new_pkts += 1;
            st.unique_bytes += e - s.max(top);
            ranges.push((e, r.t));
            top = e;
            if let Some(p) = last_new {
                st.itt_sum_ns += r.t - p;
                st.itt_n += 1;
            }
            last_new = Some(r.t);
        } else {
            let r = acks[j];
            j += 1;
            if r.flags & ACK == 0 || r.flags & RST != 0 {
                continue;
            }
            let mut ua = un;
            let a = ua.at(r.ack);
            while next < ranges.len() && ranges[next].0 <= a {
                lat.push(r.t.saturating_sub(ranges[next].1));
                next += 1;
            }
            let pure = r.len == 0 && r.flags & (SYN | FIN) == 0;
            if pure && prev_ack == Some((a, r.win)) && a < top {
                st.dupacks += 1;
            }
            prev_ack = Some((a, r.win));
        }
    }
    st.redundant_bytes = st.retr_bytes + st.rdb_bytes;
    st.unacked_ranges = (ranges.len() - next) as u64;
    st.latency = Latency::of(lat);
    SenderSide {
        stats: st,
        base,
        sent,
    }
}

fn receiver_side(side: &SenderSide, data: &[Rec]) -> Received {
    let mut rx = Received::default();
    let mut un = Unwrap(side.base);
    let mut have = Have::default();
    let mut got: FxHashMap<u64, u32> = FxHashMap::default();
    if let (Some(a), Some(b)) = (data.first(), data.last()) {
        rx.duration_ns = b.t.saturating_sub(a.t);
    }
    for r in data {
        rx.ip_bytes += u64::from(r.ip_len);
        if r.len == 0 {
            continue;
        }
        let s = un.at(r.seq);
        un.0 = s;
        let e = s + u64::from(r.len);
        rx.pkts += 1;
        *got.entry(e).or_default() += 1;
        if let Some(x) = side.sent.get(&e) {
            // Bytes in front of the new ones, bundled by the sender or on the way: a hit when
            // they filled a hole here, a miss when they had all arrived before. Only for an end
            // sent once: a second copy is a retransmission (which a real stack may collapse
            // with the segment before, as Linux's tcp_retrans_try_collapse does), not RDB.
            if x.copies == 1 && s < x.new_from && x.new_from < e {
                if have.covers(s, x.new_from) {
                    rx.rdb_misses += 1;
                } else {
                    rx.rdb_hits += 1;
                }
            }
        }
        rx.goodput_bytes += have.insert(s, e);
    }
    for (end, x) in &side.sent {
        let seen = got.get(end).copied().unwrap_or(0);
        let lost = u64::from(x.copies.saturating_sub(seen));
        rx.lost_pkts += lost;
        rx.lost_bytes += lost * u64::from(x.len);
    }
    rx
}

/// The streams of a run's (or of any) captures: every TCP direction that carried payload, the
/// busier direction of each connection. The data sender's capture is the one that saw the
/// direction's first data packet earliest (at the sender it is recorded when sent, elsewhere
/// later); the receiver's is the other capture that saw its data (the next earliest). With one
/// capture there are no receiver numbers.
pub fn streams(captures: &[CaptureLog]) -> Vec<StreamStats> {
    // Per direction: (first data time, capture index) of every capture that saw its data.
    let mut seen: FxHashMap<FlowKey, Vec<(u64, usize)>> = FxHashMap::default();
    for (ci, c) in captures.iter().enumerate() {
        for (k, recs) in &c.by_dir {
            if let Some(r) = recs.iter().find(|r| r.len > 0) {
                seen.entry(*k).or_default().push((r.t, ci));
            }
        }
    }
    let mut out: Vec<(FlowKey, StreamStats)> = vec![];
    for (k, mut caps) in seen {
        caps.sort();
        let (_, sc) = caps[0];
        let data = &captures[sc].by_dir[&k];
        let empty = vec![];
        let acks = captures[sc].by_dir.get(&k.reversed()).unwrap_or(&empty);
        let side = sender_side(data, acks);
        let mut st = side.stats.clone();
        st.sender = Some(SocketAddr::new(k.src, k.sport));
        st.receiver = Some(SocketAddr::new(k.dst, k.dport));
        if let Some(&(_, rc)) = caps.get(1) {
            st.received = Some(receiver_side(&side, &captures[rc].by_dir[&k]));
        }
        out.push((k, st));
    }
    // The busier direction of each connection (more unique bytes; the earlier on a tie).
    let rank: FxHashMap<FlowKey, (u64, std::cmp::Reverse<u64>)> = out
        .iter()
        .map(|(k, s)| (*k, (s.unique_bytes, std::cmp::Reverse(s.first_ns))))
        .collect();
    let keep: Vec<bool> = out
        .iter()
        .map(|(k, _)| rank.get(&k.reversed()).is_none_or(|r| *r <= rank[k]))
        .collect();
    let mut v: Vec<StreamStats> = out
        .into_iter()
        .zip(keep)
        .filter_map(|((_, s), k)| k.then_some(s))
        .collect();
    v.sort_by_key(|s| (s.first_ns, s.sender, s.receiver));
    for (i, s) in v.iter_mut().enumerate() {
        s.id = i + 1;
    }
    v
}

/// The columns of `streams.csv` before `goodput_Bps`, in order ([`crate::files::streams`]).
pub const STREAM_COLUMNS: [&str; 30] = {
    let mut out = [""; 30];
    let mut i = 0;
    while i < 30 {
        out[i] = crate::files::streams::COLUMNS[i];
        i += 1;
    }
    out
};

/// `streams.csv`: one row per stream ([`crate::files::streams`]).
pub fn streams_csv(streams: &[StreamStats]) -> String {
    crate::files::streams::text(streams, &[])
}

/// `latency.csv`: the ACK latency histogram of every stream at 1 ms resolution, one row per
/// non-empty millisecond: `stream,ms,count` ([`crate::files::latency`]).
pub fn latency_csv(streams: &[StreamStats]) -> String {
    crate::files::latency::text(streams, &[])
}

/// Writes `streams.csv` and `latency.csv` into `dir` (nothing when there is no stream).
pub fn write_stream_files(dir: &Path, streams: &[StreamStats]) -> Result<(), Error> {
    if streams.is_empty() {
        return Ok(());
    }
    let f = lasthop_core::layout::RunFiles::new(dir);
    let io = |path: std::path::PathBuf| {
        move |error| Error::Io {
            path: path.display().to_string(),
            error,
        }
    };
    crate::files::streams::write(&f.streams_csv(), streams).map_err(io(f.streams_csv()))?;
    crate::files::latency::write(&f.latency_csv(), streams).map_err(io(f.latency_csv()))
}

/// A short table of the streams (`lasthop analyze --streams`).
pub fn format_stream_table(streams: &[StreamStats]) -> String {
    let mut s = String::from(
        "stream sender                 data_pkts  retr   rdb  lost  hits  itt_ms  payl_B   lat_mean  lat_p50  lat_p99  lat_max\n",
    );
    let o = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
    for st in streams {
        let l = &st.latency;
        let _ = writeln!(
            s,
            "{:>6} {:<22} {:>9} {:>5} {:>5} {:>5} {:>5} {:>7} {:>7} {:>10} {:>8} {:>8} {:>8}",
            st.id,
            st.sender.map_or(String::new(), |a| a.to_string()),
            st.data_pkts,
            st.retr_pkts,
            st.rdb_pkts,
            st.received
                .map_or("-".to_string(), |r| r.lost_pkts.to_string()),
            st.received
                .map_or("-".to_string(), |r| r.rdb_hits.to_string()),
            o(st.itt_avg_ms(), 1),
            o(st.payload_avg(), 1),
            o(l.mean_ms(), 1),
            o(hist_percentile(&l.hist, 50.0), 0),
            o(hist_percentile(&l.hist, 99.0), 0),
            o((l.n > 0).then(|| l.max_ns as f64 / 1e6), 1),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_of_known_samples() {
        // 10 samples: 150 ×6, 180, 210, 300, 450 ms. Nearest rank ⌈p·n⌉: p50 → 5th = 150,
        // p60 → 6th = 150, p70 → 7th = 180, p80 → 8th = 210, p90 → 9th = 300, p95 → ⌈9.5⌉ =
        // 10th = 450, p99.99 → 10th = 450, p0 → the first = 150.
        let h = [(150, 6), (180, 1), (210, 1), (300, 1), (450, 1)];
        let p = |x| hist_percentile(&h, x).unwrap();
        assert_eq!(
            [
                p(50.0),
                p(60.0),
                p(70.0),
                p(80.0),
                p(90.0),
                p(95.0),
                p(99.99),
                p(0.0)
            ],
            [150.0, 150.0, 180.0, 210.0, 300.0, 450.0, 450.0, 150.0]
        );
        // 1000 samples 1..=1000 ms: p99.9 → rank 999 (not 1000 by rounding error)
        let h: Vec<(u32, u64)> = (1..=1000).map(|m| (m, 1)).collect();
        assert_eq!(hist_percentile(&h, 99.9), Some(999.0));
        assert_eq!(hist_percentile(&h, 40.0), Some(400.0));
        assert_eq!(hist_percentile(&[], 50.0), None);
        assert_eq!(
            hist_add(&[(1, 2), (5, 1)], &[(0, 1), (5, 3), (9, 1)]),
            vec![(0, 1), (1, 2), (5, 4), (9, 1)]
        );
    }

    #[test]
    fn received_ranges() {
        let mut h = Have::default();
        assert_eq!(h.insert(0, 100), 100);
        assert_eq!(h.insert(200, 300), 100);
        assert!(h.covers(0, 100) && !h.covers(50, 150) && !h.covers(100, 200));
        // fills the hole and overlaps both sides: 100 new bytes
        assert_eq!(h.insert(50, 250), 100);
        assert_eq!(h.0, vec![(0, 300)]);
        assert_eq!(h.insert(0, 300), 0);
    }

    #[test]
    fn unwrap_across_the_wrap() {
        let mut u = Unwrap(WRAP + u64::from(u32::MAX - 10));
        let a = u.at(5);
        assert_eq!(a, 2 * WRAP + 5);
        u.0 = a;
        assert_eq!(u.at(u32::MAX - 3), WRAP + u64::from(u32::MAX - 3));
    }
}
