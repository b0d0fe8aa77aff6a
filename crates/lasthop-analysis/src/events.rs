//! Joining the link's event log (`events.csv`, written by `lasthop-link`) with the connections:
//! drops by cause, ECN marks, and spurious retransmissions, per direction.
//!
//! Rows are matched to a connection direction by the `flow` column, which is the
//! `FlowKey` display form (`tcp:198.18.0.1:5001>198.19.0.1:80`). When a 4-tuple carried several
//! connections, a row goes to the one whose packets span its time (else the latest that started
//! before it).

use crate::conn::{ConnStats, Drops};
use crate::Error;
use lasthop_core::FlowKey;
use lasthop_link::event::{read_events_where, Cause, Event, EventKind as EK, RowCause, RowKind};
use rustc_hash::FxHashMap as HashMap;
use std::io::{BufReader, Read};
use std::path::Path;

/// What the event log says about one flow (one direction of a connection).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowEvents {
    /// (time_ns, cause) of every drop, and time of every CE mark.
    pub drops: Vec<(u64, DropCause)>,
    pub marks: Vec<u64>,
    /// Arrival times of retransmissions whose earlier copy was delivered.
    pub spurious: Vec<u64>,
    /// (arrival time, sequence number) of the same retransmissions, in arrival order.
    pub spurious_seqs: Vec<(u64, u32)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    Queue,
    Red,
    /// CoDel's, PIE's and FQ-CoDel's CoDel drops.
    Aqm,
    Error,
    Mtu,
    Other,
}

impl DropCause {
    fn of(c: Option<RowCause>) -> DropCause {
        match c {
            // STOP's unread input is the router's, before its queue.
            Some(RowCause::Queue | RowCause::Input) => DropCause::Queue,
            // RED's drops keep RED's column; CoDel's and PIE's have their own.
            Some(RowCause::Red) => DropCause::Red,
            Some(RowCause::Codel | RowCause::Pie) => DropCause::Aqm,
            // Seawind's output dropper emulates link errors at the link's far end.
            Some(RowCause::Error | RowCause::Output) => DropCause::Error,
            Some(RowCause::Mtu) => DropCause::Mtu,
            _ => DropCause::Other,
        }
    }
}

/// A parsed event log, reduced to what the connection statistics need.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    pub flows: HashMap<String, FlowEvents>,
    /// Whether the log has `arrive` and `release` rows (log level `all`), without which spurious
    /// retransmissions cannot be told.
    pub has_deliveries: bool,
    /// Rows read: those of the kinds used here (drops, marks, arrivals, releases).
    pub rows: u64,
}

fn flow_entry<'a>(flows: &'a mut HashMap<String, FlowEvents>, flow: &str) -> &'a mut FlowEvents {
    if !flows.contains_key(flow) {
        flows.insert(flow.to_string(), FlowEvents::default());
    }
    flows.get_mut(flow).expect("inserted")
}

/// An [`EventLog`] built row by row, from `events.csv` ([`EventLog::from_reader`]) or from the
/// link's events as a simulation produces them ([`EventLogBuilder::event`]): the same rows in
/// the same order give the same log.
#[derive(Default)]
pub struct EventLogBuilder {
    log: EventLog,
    /// Arrivals of TCP segments with payload: (flow id, seq, len, order, packet, time).
    arrivals: Vec<(u32, u32, u32, u64, u64, u64)>,
    /// Flows interned: arrivals are keyed by a small id (by name from a file, by key in
    /// process; a key's name is made once).
    ids_by_name: HashMap<String, u32>,
    ids_by_key: HashMap<FlowKey, u32>,
    names: Vec<String>,
    /// The name of every flow key seen in process (made once per flow).
    key_names: HashMap<FlowKey, String>,
    released: Vec<u64>,
    saw_arrive: bool,
    saw_release: bool,
}

/// A row's flow, as a file names it or as the link's event carries it.
enum Flow<'a> {
    Name(&'a str),
    Key(&'a FlowKey),
}

impl EventLogBuilder {
    /// The flow's name, as a file writes it.
    fn name<'a>(key_names: &'a mut HashMap<FlowKey, String>, flow: &Flow<'a>) -> &'a str {
        match flow {
            Flow::Name(n) => n,
            Flow::Key(k) => key_names.entry(**k).or_insert_with(|| k.to_string()),
        }
    }

    /// The id of an arriving segment's flow, in order of first arrival.
    fn id(&mut self, flow: &Flow) -> u32 {
        if let Flow::Key(k) = flow {
            if let Some(&id) = self.ids_by_key.get(*k) {
                return id;
            }
        }
        let name = Self::name(&mut self.key_names, flow);
        let id = match self.ids_by_name.get(name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.ids_by_name.insert(name.to_string(), id);
                self.names.push(name.to_string());
                id
            }
        };
        if let Flow::Key(k) = flow {
            self.ids_by_key.insert(**k, id);
        }
        id
    }

    /// One row of the kinds the log keeps (drops, marks, arrivals, releases) of a `tcp:` flow.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        kind: RowKind,
        time: u64,
        flow: Flow,
        packet: u64,
        tcp_seq: Option<u32>,
        tcp_len: Option<u32>,
        cause: Option<RowCause>,
    ) {
        match kind {
            RowKind::Drop => {
                let name = Self::name(&mut self.key_names, &flow);
                flow_entry(&mut self.log.flows, name)
                    .drops
                    .push((time, DropCause::of(cause)));
            }
            RowKind::Mark => {
                let name = Self::name(&mut self.key_names, &flow);
                flow_entry(&mut self.log.flows, name).marks.push(time);
            }
            RowKind::Arrive => {
                self.saw_arrive = true;
                let (Some(seq), Some(len)) = (tcp_seq, tcp_len) else {
                    return;
                };
                if len == 0 {
                    return;
                }
                let id = self.id(&flow);
                let order = self.arrivals.len() as u64;
                self.arrivals.push((id, seq, len, order, packet, time));
            }
            RowKind::Release => {
                self.saw_release = true;
                self.released.push(packet);
            }
            _ => {}
        }
    }

    /// One of the link's events, as the model produced it (the row `events.csv` would have).
    pub fn event(&mut self, e: &Event) {
        let kind = match e.kind {
            EK::Drop(_) => RowKind::Drop,
            EK::Mark => RowKind::Mark,
            EK::Arrive => RowKind::Arrive,
            EK::Release => RowKind::Release,
            _ => return,
        };
        self.log.rows += 1;
        let Some(p) = &e.packet else {
            return;
        };
        if p.flow.proto != 6 || p.flow == FlowKey::UNKNOWN {
            return;
        }
        let (seq, len) = match p.tcp {
            Some((s, _, l)) => (Some(s), Some(l)),
            None => (None, None),
        };
        let cause = e.cause().map(RowCause::from);
        self.row(
            kind,
            e.time.as_nanos(),
            Flow::Key(&p.flow),
            p.id,
            seq,
            len,
            cause,
        );
    }

    /// The log, spurious retransmissions found.
    pub fn finish(mut self) -> EventLog {
        let log = &mut self.log;
        log.has_deliveries = self.saw_arrive && self.saw_release;
        if log.has_deliveries {
            let (arrivals, released) = (&mut self.arrivals, &mut self.released);
            released.sort_unstable();
            arrivals.sort_unstable();
            let mut i = 0;
            while i < arrivals.len() {
                let (flow, seq, len, ..) = arrivals[i];
                let mut j = i;
                let mut delivered_before = false;
                while j < arrivals.len()
                    && arrivals[j].0 == flow
                    && arrivals[j].1 == seq
                    && arrivals[j].2 == len
                {
                    let (.., packet, time) = arrivals[j];
                    if j > i && delivered_before {
                        let name = &self.names[flow as usize];
                        let f = flow_entry(&mut log.flows, name);
                        f.spurious.push(time);
                        f.spurious_seqs.push((time, seq));
                    }
                    delivered_before |= released.binary_search(&packet).is_ok();
                    j += 1;
                }
                i = j;
            }
            for f in log.flows.values_mut() {
                f.spurious.sort_unstable();
                f.spurious_seqs.sort_unstable();
            }
        }
        self.log
    }
}

impl EventLog {
    pub fn load(path: impl AsRef<Path>) -> Result<EventLog, Error> {
        let path = path.as_ref();
        let f = std::fs::File::open(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            error: e,
        })?;
        EventLog::from_reader(f, &path.display().to_string())
    }

    pub fn from_reader<R: Read>(r: R, source: &str) -> Result<EventLog, Error> {
        let bad = |line: u64, msg: String| Error::Events {
            path: source.to_string(),
            line,
            msg,
        };
        let mut b = EventLogBuilder::default();
        // The one typed reader of lasthop-link; rows are numbered from 2 (1 is the header).
        // Only these kinds of rows matter here; the reader skips parsing the others.
        let wanted = |kind: &str| {
            [EK::Drop(Cause::Queue), EK::Mark, EK::Arrive, EK::Release]
                .iter()
                .any(|k| k.name() == kind)
        };
        for row in read_events_where(BufReader::with_capacity(1 << 16, r), wanted) {
            let (lineno, row) = row.map_err(|e| bad(e.line, e.message))?;
            b.log.rows += 1;
            if !row.flow.starts_with("tcp:") {
                continue;
            }
            let payload = row.tcp_seq.is_some() && row.tcp_len.is_some_and(|l| l > 0);
            let packet = match row.event {
                RowKind::Arrive if !payload => 0,
                RowKind::Arrive | RowKind::Release => row
                    .packet
                    .ok_or_else(|| bad(lineno, "no packet id".to_string()))?,
                _ => 0,
            };
            b.row(
                row.event,
                row.time_ns,
                Flow::Name(&row.flow),
                packet,
                row.tcp_seq,
                row.tcp_len,
                row.cause,
            );
        }
        Ok(b.finish())
    }

    /// Adds drops, marks and spurious retransmissions to the connections.
    pub fn join(&self, conns: &mut [ConnStats]) {
        // flow string → connection indices (client→server, and server→client direction).
        let mut by_flow: HashMap<String, Vec<(usize, bool)>> = HashMap::default();
        for (i, c) in conns.iter().enumerate() {
            let f = c.flow();
            by_flow.entry(f.to_string()).or_default().push((i, true));
            by_flow
                .entry(f.reversed().to_string())
                .or_default()
                .push((i, false));
        }
        for c in conns.iter_mut() {
            c.events_joined = true;
            c.c2s.drops = Drops::default();
            c.s2c.drops = Drops::default();
            let s = self.has_deliveries.then_some(0);
            c.c2s.spurious_rexmt = s;
            c.s2c.spurious_rexmt = s;
            c.c2s.spurious_rtos = s;
            c.s2c.spurious_rtos = s;
        }
        // Per connection direction, the sequence numbers of its spurious retransmissions.
        let mut spurious_seqs: HashMap<(usize, bool), Vec<u32>> = HashMap::default();
        let spans: Vec<(u64, u64)> = conns.iter().map(|c| (c.first.0, c.last.0)).collect();
        for (flow, ev) in &self.flows {
            let Some(cands) = by_flow.get(flow) else {
                continue;
            };
            let pick = |t: u64| -> (usize, bool) {
                if cands.len() == 1 {
                    return cands[0];
                }
                let mut best = cands[0];
                for &(i, fwd) in cands {
                    let (first, last) = spans[i];
                    if first <= t {
                        best = (i, fwd);
                    }
                    if first <= t && t <= last {
                        return (i, fwd);
                    }
                }
                best
            };
            for &(t, cause) in &ev.drops {
                let (i, fwd) = pick(t);
                let d = if fwd {
                    &mut conns[i].c2s.drops
                } else {
                    &mut conns[i].s2c.drops
                };
                match cause {
                    DropCause::Queue => d.queue += 1,
                    DropCause::Red => d.red += 1,
                    DropCause::Aqm => d.aqm += 1,
                    DropCause::Error => d.error += 1,
                    DropCause::Mtu | DropCause::Other => d.mtu += 1,
                }
            }
            for &t in &ev.marks {
                let (i, fwd) = pick(t);
                let d = if fwd {
                    &mut conns[i].c2s.drops
                } else {
                    &mut conns[i].s2c.drops
                };
                d.marks += 1;
            }
            for &t in &ev.spurious {
                let (i, fwd) = pick(t);
                let s = if fwd {
                    &mut conns[i].c2s.spurious_rexmt
                } else {
                    &mut conns[i].s2c.spurious_rexmt
                };
                *s = Some(s.unwrap_or(0) + 1);
            }
            for &(t, seq) in &ev.spurious_seqs {
                spurious_seqs.entry(pick(t)).or_default().push(seq);
            }
        }
        // A timeout is spurious when the segment it resent had been delivered: each RTO
        // retransmission takes one spurious retransmission of the same sequence number.
        for ((i, fwd), mut seqs) in spurious_seqs {
            let d = if fwd {
                &mut conns[i].c2s
            } else {
                &mut conns[i].s2c
            };
            let mut n = 0;
            for s in &d.rto_seqs {
                if let Some(k) = seqs.iter().position(|x| x == s) {
                    seqs.swap_remove(k);
                    n += 1;
                }
            }
            d.spurious_rtos = Some(n);
        }
    }
}
