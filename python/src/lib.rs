//! `lasthop._lasthop`: the repository's crates in-process, for the Python package `lasthop`.
//! Every function here calls a library function of those crates (the same ones the `lasthop`
//! binary calls); tables come back as typed columns, which `lasthop/_tables.py` turns into
//! pandas DataFrames.

mod columns;

use columns::{Column, Columns};
use lasthop_analysis::files;
use lasthop_core::spec::SpecError as RustSpecError;
use lasthop_experiment::backend::EmuBackend;
use lasthop_experiment::{
    Backend, Experiment, ExperimentInfo, OnProgress, RunOptions, Shard, SimBackend,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

create_exception!(
    _lasthop,
    SpecError,
    PyValueError,
    "A spec (link, scenario, experiment) or an override the Rust loaders refused: `key` (the \
     dotted key path, empty for the whole document), `file` (or None) and `message` (the \
     value and what is allowed)."
);
create_exception!(
    _lasthop,
    LasthopError,
    PyRuntimeError,
    "A run, a results directory or a file that lasthop could not use."
);

fn spec_error(py: Python<'_>, e: &RustSpecError) -> PyErr {
    let err = SpecError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("key", &e.key);
    let _ = v.setattr("file", e.file.clone());
    let _ = v.setattr("message", &e.message);
    err
}

/// Any error: a `SpecError` when one is in its chain, else a `LasthopError` with the chain.
fn to_py(py: Python<'_>, e: anyhow::Error) -> PyErr {
    for c in e.chain() {
        if let Some(s) = c.downcast_ref::<RustSpecError>() {
            return spec_error(py, s);
        }
    }
    LasthopError::new_err(format!("{e:#}"))
}

type Res<T> = Result<T, anyhow::Error>;

/// What `lasthop check SPEC` prints: (kind, description, warnings).
#[pyfunction]
fn check(py: Python<'_>, path: PathBuf) -> PyResult<(String, String, Vec<String>)> {
    py.allow_threads(|| check_spec(&path))
        .map_err(|e| to_py(py, e))
}

fn check_spec(path: &Path) -> Res<(String, String, Vec<String>)> {
    use lasthop_experiment::spec::SpecKind;
    let text = lasthop_core::spec::read_spec_text(path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(match lasthop_experiment::spec::spec_kind(&text)? {
        SpecKind::Experiment => {
            let exp = Experiment::load(path)?;
            let mut warnings: Vec<String> = exp.warnings.iter().map(|w| w.to_string()).collect();
            warnings.extend(lasthop_experiment::spec::points_in_their_mode(&exp)?);
            ("experiment".into(), exp.to_string(), warnings)
        }
        SpecKind::Scenario => {
            let (s, _) = lasthop_experiment::outputs::load_scenario(path)?;
            let mut warnings = vec![];
            let mut refused = vec![];
            for mode in [lasthop_scenario::Mode::Sim, lasthop_scenario::Mode::Emu] {
                match s.check_here(mode) {
                    Ok(w) => warnings.extend(w.iter().map(|w| format!("{w} (in {})", mode.name()))),
                    Err(e) => refused.push(e),
                }
            }
            if refused.len() == 2 {
                return Err(anyhow::Error::new(refused.swap_remove(0))
                    .context("the scenario runs in neither mode"));
            }
            (
                "scenario".into(),
                format!("{}\n{}", s.describe(), s.link.describe()),
                warnings,
            )
        }
        SpecKind::Link => {
            let cfg = lasthop_link::LinkSpec::load(path)?;
            let warnings = cfg.warnings().iter().map(|w| w.to_string()).collect();
            ("link".into(), cfg.describe(), warnings)
        }
    })
}

/// A Python value as a TOML value (str, int, float, bool, lists and dicts of them).
fn toml_value(v: &Bound<'_, PyAny>, key: &str) -> PyResult<toml::Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(v.extract()?));
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let k: String = k.extract()?;
            let sub = toml_value(&x, &format!("{key}.{k}"))?;
            t.insert(k, sub);
        }
        return Ok(toml::Value::Table(t));
    }
    if let Ok(l) = v.downcast::<PyList>() {
        return l
            .iter()
            .map(|x| toml_value(&x, key))
            .collect::<PyResult<Vec<_>>>()
            .map(toml::Value::Array);
    }
    if let Ok(l) = v.downcast::<PyTuple>() {
        return l
            .iter()
            .map(|x| toml_value(&x, key))
            .collect::<PyResult<Vec<_>>>()
            .map(toml::Value::Array);
    }
    let e = RustSpecError {
        file: None,
        key: format!("overrides.{key:?}"),
        message: format!(
            "{}: allowed a str, int, float, bool, or a list or dict of them",
            v.get_type().name()?
        ),
    };
    Err(spec_error(v.py(), &e))
}

/// One simulated replication (`lasthop sim`): returns the output directory.
#[pyfunction]
#[pyo3(signature = (scenario, out, seed=None, replication=None, overrides=None))]
fn sim(
    py: Python<'_>,
    scenario: PathBuf,
    out: PathBuf,
    seed: Option<u64>,
    replication: Option<u64>,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let mut table = toml::Table::new();
    if let Some(d) = overrides {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let value = toml_value(&v, &k)?;
            table.insert(k, value);
        }
    }
    py.allow_threads(|| {
        lasthop_experiment::single::simulate(&scenario, &table, seed, replication, &out)
    })
    .map_err(|e| to_py(py, e))?;
    Ok(out.display().to_string())
}

/// An experiment (`lasthop run`): returns (the results directory, runs, kept, ran, failed).
/// `on_progress(done, pending)` is called before the first run and after each one, from the
/// runner's threads (with the GIL taken); the first exception it raises is raised after the
/// experiment (whose finished runs stay). An emulated experiment (`mode = "emu"`) runs as
/// `lasthop run` runs it: the emulator's checks first (root, TUN, the sysctls), then one run at
/// a time, its workload programs started from the `lasthop` binary `exe`.
#[pyfunction]
#[pyo3(signature = (experiment, out=None, jobs=None, shard=None, progress=false, on_progress=None, exe=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    experiment: Option<PathBuf>,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    shard: Option<String>,
    progress: bool,
    on_progress: Option<PyObject>,
    exe: Option<PathBuf>,
) -> PyResult<(String, usize, usize, usize, usize)> {
    let shard: Option<Shard> = match shard {
        Some(s) => Some(s.parse().map_err(|e: String| {
            spec_error(
                py,
                &RustSpecError {
                    file: None,
                    key: "shard".into(),
                    message: format!("{s:?}: {e}"),
                },
            )
        })?),
        None => None,
    };
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let hook = on_progress.map(|cb| {
        let raised = raised.clone();
        OnProgress(Arc::new(move |done: usize, pending: usize| {
            Python::with_gil(|py| {
                let mut first = raised.lock().expect("not poisoned");
                if first.is_some() {
                    return;
                }
                if let Err(e) = cb.call1(py, (done, pending)) {
                    *first = Some(e);
                }
            })
        }))
    });
    let r = py
        .allow_threads(|| run_experiment(experiment, out, jobs, shard, progress, hook, exe))
        .map_err(|e| to_py(py, e));
    if let Some(e) = raised.lock().expect("not poisoned").take() {
        return Err(e);
    }
    r
}

fn run_experiment(
    experiment: Option<PathBuf>,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    shard: Option<Shard>,
    progress: bool,
    on_progress: Option<OnProgress>,
    exe: Option<PathBuf>,
) -> Res<(String, usize, usize, usize, usize)> {
    use anyhow::Context;
    let default_out = |name: &str| Path::new("results").join(name);
    let (exp, out, _lock) = match experiment {
        Some(p) => {
            let exp = Experiment::load(&p)?;
            let out = out.unwrap_or_else(|| default_out(&exp.name));
            let (lock, _) = lasthop_experiment::ResultsDir::new(&out).lock(&[])?;
            (exp, out, lock)
        }
        None => {
            let out = out.unwrap_or_else(|| default_out("quickstart"));
            let (lock, _) = lasthop_experiment::ResultsDir::new(&out).lock(&["spec"])?;
            (lasthop_experiment::quickstart::load(&out)?, out, lock)
        }
    };
    lasthop_experiment::spec::points_in_their_mode(&exp)?;
    let backend: Box<dyn Backend> = match exp.mode {
        lasthop_experiment::Mode::Sim => Box::new(SimBackend),
        lasthop_experiment::Mode::Emu => {
            // As `lasthop run`: fail once, before any run, when the machine cannot emulate.
            for p in &exp.points {
                lasthop_emu::preflight(&p.scenario)
                    .with_context(|| format!("{}: emu mode, point {}", exp.name, p.name))?;
            }
            let exe = match exe {
                Some(e) => e,
                None => lasthop_binary().with_context(|| {
                    format!(
                        "{}: emu mode: the emulated hosts run the lasthop binary's workload programs; \
                         give exe= or set LASTHOP_BIN or put lasthop on PATH",
                        exp.name
                    )
                })?,
            };
            Box::new(EmuBackend { exe })
        }
    };
    let opts = RunOptions {
        jobs,
        progress,
        outputs: Default::default(),
        on_progress,
    };
    let r = lasthop_experiment::run_experiment_shard(&exp, &out, backend.as_ref(), &opts, shard)?;
    if let Some(why) = &r.stopped {
        anyhow::bail!("the disk is full: {why}");
    }
    if shard.is_none() {
        if let Some(s) = r.summaries.as_ref() {
            lasthop_report::write(&out, s, None).map_err(|e| anyhow::anyhow!(e))?;
        }
    }
    if let Some((run, e)) = r.failed.first() {
        anyhow::bail!(
            "{} of {} runs failed; the first, {}/{}: {e}",
            r.failed.len(),
            r.total,
            exp.points[run.point].name,
            run.replication
        );
    }
    Ok((
        out.display().to_string(),
        r.total,
        r.kept,
        r.ran.len(),
        r.failed.len(),
    ))
}

/// The `lasthop` binary: `LASTHOP_BIN`, else `lasthop` on `PATH`.
fn lasthop_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LASTHOP_BIN") {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("lasthop"))
        .find(|p| p.is_file())
}

/// A results directory's experiment: (name, mode, replications, dimensions, points as
/// (name, coords)); None for one run's directory (`lasthop sim --out DIR`).
type Info = (String, String, u64, Vec<String>, Vec<(String, Vec<String>)>);

#[pyfunction]
fn info(py: Python<'_>, dir: PathBuf) -> PyResult<Option<Info>> {
    if !lasthop_experiment::ResultsDir::new(&dir)
        .experiment_json()
        .exists()
    {
        if dir.is_dir() {
            return Ok(None);
        }
        return Err(LasthopError::new_err(format!(
            "{}: no such directory",
            dir.display()
        )));
    }
    let i = ExperimentInfo::load(&dir).map_err(|e| to_py(py, e.into()))?;
    Ok(Some((
        i.name,
        i.mode,
        i.replications,
        i.dimensions.clone(),
        i.points
            .into_iter()
            .map(|p| {
                let coords = i
                    .dimensions
                    .iter()
                    .map(|d| p.coords.get(d).cloned().unwrap_or_default())
                    .collect();
                (p.name, coords)
            })
            .collect(),
    )))
}

/// The tables `load_table` reads, each by its crate's typed reader.
const TABLES: [&str; 12] = [
    "connections",
    "udp_flows",
    "udp_packets",
    "ping_flows",
    "pings",
    "pages",
    "page_objects",
    "streams",
    "latency",
    "link",
    "events",
    "tcp_trace",
];

fn file_name(table: &str) -> String {
    format!("{table}.csv")
}

/// One run's rows of `table` as columns; None when the run has no such file.
fn read_run(table: &str, path: &Path) -> Res<Option<Columns>> {
    if !files::columnar::exists(path) {
        return Ok(None);
    }
    fn cols<T: Serialize>(rows: Vec<T>) -> Res<Columns> {
        let mut c = Columns::default();
        for r in &rows {
            c.push(r)?;
        }
        Ok(c)
    }
    Ok(Some(match table {
        "connections" => cols(files::connections::read(path)?)?,
        "udp_flows" => cols(files::udp_flows::read(path)?)?,
        "udp_packets" => cols(files::udp_packets::read(path)?)?,
        "ping_flows" => cols(files::pings::read_flows(path)?)?,
        "pings" => cols(files::pings::read(path)?)?,
        "pages" => cols(files::pages::read(path)?)?,
        "page_objects" => cols(files::page_objects::read(path)?)?,
        "streams" => cols(files::streams::read(path)?)?,
        "latency" => cols(files::latency::read(path)?)?,
        "tcp_trace" => match files::tcp_trace::read_either(path)? {
            Some(rows) => cols(rows)?,
            None => return Ok(None),
        },
        "link" => cols(
            lasthop_link::meter::read_link_csv(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        )?,
        "events" => {
            // events.csv, or the run's events.parquet in its place.
            let Some(f) = files::columnar::open(path)? else {
                return Ok(None);
            };
            let rows = lasthop_link::event::read_events(f)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            cols(rows)?
        }
        _ => anyhow::bail!("{table}: no such table (allowed: {})", TABLES.join(", ")),
    }))
}

/// Every finished run's rows of `table` in a results directory (or the one run of a
/// `lasthop sim` directory), read in parallel: the columns as (name, kind, data, mask), with
/// `_point` (the point's index in `info`'s list) and `replication` first. Kinds: `f8` (data:
/// little-endian f64 bytes), `i8` (i64 bytes; mask: one byte per row, 1 = present, or None),
/// `b1` (one byte per row), `str` (a list).
#[pyfunction]
fn load_table(py: Python<'_>, dir: PathBuf, table: String) -> PyResult<Py<PyList>> {
    if !TABLES.contains(&table.as_str()) {
        let e = RustSpecError {
            file: None,
            key: "table".into(),
            message: format!("{table:?}: allowed {}", TABLES.join(", ")),
        };
        return Err(spec_error(py, &e));
    }
    let cols = py
        .allow_threads(|| gather(&dir, &table))
        .map_err(|e| to_py(py, e))?;
    let out = PyList::empty(py);
    for (name, col) in cols {
        let (kind, data, mask): (&str, PyObject, PyObject) = match col {
            Column::Float(v) => ("f8", bytes(py, &v), py.None()),
            Column::Int(v, m) => (
                "i8",
                bytes(py, &v),
                match m {
                    Some(m) => bytes(py, &m.iter().map(|b| *b as u8).collect::<Vec<u8>>()),
                    None => py.None(),
                },
            ),
            Column::Bool(v) => (
                "b1",
                bytes(py, &v.iter().map(|b| *b as u8).collect::<Vec<u8>>()),
                py.None(),
            ),
            Column::Str(v) => ("str", PyList::new(py, v)?.into_any().unbind(), py.None()),
        };
        out.append((name, kind, data, mask))?;
    }
    Ok(out.unbind())
}

/// Numbers as their little-endian bytes.
fn bytes<T: Copy + ToLe>(py: Python<'_>, v: &[T]) -> PyObject {
    let mut b = Vec::with_capacity(std::mem::size_of_val(v));
    for x in v {
        x.put(&mut b);
    }
    PyBytes::new(py, &b).into_any().unbind()
}

trait ToLe {
    fn put(self, out: &mut Vec<u8>);
}
impl ToLe for f64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
}
impl ToLe for i64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
}
impl ToLe for u8 {
    fn put(self, out: &mut Vec<u8>) {
        out.push(self)
    }
}

/// The runs of `dir`: (point index, replication, run directory); a `lasthop sim` directory is
/// one run (point 0, replication 0).
fn runs_of(dir: &Path) -> Res<Vec<(usize, u64, PathBuf)>> {
    if !lasthop_experiment::ResultsDir::new(dir)
        .experiment_json()
        .exists()
    {
        return Ok(vec![(0, 0, dir.to_path_buf())]);
    }
    let info = ExperimentInfo::load(dir)?;
    let mut runs = vec![];
    for (i, p) in info.points.iter().enumerate() {
        for k in 0..info.replications {
            let layout = info.run_layout(dir, &p.name, k);
            if layout.has_marker() {
                runs.push((i, k, layout.path().to_path_buf()));
            }
        }
    }
    Ok(runs)
}

fn gather(dir: &Path, table: &str) -> Res<Vec<(String, Column)>> {
    let runs = runs_of(dir)?;
    let name = file_name(table);
    let parts: Vec<(usize, u64, Columns)> = runs
        .par_iter()
        .map(|(p, k, d)| Ok(read_run(table, &d.join(&name))?.map(|c| (*p, *k, c))))
        .collect::<Res<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    // One column set: the runs' columns in the order they first came.
    let mut names: Vec<String> = vec![];
    for (_, _, c) in &parts {
        for n in &c.names {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let (mut point, mut rep) = (vec![], vec![]);
    let mut per_name: Vec<Vec<(usize, Column)>> = names.iter().map(|_| vec![]).collect();
    for (p, k, c) in parts {
        let rows = c.rows;
        point.extend(std::iter::repeat_n(p as i64, rows));
        rep.extend(std::iter::repeat_n(k as i64, rows));
        for (n, col) in c.finish() {
            let i = names.iter().position(|x| *x == n).expect("collected");
            per_name[i].push((rows, col));
        }
    }
    let total = point.len();
    let mut out = vec![
        ("_point".to_string(), Column::Int(point, None)),
        ("replication".to_string(), Column::Int(rep, None)),
    ];
    for (n, pieces) in names.into_iter().zip(per_name) {
        out.push((n, concat(pieces, total)));
    }
    Ok(out)
}

/// The pieces of one column across runs as one column of `total` rows (a run without the
/// column, an older file, gives absent values; kinds that differ between runs widen: int and
/// float to float, anything with strings to strings).
fn concat(pieces: Vec<(usize, Column)>, total: usize) -> Column {
    let covered: usize = pieces.iter().map(|(n, _)| n).sum();
    let kinds: Vec<u8> = pieces
        .iter()
        .map(|(_, c)| match c {
            Column::Bool(_) => 0,
            Column::Int(..) => 1,
            Column::Float(_) => 2,
            Column::Str(_) => 3,
        })
        .collect();
    let widest = kinds.iter().copied().max().unwrap_or(2);
    let uniform = kinds.iter().all(|k| *k == widest) && covered == total;
    match (widest, uniform) {
        (0, true) => Column::Bool(
            pieces
                .into_iter()
                .flat_map(|(_, c)| match c {
                    Column::Bool(v) => v,
                    _ => unreachable!(),
                })
                .collect(),
        ),
        (1, _) if kinds.iter().all(|k| *k == 1) => {
            let (mut v, mut m, mut masked) = (vec![], vec![], covered != total);
            for (_, c) in pieces {
                if let Column::Int(x, mask) = c {
                    match mask {
                        Some(mm) => {
                            masked = true;
                            m.extend(mm)
                        }
                        None => m.extend(std::iter::repeat_n(true, x.len())),
                    }
                    v.extend(x);
                }
            }
            v.resize(total, 0);
            m.resize(total, false);
            Column::Int(v, masked.then_some(m))
        }
        (3, _) => Column::Str({
            let mut v: Vec<String> = pieces
                .into_iter()
                .flat_map(|(_, c)| match c {
                    Column::Str(v) => v,
                    Column::Float(v) => v
                        .into_iter()
                        .map(|x| {
                            if x.is_nan() {
                                String::new()
                            } else {
                                x.to_string()
                            }
                        })
                        .collect(),
                    Column::Int(v, _) => v.into_iter().map(|x| x.to_string()).collect(),
                    Column::Bool(v) => v.into_iter().map(|x| (x as u8).to_string()).collect(),
                })
                .collect();
            v.resize(total, String::new());
            v
        }),
        _ => Column::Float({
            let mut v: Vec<f64> = pieces
                .into_iter()
                .flat_map(|(_, c)| match c {
                    Column::Float(v) => v,
                    Column::Int(v, m) => v
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| {
                            if m.as_ref().is_some_and(|m| !m[i]) {
                                f64::NAN
                            } else {
                                x as f64
                            }
                        })
                        .collect(),
                    Column::Bool(v) => v.into_iter().map(|x| x as u8 as f64).collect(),
                    Column::Str(_) => unreachable!(),
                })
                .collect();
            v.resize(total, f64::NAN);
            v
        }),
    }
}

/// `lasthop analyze PCAP [PCAP2] [--events EVENTS]`'s connections: the rows
/// `connections.csv` would have. With `pcap2` the two captures of one run are merged, `pcap`
/// taken as the TCP client's (the binary also tells them apart itself); with `events` the
/// link's event log is joined for drops by cause.
#[pyfunction]
#[pyo3(signature = (pcap, pcap2=None, events=None))]
fn analyze(
    py: Python<'_>,
    pcap: PathBuf,
    pcap2: Option<PathBuf>,
    events: Option<PathBuf>,
) -> PyResult<Py<PyList>> {
    let cols = py
        .allow_threads(|| -> Res<Vec<(String, Column)>> {
            let first = lasthop_analysis::analyze_pcap_with(&pcap, Default::default())?;
            let mut conns = match &pcap2 {
                Some(p) => {
                    let second = lasthop_analysis::analyze_pcap_with(p, Default::default())?;
                    lasthop_analysis::merge_sides(&first.conns, &second.conns)
                }
                None => first.conns,
            };
            if let Some(ev) = &events {
                lasthop_analysis::EventLog::load(ev)?.join(&mut conns);
            }
            let rows: Vec<files::connections::ConnRow> =
                conns.iter().map(files::connections::ConnRow::of).collect();
            let rows = files::as_written(&files::connections::COLUMNS, rows);
            let mut c = Columns::default();
            for r in &rows {
                c.push(r)?;
            }
            Ok(c.finish())
        })
        .map_err(|e| to_py(py, e))?;
    let out = PyList::empty(py);
    for (name, col) in cols {
        let item: (String, &str, PyObject, PyObject) = match col {
            Column::Float(v) => (name, "f8", bytes(py, &v), py.None()),
            Column::Int(v, _) => (name, "i8", bytes(py, &v), py.None()),
            Column::Bool(v) => (
                name,
                "b1",
                bytes(py, &v.iter().map(|b| *b as u8).collect::<Vec<u8>>()),
                py.None(),
            ),
            Column::Str(v) => (
                name,
                "str",
                PyList::new(py, v)?.into_any().unbind(),
                py.None(),
            ),
        };
        out.append(item)?;
    }
    Ok(out.unbind())
}

#[pymodule]
fn _lasthop(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("LasthopError", m.py().get_type::<LasthopError>())?;
    m.add("TABLES", TABLES.to_vec())?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(load_table, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    Ok(())
}
