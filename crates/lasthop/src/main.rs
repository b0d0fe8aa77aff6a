//! The `lasthop` command: one binary for checking specs, simulating, emulating, and the workload
//! programs the emulator starts inside its namespaces.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod app;
mod check;
mod cleanup;
mod emu;

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
    /// Emulate a scenario in real time: real Linux hosts in network namespaces, joined through
    /// TUN devices by the link model (needs root).
    Emu(emu::EmuArgs),
    /// Remove the namespaces and processes that killed emulator runs left behind.
    Cleanup(cleanup::CleanupArgs),
    /// Workload programs the emulator starts inside its namespaces.
    #[command(subcommand)]
    App(app::AppCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { spec } => check::run(&spec),
        Command::Emu(args) => emu::run(args),
        Command::Cleanup(args) => cleanup::run(args),
        Command::App(cmd) => app::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
