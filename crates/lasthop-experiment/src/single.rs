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
/// ([`load_scenario_with`]), then [`simulate_scenario`]. Returns the result and the warnings
/// (settings that do nothing, stale temporary files removed). Python's `lasthop.sim`.
pub fn simulate(
    path: &std::path::Path,
    overrides: &toml::Table,
    seed: Option<u64>,
    replication: Option<u64>,
    out: &std::path::Path,
) -> anyhow::Result<(lasthop_sim::SimResult, Vec<String>)> {
    let (scenario, spec_outputs) = load_scenario_with(path, overrides)?;
    let mut warnings = vec![];
    let r = simulate_scenario(
        scenario,
        &SimChoices {
            spec_outputs,
            seed,
            replication,
            ..Default::default()
        },
        out,
        &mut |w| warnings.push(w),
    )?;
    Ok((r, warnings))
}

/// What a simulated replication takes beyond its scenario.
#[derive(Clone, Debug, Default)]
pub struct SimChoices {
    /// The scenario's `[outputs]`, over keeping everything.
    pub spec_outputs: Option<OutputsSpec>,
    /// Over those: the command line's flags (`--captures`, `--events`, ...).
    pub outputs: OutputsSpec,
    /// The seed and replication number over the scenario's.
    pub seed: Option<u64>,
    pub replication: Option<u64>,
}

/// The one simulated replication of `lasthop sim` and `lasthop.sim`: the outputs resolved
/// (everything, then the scenario's `[outputs]`, then the flags; a capture of no such host is
/// the error), seed and replication set, what simulation refuses refused before anything is
/// written (what does nothing in it goes to `say`), the directory locked for the run, a killed
/// run's temporary files in it removed (each said), the run, and its directory synced once.
pub fn simulate_scenario(
    mut scenario: lasthop_scenario::Scenario,
    choices: &SimChoices,
    out: &std::path::Path,
    say: &mut dyn FnMut(String),
) -> anyhow::Result<lasthop_sim::SimResult> {
    use anyhow::Context;
    let outputs = Outputs::EVERYTHING
        .with(&choices.spec_outputs.clone().unwrap_or_default())
        .with(&choices.outputs);
    let unknown = outputs.unknown_hosts(&scenario);
    if !unknown.is_empty() {
        anyhow::bail!(
            "--captures (or outputs.captures): {}: no such host (allowed: {})",
            unknown.join(", "),
            scenario
                .hosts
                .iter()
                .map(|h| h.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(s) = choices.seed {
        scenario.seed = s;
    }
    if let Some(r) = choices.replication {
        scenario.replication = r;
    }
    for w in scenario.check_here(lasthop_scenario::Mode::Sim)? {
        say(w.to_string());
    }
    // One run at a time into a directory of its own; a killed run's temporary files go.
    let _lock = lasthop_core::output::RunDirLock::acquire(out)?;
    lasthop_core::output::claim_run_dir(out)?;
    for p in lasthop_core::output::remove_stale_partials(out, 0)
        .with_context(|| format!("removing stale files in {}", out.display()))?
    {
        say(format!(
            "removed {}: a temporary file an earlier run left unfinished",
            p.display()
        ));
    }
    // One sync of the run's files at the end rather than one per file.
    let opts = lasthop_sim::OutputOptions {
        link_samples: false,
        ..outputs.keep(true).sim_options(out)
    };
    let r = lasthop_sim::run(&scenario, &opts)?;
    outputs.keep(true).finish(out)?;
    lasthop_core::output::sync_dir(out).with_context(|| format!("syncing {}", out.display()))?;
    Ok(r)
}
