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
    ) -> Result<(), lasthop_experiment::runner::RunError> {
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
        SimBackend.run(scenario, dir)
    }
    fn max_jobs(&self) -> Option<usize> {
        None
    }
}

fn opts(jobs: usize) -> RunOptions {
    RunOptions {
        jobs: Some(jobs),
        progress: false,
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
        e.message.contains("0") && e.message.contains("1..100000"),
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
    let e = error_with(|b| b.replace("\"flow\"]", "\"page\"]"));
    assert_eq!(e.key, "classes", "{e}");
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
    assert_eq!(e.key, "classes", "{e}");
    assert!(e.message.contains("thin flow"), "{e}");
    let e = error_of("BASE\n[reference.e0]\ncx = { elapsed_s = 4.5 }\n");
    assert_eq!(e.key, "reference.e0.cx", "{e}");
    assert!(e.message.contains("cN"), "{e}");

    let e = error_of("BASE\n[matrix.bad-name]\nx = {}\n");
    assert!(e.key.contains("bad-name"), "{e}");
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
