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
    /// Results directory: <host>.pcap, events.csv, flow<i>-{send,recv}.csv, hosts.csv, summary.toml.
    #[arg(long)]
    pub out: PathBuf,
    /// Bytes of each packet kept in the captures.
    #[arg(long, default_value_t = 65_535)]
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
    /// SCHED_FIFO priority of the real-time loop (0: the normal scheduler).
    #[arg(long, default_value_t = 10)]
    pub rt_priority: i32,
    /// Print what is created, started and removed.
    #[arg(short, long)]
    pub verbose: bool,
}

pub fn run(args: EmuArgs) -> Result<()> {
    let sc = Scenario::load(&args.spec)?;
    let spin = parse_dur(&args.spin).context("--spin")?;
    let exe = std::env::current_exe().context("locating the lasthop binary")?;
    let mut opts = EmuOptions::new(&args.out, exe);
    opts.snaplen = args.snaplen.max(20);
    opts.spin_ns = spin.as_nanos();
    opts.seed = args.seed;
    opts.replication = args.replication;
    opts.verbose = args.verbose;
    opts.rt_priority = args.rt_priority.clamp(0, 99);
    let out = lasthop_emu::run(&sc, &opts)?;
    write_connections(&out)?;
    println!(
        "run {} ({}): ended at {} by {}",
        out.run_id,
        sc.name,
        out.end,
        out.stop.name()
    );
    println!("{}", out.lateness);
    println!("results in {}", out.out_dir.display());
    for f in &out.app_failures {
        eprintln!("warning: {f}");
    }
    match out.stop {
        Stop::Signal(s) => std::process::exit(128 + s),
        Stop::AppFailed => {
            anyhow::bail!("a workload program failed: {}", out.app_failures.join("; "))
        }
        Stop::FlowsDone | Stop::Duration => Ok(()),
    }
}

/// The hook for per-connection metrics: `connections.csv` comes from the pcap analyser
/// (`lasthop-analysis`), run over `out.pcaps` joined with `out.events` once it is wired in here.
/// The emulator itself writes no connection metrics.
fn write_connections(out: &RunOutputs) -> Result<()> {
    let _ = out;
    Ok(())
}
