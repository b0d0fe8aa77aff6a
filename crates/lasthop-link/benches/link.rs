//! Packets per second through the link model on one core: `cargo bench -p lasthop-link`.
//!
//! Each scenario pushes packets of 576 bytes at the link's line rate into one direction (and a
//! 40-byte ACK for every second one into the other), runs the model's timers in between as a
//! driver would, and drains outputs and events. Reported: the median of 7 runs, in packets
//! pushed per wall-clock second. Figures go to BENCHMARKS.md.

use lasthop_core::{Dur, Packet, Seeds, Time};
use lasthop_link::{Dir, EventCsv, Link, LinkSpec, LogLevel};
use std::hint::black_box;
use std::time::Instant;

fn packet(len: usize) -> Packet {
    let b = etherparse::PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
        .tcp(5001, 80, 1, 65535)
        .ack(1);
    let mut v = Vec::new();
    b.write(&mut v, &vec![0u8; len - 40]).unwrap();
    Packet::from_bytes(v)
}

/// Pushes `n` data packets `gap` apart (plus ACKs upstream) and returns packets per second.
fn run(spec: &str, n: u64, gap: Dur, level: LogLevel, csv: bool) -> f64 {
    let cfg = LinkSpec::config_from_str(spec).unwrap();
    let (data, ack) = (packet(576), packet(40));
    let start = Instant::now();
    let mut link = Link::new(cfg, Seeds::new(1, 0), level);
    let mut events = Vec::new();
    let mut sink = EventCsv::new(std::io::sink()).unwrap();
    let mut out = 0u64;
    let mut pushed = 0u64;
    for i in 0..n {
        let t = Time(i * gap.0);
        while let Some(next) = link.poll_timeout().filter(|&x| x <= t) {
            link.handle_timeout(next);
        }
        link.push(t, Dir::Down, data.clone());
        pushed += 1;
        if i % 2 == 0 {
            link.push(t, Dir::Up, ack.clone());
            pushed += 1;
        }
        while let Some(o) = link.poll_output() {
            out += black_box(o.packet.wire_len) as u64;
        }
        link.drain_events(&mut events);
        if csv {
            for e in &events {
                sink.write(e, None).unwrap();
            }
        }
        events.clear();
    }
    black_box(out);
    pushed as f64 / start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/links");
    let high = std::fs::read_to_string(format!("{root}/seed002-high.toml")).unwrap();
    let pass = "[both]\nrate = \"unlimited\"\n";
    let n = 1_000_000;
    let scenarios: [(&str, &str, Dur, LogLevel, bool); 5] = [
        (
            "pass-through, no log",
            pass,
            Dur::from_micros(1),
            LogLevel::None,
            false,
        ),
        (
            "pass-through, log all to CSV",
            pass,
            Dur::from_micros(1),
            LogLevel::All,
            true,
        ),
        (
            "seed002-high ARQ, no log",
            &high,
            Dur::from_millis(72),
            LogLevel::None,
            false,
        ),
        (
            "seed002-high ARQ, log drops",
            &high,
            Dur::from_millis(72),
            LogLevel::Drops,
            true,
        ),
        (
            "seed002-high ARQ, log all to CSV",
            &high,
            Dur::from_millis(72),
            LogLevel::All,
            true,
        ),
    ];
    println!("{:<36} {:>14}", "scenario", "packets/s");
    for (name, spec, gap, level, csv) in scenarios {
        let pps = median((0..7).map(|_| run(spec, n, gap, level, csv)).collect());
        println!("{name:<36} {:>12.2} M", pps / 1e6);
    }
}
