//! Trace-driven rate: a direction's capacity over time from a file (`[down.trace]`), instead of
//! a fixed `rate`.
//!
//! Two formats:
//!
//! - **Mahimahi** (`mahimahi = "FILE"`, `mm-link`'s format): one *delivery opportunity* per
//!   line, a whole number of milliseconds from the start. Each opportunity carries up to
//!   `opportunity` bytes (1504 by default, Mahimahi's `PACKET_SIZE`) of the bytes waiting to be
//!   sent; a packet may span several opportunities, several small packets may share one, and
//!   an opportunity that finds nothing to send is lost. A timestamp repeated N times is N
//!   opportunities in that millisecond. The trace loops: its last timestamp is its length, and
//!   opportunity k of a trace of n lines lies at ⌊k/n⌋·last + t[k mod n]. A stretch with no
//!   line is an outage.
//! - **Timed rates** (`rates = "FILE"`): lines `TIME RATE` (units written out, or bare numbers
//!   in seconds and Mbit/s, the "cooked" throughput logs), the first at time 0, times
//!   increasing. Each rate holds until the next line's time; a rate of 0 is an outage. Bits
//!   are sent at the rate in force bit by bit, so a packet sent across a change or an outage
//!   takes exactly the time its bits need. Looping, the last line marks the end of a cycle
//!   (its rate is not used); not looping, its rate holds for ever.
//!
//! Mahimahi's rules, kept exactly (its `LinkQueue::rationalize`): a packet may use an
//! opportunity only if it was waiting when the opportunity came, so a packet arriving at the
//! very time of an opportunity misses it; bytes left over in an opportunity go to the next
//! packet only if that packet is already waiting; a transmission ends at the opportunity that
//! carries its last byte. Mahimahi counts a packet with the 4-byte header of its TUN device
//! (1504 bytes = a 1500-byte IP packet): the link's `overhead = "4B"` gives its accounting.
//!
//! A third, **CellReplay's pair** (`cellreplay = { train = "FILE", heavy = "FILE" }`), gives the
//! direction its base delay and its capacity from a light and a heavy trace: see
//! `crate::cellreplay`, which reads it; the heavy trace is then the direction's [`Trace`].

use crate::files;
use lasthop_core::spec::{err, SpecError};
use lasthop_core::units::{parse_dur, parse_rate, UnitProblem};
use lasthop_core::{Bytes, Dur, Time};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Mahimahi's bytes per delivery opportunity (`LinkQueue::PACKET_SIZE`: a 1500-byte IP packet
/// and its TUN header).
pub const MAHIMAHI_OPPORTUNITY: u64 = 1504;

const NS_PER_MS: u64 = 1_000_000;

/// `[down.trace]`, `[up.trace]` or `[both.trace]` as written.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// A Mahimahi trace file: one delivery opportunity per line, in milliseconds.
    pub mahimahi: Option<String>,
    /// A timed rate file: `TIME RATE` lines.
    pub rates: Option<String>,
    /// CellReplay's pair of traces: a packet-train trace (base delay and light PDOs) and a
    /// heavy PDO trace (`crate::cellreplay`).
    pub cellreplay: Option<CellReplaySpec>,
    /// `mahimahi`: the bytes one opportunity carries (default 1504B, Mahimahi's).
    pub opportunity: Option<Bytes>,
    /// Whether the trace repeats after its end (default true, as Mahimahi's `mm-link`).
    #[serde(rename = "loop")]
    pub looping: Option<bool>,
}

/// `[DIR.trace] cellreplay = { ... }` as written (`crate::cellreplay` reads it).
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellReplaySpec {
    /// The packet-train trace: `TIME DELAY PDO...` lines (CellReplay's `*-delay-light-pdo`).
    pub train: Option<String>,
    /// The heavy PDO trace: Mahimahi's format (CellReplay's `*-heavy-pdo`).
    pub heavy: Option<String>,
    /// The latency offset by packet size: `SIZE OFFSET` lines (CellReplay's
    /// `--psize-latency-offset-*`).
    pub latency_offset: Option<String>,
    /// CellReplay's `--long-to-short-timer-*`: how much later than the previous packet's
    /// release a packet's earliest release must be to start a new train (default 0).
    pub restart_after: Option<Dur>,
}

/// A validated trace: what the direction's serializer follows.
#[derive(Clone, PartialEq)]
pub struct Trace {
    /// The file as the spec named it.
    pub file: String,
    pub shape: Shape,
    pub looping: bool,
}

#[derive(Clone, PartialEq)]
pub enum Shape {
    /// Mahimahi: opportunity times in ms, not decreasing, each carrying `size` bytes.
    Opportunities { ms: Arc<[u32]>, size: u64 },
    /// Timed rates: (start in ns, bit/s), the first at 0, starts increasing.
    Rates { steps: Arc<[(u64, u64)]> },
}

impl fmt::Debug for Trace {
    /// A summary: the whole trace would flood any message that prints a config.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Trace({:?}, {})", self.file, self)
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = Dur(self.length_ns()).as_secs_f64();
        match &self.shape {
            Shape::Opportunities { ms, size } => {
                write!(f, "{} opportunities of {size}B over {end} s", ms.len())?
            }
            Shape::Rates { steps } => write!(f, "{} rate steps over {end} s", steps.len())?,
        }
        write!(
            f,
            ", mean {:.3} Mbit/s{}",
            self.mean_bps() / 1e6,
            if self.looping { ", looping" } else { "" }
        )
    }
}

impl Trace {
    /// Reads and checks the trace `t` names (files relative to `base`); `key` is its table.
    pub fn load(key: &str, t: &TraceSpec, base: &Path) -> Result<Trace, SpecError> {
        let k = |f: &str| format!("{key}.{f}");
        let looping = t.looping.unwrap_or(true);
        match (&t.mahimahi, &t.rates) {
            (Some(file), None) => {
                let size = t.opportunity.map_or(MAHIMAHI_OPPORTUNITY, |b| b.0);
                if !(1..=1 << 30).contains(&size) {
                    return Err(err(
                        k("opportunity"),
                        format!("{size}B: an opportunity carries 1B..1GiB (Mahimahi's is 1504B)"),
                    ));
                }
                let text = files::read(base, &k("mahimahi"), file, "a Mahimahi trace")?;
                let ms = parse_mahimahi(&k("mahimahi"), file, &text)?;
                Ok(Trace {
                    file: file.clone(),
                    shape: Shape::Opportunities {
                        ms: ms.into(),
                        size,
                    },
                    looping,
                })
            }
            (None, Some(file)) => {
                if t.opportunity.is_some() {
                    return Err(err(
                        k("opportunity"),
                        "belongs to a Mahimahi trace (`mahimahi`), not to a rate trace (`rates`), whose rates say how fast bits go",
                    ));
                }
                let text = files::read(base, &k("rates"), file, "a rate trace")?;
                let steps = parse_rates(&k("rates"), file, &text, looping)?;
                Ok(Trace {
                    file: file.clone(),
                    shape: Shape::Rates {
                        steps: steps.into(),
                    },
                    looping,
                })
            }
            (Some(_), Some(_)) => Err(err(
                key,
                "give one of `mahimahi` (a file of delivery opportunities) or `rates` (a file of TIME RATE lines), not both",
            )),
            (None, None) => Err(err(
                key,
                "missing the file: `mahimahi = \"FILE\"` (one delivery opportunity per line, in ms), `rates = \"FILE\"` (TIME RATE lines) or `cellreplay = { train = \"FILE\", heavy = \"FILE\" }` (CellReplay's pair)",
            )),
        }
    }

    /// The trace's length: a cycle when it loops; else up to its last line.
    pub fn length_ns(&self) -> u64 {
        match &self.shape {
            Shape::Opportunities { ms, .. } => {
                u64::from(*ms.last().expect("not empty")) * NS_PER_MS
            }
            Shape::Rates { steps } => steps.last().expect("not empty").0,
        }
    }

    /// The mean capacity over the trace's length, bit/s (a rate trace that does not loop: up
    /// to its last line, or its only rate).
    pub fn mean_bps(&self) -> f64 {
        let len = self.length_ns();
        match &self.shape {
            Shape::Opportunities { ms, size } => {
                (ms.len() as f64 * *size as f64 * 8.0) / (len as f64 / 1e9)
            }
            Shape::Rates { steps } if len == 0 => steps[0].1 as f64,
            Shape::Rates { .. } => {
                self.capacity_bits(Time::ZERO, Time(len)) as f64 / (len as f64 / 1e9)
            }
        }
    }

    /// The bits the trace can carry in `[from, to)` (the summary's capacity line).
    pub fn capacity_bits(&self, from: Time, to: Time) -> u128 {
        if to <= from {
            return 0;
        }
        match &self.shape {
            Shape::Opportunities { ms, size } => {
                let at_or_after = |t: Time| {
                    self.first_opportunity(ms, t.0, true)
                        .unwrap_or(ms.len() as u64)
                };
                let n = at_or_after(to).saturating_sub(at_or_after(from));
                u128::from(n) * u128::from(*size) * 8
            }
            Shape::Rates { steps } => {
                let mut bits_ns = 0u128;
                let mut t = from.0;
                while t < to.0 {
                    let (rate, end) = self.rate_at(steps, t);
                    let e = end.min(to.0);
                    bits_ns += u128::from(rate) * u128::from(e - t);
                    t = e;
                }
                bits_ns / 1_000_000_000
            }
        }
    }

    /// The index of the first opportunity at or after `t` (`at_or_after`) or strictly after it;
    /// `None` when a trace that does not loop has none left.
    fn first_opportunity(&self, ms: &[u32], t: u64, at_or_after: bool) -> Option<u64> {
        let n = ms.len() as u64;
        let before = |m: &u32, off: u64| {
            let x = u64::from(*m) * NS_PER_MS;
            if at_or_after {
                x < off
            } else {
                x <= off
            }
        };
        if !self.looping {
            let i = ms.partition_point(|m| before(m, t)) as u64;
            return (i < n).then_some(i);
        }
        let period = self.length_ns();
        let c = t / period;
        let off = t - c * period;
        let i = ms.partition_point(|m| before(m, off)) as u64;
        Some(if i < n { c * n + i } else { (c + 1) * n })
    }

    /// The time of opportunity `k`, if the trace has it.
    fn opportunity_time(&self, ms: &[u32], k: u64) -> Option<Time> {
        let n = ms.len() as u64;
        if !self.looping {
            return ms.get(k as usize).map(|m| Time(u64::from(*m) * NS_PER_MS));
        }
        let t = (k / n)
            .checked_mul(self.length_ns())?
            .checked_add(u64::from(ms[(k % n) as usize]) * NS_PER_MS)?;
        Some(Time(t))
    }

    /// The rate in force at `t` and when it next changes (`u64::MAX`: never).
    fn rate_at(&self, steps: &[(u64, u64)], t: u64) -> (u64, u64) {
        if !self.looping {
            let i = steps.partition_point(|s| s.0 <= t) - 1;
            return (steps[i].1, steps.get(i + 1).map_or(u64::MAX, |s| s.0));
        }
        let period = self.length_ns();
        let c = t / period;
        let off = t - c * period;
        // The last line ends the cycle: its rate is not used.
        let used = &steps[..steps.len() - 1];
        let i = used.partition_point(|s| s.0 <= off) - 1;
        (used[i].1, c * period + steps[i + 1].0)
    }
}

/// A direction's serializer following a trace: when each transmission ends.
pub(crate) struct TraceServer {
    trace: Trace,
    /// Mahimahi: the opportunity the last transmission ended in and the bytes it has left,
    /// while the serializer stays busy (the next packet, already waiting, uses them).
    carry: Option<(u64, u64)>,
}

impl TraceServer {
    pub fn new(trace: Trace) -> TraceServer {
        TraceServer { trace, carry: None }
    }

    /// When a transmission of `bytes` starting at `now` ends; `None`: never (a trace that does
    /// not loop has no capacity left).
    pub fn finish(&mut self, now: Time, bytes: u64) -> Option<Time> {
        let trace = &self.trace;
        match &trace.shape {
            Shape::Opportunities { ms, size } => {
                let (mut k, left) = match self.carry.take() {
                    Some((k, left)) if left > 0 => (k, left),
                    Some((k, _)) => (k + 1, *size),
                    // A packet that finds the serializer idle waits for the next opportunity:
                    // one at this very time has passed (Mahimahi serves opportunities before
                    // it enqueues an arrival).
                    None => (trace.first_opportunity(ms, now.0, false)?, *size),
                };
                let left = if bytes <= left {
                    left - bytes
                } else {
                    let rest = bytes - left;
                    let more = rest.div_ceil(*size);
                    k += more;
                    more * size - rest
                };
                let end = trace.opportunity_time(ms, k)?;
                debug_assert!(end >= now);
                self.carry = Some((k, left));
                Some(end)
            }
            Shape::Rates { steps } => {
                // Bits × ns still to send; each stretch at rate r sends r·dt of them.
                let mut need = u128::from(bytes) * 8 * 1_000_000_000;
                let mut t = now.0;
                loop {
                    let (rate, change) = trace.rate_at(steps, t);
                    let r = u128::from(rate);
                    let span = u128::from(change - t);
                    if r > 0 && (change == u64::MAX || r * span >= need) {
                        let dt = need.div_ceil(r);
                        return u64::try_from(u128::from(t) + dt).ok().map(Time);
                    }
                    if change == u64::MAX {
                        return None; // a rate of 0 for ever
                    }
                    need -= r * span;
                    t = change;
                }
            }
        }
    }

    /// The serializer ran out of packets: bytes left in an opportunity are lost.
    #[inline]
    pub fn idle(&mut self) {
        self.carry = None;
    }
}

/// Mahimahi's format: one whole number of milliseconds per line, not decreasing, the last
/// above 0.
fn parse_mahimahi(key: &str, file: &str, text: &str) -> Result<Vec<u32>, SpecError> {
    const WHAT: &str = "a Mahimahi trace has one delivery opportunity per line: a whole number of milliseconds, not decreasing";
    let mut ms: Vec<u32> = Vec::new();
    for (line, l) in files::value_lines(text) {
        let t: u64 = l.parse().map_err(|_| {
            files::line_err(
                key,
                file,
                line,
                format!("{l:?} is not a whole number of milliseconds; {WHAT}"),
            )
        })?;
        let t = u32::try_from(t).map_err(|_| {
            files::line_err(
                key,
                file,
                line,
                format!(
                    "{t} ms is past the longest trace, {} ms (49 days)",
                    u32::MAX
                ),
            )
        })?;
        if let Some(&prev) = ms.last() {
            if t < prev {
                return Err(files::line_err(
                    key,
                    file,
                    line,
                    format!("{t} comes after {prev}: the timestamps must not decrease"),
                ));
            }
        }
        ms.push(t);
        files::check_count(key, file, ms.len())?;
    }
    match ms.last() {
        None => Err(err(key, format!("{file:?} has no timestamps; {WHAT}"))),
        Some(0) => Err(err(
            key,
            format!("{file:?} lasts 0 ms: its last timestamp is its length and must be above 0 (Mahimahi: \"trace must last for a nonzero amount of time\")"),
        )),
        Some(_) => Ok(ms),
    }
}

/// `TIME VALUE` lines (a space or a comma between them; bare times are seconds), the first at
/// time 0, times increasing: (time in ns, `value` of the second field). `what` says the format.
fn parse_steps(
    key: &str,
    file: &str,
    text: &str,
    what: &str,
    value: impl Fn(&str) -> Result<u64, String>,
) -> Result<Vec<(u64, u64)>, SpecError> {
    let mut steps: Vec<(u64, u64)> = Vec::new();
    for (line, l) in files::value_lines(text) {
        let fields: Vec<&str> = l
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        let [t, v] = fields[..] else {
            return Err(files::line_err(
                key,
                file,
                line,
                format!("{l:?} is not two values; {what}"),
            ));
        };
        let t = if t.ends_with(|c: char| c.is_ascii_digit()) {
            parse_dur(&format!("{t}s"))
        } else {
            parse_dur(t)
        }
        .map_err(|e| files::line_err(key, file, line, e))?;
        let v = value(v).map_err(|e| files::line_err(key, file, line, e))?;
        match steps.last() {
            None if t != Dur::ZERO => {
                return Err(files::line_err(
                    key,
                    file,
                    line,
                    format!("the first line is at {t}; {what}"),
                ))
            }
            Some(&(prev, _)) if t.0 <= prev => {
                return Err(files::line_err(
                    key,
                    file,
                    line,
                    format!("{t} does not come after {}: times must increase", Dur(prev)),
                ))
            }
            _ => {}
        }
        steps.push((t.0, v));
        files::check_count(key, file, steps.len())?;
    }
    if steps.is_empty() {
        return Err(err(key, format!("{file:?} has no lines; {what}")));
    }
    Ok(steps)
}

/// Timed rates: `TIME RATE` per line (bare rates in Mbit/s), the first at 0.
fn parse_rates(
    key: &str,
    file: &str,
    text: &str,
    looping: bool,
) -> Result<Vec<(u64, u64)>, SpecError> {
    const WHAT: &str = "a rate trace has `TIME RATE` per line, e.g. `1.5s 12Mbit` (bare numbers are seconds and Mbit/s), the first at time 0, times increasing";
    let steps = parse_steps(key, file, text, WHAT, |r| {
        let bare = r.ends_with(|c: char| c.is_ascii_digit());
        match if bare {
            parse_rate(&format!("{r}Mbit"))
        } else {
            parse_rate(r)
        } {
            Ok(r) if r.is_unlimited() => {
                Err("\"unlimited\" is no rate a trace can give; write a number".to_string())
            }
            Ok(r) => Ok(r.bits_per_sec()),
            // A rate of 0 is an outage.
            Err(e) if matches!(e.problem, UnitProblem::Zero(_)) => Ok(0),
            Err(e) => Err(e.to_string()),
        }
    })?;
    let used = if looping {
        if steps.len() < 2 {
            return Err(err(
                key,
                format!("{file:?} has one line, and a looping trace needs two: its last line marks the end of a cycle. Add one, or set `loop = false` for a constant rate"),
            ));
        }
        &steps[..steps.len() - 1]
    } else {
        &steps[..]
    };
    if used.iter().all(|s| s.1 == 0) {
        return Err(err(
            key,
            format!(
                "{file:?}: every rate is 0, so the link would never send{}",
                if looping {
                    " (looping, the last line's rate is not used)"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(steps)
}

/// `[down.delay_trace]` as written: a time-varying propagation delay (CellReplay's base delay).
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DelayTraceSpec {
    /// `TIME DELAY` lines (units written out, or bare seconds and milliseconds).
    pub file: Option<String>,
    /// Whether it repeats after its last line, which then ends the cycle (default true).
    #[serde(rename = "loop")]
    pub looping: Option<bool>,
}

/// A direction's propagation delay over time, from a file: each packet propagates for the
/// delay in force when its transmission ends (CellReplay's base-delay trace, replayed as a
/// step function). Extra, scripted and netem delays add to it; with `in_order = true` the LRB
/// still releases in link order when the delay falls.
#[derive(Clone, PartialEq)]
pub struct DelayTrace {
    pub file: String,
    steps: Arc<[(u64, u64)]>,
    pub looping: bool,
}

impl fmt::Debug for DelayTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DelayTrace({:?}, {} steps)", self.file, self.steps.len())
    }
}

impl DelayTrace {
    /// Reads and checks the delay trace `t` names (relative to `base`); `key` is its table.
    pub fn load(key: &str, t: &DelayTraceSpec, base: &Path) -> Result<DelayTrace, SpecError> {
        const WHAT: &str = "a delay trace has `TIME DELAY` per line, e.g. `1.5s 40ms` (bare numbers are seconds and milliseconds), the first at time 0, times increasing";
        let k = format!("{key}.file");
        let file = t.file.as_ref().ok_or_else(|| {
            err(
                &k,
                "missing: the file of TIME DELAY lines, e.g. file = \"base-delay.txt\"",
            )
        })?;
        let looping = t.looping.unwrap_or(true);
        let text = files::read(base, &k, file, "a delay trace")?;
        let steps = parse_steps(&k, file, &text, WHAT, |v| {
            let v = if v.ends_with(|c: char| c.is_ascii_digit()) {
                parse_dur(&format!("{v}ms"))
            } else {
                parse_dur(v)
            };
            v.map(|d| d.0).map_err(|e| e.to_string())
        })?;
        if looping && steps.len() < 2 {
            return Err(err(
                &k,
                format!("{file:?} has one line, and a looping trace needs two: its last line marks the end of a cycle. Add one, or set `loop = false` for a constant delay"),
            ));
        }
        Ok(DelayTrace {
            file: file.clone(),
            steps: steps.into(),
            looping,
        })
    }

    /// The delay in force at `t`.
    pub fn at(&self, t: Time) -> Dur {
        let s = &self.steps;
        if !self.looping {
            return Dur(s[s.partition_point(|x| x.0 <= t.0) - 1].1);
        }
        let period = s[s.len() - 1].0;
        let off = t.0 % period;
        // The last line ends the cycle: its delay is not used.
        let used = &s[..s.len() - 1];
        Dur(used[used.partition_point(|x| x.0 <= off) - 1].1)
    }
}
