//! Joining the link's event log (`events.csv`, written by `lasthop-link`) with the connections:
//! drops by cause, ECN marks, and spurious retransmissions, per direction.
//!
//! Rows are matched to a connection direction by the `flow` column, which is the
//! `FlowKey` display form (`tcp:198.18.0.1:5001>198.19.0.1:80`). When a 4-tuple carried several
//! connections, a row goes to the one whose packets span its time (else the latest that started
//! before it).

use crate::conn::{ConnStats, Drops};
use crate::Error;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// What the event log says about one flow (one direction of a connection).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowEvents {
    /// (time_ns, cause) of every drop, and time of every CE mark.
    pub drops: Vec<(u64, DropCause)>,
    pub marks: Vec<u64>,
    /// Arrival times of retransmissions whose earlier copy was delivered.
    pub spurious: Vec<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    Queue,
    Red,
    Error,
    Mtu,
    Other,
}

impl DropCause {
    fn parse(s: &str) -> DropCause {
        match s {
            "queue" => DropCause::Queue,
            "red" => DropCause::Red,
            "error" => DropCause::Error,
            "mtu" => DropCause::Mtu,
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
    pub rows: u64,
}

struct Arrival {
    packet: u64,
    time: u64,
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
        let mut lines = BufReader::new(r).lines();
        let header = match lines.next() {
            Some(Ok(h)) => h,
            Some(Err(e)) => {
                return Err(Error::Io {
                    path: source.to_string(),
                    error: e,
                })
            }
            None => return Err(bad(1, "empty file, expected a header row".into())),
        };
        let cols: Vec<&str> = header.trim_end().split(',').collect();
        let col = |name: &str| -> Result<usize, Error> {
            cols.iter().position(|c| *c == name).ok_or_else(|| {
                bad(
                    1,
                    format!("no `{name}` column (is this an events.csv of lasthop-link?)"),
                )
            })
        };
        let (c_time, c_event, c_packet, c_flow) =
            (col("time_ns")?, col("event")?, col("packet")?, col("flow")?);
        let (c_seq, c_len, c_cause) = (col("tcp_seq")?, col("tcp_len")?, col("cause")?);

        let mut log = EventLog::default();
        // (flow, seq, len) → arrivals in order; packet ids released.
        let mut arrivals: HashMap<(String, u32, u32), Vec<Arrival>> = HashMap::new();
        let mut released: HashSet<u64> = HashSet::new();
        let mut saw_arrive = false;
        let mut saw_release = false;
        for (n, line) in lines.enumerate() {
            let lineno = n as u64 + 2;
            let line = line.map_err(|e| Error::Io {
                path: source.to_string(),
                error: e,
            })?;
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() < cols.len() {
                return Err(bad(
                    lineno,
                    format!("{} fields, the header has {}", fields.len(), cols.len()),
                ));
            }
            log.rows += 1;
            let event = fields[c_event];
            let flow = fields[c_flow];
            if !flow.starts_with("tcp:") {
                continue;
            }
            let time: u64 = fields[c_time]
                .parse()
                .map_err(|_| bad(lineno, format!("bad time_ns `{}`", fields[c_time])))?;
            let packet = || -> Result<u64, Error> {
                fields[c_packet]
                    .parse()
                    .map_err(|_| bad(lineno, format!("bad packet id `{}`", fields[c_packet])))
            };
            match event {
                "drop" => {
                    let cause = DropCause::parse(fields[c_cause]);
                    log.flows
                        .entry(flow.to_string())
                        .or_default()
                        .drops
                        .push((time, cause));
                }
                "mark" => log
                    .flows
                    .entry(flow.to_string())
                    .or_default()
                    .marks
                    .push(time),
                "arrive" => {
                    saw_arrive = true;
                    let (Ok(seq), Ok(len)) =
                        (fields[c_seq].parse::<u32>(), fields[c_len].parse::<u32>())
                    else {
                        continue;
                    };
                    if len == 0 {
                        continue;
                    }
                    arrivals
                        .entry((flow.to_string(), seq, len))
                        .or_default()
                        .push(Arrival {
                            packet: packet()?,
                            time,
                        });
                }
                "release" => {
                    saw_release = true;
                    released.insert(packet()?);
                }
                _ => {}
            }
        }
        log.has_deliveries = saw_arrive && saw_release;
        if log.has_deliveries {
            for ((flow, _, _), list) in arrivals {
                let mut delivered_before = false;
                for (k, a) in list.iter().enumerate() {
                    if k > 0 && delivered_before {
                        log.flows
                            .entry(flow.clone())
                            .or_default()
                            .spurious
                            .push(a.time);
                    }
                    delivered_before |= released.contains(&a.packet);
                }
            }
            for f in log.flows.values_mut() {
                f.spurious.sort_unstable();
            }
        }
        Ok(log)
    }

    /// Adds drops, marks and spurious retransmissions to the connections.
    pub fn join(&self, conns: &mut [ConnStats]) {
        // flow string → connection indices (client→server, and server→client direction).
        let mut by_flow: HashMap<String, Vec<(usize, bool)>> = HashMap::new();
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
        }
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
        }
    }
}
