//! A report built from a tiny experiment holds the SVG plots and the tables, and nothing that
//! needs the network or JavaScript.

use lasthop_experiment::{run_experiment, Experiment, RunOptions, SimBackend};
use lasthop_report::html::COLUMN_BUDGET;
use std::path::Path;

/// The columns of each table of `html` and whether a closed `<details>` folds it: the cells of
/// its widest row, counted with their `colspan` (parsed here apart from the report's own
/// counting).
fn tables(html: &str) -> Vec<(usize, bool)> {
    let mut out = vec![];
    let mut details: Vec<bool> = vec![]; // open?
    let mut table: Option<usize> = None;
    let mut row = 0;
    for tag in html.split('<').skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        let name = tag.split([' ', '>']).next().unwrap_or("");
        match name {
            "details" => details.push(tag.contains(" open")),
            "/details" => {
                details.pop();
            }
            "table" => table = Some(0),
            "tr" => row = 0,
            "td" | "th" => {
                row += tag
                    .split("colspan=\"")
                    .nth(1)
                    .and_then(|x| x.split('"').next())
                    .map_or(1, |x| x.parse::<usize>().unwrap());
                if let Some(t) = table.as_mut() {
                    *t = (*t).max(row);
                }
            }
            "/table" => out.push((table.take().unwrap(), details.iter().any(|open| !open))),
            _ => {}
        }
    }
    out
}

/// The page-width rule and the order of the report's opening: every table shown unfolded has
/// at most `COLUMN_BUDGET` columns, and the key figure (when the spec publishes values) comes
/// before the matrix and before any table.
fn check_layout(html: &str) {
    for (i, (cols, folded)) in tables(html).into_iter().enumerate() {
        assert!(
            folded || cols <= COLUMN_BUDGET,
            "table {i} has {cols} columns unfolded"
        );
    }
    if let Some(k) = html.find("id=\"key-figure\"") {
        let matrix = html.find("<h2>Matrix points</h2>").unwrap();
        let table = html.find("<table").unwrap();
        assert!(k < matrix && k < table, "the key figure comes first");
        assert!(
            html[k..matrix].contains("<svg"),
            "the key figure is a figure"
        );
    }
}

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
        ..Default::default()
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
    check_layout(&html);
    // The spec publishes the faster class's elapsed time: the key figure is that metric's,
    // with its one cell (ours beside 11 s) in the table below it.
    assert!(html.contains("Key figure: elapsed time (s), ours beside the published values"));
    assert!(html.contains("<tr><td class=\"l\">bl</td><td class=\"l\">faster</td><td>11</td>"));
    // The class table (2 + 2·4 + 6 = 16 columns) is shown narrow, the full one folded below.
    let folded: Vec<usize> = tables(&html)
        .into_iter()
        .filter(|t| t.1)
        .map(|t| t.0)
        .collect();
    assert!(folded.contains(&16), "{folded:?}");
    assert!(html.contains("<th>faster 50% (s)</th><th>slower 50% (s)</th><th>otime (s)</th>"));
    assert!(html.contains("<summary>The summary per class: every column (16)</summary>"));

    // Rebuilding from the files on disk gives the same report; another run can be chosen.
    std::fs::remove_file(&path).unwrap();
    let again = lasthop_report::build(&out).unwrap();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
    let other = lasthop_report::build_with(&out, Some("frto/1")).unwrap();
    assert!(std::fs::read_to_string(other)
        .unwrap()
        .contains("One run: frto / replication 1"));
    let e = lasthop_report::build_with(&out, Some("nope/0"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bl, frto"), "{e}");
}

/// The simulator, plus the UDP files a run with one UDP flow has (written by hand here: the
/// simulator's UDP sockets are another engineer's work). Replication k's throughput is
/// 4000 + 62.5·k B/s and its spacing max 228 + 100·k ms.
struct WithUdp;

impl lasthop_experiment::Backend for WithUdp {
    fn run(
        &self,
        scenario: &lasthop_scenario::Scenario,
        dir: &Path,
        keep: &lasthop_experiment::outputs::Keep,
    ) -> Result<Option<lasthop_experiment::measure::RunTables>, lasthop_experiment::RunError> {
        let io = |e: std::io::Error| lasthop_experiment::RunError::Io {
            path: dir.display().to_string(),
            source: e,
        };
        SimBackend.run(scenario, dir, keep)?;
        let k: f64 = dir.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let flows = format!(
            "flow,src,dst,sent,received,lost,loss_rate,duplicates,bytes,first_s,last_s,throughput_Bps,drops_queue,drops_red,drops_error,drops_mtu,spacing_p50_ms,spacing_p75_ms,spacing_p90_ms,spacing_max_ms,delay_p50_ms,delay_p75_ms,delay_p90_ms,delay_p99_ms,delay_max_ms\n\
             1,10.0.0.1:7000,10.0.0.2:7001,10,9,1,0.100000,0,4680,0.200000,1.352000,{:.3},1,0,0,0,128.000,128.000,168.000,{:.3},200.000,200.000,220.000,292.000,300.000\n",
            4000.0 + 62.5 * k,
            228.0 + 100.0 * k
        );
        let packets = "flow,seq,sent_s,received_s,delay_ms\n1,0,0.000000,0.200000,200.000\n1,1,0.128000,0.328000,200.000\n1,2,0.256000,0.456000,200.000\n";
        std::fs::write(dir.join("udp_flows.csv"), flows).map_err(io)?;
        std::fs::write(dir.join("udp_packets.csv"), packets).map_err(io)?;
        // The tables are read from the files, the UDP ones written here included.
        Ok(None)
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}

#[test]
fn udp_flows_in_metrics_summary_and_report() {
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"udp\"\nduration = \"60s\"\nlink = \"{}\"\n[hosts.server]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"server\"\nto = \"mobile\"\nbytes = 5000\n",
            ex.join("links/seed000-e0.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"udp\"\nscenario = \"scenario.toml\"\nreplications = 2\n",
    )
    .unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let out = d.path().join("out");
    let opts = RunOptions {
        jobs: Some(1),
        progress: false,
        ..Default::default()
    };
    run_experiment(&exp, &out, &WithUdp, &opts).unwrap();
    // metrics.json of replication 1 holds the UDP flow (no scenario flow matches its addresses)
    let runs = std::fs::read_dir(out.join("runs")).unwrap();
    let point = runs.map(|e| e.unwrap().path()).next().unwrap();
    let m = lasthop_experiment::RunMetrics::load(&point.join("1/metrics.json")).unwrap();
    assert_eq!(m.udp.len(), 1);
    let u = &m.udp[0];
    assert_eq!(
        (u.flow, u.udp_flow, u.sent, u.received, u.lost),
        (None, 1, Some(10), 9, Some(1))
    );
    assert_eq!(u.throughput_bytes_per_s, Some(4062.5));
    assert_eq!(
        u.spacing_ms,
        [Some(128.0), Some(128.0), Some(168.0), Some(328.0)]
    );
    assert_eq!(u.delay_ms[3], Some(292.0));
    // summary.csv: min / 25 / 50 / 75 / max of the two replications (4000, 4062.5)
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        csv.contains(",udp,udp1,throughput_Bps,2,4000,4015.625,4031.25,4046.875,4062.5,4031.25\n"),
        "{csv}"
    );
    assert!(
        csv.contains(",udp,udp1,spacing_max_ms,2,228,253,278,303,328,278\n"),
        "{csv}"
    );
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(json.contains("\"udp\": ["), "{json}");
    let html = std::fs::read_to_string(lasthop_report::build(&out).unwrap()).unwrap();
    for needle in [
        "UDP spacing (jitter)",
        "UDP one-way delay",
        "UDP udp1",
        "UDP throughput (bytes/s, UDP header included)",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    check_layout(&html);
}

/// Seed 002's page (the shipped `seed002-optimal-s2s` scenario) through the runner: the pages'
/// files become `pages` in metrics.json, scheme `page` in the summaries (classes c1..c3 and
/// page, with the derived numbers), the published values of `c1` and `page` beside ours, and
/// the report's page table, response-time CDF and class boxes.
#[test]
fn pages_in_metrics_summary_references_and_report() {
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"pages\"\nscenario = {:?}\nreplications = 2\nclasses = [\"page\", \"flow\"]\n[reference.base]\nsource = \"seed 002, B.1.1\"\nc1 = {{ elapsed_s = 3.85 }}\npage = {{ total_s = [3.78, 3.85, 3.97], sum_max_drops = 0 }}\n",
            ex.join("scenarios/seed002-optimal-s2s.toml").display().to_string()
        ),
    )
    .unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let out = d.path().join("out");
    let opts = RunOptions {
        jobs: Some(1),
        progress: false,
        ..Default::default()
    };
    run_experiment(&exp, &out, &SimBackend, &opts).unwrap();
    let m = lasthop_experiment::RunMetrics::load(&out.join("runs/base/0/metrics.json")).unwrap();
    assert_eq!(m.pages.len(), 1);
    assert_eq!(m.pages[0].objects.len(), 3);
    assert_eq!(m.pages[0].total_s, Some(3.7955));
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    for row in [
        "base,page,c1,elapsed_s,2,3.7955,3.7955,3.7955,3.7955,3.7955,3.7955\n",
        "base,page,page,response_s,2,4.409,4.409,4.409,4.409,4.409,4.409\n",
        "base,page,page,sum_max_drops,2,0,0,0,0,0,0\n",
        "base,page,c3,ack_drops_error,2,0,0,0,0,0,0\n",
    ] {
        assert!(csv.contains(row), "{row} missing from\n{csv}");
    }
    let html = std::fs::read_to_string(lasthop_report::build(&out).unwrap()).unwrap();
    for needle in [
        "Pages (seed 002's summary tables)",
        "Response time of every page, per point",
        "by point and class (page)",
        "page class c3",
        "seed 002, B.1.1",
        "Summary (classes: page)",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    assert!(!html.contains("(no such class or metric)"));
    check_layout(&html);
}

/// Seed 003's thin streams: two hosts of three streams each over the testbed link with 5 %
/// loss; scheme `thin` gives per-host classes, the report their latency ECDFs (full and zoomed)
/// and tables with the published values beside ours.
#[test]
fn report_of_thin_streams() {
    let d = tempfile::tempdir().unwrap();
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let flow = |from: &str| {
        format!("[[flows]]\nkind = \"thin\"\nfrom = \"{from}\"\nto = \"receiver\"\nstreams = 3\npayload = 120\nitt = \"30:3\"\nduration = \"8s\"\n")
    };
    std::fs::write(
        d.path().join("scenario.toml"),
        format!(
            "name = \"thin\"\nduration = \"10s\"\nlink = \"{}\"\nlink_set = {{ down = {{ loss = {{ probability = 0.05 }} }} }}\n[hosts.rdbsender]\nside = \"fixed\"\ntcp = {{ nagle = false }}\n[hosts.wsender]\nside = \"fixed\"\ntcp = {{ nagle = false }}\n[hosts.receiver]\nside = \"mobile\"\n{}{}",
            ex.join("links/seed003-testbed.toml").display(),
            flow("rdbsender"),
            flow("wsender")
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"thin-report\"\nscenario = \"scenario.toml\"\nclasses = [\"thin\", \"flow\"]\n[reference.base]\nsource = \"A.1.3(a)\"\nhost-wsender = { lat_mean_ms = 270, lat_p99_ms = 956 }\n",
    )
    .unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let out = d.path().join("out");
    let opts = RunOptions {
        jobs: Some(1),
        progress: false,
        ..Default::default()
    };
    run_experiment(&exp, &out, &SimBackend, &opts).unwrap();
    let run = out.join("runs/base/0");
    assert!(run.join("streams.csv").exists() && run.join("latency.csv").exists());
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    // Three streams per host; no ACK latency below the 150 ms round trip.
    assert!(
        summary.contains("base,thin,host-rdbsender,streams,1,3,3,3,3,3,3\n"),
        "{summary}"
    );
    assert!(
        summary.contains("base,thin,host-wsender,streams,1,3,3,3,3,3,3\n"),
        "{summary}"
    );
    for line in summary
        .lines()
        .filter(|l| l.contains(",thin,") && l.contains(",lat_p"))
    {
        let min: f64 = line.split(',').nth(5).unwrap().parse().unwrap();
        assert!(min >= 150.0, "{line}");
    }
    let path = lasthop_report::build(&out).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    for needle in [
        "Thin streams (seed 003's tables)",
        "ACK latency per host, base",
        "ACK latency per host, base, y from 0.65",
        "host-rdbsender",
        "host-wsender",
        "<th>99.99th</th>",
        "<th>Rdn B</th>",
        "published",
        "<td>270</td>",
        "<td>956</td>",
        "A.1.3(a)",
        // the summary table is of the first scheme that classes connections
        "Summary (classes: flow)",
        "host-wsender (thin streams)",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    check_layout(&html);
    // The host tables (18 and 22 columns) are folded below their key columns.
    assert!(html.contains("<summary>ACK latency: every column (18)</summary>"));
    assert!(html.contains("<summary>Streams: every column (22)</summary>"));
    assert!(html.contains("Key figure: ACK latency mean (ms), ours beside the published values"));
}
