//! `lasthop check SPEC`: load a spec, print what it describes or why it cannot be used.
//!
//! The kind of spec is told by its top-level keys: a scenario names `hosts`, `flows` or a
//! `link` file; anything else is read as a link spec. Either way every key is checked.

use anyhow::{Context, Result};
use lasthop_link::LinkSpec;
use lasthop_scenario::Scenario;
use std::path::Path;

pub fn run(spec: &Path) -> Result<()> {
    let text = std::fs::read_to_string(spec)
        .with_context(|| format!("{}: cannot read the file", spec.display()))?;
    // A syntax error is reported by the loaders below with its line; only sniff valid TOML.
    let scenario = toml::from_str::<toml::Table>(&text)
        .map(|t| {
            ["hosts", "flows", "link"]
                .iter()
                .any(|k| t.contains_key(*k))
        })
        .unwrap_or(false);
    if scenario {
        let s = Scenario::load(spec)?;
        print!("{}", s.describe());
        println!();
        print!("{}", s.link.describe());
    } else {
        let cfg = LinkSpec::load(spec)?;
        print!("{}", cfg.describe());
    }
    Ok(())
}
