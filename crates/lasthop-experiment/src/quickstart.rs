//! The quick start and the files it names, embedded so that `lasthop run` (and Python's
//! `lasthop.run()`) works anywhere, without the repository.

use crate::spec::Experiment;
use anyhow::{Context, Result};
use std::path::Path;

/// The quick start's files, by their paths in the repository.
pub const FILES: [(&str, &str); 4] = [
    (
        "experiments/quickstart.toml",
        include_str!("../../../experiments/quickstart.toml"),
    ),
    (
        "examples/scenarios/seed000-e0-2tcp.toml",
        include_str!("../../../examples/scenarios/seed000-e0-2tcp.toml"),
    ),
    (
        "examples/links/seed000-e0.toml",
        include_str!("../../../examples/links/seed000-e0.toml"),
    ),
    (
        "examples/links/seed000-r1.toml",
        include_str!("../../../examples/links/seed000-r1.toml"),
    ),
];

/// Writes the embedded quick start under `<out>/spec/` (its specs name each other by relative
/// paths; a stable place keeps a rerun's fingerprints equal, so finished runs are kept) and
/// loads it.
pub fn load(out: &Path) -> Result<Experiment> {
    let dir = out.join("spec");
    for (path, text) in FILES {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("a relative path with a folder"))
            .with_context(|| format!("creating {}", dir.display()))?;
        lasthop_core::output::AtomicFile::write_all_to(&p, text.as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(Experiment::load(dir.join(FILES[0].0))?)
}
