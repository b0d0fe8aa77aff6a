//! Simulator speed: `cargo bench -p lasthop-sim`. Figures go to BENCHMARKS.md.
//!
//! (a) seed 004's dumbbell: 100 Reno bulk flows, 1024-byte segments, 150 Mbit/s access links with
//!     15 ms one-way delay, a 45 Mbit/s RED bottleneck, 10 simulated seconds;
//! (b) seed 000's e0 run: two 188640-byte transfers over 64 kbit/s, 300 ms;
//! (d) seed 003's experiment 1 scenario: 20 thin streams (120 B every 30:3 ms) for 5 minutes
//!     over the 5000 kbit/s testbed, Linux 3.16's TCP (issue 12: "about a second").
//! Each is timed without outputs (the model alone), with a sweep's default outputs ("tables":
//! the in-process analysis's tables and link.csv, no capture, no event log, no trace, one sync
//! left to the caller) and writing every output (pcaps, events.csv at the scenario's log level,
//! tcp_trace.csv, the tables; each file synced). Reported: the median of 5 runs,
//! and bottleneck packets (released by the link, downstream) per wall-clock second.
//! (c) the cost of simulated time in which nothing happens: (b), and the same over the r1 link
//!     (whose state chain keeps changing), with both transfers started one simulated hour later.
//!     The difference to the same run started at 0 s is what the idle hour cost.

use lasthop_core::Dur;
use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;
use std::path::Path;
use std::time::Instant;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios");
    let out = tempfile::tempdir().unwrap();
    println!(
        "{:<28} {:<12} {:>10} {:>12} {:>14} {:>10}",
        "scenario", "outputs", "wall (s)", "sim (s)", "bottleneck/s", "events"
    );
    for name in [
        "seed004-dumbbell-100.toml",
        "seed000-e0-2tcp.toml",
        "seed003-uniform.toml",
    ] {
        let s = Scenario::load(root.join(name)).unwrap();
        for (label, opts) in [
            ("none", OutputOptions::NONE),
            (
                // What a run of a sweep writes by default (not its report run): the analysis's
                // tables and link.csv, computed in-process, files synced once by the caller.
                "tables",
                OutputOptions {
                    dir: Some(out.path().to_path_buf()),
                    analyse: true,
                    link_samples: true,
                    sync_each: false,
                    ..OutputOptions::NONE
                },
            ),
            ("all", OutputOptions::all(out.path())),
        ] {
            let mut walls = vec![];
            let mut last = None;
            for _ in 0..5 {
                let t = Instant::now();
                let r = lasthop_sim::run(&s, &opts).unwrap();
                walls.push(t.elapsed().as_secs_f64());
                last = Some(r);
            }
            walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let wall = walls[walls.len() / 2];
            let r = last.unwrap();
            println!(
                "{:<28} {:<12} {:>10.4} {:>12.3} {:>14.0} {:>10}",
                s.name,
                label,
                wall,
                r.end.as_secs_f64(),
                r.link[0].released as f64 / wall,
                r.events
            );
        }
    }
    println!();
    println!(
        "{:<28} {:>14} {:>14} {:>12} {:>16}",
        "idle hour", "start 0 s (s)", "start 1 h (s)", "sim end (s)", "extra wall (ms)"
    );
    let none = OutputOptions::NONE;
    let median = |s: &Scenario| {
        let mut end = lasthop_core::Time::ZERO;
        let mut walls: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                end = lasthop_sim::run(s, &none).unwrap().end;
                t.elapsed().as_secs_f64()
            })
            .collect();
        walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (walls[walls.len() / 2], end)
    };
    for name in ["seed000-e0-2tcp.toml", "seed000-r1-2tcp.toml"] {
        let s = Scenario::load(root.join(name)).unwrap();
        let mut late = s.clone();
        let hour = Dur::from_secs(3600);
        late.duration = s.duration + hour;
        for f in &mut late.flows {
            f.start += hour;
        }
        let ((w0, _), (w1, end)) = (median(&s), median(&late));
        println!(
            "{:<28} {:>14.4} {:>14.4} {:>12.3} {:>16.3}",
            s.name,
            w0,
            w1,
            end.as_secs_f64(),
            (w1 - w0) * 1e3
        );
    }
}
