//! The resumable runner: every run in its own directory, finished when its marker exists.
//!
//! A run directory `runs/<point>/<replication>/` holds `scenario.toml` (the patched scenario),
//! the run's outputs, `metrics.json` and, written last and atomically, the marker `done.json`.
//! On start, a directory whose marker is missing, or whose marker names another scenario text,
//! seed or replication, is removed and run again; a finished one is kept.

use crate::layout::{ResultsDir, RunDir};
use crate::metrics::RunMetrics;
use crate::spec::{Experiment, Mode, RunId};
use crate::summary::{summarise_point, Summary, QUANTILE_METHOD};
use indexmap::IndexMap;
use lasthop_analysis::files::FileError;
use lasthop_core::output::AtomicFile;
use lasthop_scenario::Scenario;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub use crate::layout::MARKER;

/// What can go wrong running an experiment or summarising its results directory. Messages name
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// `experiment.json` missing or unreadable: not a results directory.
    #[error("{path}: {source} (is {dir} the --out directory of `lasthop run`?)")]
    NotResults {
        path: String,
        dir: String,
        source: std::io::Error,
    },
    /// `shard.json` missing or unreadable: not a shard directory.
    #[error("{path}: {source} (is {dir} the --out directory of `lasthop run --shard K/N`? `lasthop merge` combines shard directories)")]
    NotShard {
        path: String,
        dir: String,
        source: std::io::Error,
    },
    /// Shard directories that cannot be merged, and why.
    #[error("{0}")]
    Merge(String),
    /// A file of a results directory that the tool would not have written (a point name that
    /// is a path, a count past the spec's limits): refused before anything is read or written
    /// where it points.
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error(transparent)]
    File(#[from] FileError),
    /// A failed simulation or emulation.
    #[error(transparent)]
    Backend(#[from] RunError),
    #[error("thread pool: {0}")]
    Pool(String),
}

pub(crate) fn io_err(path: &Path) -> impl Fn(std::io::Error) -> ExperimentError + '_ {
    move |source| ExperimentError::Io {
        path: path.display().to_string(),
        source,
    }
}

pub(crate) fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).expect("plain data serializes") + "\n"
}

/// Why a backend produced no run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Sim(#[from] lasthop_sim::Error),
    /// The emulator could not set up or run (its message with its causes).
    #[error("{0:#}")]
    Emu(anyhow::Error),
    #[error("interrupted by signal {0}")]
    Signal(i32),
    #[error("a workload program failed: {}", .0.join("; "))]
    AppFailed(Vec<String>),
    #[error("analysing the captures: {0}")]
    Analysis(#[from] lasthop_analysis::Error),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A mode this build cannot run, and why.
    #[error("{0}")]
    Unavailable(String),
}

/// What produces one run's files (`connections.csv`, `events.csv`, ...) in a directory.
pub trait Backend: Sync {
    /// Runs `scenario` writing into `dir` (which exists and is empty but for `scenario.toml`).
    fn run(&self, scenario: &Scenario, dir: &Path) -> Result<(), RunError>;
    /// How many runs may go at once (`None`: all cores).
    fn max_jobs(&self) -> Option<usize>;
    /// Runs `scenario` with hosts whose CBI caches start as `from` (a chained replication,
    /// [`crate::chain`]) and returns the caches at the end. Only the simulator can.
    fn run_chained(
        &self,
        _scenario: &Scenario,
        _dir: &Path,
        _from: &lasthop_sim::TcpMetricsCache,
    ) -> Result<lasthop_sim::TcpMetricsCache, RunError> {
        Err(RunError::Unavailable(
            "chained replications (replications_chain) run in simulation only".into(),
        ))
    }
}

/// The simulator: captures, `events.csv`, `tcp_trace.csv`, `connections.csv`.
pub struct SimBackend;

impl Backend for SimBackend {
    fn run(&self, scenario: &Scenario, dir: &Path) -> Result<(), RunError> {
        let opts = lasthop_sim::OutputOptions {
            dir: Some(dir.to_path_buf()),
            capture: true,
        };
        lasthop_sim::run(scenario, &opts)?;
        Ok(())
    }
    fn max_jobs(&self) -> Option<usize> {
        None
    }
    fn run_chained(
        &self,
        scenario: &Scenario,
        dir: &Path,
        from: &lasthop_sim::TcpMetricsCache,
    ) -> Result<lasthop_sim::TcpMetricsCache, RunError> {
        let opts = lasthop_sim::OutputOptions {
            dir: Some(dir.to_path_buf()),
            capture: true,
        };
        Ok(lasthop_sim::run_from(scenario, &opts, from)?.tcp_metrics)
    }
}

/// The emulator: real Linux hosts in network namespaces (needs root, see `docs/emulator.md`);
/// captures, `events.csv`, `hosts.csv`, `summary.toml`, and `connections.csv` from the captures.
/// One run at a time: runs at once would share the CPUs the real-time loop needs.
pub struct EmuBackend {
    /// The `lasthop` binary, started inside the namespaces as `EXE app ...`.
    pub exe: PathBuf,
}

impl Backend for EmuBackend {
    fn run(&self, scenario: &Scenario, dir: &Path) -> Result<(), RunError> {
        let opts = lasthop_emu::EmuOptions::new(dir, self.exe.clone());
        let out = lasthop_emu::run(scenario, &opts).map_err(RunError::Emu)?;
        match out.stop {
            lasthop_emu::Stop::Signal(s) => return Err(RunError::Signal(s)),
            lasthop_emu::Stop::AppFailed => return Err(RunError::AppFailed(out.app_failures)),
            lasthop_emu::Stop::FlowsDone | lasthop_emu::Stop::Duration => {}
        }
        let pages = lasthop_sim::page_specs(scenario);
        let thin = lasthop_sim::has_thin_flows(scenario);
        analyse_emu_run_streams(&out, &pages, thin)?;
        Ok(())
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}

/// An emulated run's captures and event log analysed into `connections.csv` (and
/// `udp_flows.csv`), as the simulator does after its runs.
pub fn analyse_emu_run(
    out: &lasthop_emu::RunOutputs,
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    analyse_emu_run_with_pages(out, &[])
}

/// [`analyse_emu_run`], and the pages of the scenario's `http` flows (`pages.csv`,
/// `page_objects.csv`; [`lasthop_sim::page_specs`]).
pub fn analyse_emu_run_with_pages(
    out: &lasthop_emu::RunOutputs,
    pages: &[lasthop_analysis::PageSpec],
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    analyse_emu_run_streams(out, pages, false)
}

/// [`analyse_emu_run_with_pages`], and with `streams` seed 003's stream analysis
/// (`streams.csv`, `latency.csv`; [`lasthop_sim::has_thin_flows`]).
pub fn analyse_emu_run_streams(
    out: &lasthop_emu::RunOutputs,
    pages: &[lasthop_analysis::PageSpec],
    streams: bool,
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    use lasthop_analysis as la;
    let captures: Vec<_> = out
        .pcaps
        .iter()
        .map(|(_, addr, pcap)| (std::net::IpAddr::V4(*addr), la::Capture::File(pcap)))
        .collect();
    let events = out.events.exists().then_some(out.events.as_path());
    la::write_run_analysis_streams(&out.out_dir, &captures, events, pages, streams)
}

/// A backend that refuses, for a mode this build cannot run.
pub struct Unavailable(pub String);

impl Backend for Unavailable {
    fn run(&self, _: &Scenario, _: &Path) -> Result<(), RunError> {
        Err(RunError::Unavailable(self.0.clone()))
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}

/// The marker: what was run. Deterministic (no wall-clock time), so reruns give identical files.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct Marker {
    pub point: String,
    pub replication: u64,
    pub seed: u64,
    pub mode: String,
    /// FNV-1a 64 of the run's `scenario.toml` and of its link spec's contents.
    pub scenario_hash: String,
}

/// FNV-1a, 64 bits (stable across versions and platforms).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// What the experiment directory records about the experiment (`experiment.json`), enough to
/// rebuild the summaries and the report without the spec.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExperimentInfo {
    pub name: String,
    pub description: Option<String>,
    pub mode: String,
    pub seed: u64,
    pub replications: u64,
    pub classes: Vec<crate::spec::ClassScheme>,
    pub dimensions: Vec<String>,
    pub points: Vec<PointInfo>,
    pub report_run: Option<(String, u64)>,
    /// Published values to show beside ours.
    #[serde(default)]
    pub references: Vec<crate::spec::PointRef>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PointInfo {
    pub name: String,
    pub coords: IndexMap<String, String>,
    /// Flow index -> "from -> to, bytes B, start".
    pub flows: Vec<String>,
    pub link: String,
}

impl ExperimentInfo {
    pub fn of(exp: &Experiment) -> ExperimentInfo {
        let dimensions = exp
            .points
            .first()
            .map(|p| p.coords.iter().map(|(d, _)| d.clone()).collect())
            .unwrap_or_default();
        ExperimentInfo {
            name: exp.name.clone(),
            description: exp.description.clone(),
            mode: exp.mode.name().to_string(),
            seed: exp.seed,
            replications: exp.replications,
            classes: exp.classes.clone(),
            dimensions,
            points: exp
                .points
                .iter()
                .map(|p| PointInfo {
                    name: p.name.clone(),
                    coords: p.coords.iter().cloned().collect(),
                    flows: p
                        .scenario
                        .flows
                        .iter()
                        .map(|f| f.describe(&p.scenario))
                        .collect(),
                    link: p.scenario.link.name.clone(),
                })
                .collect(),
            report_run: exp.report_run.clone(),
            references: exp.references.clone(),
        }
    }

    /// Reads `DIR/experiment.json` and checks what it names: every name that becomes a path
    /// or a CSV cell is one the spec could have made, and the counts are within the spec's
    /// limits ([`ExperimentInfo::check`]). Every reader of a results or shard directory
    /// (`merge`, `report`, the summaries) loads it here.
    pub fn load(dir: &Path) -> Result<ExperimentInfo, ExperimentError> {
        let path = ResultsDir::new(dir).experiment_json();
        let text = read_json_text(&path).map_err(|source| ExperimentError::NotResults {
            path: path.display().to_string(),
            dir: dir.display().to_string(),
            source,
        })?;
        ExperimentInfo::parse(&path, &text)
    }

    /// [`ExperimentInfo::load`] of the text of `path`, already read.
    pub fn parse(path: &Path, text: &str) -> Result<ExperimentInfo, ExperimentError> {
        let info: ExperimentInfo =
            serde_json::from_str(text).map_err(|source| ExperimentError::Json {
                path: path.display().to_string(),
                source,
            })?;
        info.check().map_err(|message| ExperimentError::Invalid {
            path: path.display().to_string(),
            message: format!("{message}: not what lasthop writes; refusing to use it"),
        })?;
        Ok(info)
    }

    /// What is wrong with a description read from disk, if anything: a point name that is not
    /// one directory name below `runs/` ([`crate::spec::point_name_problem`]), a dimension or
    /// value name the spec refuses, more points, replications or runs than a spec may have, a
    /// report run that is not one of the runs.
    pub fn check(&self) -> Result<(), String> {
        use crate::spec::{MAX_POINTS, MAX_REPLICATIONS, MAX_RUNS};
        let (np, nr) = (self.points.len() as u64, self.replications);
        if np > MAX_POINTS {
            return Err(format!("{np} points: allowed at most {MAX_POINTS}"));
        }
        if nr == 0 || nr > MAX_REPLICATIONS {
            return Err(format!("{nr} replications: allowed 1..={MAX_REPLICATIONS}"));
        }
        if np * nr > MAX_RUNS {
            return Err(format!(
                "{np} points x {nr} replications: allowed at most {MAX_RUNS} runs"
            ));
        }
        for d in &self.dimensions {
            crate::spec::name_problem("dimension name", d)?;
        }
        for p in &self.points {
            if let Some(problem) = crate::spec::point_name_problem(&p.name) {
                return Err(problem);
            }
            for (d, v) in &p.coords {
                crate::spec::name_problem("dimension name", d)?;
                crate::spec::name_problem("value name", v)?;
            }
        }
        if let Some((p, k)) = &self.report_run {
            if !self.points.iter().any(|x| &x.name == p) || *k >= nr {
                return Err(format!(
                    "report_run {p:?}/{k} is not one of the experiment's runs"
                ));
            }
        }
        Ok(())
    }

    pub fn run_dir(&self, out: &Path, point: &str, replication: u64) -> PathBuf {
        self.run_layout(out, point, replication)
            .path()
            .to_path_buf()
    }

    /// The run's directory and its files.
    pub fn run_layout(&self, out: &Path, point: &str, replication: u64) -> RunDir {
        ResultsDir::new(out).run(point, replication)
    }
}

/// The most a JSON file of a results directory (`experiment.json`, `shard.json`, a run's
/// `metrics.json` or marker) may hold: 10 000 points describe themselves in a few MB.
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// Reads a JSON file of a results directory, at most [`MAX_JSON_BYTES`] of it.
pub(crate) fn read_json_text(path: &Path) -> std::io::Result<String> {
    lasthop_core::spec::read_text_limited(path, MAX_JSON_BYTES, "a JSON file of lasthop's")
}

/// Reads and parses a JSON file of a results directory (a run's `metrics.json`, a chained
/// replication's `tcp_metrics.json`), errors naming the file.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ExperimentError> {
    let text = read_json_text(path).map_err(io_err(path))?;
    serde_json::from_str(&text).map_err(|source| ExperimentError::Json {
        path: path.display().to_string(),
        source,
    })
}

/// Options of [`run_experiment`].
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Parallel runs (default: all cores; never more than the backend's limit).
    pub jobs: Option<usize>,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// What [`run_experiment`] did.
#[derive(Debug, Default)]
pub struct RunReport {
    pub total: usize,
    /// Finished before this invocation, kept.
    pub kept: usize,
    /// Run now.
    pub ran: Vec<RunId>,
    /// Runs that failed, with the error (their directories stay without a marker).
    pub failed: Vec<(RunId, String)>,
    /// Set when a run failed for a full disk (or quota): the runs after it were not started
    /// (every one would have failed the same way) and no summary was written.
    pub stopped: Option<String>,
    /// Runs not started because of [`RunReport::stopped`].
    pub not_started: usize,
}

/// Whether `e` is a full disk or an exhausted quota (`ENOSPC`, `EDQUOT`), anywhere in its
/// chain of causes or in its message (errors that carry an I/O error's text only).
pub fn is_disk_full(e: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind::{QuotaExceeded, StorageFull};
    let mut cur = Some(e);
    while let Some(x) = cur {
        if let Some(io) = x.downcast_ref::<std::io::Error>() {
            if matches!(io.kind(), StorageFull | QuotaExceeded)
                || matches!(io.raw_os_error(), Some(28 | 122))
            {
                return true;
            }
        }
        cur = x.source();
    }
    let text = e.to_string();
    text.contains("No space left on device") || text.contains("Disk quota exceeded")
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ExperimentError> {
    AtomicFile::write_all_to(path, bytes).map_err(io_err(path))
}

impl Experiment {
    fn marker_for(&self, run: RunId) -> Marker {
        Marker {
            point: self.points[run.point].name.clone(),
            replication: run.replication,
            seed: self.seed,
            mode: self.mode.name().to_string(),
            scenario_hash: format!("{:016x}", self.points[run.point].fingerprint),
        }
    }

    /// Whether `run` has finished in `out` with the current definition.
    pub fn is_done(&self, out: &Path, run: RunId) -> bool {
        let path = self.run_layout(out, run).marker();
        let Ok(text) = read_json_text(&path) else {
            return false;
        };
        serde_json::from_str::<Marker>(&text).ok() == Some(self.marker_for(run))
    }
}

/// Runs one replication of one point into its directory (removing what a previous attempt left).
pub fn run_one(
    exp: &Experiment,
    out: &Path,
    run: RunId,
    backend: &dyn Backend,
) -> Result<(), ExperimentError> {
    let rd = exp.run_layout(out, run);
    rd.reset().map_err(io_err(rd.path()))?;
    let point = &exp.points[run.point];
    write_atomic(&rd.scenario_toml(), point.scenario_toml.as_bytes())?;
    let scenario = exp.scenario(run);
    if exp.chain {
        // The caches the previous replication ended with (none before the first).
        let from = match run.replication {
            0 => vec![],
            k => {
                let prev = exp.run_layout(
                    out,
                    RunId {
                        point: run.point,
                        replication: k - 1,
                    },
                );
                crate::chain::CacheFile::read(&prev.tcp_metrics_json())?.cache()
            }
        };
        let end = backend.run_chained(&scenario, rd.path(), &from)?;
        crate::chain::CacheFile::of(&end).write(&rd.tcp_metrics_json())?;
    } else {
        backend.run(&scenario, rd.path())?;
    }
    let extras = crate::metrics::Extras {
        bottleneck: exp.classes.contains(&crate::spec::ClassScheme::Bottleneck),
        thin: exp.classes.contains(&crate::spec::ClassScheme::Thin),
    };
    let m = RunMetrics::compute(rd.path(), &scenario, &point.name, run.replication, extras)?;
    write_atomic(&rd.metrics_json(), json(&m).as_bytes())?;
    write_atomic(&rd.marker(), json(&exp.marker_for(run)).as_bytes())
}

/// Runs every unfinished run of `exp` under `out`, in parallel, then writes `summary.csv` and
/// `summary.json`. Finished runs are kept. Failed runs are reported, not fatal.
pub fn run_experiment(
    exp: &Experiment,
    out: &Path,
    backend: &dyn Backend,
    opts: &RunOptions,
) -> Result<RunReport, ExperimentError> {
    run_experiment_shard(exp, out, backend, opts, None)
}

/// [`run_experiment`], or with `shard` (`--shard K/N`) only that shard's runs
/// ([`crate::shard`]): it records the shard in `shard.json` and writes no summary (the merge of
/// the shards does). A sharded run's files are those of the same runs unsharded, byte for byte.
pub fn run_experiment_shard(
    exp: &Experiment,
    out: &Path,
    backend: &dyn Backend,
    opts: &RunOptions,
    shard: Option<crate::shard::Shard>,
) -> Result<RunReport, ExperimentError> {
    let layout = ResultsDir::new(out);
    std::fs::create_dir_all(layout.runs()).map_err(io_err(out))?;
    // experiment.json first: it is what makes the directory a results directory
    // (`ResultsDir::inspect`), so a run killed at any moment leaves one the next run accepts.
    write_atomic(
        &layout.experiment_json(),
        json(&ExperimentInfo::of(exp)).as_bytes(),
    )?;
    write_atomic(&layout.experiment_toml(), exp.spec_text.as_bytes())?;

    let all = match shard {
        None => exp.runs(),
        Some(shard) => {
            let info = crate::shard::ShardInfo::of(exp, shard);
            write_atomic(&out.join(crate::shard::SHARD_JSON), json(&info).as_bytes())?;
            shard.runs(exp)
        }
    };
    let pending: Vec<RunId> = all
        .iter()
        .copied()
        .filter(|r| !exp.is_done(out, *r))
        .collect();
    let mut report = RunReport {
        total: all.len(),
        kept: all.len() - pending.len(),
        ..Default::default()
    };
    // The backend's limit is a ceiling (the emulator runs one at a time whatever --jobs says).
    let limit = backend
        .max_jobs()
        .or(if exp.mode == Mode::Emu { Some(1) } else { None });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = match (opts.jobs, limit) {
        (Some(j), Some(l)) => j.min(l),
        (Some(j), None) => j,
        (None, Some(l)) => l,
        (None, None) => cores,
    }
    .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| ExperimentError::Pool(e.to_string()))?;
    let bar = if opts.progress {
        let b = indicatif::ProgressBar::new(pending.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} runs, ETA {eta} {msg}",
            )
            .expect("a valid template"),
        );
        b.set_message(format!("({} kept, {jobs} at once)", report.kept));
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let failed = Mutex::new(vec![]);
    let done = AtomicUsize::new(0);
    let stopped = std::sync::OnceLock::<String>::new();
    let not_started = Mutex::new(std::collections::HashSet::new());
    let one = |run: RunId| -> bool {
        if stopped.get().is_some() {
            // A full disk stopped the experiment: the rest waits for a rerun.
            not_started.lock().expect("not poisoned").insert(run);
            bar.inc(1);
            return false;
        }
        let ok = match run_one(exp, out, run, backend) {
            Ok(()) => true,
            Err(e) => {
                if is_disk_full(&e) {
                    let _ = stopped.set(e.to_string());
                }
                bar.suspend(|| {
                    lasthop_core::say!(
                        "run {}/{} failed: {e}",
                        exp.points[run.point].name,
                        run.replication
                    )
                });
                failed
                    .lock()
                    .expect("not poisoned")
                    .push((run, e.to_string()));
                false
            }
        };
        done.fetch_add(1, Ordering::Relaxed);
        bar.inc(1);
        ok
    };
    pool.install(|| {
        if exp.chain {
            // A point's replications one after another (each needs its predecessor's caches),
            // the points in parallel; a failure ends its point's chain.
            let mut chains: Vec<Vec<RunId>> = vec![];
            for &r in &pending {
                match chains.last_mut() {
                    Some(c) if c[0].point == r.point => c.push(r),
                    _ => chains.push(vec![r]),
                }
            }
            chains.par_iter().for_each(|c| {
                if let Some(k) = c.iter().position(|&run| !one(run)) {
                    let rest = &c[k + 1..];
                    bar.inc(rest.len() as u64);
                    if stopped.get().is_some() {
                        not_started.lock().expect("not poisoned").extend(rest);
                        return;
                    }
                    let mut f = failed.lock().expect("not poisoned");
                    let why = format!(
                        "not run: replication {} of its chain failed (a chained replication starts from its predecessor's caches)",
                        c[k].replication
                    );
                    for &run in rest {
                        f.push((run, why.clone()));
                    }
                }
            });
        } else {
            pending.par_iter().for_each(|&run| {
                one(run);
            });
        }
    });
    bar.finish_and_clear();
    let mut failed = failed.into_inner().expect("not poisoned");
    failed.sort_by_key(|f| f.0);
    let not_started = not_started.into_inner().expect("not poisoned");
    report.ran = pending
        .iter()
        .copied()
        .filter(|r| !failed.iter().any(|f| f.0 == *r) && !not_started.contains(r))
        .collect();
    report.failed = failed;
    report.not_started = not_started.len();
    report.stopped = stopped.into_inner();
    if shard.is_none() && report.stopped.is_none() {
        write_summary(out)?;
    }
    Ok(report)
}

/// Loads the metrics of every finished run of the experiment recorded in `out`, per point.
pub fn load_metrics(
    out: &Path,
    info: &ExperimentInfo,
) -> Result<Vec<Vec<RunMetrics>>, ExperimentError> {
    let mut v = vec![];
    for p in &info.points {
        let mut runs = vec![];
        for r in 0..info.replications {
            let rd = info.run_layout(out, &p.name, r);
            if rd.has_marker() {
                runs.push(RunMetrics::load(&rd.metrics_json())?);
            }
        }
        v.push(runs);
    }
    Ok(v)
}

/// Computes the summary of the finished runs recorded in `out`.
pub fn summarise(out: &Path) -> Result<(ExperimentInfo, Summary), ExperimentError> {
    let info = ExperimentInfo::load(out)?;
    let metrics = load_metrics(out, &info)?;
    let points = info
        .points
        .iter()
        .zip(&metrics)
        .map(|(p, runs)| {
            let coords: Vec<(String, String)> = p
                .coords
                .iter()
                .map(|(a, b)| (a.clone(), b.clone()))
                .collect();
            summarise_point(&p.name, &coords, runs, &info.classes)
        })
        .collect();
    Ok((
        info.clone(),
        Summary {
            experiment: info.name.clone(),
            quantiles: QUANTILE_METHOD.to_string(),
            points,
        },
    ))
}

/// Writes `summary.csv` and `summary.json` from the finished runs in `out`.
pub fn write_summary(out: &Path) -> Result<Summary, ExperimentError> {
    let (info, s) = summarise(out)?;
    let layout = ResultsDir::new(out);
    write_atomic(&layout.summary_csv(), s.to_csv(&info.dimensions).as_bytes())?;
    write_atomic(&layout.summary_json(), s.to_json().as_bytes())?;
    Ok(s)
}
