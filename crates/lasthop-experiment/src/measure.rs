//! A run's metrics computed from its tables ([`RunTables`]: what the analysis wrote, read back
//! from its files or handed over in-process): connections matched to the scenario's flows,
//! fairness, the link's figures from the event log, UDP flows, pages, and what the experiment
//! asks for beyond them ([`Extras`]: seed 004's bottleneck, seed 003's streams).

use crate::metrics::{
    BottleneckMetrics, ConnMetrics, DirMetrics, ObjectMetrics, PageMetrics, QueueStats, RunMetrics,
    UdpMetrics,
};
use crate::stats::{cov, jain, quantile, time_weighted_mean};
use lasthop_analysis::files::connections::ConnRow;
use lasthop_analysis::files::page_objects::PageObjectRow;
use lasthop_analysis::files::pages::PageRow;
use lasthop_analysis::files::udp_flows::UdpFlowRow;
use lasthop_analysis::files::{self as af, FileError};
use lasthop_analysis::{LinkSample, RunAnalysis, SampleKind};
use lasthop_core::layout::RunFiles;
use lasthop_link::meter::LinkRow;
use lasthop_scenario::Scenario;
use std::path::Path;

impl ObjectMetrics {
    fn of(r: &PageObjectRow) -> ObjectMetrics {
        ObjectMetrics {
            object: r.object,
            class: r.class,
            bytes: r.bytes,
            elapsed_s: r.elapsed_s,
            throughput_bytes_per_s: r.throughput_bytes_per_s,
            rexmt_pkts: r.rexmt_pkts,
            dupacks: r.dupacks,
            triple_dupacks: r.triple_dupacks,
            sack_pkts: r.sack_pkts,
            drops_queue: r.drops_queue,
            drops_error: r.drops_error,
            ack_drops_queue: r.ack_drops_queue,
            ack_drops_error: r.ack_drops_error,
        }
    }
}

impl PageMetrics {
    /// The pages of `pages.csv`'s rows with their objects (an object goes to the page of its
    /// `flow`; one whose page is missing is an error naming `objects_file`).
    pub fn of(
        pages: &[PageRow],
        objects: &[PageObjectRow],
        objects_file: &Path,
    ) -> Result<Vec<PageMetrics>, FileError> {
        let mut out: Vec<PageMetrics> = pages
            .iter()
            .map(|p| PageMetrics {
                flow: p.flow,
                workload: p.workload.clone(),
                response_s: p.response_s,
                total_s: p.total_s,
                complete: p.complete,
                objects: vec![],
            })
            .collect();
        for (i, o) in objects.iter().enumerate() {
            let Some(page) = out.iter_mut().find(|p| p.flow == o.flow) else {
                return Err(FileError::Parse {
                    path: objects_file.display().to_string(),
                    line: i + 2,
                    msg: format!("flow {}: no such page in pages.csv", o.flow),
                });
            };
            page.objects.push(ObjectMetrics::of(o));
        }
        Ok(out)
    }
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
    fn compute(rows: &[LinkRow], conns: &[ConnMetrics], scenario: &Scenario) -> Self {
        let Some(l) = rows
            .iter()
            .max_by(|a, b| a.utilisation.total_cmp(&b.utilisation))
        else {
            return BottleneckMetrics::default();
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
        BottleneckMetrics {
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
        }
    }
}

fn ip_port(s: &str) -> Option<(&str, u16)> {
    let (ip, port) = s.rsplit_once(':')?;
    Some((ip, port.parse().ok()?))
}

/// A run's tables, as the analysis writes them: what its metrics are computed from.
#[derive(Clone, Debug, Default)]
pub struct RunTables {
    pub conns: Vec<ConnRow>,
    pub udp: Vec<UdpFlowRow>,
    pub pings: Vec<af::pings::PingFlowRow>,
    pub pages: Vec<PageRow>,
    pub objects: Vec<PageObjectRow>,
    pub streams: Vec<af::streams::StreamRow>,
    pub latency: Vec<af::latency::LatencyRow>,
    /// `link.csv`'s rows, down then up (none when the run has no `link.csv`).
    pub link: Vec<LinkRow>,
    /// What the event log says of the router queue and the serializer (empty without a log).
    pub samples: Vec<LinkSample>,
}

impl RunTables {
    /// The tables of an analysed run with its `link.csv` rows, as they read back from the
    /// files the analysis writes (numbers rounded as written): the metrics of a run are the
    /// same whether its tables come from its files or from memory.
    pub fn of_analysis(run: RunAnalysis, link: Vec<LinkRow>) -> RunTables {
        use af::{as_written, udp_flows as u};
        use af::{connections as c, latency as l, page_objects as o, pages as p, streams as s};
        RunTables {
            conns: as_written(&c::COLUMNS, run.conns.iter().map(ConnRow::of)),
            udp: as_written(&u::COLUMNS, u::rows(&run.udp)),
            pings: as_written(
                &af::pings::FLOW_COLUMNS,
                run.pings
                    .iter()
                    .enumerate()
                    .map(|(i, p)| af::pings::PingFlowRow::of(i + 1, p, &run.flows)),
            ),
            pages: as_written(&p::COLUMNS, run.pages.iter().map(PageRow::of)),
            objects: as_written(&o::COLUMNS, o::rows(&run.pages)),
            streams: as_written(&s::COLUMNS, run.streams.iter().map(s::StreamRow::of)),
            latency: l::rows(&run.streams).collect(),
            link,
            samples: run.link_samples,
        }
    }

    /// The tables of the run in `dir`, from its files (those the run has).
    pub fn read(dir: &Path) -> Result<RunTables, FileError> {
        let f = RunFiles::new(dir);
        let if_there = |p: std::path::PathBuf| p.exists().then_some(p);
        let mut t = RunTables {
            conns: af::connections::read(&f.connections_csv())?,
            ..Default::default()
        };
        if let Some(p) = if_there(f.udp_flows_csv()) {
            t.udp = af::udp_flows::read(&p)?;
        }
        if let Some(p) = if_there(f.ping_flows_csv()) {
            t.pings = af::pings::read_flows(&p)?;
        }
        if let Some(p) = if_there(f.pages_csv()) {
            t.pages = af::pages::read(&p)?;
            t.objects = af::page_objects::read(&f.page_objects_csv())?;
        }
        if let Some(p) = if_there(f.streams_csv()) {
            t.streams = af::streams::read(&p)?;
            if let Some(p) = if_there(f.latency_csv()) {
                t.latency = af::latency::read(&p)?;
            }
        }
        if let Some(p) = if_there(f.link_csv()) {
            t.link = lasthop_link::meter::read_link_csv(&p).map_err(|e| FileError::Parse {
                path: p.display().to_string(),
                line: e.position().map_or(0, |p| p.line() as usize),
                msg: e.to_string(),
            })?;
        }
        // events.csv, or events.parquet in its place.
        if let Some(p) = Some(f.events_csv()).filter(|p| af::columnar::exists(p)) {
            t.samples = LinkSample::read(&p).map_err(|e| match e {
                lasthop_analysis::Error::Io { path, error } => FileError::Io { path, error },
                e => FileError::Parse {
                    path: p.display().to_string(),
                    line: 0,
                    msg: e.to_string(),
                },
            })?;
        }
        Ok(t)
    }
}

/// A connection row's scenario flow: matched by addresses and the flow's port.
fn conn_flow(r: &ConnRow, scenario: &Scenario) -> Option<usize> {
    scenario.flows.iter().position(|f| {
        let from = scenario.hosts[f.from].address.to_string();
        let to = scenario.hosts[f.to].address.to_string();
        let c = ip_port(&r.client);
        let s = ip_port(&r.server);
        matches!((c, s), (Some((ci, _)), Some((si, sp))) if ci == from && si == to && sp == f.port)
            || matches!((c, s), (Some((ci, cp)), Some((si, _))) if ci == to && cp == f.port && si == from)
    })
}

impl ConnMetrics {
    /// A `connections.csv` row as metrics, with its scenario flow.
    pub fn of(r: &ConnRow, flow: Option<usize>) -> ConnMetrics {
        let by_dir = r.drops_by_dir();
        let (data, acks) = (by_dir[r.data_index()], by_dir[1 - r.data_index()]);
        ConnMetrics {
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
            drops_queue: data.queue,
            drops_red: data.red,
            drops_aqm: data.aqm,
            drops_error: data.error,
            ecn_marks: r.ecn_marks.unwrap_or(0),
            ack_drops: acks.total(),
            complete: r.complete,
            partial_elapsed_s: r.partial_elapsed_s,
            partial_throughput_bytes_per_s: r.partial_throughput_bytes_per_s,
            partial_rexmt_pkts: r.partial_rexmt_pkts,
            unneeded_rexmt: r.rexmt_minus_drops,
        }
    }
}

/// What a run computes beyond its connections, UDP flows and pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extras {
    /// Seed 004's figures (from `link.csv`).
    pub bottleneck: bool,
    /// Seed 003's per-host stream figures (from `streams.csv` and `latency.csv`).
    pub thin: bool,
}

impl RunMetrics {
    /// Computes the metrics of the run in `dir` from its files; `scenario` maps connections to
    /// flows.
    pub fn compute(
        dir: &Path,
        scenario: &Scenario,
        point: &str,
        replication: u64,
        extras: Extras,
    ) -> Result<RunMetrics, FileError> {
        Ok(RunMetrics::of(
            &RunTables::read(dir)?,
            scenario,
            point,
            replication,
            extras,
        ))
    }

    /// The metrics of a run's tables; `scenario` maps connections to flows.
    pub fn of(
        t: &RunTables,
        scenario: &Scenario,
        point: &str,
        replication: u64,
        extras: Extras,
    ) -> RunMetrics {
        let mut conns: Vec<ConnMetrics> = t
            .conns
            .iter()
            .map(|r| ConnMetrics::of(r, conn_flow(r, scenario)))
            .collect();
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
            parallel: crate::parallel::compute(&conns),
            point: point.to_string(),
            replication,
            jain: jain(&tputs),
            throughput_cov: cov(&tputs),
            conns,
            total_time_s,
            link: Default::default(),
            udp: vec![],
            pings: vec![],
            pages: vec![],
            bottleneck: None,
            thin: None,
        };
        if extras.bottleneck && !t.link.is_empty() {
            m.bottleneck = Some(BottleneckMetrics::compute(&t.link, &m.conns, scenario));
        }
        m.pages = page_metrics(t);
        m.udp = t.udp.iter().map(|r| udp_metrics(r, scenario)).collect();
        m.pings = t.pings.iter().map(ping_metrics).collect();
        if !t.samples.is_empty() && total_time_s.is_finite() {
            let (a, b) = ((t0 * 1e9).round() as u64, (t1 * 1e9).round() as u64);
            m.link = link_metrics(&t.samples, a, b);
        }
        if extras.thin {
            m.thin = crate::thin::compute(&t.streams, &t.latency, scenario);
        }
        m
    }
}

/// The pages of a run's tables (their objects are matched by flow, which the analysis writes
/// consistently: an object of no page is left out).
fn page_metrics(t: &RunTables) -> Vec<PageMetrics> {
    PageMetrics::of(
        &t.pages,
        &t.objects,
        Path::new(lasthop_core::layout::PAGE_OBJECTS_CSV),
    )
    .unwrap_or_else(|_| {
        let known: Vec<PageObjectRow> = t
            .objects
            .iter()
            .filter(|o| t.pages.iter().any(|p| p.flow == o.flow))
            .cloned()
            .collect();
        PageMetrics::of(&t.pages, &known, Path::new("")).expect("objects of known pages")
    })
}

/// A `udp_flows.csv` row as metrics, with the scenario flow it belongs to.
fn udp_metrics(r: &UdpFlowRow, scenario: &Scenario) -> UdpMetrics {
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
        spacing_ms: r.spacing_ms(),
        delay_ms: r.delay_ms(),
    }
}

/// A `ping_flows.csv` row as metrics (the analysis named its scenario flow).
fn ping_metrics(r: &af::pings::PingFlowRow) -> crate::metrics::PingMetrics {
    crate::metrics::PingMetrics {
        flow: r.flow_index,
        ping_flow: r.flow,
        sent: r.sent,
        received: r.received,
        loss_rate: r.loss_rate,
        rtt_min_ms: r.rtt_min_ms,
        rtt_mean_ms: r.rtt_mean_ms,
        rtt_p50_ms: r.rtt_p50_ms,
        rtt_p90_ms: r.rtt_p90_ms,
        rtt_p99_ms: r.rtt_p99_ms,
        rtt_max_ms: r.rtt_max_ms,
    }
}

/// Utilisation, queue statistics and drops per direction over `[t0, t1]` (ns).
fn link_metrics(samples: &[LinkSample], t0: u64, t1: u64) -> [DirMetrics; 2] {
    let mut out = [DirMetrics::default(); 2];
    for (d, dm) in out.iter_mut().enumerate() {
        let mut busy: u64 = 0;
        let mut tx_open: Option<u64> = None;
        let mut saw_tx = false;
        let mut steps: Vec<(u64, f64)> = vec![];
        let mut arrivals: Vec<f64> = vec![];
        let mut max_q: Option<f64> = None;
        for e in samples.iter().filter(|e| e.dir as usize == d) {
            match e.kind {
                SampleKind::TxStart => {
                    saw_tx = true;
                    tx_open = Some(e.time_ns);
                }
                SampleKind::TxEnd => {
                    if let Some(s) = tx_open.take() {
                        // Clip to the transfer period.
                        let (s, t) = (s.max(t0), e.time_ns.min(t1));
                        busy += t.saturating_sub(s);
                    }
                }
                // RED's drops, and the other AQMs' apart, as in connections.csv.
                SampleKind::Drop(0) => dm.drops_queue += 1,
                SampleKind::Drop(1) => dm.drops_red += 1,
                SampleKind::Drop(2) => dm.drops_aqm += 1,
                SampleKind::Drop(3) => dm.drops_error += 1,
                _ => {}
            }
            if let Some(q) = e.queue_pkts {
                let q = f64::from(q);
                steps.push((e.time_ns, q));
                max_q = Some(max_q.map_or(q, |m: f64| m.max(q)));
                if e.kind == SampleKind::Arrive {
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let rows = lasthop_link::meter::read_link_csv(&path).unwrap();
        let b = BottleneckMetrics::compute(&rows, &conns, &sc);
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
