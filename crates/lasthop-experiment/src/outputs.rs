//! Which files a run keeps beyond its tables (`connections.csv` and the other analysis tables,
//! `link.csv`, `metrics.json`, always written): the key `outputs` of a scenario and of an
//! experiment, and the flags `--captures`, `--events`, `--events-level`, `--tcp-trace`.
//!
//! ```toml
//! [outputs]
//! captures = "report"      # "all" | "report" (the report run's only) | "none" | ["host", ...]
//! events = "report"        # which runs keep events.csv: "all" | "report" | "none"
//! events_level = "all"     # its rows: "all" (what the scenario's `log` records) | "drops"
//! tcp_trace = "report"     # which runs keep tcp_trace.csv (simulation): "all" | "report" | "none"
//! format = "csv"           # events and tcp_trace as "csv" or "parquet" (events.parquet, ...)
//! ```
//!
//! An experiment keeps these for its report run only by default, so a sweep is bound by the
//! model, not the disk; `lasthop sim` and `lasthop emu` keep everything. Later values win: the
//! defaults, then the scenario's `[outputs]`, then the experiment's, then the flags. Whatever a
//! run keeps, its tables are the same: the analysis sees every packet and event in process.
//! A simulated run's files that were not kept can be made again (`lasthop report --run`, which
//! runs it again: same seed, same files).

use lasthop_core::spec::{err, from_value, SpecError};
use lasthop_link::LogLevel;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which runs keep a kind of file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runs {
    /// Every run.
    All,
    /// The run the report shows (`report_run`, else the first point's replication 0); for a
    /// single run (`lasthop sim`, `lasthop emu`), that run.
    Report,
    /// No run.
    None,
}

impl Runs {
    pub fn name(self) -> &'static str {
        match self {
            Runs::All => "all",
            Runs::Report => "report",
            Runs::None => "none",
        }
    }

    /// Whether a run (the report's or not) keeps the file.
    pub fn keeps(self, report: bool) -> bool {
        match self {
            Runs::All => true,
            Runs::Report => report,
            Runs::None => false,
        }
    }
}

impl FromStr for Runs {
    type Err = String;
    fn from_str(s: &str) -> Result<Runs, String> {
        match s {
            "all" => Ok(Runs::All),
            "report" => Ok(Runs::Report),
            "none" => Ok(Runs::None),
            _ => Err(format!("{s:?}: allowed \"all\", \"report\" or \"none\"")),
        }
    }
}

impl fmt::Display for Runs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The value of `captures`: which runs keep every host's capture, or the hosts whose captures
/// every run keeps (a host group's name stands for its members).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CaptureChoice {
    Runs(Runs),
    Hosts(Vec<String>),
}

impl FromStr for CaptureChoice {
    type Err = String;
    /// `all`, `report`, `none`, or host names joined by commas.
    fn from_str(s: &str) -> Result<CaptureChoice, String> {
        if let Ok(r) = s.parse::<Runs>() {
            return Ok(CaptureChoice::Runs(r));
        }
        let hosts: Vec<String> = s.split(',').map(|h| h.trim().to_string()).collect();
        if hosts.iter().any(|h| h.is_empty()) {
            return Err(format!(
                "{s:?}: allowed \"all\", \"report\", \"none\" or host names joined by commas"
            ));
        }
        Ok(CaptureChoice::Hosts(hosts))
    }
}

/// The `events_level` values: which rows `events.csv` keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventsLevel {
    /// Every row the scenario's `log` level records.
    All,
    /// Drops, marks, link errors, state changes and middlebox actions only.
    Drops,
}

impl EventsLevel {
    fn level(self) -> LogLevel {
        match self {
            EventsLevel::All => LogLevel::All,
            EventsLevel::Drops => LogLevel::Drops,
        }
    }
}

impl FromStr for EventsLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<EventsLevel, String> {
        match s {
            "all" => Ok(EventsLevel::All),
            "drops" => Ok(EventsLevel::Drops),
            _ => Err(format!("{s:?}: allowed \"all\" or \"drops\"")),
        }
    }
}

/// The `format` values: the form of the large files a run keeps (`events`, `tcp_trace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// `events.csv`, `tcp_trace.csv`.
    Csv,
    /// `events.parquet`, `tcp_trace.parquet`: the same columns, typed and compressed
    /// (`lasthop_analysis::files::columnar`; every reader of the files takes either).
    Parquet,
}

impl FromStr for TableFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<TableFormat, String> {
        match s {
            "csv" => Ok(TableFormat::Csv),
            "parquet" => Ok(TableFormat::Parquet),
            _ => Err(format!("{s:?}: allowed \"csv\" or \"parquet\"")),
        }
    }
}

/// The `outputs` table as written: every key optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputsSpec {
    pub captures: Option<CaptureChoice>,
    pub events: Option<Runs>,
    pub events_level: Option<EventsLevel>,
    pub tcp_trace: Option<Runs>,
    pub format: Option<TableFormat>,
}

impl OutputsSpec {
    /// Reads an `outputs` table (`key` names it in errors).
    pub fn of(value: toml::Value, key: &str) -> Result<OutputsSpec, SpecError> {
        from_value(value, key)
    }

    /// Takes the `outputs` table out of a scenario's TOML document (the scenario itself knows
    /// nothing of it): its value, checked, if there was one.
    pub fn take_from(doc: &mut toml::Value) -> Result<Option<OutputsSpec>, SpecError> {
        let Some(t) = doc.as_table_mut() else {
            return Ok(None);
        };
        match t.remove("outputs") {
            None => Ok(None),
            Some(v @ toml::Value::Table(_)) => OutputsSpec::of(v, "outputs").map(Some),
            Some(v) => Err(err(
                "outputs",
                format!("{v}: allowed a table (captures, events, events_level, tcp_trace, format)"),
            )),
        }
    }

    /// `over`'s keys over these.
    pub fn then(&self, over: &OutputsSpec) -> OutputsSpec {
        OutputsSpec {
            captures: over.captures.clone().or_else(|| self.captures.clone()),
            events: over.events.or(self.events),
            events_level: over.events_level.or(self.events_level),
            tcp_trace: over.tcp_trace.or(self.tcp_trace),
            format: over.format.or(self.format),
        }
    }
}

/// What the runs keep, resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outputs {
    pub captures: CaptureChoice,
    pub events: Runs,
    pub events_level: EventsLevel,
    pub tcp_trace: Runs,
    #[serde(default = "csv")]
    pub format: TableFormat,
}

fn csv() -> TableFormat {
    TableFormat::Csv
}

/// What one run keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keep {
    pub captures: lasthop_sim::Captures,
    /// `events.csv` and its level.
    pub events: Option<LogLevel>,
    pub tcp_trace: bool,
    /// `events` and `tcp_trace` as Parquet files ([`Keep::finish`]).
    pub parquet: bool,
}

impl Keep {
    /// Everything: every capture, `events.csv` at the scenario's level, `tcp_trace.csv`.
    pub const ALL: Keep = Keep {
        captures: lasthop_sim::Captures::All,
        events: Some(LogLevel::All),
        tcp_trace: true,
        parquet: false,
    };

    /// The run's kept files in the chosen form, once the run (and its analysis) is done with
    /// them: with `parquet`, `events.csv` and `tcp_trace.csv` become `events.parquet` and
    /// `tcp_trace.parquet`.
    pub fn finish(&self, dir: &std::path::Path) -> Result<(), lasthop_analysis::files::FileError> {
        if !self.parquet {
            return Ok(());
        }
        let f = lasthop_core::layout::RunFiles::new(dir);
        for csv in [f.events_csv(), f.tcp_trace_csv()] {
            if csv.exists() {
                lasthop_analysis::files::columnar::csv_to_parquet(&csv)?;
            }
        }
        Ok(())
    }

    /// The simulator's options for a run into `dir` that keeps this (its tables and link
    /// samples computed in process, each file left unsynced for the runner's one sync).
    pub fn sim_options(&self, dir: &std::path::Path) -> lasthop_sim::OutputOptions {
        lasthop_sim::OutputOptions {
            dir: Some(dir.to_path_buf()),
            analyse: true,
            captures: self.captures.clone(),
            events: self.events,
            tcp_trace: self.tcp_trace,
            link_samples: true,
            sync_each: false,
        }
    }
}

impl Outputs {
    /// An experiment's default: captures, `events.csv` and `tcp_trace.csv` for the report run
    /// only.
    pub const SWEEP: Outputs = Outputs {
        captures: CaptureChoice::Runs(Runs::Report),
        events: Runs::Report,
        events_level: EventsLevel::All,
        tcp_trace: Runs::Report,
        format: TableFormat::Csv,
    };

    /// `lasthop sim`'s and `lasthop emu`'s default: everything.
    pub const EVERYTHING: Outputs = Outputs {
        captures: CaptureChoice::Runs(Runs::All),
        events: Runs::All,
        events_level: EventsLevel::All,
        tcp_trace: Runs::All,
        format: TableFormat::Csv,
    };

    /// These with `spec`'s keys over them.
    pub fn with(&self, spec: &OutputsSpec) -> Outputs {
        Outputs {
            captures: spec.captures.clone().unwrap_or(self.captures.clone()),
            events: spec.events.unwrap_or(self.events),
            events_level: spec.events_level.unwrap_or(self.events_level),
            tcp_trace: spec.tcp_trace.unwrap_or(self.tcp_trace),
            format: spec.format.unwrap_or(self.format),
        }
    }

    /// What a run keeps; `report`: whether it is the report run (a single run is).
    pub fn keep(&self, report: bool) -> Keep {
        Keep {
            captures: match &self.captures {
                CaptureChoice::Runs(r) if r.keeps(report) => lasthop_sim::Captures::All,
                CaptureChoice::Runs(_) => lasthop_sim::Captures::None,
                CaptureChoice::Hosts(h) => lasthop_sim::Captures::Hosts(h.clone()),
            },
            events: self
                .events
                .keeps(report)
                .then_some(self.events_level.level()),
            tcp_trace: self.tcp_trace.keeps(report),
            parquet: self.format == TableFormat::Parquet,
        }
    }

    /// The host names that are no host (or group) of `scenario`.
    pub fn unknown_hosts(&self, scenario: &lasthop_scenario::Scenario) -> Vec<String> {
        let CaptureChoice::Hosts(h) = &self.captures else {
            return vec![];
        };
        h.iter()
            .filter(|n| {
                !scenario
                    .hosts
                    .iter()
                    .any(|x| &&x.name == n || x.group.as_ref().is_some_and(|g| &g.0 == *n))
            })
            .cloned()
            .collect()
    }
}

impl fmt::Display for Outputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let captures = match &self.captures {
            CaptureChoice::Runs(r) => format!("{r} runs"),
            CaptureChoice::Hosts(h) => format!("hosts {} in every run", h.join(", ")),
        };
        let level = match self.events_level {
            EventsLevel::All => "",
            EventsLevel::Drops => " (drops only)",
        };
        let ext = match self.format {
            TableFormat::Csv => "csv",
            TableFormat::Parquet => "parquet",
        };
        write!(
            f,
            "captures: {captures}; events.{ext}{level}: {} runs; tcp_trace.{ext}: {} runs",
            self.events, self.tcp_trace
        )
    }
}

/// Loads a scenario file with its `[outputs]` (which the scenario itself does not know): the
/// scenario, and its outputs when it has any. Without `[outputs]` this is `Scenario::load`.
pub fn load_scenario(
    path: &std::path::Path,
) -> Result<(lasthop_scenario::Scenario, Option<OutputsSpec>), SpecError> {
    use lasthop_scenario::Scenario;
    let with_file = |mut e: SpecError| {
        if e.file.is_none() {
            e.file = Some(path.display().to_string());
        }
        e
    };
    let doc = lasthop_core::spec::read_spec_text(path)
        .ok()
        .and_then(|t| toml::from_str::<toml::Value>(&t).ok());
    let Some(mut doc) = doc.filter(|d| d.get("outputs").is_some()) else {
        return Ok((Scenario::load(path)?, None));
    };
    let outputs = OutputsSpec::take_from(&mut doc).map_err(with_file)?;
    let text = toml::to_string(&doc).map_err(|e| with_file(err("", e.to_string())))?;
    let base = path.parent().unwrap_or(std::path::Path::new("."));
    let base = if base.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        base
    };
    let sc = Scenario::from_str_in(&text, base).map_err(with_file)?;
    Ok((sc, outputs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_values_and_what_a_run_keeps() {
        let v: toml::Value = toml::from_str(
            "captures = [\"server\", \"mobile\"]\nevents = \"all\"\nevents_level = \"drops\"\n",
        )
        .unwrap();
        let s = OutputsSpec::of(v, "outputs").unwrap();
        let o = Outputs::SWEEP.with(&s);
        assert_eq!(
            o.captures,
            CaptureChoice::Hosts(vec!["server".into(), "mobile".into()])
        );
        let k = o.keep(false);
        assert_eq!(k.events, Some(LogLevel::Drops));
        assert!(!k.tcp_trace);
        assert!(o.keep(true).tcp_trace);
        assert_eq!(
            Outputs::SWEEP.keep(false),
            Keep {
                captures: lasthop_sim::Captures::None,
                events: None,
                tcp_trace: false,
                parquet: false
            }
        );
        assert_eq!(Outputs::SWEEP.keep(true), Keep::ALL);
        let bad: toml::Value = toml::from_str("events = \"some\"").unwrap();
        let e = OutputsSpec::of(bad, "outputs").unwrap_err();
        assert_eq!(e.key, "outputs.events", "{e}");
        let bad: toml::Value = toml::from_str("capture = \"all\"").unwrap();
        assert!(OutputsSpec::of(bad, "outputs").is_err());
        assert_eq!(
            "a,b".parse::<CaptureChoice>().unwrap(),
            CaptureChoice::Hosts(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            "none".parse::<CaptureChoice>().unwrap(),
            CaptureChoice::Runs(Runs::None)
        );
        let mut doc: toml::Value =
            toml::from_str("duration = \"1s\"\n[outputs]\ntcp_trace = \"none\"\n").unwrap();
        let taken = OutputsSpec::take_from(&mut doc).unwrap().unwrap();
        assert_eq!(taken.tcp_trace, Some(Runs::None));
        assert!(doc.get("outputs").is_none());
    }
}
