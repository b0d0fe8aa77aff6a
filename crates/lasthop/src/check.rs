//! `lasthop check SPEC`: load a spec, print what it describes or why it cannot be used.

use anyhow::Result;
use lasthop_link::LinkSpec;
use std::path::Path;

pub fn run(spec: &Path) -> Result<()> {
    let cfg = LinkSpec::load(spec)?;
    print!("{}", cfg.describe());
    Ok(())
}
