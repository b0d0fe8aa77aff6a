//! `lasthop-report`: the self-contained HTML report of an experiment's results directory:
//! summary tables laid out like the seeds' appendix tables, and SVG plots (plotters' SVG
//! backend, no JavaScript) of one chosen run (time-sequence graph, router queue length,
//! throughput, cwnd and ssthresh) and across replications (CDFs and box plots).
//!
//! Everything comes from the files on disk (`experiment.json`, `runs/*/*/metrics.json`, read
//! once by whoever computed the summaries, and the chosen run's `events.csv` and
//! `tcp_trace.csv`), so `lasthop report DIR` rebuilds it.
//!
//! The page opens with the study's key figure (ours against the published values, one mark
//! per cell) and keeps every unfolded table within [`html::COLUMN_BUDGET`] columns, a wider
//! one folded below a narrow table of its key columns. `series` computes what is shown,
//! `section/` renders it (one file per section, in page order), `html` holds the helpers the
//! sections share and `plots` draws the SVG charts; this file orders the sections.

pub mod error;
pub mod events;
pub mod html;
pub mod plots;
mod section;
pub mod series;

pub use error::ReportError;
pub use html::{esc, num};

use html::CSS;
use lasthop_core::output::AtomicFile;
use lasthop_experiment::{summarise, ExperimentInfo, ResultsDir, RunMetrics, Summaries, Summary};
use section::across::across;
use section::appendix::appendix;
use section::key_figure::key_figure;
use section::matrix::matrix;
use section::one_run::one_run;
use section::references::references;
use section::seeds::{first10k, thin_streams};
use section::summary::{overview, page_overview};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Builds `DIR/report.html` (time plots of the spec's `report_run`, else the first finished run).
pub fn build(dir: &Path) -> Result<PathBuf, ReportError> {
    build_with(dir, None)
}

/// Builds `DIR/report.html`; `run` (`POINT/REPLICATION`) chooses the run of the time plots.
/// The summaries are computed from the files on disk (without writing them).
pub fn build_with(dir: &Path, run: Option<&str>) -> Result<PathBuf, ReportError> {
    write(dir, &summarise(dir)?, run)
}

/// Writes `DIR/report.html` from summaries already computed (those `lasthop run`, `report`
/// and `merge` have just written: every run's metrics are read once per command); `run`
/// (`POINT/REPLICATION`) chooses the run of the time plots.
pub fn write(dir: &Path, s: &Summaries, run: Option<&str>) -> Result<PathBuf, ReportError> {
    write_beside(dir, s, run, None)
}

/// [`write`], with another experiment's summary beside ours (`lasthop report --beside`):
/// `beside` is its label and summary.
pub fn write_beside(
    dir: &Path,
    s: &Summaries,
    run: Option<&str>,
    beside: Option<(&str, &Summary)>,
) -> Result<PathBuf, ReportError> {
    let (info, summary, metrics) = (&s.info, &s.summary, &s.metrics);
    let chosen = choose_run(dir, info, run)?;
    let html = render(dir, info, summary, metrics, chosen.as_ref(), beside)?;
    let path = ResultsDir::new(dir).report_html();
    AtomicFile::write_all_to(&path, html.as_bytes()).map_err(|source| ReportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(path)
}

/// The run whose time plots the report shows: `run` (`POINT/REPLICATION`, refused unless it
/// names a finished run), else the spec's `report_run` when finished, else the first finished
/// run.
pub fn choose_run(
    dir: &Path,
    info: &ExperimentInfo,
    run: Option<&str>,
) -> Result<Option<(String, u64)>, ReportError> {
    let done = |p: &str, r: u64| info.run_layout(dir, p, r).has_marker();
    if let Some(s) = run {
        let bad = || ReportError::UnknownRun {
            given: s.to_string(),
            points: info
                .points
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let (p, r) = s.rsplit_once('/').ok_or_else(bad)?;
        let r: u64 = r.parse().map_err(|_| bad())?;
        // One of the experiment's points, never a path (`../../x`) read from elsewhere.
        if !info.points.iter().any(|x| x.name == p) || !done(p, r) {
            return Err(bad());
        }
        return Ok(Some((p.to_string(), r)));
    }
    if let Some((p, r)) = &info.report_run {
        if done(p, *r) {
            return Ok(Some((p.clone(), *r)));
        }
    }
    for p in &info.points {
        for r in 0..info.replications {
            if done(&p.name, r) {
                return Ok(Some((p.name.clone(), r)));
            }
        }
    }
    Ok(None)
}

fn render(
    dir: &Path,
    info: &ExperimentInfo,
    summary: &Summary,
    metrics: &[Vec<RunMetrics>],
    chosen: Option<&(String, u64)>,
    beside: Option<(&str, &Summary)>,
) -> Result<String, ReportError> {
    let mut h = String::new();
    let title = format!("lasthop experiment: {}", info.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    if let Some(d) = &info.description {
        let _ = writeln!(h, "<p>{}</p>", esc(d));
    }
    let finished: usize = metrics.iter().map(Vec::len).sum();
    let _ = writeln!(
        h,
        "<p class=\"note\">Mode <b>{}</b>, seed {}, {} point(s) × {} replication(s); {} of {} runs finished (the run files are under <code>runs/POINT/REPLICATION/</code> beside this report). Quantiles: {}.</p>",
        esc(&info.mode),
        info.seed,
        info.points.len(),
        info.replications,
        finished,
        info.points.len() as u64 * info.replications,
        esc(&summary.quantiles)
    );

    // The study's key figure first, then the matrix behind it.
    key_figure(&mut h, info, summary);
    matrix(&mut h, info, metrics);
    overview(&mut h, info, summary);
    page_overview(&mut h, summary);
    references(&mut h, info, summary);
    if let Some((label, theirs)) = beside {
        section::beside::beside(&mut h, label, summary, theirs);
    }
    first10k(&mut h, info, summary);
    thin_streams(&mut h, info, summary, metrics);
    across(&mut h, info, summary, metrics)?;
    match chosen {
        Some((p, r)) => one_run(&mut h, &info.run_dir(dir, p, *r), p, *r)?,
        None => h.push_str("<h2>One run</h2><p>No finished run yet.</p>\n"),
    }
    appendix(&mut h, info, summary);
    h.push_str("</body></html>\n");
    Ok(h)
}
