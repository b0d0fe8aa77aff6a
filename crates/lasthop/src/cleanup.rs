//! `lasthop cleanup`: remove what killed emulator runs left behind.

use anyhow::{bail, Result};

#[derive(clap::Args, Debug)]
pub struct CleanupArgs {
    /// Also remove `lh-XXXXXX-*` namespaces that no registered run explains (e.g. after the
    /// registry in /run/lasthop was deleted). Live runs are never touched.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: CleanupArgs) -> Result<()> {
    let rep = lasthop_emu::cleanup(args.force);
    for ns in &rep.removed {
        println!("removed namespace {ns}");
    }
    for id in &rep.registry_removed {
        println!("removed registry entry of dead run {id}");
    }
    for ns in &rep.kept_live {
        println!("kept {ns}: its run is still alive");
    }
    for ns in &rep.kept_unknown {
        println!("kept {ns}: no registered run created it (use --force to remove it anyway)");
    }
    if rep.removed.is_empty() && rep.registry_removed.is_empty() {
        println!("nothing to clean up");
    }
    if !rep.errors.is_empty() {
        bail!("could not remove: {}", rep.errors.join("; "));
    }
    Ok(())
}
