//! The flags that choose the files a run keeps beyond its tables (`lasthop run`, `sim`, `emu`),
//! over the spec's `outputs` (`lasthop_experiment::outputs`).

use lasthop_experiment::outputs::{CaptureChoice, EventsLevel, OutputsSpec, Runs, TableFormat};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Which runs keep every host's capture: all, report (the run the report shows; an
    /// experiment's default), none; or host names joined by commas (those hosts' captures, in
    /// every run).
    #[arg(long, value_name = "WHICH")]
    pub captures: Option<CaptureChoice>,
    /// Which runs keep events.csv: all, report (an experiment's default), none.
    #[arg(long, value_name = "RUNS")]
    pub events: Option<Runs>,
    /// The rows events.csv keeps: all (what the scenario's log level records), drops.
    #[arg(long, value_name = "LEVEL")]
    pub events_level: Option<EventsLevel>,
    /// Which runs keep tcp_trace.csv (simulation): all, report (an experiment's default), none.
    #[arg(long, value_name = "RUNS")]
    pub tcp_trace: Option<Runs>,
    /// The form of events and tcp_trace: csv, or parquet (events.parquet, tcp_trace.parquet:
    /// typed and compressed columns, which lasthop report and Python's lasthop.load read).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<TableFormat>,
}

impl OutputArgs {
    /// The flags as an `outputs` table (the keys given).
    pub fn spec(&self) -> OutputsSpec {
        OutputsSpec {
            captures: self.captures.clone(),
            events: self.events,
            events_level: self.events_level,
            tcp_trace: self.tcp_trace,
            format: self.format,
        }
    }
}
