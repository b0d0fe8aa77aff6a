//! `lasthop slurm SPEC --out DIR --shards N`: an experiment as a Slurm job array, one task per
//! shard (`lasthop run SPEC --shard K/N`, resumable), and a merge job that depends on the whole
//! array (`lasthop merge`). Writes the batch scripts; with `--submit`, submits them with
//! `sbatch` and prints the job ids. Slurm schedules; lasthop only writes what to run.
//! See docs/cluster.md.
//!
//! ```text
//! DIR/slurm/shards.sbatch   the array job (task K runs shard K/N)
//! DIR/slurm/merge.sbatch    the merge job (afterok: every shard task)
//! DIR/slurm/submit.sh       submits both, as --submit does
//! DIR/slurm/logs/           shard-K.log, merge.log
//! DIR/shards/K/             shard K's results directory (resumable)
//! DIR/results/              the merged results: summary.csv, summary.json, report.html
//! ```

use anyhow::{bail, Context, Result};
use lasthop_experiment::{shard::shard_of, Experiment, Mode};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct SlurmArgs {
    /// The experiment spec (on a filesystem the compute nodes see).
    spec: PathBuf,
    /// The job directory: scripts and logs in DIR/slurm, shards in DIR/shards/K, the merged
    /// results in DIR/results (on a filesystem the compute nodes share).
    #[arg(long)]
    out: PathBuf,
    /// How many shards (array tasks): 1 up to the experiment's number of runs.
    #[arg(long)]
    shards: u64,
    /// The Slurm partition (`sbatch --partition`); default: the cluster's default partition.
    #[arg(long)]
    partition: Option<String>,
    /// Time limit of each task (`sbatch --time`: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
    /// D-HH:MM:SS); default: the partition's.
    #[arg(long)]
    time: Option<String>,
    /// Memory of each task (`sbatch --mem`: a number with an optional K, M, G or T suffix);
    /// default: the partition's.
    #[arg(long)]
    mem: Option<String>,
    /// CPUs of each simulation task, which runs that many simulations at once (emulation
    /// tasks take whole nodes and run one emulation at a time).
    #[arg(long, default_value_t = 1)]
    cpus_per_task: u32,
    /// The lasthop binary the tasks run (default: this one; it must be at the same path on
    /// the compute nodes).
    #[arg(long)]
    lasthop: Option<PathBuf>,
    /// Submit with sbatch (the array, then the merge depending on it) and print the job ids.
    #[arg(long)]
    submit: bool,
}

/// The first line after the shebang of every file `lasthop slurm` writes: a file without it is
/// not ours and is never overwritten.
const HEADER: &str = "# written by `lasthop slurm`; rewritten when it runs again";

const TIME_ALLOWED: &str =
    "allowed MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (sbatch --time), e.g. 90, 1:30:00, 2-00";

/// Checks an `sbatch --time` value.
pub fn check_time(t: &str) -> Result<(), String> {
    let bad = || format!("--time {t:?}: {TIME_ALLOWED}");
    let num = |s: &str| !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit());
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, t),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let ok = match days {
        Some(d) => num(d) && (1..=3).contains(&parts.len()) && parts.iter().all(|p| num(p)),
        None => (1..=3).contains(&parts.len()) && parts.iter().all(|p| num(p)),
    };
    if ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Checks an `sbatch --mem` value.
pub fn check_mem(m: &str) -> Result<(), String> {
    let digits = m.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
    let suffix = m.len() - digits.len();
    if !digits.is_empty() && suffix <= 1 && digits.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(format!(
            "--mem {m:?}: allowed a whole number with an optional K, M, G or T suffix (sbatch --mem; megabytes without one), e.g. 4G"
        ))
    }
}

/// Checks a partition name (or a comma-separated list of them).
pub fn check_partition(p: &str) -> Result<(), String> {
    let ok = !p.is_empty()
        && p.split(',').all(|n| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--partition {p:?}: allowed a partition name of a-z, A-Z, 0-9, '_', '-', '.' (or several, comma-separated)"
        ))
    }
}

/// A path written into `#SBATCH` lines, which sbatch reads without a shell.
fn check_sbatch_path(what: &str, p: &Path) -> Result<String> {
    let s = p
        .to_str()
        .with_context(|| format!("{what} {}: not UTF-8", p.display()))?;
    if let Some(c) = s
        .chars()
        .find(|c| c.is_whitespace() || matches!(c, '%' | '"' | '\'' | '\\' | '#'))
    {
        bail!("{what} {s:?}: has {c:?}, which #SBATCH lines cannot carry: allowed a path without whitespace, quotes, '\\\\', '%' or '#'");
    }
    Ok(s.to_string())
}

/// `s` as one shell word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Writes one of our files, refusing to replace a file that is not ours.
fn write_ours(path: &Path, text: &str) -> Result<()> {
    if let Ok(old) = std::fs::read_to_string(path) {
        if old.lines().nth(1) != Some(HEADER) {
            bail!(
                "{} exists and was not written by `lasthop slurm`: refusing to replace it; give another --out",
                path.display()
            );
        }
    } else if path.exists() {
        bail!(
            "{} exists and is not a file `lasthop slurm` wrote: refusing to replace it; give another --out",
            path.display()
        );
    }
    lasthop_core::output::AtomicFile::write_all_to(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The scripts of one job directory.
pub struct Scripts {
    pub shards: String,
    pub merge: String,
    pub submit: String,
}

/// What the scripts need.
pub struct Job<'a> {
    pub name: &'a str,
    pub mode: Mode,
    pub shards: u64,
    pub lasthop: &'a str,
    pub spec: &'a str,
    pub out: &'a str,
    pub partition: Option<&'a str>,
    pub time: Option<&'a str>,
    pub mem: Option<&'a str>,
    pub cpus_per_task: u32,
}

/// The job name: the experiment's name in the characters Slurm shows plainly.
fn job_name(name: &str) -> String {
    let n: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("lasthop-{n}")
}

pub fn scripts(job: &Job) -> Scripts {
    let mut common = String::new();
    if let Some(p) = job.partition {
        let _ = writeln!(common, "#SBATCH --partition={p}");
    }
    if let Some(t) = job.time {
        let _ = writeln!(common, "#SBATCH --time={t}");
    }
    if let Some(m) = job.mem {
        let _ = writeln!(common, "#SBATCH --mem={m}");
    }
    let _ = writeln!(common, "#SBATCH --chdir={}", job.out);
    let _ = writeln!(common, "#SBATCH --open-mode=append");
    let name = job_name(job.name);
    let vars = format!(
        "LASTHOP={}\nSPEC={}\nOUT={}\n",
        sh_quote(job.lasthop),
        sh_quote(job.spec),
        sh_quote(job.out)
    );

    let mut shards = format!("#!/bin/bash\n{HEADER}\n");
    let _ = writeln!(
        shards,
        "# Experiment {:?} in {} shards: array task K runs shard K/{} into $OUT/shards/K.\n# Resumable: a task run again keeps that shard's finished runs. Rerun task K alone:\n#   sbatch --array=K {}/slurm/shards.sbatch",
        job.name, job.shards, job.shards, job.out
    );
    let _ = writeln!(shards, "#SBATCH --job-name={name}");
    let _ = writeln!(shards, "#SBATCH --array=1-{}", job.shards);
    let _ = writeln!(
        shards,
        "#SBATCH --output={}/slurm/logs/shard-%a.log",
        job.out
    );
    let _ = writeln!(shards, "#SBATCH --nodes=1");
    let _ = writeln!(shards, "#SBATCH --ntasks=1");
    let emu = job.mode == Mode::Emu;
    if emu {
        // The real-time loop needs the node's CPUs to itself, and namespaces need root.
        let _ = writeln!(
            shards,
            "# Emulation: a whole node per task (real-time timing), run as root (namespaces, TUN)."
        );
        let _ = writeln!(shards, "#SBATCH --exclusive");
    } else {
        let _ = writeln!(
            shards,
            "# Simulation: tasks pack onto nodes, {} CPU(s) each.",
            job.cpus_per_task
        );
        let _ = writeln!(shards, "#SBATCH --cpus-per-task={}", job.cpus_per_task);
    }
    shards += &common;
    shards += "set -euo pipefail\n";
    shards += &vars;
    let _ = writeln!(
        shards,
        "K=${{SLURM_ARRAY_TASK_ID:?run this script with sbatch, or set SLURM_ARRAY_TASK_ID to the shard (1..{})}}",
        job.shards
    );
    if emu {
        shards += "SUDO=()\n";
        shards += "if [ \"$(id -u)\" != 0 ]; then\n";
        shards += "  # Emulation needs root: the site lets this job run lasthop through sudo, or submits as root.\n";
        shards += "  SUDO=(sudo -n)\n";
        shards += "fi\n";
        let _ = writeln!(
            shards,
            "exec \"${{SUDO[@]}}\" \"$LASTHOP\" run \"$SPEC\" --shard \"$K/{}\" --out \"$OUT/shards/$K\" --quiet",
            job.shards
        );
    } else {
        let _ = writeln!(
            shards,
            "exec \"$LASTHOP\" run \"$SPEC\" --shard \"$K/{}\" --out \"$OUT/shards/$K\" --quiet --jobs \"${{SLURM_CPUS_PER_TASK:-{}}}\"",
            job.shards, job.cpus_per_task
        );
    }

    let mut merge = format!("#!/bin/bash\n{HEADER}\n");
    let _ = writeln!(
        merge,
        "# Merges the {} shards of {:?} into $OUT/results (summary.csv, summary.json, report.html).\n# Submitted with --dependency=afterok:<the array's job id>: it runs once every shard succeeded.",
        job.shards, job.name
    );
    let _ = writeln!(merge, "#SBATCH --job-name={name}-merge");
    let _ = writeln!(merge, "#SBATCH --output={}/slurm/logs/merge.log", job.out);
    let _ = writeln!(merge, "#SBATCH --nodes=1");
    let _ = writeln!(merge, "#SBATCH --ntasks=1");
    let _ = writeln!(merge, "#SBATCH --cpus-per-task=1");
    merge += &common;
    merge += "set -euo pipefail\n";
    merge += &vars;
    merge += "dirs=()\n";
    let _ = writeln!(
        merge,
        "for k in $(seq 1 {}); do dirs+=(\"$OUT/shards/$k\"); done",
        job.shards
    );
    merge += "exec \"$LASTHOP\" merge \"${dirs[@]}\" --out \"$OUT/results\"\n";

    let mut submit = format!("#!/bin/sh\n{HEADER}\n");
    submit += "# Submits the shards' array job, then the merge job after it; prints the job ids.\n";
    submit += "set -eu\n";
    let _ = writeln!(submit, "cd {}", sh_quote(job.out));
    submit += "a=$(sbatch --parsable slurm/shards.sbatch)\na=${a%%;*}\n";
    submit += "m=$(sbatch --parsable --dependency=afterok:\"$a\" slurm/merge.sbatch)\nm=${m%%;*}\n";
    submit += "echo \"job ids: shards $a, merge $m\"\n";
    Scripts {
        shards,
        merge,
        submit,
    }
}

/// Submits one script with `sbatch --parsable`, returning the job id.
fn sbatch(args: &[&str], script: &Path) -> Result<String> {
    let o = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "running sbatch: {e}: --submit needs Slurm's sbatch on PATH (or run the written slurm/submit.sh where it is)"
            )
        })?;
    if !o.status.success() {
        bail!(
            "sbatch {}: {}",
            script.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        bail!(
            "sbatch {}: expected a job id, got {:?}",
            script.display(),
            out.trim()
        );
    }
    Ok(id)
}

pub fn run(args: SlurmArgs) -> Result<()> {
    for check in [
        args.partition.as_deref().map(check_partition),
        args.time.as_deref().map(check_time),
        args.mem.as_deref().map(check_mem),
    ] {
        if let Some(Err(e)) = check {
            bail!("{e}");
        }
    }
    if args.cpus_per_task == 0 {
        bail!("--cpus-per-task 0: allowed 1 or more");
    }
    let exp = Experiment::load(&args.spec)?;
    for w in &exp.warnings {
        eprintln!("{w}");
    }
    let total = exp.points.len() as u64 * exp.replications;
    if args.shards == 0 || args.shards > total {
        bail!(
            "--shards {}: allowed 1..{total} (the experiment {:?} has {total} runs: {} point(s) x {} replication(s))",
            args.shards,
            exp.name,
            exp.points.len(),
            exp.replications
        );
    }
    let spec = std::fs::canonicalize(&args.spec)
        .with_context(|| format!("locating {}", args.spec.display()))?;
    let lasthop = match &args.lasthop {
        Some(p) => std::path::absolute(p).with_context(|| format!("locating {}", p.display()))?,
        None => std::env::current_exe().context("locating the lasthop binary")?,
    };
    if !lasthop.is_file() {
        bail!(
            "--lasthop {}: not a file (allowed: the path of the lasthop binary on the compute nodes)",
            lasthop.display()
        );
    }
    let out = std::path::absolute(&args.out)
        .with_context(|| format!("locating {}", args.out.display()))?;
    let out_s = check_sbatch_path("--out", &out)?;
    let job = Job {
        name: &exp.name,
        mode: exp.mode,
        shards: args.shards,
        lasthop: lasthop.to_str().context("the lasthop path is not UTF-8")?,
        spec: spec.to_str().context("the spec path is not UTF-8")?,
        out: &out_s,
        partition: args.partition.as_deref(),
        time: args.time.as_deref(),
        mem: args.mem.as_deref(),
        cpus_per_task: args.cpus_per_task,
    };
    let s = scripts(&job);
    let dir = out.join("slurm");
    std::fs::create_dir_all(dir.join("logs"))
        .with_context(|| format!("creating {}", dir.display()))?;
    std::fs::create_dir_all(out.join("shards"))
        .with_context(|| format!("creating {}", out.display()))?;
    let (shards_sh, merge_sh, submit_sh) = (
        dir.join("shards.sbatch"),
        dir.join("merge.sbatch"),
        dir.join("submit.sh"),
    );
    write_ours(&shards_sh, &s.shards)?;
    write_ours(&merge_sh, &s.merge)?;
    write_ours(&submit_sh, &s.submit)?;

    // The cost model: runs per shard, and for emulation the real time they take.
    let mut per = vec![0u64; args.shards as usize];
    for p in &exp.points {
        for k in 0..exp.replications {
            per[(shard_of(&p.name, k, args.shards) - 1) as usize] += 1;
        }
    }
    let (lo, hi) = (
        per.iter().min().copied().unwrap_or(0),
        per.iter().max().copied().unwrap_or(0),
    );
    println!(
        "experiment {:?} ({} mode): {total} runs in {} shards, {lo} to {hi} runs each",
        exp.name,
        exp.mode.name(),
        args.shards
    );
    if exp.mode == Mode::Emu {
        let longest = exp
            .points
            .iter()
            .map(|p| p.scenario.duration.as_secs_f64())
            .fold(0.0, f64::max);
        println!(
            "emulated runs take real time, up to their scenario's duration ({longest:.0} s here) each: a shard of {hi} runs needs up to {:.1} h (ask --time for it); each task takes a whole node and root",
            hi as f64 * longest / 3600.0
        );
    }
    println!(
        "wrote {}, {}, {}",
        shards_sh.display(),
        merge_sh.display(),
        submit_sh.display()
    );
    println!(
        "shards go to {0}/shards/K, the merged results to {0}/results",
        out.display()
    );
    if !args.submit {
        println!("submit with: sh {}", submit_sh.display());
        return Ok(());
    }
    let array = sbatch(&[], &shards_sh)?;
    let merge = sbatch(&[&format!("--dependency=afterok:{array}")], &merge_sh)?;
    println!("job ids: shards {array}, merge {merge}");
    println!(
        "the merge runs when every shard task succeeded; a failed task K: sbatch --array=K {}, then submit the merge again",
        shards_sh.display()
    );
    Ok(())
}
