//! A scenario spec's checks and its resolution into a [`Scenario`], one file per part, in the
//! order they run: the link (`link.rs`), the hosts and host groups (`hosts.rs`, with
//! `groups.rs`: `count`, values per member, names), the shared advertised windows (in
//! `hosts.rs`), the flows (`flows.rs`) and the middleboxes (`middleboxes.rs`). The first
//! problem is the error, naming its key.

pub mod flows;
pub mod groups;
pub mod hosts;
pub mod link;
pub mod middleboxes;

use crate::config::{ClockPhase, Host, Scenario};
use crate::schema::ScenarioSpec;
use flows::validate_flows;
use hosts::{validate_hosts, validate_shared_windows};
use lasthop_core::spec::{err, load_file, SpecError};
use lasthop_core::units::parse_dur;
use lasthop_core::Dur;
use link::load_link;
use middleboxes::validate_middleboxes;
use std::path::Path;

impl ScenarioSpec {
    /// Reads and validates a scenario file: the same as [`Scenario::load`].
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, SpecError> {
        Scenario::load(path)
    }

    /// Parses and validates TOML text: the same as [`Scenario::from_str_in`].
    pub fn from_str_in(text: &str, base_dir: &Path) -> Result<Scenario, SpecError> {
        Scenario::from_str_in(text, base_dir)
    }

    /// Validates the spec, loading the link spec relative to `base_dir`.
    pub fn validate(&self, base_dir: &Path) -> Result<Scenario, SpecError> {
        if let Some(name) = &self.name {
            lasthop_core::spec::check_dir_name("name", "scenario name", name)?;
        }
        let link_path = base_dir.join(&self.link);
        let link = load_link(&link_path, &self.link_set)?;
        if self.duration == Dur::ZERO {
            return Err(err("duration", "0s: a run must last longer than 0s"));
        }
        let (mut hosts, entries) = validate_hosts(&self.hosts, &link)?;
        validate_shared_windows(&self.hosts, &mut hosts, &entries)?;
        let flows = validate_flows(self, &hosts, &entries)?;
        let middleboxes = validate_middleboxes(&self.middleboxes, &self.hosts, &hosts)?;
        let clock_phase = self.clock_phase(&hosts)?;
        Ok(Scenario {
            clock_phase,
            middleboxes,
            name: self.name.clone().unwrap_or_else(|| "scenario".into()),
            description: self.description.clone(),
            seed: self.seed.unwrap_or(1),
            replication: self.replication.unwrap_or(0),
            duration: self.duration,
            link_path,
            link,
            log: self.log.unwrap_or_default(),
            hosts,
            flows,
        })
    }
}

impl ScenarioSpec {
    /// `clock_phase`: one of its three forms; a shared or given phase needs one `hz` for all
    /// hosts, as one kernel has.
    fn clock_phase(&self, hosts: &[Host]) -> Result<Option<ClockPhase>, SpecError> {
        let Some(text) = self.clock_phase.as_deref() else {
            return Ok(None);
        };
        let phase = match text {
            "per_host" => ClockPhase::PerHost,
            "shared" => ClockPhase::Shared,
            _ => ClockPhase::Given(parse_dur(text).map_err(|e| {
                err(
                    "clock_phase",
                    format!("{text:?}: allowed \"per_host\", \"shared\" or a duration such as \"12ms\" ({e})"),
                )
            })?),
        };
        if phase != ClockPhase::PerHost {
            if let Some(h) = hosts.iter().find(|h| h.tcp.hz != hosts[0].tcp.hz) {
                return Err(err(
                    "clock_phase",
                    format!(
                        "{text:?} puts the hosts on one kernel, which has one HZ, but {} runs at {} and {} at {}: give them one `tcp.hz` or use \"per_host\"",
                        hosts[0].name, hosts[0].tcp.hz, h.name, h.tcp.hz
                    ),
                ));
            }
        }
        Ok(Some(phase))
    }
}

impl Scenario {
    /// Reads and validates a scenario file (and the link spec it names).
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, SpecError> {
        let path = path.as_ref();
        let base = path.parent().unwrap_or(Path::new("."));
        load_file(path, |text| Scenario::from_str_in(text, base))
    }

    /// Parses and validates TOML text; the link path is relative to `base_dir`.
    pub fn from_str_in(text: &str, base_dir: &Path) -> Result<Scenario, SpecError> {
        ScenarioSpec::parse(text)?.validate(base_dir)
    }
}
