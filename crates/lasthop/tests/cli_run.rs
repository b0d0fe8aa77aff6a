//! `lasthop run` and `lasthop report` end to end on a tiny experiment (simulation).

use std::path::Path;
use std::process::Command;

fn lasthop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lasthop"))
}

#[test]
fn run_then_report() {
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"tiny\"\nduration = \"60s\"\nlink = \"{}\"\nlog = \"all\"\n[hosts.server]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = 10000\n[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = 10000\n",
            ex.join("links/seed000-r1.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"cli\"\nscenario = \"scenario.toml\"\nreplications = 2\n[matrix.iw]\niw2 = {}\niw4 = { \"hosts.server.tcp.initial_window\" = 4 }\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let o = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
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
    let o = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap();
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
    let mut child = lasthop()
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
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) for the first finished run, then interrupt.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while markers(&out) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap();
    let kept = markers(&out);
    eprintln!("interrupted with {kept} of 16 runs finished");
    assert!(kept >= 1);
    let o = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "16 runs: {kept} kept from before, {} run now, 0 failed",
            16 - kept
        )),
        "{stdout}"
    );
    let o = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            clean.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    for f in [
        "summary.csv",
        "summary.json",
        "runs/base/15/events.csv",
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

fn can_emulate() -> bool {
    let ok = unsafe { libc::geteuid() } == 0
        && Path::new("/dev/net/tun").exists()
        && Command::new("ip")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: emu mode needs root, /dev/net/tun and iproute2");
    }
    ok
}

/// `mode = "emu"`: the runs go through the real-time emulator, one at a time, with the same
/// layout and summaries (skipped without root).
#[test]
fn emu_mode_experiment() {
    if !can_emulate() {
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
    let o = lasthop()
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap();
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
