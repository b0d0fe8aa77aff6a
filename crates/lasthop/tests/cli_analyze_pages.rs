//! `lasthop analyze --scenario` on the captures of a simulated seed 002 page (the shipped
//! `seed002-optimal-s2s`): it prints the page table `lasthop sim` printed and writes the same
//! `pages.csv` and `page_objects.csv`, whichever order the two captures are given in; without
//! `--scenario` there is no page.

mod common;

use common::lasthop_ok as lasthop;
use std::path::Path;

/// The page table: from its `page flow` line to the last object row.
fn page_table(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("page flow"))
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("link "))
        .collect()
}

#[test]
fn analyze_prints_and_writes_the_pages_the_simulator_did() {
    let d = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/seed002-optimal-s2s.toml");
    let sc = scenario.to_str().unwrap();
    let sim = d.path().join("sim");
    let sim_out = lasthop(&["sim", sc, "--out", sim.to_str().unwrap()]);
    let want = page_table(&sim_out);
    assert_eq!(want.len(), 5, "{sim_out}");
    assert!(
        want[0].contains("response 4.409 s (client), total 3.796 s (server)"),
        "{}",
        want[0]
    );
    let p = |f: &str| sim.join(f).to_str().unwrap().to_string();
    for (i, order) in [["mobile.pcap", "fixed.pcap"], ["fixed.pcap", "mobile.pcap"]]
        .iter()
        .enumerate()
    {
        let out = d.path().join(format!("a{i}"));
        std::fs::create_dir(&out).unwrap();
        let csv = out.join("connections.csv");
        let got = lasthop(&[
            "analyze",
            &p(order[0]),
            &p(order[1]),
            "--events",
            &p("events.csv"),
            "--scenario",
            sc,
            "--csv",
            csv.to_str().unwrap(),
        ]);
        assert_eq!(page_table(&got), want, "{order:?}");
        for f in ["pages.csv", "page_objects.csv"] {
            assert_eq!(
                std::fs::read_to_string(out.join(f)).unwrap(),
                std::fs::read_to_string(sim.join(f)).unwrap(),
                "{f} {order:?}"
            );
        }
    }
    let plain = lasthop(&["analyze", &p("mobile.pcap"), &p("fixed.pcap")]);
    assert!(page_table(&plain).is_empty(), "{plain}");
}
