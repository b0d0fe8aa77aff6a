//! The results directory's layout, named once (see `docs/experiments.md`, *The results
//! directory*):
//!
//! ```text
//! DIR/experiment.toml, experiment.json, summary.csv, summary.json, report.html
//! DIR/runs/<point>/<k>/   scenario.toml, the run's outputs, metrics.json, done.json (last)
//! ```

use std::path::{Path, PathBuf};

use lasthop_core::layout as names;
/// The marker's file name: written last, it makes a run count as finished.
pub use lasthop_core::layout::MARKER;

/// An experiment's results directory (`lasthop run --out DIR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultsDir {
    root: PathBuf,
}

impl ResultsDir {
    pub fn new(root: impl Into<PathBuf>) -> ResultsDir {
        ResultsDir { root: root.into() }
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `runs/`, the parent of every run directory.
    pub fn runs(&self) -> PathBuf {
        self.root.join(names::RUNS_DIR)
    }
    /// `runs/<point>/<replication>/`.
    /// `shard.json` (a shard's directory).
    pub fn shard_json(&self) -> PathBuf {
        self.root.join(names::SHARD_JSON)
    }
    pub fn run(&self, point: &str, replication: u64) -> RunDir {
        RunDir::new(self.runs().join(point).join(replication.to_string()))
    }
    /// The spec as given.
    pub fn experiment_toml(&self) -> PathBuf {
        self.root.join(names::EXPERIMENT_TOML)
    }
    /// What the summaries and the report need to know of the experiment.
    pub fn experiment_json(&self) -> PathBuf {
        self.root.join(names::EXPERIMENT_JSON)
    }
    pub fn summary_csv(&self) -> PathBuf {
        self.root.join(names::SUMMARY_CSV)
    }
    pub fn summary_json(&self) -> PathBuf {
        self.root.join(names::SUMMARY_JSON)
    }
    pub fn report_html(&self) -> PathBuf {
        self.root.join(names::REPORT_HTML)
    }

    /// Locks the directory for a run of its experiment (a second `lasthop run`, or a Python
    /// `lasthop.run`, into it fails, naming this one's process) and removes the temporary files
    /// of runs killed before they finished, where runs write them: the lock and the removed
    /// files. A directory that is neither new, empty (but for lasthop's own files and the
    /// entries named in `also`) nor a results directory is refused before anything is created
    /// in it.
    pub fn lock(
        &self,
        also: &[&str],
    ) -> anyhow::Result<(lasthop_core::output::RunDirLock, Vec<PathBuf>)> {
        use anyhow::{anyhow, Context};
        self.inspect(also).map_err(|e| anyhow!("--out {e}"))?;
        let lock = lasthop_core::output::RunDirLock::acquire(&self.root)?;
        // Again under the lock: another run may have written meanwhile.
        self.inspect(also).map_err(|e| anyhow!("--out {e}"))?;
        let removed = self
            .remove_stale_partials()
            .with_context(|| format!("removing stale files in {}", self.root.display()))?;
        Ok((lock, removed))
    }

    /// Removes the temporary files that killed runs left where runs write: the directory
    /// itself, each run directory `runs/<point>/<k>/`, and `spec/` (the quick start's specs),
    /// never through a symbolic link and nowhere else. Call it only while holding the
    /// directory's lock and after [`ResultsDir::inspect`]: a live run's temporary files look
    /// the same.
    pub fn remove_stale_partials(&self) -> std::io::Result<Vec<PathBuf>> {
        use lasthop_core::output::remove_stale_partials as flat;
        let mut removed = flat(&self.root, 0)?;
        removed.extend(flat(&self.root.join("spec"), 3)?);
        for point in real_subdirs(&self.runs())? {
            for run in real_subdirs(&point)? {
                removed.extend(flat(&run, 0)?);
            }
        }
        removed.sort();
        Ok(removed)
    }
}

/// The subdirectories of `dir` that are directories themselves (not symbolic links); none when
/// `dir` is missing.
fn real_subdirs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e),
    };
    let mut v = vec![];
    for e in rd {
        let e = e?;
        if e.file_type()?.is_dir() {
            v.push(e.path());
        }
    }
    Ok(v)
}

/// One run's directory, `runs/<point>/<replication>/`: the run's files
/// ([`lasthop_core::layout::RunFiles`], through `Deref`) and what the runner adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    files: names::RunFiles,
}

impl std::ops::Deref for RunDir {
    type Target = names::RunFiles;
    fn deref(&self) -> &names::RunFiles {
        &self.files
    }
}

impl RunDir {
    pub fn new(path: impl Into<PathBuf>) -> RunDir {
        RunDir {
            files: names::RunFiles::new(path),
        }
    }
    pub fn path(&self) -> &Path {
        self.files.dir()
    }
    /// Whether the marker exists (whether it names the current definition is
    /// `Experiment::is_done`'s question).
    pub fn has_marker(&self) -> bool {
        self.marker().exists()
    }
    /// Removes whatever an unfinished attempt left (partial files included) and creates the
    /// directory afresh.
    pub fn reset(&self) -> std::io::Result<()> {
        if self.path().exists() {
            std::fs::remove_dir_all(self.path())?;
        }
        std::fs::create_dir_all(self.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_partials_only_where_runs_write() {
        let d = tempfile::tempdir().unwrap();
        let out = ResultsDir::new(d.path());
        let run = out.run("e0", 0);
        run.reset().unwrap();
        let p = |s: &str| d.path().join(s);
        std::fs::create_dir_all(p("spec/examples/links")).unwrap();
        std::fs::create_dir_all(p("other/deep")).unwrap();
        std::fs::create_dir_all(p("runs/e0/0/sub")).unwrap();
        let ours = [
            ".lasthop-a.partial",
            "runs/e0/0/.lasthop-b.partial",
            "spec/examples/links/.lasthop-c.partial",
        ];
        let theirs = [
            "other/.lasthop-d.partial",
            "other/deep/.lasthop-e.partial",
            "runs/e0/.lasthop-f.partial",
            "runs/e0/0/sub/.lasthop-g.partial",
        ];
        for f in ours.iter().chain(&theirs) {
            std::fs::write(p(f), "").unwrap();
        }
        // Through a symbolic link to elsewhere: not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join(".lasthop-h.partial"), "").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), p("runs/link")).unwrap();
        let removed = out.remove_stale_partials().unwrap();
        let mut want: Vec<PathBuf> = ours.iter().map(|f| p(f)).collect();
        want.sort();
        assert_eq!(removed, want);
        for f in theirs {
            assert!(p(f).exists(), "{f}");
        }
        assert!(elsewhere.path().join(".lasthop-h.partial").exists());
    }

    #[test]
    fn paths_and_reset() {
        let d = tempfile::tempdir().unwrap();
        let out = ResultsDir::new(d.path());
        let run = out.run("r1-bl", 3);
        assert_eq!(run.path(), d.path().join("runs/r1-bl/3"));
        assert_eq!(run.marker(), d.path().join("runs/r1-bl/3/done.json"));
        assert_eq!(run.metrics_json().file_name().unwrap(), "metrics.json");
        assert_eq!(out.summary_json(), d.path().join("summary.json"));
        run.reset().unwrap();
        std::fs::write(run.marker(), "{}").unwrap();
        std::fs::write(run.path().join("partial.pcap"), "x").unwrap();
        assert!(run.has_marker());
        run.reset().unwrap();
        assert!(!run.has_marker());
        assert_eq!(std::fs::read_dir(run.path()).unwrap().count(), 0);
    }
}
