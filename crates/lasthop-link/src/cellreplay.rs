//! CellReplay's pair of traces (Sentosa et al., NSDI 2025, `mm-cellular`): a direction's base
//! delay and capacity from a *packet-train* trace recorded under a light workload and a
//! *heavy* trace recorded saturated, the packet choosing between them by the offered load.
//!
//! `[down.trace] cellreplay = { train = "FILE", heavy = "FILE" }`:
//!
//! - the **train** file (CellReplay's `*-delay-light-pdo`): one line per recorded packet train,
//!   `TIME DELAY PDO0 PDO1 ...`, whole milliseconds: when the train was sent (from 0, not
//!   decreasing), the one-way base delay its first packet saw, and the offsets of the train's
//!   packets' arrivals from the first's (its *light* packet delivery opportunities, PDOs; the
//!   first is 0). The last line's time ends the cycle (the trace loops);
//! - the **heavy** file (CellReplay's `*-heavy-pdo`): Mahimahi's format, one delivery
//!   opportunity per line in ms, recorded under saturation;
//! - an optional **latency offset** by packet size (`--psize-latency-offset-*`): lines
//!   `SIZE OFFSET`, sizes 100, 200, ... bytes, offsets in ms.
//!
//! Each PDO, light or heavy, carries `opportunity` bytes (1400, CellReplay's `PACKET_SIZE`;
//! counted with the link's `overhead`, and CellReplay counts the 4-byte TUN header as Mahimahi
//! does, so `overhead = "4B"` gives its accounting).
//!
//! What CellReplay's `CellularQueue` (`src/frontend/cellular_queue.cc`) does with a packet, and
//! what this file keeps (docs/link-model.md, "CellReplay's pair of traces"):
//!
//! 1. A packet starts a new *train* when it is the first, or when its earliest release (now +
//!    the current base delay) is later than the release computed for the packet before plus
//!    the restart timer (`--long-to-short-timer`, default 0): the light queue has drained. The
//!    train's base delay is the train trace's, interpolated linearly between the line in force
//!    and the next at the packet's millisecond and truncated to a whole ms; the packet is
//!    released after that base delay, using the train's first light PDO.
//! 2. A later packet of the train skips the light PDOs that came before it (each new one
//!    offering `opportunity` bytes), takes the next PDO if the current one has fewer bytes left
//!    than it needs (a packet never spans light PDOs), and is released at the train's start +
//!    base delay + its PDO's offset.
//! 3. A packet past the train's last light PDO goes to the heavy queue, released into it at
//!    now + max(base delay, last PDO's offset).
//! 4. The latency offset of the packet's size (rounded to a ms) is added when it does not move
//!    the release before the previous packet's; a release before the previous packet's is
//!    raised to it, and that packet goes to the heavy queue.
//! 5. At its release a light packet leaves unless the heavy queue holds packets (then it joins
//!    them); the heavy queue is Mahimahi's link queue following the heavy trace.
//!
//! lasthop computes each packet's departure by these five steps, from its arrival at the link
//! (after any middlebox), when it reaches the direction's serializer; the serializer is the PDO
//! server, so the router queue in front keeps its meaning. A packet holds the serializer until
//! its light PDO (at once for a train's first packet), or on the heavy path until a base delay
//! before it leaves, and propagates for the rest. So it leaves when CellReplay would have
//! released it, unless the router queue held it longer (a limited queue can also drop it,
//! which CellReplay's unlimited default queue never does): then at once when it reaches the
//! serializer. Both traces start at the run's time 0 (CellReplay's at the direction's first
//! packet); arrivals count from their whole millisecond, as CellReplay's clock (so a packet
//! 0.7 ms into a millisecond may leave 0.7 ms sooner after it arrived); and packets larger than an
//! opportunity are carried (CellReplay refuses them): one light PDO each, several heavy ones.
//! Nothing here draws a random number (CellReplay's `--loss-rate` is parsed but never used).

use crate::files;
use crate::trace::{CellReplaySpec, Trace, TraceServer};
use lasthop_core::spec::{err, SpecError};
use lasthop_core::{Bytes, Dur, Time};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// CellReplay's bytes per packet delivery opportunity (`CellularQueue::PACKET_SIZE`).
pub const CELLREPLAY_OPPORTUNITY: u64 = 1400;

const NS_PER_MS: u64 = 1_000_000;

/// One line of the train trace.
#[derive(Clone, PartialEq, Debug)]
struct Train {
    at_ms: u64,
    base_ms: u64,
    /// The light PDOs' offsets from the train's first packet, ms; the first is 0.
    pdo_ms: Box<[u64]>,
}

/// A validated CellReplay pair: what the direction's serializer follows.
#[derive(Clone, PartialEq)]
pub struct CellReplay {
    pub train_file: String,
    trains: Arc<[Train]>,
    /// The heavy trace, a Mahimahi trace of `opportunity`-byte opportunities.
    pub heavy: Box<Trace>,
    pub opportunity: u64,
    pub restart_after: Dur,
    /// The latency offset file and its offsets (ms) for 100, 200, ... bytes.
    offsets: Option<(String, Arc<[f64]>)>,
}

impl fmt::Debug for CellReplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CellReplay({:?}, {})", self.train_file, self)
    }
}

impl fmt::Display for CellReplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.trains;
        let base = |g: fn(u64, u64) -> u64| t.iter().map(|x| x.base_ms).reduce(g).unwrap_or(0);
        let pdos =
            |g: fn(usize, usize) -> usize| t.iter().map(|x| x.pdo_ms.len()).reduce(g).unwrap_or(0);
        write!(
            f,
            "{} trains over {} s (base delay {}–{} ms, {}–{} light PDOs of {}B each), heavy PDOs {:?}: {}",
            t.len() - 1,
            Dur(t[t.len() - 1].at_ms * NS_PER_MS).as_secs_f64(),
            base(u64::min),
            base(u64::max),
            pdos(usize::min),
            pdos(usize::max),
            self.opportunity,
            self.heavy.file,
            self.heavy
        )?;
        if let Some((file, _)) = &self.offsets {
            write!(f, "; latency offset by size from {file:?}")?;
        }
        if self.restart_after > Dur::ZERO {
            write!(f, "; a new train after {}", self.restart_after)?;
        }
        Ok(())
    }
}

impl CellReplay {
    /// Reads and checks the pair `c` names (files relative to `base`); `key` is the `cellreplay`
    /// table's key (`down.trace.cellreplay`); `opportunity` and `looping` are the trace table's
    /// (`looping` applies to the heavy trace: the train trace always repeats, as CellReplay's).
    pub fn load(
        key: &str,
        c: &CellReplaySpec,
        opportunity: Option<Bytes>,
        looping: bool,
        base: &Path,
    ) -> Result<CellReplay, SpecError> {
        let k = |f: &str| format!("{key}.{f}");
        let size = opportunity.map_or(CELLREPLAY_OPPORTUNITY, |b| b.0);
        if !(1..=1 << 30).contains(&size) {
            return Err(err(
                key.rsplit_once('.')
                    .map_or(key.to_string(), |(t, _)| format!("{t}.opportunity")),
                format!("{size}B: an opportunity carries 1B..1GiB (CellReplay's is 1400B)"),
            ));
        }
        let Some(train_file) = &c.train else {
            return Err(err(
                k("train"),
                "missing: the packet-train trace (TIME DELAY PDO... lines, CellReplay's `*-delay-light-pdo`), e.g. train = \"down-delay-light-pdo\"",
            ));
        };
        let Some(heavy_file) = &c.heavy else {
            return Err(err(
                k("heavy"),
                "missing: the heavy PDO trace (one delivery opportunity per line in ms, CellReplay's `*-heavy-pdo`), e.g. heavy = \"down-heavy-pdo\"",
            ));
        };
        let text = files::read(
            base,
            &k("train"),
            train_file,
            "a CellReplay packet-train trace",
        )?;
        let trains = parse_trains(&k("train"), train_file, &text)?;
        let heavy = Trace::load(
            &k("heavy"),
            &crate::trace::TraceSpec {
                mahimahi: Some(heavy_file.clone()),
                opportunity: Some(Bytes(size)),
                looping: Some(looping),
                ..Default::default()
            },
            base,
        )
        .map_err(|e| rename_key(e, &format!("{}.mahimahi", k("heavy")), &k("heavy")))?;
        let offsets = match &c.latency_offset {
            None => None,
            Some(file) => {
                let text = files::read(
                    base,
                    &k("latency_offset"),
                    file,
                    "a CellReplay latency offset by packet size",
                )?;
                Some((
                    file.clone(),
                    parse_offsets(&k("latency_offset"), file, &text)?.into(),
                ))
            }
        };
        Ok(CellReplay {
            train_file: train_file.clone(),
            trains: trains.into(),
            heavy: Box::new(heavy),
            opportunity: size,
            restart_after: c.restart_after.unwrap_or(Dur::ZERO),
            offsets,
        })
    }

    /// The base delay of a train starting at `t` (CellReplay's: the line in force at the
    /// whole millisecond of `t` within the cycle, interpolated linearly towards the next line
    /// and truncated to a whole ms).
    pub fn base_delay(&self, t: Time) -> Dur {
        let tr = &self.trains;
        let cycle = tr[tr.len() - 1].at_ms;
        let off = (t.0 / NS_PER_MS) % cycle;
        // The last line ends the cycle: the line in force is one of the others.
        let used = &tr[..tr.len() - 1];
        let i = used.partition_point(|x| x.at_ms <= off) - 1;
        let (a, b) = (&tr[i], &tr[i + 1]);
        let num = i128::from(off - a.at_ms) * (i128::from(b.base_ms) - i128::from(a.base_ms));
        let den = i128::from(b.at_ms - a.at_ms);
        let ms = i128::from(a.base_ms) + num.div_euclid(den);
        Dur(u64::try_from(ms).unwrap_or(0) * NS_PER_MS)
    }

    /// The latency offset of a packet of `bytes` (overhead included), in whole ms as
    /// CellReplay rounds it; 0 without an offset file.
    pub fn latency_offset_ms(&self, bytes: u64) -> i64 {
        let Some((_, o)) = &self.offsets else {
            return 0;
        };
        let (idx, rem) = ((bytes / 100) as usize, bytes % 100);
        let v = if idx == 0 {
            o[0]
        } else if idx > o.len() - 1 {
            o[o.len() - 1]
        } else {
            let i = idx - 1;
            o[i] + (rem as f64 / 100.0) * (o[i + 1] - o[i])
        };
        v.round() as i64
    }
}

/// A key error from the heavy trace's Mahimahi loader, named by the `heavy` key.
fn rename_key(e: SpecError, from: &str, to: &str) -> SpecError {
    if e.key == from {
        err(to, e.message)
    } else {
        e
    }
}

const TRAIN_WHAT: &str = "a CellReplay packet-train trace has `TIME DELAY PDO0 PDO1 ...` per line, whole milliseconds: the train's time (the first 0, not decreasing), its base delay, and its light PDOs' offsets (the first 0, not decreasing)";

/// The train trace: `TIME DELAY PDO...` lines, at least three (CellReplay's rule; the last
/// ends the cycle).
fn parse_trains(key: &str, file: &str, text: &str) -> Result<Vec<Train>, SpecError> {
    let mut trains: Vec<Train> = Vec::new();
    let mut values = 0usize;
    for (line, l) in files::value_lines(text) {
        let bad = |p: String| files::line_err(key, file, line, format!("{p}; {TRAIN_WHAT}"));
        let mut nums = Vec::new();
        for f in l.split_whitespace() {
            let n: u64 = f
                .parse()
                .map_err(|_| bad(format!("{f:?} is not a whole number of milliseconds")))?;
            if n > u64::from(u32::MAX) {
                return Err(bad(format!(
                    "{n} ms is past the longest trace, {} ms",
                    u32::MAX
                )));
            }
            nums.push(n);
        }
        values += nums.len();
        files::check_count(key, file, values)?;
        let [at_ms, base_ms, ref pdo @ ..] = nums[..] else {
            return Err(bad(format!("{l:?} has no base delay")));
        };
        if pdo.is_empty() {
            return Err(bad(format!(
                "{l:?} has no light PDO (the first, 0, is its first packet)"
            )));
        }
        if pdo[0] != 0 {
            return Err(bad(format!(
                "the first PDO is {}, not 0 (it is the train's first packet)",
                pdo[0]
            )));
        }
        if let Some(w) = pdo.windows(2).find(|w| w[1] < w[0]) {
            return Err(bad(format!(
                "PDO {} comes after {}: the PDOs must not decrease",
                w[1], w[0]
            )));
        }
        match trains.last() {
            None if at_ms != 0 => {
                return Err(bad(format!("the first line is at {at_ms} ms, not 0")))
            }
            Some(p) if at_ms < p.at_ms => {
                return Err(bad(format!(
                    "{at_ms} comes after {}: the times must not decrease",
                    p.at_ms
                )))
            }
            _ => {}
        }
        trains.push(Train {
            at_ms,
            base_ms,
            pdo_ms: pdo.into(),
        });
    }
    if trains.len() < 3 {
        return Err(err(
            key,
            format!("{file:?} has {} lines, and CellReplay needs at least three (the last ends the cycle); {TRAIN_WHAT}", trains.len()),
        ));
    }
    if trains[trains.len() - 1].at_ms == 0 {
        return Err(err(
            key,
            format!("{file:?} lasts 0 ms: its last line's time is the cycle's length and must be above 0"),
        ));
    }
    Ok(trains)
}

/// The latency offset file: `SIZE OFFSET` lines, sizes 100, 200, ... (CellReplay's rule),
/// offsets in ms.
fn parse_offsets(key: &str, file: &str, text: &str) -> Result<Vec<f64>, SpecError> {
    const WHAT: &str = "a CellReplay latency offset file has `SIZE OFFSET` per line: sizes 100, 200, 300, ... bytes in steps of 100, offsets in milliseconds";
    let mut out = Vec::new();
    for (line, l) in files::value_lines(text) {
        let bad = |p: String| files::line_err(key, file, line, format!("{p}; {WHAT}"));
        let fields: Vec<&str> = l.split_whitespace().collect();
        let [size, off] = fields[..] else {
            return Err(bad(format!("{l:?} is not two values")));
        };
        let want = 100 * (out.len() as u64 + 1);
        if size.parse::<u64>().ok() != Some(want) {
            return Err(bad(format!(
                "the size is {size:?}, and this line's must be {want}"
            )));
        }
        let off = off
            .strip_suffix("ms")
            .unwrap_or(off)
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && x.abs() < 1e9)
            .ok_or_else(|| bad(format!("{off:?} is not a number of milliseconds")))?;
        out.push(off);
        files::check_count(key, file, out.len())?;
    }
    if out.is_empty() {
        return Err(err(key, format!("{file:?} has no lines; {WHAT}")));
    }
    Ok(out)
}

/// The direction's serializer following a CellReplay pair: when each transmission ends, and
/// the propagation delay of the packet it planned last.
pub(crate) struct CellServer {
    pair: CellReplay,
    heavy: TraceServer,
    /// No train yet (CellReplay's `current_base_delay_ < 0`).
    started: bool,
    /// The current train: its base delay, its first packet's start, its light PDO and the
    /// bytes that PDO has left (negative once a larger packet took it).
    base: Dur,
    train_start: Time,
    train: usize,
    pdo: usize,
    left: i64,
    /// The release computed for the previous packet before its offset (CellReplay's
    /// `last_delay_queue_release_time_`) and after it (`end_release_time_`).
    last_release: Time,
    end_release: Time,
    /// When the last packet on the heavy path leaves (CellReplay's heavy queue holds packets
    /// until then).
    heavy_out: Option<Time>,
    /// The propagation of the packet planned last.
    delay: Dur,
}

impl CellServer {
    pub fn new(pair: CellReplay) -> CellServer {
        let heavy = TraceServer::new((*pair.heavy).clone());
        CellServer {
            pair,
            heavy,
            started: false,
            base: Dur::ZERO,
            train_start: Time::ZERO,
            train: 0,
            pdo: 0,
            left: 0,
            last_release: Time::ZERO,
            end_release: Time::ZERO,
            heavy_out: None,
            delay: Dur::ZERO,
        }
    }

    /// When the transmission of `bytes` (overhead included) of a packet that reached the link
    /// at `a` and the serializer at `s` ends; its propagation is then [`CellServer::delay`].
    /// `None`: never (a heavy trace with `loop = false` that ended).
    pub fn finish(&mut self, a: Time, s: Time, bytes: u64) -> Option<Time> {
        // A packet the heavy trace will never send stays at the serializer and is planned
        // again: it must find the trains as they were.
        let saved = (
            self.started,
            self.base,
            self.train_start,
            self.train,
            self.pdo,
            self.left,
            self.last_release,
            self.end_release,
            self.heavy_out,
        );
        let end = self.plan(a, s, bytes);
        if end.is_none() {
            (
                self.started,
                self.base,
                self.train_start,
                self.train,
                self.pdo,
                self.left,
                self.last_release,
                self.end_release,
                self.heavy_out,
            ) = saved;
        }
        end
    }

    /// [`CellServer::finish`]'s steps.
    fn plan(&mut self, a: Time, s: Time, bytes: u64) -> Option<Time> {
        // CellReplay's clock: whole milliseconds (`timestamp()`), so packets within the same
        // millisecond count as arriving together (and continue a train).
        let a = Time(a.0 / NS_PER_MS * NS_PER_MS);
        let c = &self.pair;
        let opp = c.opportunity as i64;
        let size = bytes as i64;
        // Steps 1–3, from the packet's arrival: the train.
        let new_train = !self.started || a + self.base > self.last_release + c.restart_after;
        let (mut release, mut light, light_end) = if new_train {
            self.started = true;
            self.base = c.base_delay(a);
            self.train_start = a;
            self.train = self.train_index(a);
            self.pdo = 0;
            self.left = opp - size;
            (a + self.base, true, a)
        } else {
            let pdos = &c.trains[self.train].pdo_ms;
            let offset = a - self.train_start;
            while self.pdo < pdos.len() && offset.0 > pdos[self.pdo] * NS_PER_MS {
                self.pdo += 1;
                self.left = opp;
            }
            if self.left < size {
                self.pdo += 1;
                self.left = opp;
            }
            self.left -= size;
            match pdos.get(self.pdo) {
                Some(&p) => {
                    let at = self.train_start + Dur(p * NS_PER_MS);
                    (at + self.base, true, at)
                }
                None => {
                    let last = Dur(pdos[pdos.len() - 1] * NS_PER_MS);
                    (a + self.base.max(last), false, a)
                }
            }
        };
        self.last_release = release;
        // Step 4: the latency offset, and the order.
        let off = c.latency_offset_ms(bytes) as i128 * i128::from(NS_PER_MS);
        if off != 0 {
            let moved = i128::from(release.0) + off;
            if moved >= i128::from(self.end_release.0) {
                release = Time(u64::try_from(moved.max(i128::from(a.0))).unwrap_or(u64::MAX));
            }
        }
        if release < self.end_release {
            release = self.end_release;
            light = false;
        }
        self.end_release = release;
        // Step 5: the light path while the heavy queue is empty at the release (its last packet
        // left before; one leaving at that very ms still counts, as CellReplay moves released
        // packets before it writes the heavy queue's), else the heavy queue, which the packet
        // enters at its release: it takes the leftover of the opportunity that sent the packet
        // before if it was waiting when that opportunity came, else the first opportunity
        // after its release (Mahimahi's rules, `TraceServer`, on the release times, which do
        // not decrease).
        let heavy_empty = self.heavy_out.is_none_or(|h| h < release);
        let (out, end) = if light && heavy_empty {
            // It holds the serializer until its light PDO.
            (release, light_end.max(s))
        } else {
            // Entering at (or after) the opportunity that sent the packet before, it missed
            // that opportunity's leftover (Mahimahi serves opportunities before it enqueues).
            if self.heavy_out.is_none_or(|h| h <= release) {
                self.heavy.idle();
            }
            let out = self.heavy.finish(release, bytes)?;
            self.heavy_out = Some(out);
            // It holds the serializer until a base delay before it leaves.
            (out, Time(out.0.saturating_sub(self.base.0)).max(s))
        };
        self.delay = Dur(out.0.saturating_sub(end.0));
        Some(end)
    }

    /// The index of the train line in force at `t` (within the cycle).
    fn train_index(&self, t: Time) -> usize {
        let tr = &self.pair.trains;
        let off = (t.0 / NS_PER_MS) % tr[tr.len() - 1].at_ms;
        tr[..tr.len() - 1].partition_point(|x| x.at_ms <= off) - 1
    }

    /// The propagation delay of the packet [`CellServer::finish`] planned last.
    #[inline]
    pub fn delay(&self) -> Dur {
        self.delay
    }
}
