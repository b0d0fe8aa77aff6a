//! A large pcap file on two threads, split by position: each thread reads and parses one half
//! of the file's records into compact segments, sorted into two shards by 4-tuple; then each
//! thread analyses one shard's segments of both halves, in record order. Every record is read
//! and parsed once, and every connection analysed by one thread, so the result is what one
//! thread gives (see [`analyze_split`] for when the split is not used).
//!
//! The second half starts at a record boundary found near the middle of the file by a guess
//! (a run of plausible record headers, `capture::plausible_records`); the first thread, reading
//! from the file's first record, must arrive exactly there, or the split is dropped.

use crate::capture::{self, PcapLayout, ReadSummary, TcpSeg};
use crate::conn::{self, Analyzer, ConnStats, Options};
use crate::{udp, Analysis, Error};
use lasthop_core::{FlowKey, Time};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::net::{IpAddr, Ipv4Addr};

/// One TCP segment as the analysis needs it, once its 4-tuple is numbered (32 bytes, against
/// `TcpSeg`'s 112: the two phases write and read one per record).
#[derive(Clone, Copy, Debug)]
struct Compact {
    time: u64,
    /// The number of the record among the half's IP records (orders the connections).
    n: u32,
    /// The half's number of the 4-tuple; the top bit is set when the segment goes against the
    /// 4-tuple's orientation in the table.
    tuple: u32,
    seq: u32,
    ack: u32,
    payload_len: u32,
    window: u16,
    flags: u8,
    /// Whether the segment's TCP options are the next entry of its shard's `opts`.
    has_opts: bool,
}

/// The options of a segment that has any.
#[derive(Clone, Copy, Debug)]
struct Opts {
    sack: [(u32, u32); 4],
    sack_count: u8,
    sack_permitted: bool,
    wscale: Option<u8>,
}

const REVERSE: u32 = 1 << 31;

/// The 4-tuples a half saw, numbered in order of first sight, each in one orientation: the
/// lower (address, port) first. IPv4 4-tuples are keyed by their numbers (cheap to hash), the
/// others by flow key.
#[derive(Default)]
struct Tuples {
    v4: FxHashMap<u128, u32>,
    other: FxHashMap<FlowKey, u32>,
    /// Each number's flow key (the table's orientation) and shard.
    keys: Vec<FlowKey>,
    shards: Vec<bool>,
    /// The last IPv4 4-tuple looked up: (key, number, shard).
    last: Option<(u128, u32, bool)>,
}

/// An IPv4 4-tuple in the table's orientation, and whether `(src, sport)` comes first in it.
#[inline(always)]
fn v4_key(src: u32, dst: u32, sport: u16, dport: u16) -> (u128, bool) {
    let a = (u64::from(src) << 16) | u64::from(sport);
    let b = (u64::from(dst) << 16) | u64::from(dport);
    let (lo, hi, canon) = if a <= b { (a, b, true) } else { (b, a, false) };
    ((u128::from(lo) << 64) | u128::from(hi), canon)
}

impl Tuples {
    /// The number and shard of an IPv4 4-tuple in the table's orientation (`v4_key`).
    #[inline(always)]
    fn v4(&mut self, key: u128) -> (u32, bool) {
        if let Some((k, t, s)) = self.last {
            if k == key {
                return (t, s);
            }
        }
        let (t, s) = match self.v4.get(&key) {
            Some(&t) => (t, self.shards[t as usize]),
            None => {
                let (lo, hi) = ((key >> 64) as u64, key as u64);
                let ip = |x: u64| IpAddr::V4(Ipv4Addr::from((x >> 16) as u32));
                let k = FlowKey {
                    proto: 6,
                    src: ip(lo),
                    dst: ip(hi),
                    sport: lo as u16,
                    dport: hi as u16,
                };
                let t = self.push(k);
                self.v4.insert(key, t);
                (t, self.shards[t as usize])
            }
        };
        self.last = Some((key, t, s));
        (t, s)
    }

    /// The number (with [`REVERSE`] when `k` goes against the table's orientation) and shard
    /// of any 4-tuple.
    fn any(&mut self, k: &FlowKey) -> (u32, bool) {
        if let (IpAddr::V4(s), IpAddr::V4(d)) = (k.src, k.dst) {
            let (key, canon) = v4_key(u32::from(s), u32::from(d), k.sport, k.dport);
            let (t, sh) = self.v4(key);
            return (if canon { t } else { t | REVERSE }, sh);
        }
        let r = k.reversed();
        let canon = (k.src, k.sport) <= (k.dst, k.dport);
        let ck = if canon { *k } else { r };
        let t = match self.other.get(&ck) {
            Some(&t) => t,
            None => {
                let t = self.push(ck);
                self.other.insert(ck, t);
                t
            }
        };
        (if canon { t } else { t | REVERSE }, self.shards[t as usize])
    }

    fn push(&mut self, k: FlowKey) -> u32 {
        self.keys.push(k);
        self.shards.push(conn::shard_of(&k));
        (self.keys.len() - 1) as u32
    }
}

/// What a thread found in its half of the file.
#[derive(Default)]
struct Half {
    /// Each shard's segments, in record order.
    segs: [Vec<Compact>; 2],
    opts: [Vec<Opts>; 2],
    tuples: Tuples,
    datagrams: Vec<udp::Datagram>,
    summary: ReadSummary,
    /// The IP records handed out (the numbering of `Compact::n`).
    ip_records: u64,
    /// Where its records end, and whether bytes were left after them.
    end: u64,
    left: bool,
    /// A number or count outgrew its field: the split is not used.
    overflow: bool,
}

/// Reads the records between `from` and `to` into a [`Half`].
fn read_half(
    file: &File,
    source: &str,
    lay: &PcapLayout,
    from: u64,
    to: u64,
) -> Result<Half, Error> {
    let mut h = Half::default();
    let Half {
        segs,
        opts,
        tuples,
        datagrams,
        summary,
        ip_records,
        overflow,
        ..
    } = &mut h;
    summary.linktype = lay.linktype;
    let mut n = 0u64;
    let each = |t: Time, ip: &[u8], wire: u32| {
        let nr = n as u32;
        n += 1;
        // The common case, as `capture::parse_tcp_into`'s.
        if let Some(h) = ip.get(..40) {
            if capture::plain_ipv4_tcp(h) {
                let b16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
                let b32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
                let total = u32::from(b16(2));
                let dgram = if total != 0 { total } else { wire };
                let (key, canon) = v4_key(b32(12), b32(16), b16(20), b16(22));
                let (tu, shard) = tuples.v4(key);
                segs[usize::from(shard)].push(Compact {
                    time: t.0,
                    n: nr,
                    tuple: if canon { tu } else { tu | REVERSE },
                    seq: b32(24),
                    ack: b32(28),
                    payload_len: dgram.saturating_sub(20).saturating_sub(20),
                    window: b16(34),
                    flags: h[33],
                    has_opts: false,
                });
                return true;
            }
        }
        match capture::parse_tcp_other(t, ip, Some(wire)) {
            Some(s) => {
                let (tu, shard) = tuples.any(&s.flow);
                let has_opts = s.sack_count > 0 || s.sack_permitted || s.wscale.is_some();
                let sh = usize::from(shard);
                if has_opts {
                    opts[sh].push(Opts {
                        sack: s.sack,
                        sack_count: s.sack_count,
                        sack_permitted: s.sack_permitted,
                        wscale: s.wscale,
                    });
                }
                segs[sh].push(Compact {
                    time: s.time.0,
                    n: nr,
                    tuple: tu,
                    seq: s.seq,
                    ack: s.ack,
                    payload_len: s.payload_len,
                    window: s.window,
                    flags: s.flags,
                    has_opts,
                });
                true
            }
            None => {
                datagrams.extend(udp::parse_datagram(t, ip, Some(wire)));
                false
            }
        }
    };
    let (end, left) = capture::read_pcap_span(file, source, lay, from, to, summary, each)?;
    *ip_records = n;
    *overflow = n > u64::from(u32::MAX) || tuples.keys.len() >= REVERSE as usize;
    h.end = end;
    h.left = left;
    Ok(h)
}

/// Where the second half starts: the first offset at or after the middle of the records where
/// a run of 64 plausible record headers starts, looked for in the 1 MiB from the middle.
fn find_boundary(file: &File, lay: &PcapLayout, len: u64) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mid = lay.first + (len - lay.first) / 2;
    let mut buf = vec![0u8; (1 << 20).min((len - mid) as usize)];
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], mid + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    buf.truncate(got);
    // Leave room for the run to be checked within the bytes read (unless they reach the end).
    let last = if mid + got as u64 == len {
        got
    } else {
        got.saturating_sub(64 << 10)
    };
    (0..last)
        .find(|&at| capture::plausible_records(lay, &buf, at, mid, len, 64))
        .map(|at| mid + at as u64)
}

/// Analyses the pcap file `file` of `len` bytes on two threads split by position; `None` when
/// the split is not used: not a pcap file (pcapng included), no plausible boundary found, the
/// reading of the first half not arriving exactly at it (the guess was a false boundary, or
/// the capture ends before it), or a count outgrowing the compact form. The caller then reads
/// the file another way.
pub(crate) fn analyze_split(
    file: &File,
    len: u64,
    source: &str,
    opts: Options,
) -> Result<Option<Analysis>, Error> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 24];
    if file.read_exact_at(&mut head, 0).is_err() {
        return Ok(None);
    }
    let Some(lay) = capture::pcap_layout(&head) else {
        return Ok(None);
    };
    let Some(mid) = find_boundary(file, &lay, len) else {
        return Ok(None);
    };
    let dbg_t0 = std::time::Instant::now();
    let (first, second) = std::thread::scope(|sc| {
        let other = sc.spawn(|| read_half(file, source, &lay, mid, len));
        let first = read_half(file, source, &lay, lay.first, mid);
        let second = other
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (first, second)
    });
    let (mut first, mut second) = (first?, second?);
    if first.end != mid || first.left || first.overflow || second.overflow {
        return Ok(None);
    }
    let dbg_t1 = dbg_t0.elapsed();
    // One table of 4-tuples: the first half's numbers, then the second half's new ones.
    let mut tuples = std::mem::take(&mut first.tuples);
    let trans: Vec<u32> = second
        .tuples
        .keys
        .iter()
        .map(|k| tuples.any(k).0 & !REVERSE)
        .collect();
    if tuples.keys.len() >= REVERSE as usize {
        return Ok(None);
    }
    // `any` keeps the table's orientation, so a number's orientation is the same in both.
    let keys = &tuples.keys;
    let halves = [(&first, None), (&second, Some(&trans[..]))];
    let base = first.ip_records;
    let (a, b) = std::thread::scope(|sc| {
        let other = sc.spawn(|| analyze_shard(&halves, 1, keys, base, opts));
        let mine = analyze_shard(&halves, 0, keys, base, opts);
        let theirs = other
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (mine, theirs)
    });
    if std::env::var_os("DBG_SPLIT").is_some() {
        eprintln!(
            "split at {mid}: phase1 {:?} phase2 {:?}",
            dbg_t1,
            dbg_t0.elapsed() - dbg_t1
        );
    }
    let mut summary = first.summary;
    summary.records += second.summary.records;
    summary.other += second.summary.other;
    if second.left {
        summary
            .warnings
            .push(capture::truncated_at(source, summary.records));
    }
    let mut udp = first.datagrams;
    udp.append(&mut second.datagrams);
    Ok(Some(Analysis {
        conns: conn::merge_numbered(vec![a, b]),
        summary,
        udp,
    }))
}

/// The connections of one shard, from its segments of both halves in record order.
fn analyze_shard(
    halves: &[(&Half, Option<&[u32]>); 2],
    shard: usize,
    keys: &[FlowKey],
    base: u64,
    opts: Options,
) -> Vec<(u64, ConnStats)> {
    let mut an = Analyzer::new(opts);
    // One segment, filled in place for every record (see `capture::parse_tcp_into`).
    let mut seg = Box::new(TcpSeg::EMPTY);
    for (k, (half, trans)) in halves.iter().enumerate() {
        let base = if k == 0 { 0 } else { base };
        let mut o = half.opts[shard].iter();
        for c in &half.segs[shard] {
            seg.time = Time(c.time);
            seg.seq = c.seq;
            seg.ack = c.ack;
            seg.flags = c.flags;
            seg.window = c.window;
            seg.payload_len = c.payload_len;
            match c.has_opts.then(|| o.next()).flatten() {
                Some(x) => {
                    seg.sack = x.sack;
                    seg.sack_count = x.sack_count;
                    seg.sack_permitted = x.sack_permitted;
                    seg.wscale = x.wscale;
                }
                None => {
                    seg.sack_count = 0;
                    seg.sack_permitted = false;
                    seg.wscale = None;
                }
            }
            let local = c.tuple & !REVERSE;
            let t = trans.map_or(local, |tr| tr[local as usize]);
            an.segment_tuple(t, c.tuple & REVERSE == 0, keys, &seg, base + u64::from(c.n));
        }
    }
    an.finish_numbered()
}
