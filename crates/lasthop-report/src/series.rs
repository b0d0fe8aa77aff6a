//! The report's data, computed apart from its rendering: plain series and tables that the HTML
//! and SVG code only draws. (So far the UDP flows' series; the TCP plots still compute theirs in
//! `lib.rs`.)

use lasthop_experiment::files::UdpPacketRow;
use std::collections::BTreeMap;

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
