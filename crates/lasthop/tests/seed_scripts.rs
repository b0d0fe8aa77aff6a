//! The scripts that regenerate docs/seed-comparison.md run against the binary of this build, in
//! their quick modes, so a change of the outputs they read (a host renamed, a column moved)
//! breaks this test instead of the scripts silently. Their numbers are the doc's business;
//! here only that they run and print what the doc is made of, and that the generated
//! experiment files are what scripts/seed001-experiments.py writes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python(args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(args)
        .current_dir(root())
        .output()
        .expect("python3 runs (the scripts need only its standard library)");
    assert!(
        out.status.success(),
        "python3 {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn seed001_tables_run_in_quick_mode() {
    let d = tempfile::tempdir().unwrap();
    let out = python(&[
        "scripts/seed001-tables.py",
        env!("CARGO_BIN_EXE_lasthop"),
        "--quick",
        "--out",
        d.path().to_str().unwrap(),
    ]);
    for want in [
        "### Tables 3 and 4",
        "**Table 5:",
        "**Table 13:",
        "**T14:",
        "**T47:",
        "### Random delays: what 50 replications can tell",
        "| bl_b20_rand |",
        "#### Two and four connections",
        "| 4 × bl_b7_rand |",
        "### The seed's conclusions, checked",
        // Deterministic, so one replication gives the doc's numbers: Table 3's buffer 7 row.
        "| 7 | 12 | 13 / 4 / 17 | 17 | 13 / 4 / 17 |",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // Every appendix table is there.
    for t in 14..=47 {
        assert!(out.contains(&format!("**T{t}:")), "T{t} missing");
    }
}

#[test]
fn seed_comparison_runs_in_quick_mode() {
    let out = python(&[
        "scripts/seed-comparison.py",
        env!("CARGO_BIN_EXE_lasthop"),
        "--quick",
        "--reps",
        "1",
    ]);
    assert!(out.contains("### seed 000, e0, 2tcp0udp"), "{out}");
    assert!(out.contains("Table 3"), "{out}");
}

#[test]
fn seed001_experiment_files_are_the_generators() {
    let d = tempfile::tempdir().unwrap();
    let names = ["single", "single-random", "2par", "4par"];
    let before: Vec<String> = names
        .iter()
        .map(|n| {
            std::fs::read_to_string(root().join(format!("experiments/seed001-{n}.toml"))).unwrap()
        })
        .collect();
    // The generator writes into the tree; run it on a copy of what it needs.
    for dir in ["scripts", "experiments"] {
        std::fs::create_dir_all(d.path().join(dir)).unwrap();
    }
    std::fs::copy(
        root().join("scripts/seed001-experiments.py"),
        d.path().join("scripts/seed001-experiments.py"),
    )
    .unwrap();
    let out = Command::new("python3")
        .arg(d.path().join("scripts/seed001-experiments.py"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (n, want) in names.iter().zip(&before) {
        let got = std::fs::read_to_string(d.path().join(format!("experiments/seed001-{n}.toml")))
            .unwrap();
        assert!(
            &got == want,
            "experiments/seed001-{n}.toml differs from what scripts/seed001-experiments.py writes"
        );
    }
}

/// Seed 000's 48 configurations with 2 replications each through `scripts/seed000-tables.py`:
/// every configuration a row of its table, and every conclusion of extract A.7 checked.
#[test]
fn seed000_tables_run_all_48_configurations() {
    let tmp = tempfile::tempdir().unwrap();
    let out = python(&[
        "scripts/seed000-tables.py",
        tmp.path().to_str().unwrap(),
        "--run",
        env!("CARGO_BIN_EXE_lasthop"),
        "--reps",
        "2",
        "--spread",
        "4",
    ]);
    // 16 + 12 + 10 + 10 configurations, each a row of its table (its first set).
    let rows = out
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            f.len() > 3 && ["faster", "first"].contains(&f[2]) && !f[1].is_empty()
        })
        .count();
    assert_eq!(rows, 48, "{out}");
    for heading in [
        "### 2tcp0udp, the RTO variants",
        "### 2tcp0udp, RED, ECN, CBI and CBI-ECN",
        "### 2tcp0udp5s",
        "### 2tcp1udp, the TCP connections",
        "### 2tcp1udp: the UDP stream",
        "### The thesis's conclusions, checked",
        // The lossy links' conclusions judged on the larger run.
        "(4 replications; in % of 20-replication draws where it holds:",
        "The thesis's r6 BL otime (71.5 s) as one 20-replication median of the model",
    ] {
        assert!(out.contains(heading), "{heading} missing in\n{out}");
    }
    for n in [
        "| 1.", "| 2.", "| 3.", "| 4.", "| 5.", "| 6.", "| 7a.", "| 7d.", "| 8a.", "| 8b.", "| 9.",
    ] {
        assert!(out.contains(n), "conclusion {n} missing in\n{out}");
    }
}

/// Seed 004's three tabled specs (wan100, hetero10, short: 138 runs) through
/// `scripts/seed004-tables.py --only`: each table and its fairness grid, every point a row, and
/// the paper's values beside ours. The other four specs are only fairness grids of the same
/// code; running all seven takes a minute more.
#[test]
fn seed004_tables_run_the_tabled_specs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = python(&[
        "scripts/seed004-tables.py",
        tmp.path().to_str().unwrap(),
        "--run",
        env!("CARGO_BIN_EXE_lasthop"),
        "--only",
        "wan100",
        "--only",
        "hetero10",
        "--only",
        "short",
    ]);
    for heading in [
        "### Tables: 100 flows, homogeneous WAN (Tables 1–3)",
        "**wan100** (paper / ours)",
        "### Tables: 10 flows, heterogeneous RTTs (Tables 4–6)",
        "**hetero10** (paper / ours)",
        "### Tables: repeated short transfers (Tables 7–9, and the AQMs)",
        "**short** (paper / ours)",
        "### Fairness across the whole grid (σ/μ of per-flow goodput)",
        "**wan100: goodput σ/μ**",
        "**hetero10: goodput σ/μ**",
    ] {
        assert!(out.contains(heading), "{heading} missing in\n{out}");
    }
    assert!(!out.contains("**short: goodput σ/μ**"), "{out}");
    // wan100 and hetero10: the paper's 27 points each; short: 15 of the paper's and 15 AQMs'.
    let rows = |prefix: &str| out.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(rows("| red-"), 9 + 9 + 5, "{out}");
    assert_eq!(rows("| rc-"), 9 + 9 + 5, "{out}");
    assert_eq!(rows("| fq_codel-"), 5, "{out}");
    // Table 1's red-10M: 7 cells "paper / ours", the paper's utilisation 99.5 % and 2215 drops.
    let red10 = out
        .lines()
        .find(|l| l.starts_with("| red-10M |"))
        .unwrap_or_else(|| panic!("no red-10M row in\n{out}"));
    let cells: Vec<&str> = red10.split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 10, "{red10}");
    for c in &cells[2..9] {
        let (paper, ours) = c
            .split_once(" / ")
            .unwrap_or_else(|| panic!("{c:?} is not paper / ours in {red10}"));
        assert!(paper.parse::<f64>().is_ok(), "{red10}");
        assert!(ours.parse::<f64>().is_ok(), "{red10}");
    }
    assert!(cells[2].starts_with("99.5 / "), "{red10}");
    assert!(cells[5].starts_with("2215 / "), "{red10}");
    let util: f64 = cells[2].split_once(" / ").unwrap().1.parse().unwrap();
    assert!((50.0..=100.0).contains(&util), "{red10}");
    // The AQMs are ours only.
    let codel = out
        .lines()
        .find(|l| l.starts_with("| codel-10M |"))
        .unwrap();
    assert!(!codel.contains(" / "), "{codel}");
}

/// `scripts/fidelity.py` (docs/sim-vs-emu.md's fidelity matrix) on one replication of the shipped
/// `experiments/fidelity-bbr-sim.toml`, compared with itself: both points have the latency
/// probe's RTT rows (vs_cubic's flows, which replace the scenario's, keep the probe) beside the
/// TCP samples' rows (every run keeps the sender's capture), each 0 % apart, and `--csv` writes
/// the same rows.
#[test]
fn fidelity_script_reads_the_probe_and_the_tcp_samples() {
    let d = tempfile::tempdir().unwrap();
    let root = root();
    let spec = std::fs::read_to_string(root.join("experiments/fidelity-bbr-sim.toml"))
        .unwrap()
        .replace("replications = 10", "replications = 1")
        .replace("\"../examples/", &format!("\"{}/examples/", root.display()));
    let exp = d.path().join("fidelity-bbr-sim.toml");
    std::fs::write(&exp, spec).unwrap();
    let out = d.path().join("out");
    let st = Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args(["run", exp.to_str().unwrap(), "--out"])
        .arg(&out)
        .arg("--quiet")
        .status()
        .unwrap();
    assert!(st.success(), "lasthop run {exp:?}");
    let csv = d.path().join("fidelity.csv");
    let res = out.to_str().unwrap();
    let table = python(&[
        "scripts/fidelity.py",
        res,
        res,
        "--csv",
        csv.to_str().unwrap(),
    ]);
    for point in ["alone", "vs_cubic"] {
        for metric in [
            "tput_Bps",
            "rtt_p50_ms",
            "rtt_p99_ms",
            "ping_loss",
            "tcp_rtt_p50_ms",
            "tcp_rtt_p99_ms",
        ] {
            let row = format!("| {point} | {metric} |");
            assert!(table.contains(&row), "{row} missing in\n{table}");
        }
    }
    let rows: Vec<&str> = table.lines().skip(2).collect();
    assert!(rows.len() >= 20, "{table}");
    for r in &rows {
        assert!(r.ends_with("| +0.0 % |") || r.ends_with("| – |"), "{r}");
    }
    let written = std::fs::read_to_string(&csv).unwrap();
    assert!(
        written.starts_with("point,metric,simulated,emulated,sim_over_emu_pct\n"),
        "{written}"
    );
    assert_eq!(written.lines().count(), rows.len() + 1, "{written}");
}
