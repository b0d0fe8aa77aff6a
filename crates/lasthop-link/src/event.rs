//! The event log: every action of the link on every packet, the ground truth the analyser joins
//! with the captures (drops carry their cause; delays their length; releases, in emulation, their
//! scheduled and actual times).
//!
//! The schema lives here once: the kinds ([`EventKind`]), the causes ([`Cause`]), the writer
//! ([`EventCsv`]) and the one typed reader ([`read_events`] into [`EventRow`]), which the
//! analysis, the experiment runner and the report use.
//!
//! `events.csv` columns (documented in `docs/events.md`):
//! `time_ns,event,dir,packet,flow,ip_id,tcp_seq,tcp_ack,tcp_len,bytes,queue_pkts,queue_bytes,
//! lsb_bytes,lrb_bytes,cause,attempt,state,delay_ns,actual_ns`

use crate::dir::Dir;
use lasthop_core::{FlowKey, Packet, Time};
use std::io::{self, Write};
use std::sync::Arc;

/// How much the model records. Seawind had the same three levels; `Drops` keeps long runs cheap.
#[derive(
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Debug,
    Default,
    serde::Deserialize,
    serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Nothing.
    None,
    /// Drops, ECN marks, link errors, state changes and middlebox actions.
    Drops,
    /// Every action on every packet.
    #[default]
    All,
}

/// Why a packet was dropped.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Cause {
    /// The router queue was full (packets or bytes), or the packet waited past the sojourn limit.
    Queue,
    /// RED chose it (or RED with ECN met a non-ECT packet).
    Red,
    /// The link's error process: `drop` handling, or `arq` past its retry limit.
    Error,
    /// Larger than the link's MTU or than a link buffer.
    Mtu,
    /// A middlebox acted on it (`mbox_*` events).
    Middlebox,
    /// CoDel's control law dropped it at dequeue (policy `codel`, or a flow queue of
    /// `fq_codel`), or CoDel with ECN met a non-ECT packet.
    Codel,
    /// PIE's random early drop at enqueue (or PIE with ECN met a non-ECT packet, or the
    /// probability was above 10 %).
    Pie,
    /// Seawind's output dropper, as the packet left the link.
    Output,
    /// The router's unread input was full (`overflow = "stop"`, past its `input` packets).
    Input,
    /// netem's Gilbert–Elliott loss model failed the attempt (on `error` rows).
    Gemodel,
    /// netem's 4-state loss model failed the attempt (on `error` rows).
    FourState,
    /// A loss trace failed the attempt (on `error` rows).
    LossTrace,
    /// netem's jitter gave the packet its propagation delay (`jitter` rows).
    Jitter,
    /// netem's reordering sent it without its propagation delay (`reorder` rows).
    Reorder,
    /// netem's duplication made this copy (`duplicate` rows).
    Duplicate,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::Queue => "queue",
            Cause::Red => "red",
            Cause::Error => "error",
            Cause::Mtu => "mtu",
            Cause::Middlebox => "middlebox",
            Cause::Codel => "codel",
            Cause::Pie => "pie",
            Cause::Output => "output",
            Cause::Input => "input",
            Cause::Gemodel => "gemodel",
            Cause::FourState => "4state",
            Cause::LossTrace => "loss_trace",
            Cause::Jitter => "jitter",
            Cause::Reorder => "reorder",
            Cause::Duplicate => "duplicate",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EventKind {
    /// The packet reached the router.
    Arrive,
    /// It joined the router queue.
    Enqueue,
    /// The router queue is full: it waits unread at the router's input (`overflow = "stop"` or
    /// `"flow_control"`); it is enqueued when read.
    Unread,
    Drop(Cause),
    /// The discipline (RED, PIE at enqueue; CoDel, FQ-CoDel at dequeue) set CE instead of
    /// dropping.
    Mark,
    /// It moved from the router queue into the link send buffer.
    Lsb,
    /// The link was idle: the channel's allocation delays the transmission by `delay`.
    Alloc,
    TxStart,
    TxEnd,
    /// A scripted or random extra delay of `delay` was added to its propagation.
    Delay,
    /// netem's jitter: its propagation delay is `delay` (cause `jitter`).
    Jitter,
    /// netem's reordering: it is sent without its propagation delay (cause `reorder`).
    Reorder,
    /// netem's duplication: this copy (a new id) of the packet just arrived reaches the router
    /// (cause `duplicate`); an `arrive` row follows.
    Duplicate,
    /// The error process hit attempt `n` (1 = the first transmission); `delay` is the added
    /// error delay, 0 when the packet is dropped.
    Error(u32),
    /// As [`EventKind::Error`], failed by a loss model that names itself (the `cause` column).
    ErrorBy(u32, Cause),
    /// The error process damaged its bytes and it goes on (`handling = "forward"`, Seawind's
    /// FORWARD); the receiving host's checksum discards it.
    Corrupt,
    /// It arrived at the link receive buffer but waits behind an earlier packet.
    Hold,
    /// It left the link receive buffer towards the host.
    Release,
    /// The link's state changed to `state`.
    State,
    /// A middlebox passed on a changed packet (the fields are the new packet's).
    MboxRewrite,
    /// A middlebox holds the packet for `delay` before it goes on.
    MboxDelay,
    /// A middlebox dropped the packet.
    MboxDrop,
    /// A middlebox created this packet (a new id), which joins the router queue of `dir`.
    MboxInject,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Arrive => "arrive",
            EventKind::Enqueue => "enqueue",
            EventKind::Unread => "unread",
            EventKind::Drop(_) => "drop",
            EventKind::Mark => "mark",
            EventKind::Lsb => "lsb",
            EventKind::Alloc => "alloc",
            EventKind::TxStart => "tx_start",
            EventKind::TxEnd => "tx_end",
            EventKind::Delay => "delay",
            EventKind::Jitter => "jitter",
            EventKind::Reorder => "reorder",
            EventKind::Duplicate => "duplicate",
            EventKind::Error(_) | EventKind::ErrorBy(..) => "error",
            EventKind::Corrupt => "corrupt",
            EventKind::Hold => "hold",
            EventKind::Release => "release",
            EventKind::State => "state",
            EventKind::MboxRewrite => "mbox_rewrite",
            EventKind::MboxDelay => "mbox_delay",
            EventKind::MboxDrop => "mbox_drop",
            EventKind::MboxInject => "mbox_inject",
        }
    }

    /// The `cause` column: why a packet was dropped, or who acted (`middlebox`).
    pub fn cause(self) -> Option<Cause> {
        match self {
            EventKind::Drop(c) | EventKind::ErrorBy(_, c) => Some(c),
            EventKind::Corrupt => Some(Cause::Error),
            EventKind::Jitter => Some(Cause::Jitter),
            EventKind::Reorder => Some(Cause::Reorder),
            EventKind::Duplicate => Some(Cause::Duplicate),
            EventKind::MboxRewrite
            | EventKind::MboxDelay
            | EventKind::MboxDrop
            | EventKind::MboxInject => Some(Cause::Middlebox),
            _ => None,
        }
    }

    /// The lowest log level that records this kind.
    pub fn level(self) -> LogLevel {
        match self {
            EventKind::Drop(_)
            | EventKind::Mark
            | EventKind::Error(_)
            | EventKind::ErrorBy(..)
            | EventKind::Corrupt
            | EventKind::Reorder
            | EventKind::Duplicate
            | EventKind::State
            | EventKind::MboxRewrite
            | EventKind::MboxDelay
            | EventKind::MboxDrop
            | EventKind::MboxInject => LogLevel::Drops,
            _ => LogLevel::All,
        }
    }
}

/// The fields of a packet that an event row repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFields {
    pub id: u64,
    pub flow: FlowKey,
    pub bytes: u32,
    pub ip_id: u16,
    /// (seq, ack, payload length) of a TCP segment.
    pub tcp: Option<(u32, u32, u32)>,
}

impl PacketFields {
    pub fn of(id: u64, p: &Packet) -> PacketFields {
        PacketFields {
            id,
            flow: p.flow,
            bytes: p.wire_len,
            ip_id: p.ip_id(),
            tcp: p.tcp().map(|t| (t.seq, t.ack, t.payload_len)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub time: Time,
    pub kind: EventKind,
    /// `None` only for state changes, which concern the whole link.
    pub dir: Option<Dir>,
    pub packet: Option<PacketFields>,
    /// Router queue length after the event, in packets and bytes.
    pub queue_pkts: u32,
    pub queue_bytes: u64,
    /// Bytes held in the link send and receive buffers after the event.
    pub lsb_bytes: u64,
    pub lrb_bytes: u64,
    /// The state's name for `State` events.
    pub state: Option<Arc<str>>,
    /// Added delay in ns for `Delay` and `Error` events.
    pub delay_ns: Option<u64>,
}

impl Event {
    /// The `cause` column (see [`EventKind::cause`]).
    pub fn cause(&self) -> Option<Cause> {
        self.kind.cause()
    }
}

pub const CSV_HEADER: &str = "time_ns,event,dir,packet,flow,ip_id,tcp_seq,tcp_ack,tcp_len,bytes,queue_pkts,queue_bytes,lsb_bytes,lrb_bytes,cause,attempt,state,delay_ns,actual_ns\n";

/// Writes one CSV field: as it is when it needs no quoting (every field the model writes but a
/// state's name, which the spec check keeps plain), else quoted by the `csv` crate (RFC 4180).
fn write_csv_field<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    if !s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
        return w.write_all(s.as_bytes());
    }
    let mut cw = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    cw.write_record([s]).map_err(io::Error::other)?;
    let quoted = cw
        .into_inner()
        .map_err(|e| io::Error::other(e.to_string()))?;
    w.write_all(quoted.strip_suffix(b"\n").unwrap_or(&quoted))
}

/// Streams events as CSV rows under [`CSV_HEADER`].
pub struct EventCsv<W: Write> {
    w: W,
    rows: u64,
}

impl<W: Write> EventCsv<W> {
    pub fn new(mut w: W) -> io::Result<EventCsv<W>> {
        w.write_all(CSV_HEADER.as_bytes())?;
        Ok(EventCsv { w, rows: 0 })
    }

    /// Writes one row. `actual` is the time the emulator really released the packet (empty in
    /// simulation, where scheduled and actual time are the same).
    pub fn write(&mut self, e: &Event, actual: Option<Time>) -> io::Result<()> {
        let w = &mut self.w;
        write!(w, "{},{},", e.time.as_nanos(), e.kind.name())?;
        if let Some(d) = e.dir {
            w.write_all(d.name().as_bytes())?;
        }
        w.write_all(b",")?;
        match &e.packet {
            Some(p) => {
                write!(w, "{},{},{},", p.id, p.flow, p.ip_id)?;
                match p.tcp {
                    Some((s, a, l)) => write!(w, "{s},{a},{l},")?,
                    None => w.write_all(b",,,")?,
                }
                write!(w, "{},", p.bytes)?;
            }
            None => w.write_all(b",,,,,,,")?,
        }
        write!(
            w,
            "{},{},{},{},",
            e.queue_pkts, e.queue_bytes, e.lsb_bytes, e.lrb_bytes
        )?;
        if let Some(c) = e.kind.cause() {
            w.write_all(c.name().as_bytes())?;
        }
        w.write_all(b",")?;
        if let EventKind::Error(n) | EventKind::ErrorBy(n, _) = e.kind {
            write!(w, "{n}")?;
        }
        w.write_all(b",")?;
        if let Some(s) = &e.state {
            write_csv_field(w, s)?;
        }
        w.write_all(b",")?;
        if let Some(d) = e.delay_ns {
            write!(w, "{d}")?;
        }
        w.write_all(b",")?;
        if let Some(a) = actual {
            write!(w, "{}", a.as_nanos())?;
        }
        w.write_all(b"\n")?;
        self.rows += 1;
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

// ---------------------------------------------------------------------------------------------
// Reading `events.csv` back: the one typed reader.

/// The kind of an `events.csv` row, as the `event` column names it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    Arrive,
    Enqueue,
    Unread,
    Drop,
    Mark,
    Lsb,
    Alloc,
    TxStart,
    TxEnd,
    Delay,
    Jitter,
    Reorder,
    Duplicate,
    Error,
    Corrupt,
    Hold,
    Release,
    State,
    MboxRewrite,
    MboxDelay,
    MboxDrop,
    MboxInject,
    /// A kind this version does not know (a newer writer).
    #[serde(other)]
    Other,
}

/// The `cause` column, read back.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RowCause {
    Queue,
    Red,
    Error,
    Mtu,
    Middlebox,
    Codel,
    Pie,
    Output,
    Input,
    Gemodel,
    #[serde(rename = "4state")]
    FourState,
    #[serde(rename = "loss_trace")]
    LossTrace,
    Jitter,
    Reorder,
    Duplicate,
    /// A cause this version does not know (a newer writer).
    #[serde(other)]
    Other,
}

impl RowCause {
    pub fn name(self) -> &'static str {
        match self {
            RowCause::Queue => "queue",
            RowCause::Red => "red",
            RowCause::Error => "error",
            RowCause::Mtu => "mtu",
            RowCause::Middlebox => "middlebox",
            RowCause::Codel => "codel",
            RowCause::Pie => "pie",
            RowCause::Output => "output",
            RowCause::Input => "input",
            RowCause::Gemodel => "gemodel",
            RowCause::FourState => "4state",
            RowCause::LossTrace => "loss_trace",
            RowCause::Jitter => "jitter",
            RowCause::Reorder => "reorder",
            RowCause::Duplicate => "duplicate",
            RowCause::Other => "other",
        }
    }
}

impl From<Cause> for RowCause {
    fn from(c: Cause) -> RowCause {
        match c {
            Cause::Queue => RowCause::Queue,
            Cause::Red => RowCause::Red,
            Cause::Error => RowCause::Error,
            Cause::Mtu => RowCause::Mtu,
            Cause::Middlebox => RowCause::Middlebox,
            Cause::Codel => RowCause::Codel,
            Cause::Pie => RowCause::Pie,
            Cause::Output => RowCause::Output,
            Cause::Input => RowCause::Input,
            Cause::Gemodel => RowCause::Gemodel,
            Cause::FourState => RowCause::FourState,
            Cause::LossTrace => RowCause::LossTrace,
            Cause::Jitter => RowCause::Jitter,
            Cause::Reorder => RowCause::Reorder,
            Cause::Duplicate => RowCause::Duplicate,
        }
    }
}

/// One row of `events.csv`, typed. Columns are found by header name, so a file with added
/// columns still reads; empty cells are `None`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct EventRow {
    pub time_ns: u64,
    pub event: RowKind,
    pub dir: Option<Dir>,
    pub packet: Option<u64>,
    /// The flow key's display form; empty for `state` rows.
    #[serde(default)]
    pub flow: String,
    pub ip_id: Option<u16>,
    pub tcp_seq: Option<u32>,
    pub tcp_ack: Option<u32>,
    pub tcp_len: Option<u32>,
    pub bytes: Option<u32>,
    pub queue_pkts: Option<u32>,
    pub queue_bytes: Option<u64>,
    pub lsb_bytes: Option<u64>,
    pub lrb_bytes: Option<u64>,
    pub cause: Option<RowCause>,
    pub attempt: Option<u32>,
    pub state: Option<String>,
    pub delay_ns: Option<u64>,
    pub actual_ns: Option<u64>,
}

/// A row that cannot be read: its line (1 = the header) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub line: u64,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ReadError {}

/// Reads `events.csv` rows from `r`, in file order. The first error ends the rows.
pub fn read_events<R: io::Read>(r: R) -> impl Iterator<Item = Result<EventRow, ReadError>> {
    read_events_where(r, |_| true).map(|r| r.map(|(_, row)| row))
}

/// [`read_events`] for the rows whose `event` column `keep` accepts (`"drop"`, `"arrive"`, ...),
/// each with its line in the file (1 is the header). The other rows are split into fields but
/// not parsed, which is most of the work for a reader that wants few kinds of a full log.
pub fn read_events_where<R: io::Read>(
    r: R,
    keep: impl Fn(&str) -> bool,
) -> impl Iterator<Item = Result<(u64, EventRow), ReadError>> {
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .buffer_capacity(1 << 16)
        .from_reader(r);
    let headers = rd.headers().cloned();
    let header_err = match &headers {
        Ok(h) if h.len() <= 1 && h.get(0).is_none_or(|c| c.is_empty()) => {
            Some("empty file, expected a header row".to_string())
        }
        Ok(h) if h.iter().any(|c| c == "time_ns") && h.iter().any(|c| c == "event") => None,
        Ok(_) => Some(
            "no `time_ns` and `event` columns (is this an events.csv of lasthop-link?)".to_string(),
        ),
        Err(e) => Some(e.to_string()),
    };
    let headers = headers.unwrap_or_default();
    // Our own files have exactly our columns in our order: rows are then read by position,
    // which skips matching every field's name in every row (a file is read once per analysis,
    // and is often the largest input). Any other column set is read by name.
    let ours = headers.iter().eq(CSV_HEADER.trim_end().split(','));
    let by_name = (!ours).then(|| headers.clone());
    let event_col = headers.iter().position(|c| c == "event").unwrap_or(1);
    let failed = header_err.is_some();
    let first = header_err.map(|message| Err(ReadError { line: 1, message }));
    let mut done = failed;
    let mut record = csv::StringRecord::new();
    let rows = std::iter::from_fn(move || {
        if done {
            return None;
        }
        let r = loop {
            match rd.read_record(&mut record) {
                Ok(false) => return None,
                Ok(true) if !keep(record.get(event_col).unwrap_or("")) => continue,
                Ok(true) => {
                    let line = record.position().map_or(0, |p| p.line());
                    break record
                        .deserialize::<EventRow>(by_name.as_ref())
                        .map(|row| (line, row));
                }
                Err(e) => break Err(e),
            }
        };
        Some(r.map_err(|e| {
            done = true;
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            let message = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                    Some(i) => format!(
                        "column `{}`: {}",
                        headers.get(i as usize).unwrap_or("?"),
                        err.kind()
                    ),
                    None => err.kind().to_string(),
                },
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => format!("{len} fields, the header has {expected_len}"),
                _ => e.to_string(),
            };
            ReadError { line, message }
        }))
    });
    first.into_iter().chain(rows)
}
