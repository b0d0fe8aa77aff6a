//! Packets are real IP packets: real header bytes, a wire length, and a flow key.
//!
//! In emulation `data` is the whole datagram read from a TUN device. In simulation the TCP model
//! writes real IPv4 and TCP headers (with options and ECN bits) and leaves the payload virtual:
//! `data` holds the headers only and `wire_len` (the IP total length) counts the payload too. Both
//! kinds go through the same link model, the same capture writer and the same analyser.
//!
//! The types are here; what reads or writes their bytes, [`Packet`]'s constructors and
//! accessors included, is in [`crate::wire`].
//!
//! Anything that is not IPv4 TCP or UDP (ICMP, IPv6, even bytes that are no IP at all) still
//! passes through untouched; its flow key only says less.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

/// The 5-tuple of a packet. Ports are 0 for protocols without them; `proto` is 0 and the
/// addresses unspecified for bytes that are not IP.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct FlowKey {
    pub proto: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
}

impl FlowKey {
    pub const UNKNOWN: FlowKey = FlowKey {
        proto: 0,
        src: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        dst: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        sport: 0,
        dport: 0,
    };

    /// The same flow seen from the other end.
    pub fn reversed(&self) -> FlowKey {
        FlowKey {
            proto: self.proto,
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
        }
    }
}

impl fmt::Display for FlowKey {
    /// `tcp:198.18.0.1:5001>198.18.1.1:80`: one token, no commas, so it sits in a CSV cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.proto {
            0 if *self == FlowKey::UNKNOWN => return write!(f, "other"),
            6 => "tcp".to_string(),
            17 => "udp".to_string(),
            1 => "icmp".to_string(),
            p => format!("ip{p}"),
        };
        if self.sport == 0 && self.dport == 0 {
            write!(f, "{name}:{}>{}", self.src, self.dst)
        } else {
            write!(
                f,
                "{name}:{}:{}>{}:{}",
                self.src, self.sport, self.dst, self.dport
            )
        }
    }
}

/// The ECN codepoint of the IP header (RFC 3168).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ecn {
    NotEct,
    Ect1,
    Ect0,
    Ce,
}

impl Ecn {
    pub(crate) fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// ECN-capable transport: a queue may mark it instead of dropping it.
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// What the analyser and the event log want to know of a TCP segment.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TcpInfo {
    pub seq: u32,
    pub ack: u32,
    /// The flag byte (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, URG 0x20, ECE 0x40, CWR 0x80).
    pub flags: u8,
    pub window: u16,
    /// Payload bytes, from the IP total length, so it is right for virtual payloads too.
    pub payload_len: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// IP header and transport header, and the payload when it is real.
    pub data: Vec<u8>,
    /// Length of the IP datagram on the wire, payload included.
    pub wire_len: u32,
    pub flow: FlowKey,
    /// A link damaged its bytes (Seawind's FORWARD error handling, see [`Packet::damage`]): a
    /// receiving stack's checksum discards it. Real Linux reads the damaged bytes; the
    /// simulator's stacks read this flag.
    pub damaged: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire;
    use etherparse::PacketBuilder;

    fn tcp_packet(payload: usize, ecn: u8) -> Vec<u8> {
        let b = PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
            .tcp(5001, 80, 1000, 65535)
            .ack(77);
        let mut out = Vec::new();
        b.write(&mut out, &vec![0u8; payload]).unwrap();
        out[1] |= ecn;
        // Fix the checksum after touching the TOS byte.
        out[10] = 0;
        out[11] = 0;
        let s = wire::checksum(&out[..20]);
        out[10..12].copy_from_slice(&s.to_be_bytes());
        out
    }

    #[test]
    fn flow_and_tcp_fields() {
        let p = Packet::from_bytes(tcp_packet(536, 0));
        assert_eq!(p.wire_len, 576);
        assert_eq!(p.flow.to_string(), "tcp:198.18.0.1:5001>198.19.0.1:80");
        let t = p.tcp().unwrap();
        assert_eq!((t.seq, t.ack, t.payload_len), (1000, 77, 536));
        assert_eq!(t.flags & 0x10, 0x10);
    }

    #[test]
    fn virtual_payload_counts_in_wire_len() {
        let full = tcp_packet(0, 0);
        let mut hdr = full.clone();
        // A 576-byte datagram whose payload is not carried.
        hdr[2..4].copy_from_slice(&576u16.to_be_bytes());
        let p = Packet::with_wire_len(hdr, 576);
        assert_eq!(p.tcp().unwrap().payload_len, 536);
        assert_eq!(p.flow.dport, 80);
    }

    #[test]
    fn ce_mark_keeps_checksum_valid() {
        let mut p = Packet::from_bytes(tcp_packet(10, 2));
        assert_eq!(p.ecn(), Ecn::Ect0);
        assert!(p.ecn().is_ect());
        p.set_ce();
        assert_eq!(p.ecn(), Ecn::Ce);
        let h = etherparse::Ipv4HeaderSlice::from_slice(&p.data)
            .unwrap()
            .to_header();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        assert!(!Packet::from_bytes(tcp_packet(10, 0)).ecn().is_ect());
    }

    #[test]
    fn garbage_passes_untouched() {
        for bytes in [vec![], vec![0x45], vec![0xff; 3], vec![0x60; 10]] {
            let mut p = Packet::from_bytes(bytes.clone());
            assert_eq!(p.flow, FlowKey::UNKNOWN);
            assert!(p.tcp().is_none());
            p.set_ce();
            assert_eq!(p.data, bytes);
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..120), wire in 0u32..3000) {
            let mut p = Packet::with_wire_len(bytes, wire);
            let _ = (p.ecn(), p.ip_id(), p.tcp(), p.flow.to_string());
            p.set_ce();
        }
    }
}
