//! The summaries of a results directory: every finished run's `metrics.json`, read once,
//! summarised per point and class ([`crate::summary`]) and written as `summary.csv` and
//! `summary.json`.

use crate::error::ExperimentError;
use crate::info::ExperimentInfo;
use crate::io::write_atomic;
use crate::layout::ResultsDir;
use crate::metrics::RunMetrics;
use crate::summary::{summarise_point, Summary, QUANTILE_METHOD};
use std::path::Path;

/// Loads the metrics of every finished run of the experiment recorded in `out`, per point.
pub fn load_metrics(
    out: &Path,
    info: &ExperimentInfo,
) -> Result<Vec<Vec<RunMetrics>>, ExperimentError> {
    let mut v = vec![];
    for p in &info.points {
        let mut runs = vec![];
        for r in 0..info.replications {
            let rd = info.run_layout(out, &p.name, r);
            if rd.has_marker() {
                runs.push(RunMetrics::load(&rd.metrics_json())?);
            }
        }
        v.push(runs);
    }
    Ok(v)
}

/// A results directory's summary with what it was computed from: its `experiment.json` and
/// the metrics of every finished run (each `metrics.json` read once, whoever uses them after:
/// `summary.csv`, `summary.json`, the report).
#[derive(Clone, Debug)]
pub struct Summaries {
    pub info: ExperimentInfo,
    pub summary: Summary,
    /// Per point (in `info`'s order), the metrics of its finished runs.
    pub metrics: Vec<Vec<RunMetrics>>,
}

/// Computes the summary of the finished runs recorded in `out`.
pub fn summarise(out: &Path) -> Result<Summaries, ExperimentError> {
    let info = ExperimentInfo::load(out)?;
    let metrics = load_metrics(out, &info)?;
    let points = info
        .points
        .iter()
        .zip(&metrics)
        .map(|(p, runs)| {
            let coords: Vec<(String, String)> = p
                .coords
                .iter()
                .map(|(a, b)| (a.clone(), b.clone()))
                .collect();
            summarise_point(&p.name, &coords, runs, &info.classes)
        })
        .collect();
    let summary = Summary {
        experiment: info.name.clone(),
        quantiles: QUANTILE_METHOD.to_string(),
        points,
    };
    Ok(Summaries {
        info,
        summary,
        metrics,
    })
}

/// Writes `summary.csv` and `summary.json` from the finished runs in `out`.
pub fn write_summary(out: &Path) -> Result<Summaries, ExperimentError> {
    let s = summarise(out)?;
    let layout = ResultsDir::new(out);
    write_atomic(
        &layout.summary_csv(),
        s.summary.to_csv(&s.info.dimensions).as_bytes(),
    )?;
    write_atomic(&layout.summary_json(), s.summary.to_json().as_bytes())?;
    Ok(s)
}
