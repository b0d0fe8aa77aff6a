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

/// Arbitrary bytes as packets into a TCP host that listens on port 80 and has opened a
/// connection from port 1024 to the peer's 5000. Each packet: a control byte, a length byte,
/// that many bytes. Control bit 0: write the host's and peer's addresses and one of the two
/// connections' ports into the IPv4/TCP headers (so that the bytes reach a connection); bits
/// 1..=3: how far the clock moves (0 to 7 × 50 ms); bit 4: run the host's timers first.
pub fn tcp_input(data: &[u8]) {
    let cfg = lasthop_tcp::TcpConfig {
        timestamps: true,
        dsack: true,
        ..lasthop_tcp::TcpConfig::default()
    };
    let mut h = lasthop_tcp::Host::new(HOST, cfg);
    h.listen(80);
    let mut now = Time(1_000_000);
    h.connect(now, 1024, SocketAddrV4::new(PEER, 5000), 1000);
    let mut input = Bytes(data);
    let mut steps = 0;
    while let (Some(ctl), Some(len)) = (input.u8(), input.u8()) {
        steps += 1;
        if steps > 200 {
            break;
        }
        let mut bytes = input.take(len as usize).to_vec();
        if ctl & 1 != 0 && bytes.len() >= 24 {
            bytes[0] = (bytes[0] & 0x0f) | 0x40;
            let ihl = ((bytes[0] & 0x0f) as usize * 4).max(20);
            bytes[9] = 6;
            bytes[12..16].copy_from_slice(&PEER.octets());
            bytes[16..20].copy_from_slice(&HOST.octets());
            if bytes.len() >= ihl + 4 {
                let (sport, dport) = if ctl & 0x20 != 0 {
                    (5000u16, 1024u16)
                } else {
                    (4000, 80)
                };
                bytes[ihl..ihl + 2].copy_from_slice(&sport.to_be_bytes());
                bytes[ihl + 2..ihl + 4].copy_from_slice(&dport.to_be_bytes());
            }
        }
        now = Time(now.0 + u64::from((ctl >> 1) & 7) * 50_000_000);
        if ctl & 0x10 != 0 {
            if let Some(t) = h.poll_timeout() {
                now = Time(now.0.max(t.0));
                h.handle_timeout(now);
            }
        }
        let wire = bytes.len() as u32 + u32::from(ctl >> 6) * 500;
        let _ = h.handle_packet(now, &Packet::with_wire_len(bytes, wire));
        for _ in 0..500 {
            if h.poll_transmit(now).is_none() {
                break;
            }
        }
        h.drain_events(|_, _| {});
    }
    // Run the timers out for a while: retransmissions, keepalives, time-wait.
    for _ in 0..200 {
        let Some(t) = h.poll_timeout() else { break };
        now = Time(now.0.max(t.0));
        h.handle_timeout(now);
        while h.poll_transmit(now).is_some() {}
        h.drain_events(|_, _| {});
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
    let _ = lasthop_analysis::analyze_reader(data);
    let _ = lasthop_analysis::capture::read_pcap_ip(data, "fuzz", |_, _, _| true);
    let _ = lasthop_analysis::capture::read_pcapng_ip(data, "fuzz", |_, _, _| true);
}
