//! Fault injection: `kill -9` at random moments, then resume or clean up (docs/reliability.md,
//! "Faults"; `scripts/faults.sh` is the long version, 20 kills).
//!
//! `lasthop run` killed three times at random moments and rerun must give results identical, byte
//! for byte, to an uninterrupted run (no root needed). `lasthop emu` killed once (root: skipped
//! without it, a failure with `LASTHOP_ROOT_TESTS=1`) and followed by the next run must leave
//! none of its namespaces, registry entries or processes behind.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const BIN: &str = env!("CARGO_BIN_EXE_lasthop");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A small pseudo-random generator seeded from the clock; the draws are printed, so a failure
/// can be repeated by hand.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        Rng(t.as_nanos() as u64 | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n.max(1)
    }
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn count_done(dir: &Path) -> usize {
    tree(dir)
        .keys()
        .filter(|p| p.file_name().is_some_and(|n| n == "done.json"))
        .count()
}

fn run_experiment(exp: &Path, out: &Path) {
    let o = Command::new(BIN)
        .arg("run")
        .arg(exp)
        .arg("--out")
        .arg(out)
        .args(["-j", "2", "-q"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "lasthop run: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn run_killed_at_random_moments_resumes_to_identical_results() {
    let root = repo();
    let tmp = tempfile::tempdir().unwrap();
    // Seed 000's bulk experiment with one replication: 16 simulated runs.
    let spec = std::fs::read_to_string(root.join("experiments/seed000-bulk.toml"))
        .unwrap()
        .replace("replications = 20", "replications = 1")
        .replace("report_run = \"r6-bl/5\"", "report_run = \"r6-bl/0\"")
        .replace("\"../examples/", &format!("\"{}/examples/", root.display()));
    assert!(spec.contains("replications = 1\n"));
    let exp = tmp.path().join("exp.toml");
    std::fs::write(&exp, spec).unwrap();

    let reference = tmp.path().join("ref");
    let t = Instant::now();
    run_experiment(&exp, &reference);
    let full = t.elapsed();
    let runs = count_done(&reference);
    assert_eq!(runs, 16);
    let want = tree(&reference);

    let mut rng = Rng::new();
    for k in 0..3 {
        let out = tmp.path().join(format!("k{k}"));
        let delay = Duration::from_micros(rng.below(full.as_micros() as u64));
        let mut child = Command::new(BIN)
            .arg("run")
            .arg(&exp)
            .arg("--out")
            .arg(&out)
            .args(["-j", "2", "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let finished = if out.exists() { count_done(&out) } else { 0 };
        eprintln!(
            "kill {k} after {delay:?} of {full:?}: {finished} of {runs} runs finished; resuming"
        );
        run_experiment(&exp, &out);
        let got = tree(&out);
        let names = |t: &BTreeMap<PathBuf, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
        assert_eq!(names(&got), names(&want), "kill {k} after {delay:?}: files");
        for (p, bytes) in &want {
            assert!(
                got[p] == *bytes,
                "kill {k} after {delay:?}: {} differs from the uninterrupted run",
                p.display()
            );
        }
    }
}

/// The child processes of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let o = Command::new("pgrep")
        .args(["-P", &pid.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Whether `pid` still runs: it exists and is not a zombie (a killed program stays one until
/// init reaps it).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|st| st != "Z"))
        })
        .unwrap_or(false)
}

/// The run id the registry in /run/lasthop gives the emulator process `pid`, once registered.
fn registered_run(pid: u32) -> Option<String> {
    let want = format!("pid={pid}");
    for e in std::fs::read_dir("/run/lasthop").ok()? {
        let p = e.ok()?.path();
        if std::fs::read_to_string(&p).is_ok_and(|s| s.lines().any(|l| l == want)) {
            return p.file_name().map(|n| n.to_string_lossy().to_string());
        }
    }
    None
}

fn namespaces_of(run_id: &str) -> Vec<String> {
    common::namespaces(&format!("lh-{run_id}-"))
}

#[test]
fn emu_killed_leaves_nothing_after_the_next_run() {
    if !common::can_emulate("emu_killed_leaves_nothing_after_the_next_run") {
        return;
    }
    let root = repo();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu");
    let mut child = Command::new(BIN)
        .arg("emu")
        .arg(root.join("examples/scenarios/seed000-e0-2tcp-5s.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the run has registered and started its programs, then a random 0-3 s more
    // (the transfers run for about 50 s).
    let t = Instant::now();
    let mut run_id = None;
    let mut kids = Vec::new();
    while t.elapsed() < Duration::from_secs(20) {
        run_id = run_id.or_else(|| registered_run(pid));
        kids = children(pid);
        if run_id.is_some() && kids.len() >= 2 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "lasthop emu ended early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let run_id = run_id.expect("the emulator registered its run");
    let delay = Duration::from_millis(Rng::new().below(3000));
    std::thread::sleep(delay);
    kids.extend(children(pid));
    let before = namespaces_of(&run_id);
    eprintln!(
        "killing run {run_id} {delay:?} after its programs started: namespaces {before:?}, programs {kids:?}"
    );
    assert!(!before.is_empty());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // The next run into the same directory reaps the dead run first.
    let next = Command::new(BIN)
        .arg("emu")
        .arg(root.join("examples/scenarios/passthrough.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "the next run failed: {stderr}");
    assert!(
        stderr.contains(&format!("reaped namespace lh-{run_id}-")),
        "the next run did not say it reaped the dead run: {stderr}"
    );
    assert_eq!(namespaces_of(&run_id), Vec::<String>::new());
    assert!(!Path::new("/run/lasthop").join(&run_id).exists());
    let dev = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&dev.stdout).contains(&format!(": lh-{run_id}")));
    // The programs die with their namespace (or with the emulator); give the kernel a moment.
    let t = Instant::now();
    while kids.iter().any(|&k| alive(k)) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = kids.iter().copied().filter(|&k| alive(k)).collect();
    assert!(
        left.is_empty(),
        "programs of the killed run still alive: {left:?}"
    );
}
