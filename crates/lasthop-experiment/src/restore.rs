//! A finished simulated run's files that it did not keep (its captures, `events.csv`,
//! `tcp_trace.csv`: by default a sweep keeps them for its report run only), made again by
//! running it again: the same scenario, seed and replication give the same files, byte for
//! byte (`lasthop report --run POINT/K`).

use crate::error::{io_err, ExperimentError, RunError};
use crate::info::ExperimentInfo;
use crate::outputs::Keep;
use lasthop_scenario::Scenario;
use std::path::Path;

/// Whether the finished run `point`/`replication` of the results in `out` lacks a file the
/// report's time plots read (`events.csv`).
pub fn lacks_files(out: &Path, info: &ExperimentInfo, point: &str, replication: u64) -> bool {
    let rd = info.run_layout(out, point, replication);
    rd.has_marker() && !lasthop_analysis::files::columnar::exists(&rd.events_csv())
}

/// Runs the finished simulated run `point`/`replication` again into its directory, keeping
/// everything (every capture, `events.csv` at the scenario's level, `tcp_trace.csv`; its
/// tables, metrics and marker are left as they are: the run gives the same ones). A chained
/// replication starts from its predecessor's caches again. Returns whether it ran: not for an
/// emulated run (which cannot be repeated) nor for one that has its files.
pub fn restore_run_files(
    out: &Path,
    info: &ExperimentInfo,
    point: &str,
    replication: u64,
) -> Result<bool, ExperimentError> {
    if info.mode != "sim" || !lacks_files(out, info, point, replication) {
        return Ok(false);
    }
    let rd = info.run_layout(out, point, replication);
    let text = std::fs::read_to_string(rd.scenario_toml()).map_err(io_err(&rd.scenario_toml()))?;
    let base = rd.path();
    let mut scenario =
        Scenario::from_str_in(&text, base).map_err(|e| ExperimentError::Invalid {
            path: rd.scenario_toml().display().to_string(),
            message: e.to_string(),
        })?;
    scenario.seed = info.seed;
    scenario.replication = replication;
    let opts = lasthop_sim::OutputOptions {
        analyse: false,
        link_samples: false,
        sync_each: true,
        ..Keep::ALL.sim_options(rd.path())
    };
    let chained = rd.tcp_metrics_json().exists();
    let from = match (chained, replication) {
        (true, k) if k > 0 => {
            let prev = info.run_layout(out, point, k - 1);
            crate::chain::CacheFile::read(&prev.tcp_metrics_json())?.cache()
        }
        _ => vec![],
    };
    lasthop_sim::run_from(&scenario, &opts, &from).map_err(RunError::from)?;
    Ok(true)
}
