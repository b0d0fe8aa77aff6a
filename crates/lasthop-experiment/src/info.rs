//! What a results directory records about its experiment (`experiment.json`, checked when
//! read back), and about each finished run (its marker, `done.json`); and whether a directory
//! may receive results.

use crate::error::ExperimentError;
use crate::io::read_json_text;
use crate::layout::{ResultsDir, RunDir};
use crate::spec::Experiment;
use indexmap::IndexMap;
use lasthop_core::output::{LOCK_FILE, PARTIAL_PREFIX, PARTIAL_SUFFIX};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

/// What the experiment directory records about the experiment (`experiment.json`), enough to
/// rebuild the summaries and the report without the spec.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExperimentInfo {
    pub name: String,
    pub description: Option<String>,
    pub mode: String,
    pub seed: u64,
    pub replications: u64,
    /// Connection class schemes. An `experiment.json` written before `figures` may list
    /// `bottleneck`, `thin` or `page` here: [`ExperimentInfo::parse`] moves them.
    pub classes: Vec<crate::spec::ClassScheme>,
    /// What each run computes beyond its connections (left out when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<crate::spec::Figure>,
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
            figures: exp.figures.clone(),
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
        let mut info: ExperimentInfo =
            serde_json::from_str(text).map_err(|source| ExperimentError::Json {
                path: path.display().to_string(),
                source,
            })?;
        let (classes, figures) = crate::classes::split_figures(&info.classes);
        info.classes = classes;
        for f in figures {
            if !info.figures.contains(&f) {
                info.figures.push(f);
            }
        }
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

    /// Whether the runs compute figure `f`.
    pub fn has(&self, f: crate::spec::Figure) -> bool {
        self.figures.contains(&f)
    }

    /// The scheme whose classes the report's summary table and class box plots show: the page
    /// classes with figure `page`, else the first connection class scheme, else seed 004's
    /// `bottleneck` with that figure.
    pub fn report_scheme(&self) -> Option<crate::spec::ClassScheme> {
        use crate::spec::Figure;
        if self.has(Figure::Page) {
            return Some(Figure::Page.scheme());
        }
        self.classes.first().copied().or_else(|| {
            self.has(Figure::Bottleneck)
                .then_some(Figure::Bottleneck.scheme())
        })
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

/// What is at a results directory's path before `lasthop run` or `lasthop merge` writes there.
#[derive(Debug)]
pub enum Existing {
    /// Nothing, or an empty directory (but for what lasthop itself leaves: its lock file,
    /// temporary files, an empty `runs/`, and the names the caller allows).
    Fresh,
    /// A results (or shard) directory: its `experiment.json`, checked.
    Results(Box<ExperimentInfo>),
}

impl ResultsDir {
    /// Whether the directory may receive an experiment's results: it is missing, empty (but
    /// for lasthop's lock file, temporary files, an empty `runs/` and the entries named in
    /// `also`), or a results directory whose `experiment.json` reads back. Anything else is
    /// someone else's directory, which the tool would overwrite (`summary.csv`, `report.html`,
    /// `experiment.toml`) and clean (files under `runs/`): the error says so. Nothing is
    /// created or changed.
    pub fn inspect(&self, also: &[&str]) -> Result<Existing, String> {
        let out = self.root();
        let meta = match std::fs::metadata(out) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Fresh),
            Err(e) => return Err(format!("{}: {e}", out.display())),
        };
        if !meta.is_dir() {
            return Err(format!(
                "{}: exists and is not a directory (allowed: a new or empty directory, or the results directory of an earlier run of the same command)",
                out.display()
            ));
        }
        if self.experiment_json().exists() {
            return match ExperimentInfo::load(out) {
                Ok(info) => Ok(Existing::Results(Box::new(info))),
                Err(e) => Err(format!(
                    "{} has an experiment.json that does not read back ({e}): refusing to write into it; give a new or empty directory",
                    out.display()
                )),
            };
        }
        let rd = std::fs::read_dir(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut foreign = vec![];
        for e in rd {
            let e = e.map_err(|e| format!("{}: {e}", out.display()))?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            let ours = name == LOCK_FILE
                || (name.starts_with(PARTIAL_PREFIX) && name.ends_with(PARTIAL_SUFFIX))
                || also.contains(&name.as_ref())
                || (name == "runs"
                    && std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_none()));
            if !ours {
                foreign.push(name.into_owned());
            }
        }
        if foreign.is_empty() {
            return Ok(Existing::Fresh);
        }
        foreign.sort();
        let n = foreign.len();
        foreign.truncate(3);
        Err(format!(
            "{} is not empty ({}{}) and is not a lasthop results directory (it has no experiment.json): refusing to write into what is not lasthop's (its summary.csv, report.html, experiment.toml and files under runs/ would be replaced or removed); give a new or empty directory",
            out.display(),
            foreign.join(", "),
            if n > 3 { format!(" and {} more", n - 3) } else { String::new() }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn someone_else_s_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let out = ResultsDir::new(d.path().join("out"));
        assert!(matches!(out.inspect(&[]), Ok(Existing::Fresh)));
        std::fs::create_dir_all(out.runs()).unwrap();
        std::fs::write(out.root().join(LOCK_FILE), "1\n").unwrap();
        std::fs::write(out.root().join(".lasthop-x.partial"), "").unwrap();
        assert!(matches!(out.inspect(&[]), Ok(Existing::Fresh)));
        std::fs::write(out.root().join("summary.csv"), "mine\n").unwrap();
        let e = out.inspect(&[]).unwrap_err();
        assert!(
            e.contains("is not empty (summary.csv) and is not a lasthop results directory (it has no experiment.json): refusing to write into what is not lasthop's"),
            "{e}"
        );
        std::fs::remove_file(out.root().join("summary.csv")).unwrap();
        std::fs::create_dir(out.root().join("spec")).unwrap();
        assert!(out.inspect(&[]).is_err());
        assert!(matches!(out.inspect(&["spec"]), Ok(Existing::Fresh)));
        std::fs::write(out.runs().join("x"), "").unwrap();
        assert!(out.inspect(&["spec"]).is_err(), "runs/ not empty");
        // A file where the directory should be.
        let f = ResultsDir::new(d.path().join("f"));
        std::fs::write(f.root(), "").unwrap();
        assert!(f.inspect(&[]).unwrap_err().contains("is not a directory"));
    }
}
