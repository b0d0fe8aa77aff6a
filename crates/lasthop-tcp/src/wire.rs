//! TCP segments to and from real IPv4 + TCP header bytes, with a virtual payload.
//!
//! Written by hand rather than with etherparse's builders: the payload is only a length, and the
//! option layout follows Linux 2.4 byte for byte (`tcp_syn_build_options`,
//! `tcp_build_and_update_options`), so captures look like the seeds' traces. The header views,
//! the IPv4 header and its checksum and the flag bits are `lasthop_core::wire`'s. Parsing is
//! defensive: any malformed input gives `None`, never a panic.

use lasthop_core::wire::{self, PROTO_TCP};
use lasthop_core::{FlowKey, Packet};
use std::net::{Ipv4Addr, SocketAddrV4};

pub use lasthop_core::wire::{ACK, CWR, ECE, FIN, PSH, RST, SYN};

/// One TCP segment, decoded.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Segment {
    pub src: Option<SocketAddrV4>,
    pub dst: Option<SocketAddrV4>,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// MSS option (SYN only).
    pub mss: Option<u16>,
    pub sack_permitted: bool,
    /// Timestamps option: (TSval, TSecr).
    pub ts: Option<(u32, u32)>,
    /// Window scale option (SYN only): the shift count.
    pub wscale: Option<u8>,
    /// SACK blocks (left edge, right edge), in the order they appear.
    pub sacks: Vec<(u32, u32)>,
    /// Virtual payload length.
    pub payload: u32,
    pub ip_id: u16,
    /// ECN codepoint of the IP header (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
}

impl Segment {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Sequence space taken: payload, plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload + u32::from(self.has(SYN)) + u32::from(self.has(FIN))
    }

    /// Options in Linux 2.4's layout, padded to 4 bytes, handed to `o` piece by piece (so that
    /// `encode` writes them straight into the packet).
    fn options(&self, mut o: impl FnMut(&[u8])) {
        if self.has(SYN) {
            if let Some(m) = self.mss {
                o(&[2, 4]);
                o(&m.to_be_bytes());
            }
            match (self.ts, self.sack_permitted) {
                (Some(_), true) => o(&[4, 2]),
                (Some(_), false) => o(&[1, 1]),
                (None, true) => o(&[1, 1, 4, 2]),
                (None, false) => {}
            }
        } else if self.ts.is_some() {
            o(&[1, 1]);
        }
        if let Some((val, ecr)) = self.ts {
            o(&[8, 10]);
            o(&val.to_be_bytes());
            o(&ecr.to_be_bytes());
        }
        if let (true, Some(ws)) = (self.has(SYN), self.wscale) {
            o(&[1, 3, 3, ws]);
        }
        if !self.sacks.is_empty() {
            o(&[1, 1, 5, 2 + 8 * self.sacks.len() as u8]);
            for (l, r) in &self.sacks {
                o(&l.to_be_bytes());
                o(&r.to_be_bytes());
            }
        }
    }

    /// Bytes of TCP options this segment would carry.
    pub fn options_len(&self) -> u32 {
        let mut n = 0;
        self.options(|b| n += b.len() as u32);
        n
    }

    /// IPv4 + TCP headers; the IP total length counts the virtual payload.
    pub fn encode(&self) -> Packet {
        let src = self
            .src
            .unwrap_or(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
        let dst = self
            .dst
            .unwrap_or(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
        // Headers first with the lengths left 0, then the options, then the lengths and the
        // IP checksum, which depend on the options.
        let mut b = Vec::with_capacity(80);
        b.extend_from_slice(&[0; 20]); // the IPv4 header, written once the length is known
        b.extend_from_slice(&src.port().to_be_bytes());
        b.extend_from_slice(&dst.port().to_be_bytes());
        b.extend_from_slice(&self.seq.to_be_bytes());
        b.extend_from_slice(&self.ack.to_be_bytes());
        b.extend_from_slice(&[0, self.flags]);
        b.extend_from_slice(&self.window.to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]); // checksum left 0 (virtual payload), urgent pointer
        self.options(|o| b.extend_from_slice(o));
        debug_assert!(b.len() % 4 == 0 && b.len() <= 80);
        let tcp_len = b.len() - 20;
        let total = 20 + tcp_len as u32 + self.payload;
        // DF (path MTU discovery on), TTL 64, and the header checksum.
        wire::write_ipv4_header(
            &mut b,
            *src.ip(),
            *dst.ip(),
            PROTO_TCP,
            total,
            self.ip_id,
            self.ecn,
        );
        b[32] = ((tcp_len / 4) as u8) << 4;
        // The flow is known: no need to parse the headers just written.
        let flow = FlowKey {
            proto: 6,
            src: (*src.ip()).into(),
            dst: (*dst.ip()).into(),
            sport: src.port(),
            dport: dst.port(),
        };
        Packet::with_flow(b, total, flow)
    }

    /// Parses an IPv4 TCP packet; `None` for anything else or anything malformed.
    pub fn decode(p: &Packet) -> Option<Segment> {
        let d = &p.data;
        let ip = wire::parse_ip(d)?;
        if ip.version != 4 || ip.proto != PROTO_TCP {
            return None;
        }
        let ihl = ip.header_len;
        let t = wire::parse_tcp(ip.transport(d)?, true)?;
        let off = t.header_len;
        let be16 = |s: &[u8]| u16::from_be_bytes([s[0], s[1]]);
        let be32 = |s: &[u8]| u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
        let v4 = |a| match a {
            std::net::IpAddr::V4(a) => a,
            std::net::IpAddr::V6(_) => Ipv4Addr::UNSPECIFIED,
        };
        let mut seg = Segment {
            src: Some(SocketAddrV4::new(v4(ip.src), t.sport)),
            dst: Some(SocketAddrV4::new(v4(ip.dst), t.dport)),
            seq: t.seq,
            ack: t.ack,
            flags: t.flags,
            window: t.window,
            payload: p.wire_len.saturating_sub((ihl + off) as u32),
            ip_id: ip.ip_id,
            ecn: ip.ecn,
            ..Segment::default()
        };
        // A malformed option ends the walk and keeps the segment, as Linux's
        // `tcp_parse_options` does ("don't parse partial options").
        for (kind, body) in t.option_list() {
            match (kind, body.len()) {
                (2, 2) => seg.mss = Some(be16(body)),
                (4, 0) => seg.sack_permitted = true,
                (3, 1) => seg.wscale = Some(body[0]),
                (8, 8) => seg.ts = Some((be32(body), be32(&body[4..]))),
                (5, n) if n % 8 == 0 => {
                    seg.sacks = body.chunks(8).map(|c| (be32(c), be32(&c[4..]))).collect()
                }
                _ => {}
            }
        }
        Some(seg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(a: u8, port: u16) -> Option<SocketAddrV4> {
        Some(SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, a), port))
    }

    /// A SYN from 198.18.0.1:1025 to 198.18.0.2:80 with MSS 536 and SACK permitted.
    fn syn_536() -> Segment {
        Segment {
            src: addr(1, 1025),
            dst: addr(2, 80),
            flags: SYN,
            mss: Some(536),
            sack_permitted: true,
            ..Segment::default()
        }
    }

    #[test]
    fn syn_layouts_match_linux() {
        let mut s = syn_536();
        assert_eq!(s.encode().wire_len, 48);
        s.ts = Some((7, 0));
        assert_eq!(s.encode().wire_len, 56);
        s.sack_permitted = false;
        assert_eq!(s.encode().wire_len, 56);
        s.ts = None;
        assert_eq!(s.encode().wire_len, 44);
        s.wscale = Some(3);
        let p = s.encode();
        assert_eq!(p.wire_len, 48);
        assert_eq!(Segment::decode(&p).unwrap().wscale, Some(3));
    }

    #[test]
    fn a_malformed_option_ends_the_walk_and_keeps_the_segment() {
        // A SYN with MSS 536 and SACK permitted: 20 bytes of IP, 20 of TCP, then the options
        // at bytes 40..48, MSS first (kind 2, length 4). An option after it that claims 40
        // bytes runs past the header: Linux's tcp_parse_options stops there and keeps what it
        // parsed, so the MSS stays and SACK permitted is not seen.
        let s = syn_536();
        let mut p = s.encode();
        assert_eq!(&p.data[40..44], &[2, 4, 0x02, 0x18]);
        let d = Segment::decode(&p).unwrap();
        assert_eq!((d.mss, d.sack_permitted), (Some(536), true));
        p.data[44..46].copy_from_slice(&[8, 40]);
        let d = Segment::decode(&p).expect("kept");
        assert_eq!((d.mss, d.sack_permitted, d.flags), (Some(536), false, SYN));
    }

    #[test]
    fn round_trip_with_virtual_payload() {
        let s = Segment {
            src: addr(1, 1025),
            dst: addr(2, 80),
            seq: 0xffff_fff0,
            ack: 12,
            flags: ACK | PSH,
            window: 32768,
            ts: Some((1, 2)),
            sacks: vec![(100, 200), (300, 400), (500, 600)],
            payload: 524,
            ip_id: 9,
            ecn: 2,
            ..Segment::default()
        };
        let p = s.encode();
        assert_eq!(p.wire_len, 20 + 20 + 12 + 28 + 524);
        let h = etherparse::Ipv4HeaderSlice::from_slice(&p.data)
            .unwrap()
            .to_header();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        assert_eq!(h.total_len, p.wire_len as u16);
        let info = p.tcp().unwrap();
        assert_eq!((info.seq, info.payload_len), (s.seq, 524));
        assert_eq!(Segment::decode(&p).unwrap(), s);
    }
}
