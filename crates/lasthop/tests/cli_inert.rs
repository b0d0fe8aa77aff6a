//! Issue 24 through the commands a researcher runs: a setting that does nothing is said (a
//! warning on stderr from `check`, `sim`, `emu` and `run`), one the mode cannot do is refused
//! before anything runs, naming the key, the mode and what would work.

mod common;

use common::{can_emulate, lasthop, lasthop_err};
use std::path::Path;

/// Writes a link and a scenario (hosts `a` fixed, `b` mobile, one bulk flow a -> b with `flow`
/// appended) into `dir`; returns the scenario's path.
fn write(dir: &Path, link: &str, hosts: &str, flow: &str) -> String {
    std::fs::write(dir.join("l.toml"), link).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"inert\"\nduration = \"5s\"\nlink = \"l.toml\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n{hosts}\n[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = 20000\n{flow}"
        ),
    )
    .unwrap();
    p.display().to_string()
}

fn stderr_of(args: &[&str]) -> (bool, String) {
    let o = lasthop(args);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn sim_refuses_bbr_and_check_says_which_mode_runs_it() {
    let d = tempfile::tempdir().unwrap();
    let s = write(
        d.path(),
        "[both]\nrate = \"10Mbit\"\n",
        "",
        "congestion_control = \"bbr\"\n",
    );
    let out = d.path().join("out");
    let e = lasthop_err(&["sim", &s, "--out", out.to_str().unwrap()]);
    assert!(e.contains("flows[0].congestion_control"), "{e}");
    assert!(e.contains("emulation"), "{e}");
    assert!(!out.join("connections.csv").exists());
    let o = lasthop(&["check", &s]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(
        stdout.contains("in simulation: refused: key `flows[0].congestion_control`"),
        "{stdout}"
    );
    assert!(stdout.contains("in emulation: runs"), "{stdout}");
}

#[test]
fn check_and_sim_warn_about_an_aqm_that_never_sees_a_queue() {
    let d = tempfile::tempdir().unwrap();
    // CoDel on a direction with no rate: no packet ever waits.
    let s = write(d.path(), "[down.queue]\npolicy = \"codel\"\n", "", "");
    let (ok, e) = stderr_of(&["check", &s]);
    assert!(ok, "{e}");
    assert!(e.contains("warning: key `down.queue`"), "{e}");
    assert!(e.contains("rate is unlimited"), "{e}");
    let out = d.path().join("out");
    let (ok, e) = stderr_of(&["sim", &s, "--out", out.to_str().unwrap()]);
    assert!(ok, "{e}");
    assert!(e.contains("warning: key `down.queue`"), "{e}");
    // A link spec alone too.
    let (ok, e) = stderr_of(&["check", d.path().join("l.toml").to_str().unwrap()]);
    assert!(ok, "{e}");
    assert!(e.contains("warning: key `down.queue`"), "{e}");
}

#[test]
fn emu_refuses_a_congestion_control_the_machine_does_not_allow() {
    // The sysctl a new namespace may not use failed half-way through setup with "Operation not
    // permitted"; now it is refused before anything is created, with the command that allows
    // it. Needs a machine where some available algorithm is not allowed.
    let read =
        |n: &str| std::fs::read_to_string(format!("/proc/sys/net/ipv4/{n}")).unwrap_or_default();
    let allowed = read("tcp_allowed_congestion_control");
    let Some(cc) = ["cubic", "reno", "bbr", "htcp", "vegas"]
        .into_iter()
        .find(|c| !allowed.split_whitespace().any(|a| a == *c))
    else {
        eprintln!("SKIPPED: every algorithm tried is allowed on this machine ({allowed})");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let s = write(
        d.path(),
        "[both]\nrate = \"10Mbit\"\n",
        &format!("[hosts.a.sysctl]\ntcp_congestion_control = \"{cc}\"\n"),
        "",
    );
    // `check` knows without root.
    let o = lasthop(&["check", &s]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("in emulation: refused: key `hosts.a.sysctl.tcp_congestion_control`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("net.ipv4.tcp_allowed_congestion_control"),
        "{stdout}"
    );
    if !can_emulate("emu_refuses_a_congestion_control_the_machine_does_not_allow") {
        return;
    }
    let out = d.path().join("out");
    let e = lasthop_err(&["emu", &s, "--out", out.to_str().unwrap(), "--quiet"]);
    assert!(e.contains("hosts.a.sysctl.tcp_congestion_control"), "{e}");
    assert!(
        e.contains("sudo sysctl -w net.ipv4.tcp_allowed_congestion_control="),
        "{e}"
    );
    // Not the kernel's refusal half-way through setup.
    assert!(!e.contains("the kernel refused the value"), "{e}");
    assert!(!out.join("events.csv").exists());
}

#[test]
fn output_columns_say_what_they_hold() {
    // Issue 24's misleading names: CoDel's drops were counted in `drops_red`, and
    // tcp_trace.csv's cwnd had no unit. CoDel at 1 Mbit/s behind a 100-packet burst of a
    // greedy flow drops at dequeue: those drops are `drops_aqm`, and `drops_red` stays 0.
    let d = tempfile::tempdir().unwrap();
    let s = write(
        d.path(),
        "[both]\nrate = \"1Mbit\"\ndelay = \"20ms\"\n[down.queue]\npolicy = \"codel\"\n",
        "",
        "",
    );
    std::fs::write(
        &s,
        std::fs::read_to_string(&s)
            .unwrap()
            .replace("bytes = 20000", "bytes = \"unlimited\""),
    )
    .unwrap();
    let out = d.path().join("out");
    let o = lasthop(&["sim", &s, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let trace = std::fs::read_to_string(out.join("tcp_trace.csv")).unwrap();
    assert!(
        trace.starts_with("time_ns,host,local,remote,cwnd_segs,ssthresh_segs,"),
        "{}",
        trace.lines().next().unwrap()
    );
    let conns = std::fs::read_to_string(out.join("connections.csv")).unwrap();
    let mut lines = conns.lines();
    let cols: Vec<&str> = lines.next().unwrap().split(',').collect();
    let vals: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |n: &str| {
        vals[cols
            .iter()
            .position(|c| *c == n)
            .unwrap_or_else(|| panic!("no column {n}"))]
    };
    assert_eq!(get("drops_red"), "0");
    let aqm: u64 = get("drops_aqm").parse().unwrap();
    assert!(aqm > 0, "CoDel dropped nothing: {conns}");
    let link = std::fs::read_to_string(out.join("link.csv")).unwrap();
    let lc: Vec<&str> = link.lines().next().unwrap().split(',').collect();
    let down: Vec<&str> = link.lines().nth(1).unwrap().split(',').collect();
    let at = |n: &str| down[lc.iter().position(|c| *c == n).unwrap()];
    assert_eq!(at("drops_red"), "0");
    assert_eq!(at("drops_aqm").parse::<u64>().unwrap(), aqm);
}
