//! The report's data, computed apart from its rendering: plain series that the HTML and SVG
//! code only draws. (So far the router queue length, the throughput over time and the UDP
//! flows' series; the time-sequence graph and the across-replication charts still compute
//! theirs in `lib.rs`.)

use lasthop_experiment::files::{Ev, EventRow, UdpPacketRow};
use std::collections::BTreeMap;

/// Router queue length (packets) of direction `dir` (0 down, 1 up) as (time s, length) steps:
/// the state after all the events of one instant, so a packet that passes straight through
/// (enqueue and lsb at the same time) never shows as queued.
pub fn queue_length(events: &[EventRow], dir: u8) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = vec![];
    let mut last_t = None;
    for e in events.iter().filter(|e| e.dir == dir) {
        let Some(q) = e.queue_pkts else { continue };
        let p = (e.time_ns as f64 / 1e9, f64::from(q));
        if last_t == Some(e.time_ns) {
            if let Some(l) = pts.last_mut() {
                *l = p;
            }
        } else {
            pts.push(p);
        }
        last_t = Some(e.time_ns);
    }
    pts
}

/// The bin width (s) of the throughput-over-time plot of a run that lasted `t_end_ns`: about
/// 50 bins, at least 2 s each.
pub fn throughput_bin(t_end_ns: u64) -> f64 {
    ((t_end_ns as f64 / 1e9) / 50.0).max(2.0)
}

/// Payload bytes of `flow` released by the link per second, in bins of `bin` s from 0 to
/// `t_end_ns`: (bin centre s, bytes/s).
pub fn released_throughput(
    events: &[EventRow],
    flow: &str,
    t_end_ns: u64,
    bin: f64,
) -> Vec<(f64, f64)> {
    let nb = ((t_end_ns as f64 / 1e9) / bin).ceil() as usize + 1;
    let mut b = vec![0f64; nb];
    for e in events
        .iter()
        .filter(|e| e.flow == flow && e.event == Ev::Release)
    {
        let i = ((e.time_ns as f64 / 1e9) / bin) as usize;
        if i < nb {
            b[i] += f64::from(e.tcp_len.unwrap_or(0));
        }
    }
    b.iter()
        .enumerate()
        .map(|(i, v)| ((i as f64 + 0.5) * bin, v / bin))
        .collect()
}

/// One UDP flow's series from `udp_packets.csv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UdpSeries {
    /// `flow` in `udp_flows.csv`.
    pub flow: usize,
    /// Receiver inter-arrival gaps (ms) of consecutively numbered datagrams, in receive order
    /// (a pair with a loss between them is left out, as seed 000 does).
    pub spacing_ms: Vec<f64>,
    /// (receive time s, one-way delay ms) of every datagram the sender's capture saw.
    pub delay: Vec<(f64, f64)>,
}

/// Per UDP flow, in flow order. `rows` are in file order (each flow's datagrams in receive
/// order).
pub fn udp_series(rows: &[UdpPacketRow]) -> Vec<UdpSeries> {
    let mut flows: BTreeMap<usize, Vec<&UdpPacketRow>> = BTreeMap::new();
    for r in rows {
        flows.entry(r.flow).or_default().push(r);
    }
    flows
        .into_iter()
        .map(|(flow, v)| UdpSeries {
            flow,
            spacing_ms: v
                .windows(2)
                .filter(|w| w[1].seq == w[0].seq.wrapping_add(1))
                .map(|w| (w[1].received_s - w[0].received_s) * 1e3)
                .collect(),
            delay: v
                .iter()
                .filter_map(|r| r.delay_ms.map(|d| (r.received_s, d)))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t_ns: u64, event: Ev, dir: u8, q: Option<u32>, len: Option<u32>) -> EventRow {
        EventRow {
            time_ns: t_ns,
            event,
            dir,
            packet: 0,
            flow: "tcp:a:1>b:2".into(),
            tcp_seq: None,
            tcp_ack: None,
            tcp_len: len,
            bytes: 0,
            queue_pkts: q,
            cause: String::new(),
            state: String::new(),
        }
    }

    #[test]
    fn queue_and_throughput_by_hand() {
        // down: 1 at 1 s; at 2 s enqueue (1 → 2) then lsb (→ 1): only the instant's last state
        let evs = [
            ev(1_000_000_000, Ev::Enqueue, 0, Some(1), None),
            ev(2_000_000_000, Ev::Enqueue, 0, Some(2), None),
            ev(2_000_000_000, Ev::Lsb, 0, Some(1), None),
            ev(2_500_000_000, Ev::Enqueue, 1, Some(4), None),
            ev(3_000_000_000, Ev::TxStart, 0, None, None),
        ];
        assert_eq!(queue_length(&evs, 0), [(1.0, 1.0), (2.0, 1.0)]);
        assert_eq!(queue_length(&evs, 1), [(2.5, 4.0)]);
        // a 10 s run: bins of 2 s (10/50 < 2), 6 bins; 1000 B released at 1 s and 3 s, 500 at 3.5 s
        assert_eq!(throughput_bin(10_000_000_000), 2.0);
        assert_eq!(throughput_bin(200_000_000_000), 4.0);
        let rel = [
            ev(1_000_000_000, Ev::Release, 0, None, Some(1000)),
            ev(3_000_000_000, Ev::Release, 0, None, Some(1000)),
            ev(3_500_000_000, Ev::Release, 0, None, Some(500)),
            ev(3_600_000_000, Ev::Arrive, 0, None, Some(9999)),
        ];
        let t = released_throughput(&rel, "tcp:a:1>b:2", 10_000_000_000, 2.0);
        assert_eq!(t.len(), 6);
        assert_eq!(&t[..3], &[(1.0, 500.0), (3.0, 750.0), (5.0, 0.0)]);
        assert!(released_throughput(&rel, "other", 10_000_000_000, 2.0)
            .iter()
            .all(|p| p.1 == 0.0));
    }

    #[test]
    fn udp_series_by_hand() {
        let row = |flow, seq, t: f64, d: Option<f64>| UdpPacketRow {
            flow,
            seq,
            sent_s: None,
            received_s: t,
            delay_ms: d,
        };
        // flow 1: seq 0 1 3 4 at 0.2 0.328 0.6 0.7 -> gaps 128 (0→1) and 100 (3→4), 1→3 skipped
        let rows = [
            row(1, 0, 0.2, Some(200.0)),
            row(1, 1, 0.328, Some(200.0)),
            row(2, 7, 1.0, None),
            row(1, 3, 0.6, Some(216.0)),
            row(1, 4, 0.7, Some(188.0)),
        ];
        let s = udp_series(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].flow, 1);
        assert_eq!(s[0].spacing_ms.len(), 2);
        assert!((s[0].spacing_ms[0] - 128.0).abs() < 1e-9);
        assert!((s[0].spacing_ms[1] - 100.0).abs() < 1e-9);
        assert_eq!(
            s[0].delay,
            [(0.2, 200.0), (0.328, 200.0), (0.6, 216.0), (0.7, 188.0)]
        );
        // flow 2: one datagram, no sender time: no gap, no delay point
        assert!(s[1].spacing_ms.is_empty() && s[1].delay.is_empty());
    }
}
