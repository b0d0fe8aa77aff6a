//! What produces a run's files: the simulator ([`SimBackend`]), the emulator ([`EmuBackend`]),
//! or a refusal ([`Unavailable`]).

use crate::error::RunError;
use lasthop_scenario::Scenario;
use std::path::{Path, PathBuf};

/// What produces one run's files (`connections.csv`, `events.csv`, ...) in a directory.
pub trait Backend: Sync {
    /// Runs `scenario` writing into `dir` (which exists and is empty but for `scenario.toml`).
    fn run(&self, scenario: &Scenario, dir: &Path) -> Result<(), RunError>;
    /// How many runs may go at once (`None`: all cores).
    fn max_jobs(&self) -> Option<usize>;
    /// Runs `scenario` with hosts whose CBI caches start as `from` (a chained replication,
    /// [`crate::chain`]) and returns the caches at the end. Only the simulator can.
    fn run_chained(
        &self,
        _scenario: &Scenario,
        _dir: &Path,
        _from: &lasthop_sim::TcpMetricsCache,
    ) -> Result<lasthop_sim::TcpMetricsCache, RunError> {
        Err(RunError::Unavailable(
            "chained replications (replications_chain) run in simulation only".into(),
        ))
    }
}

/// The simulator: captures, `events.csv`, `tcp_trace.csv`, `connections.csv`.
pub struct SimBackend;

impl Backend for SimBackend {
    fn run(&self, scenario: &Scenario, dir: &Path) -> Result<(), RunError> {
        let opts = lasthop_sim::OutputOptions {
            dir: Some(dir.to_path_buf()),
            capture: true,
        };
        lasthop_sim::run(scenario, &opts)?;
        Ok(())
    }
    fn max_jobs(&self) -> Option<usize> {
        None
    }
    fn run_chained(
        &self,
        scenario: &Scenario,
        dir: &Path,
        from: &lasthop_sim::TcpMetricsCache,
    ) -> Result<lasthop_sim::TcpMetricsCache, RunError> {
        let opts = lasthop_sim::OutputOptions {
            dir: Some(dir.to_path_buf()),
            capture: true,
        };
        Ok(lasthop_sim::run_from(scenario, &opts, from)?.tcp_metrics)
    }
}

/// The emulator: real Linux hosts in network namespaces (needs root, see `docs/emulator.md`);
/// captures, `events.csv`, `hosts.csv`, `summary.toml`, and `connections.csv` from the captures.
/// One run at a time: runs at once would share the CPUs the real-time loop needs.
pub struct EmuBackend {
    /// The `lasthop` binary, started inside the namespaces as `EXE app ...`.
    pub exe: PathBuf,
}

impl Backend for EmuBackend {
    fn run(&self, scenario: &Scenario, dir: &Path) -> Result<(), RunError> {
        let opts = lasthop_emu::EmuOptions::new(dir, self.exe.clone());
        let out = lasthop_emu::run(scenario, &opts).map_err(RunError::Emu)?;
        match out.stop {
            lasthop_emu::Stop::Signal(s) => return Err(RunError::Signal(s)),
            lasthop_emu::Stop::AppFailed => return Err(RunError::AppFailed(out.app_failures)),
            lasthop_emu::Stop::FlowsDone | lasthop_emu::Stop::Duration => {}
        }
        let pages = lasthop_sim::page_specs(scenario);
        let thin = lasthop_sim::has_thin_flows(scenario);
        analyse_emu_run_streams(&out, &pages, thin)?;
        Ok(())
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}

/// An emulated run's captures and event log analysed into `connections.csv` (and
/// `udp_flows.csv`), as the simulator does after its runs.
pub fn analyse_emu_run(
    out: &lasthop_emu::RunOutputs,
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    analyse_emu_run_with_pages(out, &[])
}

/// [`analyse_emu_run`], and the pages of the scenario's `http` flows (`pages.csv`,
/// `page_objects.csv`; [`lasthop_sim::page_specs`]).
pub fn analyse_emu_run_with_pages(
    out: &lasthop_emu::RunOutputs,
    pages: &[lasthop_analysis::PageSpec],
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    analyse_emu_run_streams(out, pages, false)
}

/// [`analyse_emu_run_with_pages`], and with `streams` seed 003's stream analysis
/// (`streams.csv`, `latency.csv`; [`lasthop_sim::has_thin_flows`]).
pub fn analyse_emu_run_streams(
    out: &lasthop_emu::RunOutputs,
    pages: &[lasthop_analysis::PageSpec],
    streams: bool,
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    use lasthop_analysis as la;
    let captures: Vec<_> = out
        .pcaps
        .iter()
        .map(|(_, addr, pcap)| (std::net::IpAddr::V4(*addr), la::Capture::File(pcap)))
        .collect();
    let events = out.events.exists().then_some(out.events.as_path());
    la::write_run_analysis_streams(&out.out_dir, &captures, events, pages, streams)
}

/// A backend that refuses, for a mode this build cannot run.
pub struct Unavailable(pub String);

impl Backend for Unavailable {
    fn run(&self, _: &Scenario, _: &Path) -> Result<(), RunError> {
        Err(RunError::Unavailable(self.0.clone()))
    }
    fn max_jobs(&self) -> Option<usize> {
        Some(1)
    }
}
