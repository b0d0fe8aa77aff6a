//! `lasthop check SPEC`: load a spec, print what it describes or why it cannot be used.
//!
//! The kind of spec (link, scenario, experiment) is told by its top-level keys, each kind by keys
//! only it has; the spec is then checked as that kind, every key of it. An empty spec is refused:
//! as a link it would describe an unlimited link nobody meant.

use anyhow::{bail, Context, Result};
use lasthop_experiment::Experiment;
use lasthop_link::LinkSpec;
use lasthop_scenario::{Mode, Scenario};
use std::path::Path;

pub use lasthop_experiment::spec::SpecKind as Kind;

/// The kind of spec a parsed document is (`lasthop_experiment::spec::detect`).
pub fn detect(t: &toml::Table) -> Result<Kind> {
    Ok(lasthop_experiment::spec::detect(t)?)
}

pub fn run(spec: &Path) -> Result<()> {
    let text = lasthop_core::spec::read_spec_text(spec)
        .map_err(|e| anyhow::anyhow!("{}: {e}", spec.display()))?;
    // A syntax error is reported by the link loader with its line (the syntax is the same for
    // every kind).
    let kind = match toml::from_str::<toml::Table>(&text) {
        Ok(t) => detect(&t).with_context(|| format!("{}", spec.display()))?,
        Err(_) => Kind::Link,
    };
    match kind {
        Kind::Experiment => {
            let exp = Experiment::load(spec)?;
            for w in &exp.warnings {
                eprintln!("{w}");
            }
            println!("{}: an experiment", spec.display());
            print!("{exp}");
            points_in_their_mode(&exp)?;
        }
        Kind::Scenario => {
            let (s, outputs) = lasthop_experiment::outputs::load_scenario(spec)?;
            if let Some(o) = outputs {
                println!(
                    "outputs (lasthop sim and emu; an experiment's over its defaults): {}",
                    lasthop_experiment::outputs::Outputs::EVERYTHING.with(&o)
                );
            }
            println!("{}: a scenario", spec.display());
            print!("{}", s.describe());
            println!();
            print!("{}", s.link.describe());
            verdicts(&s)?;
        }
        Kind::Link => {
            let cfg = LinkSpec::load(spec)?;
            println!("{}: a link spec", spec.display());
            print!("{}", cfg.describe());
            for w in cfg.warnings() {
                eprintln!("{w}");
            }
        }
    }
    Ok(())
}

/// Every point of an experiment in the experiment's mode (docs/modes.md): the first refusal is
/// the error; each warning is said once on stderr, with the first point it holds for. `check`
/// and `run` call it.
pub fn points_in_their_mode(exp: &Experiment) -> Result<()> {
    for w in lasthop_experiment::spec::points_in_their_mode(exp)? {
        eprintln!("{w}");
    }
    Ok(())
}

/// A scenario in both modes: what each refuses or warns about (docs/modes.md). The check
/// fails only when neither mode can run it.
fn verdicts(s: &Scenario) -> Result<()> {
    println!();
    let mut refused = vec![];
    for mode in [Mode::Sim, Mode::Emu] {
        match s.check_here(mode) {
            Ok(w) => {
                println!("in {}: runs ({} warnings)", mode.name(), w.len());
                for w in w {
                    eprintln!("{w} (in {})", mode.name());
                }
            }
            Err(e) => {
                println!("in {}: refused: {e}", mode.name());
                refused.push(e);
            }
        }
    }
    if refused.len() == 2 {
        bail!("the scenario runs in neither mode: {}", refused[0]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Result<Kind> {
        detect(&toml::from_str(text).unwrap())
    }

    #[test]
    fn kinds_by_their_own_keys() {
        assert_eq!(kind("[down]\nrate = \"64kbit\"\n").unwrap(), Kind::Link);
        assert_eq!(kind("mtu = \"576B\"\n").unwrap(), Kind::Link);
        assert_eq!(
            kind("name = \"x\"\nduration = \"1s\"\nlink = \"l.toml\"\n").unwrap(),
            Kind::Scenario
        );
        assert_eq!(
            kind("scenario = \"s.toml\"\n[matrix.link]\na = { link = \"l.toml\" }\n").unwrap(),
            Kind::Experiment
        );
        let e = kind("").unwrap_err().to_string();
        assert!(e.contains("the spec is empty"), "{e}");
        let e = kind("# only a comment\n").unwrap_err().to_string();
        assert!(e.contains("the spec is empty"), "{e}");
        assert_eq!(kind("name = \"passthrough\"\n").unwrap(), Kind::Link);
    }
}
