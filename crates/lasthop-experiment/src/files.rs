//! Readers for the per-run files the summaries and the report use: `events.csv`,
//! `connections.csv` and `tcp_trace.csv` (columns found by header name, so added columns do not
//! break them).

use std::collections::HashMap;
use std::path::Path;

/// What can go wrong reading a run's files. Messages name the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: String,
        line: usize,
        msg: String,
    },
}

/// A CSV file without quoted fields (every file lasthop writes), as header and rows.
pub struct Csv {
    pub path: String,
    pub columns: HashMap<String, usize>,
    pub text: String,
}

impl Csv {
    pub fn load(path: &Path) -> Result<Csv, FileError> {
        let text = std::fs::read_to_string(path).map_err(|e| FileError::Io {
            path: path.display().to_string(),
            error: e,
        })?;
        let header = text.lines().next().unwrap_or("");
        let columns = header
            .split(',')
            .enumerate()
            .map(|(i, c)| (c.trim().to_string(), i))
            .collect();
        Ok(Csv {
            path: path.display().to_string(),
            columns,
            text,
        })
    }

    pub fn col(&self, name: &str) -> Result<usize, FileError> {
        self.columns
            .get(name)
            .copied()
            .ok_or_else(|| FileError::Parse {
                path: self.path.clone(),
                line: 1,
                msg: format!("no column {name:?}"),
            })
    }

    /// Rows after the header: (line number, fields).
    pub fn rows(&self) -> impl Iterator<Item = (usize, Vec<&str>)> {
        self.text
            .lines()
            .enumerate()
            .skip(1)
            .filter(|(_, l)| !l.is_empty())
            .map(|(i, l)| (i + 1, l.split(',').collect()))
    }

    pub fn err(&self, line: usize, msg: impl Into<String>) -> FileError {
        FileError::Parse {
            path: self.path.clone(),
            line,
            msg: msg.into(),
        }
    }
}

fn num<T: std::str::FromStr>(
    csv: &Csv,
    line: usize,
    f: &[&str],
    i: usize,
    name: &str,
) -> Result<Option<T>, FileError> {
    match f.get(i).copied().unwrap_or("") {
        "" => Ok(None),
        s => s
            .parse()
            .map(Some)
            .map_err(|_| csv.err(line, format!("{name}: {s:?} is not a number"))),
    }
}

/// The kinds of link event (`event` column): lasthop-link's own, not a mirror of them.
pub use lasthop_link::event::RowKind as Ev;

/// One row of `events.csv` (the columns the summaries and plots need).
#[derive(Clone, Debug)]
pub struct EventRow {
    pub time_ns: u64,
    pub event: Ev,
    /// 0 = down, 1 = up, 2 = none (state rows).
    pub dir: u8,
    pub packet: u64,
    pub flow: String,
    pub tcp_seq: Option<u32>,
    pub tcp_ack: Option<u32>,
    pub tcp_len: Option<u32>,
    pub bytes: u32,
    pub queue_pkts: Option<u32>,
    pub cause: String,
    pub state: String,
}

/// Reads `events.csv`, with lasthop-link's typed reader (the one place its schema is read).
pub fn read_events(path: &Path) -> Result<Vec<EventRow>, FileError> {
    let p = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| FileError::Io {
        path: p.clone(),
        error: e,
    })?;
    let mut out = vec![];
    for row in lasthop_link::event::read_events(std::io::BufReader::new(f)) {
        let r = row.map_err(|e| FileError::Parse {
            path: p.clone(),
            line: e.line as usize,
            msg: e.message,
        })?;
        out.push(EventRow {
            time_ns: r.time_ns,
            event: r.event,
            dir: match r.dir {
                Some(lasthop_link::Dir::Down) => 0,
                Some(lasthop_link::Dir::Up) => 1,
                None => 2,
            },
            packet: r.packet.unwrap_or(0),
            flow: r.flow,
            tcp_seq: r.tcp_seq,
            tcp_ack: r.tcp_ack,
            tcp_len: r.tcp_len,
            bytes: r.bytes.unwrap_or(0),
            queue_pkts: r.queue_pkts,
            cause: r.cause.map(|c| c.name().to_string()).unwrap_or_default(),
            state: r.state.unwrap_or_default(),
        });
    }
    Ok(out)
}

/// One row of `connections.csv` (the columns the summaries use).
#[derive(Clone, Debug, Default)]
pub struct ConnRow {
    pub conn: usize,
    pub client: String,
    pub server: String,
    pub start_s: f64,
    pub end_s: f64,
    pub elapsed_s: f64,
    pub bytes: u64,
    pub throughput_bytes_per_s: f64,
    pub rexmt_pkts: u64,
    pub dupacks: u64,
    pub triple_dupacks: u64,
    pub rtos: u64,
    /// Timeouts that resent a segment the link had delivered (`None`: no full event log).
    pub spurious_rtos: Option<u64>,
    /// ACK-direction packets carrying SACK blocks (tcptrace "sack pkts sent").
    pub sack_pkts: u64,
    /// CE marks (only ECT packets, the data, are marked).
    pub ecn_marks: u64,
    pub complete: bool,
    /// `c2s` or `s2c`.
    pub data_dir: String,
    /// Drops by cause per direction: `[c2s, s2c]`.
    pub drops_queue: [u64; 2],
    pub drops_red: [u64; 2],
    /// CoDel's and PIE's drops (0 in files written before the column existed).
    pub drops_aqm: [u64; 2],
    pub drops_error: [u64; 2],
    /// Seed 001's first 10 KB (`partial_*`; empty when never reached, `None` too in files
    /// written before the columns existed).
    pub partial_elapsed_s: Option<f64>,
    pub partial_throughput_bytes_per_s: Option<f64>,
    pub partial_rexmt_pkts: Option<u64>,
    /// Retransmissions − data-direction drops (`rexmt_minus_drops`).
    pub rexmt_minus_drops: Option<u64>,
}

/// Reads `connections.csv`.
pub fn read_connections(path: &Path) -> Result<Vec<ConnRow>, FileError> {
    let csv = Csv::load(path)?;
    let c = |n: &str| csv.col(n);
    let cols = [
        c("conn")?,
        c("client")?,
        c("server")?,
        c("start_s")?,
        c("end_s")?,
        c("elapsed_s")?,
        c("bytes")?,
        c("throughput_Bps")?,
        c("rexmt_pkts")?,
        c("dupacks")?,
        c("rtos")?,
        c("complete")?,
        c("data_dir")?,
        c("drops_queue_c2s")?,
        c("drops_queue_s2c")?,
        c("drops_red_c2s")?,
        c("drops_red_s2c")?,
        c("drops_error_c2s")?,
        c("drops_error_s2c")?,
    ];
    let mut out = vec![];
    for (line, f) in csv.rows() {
        let g = |k: usize| f.get(cols[k]).copied().unwrap_or("");
        let u = |k: usize, n: &str| -> Result<u64, FileError> {
            Ok(num(&csv, line, &f, cols[k], n)?.unwrap_or(0))
        };
        let x = |k: usize, n: &str| -> Result<f64, FileError> {
            Ok(num(&csv, line, &f, cols[k], n)?.unwrap_or(f64::NAN))
        };
        out.push(ConnRow {
            conn: u(0, "conn")? as usize,
            client: g(1).to_string(),
            server: g(2).to_string(),
            start_s: x(3, "start_s")?,
            end_s: x(4, "end_s")?,
            elapsed_s: x(5, "elapsed_s")?,
            bytes: u(6, "bytes")?,
            throughput_bytes_per_s: x(7, "throughput_Bps")?,
            rexmt_pkts: u(8, "rexmt_pkts")?,
            dupacks: u(9, "dupacks")?,
            rtos: u(10, "rtos")?,
            complete: matches!(g(11), "true" | "1" | "yes"),
            data_dir: g(12).to_string(),
            drops_queue: [u(13, "drops_queue_c2s")?, u(14, "drops_queue_s2c")?],
            drops_red: [u(15, "drops_red_c2s")?, u(16, "drops_red_s2c")?],
            drops_error: [u(17, "drops_error_c2s")?, u(18, "drops_error_s2c")?],
            // Columns added later: a results directory written before them reads as 0 / none.
            drops_aqm: [
                opt_num(&csv, line, &f, "drops_aqm_c2s")?.unwrap_or(0),
                opt_num(&csv, line, &f, "drops_aqm_s2c")?.unwrap_or(0),
            ],
            triple_dupacks: opt_num(&csv, line, &f, "triple_dupacks")?.unwrap_or(0),
            spurious_rtos: opt_num(&csv, line, &f, "spurious_rtos")?,
            sack_pkts: opt_num(&csv, line, &f, "sack_pkts")?.unwrap_or(0),
            ecn_marks: opt_num(&csv, line, &f, "ecn_marks")?.unwrap_or(0),
            partial_elapsed_s: opt_num(&csv, line, &f, "partial_elapsed_s")?,
            partial_throughput_bytes_per_s: opt_num(&csv, line, &f, "partial_throughput_Bps")?,
            partial_rexmt_pkts: opt_num(&csv, line, &f, "partial_rexmt_pkts")?,
            rexmt_minus_drops: opt_num(&csv, line, &f, "rexmt_minus_drops")?,
        });
    }
    Ok(out)
}

/// The value of column `name` when the file has it (a column added after the file was written
/// reads as none).
fn opt_num<T: std::str::FromStr>(
    csv: &Csv,
    line: usize,
    f: &[&str],
    name: &str,
) -> Result<Option<T>, FileError> {
    match csv.columns.get(name) {
        Some(&i) => num(csv, line, f, i, name),
        None => Ok(None),
    }
}

/// One row of `tcp_trace.csv` (simulation only).
#[derive(Clone, Debug)]
pub struct TraceRow {
    pub time_ns: u64,
    pub host: String,
    pub local: String,
    pub remote: String,
    pub cwnd: u64,
    pub ssthresh: u64,
}

/// Reads `tcp_trace.csv`.
pub fn read_trace(path: &Path) -> Result<Vec<TraceRow>, FileError> {
    let csv = Csv::load(path)?;
    let c = |n: &str| csv.col(n);
    // `cwnd_segs` and `ssthresh_segs` since issue 24 put the unit in the name; `cwnd` and
    // `ssthresh` in results written before.
    let (ti, hi, li, ri, ci, si) = (
        c("time_ns")?,
        c("host")?,
        c("local")?,
        c("remote")?,
        c("cwnd_segs").or_else(|_| c("cwnd"))?,
        c("ssthresh_segs").or_else(|_| c("ssthresh"))?,
    );
    let mut out = vec![];
    for (line, f) in csv.rows() {
        let get = |i: usize| f.get(i).copied().unwrap_or("").to_string();
        out.push(TraceRow {
            time_ns: num(&csv, line, &f, ti, "time_ns")?.unwrap_or(0),
            host: get(hi),
            local: get(li),
            remote: get(ri),
            cwnd: num(&csv, line, &f, ci, "cwnd_segs")?.unwrap_or(0),
            ssthresh: num(&csv, line, &f, si, "ssthresh_segs")?.unwrap_or(u64::MAX),
        });
    }
    Ok(out)
}

/// One row of `udp_flows.csv` (written by `lasthop-analysis` only for runs with UDP flows).
/// Empty cells (unknown: no sender capture, no event log, too few packets) are `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UdpRow {
    pub flow: usize,
    pub src: String,
    pub dst: String,
    pub sent: Option<u64>,
    pub received: u64,
    pub lost: Option<u64>,
    pub loss_rate: Option<f64>,
    pub throughput_bytes_per_s: Option<f64>,
    pub drops_queue: Option<u64>,
    pub drops_red: Option<u64>,
    /// CoDel's and PIE's drops (`None` in files written before the column existed).
    pub drops_aqm: Option<u64>,
    pub drops_error: Option<u64>,
    /// Spacing 50/75/90 % and max, ms.
    pub spacing_ms: [Option<f64>; 4],
    /// One-way delay 50/75/90/99 % and max, ms.
    pub delay_ms: [Option<f64>; 5],
}

/// Reads `udp_flows.csv`.
pub fn read_udp_flows(path: &Path) -> Result<Vec<UdpRow>, FileError> {
    let csv = Csv::load(path)?;
    let names = [
        "flow",
        "src",
        "dst",
        "sent",
        "received",
        "lost",
        "loss_rate",
        "throughput_Bps",
        "drops_queue",
        "drops_red",
        "drops_error",
        "spacing_p50_ms",
        "spacing_p75_ms",
        "spacing_p90_ms",
        "spacing_max_ms",
        "delay_p50_ms",
        "delay_p75_ms",
        "delay_p90_ms",
        "delay_p99_ms",
        "delay_max_ms",
    ];
    let mut cols = [0usize; 20];
    for (c, n) in cols.iter_mut().zip(names) {
        *c = csv.col(n)?;
    }
    let aqm_col = csv.col("drops_aqm").ok();
    let mut out = vec![];
    for (line, f) in csv.rows() {
        let u = |k: usize| num::<u64>(&csv, line, &f, cols[k], names[k]);
        let x = |k: usize| num::<f64>(&csv, line, &f, cols[k], names[k]);
        let g = |k: usize| f.get(cols[k]).copied().unwrap_or("").to_string();
        out.push(UdpRow {
            flow: u(0)?.ok_or_else(|| csv.err(line, "flow: empty"))? as usize,
            src: g(1),
            dst: g(2),
            sent: u(3)?,
            received: u(4)?.unwrap_or(0),
            lost: u(5)?,
            loss_rate: x(6)?,
            throughput_bytes_per_s: x(7)?,
            drops_queue: u(8)?,
            drops_red: u(9)?,
            drops_aqm: match aqm_col {
                Some(i) => num::<u64>(&csv, line, &f, i, "drops_aqm")?,
                None => None,
            },
            drops_error: u(10)?,
            spacing_ms: [x(11)?, x(12)?, x(13)?, x(14)?],
            delay_ms: [x(15)?, x(16)?, x(17)?, x(18)?, x(19)?],
        });
    }
    Ok(out)
}

/// One row of `udp_packets.csv`: a received datagram of a UDP flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdpPacketRow {
    pub flow: usize,
    pub seq: u32,
    pub sent_s: Option<f64>,
    pub received_s: f64,
    pub delay_ms: Option<f64>,
}

/// Reads `udp_packets.csv`.
pub fn read_udp_packets(path: &Path) -> Result<Vec<UdpPacketRow>, FileError> {
    let csv = Csv::load(path)?;
    let c = |n: &str| csv.col(n);
    let (fi, si, ti, ri, di) = (
        c("flow")?,
        c("seq")?,
        c("sent_s")?,
        c("received_s")?,
        c("delay_ms")?,
    );
    let mut out = vec![];
    for (line, f) in csv.rows() {
        out.push(UdpPacketRow {
            flow: num(&csv, line, &f, fi, "flow")?.ok_or_else(|| csv.err(line, "flow: empty"))?,
            seq: num(&csv, line, &f, si, "seq")?.ok_or_else(|| csv.err(line, "seq: empty"))?,
            sent_s: num(&csv, line, &f, ti, "sent_s")?,
            received_s: num(&csv, line, &f, ri, "received_s")?
                .ok_or_else(|| csv.err(line, "received_s: empty"))?,
            delay_ms: num(&csv, line, &f, di, "delay_ms")?,
        });
    }
    Ok(out)
}

/// One object of a page (a row of `page_objects.csv`, written by `lasthop-analysis` only for
/// runs with http flows); `None` where the row is empty (unknown).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PageObjectRow {
    /// 0 = the main object.
    pub object: usize,
    /// 1 = the main object, then the in-lines by throughput within the run, highest first.
    pub class: usize,
    pub bytes: u64,
    /// Server side: SYN arrival to the ACK of the client's FIN sent.
    pub elapsed_s: Option<f64>,
    /// bytes / elapsed_s, bytes per second (`throughput_Bps` in metrics.json as in the CSV;
    /// `throughput_bps` before issue 24 renamed it).
    #[serde(rename = "throughput_Bps", alias = "throughput_bps")]
    pub throughput_bytes_per_s: Option<f64>,
    pub rexmt_pkts: Option<u64>,
    pub dupacks: Option<u64>,
    pub triple_dupacks: Option<u64>,
    pub sack_pkts: Option<u64>,
    /// Data direction (server to client): queue and error drops.
    pub drops_queue: Option<u64>,
    pub drops_error: Option<u64>,
    /// ACK direction (client to server): queue and error drops.
    pub ack_drops_queue: Option<u64>,
    pub ack_drops_error: Option<u64>,
}

/// One page (a row of `pages.csv`) with its objects.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PageRow {
    /// The scenario's flow index.
    pub flow: usize,
    pub workload: String,
    /// Client side: first SYN sent to the ACK of the last client FIN received.
    pub response_s: Option<f64>,
    /// Server side: first SYN arrival to the last ACK of a client FIN sent.
    pub total_s: Option<f64>,
    pub complete: bool,
    /// In object order.
    pub objects: Vec<PageObjectRow>,
}

/// Reads `pages.csv` and `page_objects.csv` (the objects go to the page of their `flow`).
pub fn read_pages(pages: &Path, objects: &Path) -> Result<Vec<PageRow>, FileError> {
    let csv = Csv::load(pages)?;
    let names = ["flow", "workload", "response_s", "total_s", "complete"];
    let mut cols = [0usize; 5];
    for (c, n) in cols.iter_mut().zip(names) {
        *c = csv.col(n)?;
    }
    let mut out: Vec<PageRow> = vec![];
    for (line, f) in csv.rows() {
        let x = |k: usize| num::<f64>(&csv, line, &f, cols[k], names[k]);
        let flow = num::<usize>(&csv, line, &f, cols[0], "flow")?
            .ok_or_else(|| csv.err(line, "flow: empty"))?;
        out.push(PageRow {
            flow,
            workload: f.get(cols[1]).copied().unwrap_or("").to_string(),
            response_s: x(2)?,
            total_s: x(3)?,
            complete: f.get(cols[4]).copied() == Some("1"),
            objects: vec![],
        });
    }
    let csv = Csv::load(objects)?;
    let names = [
        "flow",
        "object",
        "class",
        "bytes",
        "elapsed_s",
        "throughput_Bps",
        "rexmt_pkts",
        "dupacks",
        "triple_dupacks",
        "sack_pkts",
        "drops_queue",
        "drops_error",
        "ack_drops_queue",
        "ack_drops_error",
    ];
    let mut cols = [0usize; 14];
    for (c, n) in cols.iter_mut().zip(names) {
        *c = csv.col(n)?;
    }
    for (line, f) in csv.rows() {
        let u = |k: usize| num::<u64>(&csv, line, &f, cols[k], names[k]);
        let x = |k: usize| num::<f64>(&csv, line, &f, cols[k], names[k]);
        let need = |k: usize| u(k)?.ok_or_else(|| csv.err(line, format!("{}: empty", names[k])));
        let flow = need(0)? as usize;
        let Some(page) = out.iter_mut().find(|p| p.flow == flow) else {
            return Err(csv.err(line, format!("flow {flow}: no such page in pages.csv")));
        };
        page.objects.push(PageObjectRow {
            object: need(1)? as usize,
            class: need(2)? as usize,
            bytes: need(3)?,
            elapsed_s: x(4)?,
            throughput_bytes_per_s: x(5)?,
            rexmt_pkts: u(6)?,
            dupacks: u(7)?,
            triple_dupacks: u(8)?,
            sack_pkts: u(9)?,
            drops_queue: u(10)?,
            drops_error: u(11)?,
            ack_drops_queue: u(12)?,
            ack_drops_error: u(13)?,
        });
    }
    Ok(out)
}
