//! `lasthop emu SPEC --out DIR`: run a scenario on real Linux hosts (network namespaces) joined
//! through the link model in real time. See `docs/emulator.md`.

use anyhow::{Context, Result};
use lasthop_core::units::parse_dur;
use lasthop_emu::{EmuOptions, RunOutputs, Stop};
use lasthop_scenario::Scenario;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct EmuArgs {
    /// A scenario spec (TOML): hosts, their settings, the link, the flows.
    pub spec: PathBuf,
    /// Results directory: <host>.pcap, events.csv, flow<i>-{send,recv}.csv, hosts.csv, summary.toml,
    /// connections.csv.
    #[arg(long)]
    pub out: PathBuf,
    /// Bytes of each packet kept in the captures (120..=65535: the analysis reads every IP and
    /// TCP header whole).
    #[arg(long, default_value_t = 65_535, value_parser = snaplen)]
    pub snaplen: u32,
    /// How long before each deadline the loop stops sleeping and spins.
    #[arg(long, default_value = "100us")]
    pub spin: String,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override the scenario's replication number.
    #[arg(long)]
    pub replication: Option<u64>,
    /// SCHED_FIFO priority of the real-time loop, 1..=99 (0: the normal scheduler).
    #[arg(long, default_value_t = 10, value_parser = rt_priority)]
    pub rt_priority: i32,
    /// Print what is created, started and removed.
    #[arg(short, long)]
    pub verbose: bool,
    /// What the run keeps beyond its tables (default: everything; captures and events.csv are
    /// written and analysed, then removed when not kept; events_level does not apply).
    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,
    /// No progress line (every 5 s on stderr: elapsed time, bytes delivered per flow, lateness).
    #[arg(short, long)]
    pub quiet: bool,
}

fn snaplen(s: &str) -> Result<u32, String> {
    let n = s.parse::<u32>().map_err(|_| {
        format!(
            "{s:?} is not a number of bytes: allowed {}..=65535",
            lasthop_emu::MIN_SNAPLEN
        )
    })?;
    lasthop_emu::check_snaplen(n)
}

fn rt_priority(s: &str) -> Result<i32, String> {
    let n = s.parse::<i32>().map_err(|_| {
        format!("{s:?} is not a number: allowed 1..=99, or 0 for the normal scheduler")
    })?;
    lasthop_emu::check_rt_priority(n)
}

pub fn run(args: EmuArgs) -> Result<()> {
    // From the start, a stop signal only ends the command through the emulator's teardown (or,
    // once the run is over, the signal thread below): never with its lock file and temporary
    // files left behind.
    crate::signals::block()?;
    let (sc, spec_outputs) = lasthop_experiment::outputs::load_scenario(&args.spec)?;
    let keep = lasthop_experiment::outputs::Outputs::EVERYTHING
        .with(&spec_outputs.unwrap_or_default())
        .with(&args.outputs.spec())
        .keep(true);
    // Only into a new or empty directory, or a run's own (never over files not lasthop's);
    // nothing is created before the emulator's own checks.
    lasthop_core::output::check_run_dir(&args.out)?;
    let spin = parse_dur(&args.spin).context("--spin")?;
    let exe = std::env::current_exe().context("locating the lasthop binary")?;
    let mut opts = EmuOptions::new(&args.out, exe);
    opts.snaplen = args.snaplen;
    opts.spin_ns = spin.as_nanos();
    opts.seed = args.seed;
    opts.replication = args.replication;
    opts.verbose = args.verbose;
    opts.progress = !args.quiet;
    opts.rt_priority = args.rt_priority;
    let ran = lasthop_emu::run(&sc, &opts);
    if args.out.is_dir() {
        // The emulator made the directory: it is a run's now (a rerun may write into it).
        lasthop_core::output::mark_run_dir(&args.out)?;
    }
    let out = match ran {
        Ok(out) => out,
        Err(e) => {
            if let Some(lasthop_emu::Interrupted(s)) = e.downcast_ref() {
                // What the setup made is removed already.
                eprintln!("interrupted by signal {s} during the setup: nothing ran; what the setup made is removed");
                lasthop_core::output::exit_cleanly(128 + s);
            }
            return Err(e);
        }
    };
    // The run is over: a signal now ends the analysis, removing its temporary files and the
    // lock; the run's own outputs stay.
    let shown = out.out_dir.display().to_string();
    crate::signals::exit_on_stop_signal(move |s| {
        eprintln!("\ninterrupted by signal {s} while analysing the captures: connections.csv is not written; the run's outputs are in {shown}")
    })?;
    println!(
        "run {} ({}): ended at {} by {}",
        out.run_id,
        sc.name,
        out.end,
        out.stop.name()
    );
    println!("{}", out.lateness);
    if out.lateness.max > 10_000_000 {
        // Seawind's threshold: past 10 ms the link's timing is no longer what the spec says.
        eprintln!(
            "warning: {} releases were later than 1 ms, the latest by {:.1} ms: the machine did not keep the link's timing (see docs/emulator.md, Lateness)",
            out.lateness.over_1ms,
            out.lateness.max as f64 / 1e6
        );
    }
    write_connections(&out, &sc)?;
    lasthop_experiment::backend::remove_unkept(&out, &sc, &keep)?;
    println!("results in {}", out.out_dir.display());
    for f in &out.app_failures {
        eprintln!("warning: {f}");
    }
    match out.stop {
        // Without the lock file (`exit_cleanly` removes it; `process::exit` would leave it).
        Stop::Signal(s) => lasthop_core::output::exit_cleanly(128 + s),
        Stop::AppFailed => {
            anyhow::bail!("a workload program failed: {}", out.app_failures.join("; "))
        }
        Stop::FlowsDone | Stop::Duration => Ok(()),
    }
}

/// Per-connection metrics: `connections.csv` from the pcap analyser (`lasthop-analysis`), the
/// same code path as `lasthop analyze`. Each host's capture is analysed; a connection's row
/// merges the capture at its client (start and end: elapsed time) with the one at its server,
/// counts come from the data sender's side, drops by cause from the joined event log. The run's
/// own outputs stand whatever happens here: a failure is a warning.
fn write_connections(out: &RunOutputs, sc: &Scenario) -> Result<()> {
    if let Err(e) = analyse(out, sc) {
        eprintln!("warning: connections.csv not written: {e:#}");
    }
    Ok(())
}

fn analyse(out: &RunOutputs, sc: &Scenario) -> Result<()> {
    let run = lasthop_emu::analyse(out, sc, false).context("analysing the captures")?;
    print!("{}", lasthop_analysis::format_table(&run.conns));
    print!("{}", lasthop_analysis::format_udp_table(&run.udp));
    print!("{}", lasthop_analysis::format_ping_table(&run.pings));
    print!("{}", lasthop_analysis::format_page_table(&run.pages));
    Ok(())
}
