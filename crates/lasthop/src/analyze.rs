//! `lasthop analyze PCAP [PCAP2] [--events events.csv] [--csv OUT]`: tcptrace-class
//! per-connection statistics of a capture (ours or anyone's), optionally merged with a second
//! capture of the same run and joined with the link's event log; and the UDP flows that carry
//! lasthop's CBR records, in the table `lasthop sim` prints.

use anyhow::{Context, Result};
use lasthop_analysis as la;
use lasthop_core::Dur;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// A pcap capture. With PCAP2, the two are the captures at the two ends of the same run, in
    /// either order: the TCP client's capture gives the elapsed times, the data sender's the
    /// data, retransmission, duplicate-ACK, RTO and SACK counts; which is which is told from the
    /// captures (see `docs/analysis.md`).
    pub pcap: PathBuf,
    /// The capture at the other end of the same run; one row per connection.
    pub pcap2: Option<PathBuf>,
    /// The link's event log (events.csv) for drops by cause and spurious retransmissions.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Write connections.csv here, udp_flows.csv beside it when the captures hold UDP flows,
    /// and pages.csv and page_objects.csv when --scenario names http flows (`-`: standard
    /// output; a regular file is replaced whole, a FIFO or device written through, a directory
    /// refused).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// RTO inference: minimum time without ACK progress before a retransmission counts as an
    /// RTO, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub rto_gap_ms: u64,
    /// RTO inference: the senders run RACK (Linux 4.18 and later with SACK: every emulated
    /// run), so a resend of the first unacknowledged segment that RACK's reordering timer
    /// explains is not an RTO. A run's own analysis sets it from its hosts.
    #[arg(long)]
    pub rack: bool,
    /// RTO inference: the senders send tail loss probes (Linux 3.10 and later with SACK: every
    /// emulated run), so the first resend after a silence with nothing lost in sight is the
    /// probe, not an RTO. A run's own analysis sets it from its hosts.
    #[arg(long)]
    pub tlp: bool,
    /// RTO inference: some sender may fast retransmit from a timer a quarter RTT after a
    /// duplicate ACK (Linux 3.5-4.10's delayed early retransmit), so a resend of an already
    /// resent head needs rto_gap / 2 without any ACK to count as an RTO.
    #[arg(long)]
    pub delayed_er: bool,
    /// Partial-transfer metric (seed 001's "first 10 KB"): time until the first ACK covering
    /// this many bytes of the data direction.
    #[arg(long, default_value_t = 10_240)]
    pub partial_bytes: u64,
    /// The run's scenario: its http flows' pages are found in the client's and the server's
    /// capture (told apart as for the connections) and listed, with response time, total time
    /// and per-object metrics; the rows of pages.csv, page_objects.csv, streams.csv and
    /// latency.csv name its flows (flow_index, flow_name, the hosts), as the run's own files do.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Print every counter of both directions of each connection (like `tcptrace -l`).
    #[arg(long, short = 'l')]
    pub long: bool,
    /// Also write a microsecond-resolution copy of PCAP here (tcptrace misreads nanosecond
    /// captures such as the simulator's).
    #[arg(long)]
    pub usec_copy: Option<PathBuf>,
    /// Also analyse every TCP stream as seed 003's analyseTCP did (ACK latency per byte range,
    /// retransmissions, redundant data bundling; with PCAP2 loss and RDB hits) and print a
    /// table; with --csv also streams.csv and latency.csv beside it.
    #[arg(long)]
    pub streams: bool,
}

fn load(path: &PathBuf, opts: la::Options) -> Result<la::Analysis> {
    let a = la::analyze_pcap_with(path, opts)?;
    for w in &a.summary.warnings {
        eprintln!("warning: {w}");
    }
    if a.conns.is_empty() && a.udp.is_empty() {
        eprintln!(
            "note: {}: no TCP connection in {} records",
            path.display(),
            a.summary.records
        );
    }
    Ok(a)
}

/// The UDP flows of one or two captures (each capture's datagrams that carry our record).
/// The captures name no host, so each flow's sides are told by time: with two captures, the
/// one that saw the flow's first datagram earlier is the sender's, the other the receiver's
/// (a flow in only one capture was sent there and never arrived); a single capture is taken as
/// the receiver's (what it received; no sent count, loss or delay).
fn udp_flows(captures: &[&[la::udp::Datagram]]) -> Vec<la::UdpFlowStats> {
    use std::collections::BTreeMap;
    // flow -> per capture, its datagrams
    let mut flows: BTreeMap<lasthop_core::FlowKey, Vec<Vec<la::udp::Datagram>>> = BTreeMap::new();
    for (i, dgs) in captures.iter().enumerate() {
        for d in dgs.iter() {
            flows
                .entry(d.flow)
                .or_insert_with(|| vec![vec![]; captures.len()])[i]
                .push(*d);
        }
    }
    let mut out: Vec<_> = flows
        .into_iter()
        .map(|(flow, per)| {
            let first = |v: &Vec<la::udp::Datagram>| v.iter().map(|d| d.time).min();
            let firsts: Vec<_> = per.iter().map(first).collect();
            let hosts: Vec<(std::net::IpAddr, Vec<la::udp::Datagram>)> = if per.len() == 1 {
                vec![(flow.dst, per[0].clone())]
            } else {
                // the earliest first datagram is the sender's (a capture without any is never)
                let sender = (0..per.len())
                    .filter(|&i| firsts[i].is_some())
                    .min_by_key(|&i| firsts[i])
                    .unwrap_or(0);
                per.into_iter()
                    .enumerate()
                    .map(|(i, d)| (if i == sender { flow.src } else { flow.dst }, d))
                    .collect()
            };
            let start = firsts.into_iter().flatten().min();
            (start, la::udp::udp_flows(&hosts))
        })
        .collect();
    out.sort_by_key(|(t, f)| (*t, f.first().map(|f| f.flow)));
    out.into_iter().flat_map(|(_, f)| f).collect()
}

/// The latency probes of the first capture, taken as their client's (where the round trips
/// are measured): every address that sent probes there is a client.
fn pings(dgs: &[la::udp::Datagram]) -> Vec<la::ping::PingStats> {
    let icmp: Vec<la::udp::Datagram> = dgs
        .iter()
        .filter(|d| d.flow.proto == lasthop_core::wire::PROTO_ICMP)
        .copied()
        .collect();
    let clients: std::collections::BTreeSet<std::net::IpAddr> = icmp
        .iter()
        .filter(|d| d.flow.sport != 0)
        .map(|d| d.flow.src)
        .collect();
    let hosts: Vec<_> = clients.into_iter().map(|c| (c, icmp.clone())).collect();
    la::ping::pings(&hosts)
}

pub fn run(args: AnalyzeArgs) -> Result<()> {
    crate::signals::exit_on_stop_signal(|s| {
        eprintln!("\ninterrupted by signal {s}: the analysis is not finished (its temporary files are removed)")
    })?;
    let opts = la::Options {
        rto_gap: Dur::from_millis(args.rto_gap_ms),
        partial_bytes: args.partial_bytes,
        rack: args.rack,
        tlp: args.tlp,
        delayed_er: args.delayed_er,
    };
    let first = load(&args.pcap, opts)?;
    let second = args.pcap2.as_ref().map(|p| load(p, opts)).transpose()?;
    let mut udp = match &second {
        Some(s) => udp_flows(&[&first.udp, &s.udp]),
        None => udp_flows(&[&first.udp]),
    };
    if let Some(out) = &args.usec_copy {
        let f = std::fs::File::open(&args.pcap)
            .with_context(|| format!("reading {}", args.pcap.display()))?;
        let mut w = lasthop_core::output::AtomicFile::create(out)
            .with_context(|| format!("writing {}", out.display()))?;
        let n = la::write_usec_copy(
            std::io::BufReader::new(f),
            &args.pcap.display().to_string(),
            &mut w,
        )?;
        w.commit()
            .with_context(|| format!("writing {}", out.display()))?;
        eprintln!(
            "wrote {} ({n} records, microsecond timestamps)",
            out.display()
        );
    }
    // and whether the first capture is the client's (the pages need to know)
    let (mut conns, first_is_client) = match (&second, &args.pcap2) {
        (Some(second), Some(p2)) => {
            let (a, b) = (args.pcap.display(), p2.display());
            match client_side(&first.conns, &second.conns) {
                Side::First => (la::merge_sides(&first.conns, &second.conns), true),
                Side::Second => {
                    eprintln!(
                        "note: {b} is the TCP client's capture and {a} the server's (told by the data sender's round-trip times): merged as such"
                    );
                    (la::merge_sides(&second.conns, &first.conns), false)
                }
                Side::Unknown => {
                    eprintln!(
                        "warning: cannot tell which of {a} and {b} was captured at the TCP client (no connection whose data sender's capture shows clearly longer round trips): taking {a} as the client's; if it is not, elapsed times and counts come from the wrong side, so give the client's capture first"
                    );
                    (la::merge_sides(&first.conns, &second.conns), true)
                }
            }
        }
        _ => (first.conns.clone(), true),
    };
    if let Some(ev) = &args.events {
        la::EventLog::load(ev)?.join(&mut conns);
        if !udp.is_empty() {
            la::join_udp_events(ev, &mut udp)?;
        }
    }
    if args.long {
        print!("{}", la::format_long(&conns));
    } else {
        print!("{}", la::format_table(&conns));
    }
    print!("{}", la::format_udp_table(&udp));
    print!("{}", la::format_ping_table(&pings(&first.udp)));
    let (client, server) = match (&second, first_is_client) {
        (Some(s), true) => (&first.conns[..], &s.conns[..]),
        (Some(s), false) => (&s.conns[..], &first.conns[..]),
        (None, _) => (&first.conns[..], &[][..]),
    };
    let pages = pages(&args, client, server, &conns)?;
    let named = named_flows(&args)?;
    let streams = if args.streams {
        let st = streams(&args, opts)?;
        print!("{}", la::latency::format_stream_table(&st));
        st
    } else {
        vec![]
    };
    if let Some(out) = &args.csv {
        if !streams.is_empty() {
            let dir = out.parent().unwrap_or(std::path::Path::new("."));
            let f = lasthop_core::layout::RunFiles::new(dir);
            write_text(
                &f.streams_csv(),
                &la::files::streams::text(&streams, &named),
            )?;
            write_text(
                &f.latency_csv(),
                &la::files::latency::text(&streams, &named),
            )?;
            eprintln!(
                "wrote streams.csv and latency.csv ({} streams)",
                streams.len()
            );
        }
        la::write_connections_csv(out, &conns)
            .with_context(|| format!("writing {}", out.display()))?;
        eprintln!("wrote {} ({} connections)", out.display(), conns.len());
        if !udp.is_empty() {
            let path = out.with_file_name(lasthop_core::layout::UDP_FLOWS_CSV);
            lasthop_core::output::AtomicFile::write_all_to(
                &path,
                la::udp::udp_csv(&udp).as_bytes(),
            )
            .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {} ({} UDP flows)", path.display(), udp.len());
        }
        if !pages.is_empty() {
            let dir = out.parent().unwrap_or(std::path::Path::new("."));
            let f = lasthop_core::layout::RunFiles::new(dir);
            write_text(&f.pages_csv(), &la::files::pages::text(&pages, &named))?;
            write_text(
                &f.page_objects_csv(),
                &la::files::page_objects::text(&pages, &named),
            )?;
            eprintln!(
                "wrote pages.csv and page_objects.csv ({} pages)",
                pages.len()
            );
        }
    }
    Ok(())
}

/// Writes a run table atomically, naming it in the error.
fn write_text(path: &std::path::Path, text: &str) -> Result<()> {
    lasthop_core::output::AtomicFile::write_all_to(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The scenario's flows (`--scenario`), which name the rows of pages.csv, page_objects.csv,
/// streams.csv and latency.csv as a run's own files name them; none without it.
fn named_flows(args: &AnalyzeArgs) -> Result<Vec<la::run::FlowId>> {
    let Some(path) = &args.scenario else {
        return Ok(vec![]);
    };
    let sc = lasthop_scenario::Scenario::load(path)?;
    Ok(la::run::FlowId::of_scenario(&sc))
}

/// The streams of the captures ([`la::latency::streams`]: the data sender's capture of each is
/// the one that saw its first data packet earlier).
fn streams(args: &AnalyzeArgs, opts: la::Options) -> Result<Vec<la::StreamStats>> {
    let mut logs = vec![];
    for p in std::iter::once(&args.pcap).chain(args.pcap2.as_ref()) {
        let name = p.display().to_string();
        let f = std::fs::File::open(p).with_context(|| format!("reading {name}"))?;
        let mut log = la::CaptureLog::default();
        la::analyze_reader_logged(f, &name, opts, Some(&mut log))?;
        logs.push(log);
    }
    Ok(la::latency::streams(&logs))
}

/// The pages of the scenario's http flows (none without `--scenario`), printed: `client` is
/// the client's capture's connections (response times), `server` the server's (total and
/// elapsed times, counters).
fn pages(
    args: &AnalyzeArgs,
    client: &[la::ConnStats],
    server: &[la::ConnStats],
    merged: &[la::ConnStats],
) -> Result<Vec<la::PageStats>> {
    let Some(path) = &args.scenario else {
        return Ok(vec![]);
    };
    let sc = lasthop_scenario::Scenario::load(path)?;
    let specs = la::AnalysisOptions::for_scenario(&sc).pages;
    let pages = la::page::pages(&specs, client, server, merged);
    print!("{}", la::format_page_table(&pages));
    Ok(pages)
}

/// Which of two captures of one run was taken at the TCP client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    First,
    Second,
    Unknown,
}

/// Tells which of two captures, taken at the two ends of the same connections, is at the TCP
/// client. At the data sender a data segment's ACK comes a network round trip later; at the
/// receiver the ACK leaves at once (or after the delayed-ACK timer), so the data direction's
/// smallest RTT sample is clearly larger in the sender's capture. With the connection's data
/// direction that places the client. Connections vote; a tie, or no connection with a clear
/// difference (a link with almost no delay, no samples), is `Unknown`.
pub fn client_side(a: &[la::ConnStats], b: &[la::ConnStats]) -> Side {
    let mut votes = 0i64;
    for ca in a {
        let Some(cb) = b.iter().find(|cb| {
            cb.client == ca.client
                && cb.server == ca.server
                && (ca.client_isn.is_none()
                    || cb.client_isn.is_none()
                    || ca.client_isn == cb.client_isn)
        }) else {
            continue;
        };
        let (ra, rb) = (&ca.data().rtt, &cb.data().rtt);
        if ra.samples == 0 || rb.samples == 0 {
            continue;
        }
        let clearly = |x: u64, y: u64| x > 2 * y && x - y > 1_000_000;
        let a_sends = if clearly(ra.min_ns, rb.min_ns) {
            true
        } else if clearly(rb.min_ns, ra.min_ns) {
            false
        } else {
            continue;
        };
        let client_sends = matches!(ca.data_dir(), la::DataDir::ClientToServer);
        votes += if a_sends == client_sends { 1 } else { -1 };
    }
    match votes.signum() {
        1 => Side::First,
        -1 => Side::Second,
        _ => Side::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::output::{PcapSink, DEFAULT_SNAPLEN};
    use lasthop_core::{Packet, Time};

    /// An IPv4/TCP header (no options) with the given fields; payload virtual.
    #[allow(clippy::too_many_arguments)]
    fn tcp(
        src: [u8; 4],
        dst: [u8; 4],
        sp: u16,
        dp: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        len: u16,
    ) -> Packet {
        let mut p = vec![0x45, 0];
        p.extend_from_slice(&(40 + len).to_be_bytes());
        p.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0]);
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p.extend_from_slice(&sp.to_be_bytes());
        p.extend_from_slice(&dp.to_be_bytes());
        p.extend_from_slice(&seq.to_be_bytes());
        p.extend_from_slice(&ack.to_be_bytes());
        p.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        Packet::with_wire_len(p, 40 + u32::from(len))
    }

    /// A CBR datagram of 512 payload bytes (UDP length 520) from 198.18.0.1:7000 to
    /// 198.19.0.1:7001 carrying record `seq`, as the simulator captures it (headers and record).
    fn cbr(seq: u32) -> Packet {
        let rec = la::udp::Record {
            seq,
            sent_ns: u64::from(seq) * 128_000_000,
        }
        .encode();
        lasthop_core::wire::build_ipv4_udp(
            std::net::SocketAddrV4::new([198, 18, 0, 1].into(), 7000),
            std::net::SocketAddrV4::new([198, 19, 0, 1].into(), 7001),
            seq as u16,
            0,
            &rec,
            540,
        )
    }

    fn pcap(path: &std::path::Path, pkts: &[(u64, Packet)]) {
        let mut sink = PcapSink::new(Vec::new(), DEFAULT_SNAPLEN).unwrap();
        for (ms, p) in pkts {
            sink.write(Time(ms * 1_000_000), p).unwrap();
        }
        std::fs::write(path, sink.into_inner()).unwrap();
    }

    #[test]
    fn analyze_finds_cbr_udp_flows_in_the_captures() {
        // Sent every 128 ms (seq 0-4 at 0..512 ms); received 200 ms later, seq 2 lost. Received
        // 4 × 520 bytes between 200 and 712 ms: 2080 / 0.512 = 4062.5 B/s; spacing 128 ms
        // (0→1 and 3→4; 1→3 spans the loss); one-way delay 200 ms.
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = (
            dir.path().join("server.pcap"),
            dir.path().join("mobile.pcap"),
        );
        pcap(
            &tx,
            &(0..5)
                .map(|s| (u64::from(s) * 128, cbr(s)))
                .collect::<Vec<_>>(),
        );
        pcap(
            &rx,
            &[0, 1, 3, 4].map(|s: u32| (u64::from(s) * 128 + 200, cbr(s))),
        );
        let load = |p: &PathBuf| load(p, la::Options::default()).unwrap();
        let (a_tx, a_rx) = (load(&tx), load(&rx));
        assert!(a_tx.conns.is_empty() && a_rx.conns.is_empty());
        // Either order of the two captures: the sender is the one that saw the flow first.
        for flows in [
            udp_flows(&[&a_rx.udp, &a_tx.udp]),
            udp_flows(&[&a_tx.udp, &a_rx.udp]),
        ] {
            assert_eq!(flows.len(), 1);
            let f = &flows[0];
            assert_eq!(f.flow.to_string(), "udp:198.18.0.1:7000>198.19.0.1:7001");
            assert_eq!((f.sent, f.received, f.lost()), (Some(5), 4, Some(1)));
            assert_eq!(f.bytes, 2080);
            assert_eq!(f.throughput_bytes_per_s(), Some(4062.5));
            assert_eq!(f.gaps_ms().len(), 2);
            assert!(f.gaps_ms().iter().all(|g| (g - 128.0).abs() < 1e-9));
            assert_eq!(f.delay_ms().p50, Some(200.0));
        }
        // The receiver's capture alone: what arrived, nothing about the sending side.
        let only_rx = udp_flows(&[&a_rx.udp]);
        assert_eq!((only_rx[0].sent, only_rx[0].received), (None, 4));
        assert_eq!(only_rx[0].throughput_bytes_per_s(), Some(4062.5));
        assert_eq!(only_rx[0].delay_ms().p50, None);
        // The sender's capture with an empty receiver's: sent 5, nothing arrived.
        let none: Vec<la::udp::Datagram> = vec![];
        let lost = udp_flows(&[&none, &a_tx.udp]);
        assert_eq!((lost[0].sent, lost[0].received), (Some(5), 0));

        // The command: the table on stdout, udp_flows.csv beside connections.csv.
        let csv = dir.path().join("out").join("connections.csv");
        std::fs::create_dir(dir.path().join("out")).unwrap();
        run(AnalyzeArgs {
            pcap: rx.clone(),
            pcap2: Some(tx.clone()),
            events: None,
            csv: Some(csv.clone()),
            rto_gap_ms: 200,
            rack: false,
            tlp: false,
            delayed_er: false,
            partial_bytes: 10_240,
            long: false,
            usec_copy: None,
            streams: false,
            scenario: None,
        })
        .unwrap();
        let text = std::fs::read_to_string(dir.path().join("out/udp_flows.csv")).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert!(lines.next().is_none());
        let col = |name: &str| row[head.iter().position(|h| *h == name).unwrap()];
        assert_eq!(
            [
                col("flow"),
                col("sent"),
                col("received"),
                col("lost"),
                col("bytes")
            ],
            ["1", "5", "4", "1", "2080"]
        );
        assert_eq!(col("throughput_Bps").parse::<f64>().unwrap(), 4062.5);
        assert_eq!(col("spacing_p50_ms").parse::<f64>().unwrap(), 128.0);
        assert_eq!(col("delay_p50_ms").parse::<f64>().unwrap(), 200.0);
    }

    #[test]
    fn analyze_writes_csv_and_reports_bad_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let (c, s) = ([198, 18, 0, 1], [198, 19, 0, 1]);
        let pkts = [
            (0, tcp(c, s, 5001, 80, 100, 0, 0x02, 0)),
            (100, tcp(s, c, 80, 5001, 900, 101, 0x12, 0)),
            (200, tcp(c, s, 5001, 80, 101, 901, 0x10, 0)),
            (210, tcp(s, c, 80, 5001, 901, 101, 0x10, 1000)),
            (220, tcp(s, c, 80, 5001, 1901, 101, 0x11, 0)),
            (310, tcp(c, s, 5001, 80, 101, 1902, 0x11, 0)),
            (410, tcp(s, c, 80, 5001, 1902, 102, 0x10, 0)),
        ];
        let mut sink = PcapSink::new(Vec::new(), DEFAULT_SNAPLEN).unwrap();
        for (ms, p) in &pkts {
            sink.write(Time(ms * 1_000_000), p).unwrap();
        }
        let pcap = dir.path().join("x.pcap");
        std::fs::write(&pcap, sink.into_inner()).unwrap();
        let csv = dir.path().join("connections.csv");
        run(AnalyzeArgs {
            pcap: pcap.clone(),
            pcap2: Some(pcap.clone()),
            events: None,
            csv: Some(csv.clone()),
            rto_gap_ms: 200,
            rack: false,
            tlp: false,
            delayed_er: false,
            partial_bytes: 10_240,
            long: true,
            usec_copy: Some(dir.path().join("usec.pcap")),
            streams: false,
            scenario: None,
        })
        .unwrap();
        let copy = la::analyze_pcap(dir.path().join("usec.pcap")).unwrap();
        assert_eq!(copy.len(), 1);
        assert_eq!(copy[0].elapsed().0, 410_000_000);
        let text = std::fs::read_to_string(&csv).unwrap();
        let row = text.lines().nth(1).unwrap();
        assert!(
            row.starts_with("1,198.18.0.1:5001,198.19.0.1:80,0.000000,0.410000,0.410000,1000,"),
            "{row}"
        );
        // No UDP flow in a TCP-only capture: no udp_flows.csv.
        assert!(!dir.path().join("udp_flows.csv").exists());

        let missing = dir.path().join("missing.pcap");
        let e = run(AnalyzeArgs {
            pcap: missing,
            pcap2: None,
            events: None,
            csv: None,
            rto_gap_ms: 200,
            rack: false,
            tlp: false,
            delayed_er: false,
            partial_bytes: 10_240,
            long: false,
            usec_copy: None,
            streams: false,
            scenario: None,
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("missing.pcap"), "{e:#}");
    }
}
