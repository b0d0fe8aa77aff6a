//! `lasthop run EXPERIMENT --out DIR`: expand an experiment's matrix, run every replication
//! (in parallel for `mode = "sim"`, one at a time for `mode = "emu"`), resumable; then write
//! `summary.csv`, `summary.json` and `report.html`. See `docs/experiments.md`.

use anyhow::{anyhow, bail, Context, Result};
use lasthop_experiment::runner::EmuBackend;
use lasthop_experiment::{run_experiment, Backend, Experiment, Mode, RunOptions, SimBackend};
use std::path::{Path, PathBuf};

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
    /// Only print the expanded matrix.
    #[arg(long)]
    dry_run: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// The quick start and the files it names, embedded so that `lasthop run` works anywhere.
const QUICKSTART: [(&str, &str); 4] = [
    (
        "experiments/quickstart.toml",
        include_str!("../../../experiments/quickstart.toml"),
    ),
    (
        "examples/scenarios/seed000-e0-2tcp.toml",
        include_str!("../../../examples/scenarios/seed000-e0-2tcp.toml"),
    ),
    (
        "examples/links/seed000-e0.toml",
        include_str!("../../../examples/links/seed000-e0.toml"),
    ),
    (
        "examples/links/seed000-r1.toml",
        include_str!("../../../examples/links/seed000-r1.toml"),
    ),
];

/// Writes the embedded quick start under `<out>/spec/` (its specs name each other by relative
/// paths; a stable place keeps a rerun's fingerprints equal, so finished runs are kept) and
/// loads it.
fn embedded_quickstart(out: &Path) -> Result<Experiment> {
    let dir = out.join("spec");
    for (path, text) in QUICKSTART {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("a relative path with a folder"))
            .with_context(|| format!("creating {}", dir.display()))?;
        lasthop_core::output::AtomicFile::write_all_to(&p, text.as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(Experiment::load(dir.join(QUICKSTART[0].0))?)
}

pub fn run(args: RunArgs) -> Result<()> {
    let exp = match &args.spec {
        Some(spec) => Experiment::load(spec)?,
        None => {
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| Path::new("results").join("quickstart"));
            println!(
                "no experiment given: the embedded quick start (experiments/quickstart.toml), specs in {}/spec",
                out.display()
            );
            embedded_quickstart(&out)?
        }
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&exp.name));
    print!("{exp}");
    if args.dry_run {
        return Ok(());
    }
    let backend: Box<dyn Backend> = match exp.mode {
        Mode::Sim => Box::new(SimBackend),
        Mode::Emu => {
            // Fail once, before any run, when the machine cannot emulate (root, TUN, sysctls).
            for p in &exp.points {
                lasthop_emu::preflight(&p.scenario)
                    .with_context(|| format!("emu mode, point {}", p.name))?;
            }
            Box::new(EmuBackend {
                exe: std::env::current_exe().context("locating the lasthop binary")?,
            })
        }
    };
    let started = std::time::Instant::now();
    let opts = RunOptions {
        jobs: args.jobs,
        progress: !args.quiet,
    };
    let r = run_experiment(&exp, &out, backend.as_ref(), &opts).map_err(|e| anyhow!(e))?;
    println!(
        "{} runs: {} kept from before, {} run now, {} failed; {:.1} s of wall time",
        r.total,
        r.kept,
        r.ran.len(),
        r.failed.len(),
        started.elapsed().as_secs_f64()
    );
    lasthop_report::build(&out).map_err(|e| anyhow!(e))?;
    println!(
        "wrote {0}/summary.csv, {0}/summary.json, {0}/report.html",
        out.display()
    );
    if !r.failed.is_empty() {
        for (run, e) in &r.failed {
            eprintln!(
                "failed: {}/{}: {e}",
                exp.points[run.point].name, run.replication
            );
        }
        bail!(
            "{} of {} runs failed; rerun the same command to retry them",
            r.failed.len(),
            r.total
        );
    }
    Ok(())
}
