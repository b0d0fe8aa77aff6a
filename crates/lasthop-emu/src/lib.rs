//! The real-time emulator: real Linux hosts in network namespaces, joined through TUN devices by
//! the same sans-IO link model the simulator runs.
//!
//! One process owns everything: one namespace per host (`lh-<runid>-<host>`), a TUN device in
//! each (`lh-<runid>`, opened from a helper thread that entered the namespace), and a single
//! real-time loop that waits on epoll over the TUN fds, a `CLOCK_MONOTONIC` timerfd, a signalfd
//! and the workload processes' pidfds. Packets read from a host's TUN are pushed into the link at
//! their arrival time (run-relative ns); packets the link releases are written to the other host's
//! TUN as close to their scheduled time as the loop manages (absolute deadlines, 1 ns timer slack,
//! a short spin before each deadline), and each release's lateness is recorded.
//!
//! Outputs (in `--out DIR`, each written atomically): `<host>.pcap` per host (captured at its TUN:
//! what the host sent, with the time the emulator read it, and what it received, with the time the
//! emulator wrote it), `events.csv` (the link's event log; releases carry their actual time),
//! `flow<i>-send.csv` / `flow<i>-recv.csv` (application timestamps), `hosts.csv` and
//! `summary.toml` (lateness distribution, counters, how the run ended).
//!
//! The modules, in the order a run uses them: [`setup`] (checks, namespaces, sysctls, TUN
//! devices, routes, the workload programs; `Resources` removes them all on drop), [`realtime`] (the
//! epoll/timerfd loop driving the link model), [`routing`] (which TUN a packet goes to), [`summary`]
//! (`hosts.csv`, `summary.toml`, the [`RunOutputs`]). Beside them: [`netns`] (names, the run
//! registry, `lasthop cleanup`), [`writer`] (captures and event log on their own thread),
//! [`stats`] (lateness), [`sys`] (the Linux calls; the crate's only `unsafe` but `app.rs`).

// Every `unsafe` block lives in `sys` (and in `app`, the workload programs, moving to their own
// crate); the compiler holds the rest of the crate to that.
#![deny(unsafe_code)]

#[allow(unsafe_code)]
pub mod app;
pub mod kernel_clock;
pub mod netns;
pub mod progress;
pub mod realtime;
pub mod routing;
pub mod setup;
pub mod stats;
pub mod summary;
#[allow(unsafe_code)]
pub mod sys;
pub mod writer;

use anyhow::{Context, Result};
use lasthop_core::{Seeds, Time};
use lasthop_link::LogLevel;
use lasthop_scenario::Scenario;
use nix::sys::signalfd::SignalFd;
use stats::LatenessSummary;
use std::net::Ipv4Addr;
use std::path::PathBuf;

pub use setup::{preflight, warnings, Interrupted};
pub use stats::LATE_THRESHOLD_NS;

/// The TUN transmit queue length: long enough that a host never drops a packet on its way to the
/// emulator (Mahimahi's flaw); the emulator drains the queue continuously.
pub const TXQUEUELEN: u32 = 10_000;

#[derive(Debug, Clone)]
pub struct EmuOptions {
    /// Results directory (created if missing).
    pub out_dir: PathBuf,
    /// The `lasthop` binary, started inside the namespaces as `EXE app ...`.
    pub exe: PathBuf,
    /// Bytes of each packet kept in the captures.
    pub snaplen: u32,
    /// How long before a deadline the loop stops sleeping and spins.
    pub spin_ns: u64,
    /// Override the scenario's seed / replication.
    pub seed: Option<u64>,
    pub replication: Option<u64>,
    /// Run the real-time loop under `SCHED_FIFO` at this priority (0: normal scheduling).
    pub rt_priority: i32,
    /// Print what is created, started and removed on stderr.
    pub verbose: bool,
    /// Print a progress line on stderr every few seconds (elapsed time, bytes delivered per
    /// flow, lateness so far: [`progress`]).
    pub progress: bool,
}

/// The smallest `snaplen` that keeps what the analysis reads: an IPv4 header and a TCP header
/// with all their options (60 + 60 bytes; a UDP stream's record needs 60 + 8 + 16).
pub const MIN_SNAPLEN: u32 = 120;

/// Checks a capture snap length: [`MIN_SNAPLEN`]..=65535.
pub fn check_snaplen(n: u32) -> std::result::Result<u32, String> {
    if (MIN_SNAPLEN..=65_535).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n} bytes: allowed {MIN_SNAPLEN}..=65535 (the analysis reads every IP and TCP header whole, up to {MIN_SNAPLEN} bytes with their options; shorter captures give an empty connections.csv)"
        ))
    }
}

/// Checks a real-time priority: 1..=99 (`SCHED_FIFO`), or 0 for the normal scheduler.
pub fn check_rt_priority(n: i32) -> std::result::Result<i32, String> {
    if (0..=99).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{n}: allowed 1..=99 (the SCHED_FIFO priority of the real-time loop), or 0 for the normal scheduler"
        ))
    }
}

impl EmuOptions {
    /// Checks the options a caller may have set out of range (the command line's parser
    /// applies the same checks).
    pub fn check(&self) -> Result<()> {
        check_snaplen(self.snaplen).map_err(|e| anyhow::anyhow!("snaplen {e}"))?;
        check_rt_priority(self.rt_priority).map_err(|e| anyhow::anyhow!("rt_priority {e}"))?;
        Ok(())
    }

    pub fn new(out_dir: impl Into<PathBuf>, exe: impl Into<PathBuf>) -> EmuOptions {
        EmuOptions {
            out_dir: out_dir.into(),
            exe: exe.into(),
            snaplen: 65_535,
            spin_ns: 100_000,
            seed: None,
            replication: None,
            rt_priority: 10,
            verbose: false,
            progress: false,
        }
    }
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every workload program exited and the link had drained.
    FlowsDone,
    /// The scenario's duration passed.
    Duration,
    /// A workload program failed.
    AppFailed,
    /// SIGINT, SIGTERM or SIGHUP.
    Signal(i32),
}

impl Stop {
    pub fn name(self) -> String {
        match self {
            Stop::FlowsDone => "flows_done".into(),
            Stop::Duration => "duration".into(),
            Stop::AppFailed => "app_failed".into(),
            Stop::Signal(s) => format!("signal_{s}"),
        }
    }
}

/// What a run produced: the input of the analysis (`connections.csv` is written from the
/// captures by `lasthop-analysis`, called by the `lasthop emu` command after the run).
#[derive(Debug, Clone)]
pub struct RunOutputs {
    pub run_id: String,
    pub out_dir: PathBuf,
    /// `(host name, address, capture path)` for each host, in spec order.
    pub pcaps: Vec<(String, Ipv4Addr, PathBuf)>,
    pub events: PathBuf,
    pub app_logs: Vec<PathBuf>,
    pub lateness: LatenessSummary,
    pub stop: Stop,
    /// Workload programs that exited with an error or did not finish, with their status.
    pub app_failures: Vec<String>,
    /// Run-relative end time.
    pub end: Time,
    /// The lock on `out_dir`, held while these outputs live, so that what is written after
    /// the run (`connections.csv`) is still under it.
    pub dir_lock: Option<std::sync::Arc<lasthop_core::output::RunDirLock>>,
}

/// The run's analysis from its captures and `events.csv` (when the scenario logs), with what
/// the scenario asks for ([`lasthop_analysis::AnalysisOptions::for_scenario`], and the link
/// samples with `link_samples`): the tables a simulated run computes as it goes, written into
/// the run's directory (`connections.csv`, ...), and returned.
pub fn analyse(
    out: &RunOutputs,
    sc: &Scenario,
    link_samples: bool,
) -> Result<lasthop_analysis::RunAnalysis, lasthop_analysis::Error> {
    use lasthop_analysis as la;
    let captures: Vec<_> = out
        .pcaps
        .iter()
        .map(|(_, addr, pcap)| (std::net::IpAddr::V4(*addr), la::Capture::File(pcap)))
        .collect();
    let events = out.events.exists().then_some(out.events.as_path());
    let mut opts = la::AnalysisOptions::for_scenario(sc);
    opts.link_samples = link_samples;
    // The hosts run the machine's Linux: its RACK and tail loss probes, and no delayed early
    // retransmit (removed in 4.11, RACK does its work).
    (opts.rack, opts.tlp) = sc.emulated_rack_tlp(lasthop_scenario::kernel_release());
    opts.delayed_er = false;
    let run = la::analyse_run(&captures, events, &opts)?;
    la::write_run_files(&out.out_dir, &run)?;
    Ok(run)
}

/// Runs the scenario in real time. Returns when the flows are done (and the link has drained),
/// the duration has passed, or a stop signal came; the outputs are committed in every one of
/// these cases. Everything the run created is removed before this returns, also on error.
///
/// Before it creates anything the run reaps what dead runs left behind (their namespaces with
/// the TUN devices and processes in them, their registry entries; never a live run's), locks its
/// output directory for its whole length (a second run into it fails, naming this one's
/// process), and removes the temporary files a killed run left there; each says on stderr what
/// it removed.
pub fn run(sc: &Scenario, opts: &EmuOptions) -> Result<RunOutputs> {
    opts.check()?;
    preflight(sc)?;
    for w in warnings(sc) {
        lasthop_core::say!("warning: {w}");
    }
    reap_dead_runs();
    let lock = lasthop_core::output::RunDirLock::acquire(&opts.out_dir)?;
    for p in lasthop_core::output::remove_stale_partials(&opts.out_dir, 0)
        .with_context(|| format!("removing stale files in {}", opts.out_dir.display()))?
    {
        lasthop_core::say!(
            "removed {}: a temporary file an earlier run left unfinished",
            p.display()
        );
    }
    // From here Ctrl-C, SIGTERM and SIGHUP only end the run through the signalfd: the
    // teardown always runs.
    let (sigfd, old_mask) = sys::block_stop_signals().context("blocking stop signals")?;
    let result = run_blocked(sc, opts, &sigfd);
    // A signal that came during the teardown did not interrupt it; unless the run already
    // stopped for a signal, it is sent again once the mask is restored, so that it is not lost:
    // a caller that keeps the stop signals blocked (`lasthop emu`, `lasthop run`) takes it
    // then, any other process ends by it.
    let mut late = None;
    while let Some(s) = sys::read_signal(&sigfd) {
        late.get_or_insert(s);
    }
    sys::restore_signal_mask(&old_mask);
    if let Some(s) = late {
        if !matches!(&result, Ok(out) if matches!(out.stop, Stop::Signal(_))) {
            sys::signal_self(s);
        }
    }
    result.map(|mut out| {
        out.dir_lock = Some(std::sync::Arc::new(lock));
        out
    })
}

/// Setup, loop, summary. An error anywhere drops the `Resources`, which removes what was made.
fn run_blocked(sc: &Scenario, opts: &EmuOptions, sigfd: &SignalFd) -> Result<RunOutputs> {
    let run_id = netns::new_run_id();
    let mut res = setup::Resources::register(&run_id, opts.verbose)?;
    let hosts = setup::create_hosts(sc, opts, &run_id, &mut res, sigfd)?;
    let pcap_paths: Vec<PathBuf> = hosts.iter().map(|h| h.pcap_path.clone()).collect();
    let events = (sc.log != LogLevel::None)
        .then(|| lasthop_core::layout::RunFiles::new(&opts.out_dir).events_csv());
    let writer = writer::Writer::new(&pcap_paths, opts.snaplen, events)
        .context("creating the output files")?;
    let seeds = Seeds::new(
        opts.seed.unwrap_or(sc.seed),
        opts.replication.unwrap_or(sc.replication),
    );
    let link = sc.new_emulated_link(seeds);
    setup::check_signal(sigfd)?;
    // The loop's deadlines are absolute: no slack for the kernel to batch our wake-ups.
    let _ = sys::set_timer_slack(1);
    // Time 0 of the run, for the model and the programs' logs alike, far enough ahead that every
    // program is running and waiting for its start when it comes: taken at the spawn, the clients
    // of flows starting at 0 connected 11-23 ms late while the probes and CBR streams kept their
    // grid from time 0 (docs/sim-vs-emu.md, seed 000's e0 in the fidelity matrix). Before it the
    // link's clock stands at 0.
    let clock_start = kernel_clock::read();
    let t0 = sys::monotonic_ns() + workload_lead_ns(sc.flows.len());
    setup::start_workload(sc, opts, t0, &mut res, sigfd)?;
    let late = sys::monotonic_ns().saturating_sub(t0);
    if late > 0 {
        lasthop_core::say!(
            "warning: the workload's programs were running only {:.1} ms after the run's time 0: \
             flows starting before that started late",
            late as f64 / 1e6
        );
    }
    let mut rt = realtime::Realtime::new(sc, opts, sigfd, res, hosts, link, writer, t0)?;
    if opts.rt_priority > 0 {
        if let Err(e) = sys::set_realtime(opts.rt_priority) {
            lasthop_core::say!(
                "warning: no real-time scheduling ({e}); lateness will suffer under load"
            );
        }
    }
    let stop = rt.run();
    rt.end_pauses();
    sys::set_normal();
    let kernel_clock = kernel_clock::infer(&clock_start, &kernel_clock::read(), t0);
    summary::finish(sc, opts, run_id, rt, stop?, kernel_clock)
}

/// How far ahead of the workload's start the run's time 0 is set: 100 ms, and 10 ms more per flow
/// for its two programs (on the development VM the three flows of seed 000's fidelity runs were
/// all running 11-23 ms after their spawn began).
fn workload_lead_ns(flows: usize) -> u64 {
    (100 + 10 * flows as u64) * 1_000_000
}

/// What [`run`] does first: [`netns::cleanup`] of dead runs only, saying on stderr what it
/// removed; what it could not remove is a warning (the new run does not need it gone).
pub fn reap_dead_runs() -> netns::CleanupReport {
    let rep = netns::cleanup(false);
    for ns in &rep.removed {
        lasthop_core::say!(
            "reaped namespace {ns} (with its TUN device and processes): its run is dead"
        );
    }
    for id in &rep.registry_removed {
        lasthop_core::say!("reaped the registry entry of dead run {id}");
    }
    for e in &rep.errors {
        lasthop_core::say!("warning: could not reap {e}");
    }
    rep
}

/// Re-exported for the CLI: remove what killed runs left behind.
pub fn cleanup(force_unknown: bool) -> netns::CleanupReport {
    netns::cleanup(force_unknown)
}
