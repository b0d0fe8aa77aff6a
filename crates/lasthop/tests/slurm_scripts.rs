//! `lasthop slurm` without a cluster: the batch scripts it writes (array of shards, merge job),
//! run here by bash as Slurm would run them, give the unsharded quick start's summaries; an
//! emulation experiment asks for whole nodes and root; wrong options are refused by name.
//! (`slurm_cluster.rs` submits them to a real Slurm.)

mod common;

use common::{lasthop_err, lasthop_ok};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn spec(name: &str) -> String {
    root()
        .join("experiments")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs a written batch script with bash, as a Slurm task would (`env` added).
fn run_script(script: &Path, env: &[(&str, &str)]) {
    let o = Command::new("bash")
        .arg(script)
        .envs(env.iter().copied())
        .env_remove("SLURM_CPUS_PER_TASK")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}\n{}",
        script.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn slurm_scripts_run_the_shards_and_the_merge() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job");
    let out = lasthop_ok(&[
        "slurm",
        &spec("quickstart.toml"),
        "--out",
        s(&job),
        "--shards",
        "3",
        "--partition",
        "batch",
        "--time",
        "1:00:00",
        "--mem",
        "2G",
        "--cpus-per-task",
        "2",
    ]);
    assert!(
        out.contains("experiment \"quickstart\" (sim mode): 6 runs in 3 shards, 2 to 2 runs each"),
        "{out}"
    );
    assert!(out.contains("submit with: sh "), "{out}");
    let shards = std::fs::read_to_string(job.join("slurm/shards.sbatch")).unwrap();
    let merge = std::fs::read_to_string(job.join("slurm/merge.sbatch")).unwrap();
    let submit = std::fs::read_to_string(job.join("slurm/submit.sh")).unwrap();
    let job_s = s(&job);
    for line in [
        "#SBATCH --job-name=lasthop-quickstart".to_string(),
        "#SBATCH --array=1-3".into(),
        format!("#SBATCH --output={job_s}/slurm/logs/shard-%a.log"),
        "#SBATCH --cpus-per-task=2".into(),
        "#SBATCH --partition=batch".into(),
        "#SBATCH --time=1:00:00".into(),
        "#SBATCH --mem=2G".into(),
        format!("#SBATCH --chdir={job_s}"),
    ] {
        assert!(
            shards.lines().any(|l| l == line),
            "no {line:?} in\n{shards}"
        );
    }
    // Simulation tasks pack: no whole node.
    assert!(!shards.contains("--exclusive"), "{shards}");
    assert!(
        merge
            .lines()
            .any(|l| l == "#SBATCH --job-name=lasthop-quickstart-merge"),
        "{merge}"
    );
    assert!(
        merge.contains("exec \"$LASTHOP\" merge \"${dirs[@]}\" --out \"$OUT/results\""),
        "{merge}"
    );
    assert!(
        submit.contains("sbatch --parsable --dependency=afterok:\"$a\" slurm/merge.sbatch"),
        "{submit}"
    );
    assert!(job.join("slurm/logs").is_dir());

    // Without sbatch the scripts still run: each shard as its array task, then the merge.
    for k in ["1", "2", "3"] {
        run_script(
            &job.join("slurm/shards.sbatch"),
            &[("SLURM_ARRAY_TASK_ID", k)],
        );
    }
    // A task run again keeps its finished runs (resumable).
    run_script(
        &job.join("slurm/shards.sbatch"),
        &[("SLURM_ARRAY_TASK_ID", "2")],
    );
    run_script(&job.join("slurm/merge.sbatch"), &[]);
    let full = d.path().join("full");
    lasthop_ok(&[
        "run",
        &spec("quickstart.toml"),
        "--out",
        s(&full),
        "--quiet",
    ]);
    for f in ["summary.csv", "summary.json", "report.html"] {
        assert!(
            std::fs::read(full.join(f)).unwrap()
                == std::fs::read(job.join("results").join(f)).unwrap(),
            "{f} of the merged shards differs from the unsharded run's"
        );
    }
    // The shard script outside Slurm, without a task id, says what it needs.
    let o = Command::new("bash")
        .arg(job.join("slurm/shards.sbatch"))
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("run this script with sbatch"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Written again (e.g. another --time): our files are replaced.
    lasthop_ok(&[
        "slurm",
        &spec("quickstart.toml"),
        "--out",
        s(&job),
        "--shards",
        "2",
    ]);
    let shards = std::fs::read_to_string(job.join("slurm/shards.sbatch")).unwrap();
    assert!(
        shards.lines().any(|l| l == "#SBATCH --array=1-2"),
        "{shards}"
    );
    assert!(!shards.contains("--partition"), "{shards}");
}

#[test]
fn emulation_tasks_take_whole_nodes_and_root() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job");
    let out = lasthop_ok(&[
        "slurm",
        &spec("seed002-emu-low-m8m.toml"),
        "--out",
        s(&job),
        "--shards",
        "2",
    ]);
    assert!(out.contains("(emu mode)"), "{out}");
    assert!(
        out.contains("each task takes a whole node and root"),
        "{out}"
    );
    let shards = std::fs::read_to_string(job.join("slurm/shards.sbatch")).unwrap();
    assert!(
        shards.lines().any(|l| l == "#SBATCH --exclusive"),
        "{shards}"
    );
    assert!(!shards.contains("--cpus-per-task"), "{shards}");
    assert!(shards.contains("SUDO=(sudo -n)"), "{shards}");
    assert!(
        shards.contains("exec \"${SUDO[@]}\" \"$LASTHOP\" run \"$SPEC\" --shard \"$K/2\""),
        "{shards}"
    );
}

#[test]
fn bad_slurm_options_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job");
    let qs = spec("quickstart.toml");
    let base = ["slurm", qs.as_str(), "--out", s(&job)];
    for (extra, says) in [
        (
            vec!["--shards", "0"],
            "--shards 0: allowed 1..6 (the experiment \"quickstart\" has 6 runs: 2 point(s) x 3 replication(s))",
        ),
        (vec!["--shards", "7"], "--shards 7: allowed 1..6"),
        (
            vec!["--shards", "3", "--time", "1:2:3:4"],
            "--time \"1:2:3:4\": allowed MM, MM:SS, HH:MM:SS",
        ),
        (vec!["--shards", "3", "--time", "1h"], "--time \"1h\": allowed"),
        (
            vec!["--shards", "3", "--mem", "2X"],
            "--mem \"2X\": allowed a whole number with an optional K, M, G or T suffix",
        ),
        (
            vec!["--shards", "3", "--partition", "a b"],
            "--partition \"a b\": allowed a partition name",
        ),
        (vec!["--shards", "3", "--cpus-per-task", "0"], "--cpus-per-task 0: allowed 1 or more"),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(extra.iter().copied());
        let e = lasthop_err(&args);
        assert!(e.contains(says), "{extra:?}: {e}");
    }
    assert!(!job.exists(), "a refused command wrote {}", job.display());
    // An --out path that #SBATCH lines cannot carry.
    let spaced = d.path().join("a job");
    let e = lasthop_err(&["slurm", &qs, "--out", s(&spaced), "--shards", "3"]);
    assert!(e.contains("which #SBATCH lines cannot carry"), "{e}");
    // A file of the same name that is not ours is left alone.
    std::fs::create_dir_all(job.join("slurm")).unwrap();
    std::fs::write(job.join("slurm/shards.sbatch"), "#!/bin/sh\n# my own\n").unwrap();
    let e = lasthop_err(&["slurm", &qs, "--out", s(&job), "--shards", "3"]);
    assert!(
        e.contains("exists and was not written by `lasthop slurm`: refusing to replace it"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(job.join("slurm/shards.sbatch")).unwrap(),
        "#!/bin/sh\n# my own\n"
    );
}

#[test]
fn submit_without_sbatch_says_what_it_needs() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("job");
    let o = Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args([
            "slurm",
            &spec("quickstart.toml"),
            "--out",
            s(&job),
            "--shards",
            "3",
            "--submit",
        ])
        .env("PATH", d.path())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        e.contains("--submit needs Slurm's sbatch on PATH (or run the written slurm/submit.sh where it is)"),
        "{e}"
    );
    // The scripts are written before the submission.
    assert!(job.join("slurm/shards.sbatch").exists());
}
