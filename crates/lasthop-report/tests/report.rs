//! A report built from a tiny experiment holds the SVG plots and the tables, and nothing that
//! needs the network or JavaScript.

use lasthop_experiment::{run_experiment, Experiment, RunOptions, SimBackend};
use std::path::Path;

#[test]
fn report_of_a_tiny_experiment() {
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            r#"
name = "tiny"
duration = "120s"
link = "{}"
[hosts.server]
side = "fixed"
[hosts.mobile]
side = "mobile"
[[flows]]
kind = "bulk"
from = "server"
to = "mobile"
bytes = 30000
[[flows]]
kind = "bulk"
from = "server"
to = "mobile"
bytes = 30000
"#,
            ex.join("links/seed000-r1.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"tiny-report\"\ndescription = \"two <short> flows\"\nscenario = \"scenario.toml\"\nreplications = 2\n[matrix.tcp]\nbl = {}\nfrto = { \"hosts.server.tcp.frto\" = true }\n[reference.bl]\nsource = \"made up\"\nfaster = { elapsed_s = [10, 11, 12] }\n",
    )
    .unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let out = d.path().join("out");
    let opts = RunOptions {
        jobs: Some(2),
        progress: false,
    };
    run_experiment(&exp, &out, &SimBackend, &opts).unwrap();
    let path = lasthop_report::build(&out).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("two &lt;short&gt; flows"),
        "the description is escaped"
    );
    for needle in [
        "Time-sequence graph, connection 1",
        "Time-sequence graph, connection 2",
        "Router queue length",
        "Throughput over time",
        "Congestion window and slow-start threshold",
        "Elapsed time of every connection, per point",
        "Throughput of every connection, per point",
        "elapsed time (s) by point and class",
        "fairness index by point",
        "Summary (classes: faster-slower)",
        "Tables per point (appendix layout)",
        "<th>25%</th>",
        "pkts dropped (q)",
        "frto",
        "Published values beside ours",
        "made up",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    assert!(
        html.matches("<svg").count() >= 10,
        "{} svgs",
        html.matches("<svg").count()
    );
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    assert!(html.matches("<table").count() >= 3);
    assert!(!html.contains("<script"), "no JavaScript");
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );

    // Rebuilding from the files on disk gives the same report; another run can be chosen.
    std::fs::remove_file(&path).unwrap();
    let again = lasthop_report::build(&out).unwrap();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
    let other = lasthop_report::build_with(&out, Some("frto/1")).unwrap();
    assert!(std::fs::read_to_string(other)
        .unwrap()
        .contains("One run: frto / replication 1"));
    let e = lasthop_report::build_with(&out, Some("nope/0")).unwrap_err();
    assert!(e.contains("bl, frto"), "{e}");
}
