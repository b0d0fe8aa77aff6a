//! `lasthop run` and `lasthop report` end to end on a tiny experiment (simulation).

mod common;

use std::path::Path;
use std::process::Command;

/// `lasthop run SPEC --out OUT -q`, waited for.
fn run_quiet(spec: &Path, out: &Path) -> std::process::Output {
    lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap()
}

fn lasthop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lasthop"))
}

/// Writes `dir/scenario.toml`: 60 s on `examples/links/LINK.toml`, a server and a mobile host,
/// one bulk flow from the server per entry of `flows` (its bytes), `extra` top-level keys.
fn tiny_scenario(dir: &Path, link: &str, extra: &str, flows: &[u64]) {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut text = format!(
        "name = \"tiny\"\nduration = \"60s\"\nlink = \"{}\"\n{extra}[hosts.server]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n",
        ex.join(format!("links/{link}.toml")).display()
    );
    for b in flows {
        text += &format!(
            "[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = {b}\n"
        );
    }
    std::fs::write(dir.join("scenario.toml"), text).unwrap();
}

#[test]
fn run_then_report() {
    let d = tempfile::tempdir().unwrap();
    tiny_scenario(d.path(), "seed000-r1", "log = \"all\"\n", &[10000, 10000]);
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"cli\"\nscenario = \"scenario.toml\"\nreplications = 2\n[matrix.iw]\niw2 = {}\niw4 = { \"hosts.server.tcp.initial_window\" = 4 }\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let o = run_quiet(&spec, &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("4 runs: 0 kept from before, 4 run now, 0 failed"),
        "{stdout}"
    );
    for f in [
        "summary.csv",
        "summary.json",
        "report.html",
        "experiment.json",
        "runs/iw4/1/done.json",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    // Resumed: nothing to do.
    let o = run_quiet(&spec, &out);
    assert!(String::from_utf8_lossy(&o.stdout).contains("4 kept from before, 0 run now"));
    // The report is rebuilt from disk.
    std::fs::remove_file(out.join("report.html")).unwrap();
    let o = lasthop()
        .args(["report", out.to_str().unwrap(), "--run", "iw2/1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("One run: iw2 / replication 1") && html.contains("<svg"));

    // A spec error names the key and exits 1.
    std::fs::write(
        &spec,
        "name = \"cli\"\nscenario = \"scenario.toml\"\nreplicas = 2\n",
    )
    .unwrap();
    let o = lasthop()
        .args(["run", spec.to_str().unwrap(), "--dry-run"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("key `replicas`") && err.contains("replications"),
        "{err}"
    );
    // `report` of a directory that is not a results directory says so.
    let o = lasthop()
        .args(["report", d.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("experiment.json"));
}

/// Ctrl-C in the middle: the finished runs are kept, the others redone, and the results are
/// the same as an uninterrupted run's.
#[test]
fn interrupted_run_resumes() {
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"tiny\"\nduration = \"60s\"\nlink = \"{}\"\n[hosts.server]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = 40000\n",
            ex.join("links/seed000-r1.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"ctrlc\"\nscenario = \"scenario.toml\"\nreplications = 16\n",
    )
    .unwrap();
    let (out, clean) = (d.path().join("out"), d.path().join("clean"));
    let markers = |dir: &Path| {
        (0..16)
            .filter(|r| dir.join(format!("runs/base/{r}/done.json")).exists())
            .count()
    };
    let child = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
            "-j",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) for the first finished run, then interrupt.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while markers(&out) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let kept = markers(&out);
    eprintln!("interrupted with {kept} of 16 runs finished");
    assert!(kept >= 1);
    // It says what it kept and how to resume, and ends as killed by SIGINT would.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(128 + libc::SIGINT), "{stderr}");
    assert!(
        stderr.contains("of 16 runs are finished and kept in")
            && stderr.contains(&format!(
                "to resume, run the same command: lasthop run {} --out {}",
                spec.display(),
                out.display()
            )),
        "{stderr}"
    );
    // A temporary file of a killed run goes on the next run into the directory.
    let stale = out.join("runs/base/15/.lasthop-killed.partial");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, "half a capture").unwrap();
    let o = run_quiet(&spec, &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(!stale.exists(), "the stale temporary file stayed");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("temporary files that killed runs left unfinished"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "16 runs: {kept} kept from before, {} run now, 0 failed",
            16 - kept
        )),
        "{stdout}"
    );
    let o = run_quiet(&spec, &clean);
    assert!(o.status.success());
    for f in [
        "summary.csv",
        "summary.json",
        "runs/base/15/connections.csv",
        "runs/base/0/events.csv",
        "runs/base/0/metrics.json",
        "report.html",
    ] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(clean.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// `lasthop report DIR --beside OTHER` puts another experiment's medians beside ours, point by
/// point: here the same tiny experiment with the second point's IW changed, so the `iw2` rows
/// agree to 0 % and the `iw4` ones differ; a directory that is not a results directory is an
/// error naming it.
#[test]
fn report_beside_another_experiment() {
    let d = tempfile::tempdir().unwrap();
    tiny_scenario(d.path(), "seed000-e0", "", &[20000]);
    let run = |name: &str, iw: u32| {
        let spec = d.path().join(format!("{name}.toml"));
        std::fs::write(
            &spec,
            format!("name = \"{name}\"\nscenario = \"scenario.toml\"\nreplications = 1\n[matrix.iw]\niw2 = {{}}\niw4 = {{ \"hosts.server.tcp.initial_window\" = {iw} }}\n"),
        )
        .unwrap();
        let out = d.path().join(name);
        let o = run_quiet(&spec, &out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let a = run("a", 4);
    let b = run("b", 8);
    let o = lasthop()
        .args([
            "report",
            a.to_str().unwrap(),
            "--beside",
            b.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(a.join("report.html")).unwrap();
    let i = html.find("id=\"beside\"").expect("the beside section");
    let part = &html[i..];
    assert!(part.contains("(b, mode sim)"), "{part}");
    let row = |point: &str| {
        let r = part
            .find(&format!("<tr><td class=\"l\">{point}</td><td class=\"l\">all</td><td class=\"l\">elapsed_s</td>"))
            .unwrap_or_else(|| panic!("{point}'s elapsed_s row"));
        part[r..r + part[r..].find("</tr>").unwrap()].to_string()
    };
    // The same scenario and seed: the same elapsed time.
    assert!(row("iw2").ends_with("<td>+0.0%</td>"), "{}", row("iw2"));
    // IW 4 against IW 8 on a 300 ms link: ours is slower, Δ positive.
    assert!(row("iw4").contains("<td>+"), "{}", row("iw4"));
    let o = lasthop()
        .args([
            "report",
            a.to_str().unwrap(),
            "--beside",
            d.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && !e.contains("panicked"), "{e}");
    assert!(e.contains("--beside"), "{e}");
}

/// `lasthop sim --out` and `lasthop emu --out` write only into a new or empty directory or one
/// a run of theirs wrote (it holds `lasthop-run.txt`): another directory is refused before
/// anything is written, its files untouched, and the error names what is in it.
#[test]
fn a_single_run_never_writes_into_a_directory_not_its_own() {
    let d = tempfile::tempdir().unwrap();
    let sc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/seed000-e0-2tcp-5s.toml");
    let foreign = d.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("connections.csv"), "precious\n").unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine\n").unwrap();
    for cmd in ["sim", "emu"] {
        let o = lasthop()
            .args([
                cmd,
                sc.to_str().unwrap(),
                "--out",
                foreign.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{cmd} wrote into a foreign directory");
        assert!(
            stderr.contains("is not empty (connections.csv, notes.txt) and is not a lasthop run's directory (it has no lasthop-run.txt): refusing to write into what is not lasthop's"),
            "{cmd}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(foreign.join("connections.csv")).unwrap(),
        "precious\n"
    );
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 2);
    // A new directory, then the same one again: the run's own.
    let out = d.path().join("out");
    for _ in 0..2 {
        let o = lasthop()
            .args(["sim", sc.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(out.join(lasthop_core::output::RUN_MARKER).is_file());
    assert!(out.join("connections.csv").is_file());
}

/// `mode = "emu"`: the runs go through the real-time emulator, one at a time, with the same
/// layout and summaries (skipped without root).
/// One run at a time into a directory: while a process holds it, `lasthop sim`, `run` and
/// `report` into it fail with an error naming that process; when it is gone, they work, and a
/// killed run's temporary files are removed.
#[test]
fn a_second_run_into_a_locked_directory_names_the_first() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    // This test process plays the first run: the lock is the same flock a run takes.
    let lock = lasthop_core::output::RunDirLock::acquire(&out).unwrap();
    let sc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/seed000-e0-2tcp-5s.toml");
    let exp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/quickstart.toml");
    let me = format!("pid {}", std::process::id());
    for args in [
        vec!["sim", sc.to_str().unwrap(), "--out", out.to_str().unwrap()],
        vec![
            "run",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
        vec!["run", "--out", out.to_str().unwrap(), "-q"],
        vec!["report", out.to_str().unwrap()],
    ] {
        let o = lasthop().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} ran into a locked directory");
        assert!(
            stderr.contains("is in use by another lasthop run") && stderr.contains(&me),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "only the lock file: nothing was written"
    );
    drop(lock);
    std::fs::write(out.join(".lasthop-abc123.partial"), "half").unwrap();
    let o = lasthop()
        .args(["sim", sc.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains(".lasthop-abc123.partial: a temporary file an earlier run left unfinished"),
        "{stderr}"
    );
    assert!(!out.join(".lasthop-abc123.partial").exists());
    assert!(
        !out.join(lasthop_core::output::LOCK_FILE).exists(),
        "the lock file stays after the run"
    );
}

#[test]
fn emu_mode_experiment() {
    if !common::can_emulate("emu_mode_experiment") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"emu-exp\"\nduration = \"30s\"\nlink = \"{}\"\n[hosts.server]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = 8000\n",
            ex.join("links/seed000-e0.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"emu-exp\"\nscenario = \"scenario.toml\"\nmode = \"emu\"\nreplications = 1\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let o = run_quiet(&spec, &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("1 runs: 0 kept from before, 1 run now, 0 failed"),
        "{stdout}"
    );
    let m = std::fs::read_to_string(out.join("runs/base/0/metrics.json")).unwrap();
    assert!(
        m.contains("\"flow\": 0,") && m.contains("\"bytes\": 8000,"),
        "{m}"
    );
    assert!(out.join("runs/base/0/done.json").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Mode <b>emu</b>") && html.contains("Time-sequence graph"));
}

/// Ctrl-C to an emulated experiment: the run under way is torn down by the emulator, no further
/// run starts, and the command says what it kept and how to resume (skipped without root).
#[test]
fn emu_mode_ctrl_c_stops_and_says_what_was_kept() {
    if !common::can_emulate("emu_mode_ctrl_c_stops_and_says_what_was_kept") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"emu-int\"\nduration = \"30s\"\nlink = \"{}\"\n[hosts.fixed]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"fixed\"\nto = \"mobile\"\nbytes = 100000\n",
            ex.join("links/seed000-e0.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"emu-int\"\nscenario = \"scenario.toml\"\nmode = \"emu\"\nreplications = 3\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let child = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first run's capture is being written (its setup is done).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline
        && !std::fs::read_dir(out.join("runs/base/0"))
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".partial"))
            })
            .unwrap_or(false)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1000));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(15),
        "it ran on after Ctrl-C: {stderr}"
    );
    assert_eq!(o.status.code(), Some(128 + libc::SIGINT), "{stderr}");
    assert!(
        stderr.contains("interrupted: 0 of 3 runs are finished and kept")
            && stderr.contains("to resume, run the same command: lasthop run"),
        "{stderr}"
    );
    assert!(
        !out.join("runs/base/1/done.json").exists() && !out.join("runs/base/2/events.csv").exists()
    );
    let _ = Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .arg("cleanup")
        .output();
}
