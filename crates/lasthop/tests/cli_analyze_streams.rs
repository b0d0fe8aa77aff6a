//! Seed 003's thin-stream analysis end to end: `lasthop sim` of a scenario with `thin` flows
//! writes `streams.csv` and `latency.csv` beside `connections.csv`; `lasthop analyze --streams`
//! on the sender's and the receiver's captures, in either order, finds the same streams and
//! writes the same files (it tells the sender's capture by time, the run by addresses); a
//! scenario without thin flows writes neither.

mod common;

use common::lasthop_ok as lasthop;
use std::path::Path;

#[test]
fn analyze_streams_matches_the_simulator() {
    let d = tempfile::tempdir().unwrap();
    let link =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links/seed003-testbed.toml");
    let scenario = d.path().join("thin.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"thin\"\nduration = \"6s\"\nlink = \"{}\"\nlink_set = {{ down = {{ loss = {{ probability = 0.05 }} }} }}\n[hosts.wsender]\nside = \"fixed\"\ntcp = {{ nagle = false }}\n[hosts.receiver]\nside = \"mobile\"\n[[flows]]\nkind = \"thin\"\nfrom = \"wsender\"\nto = \"receiver\"\nstreams = 4\npayload = 120\nitt = \"30:3\"\nduration = \"5s\"\n",
            link.display()
        ),
    )
    .unwrap();
    let sim = d.path().join("sim");
    lasthop(&[
        "sim",
        scenario.to_str().unwrap(),
        "--out",
        sim.to_str().unwrap(),
    ]);
    let streams = std::fs::read_to_string(sim.join("streams.csv")).unwrap();
    let latency = std::fs::read_to_string(sim.join("latency.csv")).unwrap();
    // Four streams, each with receiver numbers (both captures), and latencies of at least the
    // 150 ms round trip.
    assert_eq!(streams.lines().count(), 5, "{streams}");
    for row in streams.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        assert!(!f[22].is_empty(), "recv_pkts: {row}");
        let min: f64 = f[19].parse().unwrap();
        assert!(min >= 150.0, "lat_min_ms: {row}");
    }
    // Exact loss: each stream's lost packets are the link's drops of its data packets (with
    // payload), from the event log, an independent record.
    let events = std::fs::read_to_string(sim.join("events.csv")).unwrap();
    let head: Vec<&str> = events.lines().next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|c| *c == n).unwrap();
    let (ev, flow, len) = (col("event"), col("flow"), col("tcp_len"));
    let mut total = 0;
    for row in streams.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let key = format!("tcp:{}>{}", f[1], f[2]);
        let drops = events
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|e| e[ev] == "drop" && e[flow] == key && e[len].parse::<u32>().unwrap_or(0) > 0)
            .count();
        assert_eq!(f[23].parse::<usize>().unwrap(), drops, "lost_pkts: {row}");
        total += drops;
    }
    assert!(total > 0, "5 % loss dropped nothing");
    let p = |f: &str| sim.join(f).to_str().unwrap().to_string();
    for (i, order) in [
        ["wsender.pcap", "receiver.pcap"],
        ["receiver.pcap", "wsender.pcap"],
    ]
    .iter()
    .enumerate()
    {
        let out = d.path().join(format!("a{i}"));
        std::fs::create_dir(&out).unwrap();
        let csv = out.join("connections.csv");
        let got = lasthop(&[
            "analyze",
            &p(order[0]),
            &p(order[1]),
            "--streams",
            "--scenario",
            scenario.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ]);
        assert!(got.contains("lat_mean"), "{got}");
        assert_eq!(
            std::fs::read_to_string(out.join("streams.csv")).unwrap(),
            streams,
            "{order:?}"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("latency.csv")).unwrap(),
            latency,
            "{order:?}"
        );
    }
    // Without thin flows: no stream files.
    let bulk = d.path().join("bulk.toml");
    std::fs::write(
        &bulk,
        std::fs::read_to_string(&scenario)
            .unwrap()
            .replace("kind = \"thin\"", "kind = \"bulk\"\nbytes = 20000")
            .replace(
                "streams = 4\npayload = 120\nitt = \"30:3\"\nduration = \"5s\"\n",
                "",
            ),
    )
    .unwrap();
    let plain = d.path().join("plain");
    lasthop(&[
        "sim",
        bulk.to_str().unwrap(),
        "--out",
        plain.to_str().unwrap(),
    ]);
    assert!(plain.join("connections.csv").exists());
    assert!(!plain.join("streams.csv").exists() && !plain.join("latency.csv").exists());
}
