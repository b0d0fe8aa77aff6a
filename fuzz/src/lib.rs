//! The bodies of the fuzz targets, as plain functions: `fuzz_targets/*.rs` (cargo-fuzz,
//! nightly) call them with libFuzzer's inputs, and `crates/lasthop/tests/fuzz_replay.rs`
//! (stable, part of `cargo test --workspace`) includes this file with `#[path]` and replays the
//! committed corpus `fuzz/corpus/<target>/` through them. Each must not panic on any input; an
//! error returned by the code under test is fine.

#![allow(dead_code)]

use lasthop_core::{Packet, Seeds, Time};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A target's body.
pub type Body = fn(&[u8]);

/// The targets by name, as the corpus directories are named.
pub const TARGETS: &[(&str, Body)] = &[
    ("link_spec", link_spec),
    ("scenario_spec", scenario_spec),
    ("experiment_spec", experiment_spec),
    ("tcp_input", tcp_input),
    ("link_model", link_model),
    ("pcap_reader", pcap_reader),
];

const LINK_E0: &str = include_str!("../../examples/links/seed000-e0.toml");
const LINK_HIGH: &str = include_str!("../../examples/links/seed002-high.toml");
const SCENARIO_E0: &str = include_str!("../../examples/scenarios/seed000-e0.toml");

/// A directory with `links/seed000-e0.toml`, `links/seed002-high.toml` and
/// `scenarios/seed000-e0.toml`, so that fuzzed scenarios and experiments can name real files
/// (`../links/seed000-e0.toml` from `scenarios/`, `../scenarios/seed000-e0.toml` from
/// `experiments/`). Made once per process.
fn spec_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("lasthop-fuzz-{}", std::process::id()));
        for sub in ["links", "scenarios", "experiments"] {
            std::fs::create_dir_all(d.join(sub)).expect("temp dir");
        }
        std::fs::write(d.join("links/seed000-e0.toml"), LINK_E0).expect("temp file");
        std::fs::write(d.join("links/seed002-high.toml"), LINK_HIGH).expect("temp file");
        std::fs::write(d.join("scenarios/seed000-e0.toml"), SCENARIO_E0).expect("temp file");
        d
    })
}

/// Removes the directory of [`spec_dir`], if this process made it (the replay test calls it at
/// its end; a libFuzzer process leaves its one directory behind).
pub fn remove_spec_dir() {
    let d = std::env::temp_dir().join(format!("lasthop-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(d);
}

/// A link spec's text: parse and validate it; when valid, describe it and build a link from it.
pub fn link_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = lasthop_link::LinkSpec::config_from_str(text) {
        let _ = cfg.describe();
        let _ = lasthop_link::Link::new(cfg, Seeds::new(1, 0), lasthop_link::LogLevel::All);
    }
}

/// A scenario's text, with its link path relative to a directory holding seed 000's e0 link.
pub fn scenario_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = lasthop_scenario::Scenario::from_str_in(text, &spec_dir().join("scenarios"));
}

/// An experiment's text, with paths relative to a directory beside `scenarios/` and `links/`.
pub fn experiment_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = lasthop_experiment::Experiment::from_str_in(text, &spec_dir().join("experiments"));
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.u8()?, self.u8()?]))
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

const HOST: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 2);

/// What the fuzzer's peer knows of one of the host's two connections: its own sequence space,
/// and the host's as seen in what the host sent.
#[derive(Default)]
struct Peer {
    /// The peer's next sequence number (its ISN until its SYN is sent).
    nxt: u32,
    /// The host's ISN, once its SYN was seen.
    host_isn: Option<u32>,
    /// The highest sequence number the host has sent (seq + length), as far as seen.
    host_max: u32,
    /// The last ACK the peer sent.
    last_ack: u32,
    /// The host's last 16 TSvals, newest first.
    host_ts: Vec<u32>,
    /// Whether the host was given data to send on this connection.
    fed: bool,
}

/// Sequence number a is after b (mod 2^32).
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Packets into a TCP host that listens on port 80 and has opened a connection from port 1024
/// to the peer's 5000 with 64 KiB to send; the fuzzer plays the peer of both connections.
///
/// The first byte picks the host's TCP switches (SACK, timestamps, D-SACK, F-RTO, FACK, ECN, the
/// delayed-ACK mode; an invalid combination falls back to the defaults with timestamps and
/// D-SACK). Then steps, each a control byte: bit 0 the connection (0: the active one to 5000,
/// 1: the one accepted on port 80 from 4000, which is given 32 KiB to send once it exists);
/// bits 1..=3 how far the clock moves (0 to 7 × 50 ms); bit 4: run the host's timers first;
/// bit 6: the application closes that connection. With bit 5 the step is raw bytes (a length
/// byte and that many bytes, with the addresses and the connection's ports written into the
/// IPv4/TCP headers when bit 7 is set and there are 24 bytes), else a segment built from fields
/// relative to the two sides' sequence numbers, so that it reaches the connection's state
/// machine and recovery and not only the header checks:
/// flags; seq = the peer's next sequence number + i8 × MSS + i8; an ACK selector (bits 0..=1:
/// relative to the highest sequence number the host sent, to the peer's last ACK, to the host's
/// ISN + 1, or an absolute u32 that follows) with i8 × MSS + i8 after it; a window byte (× 257);
/// a payload byte (× 8 bytes, virtual); an options byte: bit 0 timestamps (a byte follows: which
/// of the host's last 16 TSvals to echo), bits 1..=2 how many SACK blocks (two bytes each: start
/// after the peer's last ACK and length, in MSS), bit 3 MSS, bit 4 SACK permitted, bit 5 window
/// scale (the last three on SYNs), bits 6..=7 the IP header's ECN codepoint. The peer's next
/// sequence number advances by a segment sent at it. What the host sends is read back (its ISN,
/// highest sequence number and TSvals); at the end its timers are run out.
pub fn tcp_input(data: &[u8]) {
    use lasthop_tcp::{DelayedAck, Segment, TcpConfig};
    let mut input = Bytes(data);
    let sw = input.u8().unwrap_or(0);
    let cfg = TcpConfig {
        sack: sw & 1 == 0,
        timestamps: sw & 2 == 0,
        dsack: sw & 4 == 0,
        frto: sw & 8 != 0,
        fack: sw & 16 != 0,
        ecn: sw & 32 != 0,
        delayed_ack: [
            DelayedAck::Static,
            DelayedAck::Off,
            DelayedAck::Adaptive,
            DelayedAck::Static,
        ][usize::from(sw >> 6)],
        ..TcpConfig::default()
    };
    let cfg = if cfg.validate().is_ok() {
        cfg
    } else {
        TcpConfig {
            timestamps: true,
            dsack: true,
            ..TcpConfig::default()
        }
    };
    let mut h = lasthop_tcp::Host::new(HOST, cfg);
    h.listen(80);
    let mut now = Time(1_000_000);
    let keys = [
        (SocketAddrV4::new(HOST, 1024), SocketAddrV4::new(PEER, 5000)),
        (SocketAddrV4::new(HOST, 80), SocketAddrV4::new(PEER, 4000)),
    ];
    let active = h.connect(now, 1024, SocketAddrV4::new(PEER, 5000), 1000);
    debug_assert_eq!(active, keys[0]);
    let mut peers = [
        Peer {
            nxt: 50_000,
            ..Peer::default()
        },
        Peer {
            nxt: 0xffff_f000, // wraps soon
            ..Peer::default()
        },
    ];
    if let Some(c) = h.conn_mut(&keys[0]) {
        c.send(64 * 1024);
        peers[0].fed = true;
    }
    // What the host sent: its ISN, highest sequence number and timestamps.
    let drain = |h: &mut lasthop_tcp::Host, now: Time, peers: &mut [Peer; 2]| {
        for _ in 0..500 {
            let Some(p) = h.poll_transmit(now) else { break };
            let Some(seg) = Segment::decode(&p) else {
                continue;
            };
            let Some(i) = keys.iter().position(|k| Some(k.1) == seg.dst) else {
                continue;
            };
            let peer = &mut peers[i];
            if seg.has(lasthop_core::wire::SYN) && peer.host_isn.is_none() {
                peer.host_isn = Some(seg.seq);
                peer.host_max = seg.seq;
            }
            let end = seg.seq.wrapping_add(seg.seq_len());
            if after(end, peer.host_max) {
                peer.host_max = end;
            }
            if let Some((tsval, _)) = seg.ts {
                peer.host_ts.insert(0, tsval);
                peer.host_ts.truncate(16);
            }
        }
        h.drain_events(|_, _| {});
        if !peers[1].fed {
            if let Some(c) = h.conn_mut(&keys[1]) {
                c.send(32 * 1024);
                peers[1].fed = true;
            }
        }
    };
    drain(&mut h, now, &mut peers);
    let mut steps = 0;
    while let Some(ctl) = input.u8() {
        steps += 1;
        if steps > 300 {
            break;
        }
        let i = usize::from(ctl & 1);
        now = Time(now.0 + u64::from((ctl >> 1) & 7) * 50_000_000);
        if ctl & 0x10 != 0 {
            if let Some(t) = h.poll_timeout() {
                now = Time(now.0.max(t.0));
                h.handle_timeout(now);
            }
        }
        if ctl & 0x40 != 0 {
            if let Some(c) = h.conn_mut(&keys[i]) {
                c.close();
            }
        }
        let (local, remote) = keys[i];
        let pkt = if ctl & 0x20 != 0 {
            let Some(len) = input.u8() else { break };
            let mut bytes = input.take(len as usize).to_vec();
            if ctl & 0x80 != 0 && bytes.len() >= 24 {
                bytes[0] = (bytes[0] & 0x0f) | 0x40;
                let ihl = ((bytes[0] & 0x0f) as usize * 4).max(20);
                bytes[9] = 6;
                bytes[12..16].copy_from_slice(&PEER.octets());
                bytes[16..20].copy_from_slice(&HOST.octets());
                if bytes.len() >= ihl + 4 {
                    bytes[ihl..ihl + 2].copy_from_slice(&remote.port().to_be_bytes());
                    bytes[ihl + 2..ihl + 4].copy_from_slice(&local.port().to_be_bytes());
                }
            }
            let wire = bytes.len() as u32 + u32::from(len >> 6) * 500;
            Packet::with_wire_len(bytes, wire)
        } else {
            let mss = h.conn(&keys[i]).map_or(536, |c| c.mss()).max(1);
            let rel = |seg: u8, byte: u8| {
                (i32::from(seg as i8).wrapping_mul(mss as i32)).wrapping_add(i32::from(byte as i8))
                    as u32
            };
            let (Some(flags), Some(sseg), Some(sbyte), Some(asel)) =
                (input.u8(), input.u8(), input.u8(), input.u8())
            else {
                break;
            };
            let peer = &peers[i];
            let seq = peer.nxt.wrapping_add(rel(sseg, sbyte));
            let isn1 = peer.host_isn.unwrap_or(0).wrapping_add(1);
            let ack = match asel & 3 {
                3 => {
                    let b = input.take(4);
                    let mut a = [0u8; 4];
                    a[..b.len()].copy_from_slice(b);
                    u32::from_le_bytes(a)
                }
                base => {
                    let (Some(aseg), Some(abyte)) = (input.u8(), input.u8()) else {
                        break;
                    };
                    let base = [peer.host_max, peer.last_ack, isn1][usize::from(base)];
                    base.wrapping_add(rel(aseg, abyte))
                }
            };
            let (Some(win), Some(pay), Some(opts)) = (input.u8(), input.u8(), input.u8()) else {
                break;
            };
            let ts = if opts & 1 != 0 {
                let k = usize::from(input.u8().unwrap_or(0) & 15);
                let ecr = peer.host_ts.get(k).copied().unwrap_or(0);
                Some(((now.0 / 1_000_000) as u32, ecr))
            } else {
                None
            };
            let mut sacks = Vec::new();
            for _ in 0..(opts >> 1) & 3 {
                let (Some(st), Some(len)) = (input.u8(), input.u8()) else {
                    break;
                };
                let left = peer.last_ack.wrapping_add(u32::from(st).wrapping_mul(mss));
                sacks.push((left, left.wrapping_add(u32::from(len).wrapping_mul(mss))));
            }
            let mut seg = Segment {
                src: Some(remote),
                dst: Some(local),
                seq,
                ack,
                flags,
                window: u16::from(win).wrapping_mul(257),
                mss: (opts & 8 != 0).then_some(536),
                sack_permitted: opts & 16 != 0,
                ts,
                wscale: (opts & 32 != 0).then_some(2),
                sacks,
                payload: u32::from(pay) * 8,
                ip_id: steps as u16,
                ecn: opts >> 6,
            };
            // The encoder takes at most 40 bytes of options (as TCP does): SACK blocks that do
            // not fit with the others are left out.
            while seg.options_len() > 40 {
                seg.sacks.pop();
            }
            let peer = &mut peers[i];
            if flags & lasthop_core::wire::ACK != 0 {
                peer.last_ack = ack;
            }
            if seq == peer.nxt && flags & lasthop_core::wire::RST == 0 {
                peer.nxt = peer.nxt.wrapping_add(seg.seq_len());
            }
            seg.encode()
        };
        let _ = h.handle_packet(now, &pkt);
        drain(&mut h, now, &mut peers);
    }
    // Run the timers out for a while: retransmissions, keepalives, time-wait.
    for _ in 0..200 {
        let Some(t) = h.poll_timeout() else { break };
        now = Time(now.0.max(t.0));
        h.handle_timeout(now);
        drain(&mut h, now, &mut peers);
    }
}

/// Pushes of packets into a link: the first byte picks the link (seed 000's e0, seed 002's
/// high-ARQ link, or a spec made of the next bytes up to a NUL as TOML text), then each push is
/// a time delta (u16: 10 µs units, or 1 µs units when bit 15 is set), a control byte (bit 0 the
/// direction, bit 1 raw input bytes as the packet instead of a TCP header, bit 2 ECT(0), the rest
/// the TCP flags) and a length (u16, mod 2000), with timeouts up to the push's time handled and
/// outputs and events drained before it; at the end the link runs until it is empty.
pub fn link_model(data: &[u8]) {
    let mut input = Bytes(data);
    let Some(which) = input.u8() else { return };
    let cfg = match which % 4 {
        0 | 1 => lasthop_link::LinkSpec::config_from_str(LINK_E0),
        2 => lasthop_link::LinkSpec::config_from_str(LINK_HIGH),
        _ => {
            let end = input
                .0
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(input.0.len());
            let text = input.take(end).to_vec();
            input.u8();
            match std::str::from_utf8(&text) {
                Ok(t) => lasthop_link::LinkSpec::config_from_str(t),
                Err(_) => return,
            }
        }
    };
    let Ok(cfg) = cfg else { return };
    let mut link = lasthop_link::Link::new(
        cfg,
        Seeds::new(u64::from(which), 0),
        lasthop_link::LogLevel::All,
    );
    let mut now = Time::ZERO;
    let mut events = Vec::new();
    let mut steps = 0;
    let service = |link: &mut lasthop_link::Link, upto: Time, events: &mut Vec<_>| {
        for _ in 0..10_000 {
            match link.poll_timeout() {
                Some(t) if t <= upto => link.handle_timeout(t),
                _ => break,
            }
            while link.poll_output().is_some() {}
        }
        while link.poll_output().is_some() {}
        link.drain_events(events);
        events.clear();
    };
    while let (Some(delta), Some(ctl), Some(len)) = (input.u16(), input.u8(), input.u16()) {
        steps += 1;
        if steps > 500 {
            break;
        }
        // bit 15 of delta: microseconds, else 10 µs units (up to ~0.33 s per step)
        let dt = if delta & 0x8000 != 0 {
            u64::from(delta & 0x7fff) * 1_000
        } else {
            u64::from(delta) * 10_000
        };
        now = Time(now.0 + dt);
        service(&mut link, now, &mut events);
        let dir = if ctl & 1 == 0 {
            lasthop_link::Dir::Down
        } else {
            lasthop_link::Dir::Up
        };
        let len = usize::from(len % 2000);
        let pkt = if ctl & 2 != 0 {
            // raw bytes from the input as the IP packet
            Packet::with_wire_len(input.take(len.min(64)).to_vec(), len as u32)
        } else {
            let (src, dst) = match dir {
                lasthop_link::Dir::Down => (PEER, HOST),
                lasthop_link::Dir::Up => (HOST, PEER),
            };
            let mut b = vec![0u8; 40];
            let ecn = if ctl & 4 != 0 { 2 } else { 0 }; // ECT(0) or not ECT
            lasthop_core::wire::write_ipv4_header(&mut b, src, dst, 6, len.max(40) as u32, 0, ecn);
            b[20..22].copy_from_slice(&5000u16.to_be_bytes());
            b[22..24].copy_from_slice(&80u16.to_be_bytes());
            b[32] = 0x50;
            b[33] = ctl >> 2;
            Packet::with_wire_len(b, len.max(40) as u32)
        };
        let _ = link.push(now, dir, pkt);
        let _ = link.stats(dir);
        let _ = link.queue_len(dir);
    }
    // drain everything that is left, up to a bounded number of timer firings
    for _ in 0..100_000 {
        let Some(t) = link.poll_timeout() else { break };
        link.handle_timeout(t.max(now));
        now = t.max(now);
        while link.poll_output().is_some() {}
        link.drain_events(&mut events);
        events.clear();
    }
    let _ = link.is_empty();
}

/// The analyser's reader on arbitrary bytes: the whole analysis (which sniffs pcap or pcapng by
/// the magic number), and the pcap and pcapng readers directly.
pub fn pcap_reader(data: &[u8]) {
    let one = lasthop_analysis::analyze_reader_with(data, "<capture>", Default::default());
    // The two threads' chunks, where they are used, give what one thread gives.
    if let Ok(one) = &one {
        for chunk in [64, 333, 4096] {
            if let Some(c) = lasthop_analysis::analyze_bytes_in_chunks(data, chunk) {
                assert_eq!(c.conns, one.conns, "chunks of {chunk}");
                assert_eq!(c.summary, one.summary, "chunks of {chunk}");
                assert_eq!(c.udp, one.udp, "chunks of {chunk}");
            }
        }
    }
    let _ = lasthop_analysis::capture::read_pcap_ip(data, "fuzz", |_, _, _| true);
    let _ = lasthop_analysis::capture::read_pcapng_ip(data, "fuzz", |_, _, _| true);
}
