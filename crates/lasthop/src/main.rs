//! The `lasthop` command: one binary for checking specs, simulating, emulating, and the workload
//! programs the emulator starts inside its namespaces.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

// First: its print!/println!/eprint!/eprintln! replace std's in every module below.
#[macro_use]
mod out;

mod analyze;
mod app;
mod check;
mod cleanup;
mod emu;
mod merge;
mod outputs;
mod report;
mod run;
mod signals;
mod sim;
mod slurm;

#[derive(Parser)]
#[command(
    name = "lasthop",
    version,
    about = "TCP over slow, lossy, variable-delay last-hop links: simulate and emulate"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Per-connection TCP statistics (tcptrace-class) of a capture, optionally merged with the
    /// other side's capture and joined with the link's event log; prints a table, writes CSV.
    Analyze(analyze::AnalyzeArgs),
    /// Load a spec (link, scenario or experiment: told by its keys) and print what it
    /// describes, or what is wrong with it.
    Check {
        /// A link spec, a scenario or an experiment (TOML).
        spec: PathBuf,
    },
    /// Simulate one replication of a scenario in virtual time (no root needed). Without a spec,
    /// runs seed 000's two bulk transfers over its optimal 64 kbit/s link.
    Sim(sim::SimArgs),
    /// Run an experiment: expand its matrix, run every replication (resumable), write the
    /// summaries and the HTML report.
    Run(run::RunArgs),
    /// Combine the shard directories of one experiment (`run --shard K/N`) into one results
    /// directory with its summary.csv, summary.json and report.html.
    Merge(merge::MergeArgs),
    /// Write (and with --submit, submit) an experiment as a Slurm job array of shards and a
    /// merge job that depends on it; prints the job ids.
    Slurm(slurm::SlurmArgs),
    /// Rebuild an experiment's summary.csv, summary.json and report.html from its results.
    Report(report::ReportArgs),
    /// Emulate a scenario in real time: real Linux hosts in network namespaces, joined through
    /// TUN devices by the link model (needs root).
    Emu(emu::EmuArgs),
    /// Remove the namespaces and processes that killed emulator runs left behind.
    Cleanup(cleanup::CleanupArgs),
    /// Workload programs the emulator starts inside its namespaces.
    #[command(subcommand)]
    App(app::AppCommand),
}

fn main() {
    let code = run();
    // Ends through the registry of temporary files: a thread still writing one when the
    // command is done (a workload program's signal thread saving its log as the program ends)
    // leaves no `.lasthop-*.partial` behind. Everything of the command's own is committed or
    // dropped by now.
    lasthop_core::output::exit_cleanly(code)
}

fn run() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Check { spec } => check::run(&spec),
        Command::Sim(args) => sim::run(args),
        Command::Run(args) => run::run(args),
        Command::Report(args) => report::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Slurm(args) => slurm::run(args),
        Command::Emu(args) => emu::run(args),
        Command::Cleanup(args) => cleanup::run(args),
        Command::App(cmd) => app::run(cmd),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        return 1;
    }
    match out::stdout_error() {
        None => 0,
        // The reader went away (`| head`): quietly, as SIGPIPE would have ended the process.
        Some(std::io::ErrorKind::BrokenPipe) => 128 + 13,
        Some(kind) => {
            eprintln!("error: writing standard output: {kind}");
            1
        }
    }
}
