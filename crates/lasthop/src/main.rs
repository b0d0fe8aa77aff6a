//! The `lasthop` command: one binary for checking specs, simulating, emulating, and the workload
//! programs the emulator starts inside its namespaces.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod check;

#[derive(Parser)]
#[command(name = "lasthop", version, about = "TCP over slow, lossy, variable-delay last-hop links: simulate and emulate")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load a spec and print what it describes, or every error in it.
    Check {
        /// A link spec (TOML).
        spec: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
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
