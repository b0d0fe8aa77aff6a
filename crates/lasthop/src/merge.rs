//! `lasthop merge DIR... --out DIR`: combine the shard directories of one experiment
//! (`lasthop run SPEC --shard K/N`) into one results directory with its `summary.csv`,
//! `summary.json` and `report.html`, as an unsharded run writes them. See docs/cluster.md.

use anyhow::{anyhow, bail, Result};
use lasthop_core::output::RunDirLock;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shard directories (the --out of each `lasthop run --shard K/N`), in any order.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// The merged results directory: new, empty, or an earlier merge of the same experiment.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: MergeArgs) -> Result<()> {
    // A stop signal: the files not yet complete and the locks go; merging again finishes.
    crate::signals::exit_on_stop_signal(|s| {
        eprintln!("\ninterrupted by signal {s}: the merge is not finished (its temporary files are removed); run the same command again to finish it")
    })?;
    // Not while a shard still runs into one of them (the error names its process).
    let mut locks = vec![];
    let mut seen = vec![];
    for d in &args.dirs {
        if let Ok(c) = std::fs::canonicalize(d) {
            if seen.contains(&c) {
                bail!(
                    "{} is given twice: give each shard directory once",
                    d.display()
                );
            }
            seen.push(c);
        }
        if !d.is_dir() {
            bail!(
                "{}: not a directory (allowed: the --out directories of `lasthop run --shard K/N`)",
                d.display()
            );
        }
        locks.push(RunDirLock::acquire(d)?);
    }
    if args.out.exists() && !args.out.is_dir() {
        bail!(
            "--out {}: exists and is not a directory (allowed: a new or empty directory, or an earlier merge of the same experiment)",
            args.out.display()
        );
    }
    let existed = args.out.exists();
    let lock = match RunDirLock::acquire(&args.out) {
        Ok(l) => l,
        // One of the inputs given again as --out: the merge says so.
        Err(e) if locks.iter().any(|l| same_dir(l.path(), &args.out)) => {
            let _ = e;
            bail!(
                "--out {} is one of the shard directories: give a new directory for the merged results",
                args.out.display()
            )
        }
        Err(e) => return Err(e.into()),
    };
    let r = match lasthop_experiment::merge(&args.dirs, &args.out) {
        Ok(r) => r,
        Err(e) => {
            drop(lock);
            if !existed {
                // Created for the lock only: nothing of ours is left in it.
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(anyhow!(e));
        }
    };
    let report = lasthop_report::write(&args.out, &r.summaries, None).map_err(|e| anyhow!(e))?;
    let from: Vec<String> = r
        .from
        .iter()
        .map(|(d, n)| format!("{n} from {}", d.display()))
        .collect();
    println!(
        "merged {} runs of {:?} into {} ({}; {} files linked, {} copied)",
        r.runs,
        r.experiment,
        args.out.display(),
        from.join(", "),
        r.linked,
        r.copied
    );
    println!(
        "wrote {0}/summary.csv, {0}/summary.json, {1}",
        args.out.display(),
        report.display()
    );
    Ok(())
}

/// Whether the lock file `lock` lies in `dir`.
fn same_dir(lock: &std::path::Path, dir: &std::path::Path) -> bool {
    match (
        lock.parent().and_then(|p| std::fs::canonicalize(p).ok()),
        std::fs::canonicalize(dir).ok(),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}
