//! One simulated run outside an experiment, as `lasthop sim` and Python's `lasthop.sim` run
//! it: a scenario file with overrides applied.

use crate::outputs::{Outputs, OutputsSpec};
use lasthop_core::spec::{err, SpecError};

/// [`crate::outputs::load_scenario`] with `overrides` (`key path -> value`, as an experiment's matrix values
/// and `set` take them; `link` relative to the scenario's folder) applied to the document
/// before it is checked; errors name the key as `overrides."PATH"`. Python's `lasthop.sim`
/// loads its scenario here.
pub fn load_scenario_with(
    path: &std::path::Path,
    overrides: &toml::Table,
) -> Result<(lasthop_scenario::Scenario, Option<OutputsSpec>), SpecError> {
    use lasthop_scenario::Scenario;
    if overrides.is_empty() {
        return crate::outputs::load_scenario(path);
    }
    let with_file = |mut e: SpecError| {
        if e.file.is_none() {
            e.file = Some(path.display().to_string());
        }
        e
    };
    let text =
        lasthop_core::spec::read_spec_text(path).map_err(|e| with_file(err("", e.to_string())))?;
    let mut doc: toml::Value =
        toml::from_str(&text).map_err(|e| with_file(err("", e.to_string())))?;
    let base = match path.parent() {
        Some(b) if !b.as_os_str().is_empty() => b,
        _ => std::path::Path::new("."),
    };
    crate::spec::apply_overrides(&mut doc, overrides, base, "overrides").map_err(with_file)?;
    let outputs = OutputsSpec::take_from(&mut doc).map_err(with_file)?;
    let text = toml::to_string(&doc).map_err(|e| with_file(err("", e.to_string())))?;
    let sc = Scenario::from_str_in(&text, base).map_err(with_file)?;
    Ok((sc, outputs))
}

/// One simulated replication of the scenario at `path` into `out`, as `lasthop sim` runs it
/// (everything kept but what the scenario's `[outputs]` leaves out): `overrides` applied
/// ([`load_scenario_with`]), then `seed` and `replication`; what simulation refuses is the
/// error; the directory is locked for the run and a killed run's temporary files in it are
/// removed first. Returns the result and the warnings (settings that do nothing).
pub fn simulate(
    path: &std::path::Path,
    overrides: &toml::Table,
    seed: Option<u64>,
    replication: Option<u64>,
    out: &std::path::Path,
) -> anyhow::Result<(lasthop_sim::SimResult, Vec<String>)> {
    use anyhow::Context;
    let (mut scenario, spec_outputs) = load_scenario_with(path, overrides)?;
    let outputs = Outputs::EVERYTHING.with(&spec_outputs.unwrap_or_default());
    if let Some(s) = seed {
        scenario.seed = s;
    }
    if let Some(r) = replication {
        scenario.replication = r;
    }
    let warnings = scenario
        .check_here(lasthop_scenario::Mode::Sim)?
        .iter()
        .map(|w| w.to_string())
        .collect();
    let _lock = lasthop_core::output::RunDirLock::acquire(out)?;
    lasthop_core::output::remove_stale_partials(out, 0)
        .with_context(|| format!("removing stale files in {}", out.display()))?;
    let opts = lasthop_sim::OutputOptions {
        link_samples: false,
        ..outputs.keep(true).sim_options(out)
    };
    let r = lasthop_sim::run(&scenario, &opts)?;
    lasthop_core::output::sync_dir(out).with_context(|| format!("syncing {}", out.display()))?;
    Ok((r, warnings))
}
