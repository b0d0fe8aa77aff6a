//! `lasthop check` on every shipped spec, and on bad ones: the message names the key.

use std::path::Path;
use std::process::Command;

fn lasthop(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn every_shipped_spec_checks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut n = 0;
    for dir in ["links", "scenarios"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let (ok, text) = lasthop(&["check", p.to_str().unwrap()]);
                assert!(ok, "{}: {text}", p.display());
                assert!(text.contains("down (fixed side -> mobile side)"), "{text}");
                n += 1;
            }
        }
    }
    assert!(n >= 15, "{n} specs");
    let e0 = root.join("links/seed000-e0.toml");
    let (_, text) = lasthop(&["check", e0.to_str().unwrap()]);
    assert!(
        text.contains("rate 64kbit (72ms per 576B packet)"),
        "{text}"
    );
    assert!(text.contains("router queue: 20 packets"), "{text}");
}

#[test]
fn experiments_check_as_experiments_and_empty_specs_are_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    // An emulated experiment whose hosts set a congestion control this machine does not let a
    // new namespace use (e.g. "cubic" where the default is bbr and the allowed list "reno
    // bbr") is refused here, rightly, with the sysctl that allows it.
    let allowed = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
        .unwrap_or_default();
    let mut n = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let (ok, text) = lasthop(&["check", p.to_str().unwrap()]);
            let machine = ["cubic", "reno", "bbr"].into_iter().find(|cc| {
                text.contains(&format!(
                    "{cc:?} cannot be set in emulation on this machine"
                ))
            });
            match machine {
                Some(cc) if !ok => {
                    assert!(
                        !allowed.split_whitespace().any(|a| a == cc),
                        "{}: refused {cc:?}, which this machine allows ({allowed}): {text}",
                        p.display()
                    );
                    assert!(
                        text.contains("sudo sysctl -w net.ipv4.tcp_allowed_congestion_control="),
                        "{text}"
                    );
                    eprintln!(
                        "{}: refused for this machine ({cc:?} is not in its allowed list {:?})",
                        p.display(),
                        allowed.trim()
                    );
                }
                _ => {
                    assert!(ok, "{}: {text}", p.display());
                    assert!(text.contains(": an experiment"), "{text}");
                }
            }
            assert!(!text.contains("unknown field"), "{text}");
            n += 1;
        }
    }
    assert!(n >= 3, "{n} experiments");
    let dir = tempfile::tempdir().unwrap();
    // A scenario is checked as one (it names the kind), a link as a link.
    let sc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/seed000-e0.toml");
    let (ok, text) = lasthop(&["check", sc.to_str().unwrap()]);
    assert!(ok && text.contains(": a scenario"), "{text}");
    // An experiment with a bad key is checked as an experiment: the error is about its key.
    let p = dir.path().join("exp.toml");
    std::fs::write(&p, "scenario = \"nowhere.toml\"\nreplications = 2\n").unwrap();
    let (ok, out) = lasthop(&["check", p.to_str().unwrap()]);
    assert!(!ok && out.contains("nowhere.toml"), "{out}");
    for empty in ["", "\n\n", "# nothing but a comment\n"] {
        std::fs::write(&p, empty).unwrap();
        let (ok, out) = lasthop(&["check", p.to_str().unwrap()]);
        assert!(!ok, "accepted an empty spec: {out}");
        assert!(
            out.starts_with("error: ") && out.contains("the spec is empty"),
            "{out}"
        );
    }
    // Keys of no kind: read as a link spec, whose loader names the key and the allowed ones.
    std::fs::write(&p, "colour = 1\n").unwrap();
    let (ok, out) = lasthop(&["check", p.to_str().unwrap()]);
    assert!(
        !ok && out.contains("colour") && out.contains("expected one of"),
        "{out}"
    );
}

#[test]
fn bad_specs_fail_with_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        ("[down]\nrate = \"fast\"\n", "down.rate"),
        ("[down.queue]\npolicy = \"red\"\nred = { min_th = 8.0, max_th = 4.0, max_p = 0.1, w_q = 0.002 }\n", "down.queue.red.min_th"),
        ("initial_state = \"x\"\n[states.y]\n", "initial_state"),
        ("duration = \"1s\"\nlink = \"nowhere.toml\"\n", "nowhere.toml"),
        ("[down\n", "line 1"),
        ("[down]\nrate = \"0kbit\"\n", "zero is not allowed"),
        ("[down.queue]\npackets = 0\n", "no queue at all"),
        ("[both]\ndelay = \"99999999999999h\"\n", "too large"),
    ] {
        let p = dir.path().join("spec.toml");
        std::fs::write(&p, text).unwrap();
        let (ok, out) = lasthop(&["check", p.to_str().unwrap()]);
        assert!(!ok, "accepted: {text}");
        assert!(out.contains(want) && out.starts_with("error: "), "{text}: {out}");
    }
    let (ok, out) = lasthop(&["check", "/nonexistent.toml"]);
    assert!(!ok && out.contains("cannot read"), "{out}");
}

#[test]
fn sim_given_a_link_spec_says_what_it_wants() {
    let link = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links/seed000-e0.toml");
    let (ok, out) = lasthop(&["sim", link.to_str().unwrap(), "--out", "/nonexistent/never"]);
    assert!(!ok);
    assert!(
        out.contains("this looks like a link spec") && out.contains("link = "),
        "{out}"
    );
}
