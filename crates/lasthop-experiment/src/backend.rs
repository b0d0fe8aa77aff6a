//! What produces a run's files: the simulator ([`SimBackend`]), the emulator ([`EmuBackend`]),
//! or a refusal ([`Unavailable`]).

use crate::error::RunError;
use crate::measure::RunTables;
use crate::outputs::Keep;
use lasthop_scenario::Scenario;
use std::path::{Path, PathBuf};

/// What produces one run's files (`connections.csv`, `events.csv`, ...) in a directory.
pub trait Backend: Sync {
    /// Runs `scenario` writing into `dir` (which exists and is empty but for `scenario.toml`)
    /// its tables and what `keep` says. Returns the run's tables when it has them in memory
    /// (`None`: they are read from the files it wrote).
    fn run(
        &self,
        scenario: &Scenario,
        dir: &Path,
        keep: &Keep,
    ) -> Result<Option<RunTables>, RunError>;
    /// How many runs may go at once (`None`: all cores).
    fn max_jobs(&self) -> Option<usize>;
    /// Runs `scenario` with hosts whose CBI caches start as `from` (a chained replication,
    /// [`crate::chain`]) and returns its tables and the caches at the end. Only the simulator
    /// can.
    fn run_chained(
        &self,
        _scenario: &Scenario,
        _dir: &Path,
        _keep: &Keep,
        _from: &lasthop_sim::TcpMetricsCache,
    ) -> Result<(Option<RunTables>, lasthop_sim::TcpMetricsCache), RunError> {
        Err(RunError::Unavailable(
            "chained replications (replications_chain) run in simulation only".into(),
        ))
    }
}

/// The simulator: captures, `events.csv`, `tcp_trace.csv`, `link.csv`, and the tables its
/// analysis computes as the run goes (`connections.csv`, ...), handed over in memory too.
pub struct SimBackend;

/// A kept file that could not take its chosen form ([`Keep::finish`]).
fn finish_err(e: lasthop_analysis::files::FileError) -> RunError {
    use lasthop_analysis::files::FileError as F;
    match e {
        F::Io { path, error } => RunError::Io {
            path,
            source: error,
        },
        e => RunError::Io {
            path: String::new(),
            source: std::io::Error::other(e.to_string()),
        },
    }
}

/// A simulated run's tables.
fn tables(r: lasthop_sim::SimResult) -> RunTables {
    RunTables::of_analysis(r.analysis, r.link_rows)
}

impl Backend for SimBackend {
    fn run(
        &self,
        scenario: &Scenario,
        dir: &Path,
        keep: &Keep,
    ) -> Result<Option<RunTables>, RunError> {
        let r = lasthop_sim::run(scenario, &keep.sim_options(dir))?;
        keep.finish(dir).map_err(finish_err)?;
        Ok(Some(tables(r)))
    }
    fn max_jobs(&self) -> Option<usize> {
        None
    }
    fn run_chained(
        &self,
        scenario: &Scenario,
        dir: &Path,
        keep: &Keep,
        from: &lasthop_sim::TcpMetricsCache,
    ) -> Result<(Option<RunTables>, lasthop_sim::TcpMetricsCache), RunError> {
        let mut r = lasthop_sim::run_from(scenario, &keep.sim_options(dir), from)?;
        let cache = std::mem::take(&mut r.tcp_metrics);
        keep.finish(dir).map_err(finish_err)?;
        Ok((Some(tables(r)), cache))
    }
}

/// The emulator: real Linux hosts in network namespaces (needs root, see `docs/emulator.md`);
/// captures, `events.csv`, `hosts.csv`, `summary.toml`, `link.csv`, and the tables of its
/// captures' analysis ([`lasthop_emu::analyse`]). One run at a time: runs at once would share
/// the CPUs the real-time loop needs.
pub struct EmuBackend {
    /// The `lasthop` binary, started inside the namespaces as `EXE app ...`.
    pub exe: PathBuf,
}

impl Backend for EmuBackend {
    /// The emulator captures every host and logs at the scenario's level (its analysis reads
    /// them); what `keep` does not keep is removed after the analysis. `events_level` does not
    /// apply: `events.csv` is kept whole or removed.
    fn run(
        &self,
        scenario: &Scenario,
        dir: &Path,
        keep: &Keep,
    ) -> Result<Option<RunTables>, RunError> {
        let opts = lasthop_emu::EmuOptions::new(dir, self.exe.clone());
        let out = lasthop_emu::run(scenario, &opts).map_err(RunError::Emu)?;
        match out.stop {
            lasthop_emu::Stop::Signal(s) => return Err(RunError::Signal(s)),
            lasthop_emu::Stop::AppFailed => return Err(RunError::AppFailed(out.app_failures)),
            lasthop_emu::Stop::FlowsDone | lasthop_emu::Stop::Duration => {}
        }
        let run = lasthop_emu::analyse(&out, scenario, true)?;
        let link_csv = lasthop_core::layout::RunFiles::new(dir).link_csv();
        let link = lasthop_link::meter::read_link_csv(&link_csv).map_err(|e| RunError::Io {
            path: link_csv.display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })?;
        remove_unkept(&out, scenario, keep)?;
        keep.finish(dir).map_err(finish_err)?;
        Ok(Some(RunTables::of_analysis(run, link)))
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}

/// Removes the files of an emulated run that `keep` does not keep (the emulator writes every
/// capture and `events.csv` at the scenario's level: its analysis reads them).
pub fn remove_unkept(
    out: &lasthop_emu::RunOutputs,
    scenario: &Scenario,
    keep: &Keep,
) -> Result<(), RunError> {
    let rm = |p: &Path| match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RunError::Io {
            path: p.display().to_string(),
            source: e,
        }),
        _ => Ok(()),
    };
    for (name, _, pcap) in &out.pcaps {
        let group = scenario
            .hosts
            .iter()
            .find(|h| &h.name == name)
            .and_then(|h| h.group.as_ref().map(|g| g.0.as_str()));
        if !keep.captures.includes(name, group) {
            rm(pcap)?;
        }
    }
    if keep.events.is_none() {
        rm(&out.events)?;
    }
    Ok(())
}

/// A backend that refuses, for a mode this build cannot run.
pub struct Unavailable(pub String);

impl Backend for Unavailable {
    fn run(&self, _: &Scenario, _: &Path, _: &Keep) -> Result<Option<RunTables>, RunError> {
        Err(RunError::Unavailable(self.0.clone()))
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}
