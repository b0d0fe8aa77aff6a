//! The simulator end to end: repeatable to the byte, bad input refused by key, the model's own
//! counters agreeing with the analysis of its captures, and error drops on an ARQ link.

use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;
use std::path::{Path, PathBuf};

fn scenario(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios")
        .join(name);
    Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn run_into(s: &Scenario, dir: &Path) -> lasthop_sim::SimResult {
    let opts = OutputOptions::all(dir);
    lasthop_sim::run(s, &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            (PathBuf::from(p.file_name().unwrap()), bytes)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn same_spec_and_seed_give_identical_files() {
    let s = scenario("seed000-r1-2tcp.toml");
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run_into(&s, a.path());
    run_into(&s, b.path());
    let (fa, fb) = (files(a.path()), files(b.path()));
    let names: Vec<_> = fa.iter().map(|f| f.0.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "connections.csv",
            "events.csv",
            "fixed.pcap",
            "link.csv",
            "mobile.pcap",
            "tcp_trace.csv"
        ]
    );
    for (x, y) in fa.iter().zip(&fb) {
        assert!(x.1 == y.1, "{} differs between two runs", x.0.display());
        assert!(x.1.len() > 100, "{} is nearly empty", x.0.display());
    }
    // Another replication is another run.
    let mut s2 = s.clone();
    s2.replication = 1;
    let c = tempfile::tempdir().unwrap();
    run_into(&s2, c.path());
    assert_ne!(files(c.path())[1].1, fa[1].1, "events.csv of replication 1");
}

#[test]
fn model_counters_agree_with_the_analysis_of_the_captures() {
    let s = scenario("seed000-e0-2tcp.toml");
    let dir = tempfile::tempdir().unwrap();
    let r = run_into(&s, dir.path());
    assert_eq!(r.connections.len(), 2);
    let queue_drops: u64 = r.connections.iter().map(|c| c.drops().queue).sum();
    assert_eq!(queue_drops, r.link[0].drops_queue);
    for c in &r.connections {
        assert!(
            c.complete(),
            "conn {} ran from SYN to the ACK of the FIN",
            c.id
        );
        assert_eq!(c.bytes(), 188_640);
        // 188640 bytes in 536-byte segments: 352 segments, the last one 504 bytes... plus the
        // retransmissions, each a data packet too.
        let d = c.data();
        assert_eq!(d.data_pkts, 352 + d.rexmt_pkts, "conn {}", c.id);
        // Every retransmission here repairs a queue drop (e0 has no errors and no delays that
        // could make one spurious); go-back-N can resend a little more.
        assert!(d.rexmt_pkts >= c.drops().queue);
        // The seeds' floor: 2 × 352 packets at 72 ms each share the link.
        assert!(c.elapsed().as_secs_f64() > 352.0 * 0.072);
    }
    for f in &r.flows {
        assert_eq!(f.delivered, 188_640);
        assert!(f.aborted.is_none());
    }
}

#[test]
fn an_arq_link_shows_error_drops_and_the_recoveries_they_cause() {
    // Replications of seed 000's r1 (at most one 700 ms link retransmission) until one has
    // error drops; with 63 % errors in bad states that last 0.2-1.5 s every 1-20 s, nearly all do.
    let base = scenario("seed000-r1-2tcp.toml");
    let dir = tempfile::tempdir().unwrap();
    let mut seen = false;
    for rep in 0..5 {
        let mut s = base.clone();
        s.replication = rep;
        let r = run_into(&s, dir.path());
        let errors = r.link[0].drops_error + r.link[1].drops_error;
        if errors == 0 {
            continue;
        }
        seen = true;
        let rexmt: u64 = r.connections.iter().map(|c| c.data().rexmt_pkts).sum();
        let err_in_conns: u64 = r.connections.iter().map(|c| c.drops().error).sum();
        assert_eq!(
            err_in_conns, errors,
            "every error drop belongs to a connection"
        );
        assert!(
            rexmt > 0,
            "error drops of data are repaired by retransmissions"
        );
        assert!(r.link[0].errors + r.link[1].errors >= errors);
        for f in &r.flows {
            assert_eq!(f.delivered, 188_640, "the transfer still completes");
        }
        break;
    }
    assert!(seen, "no replication of r1 had an error drop");
}

fn scenario_text(tweak: impl Fn(String) -> String) -> Result<Scenario, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios");
    let text = std::fs::read_to_string(dir.join("seed000-e0-2tcp.toml")).unwrap();
    let s = Scenario::from_str_in(&tweak(text), &dir).map_err(|e| e.to_string())?;
    let d = tempfile::tempdir().unwrap();
    lasthop_sim::run(
        &s,
        &OutputOptions {
            analyse: false,
            captures: lasthop_sim::Captures::None,
            ..OutputOptions::all(d.path())
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(s)
}

#[test]
fn bad_input_is_refused_by_key() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "from = \"fixed\"",
            "from = \"nobody\"",
            &["flows", "nobody"],
        ),
        ("bytes = 188640", "bytes = 0", &["bytes", "0"]),
        (
            "[hosts.fixed.tcp]",
            "[hosts.fixed.tcp]\nmss = \"2000B\"",
            &["hosts.fixed.tcp.mss", "2000"],
        ),
        (
            "[hosts.fixed.tcp]",
            "[hosts.fixed.tcp]\nsacks = true",
            &["hosts.fixed.tcp", "sacks"],
        ),
        (
            "link = \"../links/seed000-e0.toml\"",
            "link = \"../links/nonexistent.toml\"",
            &["nonexistent.toml"],
        ),
    ];
    for (from, to, wants) in cases {
        let e = scenario_text(|t| t.replacen(from, to, 1)).expect_err(to);
        for w in *wants {
            assert!(e.contains(w), "{to}: error {e:?} does not mention {w:?}");
        }
    }
}

/// The analysis the simulator feeds as the run goes (every captured packet, every link event)
/// gives what the analysis of the run's captures and `events.csv` gives afterwards, table for
/// table (TCP, UDP, pages, link samples), and without any capture written the same tables.
#[test]
fn the_analysis_in_process_is_that_of_the_captures() {
    use lasthop_analysis as la;
    for name in [
        "seed000-e0-2tcp1udp.toml",
        "seed002-optimal-s2s.toml",
        "seed001-2x50k.toml",
        "seed004-wan.toml",
    ] {
        let s = scenario(name);
        let d = tempfile::tempdir().unwrap();
        let opts = OutputOptions {
            link_samples: true,
            ..OutputOptions::all(d.path())
        };
        let r = lasthop_sim::run(&s, &opts).unwrap();
        let files = lasthop_core::layout::RunFiles::new(d.path());
        let pcaps: Vec<PathBuf> = s.hosts.iter().map(|h| files.pcap(&h.name)).collect();
        let hosts: Vec<_> = s
            .hosts
            .iter()
            .zip(&pcaps)
            .map(|(h, p)| (std::net::IpAddr::V4(h.address), la::Capture::File(p)))
            .collect();
        let mut a = la::AnalysisOptions::for_scenario(&s);
        a.link_samples = true;
        let after = la::analyse_run(&hosts, Some(&files.events_csv()), &a).unwrap();
        let text = |run: &la::RunAnalysis| {
            let t = tempfile::tempdir().unwrap();
            la::write_run_files(t.path(), run).unwrap();
            self::files(t.path())
        };
        assert_eq!(text(&r.analysis), text(&after), "{name}");
        assert_eq!(r.analysis.link_samples, after.link_samples, "{name}");
        assert!(!r.analysis.conns.is_empty(), "{name}");
        // Nothing but the tables written: the same tables.
        let bare = tempfile::tempdir().unwrap();
        let only = OutputOptions {
            dir: Some(bare.path().to_path_buf()),
            analyse: true,
            ..OutputOptions::NONE
        };
        let r2 = lasthop_sim::run(&s, &only).unwrap();
        assert_eq!(text(&r2.analysis), text(&after), "{name}");
        assert!(
            !bare
                .path()
                .join(lasthop_core::layout::pcap_name(&s.hosts[0].name))
                .exists(),
            "{name}: no capture written"
        );
    }
}

/// Each client's SYN retransmission times in a `clock_phase` scenario: three Linux 6.18 clients
/// (a twice, once with a flow `tcp` table of its own, and b) connect to m at time 0; the link
/// holds the first three packets down (the SYNs) 3 s, so each client's 1 s SYN timeout fires.
/// Returns the retransmission times, ns: a's plain flow, a's flow with its own table, b's.
fn syn_timeouts(clock_phase: &str) -> [u64; 3] {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("link.toml"),
        r#"
mtu = "1500B"
[both]
rate = "10Mbit"
delay = "10ms"
[[down.delays]]
nth = 1
delay = "3s"
[[down.delays]]
nth = 2
delay = "3s"
[[down.delays]]
nth = 3
delay = "3s"
"#,
    )
    .unwrap();
    let text = format!(
        r#"
name = "clock"
duration = "6s"
link = "link.toml"
{clock_phase}
[hosts.a]
side = "fixed"
tcp = {{ profile = "linux-6.18" }}
[hosts.b]
side = "fixed"
tcp = {{ profile = "linux-6.18" }}
[hosts.m]
side = "mobile"
tcp = {{ profile = "linux-6.18" }}
[[flows]]
kind = "bulk"
from = "a"
to = "m"
bytes = 1000
[[flows]]
kind = "bulk"
from = "a"
to = "m"
bytes = 1000
tcp = {{ nagle = false }}
[[flows]]
kind = "bulk"
from = "b"
to = "m"
bytes = 1000
"#
    );
    let s = Scenario::from_str_in(&text, d.path()).unwrap_or_else(|e| panic!("{e}"));
    let out = d.path().join("out");
    run_into(&s, &out);
    // (client address, port) -> the times of its SYNs.
    let mut syns: std::collections::BTreeMap<([u8; 4], u16), Vec<u64>> = Default::default();
    for host in ["a", "b"] {
        let f = std::fs::File::open(out.join(format!("{host}.pcap"))).unwrap();
        let mut r = pcap_file::pcap::PcapReader::new(f).unwrap();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            let (ip, tcp) = (&p.data[..20], &p.data[20..]);
            if tcp[13] & 0x12 == 0x02 && ip[12..16] != [198, 19, 0, 1] {
                let key = (
                    ip[12..16].try_into().unwrap(),
                    u16::from_be_bytes([tcp[0], tcp[1]]),
                );
                syns.entry(key)
                    .or_default()
                    .push(p.timestamp.as_nanos() as u64);
            }
        }
    }
    let resent: Vec<u64> = syns.values().map(|t| t[1]).collect();
    assert_eq!(syns.values().map(|t| t[0]).collect::<Vec<_>>(), [0, 0, 0]);
    resent.try_into().unwrap()
}

#[test]
fn hosts_on_one_kernel_fire_their_timers_on_one_jiffies_clock() {
    // Given 12 ms: the SYN at jiffy 3 (4 ms jiffies at HZ 250) times out 250 jiffies later, in
    // the timer wheel's level 1 (8-jiffy buckets), at the end of its bucket: jiffy
    // ((253 >> 3) + 1) << 3 = 256, 1024 ms of the clock, 1012 ms of the run. Every client
    // alike, the flow with a configuration of its own too (it runs on its host's kernel).
    assert_eq!(syn_timeouts("clock_phase = \"12ms\""), [1_012_000_000; 3]);
    // At phase 0 the same timeout ends at jiffy 256 with the run: 1024 ms.
    assert_eq!(syn_timeouts("clock_phase = \"0ms\""), [1_024_000_000; 3]);
    // Shared: one phase drawn for all hosts; the timeout ends within the 32 ms after 1 s.
    let [x, y, z] = syn_timeouts("clock_phase = \"shared\"");
    assert!((1_000_000_001..=1_032_000_000).contains(&x), "{x}");
    assert_eq!((x, y), (z, z));
    // Per host (the default): a's two flows on a's clock, b's on its own.
    let [x, y, z] = syn_timeouts("");
    assert_eq!(x, y);
    assert_ne!(x, z);
    assert_eq!(syn_timeouts("clock_phase = \"per_host\""), [x, y, z]);
}
