//! The runner on tiny experiments (two short flows, two links, two replications): resume,
//! determinism, spec errors that name the key.

use lasthop_experiment::{
    run_experiment, Backend, Experiment, RunId, RunOptions, SimBackend, MARKER,
};
use lasthop_scenario::Scenario;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A directory with a short two-flow scenario and an experiment over links e0 and r1.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let ex = examples();
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
bytes = 20000
[[flows]]
kind = "bulk"
from = "server"
to = "mobile"
bytes = 20000
start = "1s"
"#,
            ex.join("links/seed000-e0.toml").display()
        ),
    )
    .unwrap();
    let spec = d.path().join("exp.toml");
    std::fs::write(
        &spec,
        format!(
            r#"
name = "tiny"
scenario = "scenario.toml"
replications = 2
seed = 7
classes = ["faster-slower", "start-order", "flow"]
[matrix.link]
e0 = {{ link = "{e0}" }}
r1 = {{ link = "{r1}" }}
"#,
            e0 = ex.join("links/seed000-e0.toml").display(),
            r1 = ex.join("links/seed000-r1.toml").display()
        ),
    )
    .unwrap();
    (d, spec)
}

/// The simulator, counting the runs it does.
#[derive(Default)]
struct Counting {
    runs: Mutex<HashMap<(String, u64), u32>>,
}

impl Backend for Counting {
    fn run(
        &self,
        scenario: &Scenario,
        dir: &Path,
        keep: &lasthop_experiment::outputs::Keep,
    ) -> Result<Option<lasthop_experiment::measure::RunTables>, lasthop_experiment::RunError> {
        let point = dir
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        *self
            .runs
            .lock()
            .unwrap()
            .entry((point, scenario.replication))
            .or_default() += 1;
        SimBackend.run(scenario, dir, keep)
    }
    fn max_jobs(&self) -> Option<usize> {
        None
    }
}

fn opts(jobs: usize) -> RunOptions {
    RunOptions {
        jobs: Some(jobs),
        progress: false,
        ..Default::default()
    }
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                v.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn resume_redoes_only_unfinished_runs() {
    let (d, spec) = setup();
    let exp = Experiment::load(&spec).unwrap();
    assert_eq!(exp.points.len(), 2);
    let out = d.path().join("out");
    let first = Counting::default();
    let r = run_experiment(&exp, &out, &first, &opts(2)).unwrap();
    assert_eq!((r.total, r.kept, r.ran.len(), r.failed.len()), (4, 0, 4, 0));
    assert_eq!(first.runs.lock().unwrap().len(), 4);
    let before = files(&out);
    let mtime = |p: PathBuf| std::fs::metadata(p).unwrap().modified().unwrap();
    let marker = |p: &str, r: u64| {
        exp.run_dir(
            &out,
            RunId {
                point: exp.points.iter().position(|x| x.name == p).unwrap(),
                replication: r,
            },
        )
        .join(MARKER)
    };
    let kept_mtimes: Vec<_> = [("e0", 0), ("r1", 1)]
        .iter()
        .map(|&(p, r)| mtime(marker(p, r)))
        .collect();

    // A crash: one run lost its marker (killed before the end), one its whole directory, and
    // an unfinished run left a stray partial file.
    std::fs::remove_file(marker("e0", 1)).unwrap();
    std::fs::write(
        marker("e0", 1).with_file_name(".lasthop-x.partial"),
        b"junk",
    )
    .unwrap();
    std::fs::remove_dir_all(marker("r1", 0).parent().unwrap()).unwrap();

    let second = Counting::default();
    let r = run_experiment(&exp, &out, &second, &opts(2)).unwrap();
    assert_eq!((r.total, r.kept, r.ran.len()), (4, 2, 2));
    let ran = second.runs.lock().unwrap().clone();
    let mut keys: Vec<_> = ran.keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, vec![("e0".to_string(), 1), ("r1".to_string(), 0)]);
    assert!(ran.values().all(|&n| n == 1));
    // The kept runs were not touched.
    let after: Vec<_> = [("e0", 0), ("r1", 1)]
        .iter()
        .map(|&(p, r)| mtime(marker(p, r)))
        .collect();
    assert_eq!(kept_mtimes, after);
    // Same spec and seed: identical files, the redone runs included (the stray file is gone).
    assert_eq!(files(&out), before);

    // A third invocation has nothing to do.
    let third = Counting::default();
    let r = run_experiment(&exp, &out, &third, &opts(1)).unwrap();
    assert_eq!((r.kept, r.ran.len()), (4, 0));
    assert!(third.runs.lock().unwrap().is_empty());
}

#[test]
fn same_outputs_whatever_the_thread_count() {
    let (d, spec) = setup();
    let exp = Experiment::load(&spec).unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    run_experiment(&exp, &a, &SimBackend, &opts(1)).unwrap();
    run_experiment(&exp, &b, &SimBackend, &opts(2)).unwrap();
    assert_eq!(files(&a), files(&b));
    let csv = std::fs::read_to_string(a.join("summary.csv")).unwrap();
    assert!(
        csv.starts_with("point,link,scheme,class,metric,n,min,p25,median,p75,max,mean\n"),
        "{csv}"
    );
    for needle in [
        "e0,e0,faster-slower,faster,elapsed_s,2,",
        "r1,r1,start-order,second,throughput_Bps,2,",
        "e0,e0,flow,flow1,drops_queue,2,",
        "e0,e0,all,all,elapsed_s,4,",
        "e0,e0,run,all,jain,2,",
        "e0,e0,run,all,util_down,2,",
        "e0,e0,run,all,queue_max_down,2,",
    ] {
        assert!(csv.contains(needle), "{needle} missing in\n{csv}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["points"][1]["point"], "r1");
    assert_eq!(json["points"][0]["runs"], 2);
}

#[test]
fn changed_point_definition_is_redone() {
    let (d, spec) = setup();
    let out = d.path().join("out");
    let exp = Experiment::load(&spec).unwrap();
    run_experiment(&exp, &out, &SimBackend, &opts(2)).unwrap();
    // Change the r1 point only: its runs are redone, e0's kept.
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("r1 = {", "r1 = { \"flows[1].start\" = \"2s\",");
    std::fs::write(&spec, text).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let c = Counting::default();
    let r = run_experiment(&exp, &out, &c, &opts(2)).unwrap();
    assert_eq!((r.kept, r.ran.len()), (2, 2));
    assert!(c.runs.lock().unwrap().keys().all(|k| k.0 == "r1"));
}

fn error_of(spec_text: &str) -> lasthop_link::SpecError {
    error_with(|base| spec_text.replace("BASE", base))
}

fn error_with(edit: impl Fn(&str) -> String) -> lasthop_link::SpecError {
    let (d, spec) = setup();
    let base = std::fs::read_to_string(&spec).unwrap();
    let text = edit(&base);
    std::fs::write(&spec, text).unwrap();
    let e = Experiment::load(&spec).unwrap_err();
    drop(d);
    e
}

#[test]
fn spec_errors_name_the_key() {
    let e = error_of("bogus = 1\nBASE");
    assert_eq!(e.key, "bogus", "{e}");
    assert!(e.message.contains("unknown field"), "{e}");

    let e = error_of("mode = \"real\"\nBASE");
    assert_eq!(e.key, "mode", "{e}");
    assert!(
        e.message.contains("real") && e.message.contains("sim") && e.message.contains("emu"),
        "{e}"
    );

    let e = error_of("BASE\n[matrix.tcp]\nbad = { \"hosts.server.tcp.sackk\" = true }\n");
    assert!(
        e.key.contains("matrix.tcp.bad") && e.key.ends_with("hosts.server.tcp.sackk"),
        "{e}"
    );

    let e = error_of("BASE\n[matrix.tcp]\nbad = { \"hosts.server.tcp.sack\" = 3 }\n");
    assert!(e.key.ends_with("hosts.server.tcp.sack"), "{e}");
    assert!(e.message.contains('3') || e.message.contains("bool"), "{e}");

    let e = error_of("BASE\n[matrix.start]\nlate = { \"flows[5].start\" = \"1s\" }\n");
    assert!(e.key.starts_with("matrix.start.late"), "{e}");
    assert!(
        e.message.contains("index 5") && e.message.contains("2 elements"),
        "{e}"
    );

    // A dimension named like one of summary.csv's own columns would give the CSV two columns
    // of one name (seed 004's specs once had a `scheme` dimension beside the class scheme).
    let e = error_of("BASE\n[matrix.scheme]\nred = { \"duration\" = \"5s\" }\n");
    assert_eq!(e.key, "matrix.scheme", "{e}");
    assert!(
        e.message.contains("column of summary.csv") && e.message.contains("point, scheme, class"),
        "{e}"
    );

    let e = error_of("BASE\n[matrix.d]\nx = { \"duration\" = \"0s\" }\n");
    assert!(e.key.ends_with("scenario.duration"), "{e}");

    let e = error_of("BASE\n[matrix.l]\nx = { link = \"missing.toml\" }\n");
    assert!(
        e.key.ends_with("scenario.link") && e.message.contains("missing.toml"),
        "{e}"
    );

    let e = error_with(|b| b.replace("replications = 2", "replications = 0"));
    assert_eq!(e.key, "replications", "{e}");
    assert!(
        e.message.contains("0") && e.message.contains("1..=100000"),
        "{e}"
    );

    let e = error_with(|b| b.replace("\"flow\"]", "\"flows\"]"));
    assert!(e.key.starts_with("classes"), "{e}");
    assert!(
        e.message.contains("flows") && e.message.contains("faster-slower"),
        "{e}"
    );

    let e = error_of("report_run = \"zz/0\"\nBASE");
    assert_eq!(e.key, "report_run", "{e}");
    assert!(e.message.contains("\"e0\""), "{e}");

    let e = error_with(|b| b.replace("scenario = \"scenario.toml\"", "scenario = \"nope.toml\""));
    assert_eq!(e.key, "scenario", "{e}");
    assert!(e.message.contains("nope.toml"), "{e}");

    let e = error_of("BASE\n[reference.e0]\nfaster = { elapsed = 50 }\n");
    assert_eq!(e.key, "reference.e0.faster.elapsed", "{e}");
    assert!(e.message.contains("elapsed_s"), "{e}");
    let e = error_of("BASE\n[reference.e0]\nquickest = { elapsed_s = 50 }\n");
    assert_eq!(e.key, "reference.e0.quickest", "{e}");
    assert!(
        e.message.contains("fastest") && e.message.contains("run"),
        "{e}"
    );
    // Run-level metrics are class `run`'s, connection metrics are not.
    let e = error_of("BASE\n[reference.e0]\nrun = { jain10k = 50 }\n");
    assert_eq!(e.key, "reference.e0.run.jain10k", "{e}");
    assert!(e.message.contains("jain10k_x100"), "{e}");
    let e = error_of("BASE\n[reference.e0]\nfaster = { elapsed_s = [1, 2] }\n");
    assert_eq!(e.key, "reference.e0.faster.elapsed_s", "{e}");
    assert!(e.message.contains("[p25, median, p75]"), "{e}");
    let e = error_of("BASE\n[reference.e9]\nsource = \"x\"\n");
    assert_eq!(e.key, "reference.e9", "{e}");
    assert!(e.message.contains("\"r1\""), "{e}");
    let (d, spec) = setup();
    let text = std::fs::read_to_string(&spec).unwrap()
        + "[reference.r1]\nsource = \"T44\"\nfaster = { elapsed_s = [1, 2, 3, 4, 5], rtos = 2 }\nall = { elapsed_s = [1.5, 2, 2.5] }\n";
    std::fs::write(&spec, text).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let r = &exp.references[0];
    assert_eq!((r.point.as_str(), r.source.as_deref()), ("r1", Some("T44")));
    assert_eq!(r.values.len(), 3);
    assert_eq!((r.values[0].2.min, r.values[0].2.median), (Some(1.0), 3.0));
    assert_eq!((r.values[1].2.median, r.values[1].2.p25), (2.0, None));
    assert_eq!((r.values[2].2.p25, r.values[2].2.max), (Some(1.5), None));
    drop(d);
    // Seed 002's page classes and metrics (c1 ... cN, page).
    let (d, spec) = setup();
    let text = std::fs::read_to_string(&spec).unwrap()
        + "[reference.r1]\nc1 = { elapsed_s = 3.85, throughput_Bps = 1635, triple_dupacks = 0, sack_pkts = 0, ack_drops_error = 0 }\nc3 = { drops_error = [0, 1, 2] }\npage = { total_s = [3.85, 3.85, 3.85], response_s = 4.5, sum_max_drops = 11, drops_queue_med = 0, drops_error_med = 1 }\n";
    std::fs::write(&spec, text).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let r = &exp.references[0];
    assert_eq!(r.values.len(), 11);
    assert!(r
        .values
        .iter()
        .any(|(c, m, v)| c == "page" && m == "sum_max_drops" && v.median == 11.0));
    drop(d);
    let e = error_of("BASE\n[reference.e0]\nc1 = { response = 4.5 }\n");
    assert_eq!(e.key, "reference.e0.c1.response", "{e}");
    assert!(e.message.contains("sum_max_drops"), "{e}");
    // `page` and `thin` were classes; named there they are the figures they are now.
    let e = error_with(|b| b.replace("\"flow\"]", "\"page\"]"));
    assert_eq!(e.key, "figures", "{e}");
    assert!(e.message.contains("http flow"), "{e}");
    // Seed 003's host classes and stream metrics (scheme `thin`).
    let (d, spec) = setup();
    let text = std::fs::read_to_string(&spec).unwrap()
        + "[reference.r1]\nsource = \"A.1.4(a)\"\nhost-wsender = { lat_mean_ms = 270, lat_p99_99_ms = 2000, itt_avg_ms = 30, loss_bytes_pct = 10.1, rdb_hits = 0 }\n\"host-rdb.sender_1\" = { lat_p99_ms = 209 }\n";
    std::fs::write(&spec, text).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let r = &exp.references[0];
    assert_eq!(r.values.len(), 6);
    assert!(r
        .values
        .iter()
        .any(|(c, m, v)| c == "host-wsender" && m == "lat_p99_99_ms" && v.median == 2000.0));
    drop(d);
    let e = error_of("BASE\n[reference.e0]\nhost-w = { lat_p42_ms = 1 }\n");
    assert_eq!(e.key, "reference.e0.host-w.lat_p42_ms", "{e}");
    assert!(e.message.contains("lat_p99_99_ms"), "{e}");
    let e = error_of("BASE\n[reference.e0]\n\"host-\" = { lat_p50_ms = 1 }\n");
    assert_eq!(e.key, "reference.e0.host-", "{e}");
    assert!(e.message.contains("host-NAME"), "{e}");
    let e = error_with(|b| b.replace("\"flow\"]", "\"thin\"]"));
    assert_eq!(e.key, "figures", "{e}");
    assert!(e.message.contains("thin flow"), "{e}");
    let e = error_of("BASE\n[reference.e0]\ncx = { elapsed_s = 4.5 }\n");
    assert_eq!(e.key, "reference.e0.cx", "{e}");
    assert!(e.message.contains("cN"), "{e}");

    let e = error_of("BASE\n[matrix.bad-name]\nx = {}\n");
    assert!(e.key.contains("bad-name"), "{e}");
}

#[test]
fn a_name_that_is_a_path_is_refused() {
    // `lasthop run` writes to results/<name> by default: an absolute name or one climbing
    // with ../ would put the results anywhere.
    for bad in [
        "/tmp/lasthop-x",
        "../../../x",
        "..",
        ".hidden",
        "-rf",
        "a/b",
    ] {
        let e = error_with(|b| b.replace("name = \"tiny\"", &format!("name = {bad:?}")));
        assert_eq!(e.key, "name", "{bad}: {e}");
        assert!(
            e.message
                .contains(&format!("invalid experiment name {bad:?}: it names the default results directory results/<name>")),
            "{e}"
        );
    }
}

#[test]
fn formula_leading_value_names_are_refused() {
    // A value name starts the point's name, the first cell of its rows in summary.csv: a
    // spreadsheet would run "+cmd" as a formula.
    let e = error_of("BASE\n[matrix.tcp]\n\"+cmd\" = {}\n");
    assert_eq!(e.key, "matrix.tcp.+cmd", "{e}");
    assert!(e.message.contains("not starting with '.' or '+'"), "{e}");
    let e = error_of("BASE\n[matrix.\"+d\"]\nx = {}\n");
    assert_eq!(e.key, "matrix.+d", "{e}");
    // Inside a name '+' stays allowed (`cubic+prr`).
    let (d, spec) = setup();
    let text = std::fs::read_to_string(&spec).unwrap() + "[matrix.tcp]\n\"a+b\" = {}\n";
    std::fs::write(&spec, text).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    assert_eq!(exp.points[0].name, "e0-a+b");
    drop(d);
}

#[test]
fn small_specs_that_would_exhaust_the_machine_are_refused() {
    // 30 dimensions of 2 values: 600 bytes of spec, 2^30 points (the product was built before
    // it was counted: 2 GB and more).
    let mut dims = String::new();
    for i in 0..30 {
        dims += &format!("[matrix.d{i}]\na = {{}}\nb = {{}}\n");
    }
    let t = std::time::Instant::now();
    let e = error_of(&format!("BASE\n{dims}"));
    assert_eq!(e.key, "matrix", "{e}");
    assert_eq!(
        e.message,
        format!(
            "31 dimensions of 2 x {} values make 2147483648 points: allowed at most 10000",
            vec!["2"; 30].join(" x ")
        )
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t.elapsed()
    );
    // 10^4 points x 10^5 replications: 10^9 runs, listed in full by the runner (16 GB).
    let mut dims = String::new();
    for i in 0..4 {
        dims += &format!("[matrix.d{i}]\n");
        for v in 0..10 {
            dims += &format!("v{v} = {{}}\n");
        }
    }
    let e = error_with(|b| {
        b.replace("replications = 2", "replications = 100000")
            .replace("[matrix.link]", &format!("{dims}[matrix.link]"))
            .replace("r1 = ", "#")
    });
    assert_eq!(e.key, "replications", "{e}");
    assert_eq!(
        e.message,
        "10000 points x 100000 replications = 1000000000 runs: allowed at most 1000000 runs; fewer replications or a smaller matrix"
    );
    // An override key of 5 000 dotted parts (10 KB) overflowed the stack.
    let key = vec!["a"; 5000].join(".");
    let e = error_of(&format!("BASE\n[matrix.k]\nx = {{ \"{key}\" = 1 }}\n"));
    assert_eq!(e.key, format!("matrix.k.x.{:?}...", &key[..60]));
    assert_eq!(
        e.message,
        "invalid key path of 9999 bytes: 5000 parts (names and [INDEX]es): allowed at most 64"
    );
    // A link spec that never ends is refused after 8 MiB instead of being read whole.
    let e = error_of("BASE\n[matrix.l]\nz = { link = \"/dev/zero\" }\n");
    assert!(e.key.ends_with("scenario.link"), "{e}");
    assert!(
        e.message.contains("/dev/zero: cannot read the file: longer than 8388608 bytes, the most a spec file may hold"),
        "{e}"
    );
}

#[test]
fn edited_link_spec_is_redone() {
    let (d, spec) = setup();
    let link = d.path().join("mylink.toml");
    std::fs::copy(examples().join("links/seed000-r1.toml"), &link).unwrap();
    let text = std::fs::read_to_string(&spec).unwrap().replace(
        &examples()
            .join("links/seed000-r1.toml")
            .display()
            .to_string(),
        "mylink.toml",
    );
    std::fs::write(&spec, text).unwrap();
    let out = d.path().join("out");
    let exp = Experiment::load(&spec).unwrap();
    run_experiment(&exp, &out, &SimBackend, &opts(2)).unwrap();
    // The link spec changes on disk: the points that use it are redone, the others kept.
    let l = std::fs::read_to_string(&link)
        .unwrap()
        .replace("packets = 20", "packets = 10");
    std::fs::write(&link, l).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    let c = Counting::default();
    let r = run_experiment(&exp, &out, &c, &opts(2)).unwrap();
    assert_eq!((r.kept, r.ran.len()), (2, 2));
    assert!(c.runs.lock().unwrap().keys().all(|k| k.0 == "r1"));
}

/// The first trace row of each fixed-host connection after its handshake (cwnd > 1 or a
/// known srtt): (cwnd, ssthresh, srtt_ns).
fn after_handshake(trace: &Path) -> Vec<(u64, u64, u64)> {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[1] == "fixed" && !f[6].is_empty() && !seen.contains_key(f[2]) {
            seen.insert(
                f[2].to_string(),
                (
                    f[4].parse().unwrap(),
                    f[5].parse().unwrap(),
                    f[6].parse().unwrap(),
                ),
            );
        }
    }
    seen.into_values().collect()
}

/// Seed 000's CBI as it ran: replication 1 starts with the cache replication 0 ended with, so
/// its connections start from the cached ssthresh and srtt, and Linux's initial window for a
/// 524-byte MSS (4 segments) capped by that ssthresh; replication 0 is the cold run.
#[test]
fn chained_replications_hand_the_cbi_cache_on() {
    let d = tempfile::tempdir().unwrap();
    let ex = examples();
    let spec = |chain: bool| {
        format!(
            r#"
name = "chain"
scenario = "{}"
replications = 2
replications_chain = {chain}
seed = 1
set = {{ "hosts.fixed.tcp.timestamps" = true, "hosts.mobile.tcp.timestamps" = true, "hosts.fixed.tcp.cbi" = true }}
[matrix.link]
e0 = {{}}
"#,
            ex.join("scenarios/seed000-e0-2tcp.toml").display()
        )
    };
    let (a, b) = (d.path().join("chain.toml"), d.path().join("cold.toml"));
    std::fs::write(&a, spec(true)).unwrap();
    std::fs::write(&b, spec(false)).unwrap();
    let (chained, cold) = (Experiment::load(&a).unwrap(), Experiment::load(&b).unwrap());
    assert!(chained.chain && !cold.chain);
    assert_ne!(
        chained.points[0].fingerprint, cold.points[0].fingerprint,
        "chained runs are not cold runs: a results directory must not mix them"
    );
    let (oa, ob) = (d.path().join("a"), d.path().join("b"));
    // Every run keeps its tcp_trace.csv (by default only the report run's).
    let traces = RunOptions {
        outputs: lasthop_experiment::outputs::OutputsSpec {
            tcp_trace: Some(lasthop_experiment::outputs::Runs::All),
            ..Default::default()
        },
        ..opts(2)
    };
    let r = run_experiment(&chained, &oa, &SimBackend, &traces).unwrap();
    assert_eq!((r.ran.len(), r.failed.len()), (2, 0));
    run_experiment(&cold, &ob, &SimBackend, &traces).unwrap();
    let run = |o: &Path, k: u64| o.join(format!("runs/e0/{k}"));
    // Replication 0 is cold in both.
    let conns = |o: &Path, k| std::fs::read(run(o, k).join("connections.csv")).unwrap();
    assert_eq!(conns(&oa, 0), conns(&ob, 0));
    // What it left for the next one: the fixed host's entry for the mobile host.
    let cache: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run(&oa, 0).join("tcp_metrics.json")).unwrap(),
    )
    .unwrap();
    let e = &cache["entries"][0];
    assert_eq!(
        (e["host"].as_str(), e["destination"].as_str()),
        (Some("fixed"), Some("198.19.0.1"))
    );
    let (ssthresh, srtt) = (
        e["ssthresh"].as_u64().unwrap(),
        e["srtt_ns"].as_u64().unwrap(),
    );
    assert!(ssthresh >= 2 && srtt > 600_000_000, "{cache}");
    // Cold: IW 2 (the scenario's), ssthresh "infinite", srtt the handshake's ~0.6 s.
    for (cwnd, ss, _) in after_handshake(&run(&ob, 1).join("tcp_trace.csv")) {
        assert_eq!((cwnd, ss), (2, 2_147_483_647));
    }
    // Chained: ssthresh and srtt from the cache, IW min(4, ssthresh).
    let warm = after_handshake(&run(&oa, 1).join("tcp_trace.csv"));
    assert_eq!(warm.len(), 2);
    for (cwnd, ss, rtt) in warm {
        assert_eq!((cwnd, ss), (4.min(ssthresh), ssthresh));
        assert!(
            rtt >= srtt,
            "srtt {rtt} starts at least at the cached {srtt}"
        );
    }
    assert_ne!(conns(&oa, 1), conns(&ob, 1));
    // Sharded, a point's replications stay together (each needs its predecessor).
    for n in 2..5 {
        let owners: Vec<u64> = (1..=n)
            .filter(|&k| {
                let s: lasthop_experiment::shard::Shard = format!("{k}/{n}").parse().unwrap();
                !s.runs(&chained).is_empty()
            })
            .collect();
        assert_eq!(owners.len(), 1, "{n} shards: {owners:?}");
    }
}

#[test]
fn chained_replications_are_simulation_only() {
    let e = error_of("mode = \"emu\"\nreplications_chain = true\nBASE");
    assert_eq!(e.key, "replications_chain");
    assert!(e.message.contains("simulation only"), "{}", e.message);
}

/// `bottleneck`, `thin` and `page` are figures (key `figures`): named under `classes`, as specs
/// did before the key, they are moved there with a warning; an `experiment.json` written then
/// reads back the same way; `classes = []` leaves only class `all`.
#[test]
fn figures_have_their_own_key_and_old_specs_still_load() {
    use lasthop_experiment::{ClassScheme, ExperimentInfo, Figure};
    let (d, spec) = setup();
    let text = std::fs::read_to_string(&spec).unwrap();
    let old = text.replace(
        "classes = [\"faster-slower\", \"start-order\", \"flow\"]",
        "classes = [\"bottleneck\", \"flow\"]",
    );
    std::fs::write(&spec, &old).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    assert_eq!(exp.classes, [ClassScheme::Flow]);
    assert_eq!(exp.figures, [Figure::Bottleneck]);
    assert_eq!(exp.warnings.len(), 1);
    assert!(
        exp.warnings[0].contains("write `figures = [\"bottleneck\"]`"),
        "{:?}",
        exp.warnings
    );
    let new = text.replace(
        "classes = [\"faster-slower\", \"start-order\", \"flow\"]",
        "classes = []\nfigures = [\"bottleneck\"]",
    );
    std::fs::write(&spec, &new).unwrap();
    let exp = Experiment::load(&spec).unwrap();
    assert!(exp.classes.is_empty() && exp.warnings.is_empty());
    assert_eq!(exp.figures, [Figure::Bottleneck]);
    // experiment.json as written before the key: the figure among the classes.
    let mut info = ExperimentInfo::of(&exp);
    let json = serde_json::to_string(&info).unwrap();
    assert!(json.contains("\"figures\":[\"bottleneck\"]"), "{json}");
    info.figures.clear();
    info.classes = vec![ClassScheme::Bottleneck];
    let old_json = serde_json::to_string(&info).unwrap();
    assert!(!old_json.contains("figures"), "{old_json}");
    let back = ExperimentInfo::parse(&d.path().join("experiment.json"), &old_json).unwrap();
    assert!(back.classes.is_empty());
    assert_eq!(back.figures, [Figure::Bottleneck]);
    assert_eq!(back.report_scheme(), Some(ClassScheme::Bottleneck));
}

/// By default a sweep keeps captures, `events.csv` and `tcp_trace.csv` for its report run only
/// (the first point's replication 0 here); every run keeps its tables, `link.csv` and metrics,
/// the same as with everything kept. A run's files not kept are made again, byte for byte, by
/// running it again (`lasthop report --run`); the scenario's `[outputs]` and the options'
/// flags choose otherwise.
#[test]
fn a_sweep_keeps_the_report_runs_files_and_the_others_are_made_again() {
    use lasthop_experiment::outputs::{CaptureChoice, OutputsSpec, Runs};
    let (d, spec) = setup();
    let exp = Experiment::load(&spec).unwrap();
    let (sweep, every) = (d.path().join("sweep"), d.path().join("every"));
    run_experiment(&exp, &sweep, &SimBackend, &opts(2)).unwrap();
    let all = RunOptions {
        outputs: OutputsSpec {
            captures: Some(CaptureChoice::Runs(Runs::All)),
            events: Some(Runs::All),
            tcp_trace: Some(Runs::All),
            ..Default::default()
        },
        ..opts(2)
    };
    run_experiment(&exp, &every, &SimBackend, &all).unwrap();
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let tables = [
        "connections.csv",
        "done.json",
        "link.csv",
        "metrics.json",
        "scenario.toml",
    ];
    assert_eq!(names(&sweep.join("runs/r1/1")), tables);
    let full = names(&every.join("runs/r1/1"));
    assert_eq!(names(&sweep.join("runs/e0/0")), full, "the report run's");
    for f in [
        "events.csv",
        "tcp_trace.csv",
        "server.pcap",
        "mobile.pcap",
        "connections.csv",
    ] {
        assert!(full.iter().any(|x| x == f), "{f} in {full:?}");
    }
    for f in tables {
        assert_eq!(
            std::fs::read(sweep.join("runs/r1/1").join(f)).unwrap(),
            std::fs::read(every.join("runs/r1/1").join(f)).unwrap(),
            "{f}"
        );
    }
    assert_eq!(
        std::fs::read(sweep.join("summary.csv")).unwrap(),
        std::fs::read(every.join("summary.csv")).unwrap()
    );
    // Made again: every file as the run that kept them.
    let info = lasthop_experiment::ExperimentInfo::load(&sweep).unwrap();
    use lasthop_experiment::restore::{lacks_files, restore_run_files};
    assert!(lacks_files(&sweep, &info, "r1", 1));
    assert!(restore_run_files(&sweep, &info, "r1", 1).unwrap());
    assert!(!restore_run_files(&sweep, &info, "r1", 1).unwrap(), "once");
    assert_eq!(names(&sweep.join("runs/r1/1")), full);
    for f in &full {
        assert_eq!(
            std::fs::read(sweep.join("runs/r1/1").join(f)).unwrap(),
            std::fs::read(every.join("runs/r1/1").join(f)).unwrap(),
            "{f}"
        );
    }
    // The scenario's [outputs]: one host's captures in every run, no event log.
    let text = std::fs::read_to_string(d.path().join("scenario.toml")).unwrap()
        + "[outputs]\ncaptures = [\"server\"]\nevents = \"none\"\n";
    std::fs::write(d.path().join("scenario.toml"), text).unwrap();
    let exp2 = Experiment::load(&spec).unwrap();
    assert_eq!(
        exp2.points[0].fingerprint, exp.points[0].fingerprint,
        "outputs redo no run"
    );
    let some = d.path().join("some");
    run_experiment(&exp2, &some, &SimBackend, &opts(2)).unwrap();
    let n = names(&some.join("runs/r1/1"));
    assert!(n.contains(&"server.pcap".to_string()) && !n.contains(&"mobile.pcap".to_string()));
    assert!(!names(&some.join("runs/e0/0")).contains(&"events.csv".to_string()));
}
