//! `lasthop slurm --submit` against a real Slurm: a one-node cluster brought up on this machine
//! by `scripts/slurm-local.sh up` (Debian's munge and slurm-wlm, installed when missing), the
//! quick start submitted in 3 shards plus the merge, waited for, its merged `summary.csv`
//! compared with an unsharded run's byte for byte, and the cluster taken down (also when the
//! test fails), leaving no process behind.
//!
//! Needs root (the daemons run as root) and bash, and apt-get when the packages are missing.
//! Without them the test says SKIPPED and why; with `LASTHOP_ROOT_TESTS=1` (`.ci/run`) it fails.
//! One test in its own binary: it makes itself the subreaper of the daemons it starts and reaps
//! them at the end.

mod common;

use common::lasthop_ok;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn have(cmd: &str) -> bool {
    Command::new("bash")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a local Slurm cluster can be brought up here (see `common::can_emulate`, whose
/// skip and failure rules this follows).
fn can_run_slurm(test: &str) -> bool {
    let mut missing = Vec::new();
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root".to_string());
    }
    if !have("bash") {
        missing.push("bash".into());
    }
    let installed = ["munged", "mungekey", "slurmctld", "slurmd", "sbatch"]
        .iter()
        .all(|c| have(c));
    if !installed && !have("apt-get") {
        missing.push("Debian's munge and slurm-wlm packages, or apt-get to install them".into());
    }
    common::runs_or_skips(
        test,
        &missing,
        "a one-node Slurm cluster from scripts/slurm-local.sh",
    )
}

/// The cluster of `slurm-local.sh up`, taken down on drop (a failed assertion included).
struct Cluster {
    state: PathBuf,
    up: bool,
}

impl Cluster {
    fn up(state: &Path) -> Cluster {
        let mut c = Cluster {
            state: state.to_path_buf(),
            up: true,
        };
        // A cluster left by an earlier run of this test that was killed before its `down`
        // (its owner, that run's process, has ended) would otherwise hold on to its daemons.
        let o = Command::new("bash")
            .arg(root().join("scripts/slurm-local.sh"))
            .arg("reap")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "slurm-local.sh reap failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = Command::new("bash")
            .arg(root().join("scripts/slurm-local.sh"))
            .arg("up")
            .arg(state)
            .env("SLURM_LOCAL_OWNER", std::process::id().to_string())
            .output()
            .unwrap();
        if !o.status.success() {
            let log = c.down();
            panic!(
                "slurm-local.sh up failed: {}\n{}\n(down: {log})",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            stdout.trim(),
            format!("export SLURM_CONF={}", state.join("slurm.conf").display())
        );
        c
    }

    fn conf(&self) -> PathBuf {
        self.state.join("slurm.conf")
    }

    /// A Slurm client command's stdout (empty on failure).
    fn cmd(&self, args: &[&str]) -> String {
        Command::new(args[0])
            .args(&args[1..])
            .env("SLURM_CONF", self.conf())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    }

    /// `JobState` of a job, as scontrol shows it (the array's: one per task).
    fn states(&self, job: &str) -> Vec<String> {
        self.cmd(&["scontrol", "show", "job", job])
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("JobState="))
            .map(str::to_string)
            .collect()
    }

    fn down(&mut self) -> String {
        if !self.up {
            return String::new();
        }
        self.up = false;
        let o = Command::new("bash")
            .arg(root().join("scripts/slurm-local.sh"))
            .arg("down")
            .arg(&self.state)
            .output();
        // The daemons were orphaned to this process (the subreaper): reap them.
        loop {
            let mut status = 0;
            // SAFETY: a plain waitpid on any child, not blocking.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
        }
        match o {
            Ok(o) if o.status.success() => String::new(),
            Ok(o) => format!(
                "slurm-local.sh down failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => format!("slurm-local.sh down: {e}"),
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let log = self.down();
        if !log.is_empty() {
            eprintln!("{log}");
        }
    }
}

/// The processes whose command line names `dir`.
fn processes_naming(dir: &Path) -> Vec<String> {
    let want = dir.to_str().unwrap().as_bytes();
    let mut v = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmd.windows(want.len()).any(|w| w == want) {
            v.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    v
}

#[test]
fn quickstart_in_three_shards_on_a_local_slurm_cluster() {
    if !can_run_slurm("quickstart_in_three_shards_on_a_local_slurm_cluster") {
        return;
    }
    // Orphaned daemons become this process's children, so that down() can reap them.
    // SAFETY: prctl with integer arguments.
    assert_eq!(
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) },
        0
    );
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("cluster");
    let mut cluster = Cluster::up(&state);

    let full = d.path().join("full");
    let spec = root().join("experiments/quickstart.toml");
    lasthop_ok(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        full.to_str().unwrap(),
        "--quiet",
    ]);

    let job = d.path().join("job");
    let o = Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args(["slurm", spec.to_str().unwrap(), "--out"])
        .arg(&job)
        .args(["--shards", "3", "--time", "10", "--mem", "500M", "--submit"])
        .env("SLURM_CONF", cluster.conf())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ids = stdout
        .lines()
        .find_map(|l| l.strip_prefix("job ids: shards "))
        .unwrap_or_else(|| panic!("no job ids in {stdout}"));
    let (array, merge) = ids.split_once(", merge ").unwrap();
    assert!(array.bytes().all(|b| b.is_ascii_digit()), "{ids}");
    assert!(merge.bytes().all(|b| b.is_ascii_digit()), "{ids}");

    // Wait for the merge job: it runs once every shard task succeeded.
    let logs = |job: &Path| {
        let mut s = String::new();
        for f in ["shard-1.log", "shard-2.log", "shard-3.log", "merge.log"] {
            let t = std::fs::read_to_string(job.join("slurm/logs").join(f)).unwrap_or_default();
            s += &format!("--- {f}\n{t}");
        }
        s
    };
    let started = Instant::now();
    let merge_state = loop {
        let st = cluster.states(merge);
        match st.first().map(String::as_str) {
            Some("COMPLETED") => break "COMPLETED".to_string(),
            Some("FAILED" | "CANCELLED" | "TIMEOUT" | "NODE_FAIL" | "OUT_OF_MEMORY") => {
                break st[0].clone()
            }
            _ => {}
        }
        let shard_states = cluster.states(array);
        if shard_states.len() == 3
            && shard_states
                .iter()
                .all(|s| s != "PENDING" && s != "RUNNING")
            && shard_states.iter().any(|s| s != "COMPLETED")
        {
            panic!(
                "a shard task failed ({shard_states:?}), the merge never runs:\n{}",
                logs(&job)
            );
        }
        if started.elapsed() > Duration::from_secs(300) {
            panic!(
                "the merge job {merge} had not finished after 300 s (shards {shard_states:?}, merge {st:?}):\n{}\n{}",
                logs(&job),
                cluster.cmd(&["squeue"])
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(merge_state, "COMPLETED", "{}", logs(&job));
    assert_eq!(
        cluster.states(array),
        ["COMPLETED", "COMPLETED", "COMPLETED"],
        "{}",
        logs(&job)
    );
    let merged = job.join("results");
    for f in ["summary.csv", "summary.json", "report.html"] {
        assert!(
            std::fs::read(full.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "{f} merged on Slurm differs from the unsharded run's\n{}",
            logs(&job)
        );
    }
    let merge_log = std::fs::read_to_string(job.join("slurm/logs/merge.log")).unwrap();
    assert!(
        merge_log.contains("merged 6 runs of \"quickstart\""),
        "{merge_log}"
    );
    for k in 1..=3 {
        let log = std::fs::read_to_string(job.join(format!("slurm/logs/shard-{k}.log"))).unwrap();
        assert!(
            log.contains("2 runs: 0 kept from before, 2 run now, 0 failed"),
            "shard {k}: {log}"
        );
    }

    // Down: no daemon of this cluster is left, and its state is gone.
    let log = cluster.down();
    assert!(log.is_empty(), "{log}");
    assert_eq!(processes_naming(&state), Vec::<String>::new());
    assert!(!state.exists());
}
