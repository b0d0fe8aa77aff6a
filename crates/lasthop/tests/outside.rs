//! Issue 24, part 3, "Nothing outside its own": what the tool reads from disk, where it writes
//! and what it removes, bad input, signals, closed pipes and full disks (docs/reliability.md,
//! *Nothing outside its own*, lists each defect with its test here or in a crate).
//!
//! The tests that mount a tmpfs or emulate need root: without it each says `SKIPPED` and why,
//! and fails under `LASTHOP_ROOT_TESTS=1`.

mod common;

use common::{lasthop, lasthop_err, lasthop_ok, runs_or_skips};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The quick start with one replication (points e0 and r1), its paths absolute, in `d`.
fn quickstart_1(d: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("experiments/quickstart.toml"))
        .unwrap()
        .replace(
            "\"../examples/",
            &format!("\"{}/examples/", root().display()),
        )
        .replace("replications = 3", "replications = 1");
    let p = d.join("q1.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Shard 1/1 of the one-replication quick start, run into `dir`.
fn shard(d: &Path, dir: &Path) {
    let spec = quickstart_1(d);
    lasthop_ok(&[
        "run",
        s(&spec),
        "--shard",
        "1/1",
        "--out",
        s(dir),
        "--quiet",
    ]);
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{}: no {from:?}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}

/// Every file under `dir` whose name starts with `.lasthop-` (temporary files, the lock).
fn lasthop_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if e.file_name().to_string_lossy().starts_with(".lasthop") {
                v.push(e.path());
            }
        }
    }
    v
}

#[test]
fn merge_refuses_a_point_name_that_leaves_its_output_directory() {
    // A shard whose experiment.json (and shard.json, and marker) call point e0 "../../src":
    // its run lies at s/sh/runs/../../src/0 = s/src/0, and the merge would have removed and
    // written o/out/runs/../../src/0 = o/src/0, outside --out.
    let d = tempfile::tempdir().unwrap();
    let sh = d.path().join("s/sh");
    shard(d.path(), &sh);
    let bad = "../../src";
    edit(
        &sh.join("experiment.json"),
        "\"name\": \"e0\"",
        &format!("\"name\": \"{bad}\""),
    );
    edit(&sh.join("shard.json"), "\"e0\":", &format!("\"{bad}\":"));
    edit(
        &sh.join("runs/e0/0/done.json"),
        "\"e0\"",
        &format!("\"{bad}\""),
    );
    std::fs::rename(sh.join("runs/e0"), d.path().join("s/src")).unwrap();
    let victim = d.path().join("o/src/0/keep.txt");
    std::fs::create_dir_all(victim.parent().unwrap()).unwrap();
    std::fs::write(&victim, "not the merge's").unwrap();
    let out = d.path().join("o/out");
    let e = lasthop_err(&["merge", s(&sh), "--out", s(&out)]);
    assert!(
        e.contains(&format!(
            "experiment.json: invalid point name \"{bad}\": allowed 1 to 255 of a-z, A-Z, 0-9, '_', '.', '+' and '-', not starting with '.', '+' or '-' (a point name is a directory name below runs/): not what lasthop writes; refusing to use it"
        )),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "not the merge's");
    assert_eq!(
        std::fs::read_dir(victim.parent().unwrap()).unwrap().count(),
        1
    );
    // `report` reads names through the same check.
    let e = lasthop_err(&["report", s(&sh)]);
    assert!(e.contains("invalid point name \"../../src\""), "{e}");
}

#[test]
fn report_run_names_one_of_the_points() {
    // `report --run ../../escape/0` read a run outside the results directory into the report.
    let d = tempfile::tempdir().unwrap();
    let spec = quickstart_1(d.path());
    let out = d.path().join("out");
    lasthop_ok(&["run", s(&spec), "--out", s(&out), "--quiet"]);
    let escape = d.path().join("escape/0");
    std::fs::create_dir_all(&escape).unwrap();
    for e in std::fs::read_dir(out.join("runs/e0/0")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), escape.join(e.file_name())).unwrap();
    }
    let e = lasthop_err(&["report", s(&out), "--run", "../../escape/0"]);
    assert!(e.contains("../../escape/0") && e.contains("e0, r1"), "{e}");
    lasthop_ok(&["report", s(&out), "--run", "r1/0"]);
}

#[test]
fn merge_takes_only_regular_files_and_directories() {
    let d = tempfile::tempdir().unwrap();
    // Private, as /etc/shadow is.
    let secret = d.path().join("secret");
    std::fs::write(&secret, "SECRET\n").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let tree = d.path().join("tree");
    std::fs::create_dir_all(tree.join("deep")).unwrap();
    std::fs::write(tree.join("deep/file"), "someone else's\n").unwrap();
    // Merged onto another filesystem when there is one, so that files are copied, not linked.
    let other_fs = Path::new("/dev/shm");
    let outs = if other_fs.is_dir() {
        tempfile::tempdir_in(other_fs).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    type Plant<'a> = Box<dyn Fn(&Path) + 'a>;
    let cases: [(&str, Plant, &str); 4] = [
        (
            "a link to a private file",
            Box::new(|run: &Path| {
                std::os::unix::fs::symlink(&secret, run.join("secret.txt")).unwrap()
            }),
            "secret.txt: is a symbolic link",
        ),
        (
            "a link to a directory",
            Box::new(|run: &Path| std::os::unix::fs::symlink(&tree, run.join("tree")).unwrap()),
            "tree: is a symbolic link",
        ),
        (
            "a loop",
            Box::new(|run: &Path| std::os::unix::fs::symlink(".", run.join("loop")).unwrap()),
            "loop: is a symbolic link",
        ),
        (
            "a run directory that is a link",
            Box::new(|run: &Path| {
                let moved = run.with_file_name("moved");
                std::fs::rename(run, &moved).unwrap();
                std::os::unix::fs::symlink(&moved, run).unwrap();
            }),
            "runs/e0/0: is a symbolic link",
        ),
    ];
    for (i, (what, plant, says)) in cases.iter().enumerate() {
        let sh = d.path().join(format!("sh{i}"));
        shard(d.path(), &sh);
        plant(&sh.join("runs/e0/0"));
        let out = outs.path().join(format!("out{i}"));
        let e = lasthop_err(&["merge", s(&sh), "--out", s(&out)]);
        assert!(
            e.contains(says)
                && e.contains("a run directory holds only regular files and directories, which is all a merge takes"),
            "{what}: {e}"
        );
        // Nothing of what the links point at was taken.
        let mut stack = vec![out.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten() {
                let p = e.unwrap().path();
                let meta = std::fs::symlink_metadata(&p).unwrap();
                assert!(!meta.file_type().is_symlink(), "{what}: {}", p.display());
                if meta.is_dir() {
                    stack.push(p);
                } else {
                    let text = std::fs::read(&p).unwrap();
                    assert!(
                        !text.starts_with(b"SECRET") && !text.starts_with(b"someone else's"),
                        "{what}: {} copied",
                        p.display()
                    );
                }
            }
        }
    }
    // A regular file keeps its mode when copied: a private file stays private.
    let sh = d.path().join("shp");
    shard(d.path(), &sh);
    let private = sh.join("runs/e0/0/notes.txt");
    std::fs::write(&private, "mine\n").unwrap();
    std::fs::set_permissions(
        &private,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let out = outs.path().join("outp");
    lasthop_ok(&["merge", s(&sh), "--out", s(&out)]);
    let m = std::fs::metadata(out.join("runs/e0/0/notes.txt")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777,
        0o600
    );
}

#[test]
fn run_refuses_a_directory_that_is_not_lasthops() {
    let d = tempfile::tempdir().unwrap();
    let spec = quickstart_1(d.path());
    // Someone's directory with files of lasthop's names.
    let theirs = d.path().join("theirs");
    std::fs::create_dir_all(theirs.join("runs/e0/0")).unwrap();
    for f in [
        "summary.csv",
        "report.html",
        "experiment.toml",
        "runs/e0/0/data.csv",
    ] {
        std::fs::write(theirs.join(f), "theirs\n").unwrap();
    }
    let e = lasthop_err(&["run", s(&spec), "--out", s(&theirs), "--quiet"]);
    assert!(
        e.contains(&format!(
            "--out {} is not empty (experiment.toml, report.html, runs and 1 more) and is not a lasthop results directory (it has no experiment.json): refusing to write into what is not lasthop's",
            theirs.display()
        )),
        "{e}"
    );
    for f in [
        "summary.csv",
        "report.html",
        "experiment.toml",
        "runs/e0/0/data.csv",
    ] {
        assert_eq!(
            std::fs::read_to_string(theirs.join(f)).unwrap(),
            "theirs\n",
            "{f}"
        );
    }
    assert!(lasthop_files(&theirs).is_empty(), "no lock file left");
    // The quick start too (it writes its specs first).
    let e = lasthop_err(&["run", "--out", s(&theirs), "--quiet"]);
    assert!(e.contains("is not a lasthop results directory"), "{e}");
    assert!(!theirs.join("spec").exists());

    // A directory like `/`: other programs' (and other lasthop runs') temporary files live
    // below it; the stale-file cleanup walked all of it and removed them.
    let fake_root = d.path().join("fakeroot");
    let live = fake_root.join("home/user/results/runs/p/0/.lasthop-live.partial");
    std::fs::create_dir_all(live.parent().unwrap()).unwrap();
    std::fs::write(&live, "another run's\n").unwrap();
    let e = lasthop_err(&["run", s(&spec), "--out", s(&fake_root), "--quiet"]);
    assert!(e.contains("is not a lasthop results directory"), "{e}");
    assert!(live.exists());
    assert_eq!(std::fs::read_dir(&fake_root).unwrap().count(), 1);
}

#[test]
fn a_run_killed_at_its_start_is_resumed() {
    // Killed after `runs/` and experiment.json, before experiment.toml: the directory is a
    // results directory (experiment.json is written first, so a kill never leaves one that the
    // next run would refuse as someone else's).
    let d = tempfile::tempdir().unwrap();
    let spec = quickstart_1(d.path());
    let out = d.path().join("out");
    lasthop_ok(&["run", s(&spec), "--out", s(&out), "--quiet"]);
    std::fs::remove_file(out.join("experiment.toml")).unwrap();
    std::fs::remove_dir_all(out.join("runs")).unwrap();
    for f in ["summary.csv", "summary.json", "report.html"] {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    std::fs::create_dir(out.join("runs")).unwrap();
    lasthop_ok(&["run", s(&spec), "--out", s(&out), "--quiet"]);
    assert!(out.join("runs/r1/0/done.json").exists());
}

#[test]
fn run_cleans_only_where_runs_write() {
    let d = tempfile::tempdir().unwrap();
    let spec = quickstart_1(d.path());
    let out = d.path().join("out");
    lasthop_ok(&["run", s(&spec), "--out", s(&out), "--quiet"]);
    // A killed run's temporary files, where runs write them, and someone else's elsewhere in
    // the directory (a tool that happens to use the same names).
    let stale = [".lasthop-a.partial", "runs/e0/0/.lasthop-b.partial"];
    let other = [
        "notes/.lasthop-c.partial",
        "runs/e0/0/sub/.lasthop-d.partial",
    ];
    for f in stale.iter().chain(&other) {
        std::fs::create_dir_all(out.join(f).parent().unwrap()).unwrap();
        std::fs::write(out.join(f), "x").unwrap();
    }
    let o = lasthop(&["run", s(&spec), "--out", s(&out), "--quiet"]);
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("removed 2 temporary files that killed runs left unfinished"),
        "{err}"
    );
    for f in stale {
        assert!(!out.join(f).exists(), "{f}");
    }
    for f in other {
        assert!(out.join(f).exists(), "{f}");
    }
}

/// Starts `lasthop ARGS` with its standard output (and, with `close_stderr`, its standard
/// error) a pipe whose reading end is already closed, as `| head -1` leaves it.
fn with_closed_pipe(args: &[&str], dir: &Path, close_stderr: bool) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lasthop"));
    c.args(args).current_dir(dir).stdout(Stdio::piped());
    c.stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(child.stdout.take());
    if close_stderr {
        drop(child.stderr.take());
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_the_printing_not_the_command() {
    let d = tempfile::tempdir().unwrap();
    // `lasthop check X | head -1`: a panic ("failed printing to stdout: Broken pipe") before.
    let exp = root().join("experiments/seed003-exp3.toml");
    let o = with_closed_pipe(&["check", s(&exp)], d.path(), false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(141), "{err}");
    assert!(err.is_empty(), "quietly: {err}");
    // `lasthop sim | head`: the run still writes every output.
    let o = with_closed_pipe(&["sim", "--out", "sim"], d.path(), false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(141), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for f in [
        "connections.csv",
        "events.csv",
        "fixed.pcap",
        "mobile.pcap",
        "link.csv",
    ] {
        assert!(d.path().join("sim").join(f).exists(), "{f}");
    }
    assert!(lasthop_files(&d.path().join("sim")).is_empty());
    // Standard error closed as well (`2>&1 | head`): the same.
    let o = with_closed_pipe(&["sim", "--out", "sim2"], d.path(), true);
    assert_eq!(o.status.code(), Some(141));
    assert!(d.path().join("sim2/connections.csv").exists());
    // A failing command still says why and exits 1.
    let o = with_closed_pipe(&["check", "/nonexistent.toml"], d.path(), false);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read the file"));
}

/// A scenario `NAME.toml` in `d`: over the repository's `link`, for `duration`, a fixed host
/// `a` sends `bytes` in one bulk transfer to the mobile host `b`, or with `members` to each of
/// a group of that many mobile hosts `m0`, `m1`, ...
fn scenario(
    d: &Path,
    name: &str,
    duration: &str,
    link: &str,
    members: u32,
    bytes: &str,
) -> PathBuf {
    let (mobile, to) = if members > 0 {
        (
            format!("[hosts.m]\nside = \"mobile\"\ncount = {members}\n"),
            "m",
        )
    } else {
        ("[hosts.b]\nside = \"mobile\"\n".to_string(), "b")
    };
    let p = d.join(format!("{name}.toml"));
    std::fs::write(
        &p,
        format!(
            "name = \"{name}\"\nduration = \"{duration}\"\nlink = \"{}\"\nlog = \"drops\"\n[hosts.a]\nside = \"fixed\"\n{mobile}[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"{to}\"\nbytes = \"{bytes}\"\n",
            root().join(link).display()
        ),
    )
    .unwrap();
    p
}

/// A simulation that writes for minutes: 5 GB over 100 Mbit/s, captures of whole headers.
fn long_sim(d: &Path) -> PathBuf {
    scenario(
        d,
        "long",
        "600s",
        "examples/links/bench-100mbit.toml",
        0,
        "5GB",
    )
}

/// Waits until `dir` holds a temporary file (the run is writing), at most 60 s.
fn wait_for_partials(dir: &Path) {
    let t = Instant::now();
    while !lasthop_files(dir)
        .iter()
        .any(|p| p.to_string_lossy().ends_with(".partial"))
    {
        assert!(t.elapsed() < Duration::from_secs(60), "no temporary file");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_interrupted_sim_removes_its_temporary_files() {
    let d = tempfile::tempdir().unwrap();
    let spec = long_sim(d.path());
    for (sig, name) in [(libc::SIGTERM, "15"), (libc::SIGINT, "2")] {
        let out = d.path().join(format!("out{sig}"));
        let child = Command::new(env!("CARGO_BIN_EXE_lasthop"))
            .args(["sim", s(&spec), "--out", s(&out)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_partials(&out);
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: a plain syscall on our child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        // Exited by itself with 128 + N (before: killed by the signal, partial files of
        // hundreds of MB left behind, and the lock file).
        assert_eq!(
            o.status.code(),
            Some(128 + sig),
            "{:?} {err}",
            o.status.signal()
        );
        assert!(
            err.contains(&format!("interrupted by signal {name}: the run is not finished; its temporary files in {} are removed", out.display())),
            "{err}"
        );
        assert_eq!(lasthop_files(&out), Vec::<PathBuf>::new());
    }
}

/// A tmpfs of `size` mounted on a new directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs");
        Tmpfs { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// Whether a tmpfs can be mounted here; else the test is skipped (or fails under
/// `LASTHOP_ROOT_TESTS=1`).
fn can_mount(test: &str) -> bool {
    let missing: Vec<&str> = if is_root() { vec![] } else { vec!["root"] };
    runs_or_skips(test, &missing, "mounting a small tmpfs to fill")
}

#[test]
fn run_stops_at_the_first_full_disk() {
    if !can_mount("run_stops_at_the_first_full_disk") {
        return;
    }
    // The quick start's 6 runs write about 1.1 MB each when they keep every output: a 3 MB
    // disk takes two or so.
    let fs = Tmpfs::mount("3M");
    let out = fs.path().join("out");
    let o = lasthop(&[
        "run",
        "--out",
        s(&out),
        "--quiet",
        "-j",
        "1",
        "--captures",
        "all",
        "--events",
        "all",
        "--tcp-trace",
        "all",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{err}");
    let finished: Vec<String> = ["e0", "r1"]
        .iter()
        .flat_map(|p| (0..3).map(move |k| format!("{p}/{k}")))
        .filter(|r| out.join("runs").join(r).join("done.json").exists())
        .collect();
    assert!(!finished.is_empty() && finished.len() < 6, "{finished:?}");
    // One run failed; every later one was not started (before: each tried and failed).
    let failed = err.lines().filter(|l| l.starts_with("failed: ")).count();
    assert_eq!(failed, 1, "{err}");
    let not_started = 6 - finished.len() - 1;
    assert!(
        err.contains(&format!(
            "stopped at the first run that could not write: {not_started} runs not started, 1 failed; the {} finished runs are kept in {}/runs",
            finished.len(),
            out.display()
        )) && err.contains("the disk is full: ")
            && err.contains("No space left on device"),
        "{err}"
    );
    assert!(
        !err.contains(".lasthop-"),
        "names the output, not its temporary file: {err}"
    );
    // Nothing half-written left, the lock gone, the finished runs whole.
    assert_eq!(lasthop_files(&out), Vec::<PathBuf>::new());
    for r in &finished {
        assert!(out.join("runs").join(r).join("metrics.json").exists());
    }
}

/// Serializes the tests that emulate (one emulator at a time keeps their timing).
static EMU: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn namespaces() -> Vec<String> {
    common::namespaces("lh-")
}

#[test]
fn emu_stops_promptly_on_a_full_disk_naming_the_output() {
    if !common::can_emulate("emu_stops_promptly_on_a_full_disk_naming_the_output") {
        return;
    }
    let _one = EMU.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    // 30 s of a 100 Mbit/s transfer captured whole: 12 MB/s into a 1 MB disk.
    let spec = scenario(
        d.path(),
        "fill",
        "30s",
        "examples/links/bench-100mbit.toml",
        0,
        "2GB",
    );
    let fs = Tmpfs::mount("1M");
    let out = fs.path().join("out");
    let before = namespaces();
    let t = Instant::now();
    let run = common::EmuRun::start(&spec, &out, &["-q"]);
    let o = run.wait(Duration::from_secs(60));
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // Before: it ran its 30 s, then failed naming a `.lasthop-*.partial` file.
    assert!(took < Duration::from_secs(15), "{took:?}: {err}");
    assert!(
        err.contains(&format!("writing the run's outputs: {}/", out.display()))
            && err.contains("No space left on device")
            && err.contains("the run is stopped and its outputs removed"),
        "{err}"
    );
    assert!(!err.contains(".lasthop-"), "{err}");
    assert_eq!(lasthop_files(&out), Vec::<PathBuf>::new());
    assert!(namespaces().iter().all(|n| before.contains(n)));
}

#[test]
fn emu_interrupted_during_setup_exits_128_plus_the_signal() {
    if !common::can_emulate("emu_interrupted_during_setup_exits_128_plus_the_signal") {
        return;
    }
    let _one = EMU.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    // 25 hosts: about half a second of setup (a namespace and a TUN device each).
    let link = "examples/scenarios/passthrough-link.toml";
    let spec = scenario(d.path(), "many", "5s", link, 24, "10kB");
    let before = namespaces();
    let mut during_setup = 0;
    for (i, ms) in [60u64, 120, 200, 300, 450].iter().enumerate() {
        let out = d.path().join(format!("out{i}"));
        let run = common::EmuRun::start(&spec, &out, &["-q"]);
        std::thread::sleep(Duration::from_millis(*ms));
        let pid = run.child.as_ref().unwrap().id();
        // SAFETY: a plain syscall on our child.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        let o = run.wait(Duration::from_secs(30));
        let err = String::from_utf8_lossy(&o.stderr);
        // Before: 1 ("error: stopped by signal 15 during setup") during the setup, or killed
        // by the signal with the lock file left before it.
        assert_eq!(
            o.status.code(),
            Some(143),
            "after {ms} ms: {:?} {err}",
            o.status.signal()
        );
        if err.contains("interrupted by signal 15 during the setup: nothing ran; what the setup made is removed") {
            during_setup += 1;
        }
        assert_eq!(
            lasthop_files(&out),
            Vec::<PathBuf>::new(),
            "after {ms} ms: {err}"
        );
    }
    assert!(during_setup > 0, "no signal came during the setup");
    assert!(namespaces().iter().all(|n| before.contains(n)));
}

#[test]
fn emu_with_a_closed_standard_error_tears_down() {
    if !common::can_emulate("emu_with_a_closed_standard_error_tears_down") {
        return;
    }
    let _one = EMU.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let before = namespaces();
    // `lasthop emu -v 2>&1 | head -1`: a panic printing, then another in the teardown's
    // messages, aborted the process with its namespaces left behind.
    let spec = root().join("examples/scenarios/passthrough.toml");
    let o = with_closed_pipe(&["emu", s(&spec), "--out", "out", "-v"], d.path(), true);
    assert_eq!(o.status.code(), Some(141), "{:?}", o.status.signal());
    assert!(d.path().join("out/connections.csv").exists());
    assert!(namespaces().iter().all(|n| before.contains(n)));
    assert!(lasthop_files(&d.path().join("out")).is_empty());
}

#[test]
fn emu_options_out_of_range_are_refused() {
    let spec = root().join("examples/scenarios/passthrough.toml");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x");
    let e = lasthop_err(&["emu", s(&spec), "--out", s(&out), "--snaplen", "0"]);
    assert!(
        e.contains("invalid value '0' for '--snaplen <SNAPLEN>': 0 bytes: allowed 120..=65535"),
        "{e}"
    );
    let e = lasthop_err(&["emu", s(&spec), "--out", s(&out), "--rt-priority", "1000"]);
    assert!(
        e.contains("invalid value '1000' for '--rt-priority <RT_PRIORITY>': 1000: allowed 1..=99 (the SCHED_FIFO priority of the real-time loop), or 0 for the normal scheduler"),
        "{e}"
    );
    assert!(!out.exists(), "refused before anything is made");
}
