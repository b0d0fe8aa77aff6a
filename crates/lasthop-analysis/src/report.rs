//! `connections.csv`, the readable table, and merging the client-side and server-side views of
//! the same run.

use crate::conn::{ConnStats, DataDir, DirStats};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

/// Every column of `connections.csv`, in order (the schema is [`crate::files::connections`]).
pub use crate::files::connections::COLUMNS as CSV_COLUMNS;

/// The leading columns of `connections.csv`, fixed; more columns follow (see [`CSV_COLUMNS`]).
pub const CSV_LEADING: [&str; 16] = {
    // The first 16 of CSV_COLUMNS, so the two lists cannot drift apart.
    let mut out = [""; 16];
    let mut i = 0;
    while i < 16 {
        out[i] = CSV_COLUMNS[i];
        i += 1;
    }
    out
};

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One CSV row (no newline), in [`CSV_COLUMNS`] order.
pub fn csv_row(c: &ConnStats) -> String {
    crate::files::connections::row_text(c)
}

/// Writes the CSV (header and one row per connection) to any writer.
pub fn write_csv_to<W: Write>(w: W, conns: &[ConnStats]) -> io::Result<()> {
    crate::files::connections::write_to(w, conns)
}

/// Writes `connections.csv` at `path` atomically (it appears whole or not at all).
pub fn write_connections_csv(path: impl AsRef<Path>, conns: &[ConnStats]) -> io::Result<()> {
    crate::files::connections::write(path.as_ref(), conns)
}

/// A readable table, one line per connection.
pub fn format_table(conns: &[ConnStats]) -> String {
    let mut s = String::new();
    let joined = conns.iter().any(|c| c.events_joined);
    let _ = write!(
        s,
        "{:>4} {:<22} {:<22} {:>9} {:>9} {:>10} {:>5} {:>5} {:>5} {:>4} {:>4} {:>4} {:>5} {:>5} {:>8}",
        "conn", "client", "server", "elapsed_s", "bytes", "B/s", "data", "rexmt", "dupak", "3dup",
        "rto", "sack", "dsack", "done", "rtt_ms"
    );
    if joined {
        let _ = write!(
            s,
            " {:>4} {:>4} {:>4} {:>4} {:>5}",
            "dq", "dred", "daqm", "derr", "spur"
        );
    }
    s.push('\n');
    for c in conns {
        let d = c.data();
        let a = c.acks();
        let rtt = d
            .rtt
            .avg_ns()
            .map(|v| format!("{:.1}", v / 1e6))
            .unwrap_or_else(|| "-".into());
        let _ = write!(
            s,
            "{:>4} {:<22} {:<22} {:>9.3} {:>9} {:>10.1} {:>5} {:>5} {:>5} {:>4} {:>4} {:>4} {:>5} {:>5} {:>8}",
            c.id,
            c.client.to_string(),
            c.server.to_string(),
            c.elapsed().as_secs_f64(),
            c.bytes(),
            c.throughput_bytes_per_s(),
            d.data_pkts,
            d.rexmt_pkts,
            d.dupacks,
            d.triple_dupacks,
            d.rtos,
            a.sack_blocks,
            a.dsack_blocks,
            if c.complete() { "yes" } else { "no" },
            rtt
        );
        if joined {
            let dr = c.drops();
            let _ = write!(
                s,
                " {:>4} {:>4} {:>4} {:>4} {:>5}",
                dr.queue,
                dr.red,
                dr.aqm,
                dr.error,
                opt(d.spurious_rexmt)
            );
        }
        s.push('\n');
    }
    s
}

/// A long, per-direction listing (like `tcptrace -l`): every counter of both directions.
pub fn format_long(conns: &[ConnStats]) -> String {
    let mut s = String::new();
    for c in conns {
        let _ = writeln!(
            s,
            "connection {}: {} -> {}  ({}, data {}{})",
            c.id,
            c.client,
            c.server,
            if c.complete() {
                "complete"
            } else {
                "incomplete"
            },
            c.data_dir().name(),
            if c.merged {
                ", merged client+server"
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            "  start {:.6} s  end {:.6} s  elapsed {:.6} s  bytes {}  throughput {:.1} B/s",
            c.start.as_secs_f64(),
            c.end().as_secs_f64(),
            c.elapsed().as_secs_f64(),
            c.bytes(),
            c.throughput_bytes_per_s()
        );
        if let (Some(e), Some(t)) = (c.partial_elapsed(), c.partial_throughput_bytes_per_s()) {
            let _ = writeln!(
                s,
                "  first {} bytes acked after {:.6} s ({t:.1} B/s)",
                c.partial_bytes,
                e.as_secs_f64()
            );
        }
        let row = |s: &mut String, name: &str, f: &dyn Fn(&DirStats) -> String| {
            let _ = writeln!(s, "  {name:<22} {:>18} {:>18}", f(&c.c2s), f(&c.s2c));
        };
        let _ = writeln!(
            s,
            "  {:<22} {:>18} {:>18}",
            "", "client->server", "server->client"
        );
        row(&mut s, "packets", &|d| d.packets.to_string());
        row(&mut s, "pure acks", &|d| d.pure_acks.to_string());
        row(&mut s, "data pkts", &|d| d.data_pkts.to_string());
        row(&mut s, "data bytes", &|d| d.data_bytes.to_string());
        row(&mut s, "unique bytes", &|d| d.unique_bytes.to_string());
        row(&mut s, "rexmt pkts", &|d| d.rexmt_pkts.to_string());
        row(&mut s, "rexmt bytes", &|d| d.rexmt_bytes.to_string());
        row(&mut s, "out of order", &|d| d.out_of_order.to_string());
        row(&mut s, "zero-window probes", &|d| d.zwnd_probes.to_string());
        row(&mut s, "dupacks received", &|d| d.dupacks.to_string());
        row(&mut s, "triple dupacks", &|d| d.triple_dupacks.to_string());
        row(&mut s, "fast rexmts", &|d| d.fast_rexmts.to_string());
        row(&mut s, "RTOs (inferred)", &|d| d.rtos.to_string());
        row(&mut s, "SACK pkts sent", &|d| d.sack_pkts.to_string());
        row(&mut s, "SACK blocks sent", &|d| d.sack_blocks.to_string());
        row(&mut s, "D-SACK blocks sent", &|d| {
            d.dsack_blocks.to_string()
        });
        row(&mut s, "SYN/FIN/RST", &|d| {
            format!("{}/{}/{}", d.syns, d.fins, d.rsts)
        });
        row(&mut s, "RTT samples", &|d| d.rtt.samples.to_string());
        row(&mut s, "RTT min/avg/max ms", &|d| match d.rtt.avg_ns() {
            Some(avg) => format!(
                "{:.1}/{:.1}/{:.1}",
                d.rtt.min_ns as f64 / 1e6,
                avg / 1e6,
                d.rtt.max_ns as f64 / 1e6
            ),
            None => "-".into(),
        });
        if c.events_joined {
            row(&mut s, "drops queue/red/aqm/error", &|d| {
                format!(
                    "{}/{}/{}/{}",
                    d.drops.queue, d.drops.red, d.drops.aqm, d.drops.error
                )
            });
            row(&mut s, "ECN marks", &|d| d.drops.marks.to_string());
            row(&mut s, "spurious rexmts", &|d| opt(d.spurious_rexmt));
        }
        s.push('\n');
    }
    s
}

fn same_conn(a: &ConnStats, b: &ConnStats) -> bool {
    a.client == b.client
        && a.server == b.server
        && match (a.client_isn, b.client_isn) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
}

/// Merges the connections seen in a client-side capture and a server-side capture of the same
/// run into one row per connection.
///
/// Connections are matched by (client, server) address pair and the client's initial sequence
/// number when both captures saw the SYN; otherwise the k-th occurrence of a pair in one capture
/// goes with the first unmatched one in the other. The merged row takes `start`, `fin_acked`, `first`,
/// `last` (so elapsed time, as seed 002 defines it: the client's first SYN sent to the ACK of
/// its FIN received) from the client-side capture, and both directions' counters (data,
/// retransmissions, duplicate ACKs, RTOs, SACK blocks, RTT) from the capture taken at the data
/// sender: the server's when the data went server→client, else the client's. Event-log
/// results are kept from whichever side had them. A connection seen on one side only is kept
/// as it is. The result is ordered like the client-side list, then the unmatched server-side
/// connections, and renumbered from 1.
pub fn merge_sides(client_side: &[ConnStats], server_side: &[ConnStats]) -> Vec<ConnStats> {
    let mut used = vec![false; server_side.len()];
    let mut out = Vec::new();
    for c in client_side {
        let m = server_side
            .iter()
            .enumerate()
            .find(|(j, s)| !used[*j] && same_conn(c, s));
        let Some((j, s)) = m else {
            out.push(c.clone());
            continue;
        };
        used[j] = true;
        // The sender: decided on the server-side view (both usually agree).
        let sender_is_server = match s.data_dir() {
            DataDir::ServerToClient => true,
            DataDir::ClientToServer => false,
        };
        let src = if sender_is_server { s } else { c };
        let mut m = c.clone();
        m.c2s = src.c2s.clone();
        m.s2c = src.s2c.clone();
        // Event-log results do not depend on the capture; keep the joined ones.
        let ev = if src.events_joined {
            Some(src)
        } else if c.events_joined {
            Some(c)
        } else if s.events_joined {
            Some(s)
        } else {
            None
        };
        if let Some(ev) = ev {
            copy_events(&mut m.c2s, &ev.c2s);
            copy_events(&mut m.s2c, &ev.s2c);
            m.events_joined = true;
        }
        m.merged = true;
        out.push(m);
    }
    for (j, s) in server_side.iter().enumerate() {
        if !used[j] {
            out.push(s.clone());
        }
    }
    for (i, c) in out.iter_mut().enumerate() {
        c.id = i + 1;
    }
    out
}

fn copy_events(to: &mut DirStats, from: &DirStats) {
    to.drops = from.drops;
    to.spurious_rexmt = from.spurious_rexmt;
}

/// A readable table, one line per UDP flow (empty when there is none): datagrams sent,
/// received and lost, throughput with the UDP header, drops by cause, spacing and one-way
/// delay in ms.
pub fn format_udp_table(flows: &[crate::udp::UdpFlowStats]) -> String {
    let mut s = String::new();
    if flows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "{:>4} {:<22} {:<22} {:>6} {:>6} {:>5} {:>9} {:>4} {:>4} {:>4} {:>4} {:>7} {:>7} {:>7} {:>8} {:>8}",
        "udp", "sender", "receiver", "sent", "recv", "lost", "B/s", "dq", "dred", "daqm", "derr",
        "sp50_ms", "sp90_ms", "spmax", "dly50_ms", "dlymax"
    );
    let o = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |v| format!("{v:.prec$}"));
    let n = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for (i, f) in flows.iter().enumerate() {
        let (sp, dl) = (f.spacing_ms(), f.delay_ms());
        let d = f.drops;
        let src = format!("{}:{}", f.flow.src, f.flow.sport);
        let dst = format!("{}:{}", f.flow.dst, f.flow.dport);
        let _ = writeln!(
            s,
            "{:>4} {:<22} {:<22} {:>6} {:>6} {:>5} {:>9} {:>4} {:>4} {:>4} {:>4} {:>7} {:>7} {:>7} {:>8} {:>8}",
            i + 1,
            src,
            dst,
            n(f.sent),
            f.received,
            n(f.lost()),
            o(f.throughput_bytes_per_s(), 1),
            n(d.map(|d| d.queue)),
            n(d.map(|d| d.red)),
            n(d.map(|d| d.aqm)),
            n(d.map(|d| d.error)),
            o(sp.p50, 1),
            o(sp.p90, 1),
            o(sp.max, 1),
            o(dl.p50, 1),
            o(dl.max, 1),
        );
    }
    s
}

/// The latency probes as `ping` ends its output: per flow, probes sent and answered, loss, and
/// the round-trip times (min, mean, p50, p99, max in ms; `-` without a reply).
pub fn format_ping_table(pings: &[crate::ping::PingStats]) -> String {
    let mut s = String::new();
    if pings.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "{:>4} {:<16} {:<16} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "ping",
        "from",
        "to",
        "sent",
        "recv",
        "loss%",
        "min_ms",
        "mean_ms",
        "p50_ms",
        "p99_ms",
        "max_ms"
    );
    for (i, p) in pings.iter().enumerate() {
        let r = p.rtt_summary_ms();
        let o = |f: fn(&crate::ping::RttSummary) -> f64| {
            r.as_ref().map_or("-".into(), |r| format!("{:.1}", f(r)))
        };
        let loss = if p.sent() > 0 {
            format!(
                "{:.1}",
                100.0 * (p.sent() - p.replied()) as f64 / p.sent() as f64
            )
        } else {
            "-".into()
        };
        let _ = writeln!(
            s,
            "{:>4} {:<16} {:<16} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
            i + 1,
            p.flow.src.to_string(),
            p.flow.dst.to_string(),
            p.sent(),
            p.replied(),
            loss,
            o(|r| r.min),
            o(|r| r.mean),
            o(|r| r.p50),
            o(|r| r.p99),
            o(|r| r.max),
        );
    }
    s
}
