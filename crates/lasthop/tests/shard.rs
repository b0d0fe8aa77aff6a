//! `lasthop run --shard K/N` and `lasthop merge` on the quick start (simulation): the shards'
//! runs are the unsharded run's, byte for byte; the merge gives its summaries and report; a
//! pair stays in its shard; shards from other paths merge; wrong inputs are refused by name.

mod common;

use common::{lasthop_err, lasthop_ok};
use lasthop_experiment::ShardInfo;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn quickstart() -> String {
    root()
        .join("experiments/quickstart.toml")
        .to_str()
        .unwrap()
        .to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir`, relative path and contents, sorted.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                v.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    v.sort();
    v
}

/// The runs (`point/k`) finished in a results directory.
fn runs_in(dir: &Path) -> Vec<String> {
    let mut v = vec![];
    for p in ["e0", "r1"] {
        for k in 0..5 {
            if dir.join(format!("runs/{p}/{k}/done.json")).exists() {
                v.push(format!("{p}/{k}"));
            }
        }
    }
    v
}

/// The quick start with another replication count, its paths absolute.
fn quickstart_with(d: &Path, replications: u32) -> PathBuf {
    let text = std::fs::read_to_string(quickstart())
        .unwrap()
        .replace(
            "\"../examples/",
            &format!("\"{}/examples/", root().canonicalize().unwrap().display()),
        )
        .replace(
            "replications = 3",
            &format!("replications = {replications}"),
        );
    let p = d.join(format!("quickstart-{replications}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn shards_are_the_unsharded_runs_and_merge_to_its_summaries() {
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("full");
    lasthop_ok(&["run", &quickstart(), "--out", s(&full), "--quiet"]);
    let shard = |k: u32| d.path().join(format!("s{k}"));
    for k in 1..=3 {
        let out = lasthop_ok(&[
            "run",
            &quickstart(),
            "--shard",
            &format!("{k}/3"),
            "--out",
            s(&shard(k)),
            "--quiet",
        ]);
        assert!(
            out.contains("2 runs: 0 kept from before, 2 run now, 0 failed"),
            "{out}"
        );
        // A shard writes no summary and no report: the merge does.
        for f in ["summary.csv", "summary.json", "report.html"] {
            assert!(!shard(k).join(f).exists(), "shard {k} wrote {f}");
        }
        assert!(shard(k).join("shard.json").exists());
    }
    // Run k of a point is in shard (fnv1a(point) mod 3 + k) mod 3 + 1; both names give offset 1.
    assert_eq!(runs_in(&shard(1)), ["e0/2", "r1/2"]);
    assert_eq!(runs_in(&shard(2)), ["e0/0", "r1/0"]);
    assert_eq!(runs_in(&shard(3)), ["e0/1", "r1/1"]);
    // Each run's files, byte for byte those of the unsharded run.
    for (k, runs) in [
        (1, ["e0/2", "r1/2"]),
        (2, ["e0/0", "r1/0"]),
        (3, ["e0/1", "r1/1"]),
    ] {
        for r in runs {
            let (a, b) = (full.join("runs").join(r), shard(k).join("runs").join(r));
            let fa = files(&a);
            // Every run keeps its tables, link.csv, metrics.json and scenario (captures and
            // traces only the report run, r1/0): the comparison is never of empty directories.
            assert!(fa.len() >= 5, "{r}: {} files", fa.len());
            assert!(
                fa == files(&b),
                "{r}: shard {k} differs from the unsharded run"
            );
        }
    }
    let info = ShardInfo::load(&shard(2)).unwrap();
    assert_eq!((info.shard, info.shards), (2, 3));
    assert_eq!(info.lasthop_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(info.runs, ["e0/0", "r1/0"]);

    // Resumable: a shard run again keeps its finished runs, redoes one without its marker.
    std::fs::remove_file(shard(1).join("runs/r1/2/done.json")).unwrap();
    let out = lasthop_ok(&[
        "run",
        &quickstart(),
        "--shard",
        "1/3",
        "--out",
        s(&shard(1)),
        "--quiet",
    ]);
    assert!(
        out.contains("2 runs: 1 kept from before, 1 run now, 0 failed"),
        "{out}"
    );

    // The merge: the unsharded run's directory, file for file (the same spec path).
    let merged = d.path().join("merged");
    let out = lasthop_ok(&[
        "merge",
        s(&shard(3)),
        s(&shard(1)),
        s(&shard(2)),
        "--out",
        s(&merged),
    ]);
    assert!(out.contains("merged 6 runs of \"quickstart\""), "{out}");
    for f in [
        "summary.csv",
        "summary.json",
        "report.html",
        "experiment.json",
        "experiment.toml",
    ] {
        assert!(
            std::fs::read(full.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "merged {f} differs from the unsharded run's"
        );
    }
    assert!(files(&full) == files(&merged), "merged directory differs");
    // Merging again (e.g. after a rerun shard) refreshes the same directory.
    lasthop_ok(&[
        "merge",
        s(&shard(1)),
        s(&shard(2)),
        s(&shard(3)),
        "--out",
        s(&merged),
    ]);
    assert!(files(&full) == files(&merged), "merged again: differs");

    // A missing shard: named, with the runs it holds, and nothing written.
    let partial = d.path().join("partial");
    let e = lasthop_err(&["merge", s(&shard(1)), s(&shard(2)), "--out", s(&partial)]);
    assert!(
        e.contains("2 of 6 runs are finished in none of the 2 directories: e0/1 (shard 3/3), r1/1 (shard 3/3)"),
        "{e}"
    );
    assert!(
        !partial.exists(),
        "a failed merge left {}",
        partial.display()
    );

    // Not a shard directory: the unsharded one.
    let e = lasthop_err(&["merge", s(&full), s(&shard(1)), "--out", s(&partial)]);
    assert!(e.contains("shard.json") && e.contains("--shard K/N"), "{e}");

    // Another lasthop version.
    let other = d.path().join("s3-other-version");
    std::fs::create_dir_all(&other).unwrap();
    for (p, bytes) in files(&shard(3)) {
        std::fs::create_dir_all(other.join(&p).parent().unwrap()).unwrap();
        std::fs::write(other.join(&p), bytes).unwrap();
    }
    let j = std::fs::read_to_string(other.join("shard.json"))
        .unwrap()
        .replace(
            &format!("\"lasthop_version\": \"{}\"", env!("CARGO_PKG_VERSION")),
            "\"lasthop_version\": \"0.0.9\"",
        );
    std::fs::write(other.join("shard.json"), j).unwrap();
    let e = lasthop_err(&[
        "merge",
        s(&shard(1)),
        s(&shard(2)),
        s(&other),
        "--out",
        s(&partial),
    ]);
    assert!(
        e.contains(&format!(
            "shard 3/3 was run by lasthop 0.0.9, this is lasthop {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{e}"
    );

    // Another experiment: the same spec with 5 replications.
    let five = quickstart_with(d.path(), 5);
    let s5 = d.path().join("s1-five");
    lasthop_ok(&[
        "run",
        s(&five),
        "--shard",
        "1/3",
        "--out",
        s(&s5),
        "--quiet",
    ]);
    let e = lasthop_err(&["merge", s(&shard(1)), s(&s5), "--out", s(&partial)]);
    assert!(e.contains("are shards of different experiments"), "{e}");

    let e = lasthop_err(&["merge", s(&shard(1)), s(&shard(1)), "--out", s(&partial)]);
    assert!(
        e.contains("is given twice: give each shard directory once"),
        "{e}"
    );
    // --out: one of the inputs, a shard directory, or a directory that is not ours.
    let e = lasthop_err(&["merge", s(&shard(1)), s(&shard(2)), "--out", s(&shard(2))]);
    assert!(e.contains("is one of the shard directories"), "{e}");
    let e = lasthop_err(&["merge", s(&shard(1)), s(&shard(2)), "--out", s(&s5)]);
    assert!(e.contains("is a shard directory"), "{e}");
    let foreign = d.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let e = lasthop_err(&[
        "merge",
        s(&shard(1)),
        s(&shard(2)),
        s(&shard(3)),
        "--out",
        s(&foreign),
    ]);
    assert!(
        e.contains("is not empty (notes.txt) and is not a lasthop results directory"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
}

#[test]
fn a_pair_stays_in_its_shard_whatever_the_others_do() {
    let d = tempfile::tempdir().unwrap();
    // Shard 2/3 alone, the others never run: the same two runs as beside them.
    let alone = d.path().join("alone");
    lasthop_ok(&[
        "run",
        &quickstart(),
        "--shard",
        "2/3",
        "--out",
        s(&alone),
        "--quiet",
    ]);
    assert_eq!(runs_in(&alone), ["e0/0", "r1/0"]);
    // More replications: the shard keeps its runs and gains k = 3 (the same offset, + 3).
    let five = quickstart_with(d.path(), 5);
    let out = lasthop_ok(&["run", s(&five), "--shard", "2/3", "--dry-run"]);
    assert!(
        out.contains("shard 2/3: 4 of 10 runs: e0/0 e0/3 r1/0 r1/3"),
        "{out}"
    );
}

#[test]
fn shards_run_elsewhere_merge_into_the_same_summaries() {
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("full");
    lasthop_ok(&["run", &quickstart(), "--out", s(&full), "--quiet"]);
    // The spec files copied to another place, as on another machine: the scenario's link path
    // and the markers' hashes differ there, the experiment's fingerprint does not.
    let elsewhere = d.path().join("elsewhere");
    for f in [
        "experiments/quickstart.toml",
        "examples/scenarios/seed000-e0-2tcp.toml",
        "examples/links/seed000-e0.toml",
        "examples/links/seed000-r1.toml",
    ] {
        std::fs::create_dir_all(elsewhere.join(f).parent().unwrap()).unwrap();
        std::fs::copy(root().join(f), elsewhere.join(f)).unwrap();
    }
    let moved_spec = elsewhere.join("experiments/quickstart.toml");
    let mut dirs = vec![];
    for k in 1..=3 {
        let spec = if k == 2 {
            s(&moved_spec).to_string()
        } else {
            quickstart()
        };
        let out = d.path().join(format!("s{k}"));
        lasthop_ok(&[
            "run",
            &spec,
            "--shard",
            &format!("{k}/3"),
            "--out",
            s(&out),
            "--quiet",
        ]);
        dirs.push(out);
    }
    let (a, b) = (
        ShardInfo::load(&dirs[0]).unwrap(),
        ShardInfo::load(&dirs[1]).unwrap(),
    );
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_ne!(a.scenario_hashes, b.scenario_hashes);
    let merged = d.path().join("merged");
    lasthop_ok(&[
        "merge",
        s(&dirs[0]),
        s(&dirs[1]),
        s(&dirs[2]),
        "--out",
        s(&merged),
    ]);
    for f in ["summary.csv", "summary.json", "report.html"] {
        assert!(
            std::fs::read(full.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "merged {f} differs from the unsharded run's"
        );
    }
    // The runs from elsewhere keep their own scenario.toml (naming the link where they ran).
    let moved = std::fs::read_to_string(merged.join("runs/e0/0/scenario.toml")).unwrap();
    assert!(moved.contains(s(&elsewhere)), "{moved}");
}

#[test]
fn bad_shards_are_refused_by_name() {
    for (bad, says) in [
        ("0/3", "K = 0 is not in 1..3"),
        ("4/3", "K = 4 is not in 1..3"),
        ("x", "\"x\" is not K/N"),
        ("1/0", "N = 0"),
        ("1/3/", "N \"3/\" is not a whole number"),
    ] {
        let e = lasthop_err(&["run", &quickstart(), "--shard", bad, "--dry-run"]);
        assert!(e.contains(says), "{bad}: {e}");
        assert!(
            e.contains("allowed K/N with N in 1..100000 and K in 1..N"),
            "{bad}: {e}"
        );
    }
    let e = lasthop_err(&["merge", "/nonexistent/lasthop-shard", "--out", "/tmp/x"]);
    assert!(
        e.contains("/nonexistent/lasthop-shard: not a directory"),
        "{e}"
    );
}

#[test]
fn an_interrupted_shard_says_how_to_resume_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"tiny\"\nduration = \"60s\"\nlink = \"{}\"\n[hosts.server]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = 40000\n",
            root().join("examples/links/seed000-r1.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"ctrlc\"\nscenario = \"scenario.toml\"\nreplications = 16\n",
    )
    .unwrap();
    let out = d.path().join("s1");
    let markers = |dir: &Path| {
        (0..16)
            .filter(|r| dir.join(format!("runs/base/{r}/done.json")).exists())
            .count()
    };
    let args = [
        "run",
        s(&spec),
        "--shard",
        "1/2",
        "--out",
        s(&out),
        "-q",
        "-j",
        "1",
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while markers(&out) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let kept = markers(&out);
    if o.status.success() {
        // The shard finished before the signal came: nothing to resume.
        assert_eq!(kept, 8, "{stderr}");
        return;
    }
    assert_eq!(o.status.code(), Some(128 + libc::SIGINT), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "interrupted: {kept} of 8 runs (shard 1/2) are finished and kept in {}/runs",
            out.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "merge the shards when every one is finished.\nto resume, run the same command: lasthop run {} --shard 1/2 --out {}",
            spec.display(),
            out.display()
        )),
        "{stderr}"
    );
    // Resumed: only this shard's runs, the finished ones kept.
    let again = lasthop_ok(&args);
    assert!(
        again.contains(&format!(
            "8 runs: {kept} kept from before, {} run now, 0 failed",
            8 - kept
        )),
        "{again}"
    );
    assert_eq!(markers(&out), 8);
}
