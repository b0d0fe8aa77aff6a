//! Hand-built captures for the tests: a tiny script language for one TCP connection's packets,
//! written as pcap in several link types and time resolutions.
#![allow(dead_code)]

use etherparse::{PacketBuilder, TcpOptionElement};
use lasthop_core::output::PcapSink;
use lasthop_core::{Packet, Time};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::path::Path;

pub const CLIENT: ([u8; 4], u16) = ([198, 18, 0, 1], 5001);
pub const SERVER: ([u8; 4], u16) = ([198, 19, 0, 1], 80);

/// One TCP segment of a scripted connection.
#[derive(Clone, Debug)]
pub struct Seg {
    pub t_ms: u64,
    pub from_client: bool,
    pub seq: u32,
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub len: usize,
    pub sack: Vec<(u32, u32)>,
    pub sack_perm: bool,
    pub window: u16,
    pub ip_id: u16,
    pub wscale: Option<u8>,
    /// Client and server ports, to build more than one connection.
    pub ports: (u16, u16),
}

pub fn seg(t_ms: u64, from_client: bool, seq: u32) -> Seg {
    Seg {
        t_ms,
        from_client,
        seq,
        ack: None,
        syn: false,
        fin: false,
        rst: false,
        len: 0,
        sack: vec![],
        sack_perm: false,
        window: 65535,
        ip_id: 0,
        wscale: None,
        ports: (CLIENT.1, SERVER.1),
    }
}

impl Seg {
    pub fn ack(mut self, a: u32) -> Seg {
        self.ack = Some(a);
        self
    }
    pub fn syn(mut self) -> Seg {
        self.syn = true;
        self.sack_perm = true;
        self
    }
    pub fn fin(mut self) -> Seg {
        self.fin = true;
        self
    }
    pub fn rst(mut self) -> Seg {
        self.rst = true;
        self
    }
    pub fn len(mut self, n: usize) -> Seg {
        self.len = n;
        self
    }
    pub fn sack(mut self, blocks: &[(u32, u32)]) -> Seg {
        self.sack = blocks.to_vec();
        self
    }
    pub fn wscale(mut self, ws: u8) -> Seg {
        self.wscale = Some(ws);
        self
    }
    pub fn window(mut self, w: u16) -> Seg {
        self.window = w;
        self
    }
    pub fn ports(mut self, c: u16, s: u16) -> Seg {
        self.ports = (c, s);
        self
    }

    /// The whole IP datagram, payload of zeros included.
    pub fn ip_bytes(&self) -> Vec<u8> {
        let (src, dst, sport, dport) = if self.from_client {
            (CLIENT.0, SERVER.0, self.ports.0, self.ports.1)
        } else {
            (SERVER.0, CLIENT.0, self.ports.1, self.ports.0)
        };
        let mut b = PacketBuilder::ipv4(src, dst, 64).tcp(sport, dport, self.seq, self.window);
        if let Some(a) = self.ack {
            b = b.ack(a);
        }
        if self.syn {
            b = b.syn();
        }
        if self.fin {
            b = b.fin();
        }
        if self.rst {
            b = b.rst();
        }
        let mut opts = Vec::new();
        if self.sack_perm {
            opts.push(TcpOptionElement::MaximumSegmentSize(1460));
            opts.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
        }
        if let Some(ws) = self.wscale {
            opts.push(TcpOptionElement::Noop);
            opts.push(TcpOptionElement::WindowScale(ws));
        }
        if !self.sack.is_empty() {
            let mut rest = [None; 3];
            for (i, b) in self.sack.iter().skip(1).take(3).enumerate() {
                rest[i] = Some(*b);
            }
            opts.push(TcpOptionElement::SelectiveAcknowledgement(
                self.sack[0],
                rest,
            ));
        }
        if !opts.is_empty() {
            b = b.options(&opts).expect("options fit");
        }
        let mut out = Vec::new();
        b.write(&mut out, &vec![0u8; self.len]).unwrap();
        out[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        // fix the header checksum after setting the id
        out[10] = 0;
        out[11] = 0;
        let h = etherparse::Ipv4HeaderSlice::from_slice(&out)
            .unwrap()
            .to_header();
        out[10..12].copy_from_slice(&h.calc_header_checksum().to_be_bytes());
        out
    }

    /// Length of IP + TCP headers.
    pub fn header_len(&self) -> usize {
        self.ip_bytes().len() - self.len
    }
}

/// How to write a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Raw IP, nanosecond timestamps, header-only records (what our simulator writes).
    SimHeaderOnly,
    /// Raw IP, microsecond timestamps, full packets.
    RawMicro,
    /// Ethernet, microsecond, full packets.
    EthernetMicro,
    /// Linux cooked (SLL), nanosecond, full packets.
    SllNano,
    /// Link type IPV4 (228), microsecond, full packets.
    Ipv4Micro,
    /// pcapng, raw IP, default (microsecond) timestamps, full packets.
    PcapNgMicro,
    /// pcapng, Ethernet, nanosecond `if_tsresol`, header-only records.
    PcapNgNanoHeaders,
}

pub fn pcap_bytes(segs: &[Seg], fmt: Format) -> Vec<u8> {
    let base: u64 = 1_700_000_000_000_000_000; // an absolute epoch, as real captures have
                                               // distinct IP ids, as real stacks send (tcptrace checks them for "hardware duplicates")
    let segs: Vec<Seg> = segs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut s = s.clone();
            if s.ip_id == 0 {
                s.ip_id = (i as u16).wrapping_add(1);
            }
            s
        })
        .collect();
    let segs = &segs[..];
    if fmt == Format::SimHeaderOnly {
        let mut sink = PcapSink::new(Vec::new(), 256).unwrap();
        for s in segs {
            let full = s.ip_bytes();
            let hdr = full[..s.header_len()].to_vec();
            let p = Packet::with_wire_len(hdr, full.len() as u32);
            sink.write(Time(s.t_ms * 1_000_000), &p).unwrap();
        }
        return sink.into_inner();
    }
    if matches!(fmt, Format::PcapNgMicro | Format::PcapNgNanoHeaders) {
        use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
        use pcap_file::pcapng::blocks::interface_description::{
            InterfaceDescriptionBlock, InterfaceDescriptionOption,
        };
        use pcap_file::pcapng::PcapNgWriter;
        let nano = fmt == Format::PcapNgNanoHeaders;
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        let idb = InterfaceDescriptionBlock {
            linktype: if nano {
                DataLink::ETHERNET
            } else {
                DataLink::RAW
            },
            snaplen: 0,
            options: if nano {
                vec![InterfaceDescriptionOption::IfTsResol(9)]
            } else {
                vec![]
            },
        };
        w.write_pcapng_block(idb).unwrap();
        for s in segs {
            let ip = s.ip_bytes();
            let (frame, orig) = if nano {
                let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
                f.extend_from_slice(&ip[..s.header_len()]);
                (f, 14 + ip.len())
            } else {
                (ip.clone(), ip.len())
            };
            let ns = base + s.t_ms * 1_000_000;
            // pcap-file stores the raw tick count in the Duration
            let ticks = if nano { ns } else { ns / 1000 };
            let epb = EnhancedPacketBlock {
                interface_id: 0,
                timestamp: std::time::Duration::from_nanos(ticks),
                original_len: orig as u32,
                data: std::borrow::Cow::Owned(frame),
                options: vec![],
            };
            w.write_pcapng_block(epb).unwrap();
        }
        return w.into_inner();
    }
    let (dl, res) = match fmt {
        Format::RawMicro => (DataLink::RAW, TsResolution::MicroSecond),
        Format::EthernetMicro => (DataLink::ETHERNET, TsResolution::MicroSecond),
        Format::SllNano => (DataLink::LINUX_SLL, TsResolution::NanoSecond),
        Format::Ipv4Micro => (DataLink::IPV4, TsResolution::MicroSecond),
        Format::SimHeaderOnly | Format::PcapNgMicro | Format::PcapNgNanoHeaders => unreachable!(),
    };
    let header = PcapHeader {
        datalink: dl,
        ts_resolution: res,
        snaplen: 65535,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
    for s in segs {
        let ip = s.ip_bytes();
        let frame = match fmt {
            Format::EthernetMicro => {
                let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
                f.extend_from_slice(&ip);
                f
            }
            Format::SllNano => {
                let mut f = vec![0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
                f.extend_from_slice(&ip);
                f
            }
            _ => ip,
        };
        let ts = std::time::Duration::from_nanos(base + s.t_ms * 1_000_000);
        w.write_packet(&PcapPacket::new(ts, frame.len() as u32, &frame))
            .unwrap();
    }
    w.into_writer()
}

pub fn write_pcap(path: &Path, segs: &[Seg], fmt: Format) {
    std::fs::write(path, pcap_bytes(segs, fmt)).unwrap();
}

/// The scripted connection of the hand test (see `hand.rs` for the expected numbers):
/// handshake, a 50-byte request, 8 server segments of 100 bytes with a loss repaired by fast
/// retransmit after 3 SACK dupacks, two losses repaired by an RTO and go-back-N, a spurious
/// retransmission answered by a D-SACK, and a FIN exchange where the server closes first.
pub fn hand_script() -> Vec<Seg> {
    let (c, s) = (true, false);
    vec![
        seg(0, c, 1000).syn(),
        seg(100, s, 5000).syn().ack(1001),
        seg(200, c, 1001).ack(5001),
        seg(210, c, 1001).ack(5001).len(50),
        seg(310, s, 5001).ack(1051),
        seg(320, s, 5001).ack(1051).len(100), // D1
        seg(321, s, 5101).ack(1051).len(100), // D2, lost
        seg(322, s, 5201).ack(1051).len(100), // D3
        seg(323, s, 5301).ack(1051).len(100), // D4
        seg(324, s, 5401).ack(1051).len(100), // D5
        seg(420, c, 1051).ack(5101),
        seg(422, c, 1051).ack(5101).sack(&[(5201, 5301)]),
        seg(423, c, 1051).ack(5101).sack(&[(5201, 5401)]),
        seg(424, c, 1051).ack(5101).sack(&[(5201, 5501)]),
        seg(425, s, 5101).ack(1051).len(100), // D2 fast retransmit
        seg(525, c, 1051).ack(5501),
        seg(530, s, 5501).ack(1051).len(100),  // D6, lost
        seg(531, s, 5601).ack(1051).len(100),  // D7, lost
        seg(1530, s, 5501).ack(1051).len(100), // D6 after an RTO
        seg(1630, c, 1051).ack(5601),
        seg(1631, s, 5601).ack(1051).len(100), // D7, go-back-N
        seg(1731, c, 1051).ack(5701),
        seg(1732, s, 5701).ack(1051).len(100), // D8
        seg(1832, c, 1051).ack(5801),
        seg(1833, s, 5701).ack(1051).len(100), // D8 again: spurious
        seg(1933, c, 1051).ack(5801).sack(&[(5701, 5801)]), // D-SACK
        seg(1940, s, 5801).ack(1051).fin(),
        seg(2040, c, 1051).ack(5802),
        seg(2041, c, 1051).ack(5802).fin(),
        seg(2141, s, 5802).ack(1052),
    ]
}

/// A connection's two captures, the client's and the server's: each `(segment at its send time,
/// lost)` is recorded by its sender then and by the other end `one_way_ms` later unless lost.
pub fn two_captures(packets: &[(Seg, bool)], one_way_ms: u64, fmt: Format) -> (Vec<u8>, Vec<u8>) {
    let (mut client, mut server) = (vec![], vec![]);
    for (s, lost) in packets {
        let mut arrived = s.clone();
        arrived.t_ms += one_way_ms;
        let (sender, receiver) = if s.from_client {
            (&mut client, &mut server)
        } else {
            (&mut server, &mut client)
        };
        sender.push(s.clone());
        if !lost {
            receiver.push(arrived);
        }
    }
    for v in [&mut client, &mut server] {
        v.sort_by_key(|s| s.t_ms);
    }
    (pcap_bytes(&client, fmt), pcap_bytes(&server, fmt))
}
