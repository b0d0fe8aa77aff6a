//! A large pcap file on two threads, in chunks by position. The file is mapped into memory and
//! cut into chunks of about [`CHUNK`] bytes at record boundaries; a chunk is parsed in place
//! into compact segments, sorted into shards by 4-tuple; a shard's segments are analysed chunk
//! after chunk, in record order, by one [`Analyzer`] per shard. Every connection lies in one
//! shard, so the result is what one thread gives (see [`analyze_split`] for when the chunks
//! are not used).
//!
//! The two threads take whatever work is ready ([`Pipeline::work`]): the next shard's chunk
//! whose parse is merged, else the next chunk to parse while a slot of the ring is free. A
//! chunk's parse lands in one of [`SLOTS`] reused slots, so the segments stay in the cores'
//! caches between the parse and the analysis and the memory taken does not grow with the
//! file; a slower core (these VMs' cores are not equally fast from one moment to the next)
//! simply does less of the work.
//!
//! A chunk starts at a record boundary guessed near its nominal start (a run of plausible
//! record headers, `capture::plausible_records`); the parse of the chunk before must arrive
//! exactly there, which is checked before the later chunk is analysed, or the chunks are
//! dropped for the sequential reading.
//!
//! The segments take a 20-byte form ([`Compact`], the rest in [`Extra`] entries). A file
//! truncated by another process while it is mapped can stop the process (SIGBUS), as with any
//! mapped file; a capture still being written (growing) is read up to its length when opened,
//! as the sequential readers do.

use crate::capture::{self, PcapLayout, ReadSummary, TcpSeg, SYN};
use crate::conn::{self, Analyzer, Options};
use crate::{udp, Analysis, Error};
use lasthop_core::{FlowKey, Time};
use memmap2::{Mmap, MmapOptions, UncheckedAdvice};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};

/// The nominal size of a chunk: about 37 000 records of a bulk transfer, whose segments
/// (0.75 MB) stay in the caches until they are analysed.
const CHUNK: u64 = 2 << 20;
/// The ring's slots: chunks parsed ahead of their analysis at most.
const SLOTS: usize = 6;
/// Shards of the 4-tuples (`conn::shard_of`), each analysed by one analyser.
const SHARDS: usize = 2;

/// One TCP segment as the analysis needs it, once its 4-tuple is numbered: 20 bytes (against
/// `TcpSeg`'s 112), since writing them in the parse and reading them in the analysis is
/// memory traffic that costs about as much as the parsing. What does not fit, and the record
/// number where a connection may open, is in an [`Extra`] entry.
#[derive(Clone, Copy, Debug)]
struct Compact {
    /// Nanoseconds since the previous segment of the same list (0 with an [`Extra`] entry,
    /// which holds the time).
    dt: u32,
    /// The chunk's number of the 4-tuple ([`NUMBER`]), the TCP flags (bits 22 to 29), whether
    /// an [`Extra`] entry follows ([`EXTRA`]), and [`REVERSE`] when the segment goes against
    /// the 4-tuple's orientation in the table.
    word: u32,
    seq: u32,
    ack: u32,
    /// The payload length (0 with an [`Extra`] entry, which holds it).
    payload_len: u16,
    window: u16,
}

/// The rest of a segment that has any of: a SYN, the first segment of its 4-tuple in its chunk
/// (either can open a connection, which needs the record number), TCP options, a payload of
/// 64 KiB or more, a time that is not 0 to 4.29 s after the list's previous segment.
#[derive(Clone, Copy, Debug)]
struct Extra {
    time: u64,
    /// The number of the record among the chunk's IP records (orders the connections).
    n: u32,
    payload_len: u32,
    sack: [(u32, u32); 4],
    sack_count: u8,
    sack_permitted: bool,
    wscale: Option<u8>,
}

const REVERSE: u32 = 1 << 31;
const EXTRA: u32 = 1 << 30;
const FLAGS_SHIFT: u32 = 22;
/// The bits of [`Compact::word`] that hold the 4-tuple's number: a chunk with more 4-tuples
/// is not analysed this way.
const NUMBER: u32 = (1 << FLAGS_SHIFT) - 1;

/// Each shard's segments of a chunk, in record order, and their [`Extra`] entries.
#[derive(Default)]
struct Lists {
    segs: [Vec<Compact>; SHARDS],
    extra: [Vec<Extra>; SHARDS],
    /// The time of each list's last segment.
    last: [u64; SHARDS],
}

impl Lists {
    /// Appends a segment to shard `sh`'s list; `word` holds its number, flags and direction,
    /// `new` tells that it is the first of its 4-tuple in the chunk, `opts` its options if any.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push(
        &mut self,
        sh: usize,
        time: u64,
        n: u32,
        word: u32,
        new: bool,
        seq: u32,
        ack: u32,
        payload_len: u32,
        window: u16,
        opts: Option<&TcpSeg>,
    ) {
        let dt = time.wrapping_sub(self.last[sh]);
        self.last[sh] = time;
        let syn = word & (u32::from(SYN) << FLAGS_SHIFT) != 0;
        let plain = !new
            && !syn
            && opts.is_none()
            && payload_len <= u32::from(u16::MAX)
            && dt <= u64::from(u32::MAX);
        let mut c = Compact {
            dt: dt as u32,
            word,
            seq,
            ack,
            payload_len: payload_len as u16,
            window,
        };
        if !plain {
            c.word |= EXTRA;
            c.dt = 0;
            c.payload_len = 0;
            self.push_extra(sh, time, n, payload_len, opts);
        }
        self.segs[sh].push(c);
    }

    /// The [`Extra`] entry of a segment (out of line: most segments have none).
    #[inline(never)]
    fn push_extra(
        &mut self,
        sh: usize,
        time: u64,
        n: u32,
        payload_len: u32,
        opts: Option<&TcpSeg>,
    ) {
        let mut x = Extra {
            time,
            n,
            payload_len,
            sack: [(0, 0); 4],
            sack_count: 0,
            sack_permitted: false,
            wscale: None,
        };
        if let Some(s) = opts {
            x.sack = s.sack;
            x.sack_count = s.sack_count;
            x.sack_permitted = s.sack_permitted;
            x.wscale = s.wscale;
        }
        self.extra[sh].push(x);
    }

    /// Empties the lists for the next chunk, keeping their room.
    fn clear(&mut self) {
        self.segs.iter_mut().for_each(Vec::clear);
        self.extra.iter_mut().for_each(Vec::clear);
        self.last = [0; SHARDS];
    }
}

/// The 4-tuples a chunk (or the whole file) saw, numbered in order of first sight, each in one
/// orientation: the lower (address, port) first. IPv4 4-tuples are keyed by their numbers
/// (cheap to hash), the others by flow key.
#[derive(Default)]
struct Tuples {
    v4: FxHashMap<u128, u32>,
    other: FxHashMap<FlowKey, u32>,
    /// Each number's flow key (the table's orientation) and shard.
    keys: Vec<FlowKey>,
    shards: Vec<u8>,
    /// The IPv4 4-tuples looked up last, by a hash of the key: (key, number + 1, shard), number
    /// 0 for an empty slot. Captures interleave a few connections' packets.
    recent: Vec<(u128, u32, u8)>,
}

/// Slots of [`Tuples::recent`].
const RECENT: usize = 64;

/// An IPv4 4-tuple in the table's orientation, and whether `(src, sport)` comes first in it.
#[inline(always)]
fn v4_key(src: u32, dst: u32, sport: u16, dport: u16) -> (u128, bool) {
    let a = (u64::from(src) << 16) | u64::from(sport);
    let b = (u64::from(dst) << 16) | u64::from(dport);
    let (lo, hi, canon) = if a <= b { (a, b, true) } else { (b, a, false) };
    ((u128::from(lo) << 64) | u128::from(hi), canon)
}

impl Tuples {
    /// The number and shard of an IPv4 4-tuple in the table's orientation (`v4_key`), and
    /// whether it is new.
    #[inline(always)]
    fn v4(&mut self, key: u128) -> (u32, u8, bool) {
        if self.recent.is_empty() {
            self.recent = vec![(0, 0, 0); RECENT];
        }
        let h = ((key >> 64) as u64 ^ key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (h >> 58) as usize;
        let (k, t1, s) = self.recent[slot];
        if k == key && t1 != 0 {
            return (t1 - 1, s, false);
        }
        let (t, s, new) = self.v4_lookup(key);
        self.recent[slot] = (key, t + 1, s);
        (t, s, new)
    }

    /// [`Tuples::v4`] past the recent slots: the table, or a new number.
    #[inline(never)]
    fn v4_lookup(&mut self, key: u128) -> (u32, u8, bool) {
        match self.v4.get(&key) {
            Some(&t) => (t, self.shards[t as usize], false),
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
                (t, self.shards[t as usize], true)
            }
        }
    }

    /// The number (with [`REVERSE`] when `k` goes against the table's orientation), shard and
    /// newness of any 4-tuple.
    fn any(&mut self, k: &FlowKey) -> (u32, u8, bool) {
        if let (IpAddr::V4(s), IpAddr::V4(d)) = (k.src, k.dst) {
            let (key, canon) = v4_key(u32::from(s), u32::from(d), k.sport, k.dport);
            let (t, sh, new) = self.v4(key);
            return (if canon { t } else { t | REVERSE }, sh, new);
        }
        let r = k.reversed();
        let canon = (k.src, k.sport) <= (k.dst, k.dport);
        let ck = if canon { *k } else { r };
        let (t, new) = match self.other.get(&ck) {
            Some(&t) => (t, false),
            None => {
                let t = self.push(ck);
                self.other.insert(ck, t);
                (t, true)
            }
        };
        (
            if canon { t } else { t | REVERSE },
            self.shards[t as usize],
            new,
        )
    }

    fn push(&mut self, k: FlowKey) -> u32 {
        self.keys.push(k);
        self.shards.push(u8::from(conn::shard_of(&k)));
        (self.keys.len() - 1) as u32
    }

    /// Forgets every 4-tuple, keeping the room.
    fn clear(&mut self) {
        self.v4.clear();
        self.other.clear();
        self.keys.clear();
        self.shards.clear();
        self.recent.iter_mut().for_each(|r| *r = (0, 0, 0));
    }
}

/// A slot of the ring: one chunk's segments and 4-tuples, cleared and reused for a later chunk.
#[derive(Default)]
struct Part {
    lists: Lists,
    tuples: Tuples,
}

/// What the parse of a chunk hands to the merge, besides its [`Part`].
#[derive(Default)]
struct Parsed {
    /// The chunk's 4-tuples by its numbers (a copy of its `Tuples::keys`).
    keys: Vec<FlowKey>,
    datagrams: Vec<udp::Datagram>,
    /// Its records, and those that were not TCP (`ReadSummary`'s counts).
    records: u64,
    other: u64,
    /// The IP records handed out (the numbering of `Extra::n`).
    ip_records: u64,
    /// Where its records end, and whether bytes were left after them.
    end: u64,
    left: bool,
    /// A number or count outgrew its field.
    overflow: bool,
}

/// Parses the records between `from` and `to` into `part` (cleared first).
fn parse_chunk(
    file: &[u8],
    map: Option<&Mmap>,
    lay: &PcapLayout,
    from: u64,
    to: u64,
    part: &mut Part,
) -> Parsed {
    part.lists.clear();
    part.tuples.clear();
    // Room for every record of the chunk in either shard: no copies as the lists grow. A TCP
    // record has at least 16 + 40 bytes.
    let most = ((to - from) / 56 + 1) as usize;
    for l in &mut part.lists.segs {
        l.reserve(most);
    }
    let Part { lists, tuples } = part;
    let mut datagrams = Vec::new();
    let mut summary = ReadSummary::default();
    let mut n = 0u64;
    let mut each = |t: Time, ip: &[u8], wire: u32| {
        let nr = n as u32;
        n += 1;
        record(lists, tuples, &mut datagrams, t, ip, wire, nr)
    };
    let (from, to) = (from as usize, to as usize);
    let bytes = &file[from..to];
    let used = if lay.big {
        capture::records::<true>(bytes, lay.nanos, lay.linktype, &mut summary, &mut each)
    } else {
        capture::records::<false>(bytes, lay.nanos, lay.linktype, &mut summary, &mut each)
    };
    // The pages read are released (they would count in the process's memory, and unmapping
    // them all at the end would take one thread's time).
    if let Some(map) = map {
        release(map, from, from + used);
    }
    Parsed {
        keys: tuples.keys.clone(),
        datagrams,
        records: summary.records,
        other: summary.other,
        ip_records: n,
        end: (from + used) as u64,
        left: used < to - from,
        overflow: n > u64::from(u32::MAX) || tuples.keys.len() > NUMBER as usize,
    }
}

/// [`parse_chunk`]'s work on one record (the `nr`th IP record of the chunk): the common
/// IPv4/TCP form here, inlined into the record loop, the rest in [`other_record`].
#[inline(always)]
fn record(
    lists: &mut Lists,
    tuples: &mut Tuples,
    datagrams: &mut Vec<udp::Datagram>,
    t: Time,
    ip: &[u8],
    wire: u32,
    nr: u32,
) -> bool {
    // The common case, as `capture::parse_tcp_into`'s.
    if let Some(h) = ip.get(..40) {
        if capture::plain_ipv4_tcp(h) {
            let b16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
            let b32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
            let total = u32::from(b16(2));
            let dgram = if total != 0 { total } else { wire };
            let (key, canon) = v4_key(b32(12), b32(16), b16(20), b16(22));
            let (tu, shard, new) = tuples.v4(key);
            let word = tu | u32::from(h[33]) << FLAGS_SHIFT | if canon { 0 } else { REVERSE };
            lists.push(
                usize::from(shard),
                t.0,
                nr,
                word,
                new,
                b32(24),
                b32(28),
                dgram.saturating_sub(20).saturating_sub(20),
                b16(34),
                None,
            );
            return true;
        }
    }
    other_record(lists, tuples, datagrams, t, ip, wire, nr)
}

/// [`parse_chunk`]'s records other than the common IPv4/TCP form (out of line, so that the
/// common case's code is small enough to be inlined into the record loop).
#[inline(never)]
fn other_record(
    lists: &mut Lists,
    tuples: &mut Tuples,
    datagrams: &mut Vec<udp::Datagram>,
    t: Time,
    ip: &[u8],
    wire: u32,
    nr: u32,
) -> bool {
    match capture::parse_tcp_other(t, ip, Some(wire)) {
        Some(s) => {
            let (tu, shard, new) = tuples.any(&s.flow);
            let has_opts = s.sack_count > 0 || s.sack_permitted || s.wscale.is_some();
            // `any`'s number: the direction in the top bit, the number below the flags.
            let word = tu | u32::from(s.flags) << FLAGS_SHIFT;
            lists.push(
                usize::from(shard),
                s.time.0,
                nr,
                word,
                new,
                s.seq,
                s.ack,
                s.payload_len,
                s.window,
                has_opts.then_some(&s),
            );
            true
        }
        None => {
            datagrams.extend(udp::parse_datagram(t, ip, Some(wire)));
            false
        }
    }
}

/// Where a chunk starting near `at` starts: the first offset from `at` where a run of 64
/// plausible record headers starts, looked for in the 1 MiB from `at`.
fn boundary_after(map: &[u8], lay: &PcapLayout, at: u64) -> Option<u64> {
    let len = map.len() as u64;
    let end = (at + (1 << 20)).min(len);
    let buf = &map[at as usize..end as usize];
    // Leave room for the run to be checked within those bytes (unless they reach the end).
    let last = if end == len {
        buf.len()
    } else {
        buf.len().saturating_sub(64 << 10)
    };
    (0..last)
        .find(|&i| capture::plausible_records(lay, buf, i, at, len, 64))
        .map(|i| at + i as u64)
}

/// Where each chunk of `map` starts, and the end: a boundary guessed every `chunk` bytes
/// (those not found, or not after the one before, are left out).
fn chunk_bounds(map: &[u8], lay: &PcapLayout, chunk: u64) -> Vec<u64> {
    let len = map.len() as u64;
    let mut bounds = vec![lay.first];
    let mut at = lay.first + chunk;
    while at < len {
        if let Some(b) = boundary_after(map, lay, at) {
            if b > *bounds.last().unwrap_or(&0) && b < len {
                bounds.push(b);
            }
        }
        at += chunk;
    }
    bounds.push(len);
    bounds
}

/// The merge of the chunks' parses, in chunk order: one numbering of the file's 4-tuples, the
/// records before each chunk, the summary and the UDP datagrams.
#[derive(Default)]
struct Merge {
    tuples: Tuples,
    /// Chunks parsed and not merged yet.
    parsed: Vec<Option<Parsed>>,
    /// By chunk, once merged: the file's number of each of its numbers, and the IP records
    /// before it.
    trans: Vec<Vec<u32>>,
    base: Vec<u64>,
    records: u64,
    other: u64,
    ip_records: u64,
    udp: Vec<udp::Datagram>,
    /// The last chunk's records end before the file does.
    left: bool,
}

/// The shared state of the two threads' work on a capture's bytes.
struct Pipeline<'a> {
    bytes: &'a [u8],
    /// The mapping `bytes` are, whose pages are released once parsed.
    map: Option<&'a Mmap>,
    lay: PcapLayout,
    /// Chunk `k` is `bounds[k]..bounds[k + 1]`.
    bounds: Vec<u64>,
    /// The chunks to analyse: all of them, or fewer when a record over the readers' limit
    /// ends the capture early (found by the merge).
    chunks: AtomicUsize,
    slots: Vec<RwLock<Part>>,
    merge: Mutex<Merge>,
    /// Chunks merged (in order), the next chunk to parse, and each shard's chunks analysed.
    merged: AtomicUsize,
    next_parse: AtomicUsize,
    analysed: [AtomicUsize; SHARDS],
    analyzers: [Mutex<Analyzer>; SHARDS],
    /// A chunk did not end where the next starts (or a count overflowed, or a thread
    /// panicked): the work stops and the file is read another way.
    failed: AtomicBool,
}

/// Sets [`Pipeline::failed`] when a thread unwinds, so that the other does not wait for it.
struct FailOnPanic<'a>(&'a AtomicBool);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

impl Pipeline<'_> {
    /// One thread's share: analysis when a shard's next chunk is merged (its own shard
    /// first), else a parse when the ring has room, until every chunk is analysed.
    fn work(&self, me: usize) {
        let _guard = FailOnPanic(&self.failed);
        let mut idle = 0u32;
        loop {
            if self.failed.load(Ordering::Acquire) {
                return;
            }
            if self.analyse_next(me) {
                idle = 0;
                continue;
            }
            if self
                .analysed
                .iter()
                .all(|a| a.load(Ordering::Acquire) == self.chunks.load(Ordering::Acquire))
            {
                return;
            }
            if self.parse_next() {
                idle = 0;
                continue;
            }
            // Nothing ready: the other thread is parsing or analysing what comes next. Most
            // waits are short (a job takes about a millisecond); a long one (a capture of one
            // connection, whose chunks only one thread at a time can analyse) sleeps rather than
            // spin, so as not to take a CPU from the other thread or another process.
            idle += 1;
            if idle < 256 {
                std::hint::spin_loop();
            } else if idle < 512 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// Analyses a shard's next chunk if one is merged and no other thread has the shard.
    fn analyse_next(&self, me: usize) -> bool {
        for i in 0..SHARDS {
            let s = (me + i) % SHARDS;
            if self.analysed[s].load(Ordering::Acquire) >= self.merged.load(Ordering::Acquire) {
                continue;
            }
            let Ok(mut an) = self.analyzers[s].try_lock() else {
                continue;
            };
            // Read again under the shard's lock: the other thread may just have analysed it.
            let k = self.analysed[s].load(Ordering::Acquire);
            if k >= self.merged.load(Ordering::Acquire) {
                continue;
            }
            self.analyse(&mut an, s, k);
            self.analysed[s].store(k + 1, Ordering::Release);
            return true;
        }
        false
    }

    /// Parses the next chunk if its slot is free (both shards analysed the chunk before in
    /// that slot), then merges what is ready.
    fn parse_next(&self) -> bool {
        let k = self.next_parse.load(Ordering::Acquire);
        if k >= self.chunks.load(Ordering::Acquire) {
            return false;
        }
        let free = self
            .analysed
            .iter()
            .all(|a| a.load(Ordering::Acquire) + SLOTS > k);
        if !free
            || self
                .next_parse
                .compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return false;
        }
        let parsed = {
            let mut part = self.slots[k % SLOTS].write().expect("a slot's lock");
            let (from, to) = (self.bounds[k], self.bounds[k + 1]);
            parse_chunk(self.bytes, self.map, &self.lay, from, to, &mut part)
        };
        let mut m = self.merge.lock().expect("the merge's lock");
        m.parsed[k] = Some(parsed);
        self.merge_ready(&mut m);
        true
    }

    /// Merges the parsed chunks that follow the merged ones: checks that each ends where the
    /// next starts, numbers its new 4-tuples after the earlier chunks' ones.
    fn merge_ready(&self, m: &mut Merge) {
        loop {
            let k = self.merged.load(Ordering::Acquire);
            let chunks = self.chunks.load(Ordering::Acquire);
            if k == chunks {
                return;
            }
            let Some(p) = m.parsed[k].take() else {
                return;
            };
            let mut last = k + 1 == chunks;
            if !last && p.left && capture::over_limit(&self.lay, &self.bytes[p.end as usize..]) {
                // The sequential readers stop at this record: so does the analysis (the
                // chunks after it are not analysed, their parses are dropped).
                last = true;
                self.chunks.store(k + 1, Ordering::Release);
            }
            if p.overflow || (!last && (p.left || p.end != self.bounds[k + 1])) {
                self.failed.store(true, Ordering::Release);
                return;
            }
            let trans: Vec<u32> = p.keys.iter().map(|key| m.tuples.any(key).0).collect();
            if m.tuples.keys.len() >= REVERSE as usize {
                self.failed.store(true, Ordering::Release);
                return;
            }
            m.trans.push(trans);
            let base = m.ip_records;
            m.base.push(base);
            m.ip_records += p.ip_records;
            m.records += p.records;
            m.other += p.other;
            m.udp.extend(p.datagrams);
            m.left = last && p.left;
            self.merged.store(k + 1, Ordering::Release);
        }
    }

    /// Feeds shard `s`'s segments of chunk `k` to its analyser.
    fn analyse(&self, an: &mut Analyzer, s: usize, k: usize) {
        let (trans, base) = {
            let m = self.merge.lock().expect("the merge's lock");
            (m.trans[k].clone(), m.base[k])
        };
        let part = self.slots[k % SLOTS].read().expect("a slot's lock");
        let keys = &part.tuples.keys;
        let mut extra = part.lists.extra[s].iter();
        // One segment, filled in place for every record (see `capture::parse_tcp_into`).
        let mut seg = TcpSeg::EMPTY;
        // The list's times, as `Lists::push` took them apart.
        let mut now = 0u64;
        for c in &part.lists.segs[s] {
            let w = c.word;
            let mut n = None;
            if w & EXTRA == 0 {
                now += u64::from(c.dt);
                seg.payload_len = u32::from(c.payload_len);
                seg.sack_count = 0;
                seg.sack_permitted = false;
                seg.wscale = None;
            } else {
                let x = extra
                    .next()
                    .expect("an Extra entry for each segment marked so");
                now = x.time;
                n = Some(base + u64::from(x.n));
                seg.payload_len = x.payload_len;
                seg.sack = x.sack;
                seg.sack_count = x.sack_count;
                seg.sack_permitted = x.sack_permitted;
                seg.wscale = x.wscale;
            }
            seg.time = Time(now);
            seg.seq = c.seq;
            seg.ack = c.ack;
            seg.flags = (w >> FLAGS_SHIFT) as u8;
            seg.window = c.window;
            let local = (w & NUMBER) as usize;
            an.segment_tuple(trans[local], w & REVERSE == 0, &keys[local], &seg, n);
        }
    }
}

/// Analyses the pcap file `file` of `len` bytes on two threads in chunks; `None` when the
/// chunks are not used: not a pcap file (pcapng included), no plausible boundary found, the
/// parse of a chunk not arriving exactly at the next one's start (a guess was a false
/// boundary, or a record over pcap-file's limit or cut short ends the capture early), a count
/// outgrowing the compact form, or a file that cannot be mapped. The caller then reads the
/// file another way.
pub(crate) fn analyze_split(
    file: &File,
    len: u64,
    source: &str,
    opts: Options,
) -> Result<Option<Analysis>, Error> {
    analyze_chunked(file, len, source, opts, CHUNK)
}

/// [`analyze_split`] with chunks of `chunk` bytes (tests use small ones).
fn analyze_chunked(
    file: &File,
    len: u64,
    source: &str,
    opts: Options,
    chunk: u64,
) -> Result<Option<Analysis>, Error> {
    if len == 0 || usize::try_from(len).is_err() {
        return Ok(None);
    }
    // SAFETY: a read-only private mapping of the capture; another process truncating the file
    // while it is read would end this one with SIGBUS, as with any mapped file (docs/analysis.md).
    let Ok(map) = (unsafe { MmapOptions::new().len(len as usize).map(file) }) else {
        return Ok(None);
    };
    Ok(chunked(&map, Some(&map), source, opts, chunk))
}

/// The chunks' analysis of a pcap file's `bytes` (`map`, when they are a mapping to release
/// as they are parsed); `None` as [`analyze_split`].
fn chunked(
    bytes: &[u8],
    map: Option<&Mmap>,
    source: &str,
    opts: Options,
    chunk: u64,
) -> Option<Analysis> {
    let lay = bytes.get(..24).and_then(capture::pcap_layout)?;
    let bounds = chunk_bounds(bytes, &lay, chunk);
    let chunks = bounds.len() - 1;
    if chunks < 2 {
        return None;
    }
    let pipe = Pipeline {
        bytes,
        map,
        lay,
        bounds,
        chunks: AtomicUsize::new(chunks),
        slots: (0..SLOTS).map(|_| RwLock::default()).collect(),
        merge: Mutex::new(Merge {
            parsed: (0..chunks).map(|_| None).collect(),
            ..Merge::default()
        }),
        merged: AtomicUsize::new(0),
        next_parse: AtomicUsize::new(0),
        analysed: std::array::from_fn(|_| AtomicUsize::new(0)),
        analyzers: std::array::from_fn(|_| Mutex::new(Analyzer::new(opts))),
        failed: AtomicBool::new(false),
    };
    let here = current_cpu();
    std::thread::scope(|sc| {
        let other = sc.spawn(|| {
            move_off(here);
            pipe.work(1)
        });
        // Let it start (and move off) now, if it was queued behind this thread.
        std::thread::yield_now();
        pipe.work(0);
        other
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
    });
    if pipe.failed.into_inner() {
        return None;
    }
    let m = pipe.merge.into_inner().expect("the merge's lock");
    let mut summary = ReadSummary {
        records: m.records,
        other: m.other,
        linktype: lay.linktype,
        warnings: Vec::new(),
    };
    if m.left {
        summary
            .warnings
            .push(capture::truncated_at(source, summary.records));
    }
    let conns = pipe
        .analyzers
        .into_iter()
        .map(|a| {
            a.into_inner()
                .expect("an analyser's lock")
                .finish_numbered()
        })
        .collect();
    Some(Analysis {
        conns: conn::merge_numbered(conns),
        summary,
        udp: m.udp,
    })
}

/// For the fuzzer: the chunks' analysis of a pcap file's bytes in memory, in chunks of `chunk`
/// bytes; `None` when they are not used (as [`analyze_split`]).
#[doc(hidden)]
pub fn analyze_bytes_in_chunks(bytes: &[u8], chunk: u64) -> Option<Analysis> {
    chunked(bytes, None, "<capture>", Options::default(), chunk.max(1))
}

/// The CPU the calling thread runs on, if known.
fn current_cpu() -> Option<usize> {
    // SAFETY: no arguments, no memory touched.
    let c = unsafe { libc::sched_getcpu() };
    usize::try_from(c).ok()
}

/// Moves the calling thread off CPU `cpu` (its spawner's) to another one it may run on, then
/// allows it every CPU again (it stays where it was moved). Linux starts a new thread on its
/// spawner's CPU and moves it only when the load balancer next runs, a scheduler tick (4 ms)
/// or more later: the two threads would share one CPU for that long, a tenth of the work.
fn move_off(cpu: Option<usize>) {
    let Some(cpu) = cpu else { return };
    // SAFETY: `cpu_set_t` is plain data; the calls read and write only the set given, of the
    // size given, for the calling thread (pid 0).
    unsafe {
        let mut all: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(0, size, &mut all) != 0 || libc::CPU_COUNT(&all) < 2 {
            return;
        }
        if cpu >= 8 * size || !libc::CPU_ISSET(cpu, &all) {
            return;
        }
        let mut others = all;
        libc::CPU_CLR(cpu, &mut others);
        if libc::sched_setaffinity(0, size, &others) == 0 {
            libc::sched_setaffinity(0, size, &all);
        }
    }
}

/// Releases the pages of `map` wholly within `from..to` (read already): the mapping stays, a
/// later read would fault them in again.
fn release(map: &Mmap, from: usize, to: usize) {
    const PAGE: usize = 4096;
    // The mapping starts on a page boundary, so offsets align as addresses do.
    let (a, b) = (from.next_multiple_of(PAGE), to & !(PAGE - 1));
    if a < b {
        // SAFETY: the advice drops no data (the pages are the file's, unchanged, and mapped
        // read-only and private); the bytes stay readable, faulted in again if read.
        let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, a, b - a) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{ACK, FIN};

    /// An IPv4 or IPv6 TCP datagram (`payload` bytes counted in its length field, none
    /// captured; a length over 65 535 leaves the IPv4 field 0, as segmentation offload does)
    /// with TCP options `opt` (a multiple of 4 bytes).
    #[allow(clippy::too_many_arguments)]
    fn tcp(
        v6: bool,
        c: u8,
        sp: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        payload: u32,
        to_server: bool,
        opt: &[u8],
    ) -> Vec<u8> {
        let (a, b) = (c, 200u8);
        let (src, dst, s, d) = if to_server {
            (a, b, sp, 80)
        } else {
            (b, a, 80, sp)
        };
        let mut t = Vec::new();
        t.extend_from_slice(&s.to_be_bytes());
        t.extend_from_slice(&d.to_be_bytes());
        t.extend_from_slice(&seq.to_be_bytes());
        t.extend_from_slice(&ack.to_be_bytes());
        t.extend_from_slice(&[
            ((20 + opt.len() as u8) / 4) << 4,
            flags,
            0x10,
            0,
            0,
            0,
            0,
            0,
        ]);
        t.extend_from_slice(opt);
        let mut p = if v6 {
            let mut p = vec![0x60, 0, 0, 0];
            let plen = (t.len() as u32 + payload) as u16;
            p.extend_from_slice(&plen.to_be_bytes());
            p.extend_from_slice(&[6, 64]);
            p.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, src]);
            p.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, dst]);
            p
        } else {
            let total = 20 + t.len() as u32 + payload;
            let total = if total > 0xffff { 0 } else { total as u16 };
            let mut p = vec![0x45, 0];
            p.extend_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, src, 10, 0, 0, dst]);
            p
        };
        p.extend_from_slice(&t);
        p
    }

    /// The length of a datagram made by [`tcp`] on the wire, uncaptured payload included (as
    /// a capture with a snap length records it).
    fn ip_len(p: &[u8]) -> u32 {
        let be = |at: usize| u32::from(u16::from_be_bytes([p[at], p[at + 1]]));
        if p[0] >> 4 == 6 {
            be(4) + 40
        } else {
            be(2)
        }
    }

    /// One record: time in ns, captured bytes, length on the wire.
    type Rec = (u64, Vec<u8>, u32);

    /// A raw-IP pcap file of `recs` in either byte order and timestamp unit.
    fn pcap(big: bool, nanos: bool, recs: &[Rec]) -> Vec<u8> {
        pcap_link(big, nanos, 101, recs)
    }

    /// [`pcap`] of link type `linktype`: 101 (raw IP), or 1 (Ethernet: a 14-byte header, IPv4
    /// or IPv6 by the datagram's version, added to each record).
    fn pcap_link(big: bool, nanos: bool, linktype: u32, recs: &[Rec]) -> Vec<u8> {
        let w32 = |o: &mut Vec<u8>, x: u32| {
            o.extend_from_slice(&if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            })
        };
        let mut o = Vec::new();
        w32(&mut o, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        let v = if big { [0, 2, 0, 4] } else { [2, 0, 4, 0] };
        o.extend_from_slice(&v);
        for x in [0, 0, 262_144, linktype] {
            w32(&mut o, x);
        }
        let link = if linktype == 1 { 14 } else { 0 };
        for (t, data, orig) in recs {
            w32(&mut o, (t / 1_000_000_000) as u32);
            let frac = t % 1_000_000_000;
            w32(&mut o, if nanos { frac } else { frac / 1000 } as u32);
            w32(&mut o, data.len() as u32 + link);
            w32(&mut o, *orig + link);
            if link > 0 {
                let ethertype: [u8; 2] = if data[0] >> 4 == 6 {
                    [0x86, 0xdd]
                } else {
                    [8, 0]
                };
                o.extend_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
                o.extend_from_slice(&ethertype);
            }
            o.extend_from_slice(data);
        }
        o
    }

    /// Writes `bytes` to a file and analyses it on one thread, in chunks of half the file
    /// (returned, when used) and of smaller sizes down to a few records, and by
    /// `analyze_file` on two threads; every result must be the one thread's. Panics when the
    /// chunks are used at one size and not at another (a boundary guessed wrong).
    fn check(bytes: &[u8]) -> (Analysis, Option<Analysis>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.pcap");
        std::fs::write(&path, bytes).unwrap();
        let name = path.display().to_string();
        let opts = Options::default();
        let f = File::open(&path).unwrap();
        let one = crate::analyze_reader_with(&f, &name, opts).unwrap();
        let len = bytes.len() as u64;
        let mut used = Vec::new();
        let mut first = None;
        for chunk in [len / 2, len / 7, (len / 50).max(997)] {
            let split = analyze_chunked(&f, len, &name, opts, chunk).unwrap();
            if let Some(s) = &split {
                assert_eq!(s.conns, one.conns, "chunks of {chunk}");
                assert_eq!(s.summary, one.summary, "chunks of {chunk}");
                assert_eq!(s.udp, one.udp, "chunks of {chunk}");
            }
            used.push(split.is_some());
            if first.is_none() {
                first = Some(split);
            }
        }
        assert!(
            used.iter().all(|&u| u == used[0]),
            "chunks used at some sizes only: {used:?}"
        );
        let two = crate::analyze_file(&path, opts, 0).unwrap();
        assert_eq!(two.conns, one.conns);
        assert_eq!(two.summary, one.summary);
        assert_eq!(two.udp, one.udp);
        (one, first.flatten())
    }

    /// Where `boundary_after` puts the start of a chunk from the middle of `bytes`.
    fn boundary(bytes: &[u8]) -> Option<u64> {
        let lay = capture::pcap_layout(&bytes[..24]).unwrap();
        let mid = lay.first + (bytes.len() as u64 - lay.first) / 2;
        boundary_after(bytes, &lay, mid)
    }

    /// The start of each record of `recs` in its pcap file.
    fn starts(recs: &[Rec]) -> Vec<u64> {
        let mut at = 24;
        recs.iter()
            .map(|(_, d, _)| {
                let s = at;
                at += 16 + d.len() as u64;
                s
            })
            .collect()
    }

    /// A capture using everything the compact form takes apart: 8 IPv4 connections and one
    /// IPv6 connection interleaved, SYNs with window scale and SACK-permitted, ACKs with SACK
    /// blocks, a retransmission, a 4-tuple reused after the middle, a connection first seen
    /// after the middle at its SYN-ACK, a time going back and a gap of 5 s, a segment of
    /// 69 960 payload bytes (IP length 0, 70 000 on the wire), a UDP datagram with our record.
    fn mixed() -> Vec<Rec> {
        let (syn, synack, ack) = (SYN, SYN | ACK, ACK);
        // kind 3 (window scale 7), kind 4 (SACK permitted), padded
        let syn_opts = [1, 3, 3, 7, 4, 2, 1, 1];
        // one SACK block (kind 5) of 10 bytes: 1 + 1 + 8, padded to 12
        let sack = |l: u32, r: u32| {
            let mut o = vec![1, 1, 5, 10];
            o.extend_from_slice(&l.to_be_bytes());
            o.extend_from_slice(&r.to_be_bytes());
            o
        };
        let mut r: Vec<Rec> = Vec::new();
        let mut t = 1_700_000_000_000_000_000u64;
        let mut put = |t: &mut u64, p: Vec<u8>| {
            *t += 1000;
            // the large segment's IP length is 0: 70 000 bytes on the wire
            let wire = if p[0] == 0x45 && p[2..4] == [0, 0] {
                70_000
            } else {
                ip_len(&p)
            };
            r.push((*t, p, wire));
        };
        let hosts: Vec<(bool, u8, u16)> = (1..=8)
            .map(|k| (false, k, 5000 + u16::from(k)))
            .chain([(true, 9, 6000)])
            .collect();
        for &(v6, c, sp) in &hosts {
            put(&mut t, tcp(v6, c, sp, 100, 0, syn, 0, true, &syn_opts));
        }
        for &(v6, c, sp) in &hosts {
            put(
                &mut t,
                tcp(v6, c, sp, 900, 101, synack, 0, false, &syn_opts),
            );
        }
        for round in 0..30u32 {
            for &(v6, c, sp) in &hosts {
                let seq = 101 + round * 500;
                put(&mut t, tcp(v6, c, sp, seq, 901, ack, 500, true, &[]));
                if c == 3 && round % 7 == 0 {
                    put(&mut t, tcp(v6, c, sp, seq, 901, ack, 500, true, &[]));
                }
                let opt = if c == 2 && round % 5 == 1 {
                    sack(seq + 1000, seq + 1500)
                } else {
                    vec![]
                };
                put(&mut t, tcp(v6, c, sp, 901, seq + 500, ack, 0, false, &opt));
            }
            if round == 20 {
                // back in time by 0.5 ms, then a gap of 5 s
                t -= 500_000;
                put(&mut t, tcp(false, 1, 5001, 901, 101, ack, 0, false, &[]));
                t += 5_000_000_000;
            }
        }
        // Host 1's 4-tuple reused by a new connection, host 10 first seen at its SYN-ACK.
        put(
            &mut t,
            tcp(false, 1, 5001, 7000, 0, syn, 0, true, &syn_opts),
        );
        put(&mut t, tcp(false, 10, 7000, 300, 51, synack, 0, false, &[]));
        put(&mut t, tcp(false, 1, 5001, 7001, 0, ack, 100, true, &[]));
        put(&mut t, tcp(false, 10, 7000, 50, 301, ack, 10, true, &[]));
        // a large segment: 70 000 bytes on the wire, IP length 0
        let big = tcp(false, 4, 5004, 101 + 30 * 500, 901, ack, 69_960, true, &[]);
        put(&mut t, big);
        put(
            &mut t,
            tcp(
                false,
                4,
                5004,
                901,
                101 + 30 * 500 + 69_960,
                ack,
                0,
                false,
                &[],
            ),
        );
        // a UDP datagram carrying our record
        let rec = lasthop_apps::cbr::Record { seq: 7, sent_ns: 5 }.encode();
        let mut u = vec![
            0x45, 0, 0, 44, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 200,
        ];
        u.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 24, 0, 0]);
        u.extend_from_slice(&rec);
        put(&mut t, u);
        // closes host 5: its FIN and the server's ACK of it
        put(
            &mut t,
            tcp(false, 5, 5005, 101 + 30 * 500, 901, ack | FIN, 0, true, &[]),
        );
        put(
            &mut t,
            tcp(false, 5, 5005, 901, 101 + 30 * 500 + 1, ack, 0, false, &[]),
        );
        r
    }

    /// The split gives what one thread gives, in both byte orders and both timestamp units.
    #[test]
    fn split_gives_what_one_thread_gives() {
        let recs = mixed();
        for big in [false, true] {
            for nanos in [false, true] {
                let bytes = pcap(big, nanos, &recs);
                // The second half starts at a record near the middle.
                let mid = boundary(&bytes).unwrap();
                let s = starts(&recs);
                let k = s.iter().position(|&x| x == mid);
                let k = k.unwrap_or_else(|| panic!("{mid}: {:?}", &s[s.len() / 2 - 4..]));
                assert!(k > recs.len() / 3 && k < recs.len() * 2 / 3, "{k}");
                let (one, split) = check(&bytes);
                assert!(split.is_some(), "split not used (big {big}, nanos {nanos})");
                // 9 first connections, host 1's reuse, host 10
                assert_eq!(one.conns.len(), 11);
                // host 3: 30 data segments and 5 retransmitted (rounds 0, 7, 14, 21, 28)
                let h3 = &one.conns[2];
                assert_eq!((h3.c2s.data_pkts, h3.c2s.rexmt_pkts), (35, 5));
                // host 4: 30 × 500 bytes, then 70 000 - 40 in one segment
                assert_eq!(one.conns[3].c2s.data_bytes, 30 * 500 + 69_960);
                // host 2's server sent SACK blocks in rounds 1, 6, 11, 16, 21, 26
                assert_eq!(one.conns[1].s2c.sack_blocks, 6);
                // the reused 4-tuple and host 10 open connections 10 and 11
                assert_eq!(one.conns[9].client_isn, Some(7000));
                assert_eq!(one.conns[10].client.port(), 7000);
                assert!(one.conns[4].fin_acked.is_some());
                assert_eq!(one.udp.len(), 1);
                assert_eq!(one.summary.other, 1);
            }
        }
    }

    /// The split of an Ethernet capture (link-layer headers before the datagrams) gives what
    /// one thread gives.
    #[test]
    fn ethernet_capture() {
        let recs = mixed();
        let bytes = pcap_link(false, false, 1, &recs);
        let (one, split) = check(&bytes);
        assert!(split.is_some());
        assert_eq!(one.conns.len(), 11);
        assert_eq!(one.summary.linktype, 1);
        assert_eq!(one.udp.len(), 1);
        // host 3: 30 data segments and 5 retransmitted, as in the raw-IP capture
        assert_eq!(
            (one.conns[2].c2s.data_pkts, one.conns[2].c2s.rexmt_pkts),
            (35, 5)
        );
    }

    /// A capture of one connection: all its segments go to one shard (the other thread
    /// analyses nothing), and the result is still one thread's.
    #[test]
    fn one_connection() {
        let mut recs = Vec::new();
        let mut t = 1_000_000_000u64;
        let mut put = |p: Vec<u8>| {
            t += 1_000_000;
            let w = ip_len(&p);
            recs.push((t, p, w));
        };
        put(tcp(false, 1, 4000, 10, 0, SYN, 0, true, &[]));
        put(tcp(false, 1, 4000, 70, 11, SYN | ACK, 0, false, &[]));
        for k in 0..200u32 {
            put(tcp(false, 1, 4000, 11 + k * 100, 71, ACK, 100, true, &[]));
            put(tcp(
                false,
                1,
                4000,
                71,
                11 + (k + 1) * 100,
                ACK,
                0,
                false,
                &[],
            ));
        }
        let (one, split) = check(&pcap(false, true, &recs));
        let s = split.expect("split used");
        assert_eq!(s.conns.len(), 1);
        // 200 data segments of 100 bytes; 2 + 400 packets
        assert_eq!(
            (one.conns[0].c2s.data_pkts, one.conns[0].c2s.unique_bytes),
            (200, 20_000)
        );
        assert_eq!(one.summary.records, 402);
    }

    /// A middle inside a record whose payload is itself a run of pcap records (a capture of a
    /// capture file's transfer) finds a "boundary" that is not one: the first half's reading
    /// does not arrive there, and the split is dropped for the sequential two-thread reading,
    /// which gives one thread's result.
    #[test]
    fn false_boundary_falls_back() {
        let small = |t: u64, k: u32| -> Rec {
            let p = tcp(false, 1, 4000, 1 + k * 100, 1, ACK, 100, true, &[]);
            (t, p, 140)
        };
        let mut recs: Vec<Rec> = Vec::new();
        let mut t = 1_000_000_000u64;
        for k in 0..10u32 {
            t += 1000;
            recs.push(small(t, k));
        }
        // The payload: 300 records of another capture (its pcap bytes without the header).
        let inner: Vec<Rec> = (0..300).map(|k| small(t + u64::from(k), k)).collect();
        let inner = pcap(false, false, &inner)[24..].to_vec();
        let mut p = tcp(false, 1, 4000, 1001, 1, ACK, inner.len() as u32, true, &[]);
        p.extend_from_slice(&inner);
        let wire = p.len() as u32;
        recs.push((t + 1000, p, wire));
        for k in 0..10u32 {
            t += 1000;
            let p = tcp(false, 1, 4000, 1, 1101 + k * 100, ACK, 0, false, &[]);
            recs.push((t + 10_000, p, 40));
        }
        let bytes = pcap(false, false, &recs);
        let mid = boundary(&bytes).unwrap();
        let s = starts(&recs);
        // inside the 11th record (its data starts at s[10] + 16)
        assert!(mid > s[10] + 16 && mid < s[11], "{mid} {s:?}");
        let (one, split) = check(&bytes);
        assert!(split.is_none());
        assert_eq!(one.conns[0].c2s.data_bytes, 10 * 100 + inner.len() as u64);
    }

    /// A capture of bulk transfers cut to their headers (every record 56 bytes), as the
    /// generated capture of BENCHMARKS.md: 20 connections of 536-byte segments from time 0,
    /// window 65 535, checksums 0. Its bytes are so regular that runs of 64 "record headers"
    /// chain up from inside records (one was found 49 bytes into a record, 10 MB in, with
    /// 196 KB strides); only the datagrams' lengths tell them apart. Every chunk boundary
    /// guessed is a record's start, and the chunks are used.
    #[test]
    fn regular_capture_of_headers() {
        // `tcp`'s datagram with the benchmark's window of 65 535 (its chained bytes)
        let hdr = |c2s: bool, port: u16, seq: u32, ack: u32, payload: u32| {
            let mut p = tcp(false, 1, port, seq, ack, ACK, payload, c2s, &[]);
            p[34..36].copy_from_slice(&[0xff, 0xff]);
            (p, 40 + payload)
        };
        let mut recs = Vec::new();
        let mut t = 0u64;
        let mut seq = [1u32; 20];
        while recs.len() < 400_000 {
            for (k, s) in seq.iter_mut().enumerate() {
                let port = 10_000 + k as u16;
                t += 50_000;
                for d in 0..2 {
                    let (p, w) = hdr(false, port, *s + d * 536, 1, 536);
                    recs.push((t + u64::from(d) * 1000, p, w));
                }
                *s += 2 * 536;
                let (p, w) = hdr(true, port, 1, *s, 0);
                recs.push((t + 3000, p, w));
            }
        }
        let bytes = pcap(false, false, &recs);
        let lay = capture::pcap_layout(&bytes[..24]).unwrap();
        let s = starts(&recs);
        for chunk in [CHUNK, 1 << 20, 333_333] {
            let b = chunk_bounds(&bytes, &lay, chunk);
            assert!(b.len() > 8, "{chunk}: {b:?}");
            for x in &b[..b.len() - 1] {
                assert!(
                    s.binary_search(x).is_ok(),
                    "chunks of {chunk}: {x} is not a start"
                );
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.pcap");
        std::fs::write(&path, &bytes).unwrap();
        let f = File::open(&path).unwrap();
        let split = analyze_split(&f, bytes.len() as u64, "c", Options::default()).unwrap();
        let split = split.expect("the chunks used");
        assert_eq!(split.conns.len(), 20);
        assert_eq!(split.summary.records, recs.len() as u64);
        // every segment new data: 536 bytes each, two thirds of the records
        let bytes_sent: u64 = split.conns.iter().map(|c| c.bytes()).sum();
        assert_eq!(bytes_sent, recs.len() as u64 / 3 * 2 * 536);
    }

    /// A capture that ends in the middle of a record gives one thread's warning (300 records:
    /// the run of 64 record headers from the middle that finds the boundary ends before the
    /// last record, cut short).
    #[test]
    fn truncated_capture() {
        let mut recs = Vec::new();
        for k in 0..300u32 {
            let p = tcp(
                false,
                1 + (k % 3) as u8,
                4000,
                1 + k * 10,
                1,
                ACK,
                10,
                true,
                &[],
            );
            recs.push((u64::from(k) * 1000, p, 50));
        }
        let mut bytes = pcap(true, false, &recs);
        bytes.truncate(bytes.len() - 7);
        let (one, split) = check(&bytes);
        assert!(split.is_some());
        assert_eq!(one.summary.records, 299);
        assert_eq!(one.summary.warnings.len(), 1);
        assert!(one.summary.warnings[0].contains("record 300"));
    }

    /// 1 000 records of 10 000 captured bytes each (10 MB), of three connections, 1 ms apart.
    fn ten_kb_records() -> Vec<(u64, Vec<u8>, u32)> {
        (0..1000u32)
            .map(|k| {
                let c = 1 + (k % 3) as u8;
                let mut p = tcp(false, c, 4000, 1 + k * 9960, 1, ACK, 9960, true, &[]);
                p.resize(10_000, 0);
                (u64::from(k) * 1000, p, 10_000)
            })
            .collect()
    }

    /// A record over 8 MB (pcap-file's limit) after the middle ends the capture, with one
    /// thread's warning.
    #[test]
    fn record_over_8_mb_ends_the_capture() {
        // 1 000 records of 10 000 captured bytes (10 MB), so that the middle falls before
        // the large record; the run of 64 headers that finds it spans 640 KB.
        let mut recs = ten_kb_records();
        // 16 + 8 000 000 bytes with its header: over the limit
        let mut p = tcp(false, 1, 4000, 3001, 1, ACK, 7_999_960, true, &[]);
        p.resize(8_000_000, 0);
        recs.push((1_000_000, p, 8_000_000));
        let p = tcp(false, 1, 4000, 8_003_001, 1, ACK, 10, true, &[]);
        recs.push((1_001_000, p, 50));
        let bytes = pcap(false, true, &recs);
        let (one, split) = check(&bytes);
        assert!(split.is_some());
        assert_eq!(one.summary.records, 1000);
        assert!(one.summary.warnings[0].contains("record 1001"));
    }

    /// A record longer than a chunk (5 MB, after the middle: no boundary is found inside it)
    /// is read whole, and the records after it.
    #[test]
    fn record_longer_than_a_chunk() {
        let mut recs = ten_kb_records();
        let mut p = tcp(false, 1, 4000, 3_320_001, 1, ACK, 4_999_960, true, &[]);
        p.resize(5_000_000, 0);
        recs.push((1_000_000, p, 5_000_000));
        for k in 0..10u32 {
            let p = tcp(false, 2, 4000, 1, 1 + k, ACK, 0, false, &[]);
            recs.push((1_001_000 + u64::from(k), p, 40));
        }
        let (one, split) = check(&pcap(true, false, &recs));
        assert!(split.is_some());
        assert_eq!(one.summary.records, 1011);
        assert!(one.summary.warnings.is_empty());
        // host 1: 334 records of 9 960 payload bytes (k = 0, 3, ..., 999), then 4 999 960
        assert_eq!(one.conns[0].c2s.data_bytes, 334 * 9960 + 4_999_960);
    }

    /// pcapng is not split: the sequential two-thread reading gives one thread's result.
    #[test]
    fn pcapng_falls_back() {
        use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
        use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
        use pcap_file::pcapng::PcapNgWriter;
        use pcap_file::DataLink;
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::RAW,
            snaplen: 0,
            options: vec![],
        })
        .unwrap();
        for k in 0..50u32 {
            let p = tcp(
                false,
                1 + (k % 4) as u8,
                4000,
                1 + k * 10,
                1,
                ACK,
                10,
                true,
                &[],
            );
            w.write_pcapng_block(EnhancedPacketBlock {
                interface_id: 0,
                timestamp: std::time::Duration::from_micros(u64::from(k) * 10),
                original_len: 50,
                data: std::borrow::Cow::Owned(p),
                options: vec![],
            })
            .unwrap();
        }
        let (one, split) = check(&w.into_inner());
        assert!(split.is_none());
        assert_eq!(one.conns.len(), 4);
    }
}
