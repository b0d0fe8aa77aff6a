//! Simulator speed: `cargo bench -p lasthop-sim`. Figures go to BENCHMARKS.md.
//!
//! (a) seed 004's dumbbell: 100 Reno bulk flows, 1024-byte segments, 150 Mbit/s access links with
//!     15 ms one-way delay, a 45 Mbit/s RED bottleneck, 10 simulated seconds;
//! (b) seed 000's e0 run: two 188640-byte transfers over 64 kbit/s, 300 ms.
//! Each is timed without outputs (the model alone) and writing every output (pcaps, events.csv
//! at the scenario's log level, tcp_trace.csv, connections.csv). Reported: the median of 5 runs,
//! and bottleneck packets (released by the link, downstream) per wall-clock second.

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
    for name in ["seed004-dumbbell-100.toml", "seed000-e0-2tcp.toml"] {
        let s = Scenario::load(root.join(name)).unwrap();
        for (label, opts) in [
            (
                "none",
                OutputOptions {
                    dir: None,
                    capture: false,
                },
            ),
            (
                "all",
                OutputOptions {
                    dir: Some(out.path().to_path_buf()),
                    capture: true,
                },
            ),
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
}
