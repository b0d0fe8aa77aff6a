//! What a run's summary needs of each direction without its event log: the router queue's
//! length over time (time-weighted mean and maximum, as seed 004 reports them) and the time the
//! serializer was busy (utilisation). Fed from the one place every event passes, whatever the
//! log level, so `log = "none"` runs measure the same as `log = "all"` ones.

use crate::dir::Dir;
use crate::event::EventKind;
use lasthop_core::Time;

/// Counters a driver can report without reading the event log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DirStats {
    /// Packets that reached the router queue stage (after any middleboxes; injected ones too).
    pub arrived: u64,
    pub released: u64,
    pub drops_queue: u64,
    pub drops_red: u64,
    pub drops_error: u64,
    pub drops_mtu: u64,
    pub marks: u64,
    /// Failed transmission attempts (each ARQ retry that failed counts).
    pub errors: u64,
    /// Packets a middlebox dropped (they never reached the router queue, so `arrived` and the
    /// other counters do not include them).
    pub drops_middlebox: u64,
    /// Packets middleboxes injected into this direction.
    pub injected: u64,
    /// Packets CoDel (also within FQ-CoDel) or PIE dropped (causes `codel`, `pie`).
    #[serde(skip_serializing_if = "is_zero")]
    pub drops_aqm: u64,
    /// Packets the error process damaged and sent on (`handling = "forward"`); the receiving
    /// hosts discard them.
    #[serde(skip_serializing_if = "is_zero")]
    pub corrupted: u64,
    /// Packets the output dropper dropped as they left (cause `output`).
    #[serde(skip_serializing_if = "is_zero")]
    pub drops_output: u64,
    /// Packets dropped at the router's unread input, past STOP's limit (cause `input`).
    #[serde(skip_serializing_if = "is_zero")]
    pub drops_input: u64,
    /// Background packets sent on the channel (`background`).
    #[serde(skip_serializing_if = "is_zero")]
    pub background: u64,
    /// Copies netem's `duplicate` made (each also counts in `arrived`).
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicated: u64,
    /// Packets netem's `reorder` sent without their propagation delay.
    #[serde(skip_serializing_if = "is_zero")]
    pub reordered: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Router-queue length and serializer busy time of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meter {
    /// Time of the last event and the queue length after it.
    last: Time,
    queue: u64,
    /// ∫ queue length dt up to `last`, packet·ns.
    area: u128,
    /// Largest queue length after any event.
    pub queue_max: u64,
    /// When the transmission in progress started.
    tx_since: Option<Time>,
    /// Busy time of finished transmissions, ns.
    busy_ns: u64,
}

/// A [`Meter`] read out at the end of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeterReading {
    /// Time-weighted mean router-queue length over `[0, end]`, packets.
    pub queue_mean: f64,
    pub queue_max: u64,
    /// Serializer busy time over `[0, end]` (a transmission in progress counts up to `end`).
    pub busy_ns: u64,
}

impl Meter {
    /// An event of this direction at `t`, with the router queue holding `queue` packets after it.
    #[inline]
    pub(crate) fn on_event(&mut self, t: Time, kind: EventKind, queue: u64) {
        if t > self.last {
            self.area += u128::from(self.queue) * u128::from((t - self.last).as_nanos());
            self.last = t;
        }
        self.queue = queue;
        self.queue_max = self.queue_max.max(queue);
        match kind {
            EventKind::TxStart => self.tx_since = Some(t),
            EventKind::TxEnd => {
                if let Some(s) = self.tx_since.take() {
                    self.busy_ns += (t - s).as_nanos();
                }
            }
            _ => {}
        }
    }

    /// The figures over `[0, end]` (`end` at or after the last event).
    pub fn reading(&self, end: Time) -> MeterReading {
        let end = end.max(self.last);
        let area = self.area + u128::from(self.queue) * u128::from((end - self.last).as_nanos());
        let busy = self.busy_ns + self.tx_since.map_or(0, |s| (end - s).as_nanos());
        MeterReading {
            queue_mean: if end == Time::ZERO {
                0.0
            } else {
                area as f64 / end.as_nanos() as f64
            },
            queue_max: self.queue_max,
            busy_ns: busy,
        }
    }
}

/// One direction's row of `link.csv`: the link's counters and its meter over the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkRow {
    pub dir: String,
    pub arrived: u64,
    pub released: u64,
    pub drops_queue: u64,
    pub drops_red: u64,
    pub drops_error: u64,
    pub drops_mtu: u64,
    pub drops_middlebox: u64,
    /// Drops of CoDel, PIE and FQ-CoDel's CoDel (causes `codel`, `pie`).
    pub drops_aqm: u64,
    /// ECN marks (CE set instead of a drop).
    pub marks: u64,
    /// Failed transmission attempts.
    pub errors: u64,
    pub injected: u64,
    /// Serializer busy time / run length.
    pub utilisation: f64,
    /// Router queue, packets: time-weighted mean over the run, and maximum.
    pub queue_mean_pkts: f64,
    pub queue_max_pkts: u64,
    /// The run's length (the mean and the utilisation are over `[0, end_s]`).
    pub end_s: f64,
}

impl LinkRow {
    pub fn new(dir: Dir, s: &DirStats, m: &MeterReading, end: Time) -> LinkRow {
        let end_ns = end.as_nanos();
        LinkRow {
            dir: dir.name().to_string(),
            arrived: s.arrived,
            released: s.released,
            drops_queue: s.drops_queue,
            drops_red: s.drops_red,
            drops_error: s.drops_error,
            drops_mtu: s.drops_mtu,
            drops_middlebox: s.drops_middlebox,
            drops_aqm: s.drops_aqm,
            marks: s.marks,
            errors: s.errors,
            injected: s.injected,
            utilisation: if end_ns == 0 {
                0.0
            } else {
                m.busy_ns as f64 / end_ns as f64
            },
            queue_mean_pkts: m.queue_mean,
            queue_max_pkts: m.queue_max,
            end_s: end_ns as f64 / 1e9,
        }
    }
}

/// Writes `link.csv` (one row per direction, down then up) atomically.
pub fn write_link_csv(path: &std::path::Path, rows: &[LinkRow]) -> std::io::Result<()> {
    write_link_csv_with(path, rows, true)
}

/// [`write_link_csv`], whose file is synced only if `sync`: a caller that writes a run's many
/// files syncs their directory once instead (`lasthop_core::output::sync_dir`).
pub fn write_link_csv_with(
    path: &std::path::Path,
    rows: &[LinkRow],
    sync: bool,
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(vec![]);
    for r in rows {
        w.serialize(r).map_err(std::io::Error::other)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    lasthop_core::output::AtomicFile::write_all_to_with(path, &bytes, sync)
}

/// Reads `link.csv`.
pub fn read_link_csv(path: &std::path::Path) -> Result<Vec<LinkRow>, csv::Error> {
    csv::Reader::from_path(path)?.deserialize().collect()
}
