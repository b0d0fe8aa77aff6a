//! The latency probe (`kind = "ping"`) on seed 000's optimal link, both modes: an echo of
//! ping's 84 bytes (56 payload + 8 ICMP + 20 IP) takes 10.5 ms to serialize at 64 kbit/s and
//! 300 ms to propagate, each way, so an idle round trip is 621 ms. The simulator's host answers
//! as a Linux host does, at once; in emulation the server host's own kernel answers the raw
//! ICMP socket's requests, so the emulated round trip is 621 ms plus the hosts' and the
//! emulator's own time (under a millisecond here; a few with a loaded machine).
//!
//! The emulated test needs root (without it the test says SKIPPED and why, and fails under
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use std::path::{Path, PathBuf};

fn scenario(dir: &Path) -> PathBuf {
    let links = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links/seed000-e0.toml");
    let spec = dir.join("ping.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"ping\"\nduration = \"10s\"\nlink = \"{}\"\n[hosts.fixed]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"ping\"\nfrom = \"mobile\"\nto = \"fixed\"\ninterval = \"200ms\"\nduration = \"4s\"\n",
            links.display()
        ),
    )
    .unwrap();
    spec
}

/// `ping_flows.csv`'s one row: (sent, received, min, max round trip in ms, flow index).
fn figures(out: &Path) -> (u64, u64, f64, f64, Option<usize>) {
    let rows = lasthop_analysis::files::pings::read_flows(&out.join("ping_flows.csv")).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    (
        r.sent,
        r.received,
        r.rtt_min_ms.unwrap(),
        r.rtt_max_ms.unwrap(),
        r.flow_index,
    )
}

#[test]
fn sim_probes_take_621_ms() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    common::lasthop_ok(&[
        "sim",
        scenario(tmp.path()).to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    // 4 s of probing every 200 ms: 20 probes, all answered in exactly 621 ms.
    assert_eq!(figures(&out), (20, 20, 621.0, 621.0, Some(0)));
    // `lasthop analyze` of the client's capture alone says the same.
    let a = common::lasthop_ok(&["analyze", out.join("mobile.pcap").to_str().unwrap()]);
    let row = a
        .lines()
        .find(|l| l.trim_start().starts_with("1 198.19.0.1"));
    let cells: Vec<&str> = row
        .unwrap_or_else(|| panic!("{a}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        cells[3..],
        ["20", "20", "0.0", "621.0", "621.0", "621.0", "621.0", "621.0"]
    );
}

#[test]
fn emu_probes_are_answered_by_the_real_kernel_in_621_ms() {
    if !common::can_emulate("emu_probes_are_answered_by_the_real_kernel_in_621_ms") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu");
    let run = common::EmuRun::start(&scenario(tmp.path()), &out, &[]);
    let o = run.wait(std::time::Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (sent, received, min, max, index) = figures(&out);
    println!("emulated: {sent} probes, {received} replies, {min:.3} to {max:.3} ms");
    assert_eq!((sent, received, index), (20, 20, Some(0)));
    // Never faster than the link allows; the real hosts and the emulator add a little.
    assert!((621.0..640.0).contains(&min), "{min}");
    assert!(max < 660.0, "{max}");
    // The run's summary prints the probes as ping does.
    assert!(stdout.contains("ping from"), "{stdout}");
}

#[test]
fn an_experiment_summarises_the_probes_per_flow() {
    // Two replications of the idle probe: scheme `ping`, class `flow0`, every round trip
    // 621 ms and none lost, in summary.csv as in each run's metrics.json.
    let tmp = tempfile::tempdir().unwrap();
    scenario(tmp.path());
    let exp = tmp.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"pings\"\nscenario = \"ping.toml\"\nreplications = 2\n",
    )
    .unwrap();
    let out = tmp.path().join("results");
    common::lasthop_ok(&[
        "run",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let row = |metric: &str| {
        let l = summary
            .lines()
            .find(|l| l.contains(&format!(",ping,flow0,{metric},")))
            .unwrap_or_else(|| panic!("no ping {metric} in\n{summary}"));
        l.rsplit(',')
            .take(7)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // n, min, p25, median, p75, max, mean (reversed by rsplit)
    assert_eq!(
        row("rtt_p99_ms"),
        ["621", "621", "621", "621", "621", "621", "2"]
    );
    assert_eq!(row("probe_loss_rate"), ["0", "0", "0", "0", "0", "0", "2"]);
    let m = std::fs::read_to_string(out.join("runs/base/1/metrics.json")).unwrap();
    assert!(
        m.contains("\"pings\"") && m.contains("\"rtt_p50_ms\": 621.0"),
        "{m}"
    );
}
