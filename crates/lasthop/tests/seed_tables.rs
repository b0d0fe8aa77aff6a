//! The scripts that regenerate docs/seed-comparison.md run in CI in a quick mode, so that they
//! cannot silently break again (`scripts/seed-comparison.py` did, when the fixed host was
//! renamed): seed 000's 48 configurations with 2 replications each through
//! `scripts/seed000-tables.py`, and the e0 / r1 / seed 001 baseline script with 2 replications.
//! Each must exit 0 and print every table it promises. Needs `python3` (on every machine of this
//! kind); without it the test says SKIPPED, and fails under `LASTHOP_ROOT_TESTS=1`.

mod common;

use std::path::Path;
use std::process::Command;

fn python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn seed000_tables_script_runs_all_48_configurations() {
    let missing: &[&str] = if python() { &[] } else { &["python3"] };
    if !common::runs_or_skips(
        "seed000_tables_script_runs_all_48_configurations",
        missing,
        "the table scripts",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new("python3")
        .arg(root().join("scripts/seed000-tables.py"))
        .arg(tmp.path())
        .args(["--run", env!("CARGO_BIN_EXE_lasthop"), "--reps", "2"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
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
    ] {
        assert!(out.contains(heading), "{heading} missing in\n{out}");
    }
    // Every conclusion of extract A.7 is checked (1-9, 7 and 8 in parts).
    for n in [
        "| 1.", "| 2.", "| 3.", "| 4.", "| 5.", "| 6.", "| 7a.", "| 7d.", "| 8a.", "| 8b.", "| 9.",
    ] {
        assert!(out.contains(n), "conclusion {n} missing in\n{out}");
    }
}

#[test]
fn seed_comparison_script_runs_quickly() {
    let missing: &[&str] = if python() { &[] } else { &["python3"] };
    if !common::runs_or_skips(
        "seed_comparison_script_runs_quickly",
        missing,
        "the table scripts",
    ) {
        return;
    }
    let o = Command::new("python3")
        .arg(root().join("scripts/seed-comparison.py"))
        .arg(env!("CARGO_BIN_EXE_lasthop"))
        .args(["--quick", "--reps", "2"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for needle in [
        "seed 000, e0, 2tcp0udp",
        "seed 000, r1, 2tcp0udp",
        "| 3 |",
        "| 20 |",
    ] {
        assert!(out.contains(needle), "{needle} missing in\n{out}");
    }
}
