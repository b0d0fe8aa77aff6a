//! A config described in words and its warnings, for `lasthop check`.

use crate::dir::Dir;
use crate::spec::config::*;
use crate::spec::loss::LossModel;
use crate::spec::queue::*;
use crate::spec::schema::*;
use lasthop_core::{Dur, Rate};

impl LinkConfig {
    /// The legal combinations that leave an element of this link doing nothing, or less than
    /// it says: a queue limit or discipline on a direction whose rate is unlimited (no packet
    /// ever waits), and an AQM behind a link send buffer that alone holds more than the AQM's
    /// target delay (the standing queue sits in the LSB, where the AQM does not see it).
    /// `check`, `sim`, `emu` and `run` print them.
    pub fn warnings(&self) -> Vec<lasthop_core::spec::Warning> {
        use lasthop_core::spec::warn;
        let mut w = vec![];
        for (d, dc) in Dir::BOTH.iter().zip(&self.dirs) {
            let q = &dc.queue;
            if !q.acts() {
                continue;
            }
            // Every rate the direction can run at: the base rate, each state's, the schedule's;
            // a trace's mean stands for its rates.
            let rates: Vec<Rate> = match &dc.trace {
                Some(t) => vec![Rate((t.mean_bps().round() as u64).max(1))],
                None => dc
                    .per_state
                    .iter()
                    .map(|p| p.rate_override.unwrap_or(p.base_rate))
                    .chain(dc.schedule.iter().map(|s| s.1))
                    .collect(),
            };
            if rates.iter().all(|r| r.is_unlimited()) {
                w.push(warn(
                    format!("{d}.queue"),
                    format!(
                        "the router queue's {} can never act: the direction's rate is unlimited, so every packet is sent the moment it arrives and none ever waits in the router queue; give `{d}.rate` (or `both.rate`)",
                        if q.red.is_some() || q.aqm.is_some() {
                            format!("{} discipline", q.policy_name())
                        } else {
                            "limit".to_string()
                        }
                    ),
                ));
                continue;
            }
            let (Some(target), Some(lsb)) = (q.target(), dc.lsb) else {
                continue;
            };
            // The LSB's drain time at the fastest rate the direction has.
            let fastest = rates
                .iter()
                .filter(|r| !r.is_unlimited())
                .max()
                .copied()
                .unwrap_or(Rate::UNLIMITED);
            // Beyond the packet being sent (which no AQM can take back), what the LSB holds
            // waits where the AQM does not see it.
            let beyond = lsb.saturating_sub(u64::from(self.mtu.unwrap_or(1500)));
            let drain = fastest.tx_time(beyond);
            if drain > target {
                w.push(warn(
                    format!("{d}.lsb"),
                    format!(
                        "the link send buffer of {lsb}B holds {drain} of sending at {fastest} beyond the packet being sent{}, more than the {} target of {target}: that standing queue sits in the LSB, which the AQM does not see, so the delay can stay {drain} above the target whatever the AQM does; leave `lsb` out (the LSB then holds only the packet being sent) or make it smaller",
                        if dc.link_ack { " (and with link_ack it holds each packet until it leaves the LRB)" } else { "" },
                        q.policy_name()
                    ),
                ));
            }
        }
        w
    }

    /// A human-readable account of what the spec describes.
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = write!(s, "link {:?}", self.name);
        if let Some(m) = self.mtu {
            let _ = write!(s, ", MTU {m}B");
        }
        let _ = writeln!(s);
        if let Some(d) = &self.description {
            let _ = writeln!(s, "  {d}");
        }
        for d in Dir::BOTH {
            let c = &self.dirs[d.index()];
            let p0 = &c.per_state[0];
            let what = match d {
                Dir::Down => "fixed side -> mobile side",
                Dir::Up => "mobile side -> fixed side",
            };
            let _ = writeln!(s, "{d} ({what}):");
            let mut rate = format!("{}", p0.base_rate);
            if !p0.base_rate.is_unlimited() {
                if let Some(m) = self.mtu {
                    let _ = write!(
                        rate,
                        " ({} per {m}B packet)",
                        p0.base_rate.tx_time(u64::from(m) + u64::from(c.overhead))
                    );
                }
            }
            match (&c.cellreplay, &c.trace) {
                (Some(cr), _) => {
                    let _ = writeln!(
                        s,
                        "  rate and base delay from CellReplay's pair {:?}: {cr}; overhead {}B per packet",
                        cr.train_file, c.overhead
                    );
                }
                (None, Some(t)) => {
                    let what = match t.shape {
                        crate::trace::Shape::Opportunities { .. } => "Mahimahi trace",
                        crate::trace::Shape::Rates { .. } => "rate trace",
                    };
                    let _ = writeln!(
                        s,
                        "  rate from the {what} {:?}: {t}; overhead {}B per packet",
                        t.file, c.overhead
                    );
                }
                (None, None) => {
                    let _ = writeln!(s, "  rate {rate}, overhead {}B per packet", c.overhead);
                }
            }
            for (t, r) in &c.schedule {
                let _ = writeln!(s, "  rate becomes {r} at {}s", t.as_secs_f64());
            }
            if let Some((m, i)) = &c.available {
                let _ = writeln!(
                    s,
                    "  available rate: the rate times {m}, drawn again every {i}"
                );
            }
            if let Some((a, idle)) = &c.allocation {
                let _ = writeln!(
                    s,
                    "  allocation delay {a} before a packet that finds the link idle{}",
                    if *idle > Dur::ZERO {
                        format!(" for more than {idle}")
                    } else {
                        String::new()
                    }
                );
            }
            match &c.delay_trace {
                None if c.cellreplay.is_some() => {
                    let _ = write!(
                        s,
                        "  propagation: the packet-train trace's base delay (with the light PDOs' part of a packet's release time)"
                    );
                }
                Some(t) => {
                    let _ = write!(
                        s,
                        "  propagation delay from the delay trace {:?}{}",
                        t.file,
                        if t.looping { " (looping)" } else { "" }
                    );
                }
                None => {
                    let _ = write!(s, "  propagation delay {}", p0.delay);
                }
            }
            if let Some(x) = &p0.extra_delay {
                let _ = write!(s, " + extra {x}");
            }
            let _ = writeln!(s);
            let q = &c.queue;
            let lim = |v: Option<u64>, unit: &str| {
                v.map(|v| format!("{v}{unit}"))
                    .unwrap_or_else(|| "no limit".into())
            };
            let _ = write!(
                s,
                "  router queue: {}, {}",
                q.packets
                    .map(|p| format!("{p} packets"))
                    .unwrap_or_else(|| "no packet limit".into()),
                q.bytes
                    .map(|b| format!("{b}B"))
                    .unwrap_or_else(|| "no byte limit".into()),
            );
            if let Some(j) = q.sojourn {
                let _ = write!(s, ", sojourn at most {j}");
            }
            match (q.overflow, q.input) {
                (Overflow::Stop, Some(n)) => {
                    let _ = write!(s, ", when full stops reading (up to {n} packets unread)");
                }
                (Overflow::FlowControl, _) => {
                    let _ = write!(s, ", when full blocks the sender (flow control)");
                }
                _ => {}
            }
            let ecn = |on: bool| if on { ", ECN marking" } else { "" };
            match (&q.red, &q.aqm) {
                (Some(r), _) => {
                    let _ = writeln!(
                        s,
                        ", {}RED min_th {} max_th {} max_p {} w_q {} ({:?} mode{}{})",
                        if r.adaptive { "adaptive " } else { "" },
                        r.min_th,
                        r.max_th,
                        r.max_p,
                        r.w_q,
                        r.mode,
                        if r.gentle { ", gentle" } else { "" },
                        ecn(r.ecn)
                    );
                }
                (None, Some(Aqm::Codel(c))) => {
                    let _ = writeln!(
                        s,
                        ", CoDel target {} interval {} (at dequeue{})",
                        c.target,
                        c.interval,
                        ecn(c.ecn)
                    );
                }
                (None, Some(Aqm::Pie(p))) => {
                    let _ = writeln!(
                        s,
                        ", PIE target {} tupdate {} alpha {} beta {} max_burst {} (queue delay from timestamps{}{})",
                        p.target,
                        p.tupdate,
                        p.alpha,
                        p.beta,
                        p.max_burst,
                        if p.bytemode { ", byte mode" } else { "" },
                        ecn(p.ecn)
                    );
                }
                (None, Some(Aqm::FqCodel(f))) => {
                    let quantum = f.quantum.or(self.mtu.map(u64::from)).unwrap_or(1500);
                    let _ = writeln!(
                        s,
                        ", FQ-CoDel {} flows, quantum {quantum}B, CoDel target {} interval {} per flow (drops from the fattest flow when full, up to {} at once{})",
                        f.flows,
                        f.codel.target,
                        f.codel.interval,
                        f.drop_batch,
                        ecn(f.codel.ecn)
                    );
                }
                (None, None) => {
                    let _ = writeln!(s, ", drop-tail");
                }
            }
            let _ = writeln!(
                s,
                "  link send buffer {}{}, link receive buffer {}; {}; {}",
                c.lsb
                    .map_or("of the packet being sent".to_string(), |b| format!("{b}B")),
                match (c.lsb, c.lsb_admit) {
                    (Some(_), LsbAdmit::Below) => " (a packet enters while it holds less)",
                    _ => "",
                },
                lim(c.lrb, "B"),
                match (c.link_ack, c.link_ack_delay) {
                    (true, Dur::ZERO) =>
                        "LSB space held until release (link-layer ACK emulation)".to_string(),
                    (true, x) =>
                        format!("LSB space held until {x} after release (link-layer ACK emulation)"),
                    (false, _) => "LSB space freed when sent".to_string(),
                },
                if c.in_order {
                    "in-order release"
                } else {
                    "release on arrival"
                }
            );
            for sd in &c.delays {
                match (sd.nth, sd.probability) {
                    (Some(n), _) => {
                        let _ = writeln!(s, "  packet #{n} delayed by {}", sd.delay);
                    }
                    (_, Some(p)) => {
                        let _ = writeln!(
                            s,
                            "  each packet delayed by {} with probability {p}",
                            sd.delay
                        );
                    }
                    _ => {}
                }
            }
            if let Some(b) = &c.background {
                let _ = writeln!(
                    s,
                    "  background load: other users' {}B packets at {} ({:?} arrivals) share the channel, priority {:?}",
                    b.packet, b.rate, b.arrivals, b.priority
                );
            }
            if let Some(o) = &c.output_dropper {
                let _ = writeln!(
                    s,
                    "  output dropper: each packet leaving dropped with probability {o}"
                );
            }
            match &c.loss {
                LossModel::States if self.states.len() == 1 => {
                    let _ = writeln!(s, "  errors: {}", describe_errors(p0));
                }
                LossModel::States => {}
                m => {
                    let what = match m {
                        LossModel::Uniform { probability } => {
                            format!("each packet lost with probability {probability}")
                        }
                        LossModel::Pattern { drop, every } => format!(
                            "packets {} of every {every} lost",
                            drop.iter()
                                .map(|n| n.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        LossModel::GilbertElliott(g) => format!(
                            "Gilbert-Elliott: good to bad {}, bad to good {}, lost in bad {}, in good {}",
                            g.p, g.r, g.loss_bad, g.loss_good
                        ),
                        LossModel::FourState(q) => format!(
                            "4-state Markov: p13 {}, p31 {}, p32 {}, p23 {}, p14 {}",
                            q.p13, q.p31, q.p32, q.p23, q.p14
                        ),
                        LossModel::Trace(t) => format!("replayed from a file: {t:?}"),
                        LossModel::States => unreachable!(),
                    };
                    let handling = match p0.handling {
                        Handling::Drop => "dropped".to_string(),
                        _ => describe_errors(&Params {
                            error: 1.0,
                            error_dist: None,
                            ..p0.clone()
                        })
                        .replace("packet error probability 1: ", ""),
                    };
                    let _ = writeln!(s, "  errors: {what} (loss model), {handling}");
                }
            }
        }
        if self.states.len() > 1 || self.states[0].duration.is_some() {
            let _ = writeln!(s, "states:");
            let names = |v: &[(usize, f64)]| {
                v.iter()
                    .map(|(i, p)| {
                        if *p == 1.0 {
                            self.states[*i].name.clone()
                        } else {
                            format!("{} ({p})", self.states[*i].name)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(s, "  starts in {}", names(&self.initial));
            for (i, st) in self.states.iter().enumerate() {
                let dur = st
                    .duration
                    .as_ref()
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "forever".into());
                let _ = writeln!(s, "  {}: lasts {dur}", st.name);
                if !st.next.is_empty() {
                    let _ = writeln!(s, "    then {}", names(&st.next));
                }
                for d in Dir::BOTH {
                    let p = &self.dirs[d.index()].per_state[i];
                    let mut line = describe_errors(p);
                    if let Some(r) = p.rate_override {
                        line = format!("rate {r}; {line}");
                    }
                    let _ = writeln!(s, "    {d}: {line}");
                }
            }
        }
        s
    }
}

fn describe_errors(p: &Params) -> String {
    if !p.has_errors() {
        return "no errors".into();
    }
    let what = match p.handling {
        Handling::Drop => "dropped".to_string(),
        Handling::Forward => {
            "forwarded with damaged bytes (the receiver's checksum discards it)".to_string()
        }
        Handling::Delay => format!(
            "delayed by {}",
            p.error_delay
                .as_ref()
                .map(|d| d.to_string())
                .unwrap_or_default()
        ),
        Handling::Arq => {
            let limit = match (p.retries, p.drop_threshold) {
                (Some(n), _) => format!("at most {n} retries"),
                (_, Some(t)) => format!("dropped when the error delay would pass {t}"),
                _ => String::new(),
            };
            format!(
                "link-layer retransmission, {} per retry, {limit}",
                p.error_delay
                    .as_ref()
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            )
        }
    };
    format!(
        "{} error probability {}: {what}",
        match p.error_unit {
            ErrorUnit::Packet => "packet",
            ErrorUnit::Bit => "bit",
        },
        p.error_text()
    )
}
