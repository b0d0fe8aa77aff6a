//! `lasthop run EXPERIMENT --out DIR`: expand an experiment's matrix, run every replication
//! (in parallel for `mode = "sim"`, one at a time for `mode = "emu"`), resumable; then write
//! `summary.csv`, `summary.json` and `report.html`. See `docs/experiments.md`.

use anyhow::{anyhow, bail, Context, Result};
use lasthop_experiment::backend::EmuBackend;
use lasthop_experiment::error::RunError;
use lasthop_experiment::{
    run_experiment_shard, Backend, Experiment, Mode, RunOptions, Shard, SimBackend,
};
use lasthop_scenario::Scenario;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

#[derive(clap::Args)]
pub struct RunArgs {
    /// An experiment spec (TOML): a base scenario, a matrix of overrides, replications, seed,
    /// mode. Without it, the embedded quick start (`experiments/quickstart.toml`).
    spec: Option<PathBuf>,
    /// The results directory (default: results/<experiment name>). Rerunning into the same
    /// directory keeps the finished runs and redoes the others.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs at once (default: all cores for sim, 1 for emu).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Run only shard K of N (K = 1..N): a fixed subset of the runs, the same whatever the other
    /// shards do; writes shard.json and no summary or report (`lasthop merge` combines the
    /// shards' directories). See docs/cluster.md.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Only print the expanded matrix (with --shard, the shard's runs).
    #[arg(long)]
    dry_run: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    outputs: crate::outputs::OutputArgs,
}

/// The embedded quick start, written under `<out>/spec/` and loaded.
fn embedded_quickstart(out: &Path) -> Result<Experiment> {
    lasthop_experiment::quickstart::load(out)
}

pub fn run(args: RunArgs) -> Result<()> {
    let default_out = |name: &str| Path::new("results").join(name);
    // The quick start's results directory is known before its spec (which is written there).
    let mut lock = None;
    let exp = match &args.spec {
        Some(spec) => Experiment::load(spec)?,
        None => {
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| default_out("quickstart"));
            println!(
                "no experiment given: the embedded quick start (experiments/quickstart.toml), specs in {}/spec",
                out.display()
            );
            if !args.dry_run {
                // The specs go to <out>/spec before experiment.json exists.
                lock = Some(lock_results(&out, &["spec"])?);
            }
            embedded_quickstart(&out)?
        }
    };
    let out = args.out.clone().unwrap_or_else(|| default_out(&exp.name));
    for w in &exp.warnings {
        eprintln!("{w}");
    }
    print!("{exp}");
    let report = exp.report_run_id();
    println!(
        "keeps {} (report run {}/{}; every run keeps its tables, link.csv and metrics.json)",
        exp.points[report.point].outputs.with(&args.outputs.spec()),
        exp.points[report.point].name,
        report.replication
    );
    // What the experiment's mode refuses fails here, before any run; what does nothing in it
    // is said (docs/modes.md).
    crate::check::points_in_their_mode(&exp)?;
    if let Some(shard) = args.shard {
        let runs = shard.runs(&exp);
        // The list only for --dry-run: a shard of a big sweep holds thousands.
        let list = if args.dry_run {
            let names: Vec<String> = runs
                .iter()
                .map(|r| format!("{}/{}", exp.points[r.point].name, r.replication))
                .collect();
            format!(": {}", names.join(" "))
        } else {
            String::new()
        };
        println!(
            "shard {shard}: {} of {} runs{list}",
            runs.len(),
            exp.points.len() as u64 * exp.replications,
        );
    }
    if args.dry_run {
        return Ok(());
    }
    let _lock = match lock {
        Some(l) => l,
        None => lock_results(&out, &[])?,
    };
    match exp.mode {
        Mode::Sim => interrupt_says_what_was_kept(&exp, &out, args.spec.as_deref(), args.shard)?,
        // The emulator takes the stop signals through its signalfd; blocked in every thread
        // (the runner's inherit the mask), none of them ends the process around it.
        Mode::Emu => stop_signals()
            .thread_block()
            .context("blocking stop signals")?,
    }
    let backend: Box<dyn Backend> = match exp.mode {
        Mode::Sim => Box::new(SimBackend),
        Mode::Emu => {
            // Fail once, before any run, when the machine cannot emulate (root, TUN, sysctls).
            for p in &exp.points {
                lasthop_emu::preflight(&p.scenario)
                    .with_context(|| format!("emu mode, point {}", p.name))?;
            }
            Box::new(StopOnSignal {
                inner: EmuBackend {
                    exe: std::env::current_exe().context("locating the lasthop binary")?,
                },
                signal: AtomicI32::new(0),
            })
        }
    };
    let started = std::time::Instant::now();
    let opts = RunOptions {
        jobs: args.jobs,
        progress: !args.quiet,
        outputs: args.outputs.spec(),
        on_progress: None,
    };
    let r = run_experiment_shard(&exp, &out, backend.as_ref(), &opts, args.shard)
        .map_err(|e| anyhow!(e))?;
    if let Some(sig) = r.interrupted_by() {
        // Emulated runs stop on a signal through the emulator's own teardown.
        eprintln!(
            "{}",
            kept_message(&exp, &out, args.spec.as_deref(), args.shard)
        );
        lasthop_core::output::exit_cleanly(128 + sig);
    }
    if exp.mode == Mode::Emu {
        // Ctrl-C ends the process again while the report is built.
        let _ = stop_signals().thread_unblock();
    }
    println!(
        "{} runs: {} kept from before, {} run now, {} failed{}; {:.1} s of wall time",
        r.total,
        r.kept,
        r.ran.len(),
        r.failed.len(),
        if r.not_started > 0 {
            format!(", {} not started", r.not_started)
        } else {
            String::new()
        },
        started.elapsed().as_secs_f64()
    );
    let say_failed = || {
        for (run, e) in &r.failed {
            eprintln!(
                "failed: {}/{}: {e}",
                exp.points[run.point].name, run.replication
            );
        }
    };
    if let Some(why) = &r.stopped {
        say_failed();
        bail!(
            "the disk is full: {why}\nstopped at the first run that could not write: {} runs not started, {} failed; the {} finished runs are kept in {}/runs (each with its done.json); free some space and rerun the same command to finish",
            r.not_started,
            r.failed.len(),
            r.kept + r.ran.len(),
            out.display()
        );
    }
    match args.shard {
        None => {
            let summaries = r.summaries.as_ref().expect("written when not a shard");
            lasthop_report::write(&out, summaries, None).map_err(|e| anyhow!(e))?;
            println!(
                "wrote {0}/summary.csv, {0}/summary.json, {0}/report.html",
                out.display()
            );
        }
        Some(shard) => println!(
            "shard {shard} in {}: merge it with the other shards' directories: lasthop merge DIR... --out DIR",
            out.display()
        ),
    }
    if !r.failed.is_empty() {
        say_failed();
        bail!(
            "{} of {} runs failed; rerun the same command to retry them",
            r.failed.len(),
            r.total
        );
    }
    Ok(())
}

/// Locks the results directory for the run (a second `lasthop run` into it fails, naming this
/// one's process) and removes the temporary files of runs killed before they finished, where
/// runs write them. A directory that is neither new, empty (but for lasthop's own files and
/// the entries named in `also`) nor a results directory is refused before anything is
/// created in it.
fn lock_results(out: &Path, also: &[&str]) -> Result<lasthop_core::output::RunDirLock> {
    let (lock, removed) = lasthop_experiment::ResultsDir::new(out).lock(also)?;
    if !removed.is_empty() {
        eprintln!(
            "removed {} temporary files that killed runs left unfinished in {}",
            removed.len(),
            out.display()
        );
    }
    Ok(lock)
}

/// What an interrupted experiment (or shard) kept and how to resume it.
fn kept_message(exp: &Experiment, out: &Path, spec: Option<&Path>, shard: Option<Shard>) -> String {
    let layout = lasthop_experiment::ResultsDir::new(out);
    let runs = match shard {
        Some(s) => s.runs(exp),
        None => exp.runs(),
    };
    let total = runs.len();
    let done = runs
        .iter()
        .filter(|r| {
            layout
                .run(&exp.points[r.point].name, r.replication)
                .has_marker()
        })
        .count();
    let mut cmd = String::from("lasthop run");
    if let Some(s) = spec {
        cmd += &format!(" {}", s.display());
    }
    if let Some(s) = shard {
        cmd += &format!(" --shard {s}");
    }
    cmd += &format!(" --out {}", out.display());
    let (of, after) = match shard {
        None => (
            String::new(),
            "the report is built when every run is finished",
        ),
        Some(s) => (
            format!(" (shard {s})"),
            "merge the shards when every one is finished",
        ),
    };
    format!(
        "interrupted: {done} of {total} runs{of} are finished and kept in {}/runs (each with its done.json); the runs under way are discarded and redone; {after}.\nto resume, run the same command: {cmd}",
        out.display()
    )
}

use crate::signals::stop_signals;

/// Simulation runs on rayon's threads: Ctrl-C, SIGTERM or SIGHUP go to one thread that says
/// what was kept and how to resume, then ends the process after removing the unfinished runs'
/// temporary files (unfinished runs have no marker and are redone).
fn interrupt_says_what_was_kept(
    exp: &Experiment,
    out: &Path,
    spec: Option<&Path>,
    shard: Option<Shard>,
) -> Result<()> {
    // Blocked here, before the runner's threads exist: they inherit the mask.
    let (exp, out, spec) = (exp.clone(), out.to_path_buf(), spec.map(Path::to_path_buf));
    crate::signals::exit_on_stop_signal(move |_| {
        eprintln!("\n{}", kept_message(&exp, &out, spec.as_deref(), shard));
    })
}

/// The emulator backend, stopping the experiment at the first run a signal ended: Ctrl-C ends
/// the emulated run under way through the emulator's own teardown, and every run after it is
/// reported as interrupted without starting, so the command stops and says what it kept.
struct StopOnSignal {
    inner: EmuBackend,
    /// The signal that stopped a run (0: none yet).
    signal: AtomicI32,
}

impl Backend for StopOnSignal {
    fn run(
        &self,
        scenario: &Scenario,
        dir: &Path,
        keep: &lasthop_experiment::outputs::Keep,
    ) -> Result<Option<lasthop_experiment::measure::RunTables>, RunError> {
        let s = self.signal.load(Ordering::SeqCst);
        if s != 0 {
            return Err(RunError::Signal(s));
        }
        let r = self.inner.run(scenario, dir, keep);
        // The emulator unblocks the stop signals when it ends; until the next run takes them
        // (a signal that comes meanwhile stops that run's setup), they stay pending.
        let _ = stop_signals().thread_block();
        let r = match r {
            Err(RunError::Emu(e)) => match e.downcast_ref::<lasthop_emu::Interrupted>() {
                Some(lasthop_emu::Interrupted(s)) => Err(RunError::Signal(*s)),
                None => Err(RunError::Emu(e)),
            },
            r => r,
        };
        if let Err(RunError::Signal(s)) = &r {
            self.signal.store(*s, Ordering::SeqCst);
        }
        r
    }
    fn max_jobs(&self) -> Option<usize> {
        self.inner.max_jobs()
    }
}
