//! The metrics of one run, computed from its files (`connections.csv`, `udp_flows.csv` when the
//! run has UDP flows, `events.csv`) and kept in `metrics.json` beside them.

use crate::files::{
    read_connections, read_events, read_pages, read_udp_flows, Ev, FileError, UdpRow,
};
pub use crate::files::{PageObjectRow as ObjectMetrics, PageRow as PageMetrics};
use crate::stats::{cov, jain, quantile, time_weighted_mean};
use lasthop_scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One TCP connection of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnMetrics {
    /// The scenario's flow index (matched by addresses and port), `None` for a connection that
    /// matches no flow.
    pub flow: Option<usize>,
    /// `conn` in `connections.csv`.
    pub conn: usize,
    pub start_s: f64,
    pub end_s: f64,
    /// First SYN to the ACK of the client's FIN, at the client (the sender in bulk flows).
    pub elapsed_s: f64,
    pub bytes: u64,
    /// bytes / elapsed, bytes per second (`throughput_Bps` in metrics.json as in
    /// connections.csv; `throughput_bps` before issue 24 renamed it).
    #[serde(rename = "throughput_Bps", alias = "throughput_bps")]
    pub throughput_bytes_per_s: f64,
    /// tcptrace "rexmt data pkts" of the data direction.
    pub rexmt_pkts: u64,
    pub dupacks: u64,
    /// Times three duplicate ACKs in a row were received (tcptrace "triple dupacks").
    #[serde(default)]
    pub triple_dupacks: u64,
    pub rtos: u64,
    /// Timeouts whose resent segment the link had delivered (`None` without a full event log).
    #[serde(default)]
    pub spurious_rtos: Option<u64>,
    /// ACKs carrying SACK blocks (seed 000's "sacks sent").
    #[serde(default)]
    pub sack_pkts: u64,
    /// Data-direction drops by cause: router queue, RED, the other AQMs (CoDel, PIE), link
    /// error.
    pub drops_queue: u64,
    pub drops_red: u64,
    #[serde(default)]
    pub drops_aqm: u64,
    pub drops_error: u64,
    /// CE marks on the data (ECN).
    #[serde(default)]
    pub ecn_marks: u64,
    /// Acknowledging-direction drops, all causes.
    pub ack_drops: u64,
    pub complete: bool,
    /// Seed 001's first 10 KB (`connections.csv`'s `partial_*`): the SYN to the ACK covering
    /// 10 240 bytes, s; 10 240 bytes over the time from the first data segment to that ACK,
    /// B/s; the retransmissions before it. `None` when never reached.
    #[serde(default)]
    pub partial_elapsed_s: Option<f64>,
    #[serde(default, rename = "partial_throughput_Bps")]
    pub partial_throughput_bytes_per_s: Option<f64>,
    #[serde(default)]
    pub partial_rexmt_pkts: Option<u64>,
    /// Unnecessary retransmissions as seed 001 counts them: retransmissions − data-direction
    /// drops (`rexmt_minus_drops`).
    #[serde(default)]
    pub unneeded_rexmt: Option<u64>,
}

/// One UDP flow of a run (a row of `udp_flows.csv`); `None` where that row is empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpMetrics {
    /// The scenario's flow index (matched by addresses and destination port), `None` for a
    /// flow that matches none.
    pub flow: Option<usize>,
    /// `flow` in `udp_flows.csv`.
    pub udp_flow: usize,
    pub sent: Option<u64>,
    pub received: u64,
    pub lost: Option<u64>,
    pub loss_rate: Option<f64>,
    /// Received bytes including the UDP header / first-to-last received packet, bytes/s
    /// (`throughput_Bps` in metrics.json as in udp_flows.csv; `throughput_bps` before).
    #[serde(rename = "throughput_Bps", alias = "throughput_bps")]
    pub throughput_bytes_per_s: Option<f64>,
    pub drops_queue: Option<u64>,
    /// RED drops and ECN marks.
    pub drops_red: Option<u64>,
    /// CoDel's and PIE's drops.
    #[serde(default)]
    pub drops_aqm: Option<u64>,
    pub drops_error: Option<u64>,
    /// Spacing of consecutively received packets, ms: 50 %, 75 %, 90 %, max.
    pub spacing_ms: [Option<f64>; 4],
    /// One-way delay, ms: 50 %, 75 %, 90 %, 99 %, max.
    pub delay_ms: [Option<f64>; 5],
}

/// Router queue length of one direction (from `events.csv`, which needs log level `all`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueStats {
    /// Largest queue length in packets.
    pub max_pkts: Option<f64>,
    /// Time-weighted mean over the run's transfer period.
    pub mean_pkts: Option<f64>,
    /// Median of the lengths packets found on arrival (Seawind's sampling).
    pub median_at_arrival: Option<f64>,
}

/// Link-level figures of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirMetrics {
    /// Fraction of the transfer period the serializer was busy.
    pub utilisation: Option<f64>,
    pub queue: QueueStats,
    pub drops_queue: u64,
    pub drops_red: u64,
    /// CoDel's and PIE's drops.
    #[serde(default)]
    pub drops_aqm: u64,
    pub drops_error: u64,
}

/// Seed 004's figures of one run (scheme `bottleneck`), from `link.csv` (the busier direction,
/// over the whole run) and the connections: goodput per greedy flow is its unique bytes over the
/// time from its start to the run's end, in Mbit/s, averaged over all the flows (a flow that sent
/// nothing counts as 0); short transfers are the connections of `repeat` flows, done when
/// complete. σ is the population standard deviation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BottleneckMetrics {
    pub util_pct: f64,
    pub queue_mean_pkts: f64,
    pub queue_max_pkts: f64,
    /// Packets dropped in that direction, every cause.
    pub drops: u64,
    pub marks: u64,
    pub goodput_mean_mbps: Option<f64>,
    pub goodput_sd_mbps: Option<f64>,
    pub goodput_cov: Option<f64>,
    pub goodput_jain: Option<f64>,
    pub transfers: u64,
    pub transfer_mean_ms: Option<f64>,
    pub transfer_sd_ms: Option<f64>,
    pub transfer_cov: Option<f64>,
}

/// Mean and population σ.
fn mean_sd(v: &[f64]) -> Option<(f64, f64)> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    Some((
        m,
        (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt(),
    ))
}

impl BottleneckMetrics {
    fn compute(
        link_csv: &Path,
        conns: &[ConnMetrics],
        scenario: &Scenario,
    ) -> Result<Self, FileError> {
        let rows = lasthop_link::meter::read_link_csv(link_csv).map_err(|e| FileError::Parse {
            path: link_csv.display().to_string(),
            line: e.position().map_or(0, |p| p.line() as usize),
            msg: e.to_string(),
        })?;
        let Some(l) = rows
            .iter()
            .max_by(|a, b| a.utilisation.total_cmp(&b.utilisation))
        else {
            return Ok(BottleneckMetrics::default());
        };
        let mut goodputs = vec![];
        let mut times = vec![];
        for (i, f) in scenario.flows.iter().enumerate() {
            let mine = conns.iter().filter(|c| c.flow == Some(i));
            match f.kind() {
                "bulk" => {
                    let bytes: u64 = mine.map(|c| c.bytes).sum();
                    let secs = l.end_s - f.start.as_nanos() as f64 / 1e9;
                    if secs > 0.0 {
                        goodputs.push(bytes as f64 * 8.0 / 1e6 / secs);
                    }
                }
                "repeat" => times.extend(mine.filter(|c| c.complete).map(|c| c.elapsed_s * 1e3)),
                _ => {}
            }
        }
        let g = mean_sd(&goodputs);
        let t = mean_sd(&times);
        Ok(BottleneckMetrics {
            util_pct: l.utilisation * 100.0,
            queue_mean_pkts: l.queue_mean_pkts,
            queue_max_pkts: l.queue_max_pkts as f64,
            drops: l.drops_queue + l.drops_red + l.drops_error + l.drops_mtu + l.drops_aqm,
            marks: l.marks,
            goodput_mean_mbps: g.map(|g| g.0),
            goodput_sd_mbps: g.map(|g| g.1),
            goodput_cov: cov(&goodputs),
            goodput_jain: jain(&goodputs),
            transfers: times.len() as u64,
            transfer_mean_ms: t.map(|t| t.0),
            transfer_sd_ms: t.map(|t| t.1),
            transfer_cov: cov(&times),
        })
    }
}

/// Everything the summaries need from one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    pub point: String,
    pub replication: u64,
    pub conns: Vec<ConnMetrics>,
    /// First connection start to last connection end (the transfer period).
    pub total_time_s: f64,
    /// Jain's index over the connections' throughputs.
    pub jain: Option<f64>,
    /// σ/μ of the connections' throughputs (population σ).
    pub throughput_cov: Option<f64>,
    /// `[down, up]`.
    pub link: [DirMetrics; 2],
    /// UDP flows (runs without any leave it out of `metrics.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub udp: Vec<UdpMetrics>,
    /// Pages of `http` flows (`pages.csv`, `page_objects.csv`; runs without any leave it out
    /// of `metrics.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<PageMetrics>,
    /// Seed 004's figures, when the experiment asks for class scheme `bottleneck`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<BottleneckMetrics>,
    /// Seed 003's per-host stream figures, when the experiment asks for class scheme `thin`
    /// and the run has `streams.csv` ([`crate::thin::compute`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thin: Option<Vec<crate::thin::HostThin>>,
    /// Seed 001's figures of parallel connections (runs with two or more connections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<crate::parallel::ParallelMetrics>,
}

fn ip_port(s: &str) -> Option<(&str, u16)> {
    let (ip, port) = s.rsplit_once(':')?;
    Some((ip, port.parse().ok()?))
}

impl RunMetrics {
    /// Computes the metrics of the run in `dir`; `scenario` maps connections to flows;
    /// `bottleneck`: seed 004's figures too (from `link.csv`).
    pub fn compute(
        dir: &Path,
        scenario: &Scenario,
        point: &str,
        replication: u64,
        bottleneck: bool,
    ) -> Result<RunMetrics, FileError> {
        let rd = crate::layout::RunDir::new(dir);
        let rows = read_connections(&rd.connections_csv())?;
        let mut conns = vec![];
        for r in &rows {
            let flow = scenario.flows.iter().position(|f| {
                let from = scenario.hosts[f.from].address.to_string();
                let to = scenario.hosts[f.to].address.to_string();
                let c = ip_port(&r.client);
                let s = ip_port(&r.server);
                matches!((c, s), (Some((ci, _)), Some((si, sp))) if ci == from && si == to && sp == f.port)
                    || matches!((c, s), (Some((ci, cp)), Some((si, _))) if ci == to && cp == f.port && si == from)
            });
            let d = usize::from(r.data_dir == "s2c");
            conns.push(ConnMetrics {
                flow,
                conn: r.conn,
                start_s: r.start_s,
                end_s: r.end_s,
                elapsed_s: r.elapsed_s,
                bytes: r.bytes,
                throughput_bytes_per_s: r.throughput_bytes_per_s,
                rexmt_pkts: r.rexmt_pkts,
                dupacks: r.dupacks,
                triple_dupacks: r.triple_dupacks,
                rtos: r.rtos,
                spurious_rtos: r.spurious_rtos,
                sack_pkts: r.sack_pkts,
                drops_queue: r.drops_queue[d],
                drops_red: r.drops_red[d],
                drops_aqm: r.drops_aqm[d],
                drops_error: r.drops_error[d],
                ecn_marks: r.ecn_marks,
                ack_drops: r.drops_queue[1 - d]
                    + r.drops_red[1 - d]
                    + r.drops_aqm[1 - d]
                    + r.drops_error[1 - d],
                complete: r.complete,
                partial_elapsed_s: r.partial_elapsed_s,
                partial_throughput_bytes_per_s: r.partial_throughput_bytes_per_s,
                partial_rexmt_pkts: r.partial_rexmt_pkts,
                unneeded_rexmt: r.rexmt_minus_drops,
            });
        }
        conns.sort_by_key(|c| (c.flow.unwrap_or(usize::MAX), c.conn));
        let t0 = conns
            .iter()
            .map(|c| c.start_s)
            .fold(f64::INFINITY, f64::min);
        let t1 = conns
            .iter()
            .map(|c| c.end_s)
            .fold(f64::NEG_INFINITY, f64::max);
        let total_time_s = if conns.is_empty() { f64::NAN } else { t1 - t0 };
        let tputs: Vec<f64> = conns.iter().map(|c| c.throughput_bytes_per_s).collect();
        let mut m = RunMetrics {
            parallel: crate::parallel::ParallelMetrics::compute(&conns),
            point: point.to_string(),
            replication,
            jain: jain(&tputs),
            throughput_cov: cov(&tputs),
            conns,
            total_time_s,
            link: Default::default(),
            udp: vec![],
            pages: vec![],
            bottleneck: None,
            thin: None,
        };
        let link_csv = dir.join("link.csv");
        if bottleneck && link_csv.exists() {
            m.bottleneck = Some(BottleneckMetrics::compute(&link_csv, &m.conns, scenario)?);
        }
        let (pages, objects) = (rd.pages_csv(), rd.page_objects_csv());
        if pages.exists() {
            m.pages = read_pages(&pages, &objects)?;
        }
        let udp = rd.udp_flows_csv();
        if udp.exists() {
            m.udp = read_udp_flows(&udp)?
                .iter()
                .map(|r| udp_metrics(r, scenario))
                .collect();
        }
        let events = rd.events_csv();
        if events.exists() && total_time_s.is_finite() {
            let (a, b) = ((t0 * 1e9).round() as u64, (t1 * 1e9).round() as u64);
            m.link = link_metrics(&events, a, b)?;
        }
        Ok(m)
    }

    pub fn load(path: &Path) -> Result<RunMetrics, crate::runner::ExperimentError> {
        crate::runner::read_json(path)
    }
}

/// A `udp_flows.csv` row as metrics, with the scenario flow it belongs to.
fn udp_metrics(r: &UdpRow, scenario: &Scenario) -> UdpMetrics {
    let (src, dst) = (ip_port(&r.src), ip_port(&r.dst));
    let flow = scenario.flows.iter().position(|f| {
        let from = scenario.hosts[f.from].address.to_string();
        let to = scenario.hosts[f.to].address.to_string();
        matches!((src, dst), (Some((si, _)), Some((di, dp))) if si == from && di == to && dp == f.port)
    });
    UdpMetrics {
        flow,
        udp_flow: r.flow,
        sent: r.sent,
        received: r.received,
        lost: r.lost,
        loss_rate: r.loss_rate,
        throughput_bytes_per_s: r.throughput_bytes_per_s,
        drops_queue: r.drops_queue,
        drops_red: r.drops_red,
        drops_aqm: r.drops_aqm,
        drops_error: r.drops_error,
        spacing_ms: r.spacing_ms,
        delay_ms: r.delay_ms,
    }
}

/// Utilisation, queue statistics and drops per direction over `[t0, t1]` (ns).
fn link_metrics(events: &Path, t0: u64, t1: u64) -> Result<[DirMetrics; 2], FileError> {
    let rows = read_events(events)?;
    let mut out = [DirMetrics::default(); 2];
    for (d, dm) in out.iter_mut().enumerate() {
        let mut busy: u64 = 0;
        let mut tx_open: Option<u64> = None;
        let mut saw_tx = false;
        let mut steps: Vec<(u64, f64)> = vec![];
        let mut arrivals: Vec<f64> = vec![];
        let mut max_q: Option<f64> = None;
        for e in rows.iter().filter(|e| e.dir as usize == d) {
            match e.event {
                Ev::TxStart => {
                    saw_tx = true;
                    tx_open = Some(e.time_ns);
                }
                Ev::TxEnd => {
                    if let Some(s) = tx_open.take() {
                        // Clip to the transfer period.
                        let (s, t) = (s.max(t0), e.time_ns.min(t1));
                        busy += t.saturating_sub(s);
                    }
                }
                Ev::Drop => match e.cause.as_str() {
                    "queue" => dm.drops_queue += 1,
                    // RED's drops, and the other AQMs' apart, as in connections.csv.
                    "red" => dm.drops_red += 1,
                    "codel" | "pie" => dm.drops_aqm += 1,
                    "error" => dm.drops_error += 1,
                    _ => {}
                },
                _ => {}
            }
            if let Some(q) = e.queue_pkts {
                let q = f64::from(q);
                steps.push((e.time_ns, q));
                max_q = Some(max_q.map_or(q, |m: f64| m.max(q)));
                if e.event == Ev::Arrive {
                    arrivals.push(q);
                }
            }
        }
        if saw_tx && t1 > t0 {
            dm.utilisation = Some(busy as f64 / (t1 - t0) as f64);
        }
        arrivals.sort_by(|a, b| a.total_cmp(b));
        dm.queue = QueueStats {
            max_pkts: max_q,
            mean_pkts: if steps.is_empty() {
                None
            } else {
                time_weighted_mean(&steps, 0.0, t0, t1)
            },
            median_at_arrival: quantile(&arrivals, 0.5),
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_named_for_bytes_per_second_and_aqm_drops_apart() {
        // Issue 24: metrics.json called bytes per second `throughput_bps`; it is
        // `throughput_Bps` as in the CSVs, and a file written before still reads.
        let c = ConnMetrics {
            throughput_bytes_per_s: 1500.0,
            drops_red: 1,
            drops_aqm: 2,
            ..Default::default()
        };
        let j = serde_json::to_string(&c).unwrap();
        assert!(j.contains("\"throughput_Bps\":1500.0"), "{j}");
        assert!(!j.contains("throughput_bps"), "{j}");
        assert!(j.contains("\"drops_red\":1,\"drops_aqm\":2"), "{j}");
        let old = j
            .replace("throughput_Bps", "throughput_bps")
            .replace(",\"drops_aqm\":2", "");
        let back: ConnMetrics = serde_json::from_str(&old).unwrap();
        assert_eq!(back.throughput_bytes_per_s, 1500.0);
        assert_eq!(back.drops_aqm, 0);
        let u = serde_json::to_string(&UdpMetrics::default()).unwrap();
        assert!(u.contains("\"throughput_Bps\":null"), "{u}");
    }

    /// Two greedy flows, the second starting at 5 s of a 10 s run, and one repeat flow.
    fn scenario(dir: &Path) -> Scenario {
        std::fs::write(dir.join("l.toml"), "[both]\nrate = \"10Mbit\"\n").unwrap();
        let text = r#"
duration = "10s"
link = "l.toml"
[hosts.s]
side = "fixed"
count = 3
[hosts.r]
side = "mobile"
count = 3
[[flows]]
kind = "bulk"
from = "s0"
to = "r0"
bytes = "1GB"
[[flows]]
kind = "bulk"
from = "s1"
to = "r1"
bytes = "1GB"
start = "5s"
[[flows]]
kind = "repeat"
from = "s2"
to = "r2"
bytes = 10240
pause = "250ms"
"#;
        Scenario::from_str_in(text, dir).unwrap()
    }

    fn conn(flow: usize, bytes: u64, elapsed_s: f64, complete: bool) -> ConnMetrics {
        ConnMetrics {
            flow: Some(flow),
            bytes,
            elapsed_s,
            complete,
            ..ConnMetrics::default()
        }
    }

    #[test]
    fn bottleneck_figures_by_hand() {
        let d = tempfile::tempdir().unwrap();
        let sc = scenario(d.path());
        let csv = "dir,arrived,released,drops_queue,drops_red,drops_error,drops_mtu,drops_middlebox,drops_aqm,marks,errors,injected,utilisation,queue_mean_pkts,queue_max_pkts,end_s\n\
                   down,100,95,4,1,0,0,0,2,3,0,0,0.5,3.5,9,10\n\
                   up,90,90,0,0,0,0,0,0,0,0,0,0.1,0,1,10\n";
        let path = d.path().join("link.csv");
        std::fs::write(&path, csv).unwrap();
        // Flow 0: 1 250 000 bytes in 10 s = 1 Mbit/s; flow 1: 312 500 bytes in its 5 s =
        // 0.5 Mbit/s. Mean 0.75, population σ 0.25, σ/μ 1/3, Jain 1.5² / (2 · 1.25) = 0.9.
        // Flow 2's transfers: 100 and 300 ms complete (mean 200, σ 100), one incomplete.
        let conns = [
            conn(0, 1_000_000, 10.0, false),
            conn(0, 250_000, 1.0, true),
            conn(1, 312_500, 5.0, false),
            conn(2, 10240, 0.1, true),
            conn(2, 10240, 0.3, true),
            conn(2, 5000, 0.05, false),
        ];
        let b = BottleneckMetrics::compute(&path, &conns, &sc).unwrap();
        assert_eq!(
            (b.util_pct, b.queue_mean_pkts, b.queue_max_pkts),
            (50.0, 3.5, 9.0)
        );
        assert_eq!((b.drops, b.marks), (7, 3), "queue 4 + red 1 + aqm 2");
        let close = |a: Option<f64>, b: f64| assert!((a.unwrap() - b).abs() < 1e-9, "{a:?} {b}");
        close(b.goodput_mean_mbps, 0.75);
        close(b.goodput_sd_mbps, 0.25);
        close(b.goodput_cov, 1.0 / 3.0);
        close(b.goodput_jain, 0.9);
        assert_eq!(b.transfers, 2);
        close(b.transfer_mean_ms, 200.0);
        close(b.transfer_sd_ms, 100.0);
        close(b.transfer_cov, 0.5);
    }
}
