//! `lasthop merge DIR... --out DIR`: the shard directories of one experiment
//! ([`crate::shard`]) combined into one results directory, with the summaries of an unsharded
//! run.
//!
//! The shards must come from the same experiment ([`crate::shard::experiment_fingerprint`],
//! which holds wherever they ran) and from this lasthop version. Every run of the experiment
//! must be finished in one of them: a run counts when its marker names its point, replication,
//! seed, mode and the scenario hash its own directory's `shard.json` records. Runs are taken
//! from the first directory that has them; their files are hard-linked into `--out` when it is
//! on the same filesystem, else copied (each atomically, the marker last).
//!
//! `--out` is new, empty, or an earlier merge of the same experiment (merging again after a
//! failed shard was rerun refreshes it); anything else is refused, as is a shard directory.

use crate::error::{io_err, ExperimentError};
use crate::info::{Existing, ExperimentInfo, Marker};
use crate::io::write_atomic;
use crate::layout::{ResultsDir, MARKER};
use crate::shard::{shard_of, ShardInfo, SHARD_JSON, VERSION};
use crate::summaries::{write_summary, Summaries};
use lasthop_core::output::{AtomicFile, PARTIAL_PREFIX};
use std::path::{Path, PathBuf};

/// What [`merge`] did.
#[derive(Debug)]
pub struct MergeReport {
    pub experiment: String,
    /// Every run of the experiment, now in `--out`.
    pub runs: usize,
    /// How many runs came from each input directory, in the order given.
    pub from: Vec<(PathBuf, usize)>,
    /// Files hard-linked and files copied.
    pub linked: usize,
    pub copied: usize,
    /// The merged directory's summaries (`summary.csv`, `summary.json`), for its report.
    pub summaries: Summaries,
}

fn merge_err(msg: String) -> ExperimentError {
    ExperimentError::Merge(msg)
}

struct Input {
    dir: PathBuf,
    shard: ShardInfo,
    info_bytes: Vec<u8>,
    info: ExperimentInfo,
}

fn load_input(dir: &Path) -> Result<Input, ExperimentError> {
    if !dir.is_dir() {
        return Err(merge_err(format!(
            "{}: not a directory (allowed: the --out directories of `lasthop run --shard K/N`)",
            dir.display()
        )));
    }
    let shard = ShardInfo::load(dir)?;
    // Read once: the bytes copied to --out are the ones checked.
    let path = ResultsDir::new(dir).experiment_json();
    let text = crate::io::read_json_text(&path).map_err(io_err(&path))?;
    let info = ExperimentInfo::parse(&path, &text)?;
    let info_bytes = text.into_bytes();
    Ok(Input {
        dir: dir.to_path_buf(),
        shard,
        info_bytes,
        info,
    })
}

/// Whether `out` may receive the merge: missing, empty (but for a lock file), or an earlier
/// merge of the experiment `info` describes.
fn check_out(out: &Path, inputs: &[Input]) -> Result<(), ExperimentError> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    if let Some(o) = canon(out) {
        if let Some(i) = inputs.iter().find(|i| canon(&i.dir).as_ref() == Some(&o)) {
            return Err(merge_err(format!(
                "--out {} is one of the shard directories ({}): give a new directory for the merged results",
                out.display(),
                i.dir.display()
            )));
        }
    }
    if out.join(SHARD_JSON).exists() {
        return Err(merge_err(format!(
            "--out {} is a shard directory (it has {SHARD_JSON}): give a new directory for the merged results",
            out.display()
        )));
    }
    match ResultsDir::new(out).inspect(&[]) {
        Ok(Existing::Fresh) => Ok(()),
        Ok(Existing::Results(info)) if *info == inputs[0].info => Ok(()),
        Ok(Existing::Results(info)) => Err(merge_err(format!(
            "--out {} holds the results of another experiment ({:?}, or another definition of it): refusing to write into it; give a new directory",
            out.display(),
            info.name
        ))),
        Err(e) => Err(merge_err(format!("--out {e}"))),
    }
}

/// Whether run `replication` of `point` is finished in `input` with the definition its
/// `shard.json` records.
fn finished_in(input: &Input, point: &str, replication: u64) -> bool {
    let Some(hash) = input.shard.scenario_hashes.get(point) else {
        return false;
    };
    let want = Marker {
        point: point.to_string(),
        replication,
        seed: input.info.seed,
        mode: input.info.mode.clone(),
        scenario_hash: hash.clone(),
    };
    let rd = input.info.run_layout(&input.dir, point, replication);
    crate::io::read_json_text(&rd.marker())
        .ok()
        .and_then(|t| serde_json::from_str::<Marker>(&t).ok())
        == Some(want)
}

/// How deep [`copy_run`] goes below a run directory (runs write none: a run directory is flat).
const MAX_RUN_DEPTH: usize = 8;

/// What kind of file `meta` describes, for the refusal of what a run does not write.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file or a directory"
    }
}

fn refuse(path: &Path, what: &str) -> ExperimentError {
    merge_err(format!(
        "{}: is {what}: a run directory holds only regular files and directories, which is all a merge takes (it follows no link: remove it, or rerun the run's shard)",
        path.display()
    ))
}

/// Checks that `runs/`, `runs/<point>/` and `runs/<point>/<k>/` of a shard directory are
/// directories themselves, not symbolic links to elsewhere.
fn check_run_path(input: &Path, run: &Path) -> Result<(), ExperimentError> {
    let mut p = run.to_path_buf();
    while p != input {
        let meta = std::fs::symlink_metadata(&p).map_err(io_err(&p))?;
        if !meta.is_dir() {
            return Err(refuse(&p, kind_of(&meta)));
        }
        if !p.pop() {
            break;
        }
    }
    Ok(())
}

/// Links (or, across filesystems, copies) every file of `src` into the empty `dst`, the marker
/// last. Only regular files and directories are taken: a symbolic link, a FIFO, a device or a
/// socket is refused, naming it (a link to `/etc/shadow` would have been copied as a
/// world-readable file, a link to a directory copied whole, a loop of links nested 40 levels).
/// A copy keeps its source's permissions. Temporary files of killed runs are left behind.
fn copy_run(
    src: &Path,
    dst: &Path,
    linked: &mut usize,
    copied: &mut usize,
) -> Result<(), ExperimentError> {
    copy_tree(src, dst, linked, copied, 0)
}

fn copy_tree(
    src: &Path,
    dst: &Path,
    linked: &mut usize,
    copied: &mut usize,
    depth: usize,
) -> Result<(), ExperimentError> {
    let mut names: Vec<_> = std::fs::read_dir(src)
        .map_err(io_err(src))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| !n.to_string_lossy().starts_with(PARTIAL_PREFIX))
        .collect();
    names.sort();
    // The marker last: a merge killed half-way leaves a run that does not count.
    names.sort_by_key(|n| n == MARKER);
    for n in names {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let (s, d) = (src.join(&n), dst.join(&n));
        // Not followed: what is at `s` itself.
        let meta = std::fs::symlink_metadata(&s).map_err(io_err(&s))?;
        if meta.is_dir() {
            if depth >= MAX_RUN_DEPTH {
                return Err(refuse(
                    &s,
                    &format!("a directory {} levels below a run", depth + 1),
                ));
            }
            std::fs::create_dir_all(&d).map_err(io_err(&d))?;
            copy_tree(&s, &d, linked, copied, depth + 1)?;
            continue;
        }
        if !meta.is_file() {
            return Err(refuse(&s, kind_of(&meta)));
        }
        let same =
            |m: &std::fs::Metadata| m.is_file() && (m.dev(), m.ino()) == (meta.dev(), meta.ino());
        // link(2) does not follow a symbolic link; the check after it catches a file replaced
        // by one in between.
        if std::fs::hard_link(&s, &d).is_ok() {
            if !std::fs::symlink_metadata(&d).is_ok_and(|m| same(&m)) {
                let _ = std::fs::remove_file(&d);
                return Err(refuse(&s, "a file replaced while it was merged"));
            }
            *linked += 1;
            continue;
        }
        let mut from = std::fs::File::open(&s).map_err(io_err(&s))?;
        if !from.metadata().is_ok_and(|m| same(&m)) {
            return Err(refuse(&s, "a file replaced while it was merged"));
        }
        let mut to = AtomicFile::create(&d).map_err(io_err(&d))?;
        to.set_mode(meta.permissions().mode() & 0o777);
        std::io::copy(&mut from, &mut to).map_err(io_err(&d))?;
        to.commit().map_err(io_err(&d))?;
        *copied += 1;
    }
    Ok(())
}

/// Merges the shard directories `inputs` into `out` and writes its `summary.csv` and
/// `summary.json` (the caller builds the report and holds the directories' locks).
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<MergeReport, ExperimentError> {
    if inputs.is_empty() {
        return Err(merge_err(
            "no shard directories given: allowed one or more --out directories of `lasthop run --shard K/N`".into(),
        ));
    }
    let inputs = inputs
        .iter()
        .map(|d| load_input(d))
        .collect::<Result<Vec<_>, _>>()?;
    for i in &inputs {
        if i.shard.lasthop_version != VERSION {
            return Err(merge_err(format!(
                "{}: shard {}/{} was run by lasthop {}, this is lasthop {VERSION}: merge with the version that ran the shards, or rerun the shard with this one",
                i.dir.display(),
                i.shard.shard,
                i.shard.shards,
                i.shard.lasthop_version
            )));
        }
    }
    let first = &inputs[0];
    for i in &inputs[1..] {
        if i.shard.fingerprint != first.shard.fingerprint || i.info != first.info {
            return Err(merge_err(format!(
                "{} (experiment {:?}, fingerprint {}) and {} (experiment {:?}, fingerprint {}) are shards of different experiments, or of a spec changed in between: merge only the shards of one spec (rerun a stale shard with the current spec; its finished runs that still match are kept)",
                first.dir.display(),
                first.shard.experiment,
                first.shard.fingerprint,
                i.dir.display(),
                i.shard.experiment,
                i.shard.fingerprint
            )));
        }
    }
    check_out(out, &inputs)?;

    // Where each run comes from: the first directory where it is finished.
    let info = &first.info;
    let mut plan = vec![];
    let mut missing = vec![];
    for p in &info.points {
        for k in 0..info.replications {
            match inputs.iter().position(|i| finished_in(i, &p.name, k)) {
                Some(i) => plan.push((i, p.name.clone(), k)),
                None => missing.push((p.name.clone(), k)),
            }
        }
    }
    if !missing.is_empty() {
        let counts: Vec<u64> = inputs.iter().map(|i| i.shard.shards).collect();
        let n = counts[0];
        let shown: Vec<String> = missing
            .iter()
            .take(12)
            .map(|(p, k)| {
                if counts.iter().all(|c| *c == n) {
                    format!("{p}/{k} (shard {}/{n})", shard_of(p, *k, n))
                } else {
                    format!("{p}/{k}")
                }
            })
            .collect();
        return Err(merge_err(format!(
            "{} of {} runs are finished in none of the {} directories: {}{}; run or rerun their shards (`lasthop run SPEC --shard K/N --out DIR` keeps the finished runs) and merge again",
            missing.len(),
            info.points.len() as u64 * info.replications,
            inputs.len(),
            shown.join(", "),
            if missing.len() > shown.len() { ", ..." } else { "" }
        )));
    }

    let layout = ResultsDir::new(out);
    std::fs::create_dir_all(layout.runs()).map_err(io_err(out))?;
    let exp_toml = ResultsDir::new(&first.dir).experiment_toml();
    let text = lasthop_core::spec::read_bytes_limited(
        &exp_toml,
        lasthop_core::spec::MAX_SPEC_BYTES,
        "a spec file",
    )
    .map_err(io_err(&exp_toml))?;
    // experiment.json first (see `run_experiment_shard`).
    write_atomic(&layout.experiment_json(), &first.info_bytes)?;
    write_atomic(&layout.experiment_toml(), &text)?;
    let (mut linked, mut copied) = (0, 0);
    let mut from = vec![0usize; inputs.len()];
    for (i, point, k) in &plan {
        let src = info.run_layout(&inputs[*i].dir, point, *k);
        let dst = info.run_layout(out, point, *k);
        check_run_path(&inputs[*i].dir, src.path())?;
        dst.reset().map_err(io_err(dst.path()))?;
        copy_run(src.path(), dst.path(), &mut linked, &mut copied)?;
        from[*i] += 1;
    }
    let summaries = write_summary(out)?;
    Ok(MergeReport {
        experiment: info.name.clone(),
        runs: plan.len(),
        from: inputs.iter().map(|i| i.dir.clone()).zip(from).collect(),
        linked,
        copied,
        summaries,
    })
}
