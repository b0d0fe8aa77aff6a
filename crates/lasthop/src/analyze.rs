//! `lasthop analyze PCAP [PCAP2] [--events events.csv] [--csv OUT]`: tcptrace-class
//! per-connection statistics of a capture (ours or anyone's), optionally merged with a second
//! capture of the same run and joined with the link's event log.

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
    /// Write connections.csv here (`-`: standard output; a regular file is replaced whole, a
    /// FIFO or device written through, a directory refused).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// RTO inference: minimum time without ACK progress before a retransmission counts as an
    /// RTO, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub rto_gap_ms: u64,
    /// Partial-transfer metric (seed 001's "first 10 KB"): time until the first ACK covering
    /// this many bytes of the data direction.
    #[arg(long, default_value_t = 10_240)]
    pub partial_bytes: u64,
    /// Print every counter of both directions of each connection (like `tcptrace -l`).
    #[arg(long, short = 'l')]
    pub long: bool,
    /// Also write a microsecond-resolution copy of PCAP here (tcptrace misreads nanosecond
    /// captures such as the simulator's).
    #[arg(long)]
    pub usec_copy: Option<PathBuf>,
}

fn load(path: &PathBuf, opts: la::Options) -> Result<Vec<la::ConnStats>> {
    let a = la::analyze_pcap_with(path, opts)?;
    for w in &a.summary.warnings {
        eprintln!("warning: {w}");
    }
    if a.conns.is_empty() {
        eprintln!(
            "note: {}: no TCP connection in {} records",
            path.display(),
            a.summary.records
        );
    }
    Ok(a.conns)
}

pub fn run(args: AnalyzeArgs) -> Result<()> {
    let opts = la::Options {
        rto_gap: Dur::from_millis(args.rto_gap_ms),
        partial_bytes: args.partial_bytes,
    };
    let first = load(&args.pcap, opts)?;
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
    let mut conns = match &args.pcap2 {
        Some(p2) => {
            let second = load(p2, opts)?;
            let (a, b) = (args.pcap.display(), p2.display());
            match client_side(&first, &second) {
                Side::First => la::merge_sides(&first, &second),
                Side::Second => {
                    eprintln!(
                        "note: {b} is the TCP client's capture and {a} the server's (told by the data sender's round-trip times): merged as such"
                    );
                    la::merge_sides(&second, &first)
                }
                Side::Unknown => {
                    eprintln!(
                        "warning: cannot tell which of {a} and {b} was captured at the TCP client (no connection whose data sender's capture shows clearly longer round trips): taking {a} as the client's; if it is not, elapsed times and counts come from the wrong side, so give the client's capture first"
                    );
                    la::merge_sides(&first, &second)
                }
            }
        }
        None => first,
    };
    if let Some(ev) = &args.events {
        la::EventLog::load(ev)?.join(&mut conns);
    }
    if args.long {
        print!("{}", la::format_long(&conns));
    } else {
        print!("{}", la::format_table(&conns));
    }
    if let Some(out) = &args.csv {
        la::write_connections_csv(out, &conns)
            .with_context(|| format!("writing {}", out.display()))?;
        eprintln!("wrote {} ({} connections)", out.display(), conns.len());
    }
    Ok(())
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
            partial_bytes: 10_240,
            long: true,
            usec_copy: Some(dir.path().join("usec.pcap")),
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

        let missing = dir.path().join("missing.pcap");
        let e = run(AnalyzeArgs {
            pcap: missing,
            pcap2: None,
            events: None,
            csv: None,
            rto_gap_ms: 200,
            partial_bytes: 10_240,
            long: false,
            usec_copy: None,
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("missing.pcap"), "{e:#}");
    }
}
