//! The fuzz targets' short run: each cargo-fuzz target (`fuzz/fuzz_targets/`) fuzzed for 30 s
//! with libFuzzer from a copy of its committed corpus (`docs/reliability.md`). It needs the
//! nightly toolchain and cargo-fuzz: when either is missing it installs them with
//! `scripts/install-fuzz.sh` (about 2 minutes, once per machine); only when that fails does it
//! say so and skip, and under `LASTHOP_ROOT_TESTS=1` (`.ci/run`), where the whole suite must
//! run, it fails instead. A crash fails the test
//! and leaves its input in `fuzz/artifacts/<target>/`, where cargo-fuzz puts it (replay:
//! `cargo +nightly fuzz run <target> <file>`). `fuzz_replay.rs` replays the corpus on stable.

mod common;

use std::path::Path;
use std::process::Command;

/// The targets, as `fuzz/Cargo.toml` names them.
const TARGETS: [&str; 6] = [
    "link_spec",
    "scenario_spec",
    "experiment_spec",
    "tcp_input",
    "link_model",
    "pcap_reader",
];

/// Seconds of fuzzing per target (the "about 30 s").
const SECONDS: u32 = 30;

/// `cargo +nightly fuzz ARGS` in `fuzz/`, with the outer `cargo test`'s target directory left
/// out (the fuzz workspace builds into its own `fuzz/target`).
fn cargo_fuzz(fuzz: &Path) -> Command {
    let mut c = Command::new("cargo");
    c.current_dir(fuzz)
        .args(["+nightly", "fuzz"])
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTUP_TOOLCHAIN");
    c
}

#[test]
fn every_fuzz_target_runs_30_s_without_a_crash() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let have = || {
        cargo_fuzz(&fuzz)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut missing = vec![];
    if !have() {
        // Installs nightly and cargo-fuzz as the project's own step (never by hand).
        let script = fuzz.join("../scripts/install-fuzz.sh");
        let o = Command::new("bash").arg(&script).output();
        if !have() {
            let why = match o {
                Ok(o) => format!(
                    "exit {:?}: {}",
                    o.status.code(),
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                Err(e) => e.to_string(),
            };
            missing.push(format!(
                "the nightly toolchain and cargo-fuzz, which {} could not install ({why})",
                script.display()
            ));
        }
    }
    if !common::runs_or_skips(
        "every_fuzz_target_runs_30_s_without_a_crash",
        &missing,
        "libFuzzer runs of the fuzz targets",
    ) {
        return;
    }
    // One build of all targets first, so that the 30 s are fuzzing, not compiling.
    let o = cargo_fuzz(&fuzz)
        .args(["build", "-s", "none", "-a"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "cargo fuzz build failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut failed = vec![];
    for t in TARGETS {
        // A copy of the committed corpus: libFuzzer adds what it finds to the directory it is
        // given, and the committed one is kept small on purpose.
        let tmp = tempfile::tempdir().unwrap();
        let corpus = tmp.path().join(t);
        std::fs::create_dir(&corpus).unwrap();
        for e in std::fs::read_dir(fuzz.join("corpus").join(t)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), corpus.join(e.file_name())).unwrap();
        }
        let o = cargo_fuzz(&fuzz)
            .args(["run", t, "-s", "none", "-a"])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={SECONDS}"))
            .arg("-print_final_stats=1")
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&o.stderr);
        let execs = log
            .lines()
            .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
            .and_then(|n| n.trim().parse::<u64>().ok());
        eprintln!(
            "{t}: {SECONDS} s, {execs:?} executions, exit {:?}",
            o.status.code()
        );
        // A run that fuzzed nothing (no statistics, or none executed) is a failure too.
        if !o.status.success() || execs.is_none_or(|n| n == 0) {
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            failed.push(format!(
                "{t}: exit {:?}\n{}",
                o.status.code(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
