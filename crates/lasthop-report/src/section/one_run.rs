//! One run's plots: the time-sequence graph, the router queue, throughput, cwnd and
//! ssthresh, and the UDP spacing and delay.

use crate::error::ReportError;
use crate::events::{read_events, Ev, EventRow};
use crate::html::{esc, figure};
use crate::plots::{self, cdf_chart, color, xy_chart, Bars, Line, Marks, Shape};
use crate::series::{self, TimeSeq};
use lasthop_analysis::files::{tcp_trace, udp_packets};
use std::fmt::Write as _;
use std::path::Path;

/// The lines, marks and bars of a time-sequence graph showing `shown` (the whole run's data
/// or a window of it) with the legend counts of `full`.
fn time_sequence_parts(full: &TimeSeq, shown: &TimeSeq) -> (Vec<Line>, Vec<Marks>, Vec<Bars>) {
    use plotters::style::RGBColor;
    let cause_color = |c: &str| match c {
        "queue" => RGBColor(220, 0, 0),
        "error" => RGBColor(128, 0, 160),
        "red" => RGBColor(230, 140, 0),
        _ => RGBColor(90, 90, 90),
    };
    let mut marks = vec![];
    for (cause, pts) in &full.drops {
        marks.push(Marks {
            label: format!("drop ({cause}): {}", pts.len()),
            color: cause_color(cause),
            points: shown.drops.get(cause).cloned().unwrap_or_default(),
            shape: Shape::Cross,
        });
    }
    let bars = vec![
        Bars {
            label: format!("data segment at the router: {}", full.new_segs.len()),
            color: RGBColor(0, 90, 180),
            bars: shown.new_segs.clone(),
        },
        Bars {
            label: String::new(),
            color: RGBColor(240, 130, 0),
            bars: shown.rexmt.clone(),
        },
    ];
    marks.push(Marks {
        label: format!("retransmission: {}", full.rexmt.len()),
        color: RGBColor(240, 130, 0),
        points: shown.rexmt.iter().map(|r| (r.0, r.1)).collect(),
        shape: Shape::Triangle,
    });
    let lines = vec![Line {
        label: "cumulative ACK released to the sender".into(),
        color: RGBColor(0, 150, 70),
        points: shown.acks.clone(),
        step: true,
        dashed: false,
    }];
    (lines, marks, bars)
}

/// Time plots of one run.
pub(crate) fn one_run(
    h: &mut String,
    run_dir: &Path,
    point: &str,
    rep: u64,
) -> Result<(), ReportError> {
    let _ = writeln!(
        h,
        "<h2>One run: {} / replication {rep}</h2>\n<p class=\"note\">Files in <code>runs/{}/{rep}/</code>. Choose another with <code>lasthop report DIR --run POINT/REPLICATION</code> or <code>report_run</code> in the spec.</p>",
        esc(point),
        esc(point)
    );
    let events_path = run_dir.join("events.csv");
    let events: Vec<EventRow> = if lasthop_analysis::files::columnar::exists(&events_path) {
        read_events(&events_path)?
    } else {
        vec![]
    };
    // Data flows: those carrying payload, in order of first appearance.
    let flows = series::data_flows(&events);
    if !events.iter().any(|e| e.event == Ev::Arrive) {
        h.push_str("<p class=\"note\">This run's events.csv has no <code>arrive</code> rows (log level other than <code>all</code>): the time-sequence graph and the queue plot show drops only.</p>\n");
    }
    for (fi, flow) in flows.iter().enumerate().take(8) {
        let ts = series::time_sequence(&events, flow);
        let (lines, marks, bars) = time_sequence_parts(&ts, &ts);
        figure(
            h,
            xy_chart(
                &format!("Time-sequence graph, connection {} ({})", fi + 1, flow),
                "time (s)",
                "relative sequence number (bytes)",
                &lines,
                &marks,
                &bars,
                None,
                None,
            ),
            "Vertical bars: data segments (sequence range) when they reached the router; orange triangles: retransmissions (the range was sent before); crosses: drops by cause (queue = router queue, error = link ARQ gave up, red = RED); green: the cumulative ACK as the link released it towards the sender.",
        );
        // A closer look at the first loss: 3 s before to 9 s after the first drop.
        if let Some((a, b)) = ts.first_drop_window() {
            let (zl, zm, zb) = time_sequence_parts(&ts, &ts.window(a, b));
            let ys = zl
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .chain(zm.iter().flat_map(|m| m.points.iter().map(|p| p.1)))
                .chain(
                    zb.iter()
                        .flat_map(|b| b.bars.iter().flat_map(|p| [p.1, p.2])),
                );
            let yr = plots::range(ys, false);
            figure(
                h,
                xy_chart(
                    &format!("Time-sequence graph, connection {}, around the first drop ({:.1} s to {:.1} s)", fi + 1, a, b),
                    "time (s)",
                    "relative sequence number (bytes)",
                    &zl,
                    &zm,
                    &zb,
                    Some((a, b)),
                    Some(yr),
                ),
                "The same graph, zoomed on the first drop (legend counts are for the whole run).",
            );
        }
    }
    // Queue length, one chart per direction.
    for (d, name) in [(0u8, "down (fixed → mobile)"), (1, "up (mobile → fixed)")] {
        let pts = series::queue_length(&events, d);
        if pts.is_empty() {
            continue;
        }
        let qmax = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        if qmax == 0.0 {
            let _ = writeln!(
                h,
                "<p class=\"note\">Router queue, {}: no packet waited in the queue (every packet found it empty and passed straight into the link).</p>",
                esc(name)
            );
            continue;
        }
        let line = Line {
            label: String::new(),
            color: color(d as usize),
            points: pts,
            step: true,
            dashed: false,
        };
        figure(
            h,
            xy_chart(
                &format!("Router queue length, {name}"),
                "time (s)",
                "packets in the router queue",
                &[line],
                &[],
                &[],
                None,
                Some((0.0, (qmax * 1.05).max(qmax + 1.0))),
            ),
            "Queue length in packets after the link events of each instant in this direction (step function; a packet that passes straight through an empty queue is not shown).",
        );
    }
    // Throughput over time per connection.
    let t_end = series::run_end(&events);
    if !flows.is_empty() && t_end > 0 {
        let bin = series::throughput_bin(t_end);
        let mut tl = vec![];
        for (fi, flow) in flows.iter().enumerate().take(8) {
            tl.push(Line {
                label: format!("connection {} ({flow})", fi + 1),
                color: color(fi),
                points: series::released_throughput(&events, flow, t_end, bin),
                step: false,
                dashed: false,
            });
        }
        figure(
            h,
            xy_chart("Throughput over time", "time (s)", "payload released by the link (bytes/s)", &tl, &[], &[], None, None),
            &format!("Payload bytes of each connection released by the link towards the receiver, in bins of {bin:.2} s."),
        );
    }
    // cwnd and ssthresh.
    let trace_path = run_dir.join("tcp_trace.csv");
    if let Some(trace) = tcp_trace::read_either(&trace_path)? {
        let mut lines = vec![];
        for (i, c) in series::cwnd_series(&trace, &flows).into_iter().enumerate() {
            lines.push(Line {
                label: format!("connection {} cwnd ({} {})", c.conn, c.host, c.key),
                color: color(i),
                points: c.cwnd,
                step: true,
                dashed: false,
            });
            if !c.ssthresh.is_empty() {
                lines.push(Line {
                    label: format!("connection {} ssthresh", c.conn),
                    color: color(i),
                    points: c.ssthresh,
                    step: true,
                    dashed: true,
                });
            }
        }
        if !lines.is_empty() {
            figure(
                h,
                xy_chart("Congestion window and slow-start threshold (simulation)", "time (s)", "cwnd, ssthresh (segments)", &lines, &[], &[], None, None),
                "From tcp_trace.csv: solid: cwnd, dashed: ssthresh (left out while it is above twice the largest cwnd, i.e. still 'infinite'), at every congestion-state change of each data sender.",
            );
        }
    }
    udp_plots(h, run_dir)
}

/// The UDP flows of one run (only when it has any): the spacing CDF and the one-way delay over
/// time, from `udp_packets.csv`.
fn udp_plots(h: &mut String, run_dir: &Path) -> Result<(), ReportError> {
    let path = run_dir.join("udp_packets.csv");
    if !path.exists() {
        return Ok(());
    }
    let rows = udp_packets::read(&path)?;
    let flows = series::udp_series(&rows);
    if flows.is_empty() {
        return Ok(());
    }
    let spacing: Vec<(String, Vec<(f64, f64)>)> = flows
        .iter()
        .filter(|f| !f.spacing_ms.is_empty())
        .map(|f| (format!("UDP flow {}", f.flow), series::cdf(&f.spacing_ms)))
        .collect();
    if !spacing.is_empty() {
        figure(
            h,
            cdf_chart("UDP spacing (jitter)", "spacing between consecutively received packets (ms)", &spacing),
            "From udp_packets.csv: the receiver's inter-arrival gaps of consecutively numbered datagrams (a pair with a loss between them is left out, as in seed 000).",
        );
    }
    let lines: Vec<Line> = flows
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.delay.is_empty())
        .map(|(i, f)| Line {
            label: format!("UDP flow {}", f.flow),
            color: color(i),
            points: f.delay.clone(),
            step: false,
            dashed: false,
        })
        .collect();
    if !lines.is_empty() {
        figure(
            h,
            xy_chart("UDP one-way delay", "receive time (s)", "one-way delay (ms)", &lines, &[], &[], None, None),
            "From udp_packets.csv: receiver capture time minus sender capture time of the same sequence number, at each datagram's arrival.",
        );
    }
    Ok(())
}
