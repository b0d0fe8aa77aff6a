//! The `lasthop` command: one binary for checking specs, simulating, emulating, and the workload
//! programs the emulator starts inside its namespaces.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod analyze;
mod check;

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
    /// Load a spec and print what it describes, or every error in it.
    Check {
        /// A link spec (TOML).
        spec: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Check { spec } => check::run(&spec),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
