//! `lasthop report DIR`: rebuild `summary.csv`, `summary.json` and `report.html` of an
//! experiment's results directory from the files on disk.

use anyhow::{anyhow, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// The results directory of `lasthop run`.
    dir: PathBuf,
    /// The run whose time plots are shown, POINT/REPLICATION (default: the spec's `report_run`,
    /// else the first point's replication 0).
    #[arg(long)]
    run: Option<String>,
    /// Another experiment's results directory whose medians are shown beside ours, point by
    /// point (e.g. the emulated runs beside their simulated twin: docs/sim-vs-emu.md).
    #[arg(long, value_name = "OTHER")]
    beside: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> Result<()> {
    crate::signals::exit_on_stop_signal(|s| {
        eprintln!("\ninterrupted by signal {s}: the report is not rebuilt (its temporary files are removed)")
    })?;
    // Not while a `lasthop run` writes into the directory (its error names that run).
    let _lock = if args.dir.is_dir() {
        Some(lasthop_core::output::RunDirLock::acquire(&args.dir)?)
    } else {
        None
    };
    let summaries = lasthop_experiment::write_summary(&args.dir).map_err(|e| anyhow!(e))?;
    // The plotted run's captures, events.csv and tcp_trace.csv, made again by running it again
    // when it did not keep them (a sweep keeps them for its report run only).
    let chosen = lasthop_report::choose_run(&args.dir, &summaries.info, args.run.as_deref())
        .map_err(|e| anyhow!(e))?;
    if let Some((p, k)) = &chosen {
        let info = &summaries.info;
        if lasthop_experiment::restore::lacks_files(&args.dir, info, p, *k) {
            let ran = lasthop_experiment::restore::restore_run_files(&args.dir, info, p, *k)
                .map_err(|e| anyhow!(e))?;
            if ran {
                println!("ran {p}/{k} again for its captures, events.csv and tcp_trace.csv (not kept: see outputs in docs/experiments.md)");
            } else {
                eprintln!("note: {p}/{k} kept no events.csv and is emulated (it cannot be run again): its time plots are left out");
            }
        }
    }
    let other = match &args.beside {
        Some(o) => {
            let s = lasthop_experiment::summarise(o)
                .map_err(|e| anyhow!("--beside {}: {e}", o.display()))?;
            let label = format!("{} ({}, mode {})", o.display(), s.info.name, s.info.mode);
            Some((label, s.summary))
        }
        None => None,
    };
    let beside = other.as_ref().map(|(l, s)| (l.as_str(), s));
    let path = lasthop_report::write_beside(&args.dir, &summaries, args.run.as_deref(), beside)
        .map_err(|e| anyhow!(e))?;
    println!("wrote {}", path.display());
    Ok(())
}
