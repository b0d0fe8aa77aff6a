//! `lasthop sim [SPEC] [--out DIR]`: one replication of a scenario in virtual time.
//!
//! Without SPEC it runs the embedded default: seed 000's two bulk transfers over the optimal
//! 64 kbit/s link (`examples/scenarios/seed000-e0-2tcp.toml`).

use anyhow::{Context, Result};
use lasthop_experiment::single::{simulate_scenario, SimChoices};
use lasthop_scenario::Scenario;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct SimArgs {
    /// A scenario spec (TOML); the embedded seed 000 e0 scenario when absent.
    spec: Option<PathBuf>,
    /// Where to write the captures, events.csv, tcp_trace.csv and connections.csv
    /// (default: results/<scenario name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the scenario's replication number.
    #[arg(long)]
    replication: Option<u64>,
    /// What the run keeps beyond its tables (default: everything; "report" means this run).
    #[command(flatten)]
    outputs: crate::outputs::OutputArgs,
}

const DEFAULT_SCENARIO: &str = include_str!("../../../examples/scenarios/seed000-e0-2tcp.toml");
const DEFAULT_LINK: &str = include_str!("../../../examples/links/seed000-e0.toml");

fn embedded() -> Result<Scenario> {
    // The scenario names its link by a relative path; give it one in a private directory.
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    std::fs::create_dir_all(dir.path().join("scenarios"))?;
    std::fs::create_dir_all(dir.path().join("links"))?;
    std::fs::write(dir.path().join("links/seed000-e0.toml"), DEFAULT_LINK)?;
    Ok(Scenario::from_str_in(
        DEFAULT_SCENARIO,
        &dir.path().join("scenarios"),
    )?)
}

/// A link spec given where a scenario belongs gets a hint rather than only "unknown field".
fn with_hint(path: &Path, e: lasthop_link::SpecError) -> anyhow::Error {
    let link_keys = ["both", "down", "up", "states", "initial_state", "mtu"];
    let looks_like_link = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .is_some_and(|t| !t.contains_key("hosts") && link_keys.iter().any(|k| t.contains_key(*k)));
    if looks_like_link {
        anyhow::anyhow!(
            "{e}\n(this looks like a link spec: `lasthop sim` takes a scenario, which names its link with `link = \"...\"`; see examples/scenarios/)"
        )
    } else {
        e.into()
    }
}

pub fn run(args: SimArgs) -> Result<()> {
    let (scenario, spec_outputs) = match &args.spec {
        Some(p) => lasthop_experiment::outputs::load_scenario(p).map_err(|e| with_hint(p, e))?,
        None => (embedded()?, None),
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&scenario.name));
    let (name, seed, replication) = (
        scenario.name.clone(),
        args.seed.unwrap_or(scenario.seed),
        args.replication.unwrap_or(scenario.replication),
    );
    // Ctrl-C or SIGTERM: the run's temporary files (its captures and event log so far, which
    // can be gigabytes) are removed, and the process ends with 128 + the signal.
    let shown = out.display().to_string();
    crate::signals::exit_on_stop_signal(move |s| {
        eprintln!(
            "\ninterrupted by signal {s}: the run is not finished; its temporary files in {shown} are removed"
        )
    })?;
    let choices = SimChoices {
        spec_outputs,
        outputs: args.outputs.spec(),
        seed: args.seed,
        replication: args.replication,
    };
    let started = std::time::Instant::now();
    // The library's one simulated replication (Python's `lasthop.sim` runs the same); what does
    // nothing in simulation and the stale files it removes are said as they come.
    let r = simulate_scenario(scenario, &choices, &out, &mut |w| eprintln!("{w}"))?;
    let wall = started.elapsed();
    println!(
        "{}: seed {}, replication {}, simulated {:.3} s in {:.3} s of wall time",
        name,
        seed,
        replication,
        r.end.as_secs_f64(),
        wall.as_secs_f64()
    );
    println!();
    print!("{}", lasthop_analysis::format_table(&r.connections));
    println!();
    if !r.udp.is_empty() {
        print!("{}", lasthop_analysis::format_udp_table(&r.udp));
        println!();
    }
    if !r.analysis.pings.is_empty() {
        print!("{}", lasthop_analysis::format_ping_table(&r.analysis.pings));
        println!();
    }
    if !r.pages.is_empty() {
        print!("{}", lasthop_analysis::format_page_table(&r.pages));
        println!();
    }
    let secs = r.end.as_nanos() as f64 / 1e9;
    for ((d, s), m) in ["down", "up"].iter().zip(&r.link).zip(&r.meters) {
        println!(
            "link {d}: {} packets in, {} out; drops: {} queue, {} red, {} aqm, {} error; {} ECN marks; {} link errors; busy {:.1} % of {secs:.3} s; router queue mean {:.2}, max {} packets",
            s.arrived, s.released, s.drops_queue, s.drops_red, s.drops_aqm, s.drops_error, s.marks, s.errors,
            if secs > 0.0 { m.busy_ns as f64 / 1e7 / secs } else { 0.0 },
            m.queue_mean, m.queue_max
        );
        // The issue-29 impairments, only when they acted.
        let extras: Vec<String> = [
            (s.drops_input, "dropped at the unread input"),
            (s.drops_output, "dropped by the output dropper"),
            (s.corrupted, "damaged and forwarded"),
            (s.duplicated, "duplicated"),
            (s.reordered, "reordered"),
            (s.background, "background packets sent"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !extras.is_empty() {
            println!("link {d}: {}", extras.join(", "));
        }
    }
    for f in &r.flows {
        if let Some(why) = &f.aborted {
            println!("flow {} ({} -> {}) aborted: {why}", f.flow, f.from, f.to);
        } else if f.reliable && f.delivered < f.bytes && f.bytes != lasthop_apps::bulk::UNLIMITED {
            println!(
                "flow {} ({} -> {}) unfinished: {} of {} bytes delivered",
                f.flow, f.from, f.to, f.delivered, f.bytes
            );
        }
    }
    println!("\nwrote {}", out.display());
    Ok(())
}
