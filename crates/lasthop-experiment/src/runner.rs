//! The resumable runner: every run in its own directory, finished when its marker exists.
//!
//! A run directory `runs/<point>/<replication>/` holds `scenario.toml` (the patched scenario),
//! the run's outputs, `metrics.json` and, written last and atomically, the marker `done.json`.
//! On start, a directory whose marker is missing, or whose marker names another scenario text,
//! seed or replication, is removed and run again; a finished one is kept.

use crate::backend::Backend;
use crate::error::{io_err, is_disk_full, ExperimentError};
use crate::info::{ExperimentInfo, Marker};
use crate::io::{json, read_json_text, write_atomic, write_unsynced};
use crate::layout::ResultsDir;
use crate::measure::{Extras, RunTables};
use crate::metrics::RunMetrics;
use crate::spec::{Experiment, Mode, RunId};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Options of [`run_experiment`].
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Parallel runs (default: all cores; never more than the backend's limit).
    pub jobs: Option<usize>,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// The files runs keep, over the spec's `outputs` (the command line's flags).
    pub outputs: crate::outputs::OutputsSpec,
    /// Told of the progress beside (or instead of) the bar: once before the first run and
    /// after each run, from the runner's threads (the Python package's notebook bar).
    pub on_progress: Option<OnProgress>,
}

/// Where the runner's progress goes besides the bar: called with `(done, pending)`, the runs
/// finished now (failed ones included) of the `pending` this invocation runs (the finished
/// runs it keeps are not counted), first with `(0, pending)`.
#[derive(Clone)]
pub struct OnProgress(pub std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>);

impl std::fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnProgress(..)")
    }
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
    pub failed: Vec<(RunId, ExperimentError)>,
    /// Set when a run failed for a full disk (or quota): the runs after it were not started
    /// (every one would have failed the same way) and no summary was written.
    pub stopped: Option<String>,
    /// Runs not started because of [`RunReport::stopped`].
    pub not_started: usize,
    /// The summaries written (`summary.csv`, `summary.json`) and what they were computed
    /// from, for the report; `None` for a shard or an experiment stopped by a full disk.
    pub summaries: Option<crate::summaries::Summaries>,
}

impl RunReport {
    /// The stop signal that ended a run (an emulated run ends on Ctrl-C through the emulator's
    /// own teardown), if one did.
    pub fn interrupted_by(&self) -> Option<i32> {
        self.failed.iter().find_map(|(_, e)| match e {
            ExperimentError::Backend(crate::error::RunError::Signal(s)) => Some(*s),
            _ => None,
        })
    }
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
///
/// Its files are written without a sync each; the directory is synced once before the marker,
/// so a run that has its marker has every file on disk.
pub fn run_one(
    exp: &Experiment,
    out: &Path,
    run: RunId,
    backend: &dyn Backend,
    opts: &RunOptions,
) -> Result<(), ExperimentError> {
    let rd = exp.run_layout(out, run);
    rd.reset().map_err(io_err(rd.path()))?;
    let point = &exp.points[run.point];
    write_unsynced(&rd.scenario_toml(), point.scenario_toml.as_bytes())?;
    let scenario = exp.scenario(run);
    let keep = point
        .outputs
        .with(&opts.outputs)
        .keep(run == exp.report_run_id());
    let tables = if exp.chain {
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
        let (t, end) = backend.run_chained(&scenario, rd.path(), &keep, &from)?;
        crate::chain::CacheFile::of(&end).write(&rd.tcp_metrics_json())?;
        t
    } else {
        backend.run(&scenario, rd.path(), &keep)?
    };
    let extras = Extras {
        bottleneck: exp.figures.contains(&crate::spec::Figure::Bottleneck),
        thin: exp.figures.contains(&crate::spec::Figure::Thin),
    };
    // The backend's tables in memory, else its files.
    let tables = match tables {
        Some(t) => t,
        None => RunTables::read(rd.path())?,
    };
    let m = RunMetrics::of(&tables, &scenario, &point.name, run.replication, extras);
    write_unsynced(&rd.metrics_json(), json(&m).as_bytes())?;
    // One sync of everything the run wrote, then the marker (which needs none: a run whose
    // marker is lost is run again).
    lasthop_core::output::sync_dir(rd.path()).map_err(io_err(rd.path()))?;
    write_unsynced(&rd.marker(), json(&exp.marker_for(run)).as_bytes())
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
    // Runs counted for the progress hook (those a broken chain or a full disk skip included).
    let counted = AtomicUsize::new(0);
    let tell = |n: usize| {
        if let Some(OnProgress(f)) = &opts.on_progress {
            let now = counted.fetch_add(n, Ordering::SeqCst) + n;
            f(now, pending.len());
        }
    };
    tell(0);
    let stopped = std::sync::OnceLock::<String>::new();
    let not_started = Mutex::new(std::collections::HashSet::new());
    let one = |run: RunId| -> bool {
        if stopped.get().is_some() {
            // A full disk stopped the experiment: the rest waits for a rerun.
            not_started.lock().expect("not poisoned").insert(run);
            bar.inc(1);
            tell(1);
            return false;
        }
        let ok = match run_one(exp, out, run, backend, opts) {
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
                failed.lock().expect("not poisoned").push((run, e));
                false
            }
        };
        done.fetch_add(1, Ordering::Relaxed);
        bar.inc(1);
        tell(1);
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
                    tell(rest.len());
                    if stopped.get().is_some() {
                        not_started.lock().expect("not poisoned").extend(rest);
                        return;
                    }
                    let mut f = failed.lock().expect("not poisoned");
                    for &run in rest {
                        f.push((
                            run,
                            ExperimentError::ChainBroken {
                                replication: c[k].replication,
                            },
                        ));
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
        report.summaries = Some(crate::summaries::write_summary(out)?);
    }
    Ok(report)
}
