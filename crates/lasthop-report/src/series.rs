//! The report's data, computed apart from its rendering: plain series that the HTML and SVG
//! code only draws. One run's series are here (router queue length, throughput over time,
//! cwnd and ssthresh, the UDP flows' spacing and delay) and in [`timeseq`] (the time-sequence
//! graph); the charts across replications take theirs from [`across`] (per-point values,
//! their split by a dimension, box-plot five numbers); the published values beside ours from
//! [`reference`] (the study's key metric and its cells); [`cdf`] gives any CDF's steps.

pub mod across;
pub mod parallel;
pub mod reference;
pub mod thin;
pub mod timeseq;

pub use timeseq::{data_flows, time_sequence, TimeSeq};

use crate::events::{Ev, EventRow};
use lasthop_analysis::files::tcp_trace::TraceRow;
use lasthop_analysis::files::udp_packets::UdpPacketRow;
use std::collections::BTreeMap;

/// The empirical CDF of `values` (non-finite ones left out) as the corners of its steps: for
/// the sorted values x_1 ≤ ... ≤ x_n, the points (x_k, (k-1)/n) and (x_k, k/n).
pub fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len() as f64;
    let mut pts = Vec::with_capacity(2 * v.len());
    for (k, x) in v.iter().enumerate() {
        pts.push((*x, k as f64 / n));
        pts.push((*x, (k + 1) as f64 / n));
    }
    pts
}

/// The time (ns) of a run's last event, 0 without events.
pub fn run_end(events: &[EventRow]) -> u64 {
    events.iter().map(|e| e.time_ns).max().unwrap_or(0)
}

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

/// One data sender's congestion window and slow-start threshold, from `tcp_trace.csv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CwndSeries {
    /// The connection's number in the report: 1 + its place among the data flows.
    pub conn: usize,
    /// The sending host and `LOCAL>REMOTE`.
    pub host: String,
    pub key: String,
    /// (time s, cwnd in segments) at every change.
    pub cwnd: Vec<(f64, f64)>,
    /// (time s, ssthresh in segments), left out while it is above twice the largest cwnd of
    /// the trace (still "infinite").
    pub ssthresh: Vec<(f64, f64)>,
}

/// The cwnd and ssthresh of the data senders among the trace's connections (those whose
/// `tcp:LOCAL>REMOTE` is one of `flows`, the data flows), in order of first appearance in the
/// trace, at most 8.
pub fn cwnd_series(trace: &[TraceRow], flows: &[String]) -> Vec<CwndSeries> {
    let secs = |ns: u64| ns as f64 / 1e9;
    let mut conns: Vec<(String, String)> = vec![];
    for t in trace {
        let k = (t.host.clone(), format!("{}>{}", t.local, t.remote));
        if !conns.contains(&k) {
            conns.push(k);
        }
    }
    let conn_no = |k: &str| {
        flows
            .iter()
            .position(|f| f.strip_prefix("tcp:") == Some(k))
            .map(|i| i + 1)
    };
    let max_cwnd = trace.iter().map(|t| t.cwnd_segs).max().unwrap_or(1).max(1) as f64;
    conns
        .into_iter()
        .filter_map(|(host, key)| conn_no(&key).map(|n| (n, host, key)))
        .take(8)
        .map(|(conn, host, key)| {
            let rows: Vec<&TraceRow> = trace
                .iter()
                .filter(|t| t.host == host && format!("{}>{}", t.local, t.remote) == key)
                .collect();
            CwndSeries {
                conn,
                cwnd: rows
                    .iter()
                    .map(|t| (secs(t.time_ns), t.cwnd_segs as f64))
                    .collect(),
                ssthresh: rows
                    .iter()
                    .filter(|t| (t.ssthresh_segs as f64) <= 2.0 * max_cwnd)
                    .map(|t| (secs(t.time_ns), t.ssthresh_segs as f64))
                    .collect(),
                host,
                key,
            }
        })
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
        assert_eq!(run_end(&evs), 3_000_000_000);
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
    fn cdf_steps_by_hand() {
        // 3, 1, NaN, 2 -> sorted 1 2 3, n = 3
        let c = cdf(&[3.0, 1.0, f64::NAN, 2.0]);
        let third = 1.0 / 3.0;
        let want = [
            (1.0, 0.0),
            (1.0, third),
            (2.0, third),
            (2.0, 2.0 / 3.0),
            (3.0, 2.0 / 3.0),
            (3.0, 1.0),
        ];
        assert_eq!(c, want);
        // ties keep both steps
        assert_eq!(
            cdf(&[5.0, 5.0]),
            [(5.0, 0.0), (5.0, 0.5), (5.0, 0.5), (5.0, 1.0)]
        );
        assert!(cdf(&[]).is_empty());
        assert!(cdf(&[f64::INFINITY]).is_empty());
    }

    #[test]
    fn cwnd_of_the_data_senders_by_hand() {
        let row = |t_ms: u64, host: &str, local: &str, remote: &str, cwnd, ssthresh| TraceRow {
            time_ns: t_ms * 1_000_000,
            host: host.into(),
            local: local.into(),
            remote: remote.into(),
            cwnd_segs: cwnd,
            ssthresh_segs: ssthresh,
            ..Default::default()
        };
        // The server sends flows 2 and 1 (in that order in the trace); the mobile's end of
        // flow 1 only receives. The largest cwnd is 6, so an ssthresh above 12 is left out.
        let trace = [
            row(0, "server", "S:80", "M:2", 2, u64::from(u32::MAX)),
            row(0, "mobile", "M:1", "S:80", 2, u64::from(u32::MAX)),
            row(100, "server", "S:80", "M:1", 2, 13),
            row(500, "server", "S:80", "M:2", 6, 12),
            row(900, "server", "S:80", "M:2", 3, 3),
        ];
        let flows = ["tcp:S:80>M:1".to_string(), "tcp:S:80>M:2".to_string()];
        let c = cwnd_series(&trace, &flows);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].conn, c[0].host.as_str(), c[0].key.as_str()),
            (2, "server", "S:80>M:2")
        );
        assert_eq!(c[0].cwnd, [(0.0, 2.0), (0.5, 6.0), (0.9, 3.0)]);
        assert_eq!(c[0].ssthresh, [(0.5, 12.0), (0.9, 3.0)]);
        assert_eq!((c[1].conn, c[1].key.as_str()), (1, "S:80>M:1"));
        assert_eq!(c[1].cwnd, [(0.1, 2.0)]);
        assert!(c[1].ssthresh.is_empty());
        assert!(cwnd_series(&trace, &[]).is_empty());
        assert_eq!(run_end(&[]), 0);
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
