//! Reading captures: pcap records (microsecond or nanosecond, either byte order) and pcapng
//! blocks (enhanced and simple packets, per-interface link type and time resolution), link-layer
//! headers, and the IPv4/IPv6 + TCP fields the statistics need, options included.
//!
//! Lengths come from the IP header (total length / payload length), never from the captured
//! bytes: a capture may hold only the headers (our simulator writes header-only records whose
//! original length is the full datagram), and that is normal, not an error.

use crate::Error;
use lasthop_core::{wire, FlowKey, Time};
use pcap_file::pcap::{PcapParser, PcapReader};
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{PcapError, TsResolution};
use std::io::Read;

/// Link types this reader understands (pcap `network` field).
pub const LINKTYPE_NULL: u32 = 0;
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_LOOP: u32 = 108;
pub const LINKTYPE_LINUX_SLL: u32 = 113;
pub const LINKTYPE_IPV4: u32 = 228;
pub const LINKTYPE_IPV6: u32 = 229;
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

/// TCP flag bits (`lasthop_core::wire`'s).
pub use lasthop_core::wire::{ACK, FIN, RST, SYN};

/// One TCP segment as the analyser sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpSeg {
    pub time: Time,
    pub flow: FlowKey,
    pub ip_id: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Payload bytes, from the IP length field.
    pub payload_len: u32,
    /// SACK blocks (left, right) in the order they appear, at most 4.
    pub sack: [(u32, u32); 4],
    pub sack_count: u8,
    /// The SACK-permitted option (in SYNs).
    pub sack_permitted: bool,
    /// The window-scale option (in SYNs).
    pub wscale: Option<u8>,
}

impl TcpSeg {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    pub fn sacks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_count as usize]
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Parses an IP datagram (IPv4, or IPv6 whose next header is TCP) holding a TCP segment.
/// `ip` may be truncated after the TCP header. `wire_len` is the datagram's length on the wire
/// when known (used only when the IP length field is zero, as with segmentation offload).
/// Returns `None` for anything else: other protocols, later fragments, headers cut short.
#[inline]
pub fn parse_tcp(time: Time, ip: &[u8], wire_len: Option<u32>) -> Option<TcpSeg> {
    let mut seg = TcpSeg::EMPTY;
    parse_tcp_into(time, ip, wire_len, &mut seg).then_some(seg)
}

impl TcpSeg {
    /// A placeholder for [`parse_tcp_into`] to fill.
    pub const EMPTY: TcpSeg = TcpSeg {
        time: Time(0),
        flow: FlowKey::UNKNOWN,
        ip_id: 0,
        seq: 0,
        ack: 0,
        flags: 0,
        window: 0,
        payload_len: 0,
        sack: [(0, 0); 4],
        sack_count: 0,
        sack_permitted: false,
        wscale: None,
    };
}

/// Whether the first 40 bytes of a datagram are IPv4 without options, not a fragment, carrying
/// TCP without options ([`parse_tcp_into`]'s common case).
#[inline(always)]
pub(crate) fn plain_ipv4_tcp(h: &[u8]) -> bool {
    h[0] == 0x45 && h[9] == wire::PROTO_TCP && h[6] & 0x3f == 0 && h[7] == 0 && h[32] >> 4 == 5
}

/// [`parse_tcp`] into `seg` (which is left unspecified when it returns `false`).
///
/// The common case is inlined into the caller and written field by field into a segment the
/// caller keeps: a segment returned by value was copied with wide loads of what narrow stores
/// had just written, and those store-forwarding stalls were about a quarter of the analysis.
#[inline(always)]
pub fn parse_tcp_into(time: Time, ip: &[u8], wire_len: Option<u32>, seg: &mut TcpSeg) -> bool {
    // The common case first: IPv4 without options, not a fragment, TCP without options.
    if let Some(h) = ip.get(..40) {
        if plain_ipv4_tcp(h) {
            let b16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
            let b32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
            let total = u32::from(b16(2));
            let dgram = if total != 0 {
                total
            } else {
                wire_len.unwrap_or(ip.len() as u32)
            };
            seg.time = time;
            seg.flow.proto = 6;
            seg.flow.src = std::net::Ipv4Addr::new(h[12], h[13], h[14], h[15]).into();
            seg.flow.dst = std::net::Ipv4Addr::new(h[16], h[17], h[18], h[19]).into();
            seg.flow.sport = b16(20);
            seg.flow.dport = b16(22);
            seg.ip_id = b16(4);
            seg.seq = b32(24);
            seg.ack = b32(28);
            seg.flags = h[33];
            seg.window = b16(34);
            seg.payload_len = dgram.saturating_sub(20).saturating_sub(20);
            seg.sack_count = 0;
            seg.sack_permitted = false;
            seg.wscale = None;
            return true;
        }
    }
    match parse_tcp_other(time, ip, wire_len) {
        Some(s) => {
            *seg = s;
            true
        }
        None => false,
    }
}

/// [`parse_tcp`] of anything but IPv4 without options carrying TCP without options.
#[inline(never)]
pub(crate) fn parse_tcp_other(time: Time, ip: &[u8], wire_len: Option<u32>) -> Option<TcpSeg> {
    let v = wire::parse_ip(ip)?;
    if v.proto != wire::PROTO_TCP {
        return None;
    }
    // A later fragment, or a first fragment whose TCP payload is split: skip.
    if v.is_fragment() {
        return None;
    }
    // IPv6: the length field is the payload's; IPv4: the total, whose header is subtracted.
    let ip_payload_len = v
        .datagram_len(wire_len, ip.len())
        .saturating_sub(v.header_len as u32);
    let tcp = wire::parse_tcp(v.transport(ip)?, false)?;
    let doff = tcp.header_len;
    let mut seg = TcpSeg {
        time,
        flow: FlowKey {
            proto: 6,
            src: v.src,
            dst: v.dst,
            sport: tcp.sport,
            dport: tcp.dport,
        },
        ip_id: v.ip_id,
        seq: tcp.seq,
        ack: tcp.ack,
        flags: tcp.flags,
        window: tcp.window,
        payload_len: ip_payload_len.saturating_sub(doff as u32),
        sack: [(0, 0); 4],
        sack_count: 0,
        sack_permitted: false,
        wscale: None,
    };
    // Options: whatever of them was captured.
    let opts = tcp.options;
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let Some(&len) = opts.get(i + 1) else { break };
                let len = usize::from(len);
                if len < 2 || i + len > opts.len() {
                    break;
                }
                let body = &opts[i + 2..i + len];
                match kind {
                    3 if body.len() == 1 => seg.wscale = Some(body[0]),
                    4 => seg.sack_permitted = true,
                    5 => {
                        for b in body.chunks_exact(8).take(4) {
                            let l = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                            let r = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                            seg.sack[seg.sack_count as usize] = (l, r);
                            seg.sack_count += 1;
                        }
                    }
                    _ => {}
                }
                i += len;
            }
        }
    }
    Some(seg)
}

/// Where the IP datagram starts in a record of the given link type, or `None` if the record
/// holds no IP (ARP, a truncated link header ...).
#[inline(always)]
fn ip_offset(linktype: u32, rec: &[u8]) -> Option<usize> {
    let ip_at = |off: usize| -> Option<usize> {
        let v = rec.get(off)? >> 4;
        (v == 4 || v == 6).then_some(off)
    };
    match linktype {
        LINKTYPE_RAW | LINKTYPE_IPV4 | LINKTYPE_IPV6 | 12 | 14 => ip_at(0),
        LINKTYPE_NULL | LINKTYPE_LOOP => ip_at(4),
        LINKTYPE_ETHERNET => {
            let mut off = 12;
            let mut ethertype = be16(rec, off)?;
            // 802.1Q / 802.1ad tags.
            while ethertype == 0x8100 || ethertype == 0x88a8 {
                off += 4;
                ethertype = be16(rec, off)?;
            }
            match ethertype {
                0x0800 | 0x86dd => ip_at(off + 2),
                _ => None,
            }
        }
        LINKTYPE_LINUX_SLL => match be16(rec, 14)? {
            0x0800 | 0x86dd => ip_at(16),
            _ => None,
        },
        LINKTYPE_LINUX_SLL2 => match be16(rec, 0)? {
            0x0800 | 0x86dd => ip_at(20),
            _ => None,
        },
        _ => None,
    }
}

fn supported(linktype: u32) -> bool {
    matches!(
        linktype,
        LINKTYPE_NULL
            | LINKTYPE_ETHERNET
            | LINKTYPE_RAW
            | LINKTYPE_LOOP
            | LINKTYPE_LINUX_SLL
            | LINKTYPE_IPV4
            | LINKTYPE_IPV6
            | LINKTYPE_LINUX_SLL2
            | 12
            | 14
    )
}

/// What a pass over a capture saw besides the TCP segments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// All records.
    pub records: u64,
    /// Records that were not (parseable) TCP.
    pub other: u64,
    /// The capture's link type.
    pub linktype: u32,
    /// Non-fatal problems: a capture cut off in the middle of a record, a bad record header.
    pub warnings: Vec<String>,
}

/// Reads every record of a pcap stream and hands each TCP segment to `f`, in file order.
///
/// A capture under 1 MiB is read whole and parsed from memory (a run of the simulator analyses
/// one small capture per host); a larger one is streamed through a 1 MiB buffer.
pub fn read_pcap<R: Read>(
    reader: R,
    source: &str,
    mut f: impl FnMut(TcpSeg),
) -> Result<ReadSummary, Error> {
    read_pcap_ip(reader, source, tcp_only(&mut f))
}

/// Hands `f` the TCP segment of each IP record, and counts the others as not TCP.
fn tcp_only(f: &mut impl FnMut(TcpSeg)) -> impl FnMut(Time, &[u8], u32) -> bool + '_ {
    move |t, ip, wire| match parse_tcp(t, ip, Some(wire)) {
        Some(s) => {
            f(s);
            true
        }
        None => false,
    }
}

/// [`read_pcap`] for any IP record: `f(time, ip_bytes, wire_len)` gets each record's IP
/// datagram (as captured, maybe only its head) and its length on the wire, and says whether it
/// used it (records it did not use, and records holding no IP, count in
/// [`ReadSummary::other`]).
///
/// The records are parsed in place from one buffer (no copy per record): a capture under 1 MiB is
/// read whole, a larger one streamed through the same 1 MiB buffer, grown for a larger record.
/// A capture cut short follows pcap-file's reader's rules: a record that is not whole, or one
/// over 8 MB (pcap-file's buffer), is the end.
pub fn read_pcap_ip<R: Read>(
    mut reader: R,
    source: &str,
    mut f: impl FnMut(Time, &[u8], u32) -> bool,
) -> Result<ReadSummary, Error> {
    // Refills of 1 MiB keep the records in the core's cache between the kernel's copy and the
    // parse; a record up to 8 MB (pcap-file's limit) still fits, the buffer growing for it.
    const BUF: usize = 1 << 20;
    let io_err = |e: std::io::Error| Error::Io {
        path: source.to_string(),
        error: e,
    };
    let mut buf = Vec::new();
    (&mut reader)
        .take(BUF as u64)
        .read_to_end(&mut buf)
        .map_err(io_err)?;
    // Whether the whole capture is in `buf`.
    let mut eof = buf.len() < BUF;
    let (rest, parser) = PcapParser::new(&buf).map_err(|e| match e {
        PcapError::IncompleteBuffer => Error::NotPcap {
            path: source.to_string(),
            detail: "shorter than a pcap header".into(),
        },
        other => not_pcap(source, other),
    })?;
    let header = parser.header();
    let (mut sum, nanos) = start_summary(&header, source)?;
    let big = header.endianness == pcap_file::Endianness::Big;
    let mut pos = buf.len() - rest.len();
    let mut len = buf.len();
    let linktype = sum.linktype;
    loop {
        // Every whole record in the buffer.
        let chunk = &buf[pos..len];
        pos += if big {
            records::<true>(chunk, nanos, linktype, &mut sum, &mut f)
        } else {
            records::<false>(chunk, nanos, linktype, &mut sum, &mut f)
        };
        let avail = len - pos;
        let need = if avail >= 16 {
            16usize.saturating_add(rec_u32(big, &buf[pos + 8..pos + 12]) as usize)
        } else {
            16
        };
        if !eof && need <= MAX_RECORD {
            // Move the partial record to the front and read more.
            buf.copy_within(pos..len, 0);
            len = avail;
            pos = 0;
            if need > buf.len() {
                buf.resize(need, 0);
            }
            while len < buf.len() {
                match reader.read(&mut buf[len..]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => len += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io_err(e)),
                }
            }
            continue;
        }
        if avail > 0 {
            sum.warnings.push(truncated(source, &sum));
        }
        break;
    }
    Ok(sum)
}

/// How a pcap file's records are laid out (from its header), for `split`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PcapLayout {
    pub big: bool,
    pub nanos: bool,
    pub linktype: u32,
    /// Where the first record starts.
    pub first: u64,
}

/// The layout of a pcap file from its first bytes, `None` when they are not a pcap header of a
/// supported link type (the sequential reader then gives the error).
pub(crate) fn pcap_layout(head: &[u8]) -> Option<PcapLayout> {
    let (rest, parser) = PcapParser::new(head).ok()?;
    let header = parser.header();
    let (sum, nanos) = start_summary(&header, "").ok()?;
    Some(PcapLayout {
        big: header.endianness == pcap_file::Endianness::Big,
        nanos,
        linktype: sum.linktype,
        first: (head.len() - rest.len()) as u64,
    })
}

/// Whether a plausible run of `chain` record headers starts at `at` of `bytes` (which start at
/// file offset `base` of a file of `file_len` bytes): each with a time within a day of the
/// first one's and a fraction of a second under the unit, a captured length of 1 to 256 KiB
/// and not above the original length, the next one right after it; at least half of them
/// holding an IP datagram whose length field agrees with the original length (at most 64
/// bytes of link-layer padding and trailer), and none holding one that disagrees; or the run
/// ends exactly at the end of the file. Only a guess (record bytes can look like headers, a
/// capture of a capture's transfer has whole runs of them): `split` checks that the reading
/// before it arrives exactly there. The datagrams' lengths make a false run most unlikely in
/// a regular capture, where the bytes at a fixed place in every record chain up as headers.
pub(crate) fn plausible_records(
    lay: &PcapLayout,
    bytes: &[u8],
    at: usize,
    base: u64,
    file_len: u64,
    chain: usize,
) -> bool {
    const DAY: u32 = 86_400;
    let unit = if lay.nanos { 1_000_000_000 } else { 1_000_000 };
    let mut pos = at;
    let mut first_sec = None;
    let mut ip = 0;
    for k in 0..chain {
        if base + pos as u64 == file_len {
            return 2 * ip >= k;
        }
        let Some(h) = bytes.get(pos..pos + 16) else {
            return false;
        };
        let sec = rec_u32(lay.big, &h[0..4]);
        let frac = rec_u32(lay.big, &h[4..8]);
        let incl = rec_u32(lay.big, &h[8..12]);
        let orig = rec_u32(lay.big, &h[12..16]);
        let t0 = *first_sec.get_or_insert(sec);
        if sec.abs_diff(t0) > DAY || frac >= unit || incl == 0 || incl > 256 << 10 || incl > orig {
            return false;
        }
        let data = &bytes[pos + 16..bytes.len().min(pos + 16 + incl as usize)];
        match ip_length_agrees(lay.linktype, data, orig) {
            Some(true) => ip += 1,
            Some(false) => return false,
            None => {}
        }
        pos += 16 + incl as usize;
    }
    2 * ip >= chain
}

/// Whether the IP datagram of a record (`data`, captured bytes, of `orig` bytes on the wire)
/// has a length field that fits the record: `None` when it holds no IP datagram (or its
/// length field is not captured).
fn ip_length_agrees(linktype: u32, data: &[u8], orig: u32) -> Option<bool> {
    let off = ip_offset(linktype, data)?;
    let ip = &data[off..];
    let room = orig.checked_sub(off as u32)?;
    let len = match ip[0] >> 4 {
        4 => {
            let total = u32::from(be16(ip, 2)?);
            if total == 0 {
                // segmentation offload: the length is left 0
                return Some(room >= 40);
            }
            total
        }
        _ => u32::from(be16(ip, 4)?) + 40,
    };
    Some(len <= room && room - len <= 64)
}

/// Whether the record at the start of `bytes` is longer than the readers take (pcap-file's
/// limit, which ends the capture there).
pub(crate) fn over_limit(lay: &PcapLayout, bytes: &[u8]) -> bool {
    bytes
        .get(..16)
        .is_some_and(|h| 16usize.saturating_add(rec_u32(lay.big, &h[8..12]) as usize) > MAX_RECORD)
}

/// The warning of a capture that ends in the middle of a record, `records` whole records read.
pub(crate) fn truncated_at(source: &str, records: u64) -> String {
    format!(
        "{source}: capture ends in the middle of record {} (ignored)",
        records + 1
    )
}

/// The largest record read (pcap-file's buffer): a larger one ends the capture.
const MAX_RECORD: usize = 8_000_000;

/// A record header's 32-bit field in the capture's byte order.
#[inline(always)]
fn rec_u32(big: bool, b: &[u8]) -> u32 {
    let w = [b[0], b[1], b[2], b[3]];
    if big {
        u32::from_be_bytes(w)
    } else {
        u32::from_le_bytes(w)
    }
}

/// Hands `f` each whole record at the start of `bytes` (records in byte order `BIG`), and
/// returns how many bytes they took: the rest is less than a record.
#[inline(always)]
pub(crate) fn records<const BIG: bool>(
    bytes: &[u8],
    nanos: bool,
    linktype: u32,
    sum: &mut ReadSummary,
    f: &mut impl FnMut(Time, &[u8], u32) -> bool,
) -> usize {
    let mut pos = 0;
    while let Some(h) = bytes.get(pos..pos + 16) {
        let need = 16usize.saturating_add(rec_u32(BIG, &h[8..12]) as usize);
        // pcap-file's limit, the end of the capture (only `split` hands over more bytes).
        if need > MAX_RECORD {
            break;
        }
        let Some(rec) = bytes.get(pos..pos.saturating_add(need)) else {
            break;
        };
        let ts_sec = rec_u32(BIG, &h[0..4]);
        let ts_frac = rec_u32(BIG, &h[4..8]);
        let orig_len = rec_u32(BIG, &h[12..16]);
        let data = &rec[16..];
        pos += need;
        sum.records += 1;
        let frac = u64::from(ts_frac);
        let ns = u64::from(ts_sec) * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        let used = ip_offset(linktype, data).is_some_and(|off| {
            let wire = orig_len.saturating_sub(off as u32);
            f(Time(ns), &data[off..], wire)
        });
        if !used {
            sum.other += 1;
        }
    }
    pos
}

fn not_pcap(source: &str, e: PcapError) -> Error {
    match e {
        PcapError::IoError(io) if io.kind() != std::io::ErrorKind::UnexpectedEof => Error::Io {
            path: source.to_string(),
            error: io,
        },
        other => Error::NotPcap {
            path: source.to_string(),
            detail: other.to_string(),
        },
    }
}

/// The capture's header: its link type (refused when unsupported) and timestamp unit.
fn start_summary(
    header: &pcap_file::pcap::PcapHeader,
    source: &str,
) -> Result<(ReadSummary, bool), Error> {
    let linktype = u32::from(header.datalink);
    if !supported(linktype) {
        return Err(Error::UnsupportedLinkType {
            path: source.to_string(),
            linktype,
        });
    }
    let nanos = header.ts_resolution == TsResolution::NanoSecond;
    let sum = ReadSummary {
        linktype,
        ..Default::default()
    };
    Ok((sum, nanos))
}

fn truncated(source: &str, sum: &ReadSummary) -> String {
    format!(
        "{source}: capture ends in the middle of record {} (ignored)",
        sum.records + 1
    )
}

/// One pcapng interface: its link type and timestamp unit.
struct Iface {
    linktype: u32,
    /// Nanoseconds = ticks * mul / div.
    mul: u128,
    div: u128,
}

impl Iface {
    fn ns(&self, ticks: u128) -> u64 {
        (ticks * self.mul / self.div).min(u128::from(u64::MAX)) as u64
    }
}

/// Reads every packet of a pcapng stream (enhanced and simple packet blocks, any number of
/// interfaces and sections) and hands each TCP segment to `f`. Timestamps honour each
/// interface's `if_tsresol` (microseconds by default).
pub fn read_pcapng<R: Read>(
    reader: R,
    source: &str,
    mut f: impl FnMut(TcpSeg),
) -> Result<ReadSummary, Error> {
    read_pcapng_ip(reader, source, tcp_only(&mut f))
}

/// [`read_pcapng`] for any IP record (see [`read_pcap_ip`]).
pub fn read_pcapng_ip<R: Read>(
    reader: R,
    source: &str,
    mut f: impl FnMut(Time, &[u8], u32) -> bool,
) -> Result<ReadSummary, Error> {
    let mut r = PcapNgReader::new(reader).map_err(|e| match e {
        PcapError::IoError(io) if io.kind() != std::io::ErrorKind::UnexpectedEof => Error::Io {
            path: source.to_string(),
            error: io,
        },
        other => Error::NotPcap {
            path: source.to_string(),
            detail: format!("bad pcapng section header: {other}"),
        },
    })?;
    let mut sum = ReadSummary::default();
    let mut ifaces: Vec<Iface> = Vec::new();
    let mut warned_linktype = false;
    while let Some(block) = r.next_block() {
        let block = match block {
            Ok(b) => b,
            Err(PcapError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                sum.warnings.push(format!(
                    "{source}: capture ends in the middle of a block after {} records (ignored)",
                    sum.records
                ));
                break;
            }
            Err(PcapError::IoError(e)) => {
                return Err(Error::Io {
                    path: source.to_string(),
                    error: e,
                })
            }
            Err(e) => {
                sum.warnings.push(format!(
                    "{source}: block after record {}: {e}; reading stopped",
                    sum.records
                ));
                break;
            }
        };
        let (iface, ticks, orig_len, data): (u32, u128, u32, &[u8]) = match &block {
            Block::SectionHeader(_) => {
                ifaces.clear();
                continue;
            }
            Block::InterfaceDescription(idb) => {
                let mut mul = 1000u128; // default: microseconds
                let mut div = 1u128;
                for o in &idb.options {
                    if let InterfaceDescriptionOption::IfTsResol(res) = o {
                        let exp = u32::from(res & 0x7f).min(60);
                        if res & 0x80 == 0 {
                            let unit = 10u128.pow(exp.min(30));
                            (mul, div) = (1_000_000_000, unit);
                        } else {
                            (mul, div) = (1_000_000_000, 1u128 << exp);
                        }
                    }
                }
                let linktype = u32::from(idb.linktype);
                if sum.linktype == 0 && ifaces.is_empty() {
                    sum.linktype = linktype;
                }
                ifaces.push(Iface { linktype, mul, div });
                continue;
            }
            Block::EnhancedPacket(epb) => (
                epb.interface_id,
                epb.timestamp.as_nanos(),
                epb.original_len,
                &epb.data[..],
            ),
            Block::SimplePacket(spb) => (0, 0, spb.original_len, &spb.data[..]),
            _ => continue,
        };
        sum.records += 1;
        let Some(ifc) = ifaces.get(iface as usize) else {
            sum.other += 1;
            continue;
        };
        if !supported(ifc.linktype) {
            if !warned_linktype {
                warned_linktype = true;
                sum.warnings.push(format!(
                    "{source}: packets of an interface with unsupported link type {} are skipped",
                    ifc.linktype
                ));
            }
            sum.other += 1;
            continue;
        }
        let t = Time(ifc.ns(ticks));
        let used = ip_offset(ifc.linktype, data).is_some_and(|off| {
            let wire = orig_len.saturating_sub(off as u32);
            f(t, &data[off..], wire)
        });
        if !used {
            sum.other += 1;
        }
    }
    Ok(sum)
}

/// Copies a pcap capture with microsecond timestamps (same link type and records), for tools
/// that misread nanosecond pcaps, tcptrace among them. Returns the number of records copied.
pub fn write_usec_copy<R: Read, W: std::io::Write>(
    reader: R,
    source: &str,
    out: W,
) -> Result<u64, Error> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let mut r = PcapReader::new(reader).map_err(|e| Error::NotPcap {
        path: source.to_string(),
        detail: e.to_string(),
    })?;
    let h = r.header();
    let header = PcapHeader {
        ts_resolution: TsResolution::MicroSecond,
        snaplen: h.snaplen.max(65_535),
        ..h
    };
    let io = |e: PcapError| match e {
        PcapError::IoError(e) => Error::Io {
            path: source.to_string(),
            error: e,
        },
        e => Error::NotPcap {
            path: source.to_string(),
            detail: e.to_string(),
        },
    };
    let mut w = PcapWriter::with_header(out, header).map_err(io)?;
    let nanos = h.ts_resolution == TsResolution::NanoSecond;
    let mut n = 0;
    while let Some(rec) = r.next_raw_packet() {
        let rec = match rec {
            Ok(rec) => rec,
            Err(PcapError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io(e)),
        };
        let frac = u64::from(rec.ts_frac);
        let ns = u64::from(rec.ts_sec) * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        let ts = std::time::Duration::from_nanos(ns / 1000 * 1000);
        let orig = rec.orig_len.max(rec.data.len() as u32);
        w.write_packet(&PcapPacket::new(ts, orig, &rec.data))
            .map_err(io)?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{PacketBuilder, TcpOptionElement};

    fn v6_segment() -> Vec<u8> {
        let mut out = Vec::new();
        PacketBuilder::ipv6(
            [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
            64,
        )
        .tcp(443, 50000, 7, 1000)
        .ack(99)
        .options(&[TcpOptionElement::SelectiveAcknowledgement(
            (10, 20),
            [Some((30, 40)), None, None],
        )])
        .unwrap()
        .write(&mut out, &[0u8; 300])
        .unwrap();
        out
    }

    #[test]
    fn ipv6_with_sack_and_header_only_capture() {
        let full = v6_segment();
        let hdr_len = full.len() - 300;
        let s = parse_tcp(Time(5), &full[..hdr_len], Some(full.len() as u32)).unwrap();
        assert_eq!(s.payload_len, 300);
        assert_eq!(
            (s.seq, s.ack, s.flow.sport, s.flow.dport),
            (7, 99, 443, 50000)
        );
        assert_eq!(s.sacks(), &[(10, 20), (30, 40)]);
        assert_eq!(s.flow.to_string(), "tcp:2001:db8::1:443>2001:db8::2:50000");
    }

    #[test]
    fn link_layer_offsets() {
        let ip = v6_segment();
        let mut vlan = vec![0u8; 12];
        vlan.extend_from_slice(&[0x81, 0x00, 0, 5, 0x86, 0xdd]);
        vlan.extend_from_slice(&ip);
        assert_eq!(ip_offset(LINKTYPE_ETHERNET, &vlan), Some(18));
        let mut sll2 = vec![0x86, 0xdd];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip);
        assert_eq!(ip_offset(LINKTYPE_LINUX_SLL2, &sll2), Some(20));
        let mut null = vec![24, 0, 0, 0];
        null.extend_from_slice(&ip);
        assert_eq!(ip_offset(LINKTYPE_NULL, &null), Some(4));
        // ARP over Ethernet, and a cut-off header, hold no IP
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06, 0, 1]);
        assert_eq!(ip_offset(LINKTYPE_ETHERNET, &arp), None);
        assert_eq!(ip_offset(LINKTYPE_LINUX_SLL, &[0u8; 10]), None);
        assert!(!supported(105));
    }

    #[test]
    fn fragments_and_other_protocols_are_skipped() {
        let mut out = Vec::new();
        PacketBuilder::ipv4([1, 2, 3, 4], [5, 6, 7, 8], 64)
            .tcp(1, 2, 3, 4)
            .write(&mut out, &[0u8; 10])
            .unwrap();
        assert!(parse_tcp(Time(0), &out, None).is_some());
        let mut frag = out.clone();
        frag[6] = 0x20; // more fragments
        assert!(parse_tcp(Time(0), &frag, None).is_none());
        let mut udp = out.clone();
        udp[9] = 17;
        assert!(parse_tcp(Time(0), &udp, None).is_none());
        // IP length 0 (segmentation offload): the wire length is used
        let mut tso = out.clone();
        tso[2] = 0;
        tso[3] = 0;
        assert_eq!(
            parse_tcp(Time(0), &tso, Some(1500)).unwrap().payload_len,
            1460
        );
    }

    /// A capture of `n` IPv4 TCP records (every 7th with a SACK option) in the given byte
    /// order, nanosecond timestamps, its last record cut short.
    fn capture(n: u32, endianness: pcap_file::Endianness) -> Vec<u8> {
        use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
        let header = PcapHeader {
            datalink: pcap_file::DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness,
            ..Default::default()
        };
        let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
        for k in 0..n {
            let mut ip = Vec::new();
            let b = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
                .tcp(1000 + (k % 5) as u16, 80, k * 100, 1000)
                .ack(k);
            let b = if k % 7 == 0 {
                b.options(&[TcpOptionElement::SelectiveAcknowledgement(
                    (k, k + 1),
                    [None; 3],
                )])
                .unwrap()
            } else {
                b
            };
            b.write(&mut ip, &[0u8; 100]).unwrap();
            let ts = std::time::Duration::from_nanos(u64::from(k) * 1_000_003);
            w.write_packet(&PcapPacket::new(ts, ip.len() as u32, &ip[..ip.len() - 100]))
                .unwrap();
        }
        let mut v = w.into_writer();
        v.truncate(v.len() - 10);
        v
    }

    /// Hands out at most 7 777 bytes per read.
    struct Dribble<'a>(&'a [u8]);
    impl Read for Dribble<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = out.len().min(self.0.len()).min(7777);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_record_larger_than_the_buffer_is_read_whole() {
        // 30 000 records of 56 or 68 bytes (over 1.6 MB, more than the 1 MiB buffer), one of 3 MB (an
        // IPv4 TCP header and 3 MB of trailing bytes), then 2 more: the buffer grows for the big
        // one and every record is read, the big one's payload from its IP length (100).
        let whole = |v: &[u8], n: usize| {
            // the length of the header and the first n records
            let mut pos = 24;
            for _ in 0..n {
                pos += 16 + u32::from_le_bytes(v[pos + 8..pos + 12].try_into().unwrap()) as usize;
            }
            pos
        };
        let mut v = capture(30_001, pcap_file::Endianness::Little);
        v.truncate(whole(&v, 30_000));
        // the second record of a capture: 40 bytes of headers without options
        let three = capture(3, pcap_file::Endianness::Little);
        let mut ip = three[whole(&three, 1) + 16..whole(&three, 2)].to_vec();
        assert_eq!(ip.len(), 40);
        ip.resize(3_000_000, 0);
        for (k, len) in [(0u32, ip.len()), (1, 40), (2, 40)] {
            v.extend_from_slice(&(1000 + k).to_le_bytes()); // seconds
            v.extend_from_slice(&0u32.to_le_bytes());
            v.extend_from_slice(&(len as u32).to_le_bytes());
            v.extend_from_slice(&(len as u32).to_le_bytes());
            v.extend_from_slice(&ip[..len]);
        }
        let mut segs = Vec::new();
        let sum = read_pcap(Dribble(&v), "c", |s| segs.push(s)).unwrap();
        assert_eq!((sum.records, segs.len()), (30_003, 30_003));
        assert!(sum.warnings.is_empty());
        let big = &segs[30_000];
        assert_eq!(
            (big.time, big.payload_len),
            (Time(1000 * 1_000_000_000), 100)
        );
        assert_eq!(segs[30_002].time, Time(1002 * 1_000_000_000));
    }

    #[test]
    fn both_byte_orders_in_memory_and_streamed() {
        // 200 000 records of 56 bytes: more than the buffer read whole, so the rest is streamed
        // and records straddle the buffer's refills.
        let n = 200_000;
        let little = capture(n, pcap_file::Endianness::Little);
        let big = capture(n, pcap_file::Endianness::Big);
        assert!(little.len() > 8_000_000);
        let read = |bytes: &[u8]| {
            let mut segs = Vec::new();
            let sum = read_pcap(Dribble(bytes), "c", |s| segs.push(s)).unwrap();
            (segs, sum)
        };
        let (segs, sum) = read(&little);
        assert_eq!(sum.records, u64::from(n - 1));
        assert_eq!(segs.len(), n as usize - 1);
        assert_eq!(
            sum.warnings,
            vec![format!(
                "c: capture ends in the middle of record {n} (ignored)"
            )]
        );
        for (k, s) in segs.iter().enumerate() {
            let k = k as u32;
            assert_eq!((s.seq, s.ack, s.payload_len), (k * 100, k, 100));
            assert_eq!(s.time, Time(u64::from(k) * 1_000_003));
            assert_eq!(s.sack_count, u8::from(k % 7 == 0));
        }
        assert_eq!(read(&big), (segs.clone(), sum.clone()));
        // A small capture, read whole, in either order.
        let small = |e| {
            let mut v = capture(1000, e);
            v.truncate(v.len() - 70);
            v
        };
        let (s1, m1) = read(&small(pcap_file::Endianness::Little));
        assert_eq!((s1.len(), m1.records), (998, 998));
        assert_eq!(s1[..], segs[..998]);
        assert_eq!(read(&small(pcap_file::Endianness::Big)), (s1, m1));
    }
}
