//! The time-sequence graph of one TCP connection, from the link's `events.csv`: data segments
//! as they reached the router (first transmissions and retransmissions), drops by cause, and
//! the cumulative ACK as the link released it towards the sender.

use crate::events::{Ev, EventRow};
use std::collections::BTreeMap;

/// One connection's time-sequence data. Times in s; sequence numbers in bytes relative to the
/// connection's lowest data sequence number (wrapping, see [`rel`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeq {
    /// The data flow (`tcp:SRC>DST` of `events.csv`).
    pub flow: String,
    /// Segments that reached the router above everything sent before: (time, low, high).
    pub new_segs: Vec<(f64, f64, f64)>,
    /// Segments that reached the router with data sent before: (time, low, high).
    pub rexmt: Vec<(f64, f64, f64)>,
    /// Drops of data segments per cause (`queue`, `error`, `red`, ...): (time, low).
    pub drops: BTreeMap<String, Vec<(f64, f64)>>,
    /// The cumulative ACK of the reverse flow at each release by the link: (time, ack). An ACK
    /// 4 GB or more above the base (one from before the base) is left out.
    pub acks: Vec<(f64, f64)>,
}

/// Relative sequence number: bytes from `base`, wrapping.
pub fn rel(seq: u32, base: u32) -> f64 {
    f64::from(seq.wrapping_sub(base))
}

/// The reverse of a TCP flow name: `tcp:A>B` → `tcp:B>A`; `None` for any other name.
pub fn flow_reverse(f: &str) -> Option<String> {
    let rest = f.strip_prefix("tcp:")?;
    let (a, b) = rest.split_once('>')?;
    Some(format!("tcp:{b}>{a}"))
}

/// The flows that carry payload (`tcp_len` above 0), in order of first appearance.
pub fn data_flows(events: &[EventRow]) -> Vec<String> {
    let mut flows: Vec<String> = vec![];
    for e in events {
        if e.tcp_len.unwrap_or(0) > 0 && !flows.contains(&e.flow) {
            flows.push(e.flow.clone());
        }
    }
    flows
}

/// The time-sequence data of `flow`. The base is the flow's lowest sequence number in any
/// event (in sequence space: a number more than 2^31 below the current base replaces it). A
/// segment with payload that arrives at the router is new when it starts at or above the
/// highest byte that arrived before, else a retransmission.
pub fn time_sequence(events: &[EventRow], flow: &str) -> TimeSeq {
    let secs = |ns: u64| ns as f64 / 1e9;
    let rev = flow_reverse(flow).unwrap_or_default();
    let mut base: Option<u32> = None;
    for e in events.iter().filter(|e| e.flow == flow) {
        if let Some(s) = e.tcp_seq {
            base = Some(base.map_or(
                s,
                |b: u32| if s.wrapping_sub(b) > (1 << 31) { s } else { b },
            ));
        }
    }
    let base = base.unwrap_or(0);
    let mut sent_hi: f64 = 0.0;
    let mut ts = TimeSeq {
        flow: flow.to_string(),
        ..TimeSeq::default()
    };
    for e in events {
        if e.flow == flow {
            let (Some(s), Some(l)) = (e.tcp_seq, e.tcp_len) else {
                continue;
            };
            if l == 0 {
                continue;
            }
            let lo = rel(s, base);
            let hi = lo + f64::from(l);
            match e.event {
                Ev::Arrive => {
                    if lo < sent_hi {
                        ts.rexmt.push((secs(e.time_ns), lo, hi));
                    } else {
                        ts.new_segs.push((secs(e.time_ns), lo, hi));
                    }
                    sent_hi = sent_hi.max(hi);
                }
                Ev::Drop => ts
                    .drops
                    .entry(e.cause.clone())
                    .or_default()
                    .push((secs(e.time_ns), lo)),
                _ => {}
            }
        } else if e.flow == rev && e.event == Ev::Release {
            if let Some(a) = e.tcp_ack {
                let y = rel(a, base);
                if y < 4e9 {
                    ts.acks.push((secs(e.time_ns), y));
                }
            }
        }
    }
    ts
}

impl TimeSeq {
    /// The time of the first drop, of any cause.
    pub fn first_drop(&self) -> Option<f64> {
        let t = self
            .drops
            .values()
            .flat_map(|pts| pts.iter().map(|p| p.0))
            .fold(f64::INFINITY, f64::min);
        t.is_finite().then_some(t)
    }

    /// The close-up around the first drop: from 3 s before it (not before 0) to 9 s after.
    pub fn first_drop_window(&self) -> Option<(f64, f64)> {
        self.first_drop().map(|t| ((t - 3.0).max(0.0), t + 9.0))
    }

    /// The same data with only the points whose time lies in `[a, b]`; every drop cause stays
    /// (perhaps with no points), so a chart of the window keeps the whole run's legend.
    pub fn window(&self, a: f64, b: f64) -> TimeSeq {
        let inside = |x: f64| x >= a && x <= b;
        TimeSeq {
            flow: self.flow.clone(),
            new_segs: self
                .new_segs
                .iter()
                .copied()
                .filter(|p| inside(p.0))
                .collect(),
            rexmt: self.rexmt.iter().copied().filter(|p| inside(p.0)).collect(),
            drops: self
                .drops
                .iter()
                .map(|(c, pts)| {
                    let pts = pts.iter().copied().filter(|p| inside(p.0)).collect();
                    (c.clone(), pts)
                })
                .collect(),
            acks: self.acks.iter().copied().filter(|p| inside(p.0)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn ev(
        t_ms: u64,
        event: Ev,
        flow: &str,
        seq: Option<u32>,
        ack: Option<u32>,
        len: Option<u32>,
        cause: &str,
    ) -> EventRow {
        EventRow {
            time_ns: t_ms * 1_000_000,
            event,
            dir: 0,
            packet: 0,
            flow: flow.into(),
            tcp_seq: seq,
            tcp_ack: ack,
            tcp_len: len,
            bytes: 0,
            queue_pkts: None,
            cause: cause.into(),
            state: String::new(),
        }
    }

    const F: &str = "tcp:10.0.0.1:80>10.0.1.1:5000";
    const R: &str = "tcp:10.0.1.1:5000>10.0.0.1:80";

    #[test]
    fn names() {
        assert_eq!(flow_reverse(F).as_deref(), Some(R));
        assert_eq!(flow_reverse("udp:a>b"), None);
        assert_eq!(flow_reverse("tcp:ab"), None);
        assert_eq!(rel(5, 1), 4.0);
        // wrapping: 10 bytes past 2^32 - 6
        assert_eq!(rel(4, u32::MAX - 5), 10.0);
    }

    #[test]
    fn segments_drops_and_acks_by_hand() {
        // Sequence numbers from 1000 (the SYN's 999 is not a data row): 1000-1500 and
        // 1500-2000 arrive at 0.1 s and 0.2 s; 1500-2000 is dropped by the queue at 0.2 s;
        // 2000-2500 arrives at 0.3 s and is dropped by the error stage at 1.5 s; 1500-2000
        // arrives again at 1.0 s (a retransmission: below the highest byte sent, 2500);
        // the receiver's ACKs 1500 and 2500 are released at 0.5 s and 1.8 s; an ACK from
        // before the base (999) is left out.
        let evs = [
            ev(100, Ev::Arrive, F, Some(1000), None, Some(500), ""),
            ev(200, Ev::Arrive, F, Some(1500), None, Some(500), ""),
            ev(200, Ev::Drop, F, Some(1500), None, Some(500), "queue"),
            ev(250, Ev::Release, R, Some(1), Some(999), Some(0), ""),
            ev(300, Ev::Arrive, F, Some(2000), None, Some(500), ""),
            ev(400, Ev::Release, F, Some(1000), None, Some(500), ""),
            ev(500, Ev::Release, R, Some(1), Some(1500), Some(0), ""),
            ev(500, Ev::Arrive, R, Some(1), Some(1500), Some(0), ""),
            ev(1000, Ev::Arrive, F, Some(1500), None, Some(500), ""),
            ev(1100, Ev::Arrive, F, Some(2500), None, Some(0), ""),
            ev(1500, Ev::Drop, F, Some(2000), None, Some(500), "error"),
            ev(1800, Ev::Release, R, Some(1), Some(2500), Some(0), ""),
            ev(1900, Ev::Arrive, "tcp:x>y", Some(7), None, Some(100), ""),
        ];
        assert_eq!(data_flows(&evs), [F, "tcp:x>y"]);
        let ts = time_sequence(&evs, F);
        assert_eq!(ts.flow, F);
        assert_eq!(
            ts.new_segs,
            [
                (0.1, 0.0, 500.0),
                (0.2, 500.0, 1000.0),
                (0.3, 1000.0, 1500.0)
            ]
        );
        assert_eq!(ts.rexmt, [(1.0, 500.0, 1000.0)]);
        assert_eq!(ts.drops.len(), 2);
        assert_eq!(ts.drops["queue"], [(0.2, 500.0)]);
        assert_eq!(ts.drops["error"], [(1.5, 1000.0)]);
        assert_eq!(ts.acks, [(0.5, 500.0), (1.8, 1500.0)]);
        assert_eq!(ts.first_drop(), Some(0.2));
        // 3 s before 0.2 s is below 0: from 0 to 9.2 s
        let (a, b) = ts.first_drop_window().unwrap();
        assert_eq!(a, 0.0);
        assert!((b - 9.2).abs() < 1e-12, "{b}");

        // The window from 0.25 s to 1.2 s keeps the error cause, empty.
        let w = ts.window(0.25, 1.2);
        assert_eq!(w.new_segs, [(0.3, 1000.0, 1500.0)]);
        assert_eq!(w.rexmt, [(1.0, 500.0, 1000.0)]);
        assert!(w.drops["queue"].is_empty() && w.drops["error"].is_empty());
        assert_eq!(w.acks, [(0.5, 500.0)]);
        assert_eq!(w.first_drop(), None);

        // A flow with no events: nothing, no drop.
        let none = time_sequence(&evs, "tcp:q>r");
        assert!(none.new_segs.is_empty() && none.acks.is_empty() && none.drops.is_empty());
        assert_eq!(none.first_drop_window(), None);
    }

    #[test]
    fn the_base_follows_sequence_space_across_the_wrap() {
        // The first row is at 10 (after the wrap), the second at 2^32 - 100 (before it): the
        // base is the one before the wrap, so the first segment starts 110 bytes up.
        let evs = [
            ev(1000, Ev::Arrive, F, Some(10), None, Some(100), ""),
            ev(
                2000,
                Ev::Arrive,
                F,
                Some(u32::MAX - 99),
                None,
                Some(110),
                "",
            ),
        ];
        let ts = time_sequence(&evs, F);
        assert_eq!(ts.new_segs, [(1.0, 110.0, 210.0)]);
        assert_eq!(ts.rexmt, [(2.0, 0.0, 110.0)]);
    }
}
