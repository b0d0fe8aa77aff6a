//! IPv4 / IPv6, TCP and UDP header bytes: read-only views, the internet checksum, the TCP flag
//! bits, and a builder for IPv4 + UDP headers with a virtual payload. The one place where
//! lasthop reads and writes header bytes (the packet type, the TCP model, the capture analyser
//! and the simulator's UDP sockets all use it).
//!
//! Parsing is defensive: anything malformed or cut short gives `None`, never a panic. Lengths
//! come from the IP header, never from the bytes present, because a capture or a simulated
//! packet may hold the headers only.

use crate::packet::{Ecn, FlowKey, Packet, TcpInfo};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddrV4};

/// TCP flag bits (the 14th byte of the TCP header).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const URG: u8 = 0x20;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// IP protocol numbers.
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Length of an ICMP echo header (type, code, checksum, identifier, sequence number).
pub const ICMP_ECHO_HEADER_LEN: usize = 8;

/// Length of a UDP header.
pub const UDP_HEADER_LEN: usize = 8;

#[inline]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

#[inline]
fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The internet checksum (RFC 1071): the one's complement of the one's-complement sum of the
/// 16-bit big-endian words, an odd last byte padded with a zero byte.
#[inline]
pub fn checksum(bytes: &[u8]) -> u16 {
    let words = bytes.chunks_exact(2);
    let odd = words.remainder().first().map_or(0, |&b| u32::from(b) << 8);
    let mut s: u64 = words
        .map(|c| u64::from(u16::from_be_bytes([c[0], c[1]])))
        .sum::<u64>()
        + u64::from(odd);
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// The fixed part of an IP header (IPv4 with options skipped, or the IPv6 fixed header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpView {
    /// 4 or 6.
    pub version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 protocol, or IPv6 next header.
    pub proto: u8,
    /// Bytes of IP header (IPv4: IHL × 4; IPv6: 40).
    pub header_len: usize,
    /// The datagram's length from the header (IPv4 total length; IPv6 40 + payload length).
    /// 0 when the field is 0 (segmentation offload): see [`IpView::datagram_len`].
    pub total_len: u32,
    /// IPv4 identification (0 for IPv6).
    pub ip_id: u16,
    /// IPv4 flags and fragment offset (0 for IPv6).
    pub frag: u16,
    /// The ECN codepoint (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
}

impl IpView {
    /// A later fragment, or a first fragment with more to come.
    pub fn is_fragment(&self) -> bool {
        self.frag & 0x3fff != 0
    }

    /// The datagram's length: the header's field, or `wire_len` (else the bytes present) when
    /// that field is 0.
    pub fn datagram_len(&self, wire_len: Option<u32>, present: usize) -> u32 {
        if self.total_len != 0 {
            self.total_len
        } else {
            wire_len.unwrap_or(present as u32)
        }
    }

    /// The transport header and whatever follows it in `ip` (the bytes this view was parsed
    /// from).
    pub fn transport<'a>(&self, ip: &'a [u8]) -> Option<&'a [u8]> {
        ip.get(self.header_len..)
    }
}

/// Parses an IPv4 header (IHL ≥ 5, all of it present; the total length field is not checked)
/// or an IPv6 fixed header (40 bytes present).
#[inline]
pub fn parse_ip(ip: &[u8]) -> Option<IpView> {
    match ip.first()? >> 4 {
        4 => {
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            if ihl < 20 || ip.len() < ihl {
                return None;
            }
            let total = be16(ip, 2)?;
            Some(IpView {
                version: 4,
                src: Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]).into(),
                dst: Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]).into(),
                proto: ip[9],
                header_len: ihl,
                total_len: u32::from(total),
                ip_id: be16(ip, 4)?,
                frag: be16(ip, 6)?,
                ecn: ip[1] & 3,
            })
        }
        6 => {
            if ip.len() < 40 {
                return None;
            }
            let mut s = [0u8; 16];
            let mut d = [0u8; 16];
            s.copy_from_slice(&ip[8..24]);
            d.copy_from_slice(&ip[24..40]);
            let plen = u32::from(be16(ip, 4)?);
            Some(IpView {
                version: 6,
                src: Ipv6Addr::from(s).into(),
                dst: Ipv6Addr::from(d).into(),
                proto: ip[6],
                header_len: 40,
                total_len: if plen == 0 { 0 } else { 40 + plen },
                ip_id: 0,
                frag: 0,
                ecn: (ip[1] >> 4) & 3,
            })
        }
        _ => None,
    }
}

/// A TCP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpView<'a> {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Data offset × 4: the header with its options.
    pub header_len: usize,
    /// The options, as far as they are present in the bytes.
    pub options: &'a [u8],
}

impl TcpView<'_> {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Parses a TCP header: 20 bytes present and a data offset of at least 5. With `whole`, the
/// options must be present too (else `None`); without, they are cut to what is there.
#[inline]
pub fn parse_tcp(tcp: &[u8], whole: bool) -> Option<TcpView<'_>> {
    if tcp.len() < 20 {
        return None;
    }
    let doff = usize::from(tcp[12] >> 4) * 4;
    if doff < 20 || (whole && tcp.len() < doff) {
        return None;
    }
    Some(TcpView {
        sport: be16(tcp, 0)?,
        dport: be16(tcp, 2)?,
        seq: be32(tcp, 4)?,
        ack: be32(tcp, 8)?,
        flags: tcp[13],
        window: be16(tcp, 14)?,
        header_len: doff,
        options: &tcp[20..doff.min(tcp.len())],
    })
}

impl<'a> TcpView<'a> {
    /// The options as `(kind, data)`, data without the kind and length bytes; the walk stops at
    /// End of Option List or at a malformed length (RFC 9293 §3.1).
    pub fn option_list(&self) -> impl Iterator<Item = (u8, &'a [u8])> {
        let mut opts = self.options;
        std::iter::from_fn(move || loop {
            let (&kind, rest) = opts.split_first()?;
            match kind {
                0 => return None,
                1 => opts = rest,
                _ => {
                    let len = usize::from(*rest.first()?);
                    if len < 2 || len > opts.len() {
                        return None;
                    }
                    let data = &opts[2..len];
                    opts = &opts[len..];
                    return Some((kind, data));
                }
            }
        })
    }
}

/// TCP sequence-number order modulo 2^32 (RFC 1982 serial arithmetic): `a` before `b`.
#[inline]
pub fn seq_lt(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}

/// `a` before or at `b`, modulo 2^32.
#[inline]
pub fn seq_le(a: u32, b: u32) -> bool {
    a == b || seq_lt(a, b)
}

/// A UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpView<'a> {
    pub sport: u16,
    pub dport: u16,
    /// The length field: header (8) + payload.
    pub length: u16,
    pub checksum: u16,
    /// The payload bytes present (possibly only its head).
    pub payload: &'a [u8],
}

/// Parses a UDP header (8 bytes present).
pub fn parse_udp(udp: &[u8]) -> Option<UdpView<'_>> {
    if udp.len() < UDP_HEADER_LEN {
        return None;
    }
    Some(UdpView {
        sport: be16(udp, 0)?,
        dport: be16(udp, 2)?,
        length: be16(udp, 4)?,
        checksum: be16(udp, 6)?,
        payload: &udp[UDP_HEADER_LEN..],
    })
}

/// The flow key of IP bytes: protocol, addresses, and ports for TCP (whole header present) and
/// UDP; [`FlowKey::UNKNOWN`] for anything that is not IP.
pub fn flow_key(data: &[u8]) -> FlowKey {
    let Some(ip) = parse_ip(data) else {
        return FlowKey::UNKNOWN;
    };
    let rest = &data[ip.header_len..];
    let ports = match ip.proto {
        PROTO_TCP => parse_tcp(rest, true).map(|t| (t.sport, t.dport)),
        PROTO_UDP => parse_udp(rest).map(|u| (u.sport, u.dport)),
        _ => None,
    };
    let (sport, dport) = ports.unwrap_or((0, 0));
    FlowKey {
        proto: ip.proto,
        src: ip.src,
        dst: ip.dst,
        sport,
        dport,
    }
}

/// Writes the 20-byte IPv4 header (no options, DF set, TTL 64) with its checksum into `b[..20]`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn write_ipv4_header(
    b: &mut [u8],
    src: Ipv4Addr,
    dst: Ipv4Addr,
    proto: u8,
    total_len: u32,
    ip_id: u16,
    ecn: u8,
) {
    b[..20].copy_from_slice(&[0; 20]);
    b[0] = 0x45;
    b[1] = ecn & 3;
    b[2..4].copy_from_slice(&(total_len.min(65535) as u16).to_be_bytes());
    b[4..6].copy_from_slice(&ip_id.to_be_bytes());
    b[6] = 0x40; // DF
    b[8] = 64;
    b[9] = proto;
    b[12..16].copy_from_slice(&src.octets());
    b[16..20].copy_from_slice(&dst.octets());
    let sum = checksum(&b[..20]);
    b[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// Flips one bit of a datagram so that the receiver's checksum fails, as a bit error on a
/// radio would: a bit of the transport payload when its bytes are there (emulation), else of
/// the TCP or UDP checksum itself (a simulated packet, whose payload is virtual). A single
/// flipped bit always changes the internet checksum. A datagram whose transport has no
/// checksum to fail (UDP with checksum 0 over IPv4, or neither TCP nor UDP) gets a bit of its
/// IPv4 TTL flipped instead, which the header checksum catches; the addresses stay, so it is
/// still delivered to its host, which discards it. Bytes that are no IP get their last bit
/// flipped.
pub fn damage(data: &mut [u8]) {
    let Some(ip) = parse_ip(data) else {
        if let Some(b) = data.last_mut() {
            *b ^= 1;
        }
        return;
    };
    let t = ip.header_len;
    let (header, sum_at) = match ip.proto {
        PROTO_TCP => (
            data.get(t + 12).map_or(20, |b| usize::from(b >> 4) * 4),
            t + 16,
        ),
        PROTO_UDP if be16(data, t + 6).is_some_and(|s| s != 0) || ip.version == 6 => {
            (UDP_HEADER_LEN, t + 6)
        }
        _ => {
            if ip.version == 4 {
                data[8] ^= 1;
            } else if let Some(b) = data.last_mut() {
                *b ^= 1;
            }
            return;
        }
    };
    let payload = t + header..data.len();
    if !payload.is_empty() {
        // The middle byte of the payload present.
        data[payload.start + payload.len() / 2] ^= 1;
    } else if let Some(b) = data.get_mut(sum_at + 1) {
        *b ^= 1;
    }
}

/// An IPv4 + UDP datagram of `wire_len` bytes on the wire whose bytes hold the headers and
/// `payload_head` (the start of the payload; the rest is virtual, as in the simulator). The UDP
/// length field is `wire_len − 20` and its checksum 0 ("none", allowed over IPv4: the payload is
/// not all there to sum). `wire_len` below 28 + `payload_head.len()` is raised to it.
pub fn build_ipv4_udp(
    src: SocketAddrV4,
    dst: SocketAddrV4,
    ip_id: u16,
    ecn: u8,
    payload_head: &[u8],
    wire_len: u32,
) -> Packet {
    let min = (20 + UDP_HEADER_LEN + payload_head.len()) as u32;
    let wire_len = wire_len.max(min).min(65535);
    let mut b = vec![0u8; min as usize];
    write_ipv4_header(
        &mut b,
        *src.ip(),
        *dst.ip(),
        PROTO_UDP,
        wire_len,
        ip_id,
        ecn,
    );
    b[20..22].copy_from_slice(&src.port().to_be_bytes());
    b[22..24].copy_from_slice(&dst.port().to_be_bytes());
    b[24..26].copy_from_slice(&((wire_len - 20) as u16).to_be_bytes());
    b[28..].copy_from_slice(payload_head);
    let flow = FlowKey {
        proto: PROTO_UDP,
        src: (*src.ip()).into(),
        dst: (*dst.ip()).into(),
        sport: src.port(),
        dport: dst.port(),
    };
    Packet::with_flow(b, wire_len, flow)
}

/// An ICMP echo request or reply (RFC 792, types 8 and 0, code 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EchoView<'a> {
    pub reply: bool,
    pub ident: u16,
    pub seq: u16,
    /// The payload bytes present (possibly only its head).
    pub payload: &'a [u8],
}

/// Parses an ICMP echo request or reply (the 8-byte header present); `None` for any other
/// ICMP message.
pub fn parse_icmp_echo(icmp: &[u8]) -> Option<EchoView<'_>> {
    let reply = match (*icmp.first()?, *icmp.get(1)?) {
        (8, 0) => false,
        (0, 0) => true,
        _ => return None,
    };
    Some(EchoView {
        reply,
        ident: be16(icmp, 4)?,
        seq: be16(icmp, 6)?,
        payload: icmp.get(ICMP_ECHO_HEADER_LEN..)?,
    })
}

/// An IPv4 ICMP echo request (or reply) of `wire_len` bytes on the wire whose bytes hold the
/// headers and `payload_head`, the rest of the payload virtual (zeros: the checksum, over the
/// bytes present, is then the whole message's, since zero words add nothing). Not ECN-capable,
/// DF set, as Linux sends it. `wire_len` below 28 + `payload_head.len()` is raised to it.
#[allow(clippy::too_many_arguments)]
pub fn build_ipv4_icmp_echo(
    src: Ipv4Addr,
    dst: Ipv4Addr,
    reply: bool,
    ident: u16,
    seq: u16,
    ip_id: u16,
    payload_head: &[u8],
    wire_len: u32,
) -> Packet {
    let min = (20 + ICMP_ECHO_HEADER_LEN + payload_head.len()) as u32;
    let wire_len = wire_len.max(min).min(65535);
    let mut b = vec![0u8; min as usize];
    write_ipv4_header(&mut b, src, dst, PROTO_ICMP, wire_len, ip_id, 0);
    b[20] = if reply { 0 } else { 8 };
    b[24..26].copy_from_slice(&ident.to_be_bytes());
    b[26..28].copy_from_slice(&seq.to_be_bytes());
    b[28..].copy_from_slice(payload_head);
    let sum = checksum(&b[20..]);
    b[22..24].copy_from_slice(&sum.to_be_bytes());
    let flow = flow_key(&b);
    Packet::with_flow(b, wire_len, flow)
}

/// Whether a receiving stack's checksums reject an IPv4 datagram, as far as its captured bytes
/// tell: the header checksum, and a UDP checksum that is set over a datagram captured whole.
/// (A link's FORWARD damage, [`damage`], fails one of them; TCP checksums are not looked at,
/// since the simulator's segments carry none.) Anything else, IPv6 or not IP, passes.
pub fn receiver_discards(ip: &[u8]) -> bool {
    let Some(v) = parse_ip(ip) else {
        return false;
    };
    if v.version != 4 {
        return false;
    }
    if checksum(&ip[..v.header_len]) != 0 {
        return true;
    }
    let t = &ip[v.header_len..];
    let whole = v.total_len as usize == ip.len() && !v.is_fragment();
    match parse_udp(t) {
        Some(u) if v.proto == PROTO_UDP && u.checksum != 0 && whole => {
            let mut b = Vec::with_capacity(12 + t.len());
            b.extend_from_slice(&ip[12..20]);
            b.extend_from_slice(&[0, PROTO_UDP]);
            b.extend_from_slice(&(t.len() as u16).to_be_bytes());
            b.extend_from_slice(t);
            checksum(&b) != 0
        }
        _ => false,
    }
}

/// The TCP checksum of an IPv4 segment (RFC 793: the pseudo-header of source, destination,
/// protocol and TCP length, then the TCP header with its checksum field as it is, then the
/// payload). Over a segment whose checksum field holds the right value the result is 0.
pub fn tcp_checksum_ipv4(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> u16 {
    let mut b = Vec::with_capacity(12 + segment.len());
    b.extend_from_slice(&src.octets());
    b.extend_from_slice(&dst.octets());
    b.extend_from_slice(&[0, PROTO_TCP]);
    b.extend_from_slice(&(segment.len() as u16).to_be_bytes());
    b.extend_from_slice(segment);
    checksum(&b)
}

/// A TCP/IPv4 segment like `pkt` (the same IP and TCP headers, options included) with sequence
/// number `seq` and `payload_len` bytes of payload: the IP total length, the IPv4 header
/// checksum and the sequence number are rewritten. With `payload` (real bytes, as in
/// emulation; its length must be `payload_len`) the payload is those bytes and the TCP checksum
/// is computed anew; without (a virtual payload, as in simulation) only the headers are kept
/// and the TCP checksum field is left as it was (the simulator's segments carry none). `None`
/// if `pkt` is not TCP over IPv4 with whole headers, or the segment would exceed 65535 bytes.
pub fn rebuild_tcp_ipv4(
    pkt: &Packet,
    seq: u32,
    payload: Option<&[u8]>,
    payload_len: u32,
) -> Option<Packet> {
    let ip = parse_ip(&pkt.data)?;
    if ip.version != 4 || ip.proto != PROTO_TCP {
        return None;
    }
    let tcp = parse_tcp(ip.transport(&pkt.data)?, true)?;
    if payload.is_some_and(|p| p.len() as u32 != payload_len) {
        return None;
    }
    let hdr = ip.header_len + tcp.header_len;
    let total = u32::try_from(hdr).ok()?.checked_add(payload_len)?;
    if total > 65535 {
        return None;
    }
    let mut b = Vec::with_capacity(hdr + payload.map_or(0, <[u8]>::len));
    b.extend_from_slice(&pkt.data[..hdr]);
    b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    b[10] = 0;
    b[11] = 0;
    let sum = checksum(&b[..ip.header_len]);
    b[10..12].copy_from_slice(&sum.to_be_bytes());
    let t = ip.header_len;
    b[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
    if let Some(p) = payload {
        b.extend_from_slice(p);
        b[t + 16] = 0;
        b[t + 17] = 0;
        let (IpAddr::V4(src), IpAddr::V4(dst)) = (ip.src, ip.dst) else {
            return None;
        };
        let sum = tcp_checksum_ipv4(src, dst, &b[t..]);
        b[t + 16..t + 18].copy_from_slice(&sum.to_be_bytes());
    }
    Some(Packet::with_flow(b, total, pkt.flow))
}

/// [`Packet`]'s constructors and accessors: they read its header bytes.
impl Packet {
    /// A packet whose bytes are all there (emulation, tests).
    pub fn from_bytes(data: Vec<u8>) -> Packet {
        let wire_len = data.len() as u32;
        Packet::with_wire_len(data, wire_len)
    }

    /// A packet whose payload is virtual: `data` holds the headers, `wire_len` the full length.
    /// A `wire_len` shorter than `data` is raised to `data.len()`.
    pub fn with_wire_len(data: Vec<u8>, wire_len: u32) -> Packet {
        let wire_len = wire_len.max(data.len() as u32);
        let flow = parse_flow(&data);
        Packet {
            data,
            wire_len,
            flow,
            damaged: false,
        }
    }

    /// [`Packet::with_wire_len`] for headers whose flow key the caller knows because it just
    /// wrote them (the TCP model), so that they are not parsed again. `flow` must be the key
    /// parsing `data` would give.
    pub fn with_flow(data: Vec<u8>, wire_len: u32, flow: FlowKey) -> Packet {
        debug_assert_eq!(flow, parse_flow(&data));
        Packet {
            wire_len: wire_len.max(data.len() as u32),
            data,
            flow,
            damaged: false,
        }
    }

    /// Damages the packet as a bit error on a radio would, so that the receiver's checksum
    /// discards it ([`damage`]), and marks it [`Packet::damaged`].
    pub fn damage(&mut self) {
        damage(&mut self.data);
        self.damaged = true;
    }

    /// Length of the IP header, if this is IPv4 or IPv6 (fixed header only).
    fn ip_header_len(&self) -> Option<usize> {
        parse_ip(&self.data).map(|ip| ip.header_len)
    }

    pub fn ecn(&self) -> Ecn {
        match self.data.first().map(|b| b >> 4) {
            Some(4) if self.flow != FlowKey::UNKNOWN => Ecn::from_bits(self.data[1]),
            Some(6) if self.flow != FlowKey::UNKNOWN => Ecn::from_bits(self.data[1] >> 4),
            _ => Ecn::NotEct,
        }
    }

    /// Sets the CE codepoint (a queue's ECN mark) and keeps the IPv4 header checksum right.
    pub fn set_ce(&mut self) {
        match self.data.first().map(|b| b >> 4) {
            Some(4) => {
                let Some(ihl) = self.ip_header_len() else {
                    return;
                };
                self.data[1] |= 0b11;
                self.data[10] = 0;
                self.data[11] = 0;
                let sum = checksum(&self.data[..ihl]);
                self.data[10..12].copy_from_slice(&sum.to_be_bytes());
            }
            Some(6) if self.flow != FlowKey::UNKNOWN => self.data[1] |= 0b0011_0000,
            _ => {}
        }
    }

    /// IPv4 identification field (0 for anything else): with the flow key it names a packet in a
    /// capture, which is how the analyser joins captures with the event log.
    pub fn ip_id(&self) -> u16 {
        parse_ip(&self.data).map_or(0, |ip| ip.ip_id)
    }

    /// The TCP header fields, when this is a TCP segment with a whole header.
    pub fn tcp(&self) -> Option<TcpInfo> {
        if self.flow.proto != 6 {
            return None;
        }
        let ihl = self.ip_header_len()?;
        let tcp = parse_tcp(self.data.get(ihl..)?, true)?;
        let hdr = ihl + tcp.header_len;
        Some(TcpInfo {
            seq: tcp.seq,
            ack: tcp.ack,
            flags: tcp.flags,
            window: tcp.window,
            payload_len: self.wire_len.saturating_sub(hdr as u32),
        })
    }
}

fn parse_flow(data: &[u8]) -> FlowKey {
    flow_key(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole IPv4 + UDP datagram with its UDP checksum set, as a real stack sends it.
    fn udp_with_checksum(payload: &[u8]) -> Vec<u8> {
        let (src, dst) = (
            "198.18.0.1:1024".parse().unwrap(),
            "198.19.0.1:5000".parse().unwrap(),
        );
        let len = (28 + payload.len()) as u32;
        let mut b = build_ipv4_udp(src, dst, 7, 0, payload, len).data;
        // The UDP checksum over the pseudo-header, header and payload, with the field 0 first.
        let mut sum = vec![198, 18, 0, 1, 198, 19, 0, 1, 0, PROTO_UDP];
        sum.extend_from_slice(&((len - 20) as u16).to_be_bytes());
        sum.extend_from_slice(&b[20..]);
        let c = checksum(&sum);
        b[26..28].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn receivers_discard_what_fails_a_checksum() {
        let good = udp_with_checksum(b"sixteen bytes of");
        assert!(!receiver_discards(&good));
        // FORWARD damage flips a bit of the middle payload byte: the UDP checksum fails.
        let mut damaged = good.clone();
        damage(&mut damaged);
        assert_ne!(damaged, good);
        assert!(receiver_discards(&damaged));
        // A capture cut short cannot be summed: it passes.
        assert!(!receiver_discards(&damaged[..30]));
        // The simulator's datagrams carry no UDP checksum: damage flips the TTL, which the
        // header checksum catches.
        let sim = build_ipv4_udp(
            "198.18.0.1:1024".parse().unwrap(),
            "198.19.0.1:5000".parse().unwrap(),
            7,
            0,
            b"head",
            1028,
        );
        assert!(!receiver_discards(&sim.data));
        let mut p = sim.clone();
        p.damage();
        assert_eq!(p.data[8], sim.data[8] ^ 1);
        assert!(receiver_discards(&p.data));
        // Not IP: passes.
        assert!(!receiver_discards(&[0x10, 0, 0]));
    }

    #[test]
    fn tcp_options_and_sequence_order() {
        // NOP, MSS 1460, window scale 7, SACK one block [1000, 2000), then End and garbage.
        let mut h = vec![0u8; 20];
        h.extend([1, 2, 4, 0x05, 0xb4, 3, 3, 7, 5, 10]);
        h.extend(1000u32.to_be_bytes());
        h.extend(2000u32.to_be_bytes());
        h.extend([0, 0, 9]);
        h[12] = ((h.len() / 4) as u8) << 4;
        let t = parse_tcp(&h, true).unwrap();
        let o: Vec<(u8, Vec<u8>)> = t.option_list().map(|(k, d)| (k, d.to_vec())).collect();
        let mut sack = 1000u32.to_be_bytes().to_vec();
        sack.extend(2000u32.to_be_bytes());
        assert_eq!(o, vec![(2, vec![0x05, 0xb4]), (3, vec![7]), (5, sack)]);
        // A length running past the options stops the walk.
        let mut bad = vec![0u8; 20];
        bad.extend([2, 9, 0, 0]);
        bad[12] = 6 << 4;
        assert_eq!(parse_tcp(&bad, true).unwrap().option_list().count(), 0);
        assert!(seq_lt(u32::MAX - 5, 3) && !seq_lt(3, u32::MAX - 5));
        assert!(seq_le(7, 7) && !seq_lt(7, 7));
    }
    use etherparse::PacketBuilder;

    #[test]
    fn checksum_by_hand() {
        // RFC 1071's example words 0001 f203 f4f5 f6f7: sum ddf2 (with carries), complement 220d.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
        // An odd byte counts as its high half: 0x0100 -> !0x0100.
        assert_eq!(checksum(&[0x01]), !0x0100);
        assert_eq!(checksum(&[]), 0xffff);
    }

    #[test]
    fn views_of_etherparse_packets() {
        let mut tcp = Vec::new();
        PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
            .tcp(5001, 80, 1000, 65535)
            .ack(77)
            .syn()
            .write(&mut tcp, &[0u8; 36])
            .unwrap();
        let ip = parse_ip(&tcp).unwrap();
        assert_eq!(
            (ip.version, ip.proto, ip.header_len, ip.total_len),
            (4, 6, 20, 76)
        );
        let t = parse_tcp(ip.transport(&tcp).unwrap(), true).unwrap();
        assert_eq!(
            (t.sport, t.dport, t.seq, t.ack, t.window),
            (5001, 80, 1000, 77, 65535)
        );
        assert!(t.has(SYN) && t.has(ACK) && !t.has(FIN));
        assert_eq!(
            flow_key(&tcp).to_string(),
            "tcp:198.18.0.1:5001>198.19.0.1:80"
        );
        // the IPv4 checksum etherparse wrote sums to zero with ours
        assert_eq!(checksum(&tcp[..20]), 0);

        let mut udp = Vec::new();
        PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
            .udp(7000, 7001)
            .write(&mut udp, &[9u8; 24])
            .unwrap();
        let ip = parse_ip(&udp).unwrap();
        let u = parse_udp(ip.transport(&udp).unwrap()).unwrap();
        assert_eq!(
            (u.sport, u.dport, u.length, u.payload.len()),
            (7000, 7001, 32, 24)
        );
        assert_eq!(
            flow_key(&udp).to_string(),
            "udp:198.18.0.1:7000>198.19.0.1:7001"
        );
    }

    #[test]
    fn malformed_is_none() {
        assert!(parse_ip(&[]).is_none());
        assert!(parse_ip(&[0x45; 19]).is_none());
        assert!(parse_ip(&[0x44; 40]).is_none()); // IHL 4
        assert!(parse_ip(&[0x60; 39]).is_none());
        assert!(parse_tcp(&[0; 19], false).is_none());
        let mut t = [0u8; 20];
        t[12] = 0x40; // data offset 4
        assert!(parse_tcp(&t, false).is_none());
        t[12] = 0x60; // 24 bytes of header, 20 present
        assert!(parse_tcp(&t, true).is_none());
        assert_eq!(parse_tcp(&t, false).unwrap().options.len(), 0);
        assert!(parse_udp(&[0; 7]).is_none());
        assert_eq!(flow_key(&[0xff; 3]), FlowKey::UNKNOWN);
    }

    #[test]
    fn tcp_rebuild_with_real_and_virtual_payloads() {
        let mut v = Vec::new();
        PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
            .tcp(5001, 80, 1000, 65535)
            .ack(77)
            .psh()
            .write(&mut v, &[1u8; 120])
            .unwrap();
        let p = Packet::from_bytes(v);
        // 240 B starting 120 B earlier: the previous segment's bytes, then this one's.
        let payload: Vec<u8> = (0..240u32).map(|i| i as u8).collect();
        let q = rebuild_tcp_ipv4(&p, 880, Some(&payload), 240).unwrap();
        assert_eq!((q.wire_len, q.data.len()), (280, 280));
        assert_eq!(q.flow, p.flow);
        let t = q.tcp().unwrap();
        assert_eq!((t.seq, t.ack, t.payload_len), (880, 77, 240));
        let (h, rest) = etherparse::Ipv4HeaderSlice::from_slice(&q.data)
            .map(|h| (h.to_header(), &q.data[20..]))
            .unwrap();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        let th = etherparse::TcpHeaderSlice::from_slice(rest)
            .unwrap()
            .to_header();
        assert_eq!(
            th.checksum,
            th.calc_checksum_ipv4(&h, &rest[20..]).unwrap(),
            "the TCP checksum etherparse computes"
        );
        // Summed with its own checksum field, a right segment gives 0.
        let (s, d) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(tcp_checksum_ipv4(s, d, rest), 0);
        assert_eq!(&q.data[40..], &payload[..]);
        // Virtual: the headers only, the wire length counts the payload.
        let hdr = Packet::with_wire_len(p.data[..40].to_vec(), 160);
        let q = rebuild_tcp_ipv4(&hdr, 880, None, 240).unwrap();
        assert_eq!((q.wire_len, q.data.len()), (280, 40));
        assert_eq!(q.tcp().unwrap().payload_len, 240);
        // A payload of the wrong length, or not TCP: none.
        assert!(rebuild_tcp_ipv4(&p, 1, Some(&[0u8; 3]), 4).is_none());
        let src = SocketAddrV4::new(s, 1);
        let udp = build_ipv4_udp(src, SocketAddrV4::new(d, 2), 0, 0, &[], 40);
        assert!(rebuild_tcp_ipv4(&udp, 1, None, 4).is_none());
    }

    #[test]
    fn udp_builder_with_virtual_payload() {
        let src = SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 1), 7000);
        let dst = SocketAddrV4::new(Ipv4Addr::new(198, 19, 0, 1), 7001);
        let head = *b"LHU1\0\0\0\x05\0\0\0\0\0\0\0\x07";
        let p = build_ipv4_udp(src, dst, 42, 0, &head, 540);
        assert_eq!((p.data.len(), p.wire_len), (44, 540));
        assert_eq!(p.flow.to_string(), "udp:198.18.0.1:7000>198.19.0.1:7001");
        let h = etherparse::Ipv4HeaderSlice::from_slice(&p.data).unwrap();
        assert_eq!(
            (h.total_len(), h.identification(), h.protocol().0),
            (540, 42, 17)
        );
        assert_eq!(h.header_checksum(), h.to_header().calc_header_checksum());
        let u = etherparse::UdpHeaderSlice::from_slice(&p.data[20..]).unwrap();
        assert_eq!(
            (u.source_port(), u.destination_port(), u.length()),
            (7000, 7001, 520)
        );
        assert_eq!(&p.data[28..], &head);
        // too short a wire length is raised to the bytes present
        assert_eq!(build_ipv4_udp(src, dst, 0, 0, &head, 10).wire_len, 44);
    }

    #[test]
    fn icmp_echo_by_hand() {
        let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1));
        // Request, ident 1, seq 1, no payload: words 0800 0000 0001 0001 sum to 0802, whose
        // complement is f7fd.
        let p = build_ipv4_icmp_echo(a, b, false, 1, 1, 7, &[], 28);
        assert_eq!(&p.data[20..], &[8, 0, 0xf7, 0xfd, 0, 1, 0, 1]);
        assert_eq!(
            (p.wire_len, p.flow.proto, p.ecn()),
            (28, PROTO_ICMP, Ecn::NotEct)
        );
        assert_eq!(p.data[9], 1);
        // A reply of 84 bytes (ping's default 56-byte payload) with a 16-byte head: the
        // checksum over the bytes present is the whole message's (the rest is zeros).
        let head: Vec<u8> = (1..=16).collect();
        let r = build_ipv4_icmp_echo(b, a, true, 0x1389, 300, 0, &head, 84);
        assert_eq!((r.wire_len, r.data.len()), (84, 44));
        assert_eq!(checksum(&r.data[20..]), 0);
        let mut whole = r.data[20..].to_vec();
        whole.resize(64, 0);
        assert_eq!(checksum(&whole), 0);
        let v = parse_icmp_echo(&r.data[20..]).unwrap();
        assert_eq!(
            (v.reply, v.ident, v.seq, v.payload),
            (true, 0x1389, 300, &head[..])
        );
        // Other ICMP messages (port unreachable, 3/3) and a cut header are not echoes.
        assert_eq!(parse_icmp_echo(&[3, 3, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(parse_icmp_echo(&[8, 0, 0, 0, 0, 1]), None);
        assert_eq!(parse_icmp_echo(&[8, 1, 0, 0, 0, 1, 0, 1]), None);
    }
}
