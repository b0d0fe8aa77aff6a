//! `lasthop analyze` on the captures of a simulated run with a CBR UDP flow (seed 000's
//! 2tcp1udp on e0): it prints the UDP table `lasthop sim` printed and writes the same
//! `udp_flows.csv`, whichever order the two captures are given in.

mod common;

use common::lasthop_ok as lasthop;
use std::path::Path;

/// The UDP table: from its header line to the end of the block of flow rows.
fn udp_table(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with(" udp sender"))
        .take_while(|l| l.starts_with(" udp sender") || l.trim_start().starts_with("1 "))
        .collect()
}

#[test]
fn analyze_prints_and_writes_the_udp_flows_the_simulator_did() {
    let d = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/seed000-e0-2tcp1udp.toml");
    let sim = d.path().join("sim");
    let sim_out = lasthop(&[
        "sim",
        scenario.to_str().unwrap(),
        "--out",
        sim.to_str().unwrap(),
    ]);
    let sim_table = udp_table(&sim_out);
    assert_eq!(sim_table.len(), 2, "{sim_out}");
    let sim_csv = std::fs::read_to_string(sim.join("udp_flows.csv")).unwrap();
    // The simulator names the scenario's flow and hosts (the last four columns); the captures
    // alone cannot, so analyze leaves them empty and the rest is the same.
    assert!(sim_csv.contains(",2,flows[2],fixed,mobile\n"), "{sim_csv}");
    let want_csv = sim_csv.replace(",2,flows[2],fixed,mobile\n", ",,,,\n");
    let (fixed, mobile, events) = (
        sim.join("fixed.pcap"),
        sim.join("mobile.pcap"),
        sim.join("events.csv"),
    );
    for (i, (a, b)) in [(&fixed, &mobile), (&mobile, &fixed)]
        .into_iter()
        .enumerate()
    {
        let out = d.path().join(format!("a{i}"));
        std::fs::create_dir(&out).unwrap();
        let csv = out.join("connections.csv");
        let stdout = lasthop(&[
            "analyze",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--events",
            events.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ]);
        assert_eq!(udp_table(&stdout), sim_table, "{stdout}");
        assert_eq!(
            std::fs::read_to_string(out.join("udp_flows.csv")).unwrap(),
            want_csv
        );
    }
    // The receiver's capture alone: the datagrams it received, 1389 of them (as the simulator
    // counted), nothing about the sender's side.
    let stdout = lasthop(&["analyze", mobile.to_str().unwrap()]);
    let t = udp_table(&stdout);
    let row: Vec<&str> = t[1].split_whitespace().collect();
    let sim_row: Vec<&str> = sim_table[1].split_whitespace().collect();
    assert_eq!(
        &row[..6],
        &["1", sim_row[1], sim_row[2], "-", sim_row[4], "-"]
    );
    assert_eq!(row[6], sim_row[6], "throughput");
}
