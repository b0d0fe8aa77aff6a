//! A trace-driven link in both modes: a constant-rate UDP stream (1000 B every 2 ms, 4 Mbit/s)
//! through Mahimahi's 12 Mbit/s link with a 0.5 s outage every 2 s
//! (`examples/traces/outage-0.5s.mm`), simulated and emulated with real Linux hosts. The
//! datagrams are sent on whole milliseconds, so each reaches the router just after an
//! opportunity in both modes (the emulator's a few microseconds later), and the trace gives
//! them the same delivery times: the emulator's scheduled releases equal the simulator's (but
//! for datagrams the real sender sent a millisecond late, which catch a later opportunity), and
//! its actual deliveries are later by no more than its measured lateness (`summary.toml`). The
//! outages queue a quarter second of the stream each time, sent in a burst at 1.501 s.
//!
//! The emulated test needs root (without it the test says SKIPPED and why, and fails under
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use std::path::Path;

fn scenario(dir: &Path) -> std::path::PathBuf {
    let traces = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces");
    let link = dir.join("link.toml");
    std::fs::write(
        &link,
        format!(
            "[both]\ndelay = \"10ms\"\noverhead = \"4B\"\n[both.trace]\nmahimahi = \"{traces}/outage-0.5s.mm\"\n[both.queue]\npackets = 1000\n"
        ),
    )
    .unwrap();
    let spec = dir.join("trace.toml");
    std::fs::write(
        &spec,
        "name = \"trace\"\nduration = \"8s\"\nlink = \"link.toml\"\nlog = \"all\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n[[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\npayload = \"1000B\"\ninterval = \"2ms\"\nstart = \"100ms\"\nduration = \"6s\"\n",
    )
    .unwrap();
    spec
}

/// The times (ns) of the stream's `event` rows, and their actual times, in order.
fn rows(dir: &Path, event: &str) -> Vec<(u64, Option<u64>)> {
    let text = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (t, ev, d, flow, actual) = (
        col("time_ns"),
        col("event"),
        col("dir"),
        col("flow"),
        col("actual_ns"),
    );
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[ev] == event && f[d] == "down" && f[flow].starts_with("udp:"))
        .map(|f| (f[t].parse().unwrap(), f[actual].parse().ok()))
        .collect()
}

/// The scheduled and actual release times (ns) of the stream's datagrams, in order.
fn releases(dir: &Path) -> Vec<(u64, Option<u64>)> {
    rows(dir, "release")
}

/// `mm-link`'s rules replayed on the arrival times (ns) the model saw: each datagram (1028 B
/// and the 4-byte header counted) leaves at the first opportunity after it arrived with room
/// for it, 1504 B each, the trace looping; then the 10 ms propagation.
fn replay(arrivals: &[u64]) -> Vec<u64> {
    const MS: u64 = 1_000_000;
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/traces/outage-0.5s.mm"
    );
    let ms: Vec<u64> = std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let period = ms.last().unwrap() * MS;
    let mut out = Vec::with_capacity(arrivals.len());
    let (mut next, mut left) = (0usize, 0u64); // the datagram in transit and its bytes left
    'all: for cycle in 0.. {
        for &m in &ms {
            let t = cycle * period + m * MS;
            let mut budget = 1504;
            while next < arrivals.len() && arrivals[next] < t && budget > 0 {
                if left == 0 {
                    left = 1032;
                }
                let used = left.min(budget);
                (left, budget) = (left - used, budget - used);
                if left == 0 {
                    out.push(t + 10 * MS);
                    next += 1;
                }
            }
            if next == arrivals.len() {
                break 'all;
            }
        }
    }
    out
}

fn sim_releases(tmp: &Path) -> Vec<u64> {
    let out = tmp.join("sim");
    common::lasthop_ok(&[
        "sim",
        scenario(tmp).to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let r: Vec<u64> = releases(&out).into_iter().map(|r| r.0).collect();
    let arrived: Vec<u64> = rows(&out, "arrive").into_iter().map(|r| r.0).collect();
    assert_eq!(
        r,
        replay(&arrived),
        "simulated releases at the trace's opportunities"
    );
    r
}

#[test]
fn sim_delivers_the_stream_at_the_traces_opportunities() {
    let tmp = tempfile::tempdir().unwrap();
    let r = sim_releases(tmp.path());
    assert_eq!(r.len(), 3000, "every datagram delivered");
    // Sent at 100 + 2k ms, on an opportunity's millisecond: the next one carries it (1032 B
    // counted, one opportunity each), then the 10 ms propagation.
    assert_eq!(r[0], (100 + 1 + 10) * 1_000_000);
    // The first outage (1001..1500 ms): what was sent in it leaves from 1501 ms on, one
    // datagram per opportunity plus the stream's own.
    let at_1501 = r.iter().filter(|&&t| t == 1_511_000_000).count();
    assert_eq!(at_1501, 1);
    assert!(r.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn emu_delivers_a_trace_driven_stream_when_the_simulator_does() {
    if !common::can_emulate("emu_delivers_a_trace_driven_stream_when_the_simulator_does") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sim = sim_releases(tmp.path());
    let out = tmp.path().join("emu");
    let run = common::EmuRun::start(&scenario(tmp.path()), &out, &[]);
    let o = run.wait(std::time::Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let emu = releases(&out);
    let summary: toml::Table = std::fs::read_to_string(out.join("summary.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let lateness = &summary["lateness"];
    let max_late = lateness["max_ns"].as_integer().unwrap() as u64;
    println!(
        "emulated {} datagrams, simulated {}; lateness {lateness:?}",
        emu.len(),
        sim.len()
    );
    assert_eq!(
        emu.len(),
        sim.len(),
        "every datagram delivered in both modes"
    );
    // The model's schedule in emulation is the trace's, from the arrivals it saw.
    let arrived: Vec<u64> = rows(&out, "arrive").into_iter().map(|r| r.0).collect();
    let scheduled: Vec<u64> = emu.iter().map(|r| r.0).collect();
    assert_eq!(
        scheduled,
        replay(&arrived),
        "emulated releases at the trace's opportunities"
    );
    let same = emu.iter().zip(&sim).filter(|(e, s)| e.0 == **s).count();
    let mut off: Vec<i64> = emu
        .iter()
        .zip(&sim)
        .filter(|(e, s)| e.0 != **s)
        .map(|(e, s)| (e.0 as i64 - *s as i64) / 1000)
        .collect();
    off.sort_unstable();
    println!(
        "{same} of {} scheduled as in simulation; the others off by (us) {:?}",
        sim.len(),
        &off[..off.len().min(40)]
    );
    // A datagram the real sender sent a millisecond late or more catches a later opportunity,
    // and may push the next one into the opportunity after (the schedule above is still the
    // trace's for the arrivals the emulator saw). So the two modes are compared on the
    // datagrams that reached the router within a millisecond of their simulated arrival, as
    // the one before did: nine in ten of those are scheduled as in simulation (all but 1 % on
    // a quiet machine). How many arrive late is the machine's load, not the emulator's
    // schedule: a CI run while the VM had a third of its CPU stolen scheduled only 2003 of
    // 3000 as in simulation.
    let sim_arrived: Vec<u64> = rows(&tmp.path().join("sim"), "arrive")
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(sim_arrived.len(), arrived.len());
    let on_time = |i: usize| arrived[i].abs_diff(sim_arrived[i]) < 1_000_000;
    let compared: Vec<usize> = (1..sim.len())
        .filter(|&i| on_time(i) && on_time(i - 1))
        .collect();
    let same_on_time = compared.iter().filter(|&&i| emu[i].0 == sim[i]).count();
    println!(
        "{} of {} datagrams reached the router on time after one on time; {same_on_time} of them scheduled as in simulation",
        compared.len(),
        sim.len()
    );
    assert!(
        same_on_time * 10 >= compared.len() * 9,
        "{same_on_time} of {} on-time datagrams scheduled as in simulation",
        compared.len()
    );
    for ((sched, actual), s) in emu.iter().zip(&sim) {
        if sched == s {
            let actual = actual.expect("the emulator logs each actual release");
            assert!(actual >= *s && actual - s <= max_late, "{s} {actual}");
        }
    }
}

/// A 500-byte datagram every 5 ms for 1 s over a link that damages 30 % of them and forwards
/// them (Seawind's FORWARD).
fn corrupting(dir: &Path) -> std::path::PathBuf {
    std::fs::write(
        dir.join("link.toml"),
        "[both]\nrate = \"2Mbit\"\ndelay = \"5ms\"\n[down]\nhandling = \"forward\"\n[down.loss]\nmodel = \"uniform\"\nprobability = 0.3\n",
    )
    .unwrap();
    let spec = dir.join("corrupt.toml");
    std::fs::write(
        &spec,
        "name = \"corrupt\"\nduration = \"3s\"\nlink = \"link.toml\"\nlog = \"drops\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n[[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\npayload = \"500B\"\ninterval = \"5ms\"\nduration = \"1s\"\n",
    )
    .unwrap();
    spec
}

/// `udp_flows.csv`'s (sent, received, lost) of the run's one stream.
fn udp_counts(dir: &Path) -> (u64, u64, u64) {
    let text = std::fs::read_to_string(dir.join("udp_flows.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |name: &str| -> u64 {
        row[header.iter().position(|c| *c == name).unwrap()]
            .parse()
            .unwrap()
    };
    (get("sent"), get("received"), get("lost"))
}

/// In simulation the receiving host discards what the link damaged, and the analysis, which
/// checks the receiver's checksums in its capture, counts those datagrams lost: the damaged
/// one has its IPv4 TTL flipped (the simulator's UDP carries no checksum), so its header
/// checksum fails.
#[test]
fn sim_counts_the_damaged_datagrams_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    common::lasthop_ok(&[
        "sim",
        corrupting(tmp.path()).to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let damaged = rows(&out, "corrupt").len() as u64;
    assert!(
        (30..=90).contains(&damaged),
        "{damaged} of 200 damaged at p = 0.3"
    );
    assert_eq!(udp_counts(&out), (200, 200 - damaged, damaged));
}

/// Seawind's FORWARD with real bytes: datagrams the link damages reach the receiving host,
/// whose UDP checksum discards them, so the real receiver reads exactly the others, and the
/// analysis of its capture counts the same.
#[test]
fn emu_receivers_discard_the_datagrams_the_link_damages() {
    if !common::can_emulate("emu_receivers_discard_the_datagrams_the_link_damages") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = corrupting(dir);
    let out = dir.join("emu");
    let o = common::EmuRun::start(&spec, &out, &[]).wait(std::time::Duration::from_secs(60));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: toml::Table = std::fs::read_to_string(out.join("summary.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let down = &summary["link"]["down"];
    let corrupted = down
        .get("corrupted")
        .and_then(|v| v.as_integer())
        .unwrap_or(0) as u64;
    let released = down["released"].as_integer().unwrap() as u64;
    // What the real receiver read: its log's last row (`close`, or `stopped` when the run
    // ended first) carries the bytes.
    let log = std::fs::read_to_string(out.join("flow0-recv.csv")).unwrap();
    let got: u64 = log
        .lines()
        .rfind(|l| l.contains(",close,") || l.contains(",stopped,"))
        .and_then(|l| l.split(',').nth(2))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no close row in\n{log}"));
    println!(
        "released {released}, damaged {corrupted}, read {} datagrams",
        got / 500
    );
    assert_eq!(released, 200);
    assert!(
        (30..=90).contains(&corrupted),
        "{corrupted} of 200 damaged at p = 0.3"
    );
    assert_eq!(
        got / 500,
        released - corrupted,
        "the kernel discarded every damaged one"
    );
    assert_eq!(
        udp_counts(&out),
        (200, released - corrupted, corrupted),
        "the analysis of the captures counts what the receiver read"
    );
}

/// A damaged segment (FORWARD) is released by the link but discarded by the receiver's
/// checksum: its retransmission is needed, not spurious. 100 kB over 256 kbit/s with 5 % of
/// the data damaged and no other loss or delay: every retransmission repairs a damaged segment.
#[test]
fn sim_retransmissions_of_damaged_segments_are_not_spurious() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("link.toml"),
        "[both]\nrate = \"256kbit\"\ndelay = \"20ms\"\n[down]\nhandling = \"forward\"\n[down.loss]\nmodel = \"uniform\"\nprobability = 0.05\n",
    )
    .unwrap();
    let spec = dir.join("tcp.toml");
    std::fs::write(
        &spec,
        "name = \"corrupt-tcp\"\nduration = \"30s\"\nlink = \"link.toml\"\nlog = \"all\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = \"100kB\"\n",
    )
    .unwrap();
    let out = dir.join("sim");
    common::lasthop_ok(&[
        "sim",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(out.join("events.csv")).unwrap();
    let damaged = text
        .lines()
        .filter(|l| l.contains(",corrupt,down,"))
        .count();
    let conn = std::fs::read_to_string(out.join("connections.csv")).unwrap();
    let mut lines = conn.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let get = |name: &str| -> u64 {
        row[header.iter().position(|c| *c == name).unwrap()]
            .parse()
            .unwrap()
    };
    assert!(damaged > 0, "the link damaged none");
    assert_eq!(
        get("rexmt_pkts"),
        damaged as u64,
        "one retransmission per damaged segment"
    );
    assert_eq!(get("spurious_rexmt"), 0);
    assert_eq!(get("spurious_rtos"), 0);
}
