//! Experiment specs: a base scenario, a matrix of named overrides, replications, seed, mode.
//!
//! ```toml
//! name = "quickstart"
//! scenario = "../examples/scenarios/seed000-e0-2tcp.toml"   # relative to this file
//! mode = "sim"                  # sim | emu
//! replications = 3
//! seed = 1
//! classes = ["faster-slower", "flow"]
//! figures = []                  # beyond connections: "bottleneck", "thin", "page"
//! set = { duration = "300s" }   # overrides applied to every point
//!
//! [matrix.link]                 # one dimension; its values are named sets of overrides
//! e0 = { link = "../examples/links/seed000-e0.toml" }
//! r1 = { link = "../examples/links/seed000-r1.toml" }
//!
//! [matrix.tcp]
//! bl = {}
//! frto = { "hosts.server.tcp.frto" = true }
//! ```
//!
//! An override is a dotted key path into the scenario's TOML (`hosts.server.tcp.sack`,
//! `flows[1].start`) and the value to put there. Overrides are applied to the scenario's TOML
//! *before* validation, so every point is validated like a scenario file of its own. The key
//! `link` (a path) is relative to the experiment file, like `scenario`.

use indexmap::IndexMap;
use lasthop_link::spec::{err, from_toml};
use lasthop_link::SpecError;
use lasthop_scenario::{Scenario, ScenarioSpec};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// How the runs are produced.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The deterministic simulator, runs in parallel on all cores.
    #[default]
    Sim,
    /// The real-time emulator (root), one run at a time.
    Emu,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sim => "sim",
            Mode::Emu => "emu",
        }
    }
}

pub use crate::classes::{ClassScheme, Figure};
use crate::outputs::{Outputs, OutputsSpec};

/// The spec as written.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    /// The base scenario, relative to the experiment file.
    pub scenario: PathBuf,
    #[serde(default)]
    pub mode: Mode,
    /// Replications per matrix point (default 1).
    pub replications: Option<u64>,
    /// Replications of a point run one after another on the same hosts, each starting with the
    /// CBI caches the previous one ended with (seed 000's CBI runs; [`crate::chain`]). Default
    /// false: every replication starts cold.
    pub replications_chain: Option<bool>,
    /// The experiment seed; replication k of every point uses (seed, k), so every point sees
    /// the same random streams (common random numbers). Default: the scenario's seed.
    pub seed: Option<u64>,
    /// Connection classes of the summaries (default `["faster-slower", "flow"]`; `[]`: none
    /// but `all`).
    pub classes: Option<Vec<ClassScheme>>,
    /// What each run computes beyond its connections: `bottleneck`, `thin`, `page`.
    pub figures: Option<Vec<Figure>>,
    /// The files runs keep beyond their tables ([`crate::outputs`]), over the scenario's.
    pub outputs: Option<OutputsSpec>,
    /// Overrides applied to every point, before the matrix's.
    #[serde(default)]
    pub set: toml::Table,
    /// Dimensions, in order; each maps value names to overrides.
    #[serde(default)]
    pub matrix: IndexMap<String, IndexMap<String, toml::Table>>,
    /// The run whose time plots the report shows, `POINT/REPLICATION` (default: the first
    /// point, replication 0).
    pub report_run: Option<String>,
    /// Published values to show beside ours: `[reference.POINT]` with `source = "..."` and
    /// `CLASS = { METRIC = median | [p25, median, p75] | [min, p25, median, p75, max] }`.
    #[serde(default)]
    pub reference: IndexMap<String, toml::Table>,
}

/// A published value: a median, quartiles, or the five numbers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct RefValue {
    pub min: Option<f64>,
    pub p25: Option<f64>,
    pub median: f64,
    pub p75: Option<f64>,
    pub max: Option<f64>,
}

/// The published values of one point.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct PointRef {
    pub point: String,
    pub source: Option<String>,
    /// `(class, metric, value)`, classes in table order, metrics in summary order.
    pub values: Vec<(String, String, RefValue)>,
}

fn is_class_name(c: &str) -> bool {
    const FIXED: [&str; 13] = [
        "faster",
        "slower",
        "fastest",
        "slowest",
        "fast10k",
        "slow10k",
        "run",
        "first",
        "second",
        "main",
        "all",
        "page",
        "bottleneck",
    ];
    if FIXED.contains(&c) {
        return true;
    }
    if let Some(h) = c.strip_prefix("host-") {
        return crate::classes::is_host_name(h);
    }
    ["flow", "rank", "start", "inline", "c"].iter().any(|p| {
        c.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

fn parse_references(
    refs: &IndexMap<String, toml::Table>,
    points: &[Point],
) -> Result<Vec<PointRef>, SpecError> {
    // A class's published values are connection metrics, UDP flow metrics for a flowN that
    // is a UDP stream (seed 000's Tables 10 and 11), or page metrics for cN and page (seed 002).
    let metrics = crate::catalogue::all_keys();
    let mut out = vec![];
    for (p, t) in refs {
        let key = format!("reference.{p}");
        if !points.iter().any(|x| &x.name == p) {
            return Err(err(
                &key,
                format!(
                    "no point is called {p:?}: allowed {}",
                    points
                        .iter()
                        .map(|x| format!("{:?}", x.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let mut r = PointRef {
            point: p.clone(),
            source: None,
            values: vec![],
        };
        for (class, v) in t {
            let ck = format!("{key}.{class}");
            if class == "source" {
                r.source = Some(
                    v.as_str()
                        .ok_or_else(|| err(&ck, format!("{v}: allowed a string")))?
                        .to_string(),
                );
                continue;
            }
            if !is_class_name(class) {
                return Err(err(
                    &ck,
                    format!("{class:?} is not a class: allowed source, faster, slower, fastest, slowest, fast10k, slow10k, first, second, main, all, run (the run-level metrics), page, bottleneck, flowN, rankN, startN, inlineN, cN, host-NAME"),
                ));
            }
            let toml::Value::Table(ms) = v else {
                return Err(err(
                    &ck,
                    format!("{v}: allowed a table {{ METRIC = VALUE, ... }}"),
                ));
            };
            for (m, val) in ms {
                let mk = format!("{ck}.{m}");
                if !metrics.contains(&m.as_str()) {
                    return Err(err(
                        &mk,
                        format!("{m:?} is not a metric: allowed {}", metrics.join(", ")),
                    ));
                }
                let num = |x: &toml::Value| match x {
                    toml::Value::Integer(i) => Some(*i as f64),
                    toml::Value::Float(f) => Some(*f),
                    _ => None,
                };
                let bad = || {
                    err(
                        &mk,
                        format!("{val}: allowed a median (a number), [p25, median, p75] or [min, p25, median, p75, max]"),
                    )
                };
                let rv = match val {
                    toml::Value::Array(a) => {
                        let xs: Vec<f64> =
                            a.iter().map(num).collect::<Option<_>>().ok_or_else(bad)?;
                        match xs[..] {
                            [a, b, c] => RefValue {
                                min: None,
                                p25: Some(a),
                                median: b,
                                p75: Some(c),
                                max: None,
                            },
                            [a, b, c, d, e] => RefValue {
                                min: Some(a),
                                p25: Some(b),
                                median: c,
                                p75: Some(d),
                                max: Some(e),
                            },
                            _ => return Err(bad()),
                        }
                    }
                    x => RefValue {
                        min: None,
                        p25: None,
                        median: num(x).ok_or_else(bad)?,
                        p75: None,
                        max: None,
                    },
                };
                r.values.push((class.clone(), m.clone(), rv));
            }
        }
        // Classes in table order, metrics in summary order (TOML tables do not keep theirs).
        r.values.sort_by_key(|(c, m, _)| {
            (
                crate::classes::class_order(c),
                metrics.iter().position(|x| x == m),
            )
        });
        out.push(r);
    }
    Ok(out)
}

/// One point of the matrix: one value of every dimension.
#[derive(Debug, Clone)]
pub struct Point {
    /// Value names joined by `-` in dimension order (`e0-sack`); `base` without a matrix.
    pub name: String,
    /// `(dimension, value)` pairs in dimension order.
    pub coords: Vec<(String, String)>,
    /// The patched scenario TOML as validated (written into each run directory).
    pub scenario_toml: String,
    /// The validated scenario (seed and replication set per run).
    pub scenario: Scenario,
    /// FNV-1a 64 of the patched scenario text and of the link spec file's contents: what a
    /// finished run's marker must match to be kept.
    pub fingerprint: u64,
    /// The files its runs keep beyond their tables (the scenario's `[outputs]` and the
    /// experiment's over the defaults; not part of the fingerprint: changing them redoes no
    /// run).
    pub outputs: Outputs,
}

/// A loaded, expanded, validated experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    pub description: Option<String>,
    pub mode: Mode,
    pub replications: u64,
    /// `replications_chain`: replication k of a point starts from the CBI caches of k − 1.
    pub chain: bool,
    pub seed: u64,
    /// Connection class schemes (never a figure's: those are in `figures`).
    pub classes: Vec<ClassScheme>,
    /// What each run computes beyond its connections.
    pub figures: Vec<Figure>,
    /// What the spec says that is deprecated (said by the commands that load it).
    pub warnings: Vec<String>,
    pub points: Vec<Point>,
    pub report_run: Option<(String, u64)>,
    /// Published values to show beside ours.
    pub references: Vec<PointRef>,
    /// The spec's text, copied into the results directory.
    pub spec_text: String,
}

/// A run: one replication of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId {
    pub point: usize,
    pub replication: u64,
}

/// Checks a dimension's or a value's name: value names joined by '-' make the point names,
/// which name directories (`runs/<point>/`) and start rows of `summary.csv`.
fn check_name(key: &str, what: &str, name: &str) -> Result<(), SpecError> {
    name_problem(what, name).map_err(|m| err(key, m))
}

/// [`check_name`]'s rule, for names read back from a results directory too.
pub(crate) fn name_problem(what: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'+')
        && !name.starts_with(['.', '+']);
    if ok {
        Ok(())
    } else {
        Err(format!("invalid {what} {name:?}: allowed 1 to 48 of a-z, A-Z, 0-9, '_', '.', '+' (not starting with '.' or '+'); '-' joins point names"))
    }
}

/// The most points a matrix may have.
pub const MAX_POINTS: u64 = 10_000;
/// The most runs (points × replications) an experiment may have: the runner lists them all.
pub const MAX_RUNS: u64 = 1_000_000;
/// The most replications per point.
pub const MAX_REPLICATIONS: u64 = 100_000;
/// The most parts an override's key path may have (`a.b[0].c` has 4).
pub const MAX_KEY_PARTS: usize = 64;
/// The longest point name: one directory name (`runs/<point>/`).
pub const MAX_POINT_NAME: usize = 255;

/// Whether `name` can be a point's name as read from a results directory (`experiment.json`,
/// a run's marker): what [`Experiment`] makes (value names joined by '-', or `base`), so a
/// single directory name below `runs/` that starts no formula in `summary.csv`: 1 to 255 of
/// a-z, A-Z, 0-9, '_', '.', '+', '-', not starting with '.', '+' or '-'. `None` when it can;
/// else what is allowed.
pub fn point_name_problem(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_POINT_NAME
        && !name.starts_with(['.', '+', '-'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'));
    (!ok).then(|| {
        format!("invalid point name {name:?}: allowed 1 to {MAX_POINT_NAME} of a-z, A-Z, 0-9, '_', '.', '+' and '-', not starting with '.', '+' or '-' (a point name is a directory name below runs/)")
    })
}

/// The data files the link spec read (traces, `user` distributions, loss traces) for a
/// fingerprint: their names and digests, so that a run over a trace that changed is not taken
/// for a finished one. Nothing for a link without data files (fingerprints stay as they were).
pub(crate) fn push_data_files(fp: &mut Vec<u8>, link: &lasthop_link::LinkConfig) {
    for f in &link.data_files {
        fp.push(0);
        fp.extend_from_slice(f.file.as_bytes());
        fp.extend_from_slice(&f.digest.to_le_bytes());
    }
}

/// The link spec's bytes for a fingerprint (bounded like every spec read: the scenario's
/// validation has read the file already).
pub(crate) fn read_link_bytes(path: &Path) -> Vec<u8> {
    use lasthop_core::spec::{read_bytes_limited, MAX_SPEC_BYTES};
    read_bytes_limited(path, MAX_SPEC_BYTES, "a spec file").unwrap_or_default()
}

/// One step of an override's key path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Splits an override's key path into its steps. Errors carry no key: the caller places them
/// under the override's name with [`SpecError::under`].
fn parse_path(path: &str) -> Result<Vec<Step>, SpecError> {
    let mut steps = vec![];
    // Counted before anything is built: setting a value walks the path recursively.
    let parts = path.split('.').count() + path.matches('[').count();
    if parts > MAX_KEY_PARTS {
        return Err(err(
            "",
            format!("invalid key path of {} bytes: {parts} parts (names and [INDEX]es): allowed at most {MAX_KEY_PARTS}", path.len()),
        ));
    }
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() {
            return Err(err(
                "",
                format!("invalid key path {path:?}: empty key (allowed: names joined by '.', array elements as name[i])"),
            ));
        }
        steps.push(Step::Key(name.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').filter(|_| rest.starts_with('['));
            let Some(close) = close else {
                return Err(err(
                    "",
                    format!("invalid key path {path:?}: expected [INDEX]"),
                ));
            };
            let i: usize = rest[1..close].parse().map_err(|_| {
                err(
                    "",
                    format!(
                        "invalid key path {path:?}: [{}] is not an index (0, 1, ...)",
                        &rest[1..close]
                    ),
                )
            })?;
            steps.push(Step::Index(i));
            rest = &rest[close + 1..];
        }
    }
    Ok(steps)
}

/// Sets `value` at `steps` in `doc`, creating tables on the way. A table value is merged into
/// an existing table key by key. `shown` is the key path as written (for the message); errors
/// carry no key, like [`parse_path`]'s.
fn set_path(
    doc: &mut toml::Value,
    steps: &[Step],
    value: toml::Value,
    shown: &str,
) -> Result<(), SpecError> {
    let Some((first, rest)) = steps.split_first() else {
        match (doc, value) {
            (toml::Value::Table(t), toml::Value::Table(v)) => {
                for (k, v) in v {
                    let mut sub = t
                        .remove(&k)
                        .unwrap_or(toml::Value::Table(Default::default()));
                    if v.is_table() && sub.is_table() {
                        set_path(&mut sub, &[], v, shown)?;
                    } else {
                        sub = v;
                    }
                    t.insert(k, sub);
                }
            }
            (d, v) => *d = v,
        }
        return Ok(());
    };
    match first {
        Step::Key(k) => {
            let toml::Value::Table(t) = doc else {
                return Err(err(
                    "",
                    format!("{shown}: {k:?} is inside a value that is not a table"),
                ));
            };
            if rest.is_empty() && !value.is_table() {
                t.insert(k.clone(), value);
                return Ok(());
            }
            let sub = t
                .entry(k.clone())
                .or_insert_with(|| toml::Value::Table(Default::default()));
            set_path(sub, rest, value, shown)
        }
        Step::Index(i) => {
            let toml::Value::Array(a) = doc else {
                return Err(err(
                    "",
                    format!("{shown}: [{i}] applied to a value that is not an array"),
                ));
            };
            let n = a.len();
            let Some(sub) = a.get_mut(*i) else {
                return Err(err(
                    "",
                    format!(
                        "{shown}: index {i} is past the end (the array has {n} elements: allowed 0..{})",
                        n.saturating_sub(1)
                    ),
                ));
            };
            set_path(sub, rest, value, shown)
        }
    }
}

/// Applies a set of overrides (`key path -> value`) to a scenario document. `link` values are
/// resolved against `spec_dir`. `key` names the override set in errors.
pub fn apply_overrides(
    doc: &mut toml::Value,
    overrides: &toml::Table,
    spec_dir: &Path,
    key: &str,
) -> Result<(), SpecError> {
    for (path, value) in overrides {
        // A long path is shown by its head (the error says how long it is).
        let k = match path.char_indices().nth(60) {
            Some((i, _)) if path.len() > 100 => format!("{key}.{:?}...", &path[..i]),
            _ => format!("{key}.{path:?}"),
        };
        let steps = parse_path(path).map_err(|e| e.under(&k))?;
        let mut value = value.clone();
        if steps == [Step::Key("link".into())] {
            match &value {
                toml::Value::String(s) => {
                    let p = spec_dir.join(s);
                    value = toml::Value::String(p.display().to_string());
                }
                other => {
                    return Err(err(
                        &k,
                        format!("{other}: allowed a path to a link spec (a string), relative to the experiment file"),
                    ))
                }
            }
        }
        set_path(doc, &steps, value, path).map_err(|e| e.under(&k))?;
    }
    Ok(())
}

impl ExperimentSpec {
    pub fn parse(text: &str) -> Result<ExperimentSpec, SpecError> {
        from_toml(text)
    }
}

impl Experiment {
    /// Reads, expands and validates an experiment file.
    pub fn load(path: impl AsRef<Path>) -> Result<Experiment, SpecError> {
        let path = path.as_ref();
        let with_file = |mut e: SpecError| {
            if e.file.is_none() {
                e.file = Some(path.display().to_string());
            }
            e
        };
        let text = lasthop_core::spec::read_spec_text(path)
            .map_err(|e| with_file(err("", e.to_string())))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        Experiment::from_str_in(&text, base).map_err(with_file)
    }

    /// Parses, expands and validates spec text; paths are relative to `base_dir`.
    pub fn from_str_in(text: &str, base_dir: &Path) -> Result<Experiment, SpecError> {
        let spec = ExperimentSpec::parse(text)?;
        let base_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf());
        let scenario_path = base_dir.join(&spec.scenario);
        let scenario_text = lasthop_core::spec::read_spec_text(&scenario_path)
            .map_err(|e| err("scenario", format!("{}: {e}", scenario_path.display())))?;
        let scenario_dir = scenario_path
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let mut base_doc: toml::Value = toml::from_str(&scenario_text).map_err(|e| {
            err(
                "scenario",
                format!("{}: {}", scenario_path.display(), e.message()),
            )
        })?;
        // Make the scenario's own link path absolute so that the patched text stands alone.
        if let Some(toml::Value::String(l)) = base_doc.get("link").cloned() {
            if let toml::Value::Table(t) = &mut base_doc {
                t.insert(
                    "link".into(),
                    toml::Value::String(scenario_dir.join(l).display().to_string()),
                );
            }
        }
        // Validate the base scenario on its own first: its errors name its file. Its
        // `[outputs]` is the experiment's business (taken out of each point below).
        let mut bare = base_doc.clone();
        let bare_text = match OutputsSpec::take_from(&mut bare)
            .map_err(|e| err("scenario", format!("{}: {e}", scenario_path.display())))?
        {
            Some(_) => toml::to_string(&bare).map_err(|e| err("scenario", e.to_string()))?,
            None => scenario_text.clone(),
        };
        ScenarioSpec::parse(&bare_text)
            .and_then(|s| s.validate(&scenario_dir))
            .map_err(|e| err("scenario", format!("{}: {e}", scenario_path.display())))?;
        apply_overrides(&mut base_doc, &spec.set, &base_dir, "set")?;

        let replications = spec.replications.unwrap_or(1);
        if replications == 0 || replications > MAX_REPLICATIONS {
            return Err(err(
                "replications",
                format!("{replications}: allowed 1..={MAX_REPLICATIONS}"),
            ));
        }
        if let Some(name) = &spec.name {
            lasthop_core::spec::check_dir_name("name", "experiment name", name)?;
        }
        let chain = spec.replications_chain.unwrap_or(false);
        if chain && spec.mode == Mode::Emu {
            return Err(err(
                "replications_chain",
                "chained replications run in simulation only (mode = \"sim\"): the emulator's hosts are new namespaces in every run, and Linux offers no way to load a saved tcp_metrics cache into them; run the replications cold, or simulate",
            ));
        }
        let name = spec.name.clone().unwrap_or_else(|| "experiment".into());
        for (dim, values) in &spec.matrix {
            check_name(&format!("matrix.{dim}"), "dimension name", dim)?;
            if crate::summary::SUMMARY_COLUMNS.contains(&dim.as_str()) {
                return Err(err(
                    format!("matrix.{dim}"),
                    format!(
                        "dimension name {dim:?} is a column of summary.csv: allowed any name but {}",
                        crate::summary::SUMMARY_COLUMNS.join(", ")
                    ),
                ));
            }
            if values.is_empty() {
                return Err(err(
                    format!("matrix.{dim}"),
                    "no values: allowed one or more `NAME = { KEY = VALUE, ... }`",
                ));
            }
            for v in values.keys() {
                check_name(&format!("matrix.{dim}.{v}"), "value name", v)?;
            }
        }
        let given = spec
            .classes
            .clone()
            .unwrap_or_else(|| vec![ClassScheme::FasterSlower, ClassScheme::Flow]);
        // `bottleneck`, `thin` and `page` were class schemes before they had their own key.
        let (classes, old_figures) = crate::classes::split_figures(&given);
        let mut warnings = vec![];
        if !old_figures.is_empty() {
            let names: Vec<String> = old_figures
                .iter()
                .map(|f| format!("\"{}\"", f.name()))
                .collect();
            warnings.push(format!(
                "warning: key `classes`: {} {} not a connection class (deprecated there): write `figures = [{}]`{}",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" },
                names.join(", "),
                if classes.is_empty() {
                    " and `classes = []`"
                } else {
                    ""
                }
            ));
        }
        let mut figures = spec.figures.clone().unwrap_or_default();
        for f in old_figures {
            if !figures.contains(&f) {
                figures.push(f);
            }
        }

        // Counted before the product is built: 30 dimensions of 2 values are 2^30 points.
        let npoints = spec.matrix.values().try_fold(1u64, |n, values| {
            n.checked_mul(values.len() as u64)
                .filter(|n| *n <= MAX_POINTS)
        });
        let Some(npoints) = npoints else {
            let sizes: Vec<String> = spec.matrix.values().map(|v| v.len().to_string()).collect();
            let exact = spec
                .matrix
                .values()
                .try_fold(1u128, |n, v| n.checked_mul(v.len() as u128))
                .map(|n| n.to_string())
                .unwrap_or_else(|| "more than 2^128".into());
            return Err(err(
                "matrix",
                format!(
                    "{} dimensions of {} values make {exact} points: allowed at most {MAX_POINTS}",
                    spec.matrix.len(),
                    sizes.join(" x ")
                ),
            ));
        };
        if npoints * replications > MAX_RUNS {
            return Err(err(
                "replications",
                format!(
                    "{npoints} points x {replications} replications = {} runs: allowed at most {MAX_RUNS} runs; fewer replications or a smaller matrix",
                    npoints * replications
                ),
            ));
        }
        // The cartesian product, first dimension slowest.
        let mut combos: Vec<Vec<(String, String)>> = vec![vec![]];
        for (dim, values) in &spec.matrix {
            let mut next = vec![];
            for c in &combos {
                for v in values.keys() {
                    let mut c = c.clone();
                    c.push((dim.clone(), v.clone()));
                    next.push(c);
                }
            }
            combos = next;
        }
        let mut points = vec![];
        for coords in combos {
            let mut doc = base_doc.clone();
            for (dim, v) in &coords {
                apply_overrides(
                    &mut doc,
                    &spec.matrix[dim][v],
                    &base_dir,
                    &format!("matrix.{dim}.{v}"),
                )?;
            }
            let pname = if coords.is_empty() {
                "base".to_string()
            } else {
                coords
                    .iter()
                    .map(|(_, v)| v.as_str())
                    .collect::<Vec<_>>()
                    .join("-")
            };
            if let Some(problem) = point_name_problem(&pname) {
                return Err(err("matrix", problem));
            }
            let where_ = if coords.is_empty() {
                "set".to_string()
            } else {
                coords
                    .iter()
                    .map(|(d, v)| format!("matrix.{d}.{v}"))
                    .collect::<Vec<_>>()
                    .join(" + ")
            };
            let point_outputs = OutputsSpec::take_from(&mut doc)
                .map_err(|e| err(format!("{where_} -> scenario.{}", e.key), e.message.clone()))?
                .unwrap_or_default();
            let outputs = Outputs::SWEEP
                .with(&point_outputs)
                .with(spec.outputs.as_ref().unwrap_or(&OutputsSpec::default()));
            let scenario_toml = toml::to_string(&doc).map_err(|e| err(&where_, e.to_string()))?;
            let mut scenario = Scenario::from_str_in(&scenario_toml, &scenario_dir)
                .map_err(|e| err(format!("{where_} -> scenario.{}", e.key), e.message.clone()))?;
            if scenario.flows.is_empty() {
                return Err(err(
                    format!("{where_} -> scenario.flows"),
                    "no flows: allowed one or more [[flows]]",
                ));
            }
            if let Some(s) = spec.seed {
                scenario.seed = s;
            }
            let link_text = read_link_bytes(&scenario.link_path);
            let mut fp = scenario_toml.as_bytes().to_vec();
            fp.push(0);
            fp.extend_from_slice(&link_text);
            push_data_files(&mut fp, &scenario.link);
            if chain {
                // A chained replication's runs differ from cold ones (and only those change).
                fp.extend_from_slice(b"\0replications_chain");
            }
            let unknown = outputs.unknown_hosts(&scenario);
            if !unknown.is_empty() {
                return Err(err(
                    "outputs.captures",
                    format!(
                        "{}: no such host in point {pname} (allowed: {})",
                        unknown.join(", "),
                        scenario
                            .hosts
                            .iter()
                            .map(|h| h.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            points.push(Point {
                outputs,
                name: pname,
                coords,
                fingerprint: crate::io::fnv1a(&fp),
                scenario_toml,
                scenario,
            });
        }
        if classes.contains(&ClassScheme::MainInline) && points[0].scenario.flows.len() < 2 {
            return Err(err(
                "classes",
                "\"main-inline\" needs at least two flows (flow 0 is the main object)",
            ));
        }
        if figures.contains(&Figure::Thin)
            && !points
                .iter()
                .any(|p| lasthop_analysis::AnalysisOptions::for_scenario(&p.scenario).streams)
        {
            return Err(err(
                "figures",
                "\"thin\" needs a thin flow (its classes are the hosts sending streams)",
            ));
        }
        if figures.contains(&Figure::Page)
            && !points[0].scenario.flows.iter().any(|f| f.kind() == "http")
        {
            return Err(err(
                "figures",
                "\"page\" needs an http flow (its classes are the objects of a page)",
            ));
        }
        let seed = spec.seed.unwrap_or(points[0].scenario.seed);
        let report_run = match &spec.report_run {
            None => None,
            Some(s) => {
                let bad = || {
                    err(
                        "report_run",
                        format!(
                            "{s:?}: allowed POINT/REPLICATION with POINT one of {} and REPLICATION 0..{}",
                            points
                                .iter()
                                .map(|p| format!("{:?}", p.name))
                                .collect::<Vec<_>>()
                                .join(", "),
                            replications - 1
                        ),
                    )
                };
                let (p, r) = s.rsplit_once('/').ok_or_else(bad)?;
                let r: u64 = r.parse().map_err(|_| bad())?;
                if r >= replications || !points.iter().any(|x| x.name == p) {
                    return Err(bad());
                }
                Some((p.to_string(), r))
            }
        };
        let references = parse_references(&spec.reference, &points)?;
        Ok(Experiment {
            references,
            name,
            description: spec.description.clone(),
            mode: spec.mode,
            replications,
            chain,
            seed,
            classes,
            figures,
            warnings,
            points,
            report_run,
            spec_text: text.to_string(),
        })
    }

    /// Every run, point by point, replication by replication.
    pub fn runs(&self) -> Vec<RunId> {
        let mut v = vec![];
        for p in 0..self.points.len() {
            for r in 0..self.replications {
                v.push(RunId {
                    point: p,
                    replication: r,
                });
            }
        }
        v
    }

    /// The run whose files the report shows: `report_run`, else the first point's
    /// replication 0 (which keeps the files of `Runs::Report`).
    pub fn report_run_id(&self) -> RunId {
        let point = self
            .report_run
            .as_ref()
            .and_then(|(p, _)| self.points.iter().position(|x| &x.name == p))
            .unwrap_or(0);
        RunId {
            point,
            replication: self.report_run.as_ref().map_or(0, |r| r.1),
        }
    }

    /// The scenario of one run: the point's, with the experiment seed and the replication.
    pub fn scenario(&self, run: RunId) -> Scenario {
        let mut s = self.points[run.point].scenario.clone();
        s.seed = self.seed;
        s.replication = run.replication;
        s
    }

    /// `runs/<point>/<replication>` under a results directory.
    pub fn run_dir(&self, out: &Path, run: RunId) -> PathBuf {
        self.run_layout(out, run).path().to_path_buf()
    }

    /// The run's directory and its files under a results directory.
    pub fn run_layout(&self, out: &Path, run: RunId) -> crate::layout::RunDir {
        crate::layout::ResultsDir::new(out).run(&self.points[run.point].name, run.replication)
    }
}

impl fmt::Display for Experiment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "experiment {:?}: mode {}, seed {}, {} point(s) x {} replication(s) = {} runs",
            self.name,
            self.mode.name(),
            self.seed,
            self.points.len(),
            self.replications,
            self.points.len() as u64 * self.replications
        )?;
        for p in &self.points {
            writeln!(f, "  {}", p.name)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("flows[1].start").unwrap(),
            vec![
                Step::Key("flows".into()),
                Step::Index(1),
                Step::Key("start".into())
            ]
        );
        assert_eq!(
            parse_path("a..b").unwrap_err(),
            err(
                "",
                "invalid key path \"a..b\": empty key (allowed: names joined by '.', array elements as name[i])"
            )
        );
        assert_eq!(
            parse_path("a[x]").unwrap_err().message,
            "invalid key path \"a[x]\": [x] is not an index (0, 1, ...)"
        );
        assert_eq!(
            parse_path("a[1").unwrap_err().message,
            "invalid key path \"a[1\": expected [INDEX]"
        );
        assert_eq!(
            parse_path("a[1]x").unwrap_err().message,
            "invalid key path \"a[1]x\": expected [INDEX]"
        );
    }

    #[test]
    fn bad_overrides_name_the_override_and_what_is_allowed() {
        let mut doc: toml::Value = toml::from_str(
            "a = 1
[[f]]
s = \"0s\"
",
        )
        .unwrap();
        let apply = |doc: &mut toml::Value, text: &str| {
            let o: toml::Table = toml::from_str(text).unwrap();
            apply_overrides(doc, &o, Path::new("/x"), "matrix.v.p").unwrap_err()
        };
        let e = apply(&mut doc, "\"f[2].s\" = 1\n");
        assert_eq!(e.key, "matrix.v.p.\"f[2].s\"");
        assert_eq!(
            e.message,
            "f[2].s: index 2 is past the end (the array has 1 elements: allowed 0..0)"
        );
        let e = apply(&mut doc, "\"a.b\" = 1\n");
        assert_eq!(
            e.to_string(),
            "key `matrix.v.p.\"a.b\"`: a.b: \"b\" is inside a value that is not a table"
        );
        let e = apply(&mut doc, "\"a[0]\" = 1\n");
        assert_eq!(
            e.message,
            "a[0]: [0] applied to a value that is not an array"
        );
        let e = apply(&mut doc, "\"f[]\" = 1\n");
        assert_eq!(e.key, "matrix.v.p.\"f[]\"");
        assert!(e.message.contains("[] is not an index"), "{e}");
        // Nothing was changed by the failed overrides.
        assert_eq!(doc["a"].as_integer(), Some(1));
        assert_eq!(doc["f"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn set_and_merge() {
        let mut doc: toml::Value =
            toml::from_str("a = 1\n[h.s]\nx = 1\n[[f]]\ns = \"0s\"\n").unwrap();
        let o: toml::Table =
            toml::from_str("\"h.s.tcp.sack\" = true\n\"f[0].s\" = \"5s\"\nh = { s = { y = 2 } }\n")
                .unwrap();
        apply_overrides(&mut doc, &o, Path::new("/x"), "m").unwrap();
        assert_eq!(doc["h"]["s"]["tcp"]["sack"].as_bool(), Some(true));
        assert_eq!(doc["h"]["s"]["x"].as_integer(), Some(1));
        assert_eq!(doc["h"]["s"]["y"].as_integer(), Some(2));
        assert_eq!(doc["f"][0]["s"].as_str(), Some("5s"));
        let o: toml::Table = toml::from_str("\"f[3].s\" = 1\n").unwrap();
        let e = apply_overrides(&mut doc, &o, Path::new("/x"), "m").unwrap_err();
        assert!(e.message.contains("past the end"), "{e}");
    }
}

/// The kinds of spec, each told by top-level keys only it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecKind {
    Link,
    Scenario,
    Experiment,
}

const EXPERIMENT_KEYS: &[&str] = &[
    "scenario",
    "matrix",
    "mode",
    "replications",
    "classes",
    "figures",
    "set",
    "report_run",
    "reference",
];
const SCENARIO_KEYS: &[&str] = &["hosts", "flows", "link", "duration", "replication", "log"];

/// The kind of spec a parsed document is: the first kind (experiment, scenario) one of whose
/// own keys it has, else a link spec (every key of a link is optional). An experiment names a
/// scenario, a scenario names a link, so a document with keys of two kinds is the larger one
/// (and its loader names the stray keys). An empty document is an error.
pub fn detect(t: &toml::Table) -> Result<SpecKind, SpecError> {
    if t.is_empty() {
        return Err(err(
            "",
            "the spec is empty: nothing to check. A link spec has [down], [up] or [both] (rate, delay, queue ...); a scenario has link = \"...\", duration, [hosts.NAME] and [[flows]]; an experiment has scenario = \"...\" and [matrix.*] (see examples/ and experiments/)",
        ));
    }
    let has = |keys: &[&str]| keys.iter().any(|k| t.contains_key(*k));
    Ok(if has(EXPERIMENT_KEYS) {
        SpecKind::Experiment
    } else if has(SCENARIO_KEYS) {
        SpecKind::Scenario
    } else {
        // A link spec with only a name is the unlimited link (`passthrough-link.toml`);
        // unknown keys are named by the link loader with the keys it allows.
        SpecKind::Link
    })
}

/// The kind of the spec `text`: [`detect`] of its document; text that is not TOML is a link
/// spec (whose loader reports the syntax error with its line).
pub fn spec_kind(text: &str) -> Result<SpecKind, SpecError> {
    match toml::from_str::<toml::Table>(text) {
        Ok(t) => detect(&t),
        Err(_) => Ok(SpecKind::Link),
    }
}

/// Every point of an experiment in the experiment's mode (docs/modes.md): the first refusal is
/// the error; the warnings come once each, with the first point they hold for. `lasthop check`
/// and `lasthop run` call it, and Python's `lasthop.check` and `lasthop.run`.
pub fn points_in_their_mode(exp: &Experiment) -> anyhow::Result<Vec<String>> {
    use lasthop_scenario::Mode as M;
    let mode = match exp.mode {
        Mode::Sim => M::Sim,
        Mode::Emu => M::Emu,
    };
    let mut said = std::collections::HashSet::new();
    let mut out = vec![];
    for p in &exp.points {
        let w = p
            .scenario
            .check_here(mode)
            .map_err(|e| anyhow::anyhow!("point {}: {e} (in {})", p.name, mode.name()))?;
        for w in w {
            if said.insert(w.clone()) {
                out.push(format!("{w} (point {}, in {})", p.name, mode.name()));
            }
        }
    }
    Ok(out)
}
