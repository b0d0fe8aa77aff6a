//! BBR alone on the fidelity matrix's 10 Mbit/s, 40 ms drop-tail link
//! (`examples/links/fidelity-10m-40ms-droptail.toml`), 20 s: `tcp_trace.csv` follows Linux
//! 6.18's BBR state machine, its pacing rate and cwnd checked against numbers worked out from the
//! link. Both hosts are on the profile "linux-6.18", as in experiments/fidelity-bbr-sim.toml.
//!
//! The link carries 10 Mbit/s / (1500 B · 8) = 833.33 packets per second, each with a
//! 1448-byte segment (MSS 1460 less 12 of timestamps): a bandwidth of 1 206 667 B/s of payload,
//! which BBR paces 1 % below, 1 194 600 B/s, at gain 1; its bandwidth-delay product over the
//! 40 ms round trip is 33.3 segments.

use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;
use std::path::Path;

const SCENARIO: &str = r#"
name = "bbr-alone"
seed = 1
duration = "20s"
link = "fidelity-10m-40ms-droptail.toml"
log = "drops"

[hosts.fixed]
side = "fixed"
tcp = { profile = "linux-6.18" }

[hosts.mobile]
side = "mobile"
tcp = { profile = "linux-6.18" }

[[flows]]
kind = "bulk"
from = "fixed"
to = "mobile"
bytes = "unlimited"
congestion_control = "bbr"
"#;

/// (time in s, cwnd, pacing rate, mode) of the sender's rows of `tcp_trace.csv`.
fn sender_trace(dir: &Path) -> Vec<(f64, u32, u64, String)> {
    let text = std::fs::read_to_string(dir.join("tcp_trace.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (t, host, cwnd, rate, mode) = (
        col("time_ns"),
        col("host"),
        col("cwnd_segs"),
        col("pacing_rate_Bps"),
        col("cc_mode"),
    );
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[host] == "fixed" && f[rate] != "unlimited")
        .map(|f| {
            (
                f[t].parse::<f64>().unwrap() / 1e9,
                f[cwnd].parse().unwrap(),
                f[rate].parse().unwrap(),
                f[mode].to_string(),
            )
        })
        .collect()
}

#[test]
fn bbr_alone_startup_drain_probe_bw_and_one_probe_rtt() {
    let links = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links");
    let s = Scenario::from_str_in(SCENARIO, &links).unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().unwrap();
    let opts = OutputOptions::all(out.path());
    let r = lasthop_sim::run(&s, &opts).unwrap();
    let tr = sender_trace(out.path());
    // The modes in order, each with the time it began.
    let mut modes: Vec<(f64, String)> = vec![];
    for (t, _, _, m) in &tr {
        if modes.last().is_none_or(|(_, l)| l != m) {
            modes.push((*t, m.clone()));
        }
    }
    let names: Vec<&str> = modes.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        names,
        ["startup", "drain", "probe_bw", "probe_rtt", "probe_bw"],
        "{modes:?}"
    );
    // Startup doubles from IW 10 per round trip: the pipe (33 segments) is full in the third
    // round, and three more without 25 % more bandwidth end startup: six or seven rounds of
    // 40 ms plus the queue it builds, well inside a second.
    let (drain_at, probe_bw_at, probe_rtt_at, back_at) =
        (modes[1].0, modes[2].0, modes[3].0, modes[4].0);
    assert!((0.25..1.0).contains(&drain_at), "{modes:?}");
    // Drain paces at 88/256 of the bandwidth: 0.34375 · 1 206 667 · 0.99 = 410 645 B/s, and
    // lasts until what is in flight fits one BDP, about one round trip.
    let drain_rate = tr.iter().find(|r| r.3 == "drain").unwrap().2;
    assert!(drain_rate.abs_diff(410_645) <= 100, "{drain_rate}");
    assert!(probe_bw_at - drain_at < 0.3, "{modes:?}");
    // PROBE_BW paces at gains 5/4, 3/4, then 1: 1 194 600 B/s at gain 1.
    let rates: Vec<u64> = tr
        .iter()
        .filter(|r| r.3 == "probe_bw" && r.0 < probe_rtt_at)
        .map(|r| r.2)
        .collect();
    for (gain, want) in [(1.0, 1_194_600.0), (1.25, 1_493_250.0), (0.75, 895_950.0)] {
        assert!(
            rates
                .iter()
                .any(|&r| (r as f64 - want).abs() <= 150.0 * gain),
            "no rate near {want} B/s (gain {gain}): {:?}",
            &rates[..rates.len().min(40)]
        );
    }
    // PROBE_RTT once min_rtt is 10 s old. Its floor, 40.1 ms, was seen by the first ACKs
    // (about 0.04 s after the handshake, the path still empty); every later sample sees the
    // queue BBR keeps (its cwnd is 2 BDP), so the filter expires 10 s (2500 jiffies at HZ 250,
    // plus one: after() is strict) after them. Then cwnd 4 for 200 ms plus the round that ends
    // it (a few tens of ms more at 4 segments in flight).
    assert!((10.04..10.1).contains(&probe_rtt_at), "{modes:?}");
    let probe_rtt: Vec<u32> = tr
        .iter()
        .filter(|r| r.3 == "probe_rtt")
        .map(|r| r.1)
        .collect();
    assert_eq!(probe_rtt.last(), Some(&4));
    assert!(
        (0.2..0.3).contains(&(back_at - probe_rtt_at)),
        "{probe_rtt_at} -> {back_at}"
    );
    // After it cwnd is back where it was (2 BDP plus the skbs' budget, far above 4).
    let after = tr.iter().find(|r| r.0 >= back_at).unwrap().1;
    assert!(after >= 60, "{after}");
    // And the link stays busy: 98 % or more over the 20 s.
    assert!(r.link[0].released > 16_000, "{}", r.link[0].released);
}
