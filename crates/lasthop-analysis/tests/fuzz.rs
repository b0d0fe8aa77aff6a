//! Whatever the input, the analyser returns results or an error; it never panics.

mod common;

use lasthop_analysis::{self as la, EventLog};
use lasthop_core::{Packet, Time};
use proptest::prelude::*;

/// A pcap header (microsecond or nanosecond, either byte order, a supported link type) followed
/// by `body`.
fn with_header(nanos: bool, big: bool, linktype: u32, body: &[u8]) -> Vec<u8> {
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let mut v = Vec::new();
    let w32 = |v: &mut Vec<u8>, x: u32| {
        v.extend_from_slice(&if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let w16 = |v: &mut Vec<u8>, x: u16| {
        v.extend_from_slice(&if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    w32(&mut v, magic);
    w16(&mut v, 2);
    w16(&mut v, 4);
    w32(&mut v, 0);
    w32(&mut v, 0);
    w32(&mut v, 65535);
    w32(&mut v, linktype);
    v.extend_from_slice(body);
    v
}

/// A plausible IPv4/TCP header with random fields, so that the TCP logic is exercised.
fn tcp_packet() -> impl Strategy<Value = (u64, Vec<u8>, u32)> {
    (
        0u64..10_000_000_000,
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
        any::<u8>(),
        any::<u16>(),
        0u16..3000,
        proptest::collection::vec(any::<u8>(), 0..44),
        0u8..4,
    )
        .prop_map(|(t, dir, seq, ack, flags, win, len, opts, port)| {
            let opts_len = opts.len() / 4 * 4;
            let doff = 20 + opts_len;
            let total = 20 + doff + usize::from(len);
            let (a, b) = if dir {
                ([10, 0, 0, 1], [10, 0, 0, 2])
            } else {
                ([10, 0, 0, 2], [10, 0, 0, 1])
            };
            let (sp, dp) = if dir {
                (1000 + u16::from(port), 80)
            } else {
                (80, 1000 + u16::from(port))
            };
            let mut p = vec![0x45, 0];
            p.extend_from_slice(&(total as u16).to_be_bytes());
            p.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0]);
            p.extend_from_slice(&a);
            p.extend_from_slice(&b);
            p.extend_from_slice(&sp.to_be_bytes());
            p.extend_from_slice(&dp.to_be_bytes());
            p.extend_from_slice(
                &(seq % 5000)
                    .wrapping_add(if dir { 1_000_000 } else { 2_000_000 })
                    .to_be_bytes(),
            );
            p.extend_from_slice(
                &(ack % 5000)
                    .wrapping_add(if dir { 2_000_000 } else { 1_000_000 })
                    .to_be_bytes(),
            );
            p.push(((doff / 4) as u8) << 4);
            p.push(flags);
            p.extend_from_slice(&win.to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, 0]);
            p.extend_from_slice(&opts[..opts_len]);
            (t, p, total as u32)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = la::analyze_reader(&bytes[..]);
    }

    #[test]
    fn random_pcapng_never_panic(body in proptest::collection::vec(any::<u8>(), 0..600)) {
        // a valid section header block (little-endian), then random blocks
        let mut v = vec![0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0];
        v.extend_from_slice(&[0xff; 8]);
        v.extend_from_slice(&[28, 0, 0, 0]);
        v.extend_from_slice(&body);
        let _ = la::analyze_reader(&v[..]);
        let _ = la::analyze_reader(&[&[0x0a, 0x0d, 0x0d, 0x0a][..], &body[..]].concat()[..]);
    }

    #[test]
    fn random_records_never_panic(
        nanos in any::<bool>(),
        big in any::<bool>(),
        lt in prop::sample::select(vec![0u32, 1, 101, 108, 113, 228, 229, 276]),
        body in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let _ = la::analyze_reader(&with_header(nanos, big, lt, &body)[..]);
    }

    #[test]
    fn random_tcp_packets_never_panic(mut pkts in proptest::collection::vec(tcp_packet(), 0..200)) {
        pkts.sort_by_key(|p| p.0);
        let mut an = la::Analyzer::default();
        for (t, data, wire) in &pkts {
            an.packet(Time(*t), &Packet::with_wire_len(data.clone(), *wire));
        }
        let conns = an.finish();
        for c in &conns {
            let _ = la::csv_row(c);
            prop_assert!(c.c2s.rexmt_pkts <= c.c2s.packets);
        }
        let _ = la::format_table(&conns);
        let _ = la::merge_sides(&conns, &conns);
    }

    #[test]
    fn random_event_logs_never_panic(lines in proptest::collection::vec("[a-z0-9:>.,]{0,60}", 0..30)) {
        let text = format!("time_ns,event,dir,packet,flow,ip_id,tcp_seq,tcp_ack,tcp_len,bytes,queue_pkts,queue_bytes,lsb_bytes,lrb_bytes,cause,attempt,state,delay_ns,actual_ns\n{}", lines.join("\n"));
        if let Ok(log) = EventLog::from_reader(text.as_bytes(), "e") {
            let mut conns = Vec::new();
            log.join(&mut conns);
        }
    }

    #[test]
    fn random_udp_datagrams_never_panic(
        datagrams in proptest::collection::vec(
            (0u64..5_000_000_000, any::<bool>(), 0u32..64, proptest::collection::vec(any::<u8>(), 0..40), 0u32..2000),
            0..80,
        ),
        corrupt in proptest::collection::vec((0usize..60, any::<u8>()), 0..4),
    ) {
        use lasthop_analysis::udp;
        use std::net::{IpAddr, Ipv4Addr, SocketAddrV4};
        let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 19, 0, 1));
        let mut hosts = vec![(IpAddr::V4(a), vec![]), (IpAddr::V4(b), vec![])];
        for (t, at_receiver, seq, tail, wire) in &datagrams {
            let mut head = udp::Record { seq: *seq, sent_ns: *t }.encode().to_vec();
            head.extend_from_slice(tail);
            let p = lasthop_core::wire::build_ipv4_udp(
                SocketAddrV4::new(a, 7000), SocketAddrV4::new(b, 7001), 0, 0, &head, *wire);
            let mut bytes = p.data.clone();
            for (i, v) in &corrupt {
                if let Some(x) = bytes.get_mut(*i) {
                    *x = *v;
                }
            }
            if let Some(d) = udp::parse_datagram(Time(*t), &bytes, Some(p.wire_len)) {
                hosts[usize::from(*at_receiver)].1.push(d);
            }
        }
        for h in &mut hosts {
            h.1.sort_by_key(|d| d.time);
        }
        for f in udp::udp_flows(&hosts) {
            prop_assert!(f.received + f.duplicates >= f.packets.len() as u64);
            let _ = (f.spacing_ms(), f.delay_ms(), f.throughput_bytes_per_s(), f.loss_rate());
            let _ = udp::udp_csv(std::slice::from_ref(&f));
        }
    }
}
