//! CellReplay's pair of traces (`[DIR.trace] cellreplay`) through the binary: the shipped
//! scenario simulated end to end; and through the example link, simulated and emulated with
//! real Linux hosts, a light UDP stream (each datagram starts a train of its own and is
//! released after the packet-train trace's base delay at its arrival's millisecond) and a
//! saturating one (released one per heavy opportunity, 1 ms apart).
//!
//! The emulated test needs root (without it the test says SKIPPED and why, and fails under
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use std::path::Path;

const MS: u64 = 1_000_000;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A column of a CSV file's first data row whose `key` column is `value`.
fn cell(file: &Path, key: &str, value: &str, col: &str) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |n: &str| header.iter().position(|c| *c == n).unwrap();
    let row: Vec<&str> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[at(key)] == value)
        .unwrap_or_else(|| panic!("no {key} = {value} in {}", file.display()));
    row[at(col)].to_string()
}

#[test]
fn sim_runs_the_shipped_cellreplay_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    let spec = root().join("examples/scenarios/cellreplay.toml");
    common::lasthop_ok(&[
        "sim",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    // The 4 MB download under load: the heavy trace's 11.2 Mbit/s is its ceiling (1396 B IP
    // packets, 1400 B with the TUN header, one per ms), far above the light PDOs' 2.24 Mbit/s.
    let conn = out.join("connections.csv");
    assert_eq!(cell(&conn, "conn", "1", "complete"), "1");
    let bps: f64 = cell(&conn, "conn", "1", "throughput_Bps").parse().unwrap();
    let mbps = bps * 8.0 / 1e6;
    assert!((8.0..11.2).contains(&mbps), "{mbps} Mbit/s");
    // The light upstream stream, 100 B every 50 ms within the first 3 s cycle's first second
    // and after: every datagram starts its own train and takes the base delay alone, 20 ms
    // (the upstream train trace's).
    let udp = out.join("udp_flows.csv");
    assert_eq!(cell(&udp, "flow", "1", "lost"), "0");
    assert_eq!(cell(&udp, "flow", "1", "delay_p50_ms"), "20.000");
    assert_eq!(cell(&udp, "flow", "1", "delay_max_ms"), "20.000");
    // Mahimahi's figures of both traced directions, the heavy traces' capacity.
    let ts = out.join("trace_summary.csv");
    assert_eq!(cell(&ts, "dir", "down", "capacity_Mbps"), "11.2");
    assert_eq!(cell(&ts, "dir", "up", "capacity_Mbps"), "5.6");
}

/// A 200-byte datagram every 10 ms from 100 ms for 2.5 s downstream through the example link.
fn scenario(dir: &Path) -> std::path::PathBuf {
    stream(dir, "172B", "10ms", "2.5s")
}

/// A stream of `payload` datagrams every `interval` from 100 ms for `duration` downstream
/// through the example link.
fn stream(dir: &Path, payload: &str, interval: &str, duration: &str) -> std::path::PathBuf {
    let traces = root().join("examples/traces/cellreplay");
    let t = traces.display();
    std::fs::write(
        dir.join("link.toml"),
        format!("[both]\noverhead = \"4B\"\n[down.trace]\ncellreplay = {{ train = \"{t}/down-delay-light-pdo\", heavy = \"{t}/down-heavy-pdo\" }}\n[up.trace]\ncellreplay = {{ train = \"{t}/up-delay-light-pdo\", heavy = \"{t}/up-heavy-pdo\" }}\n"),
    )
    .unwrap();
    let spec = dir.join("cellreplay.toml");
    std::fs::write(
        &spec,
        format!("name = \"cellreplay\"\nduration = \"4s\"\nlink = \"link.toml\"\nlog = \"all\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n[[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\npayload = \"{payload}\"\ninterval = \"{interval}\"\nstart = \"100ms\"\nduration = \"{duration}\"\n"),
    )
    .unwrap();
    spec
}

/// The stream's (arrival, scheduled release) times (ns) downstream, in order.
fn arrivals_and_releases(dir: &Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (t, ev, d, flow) = (col("time_ns"), col("event"), col("dir"), col("flow"));
    let rows: Vec<Vec<&str>> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[d] == "down" && f[flow].starts_with("udp:"))
        .collect();
    let times = |e: &str| -> Vec<u64> {
        rows.iter()
            .filter(|f| f[ev] == e)
            .map(|f| f[t].parse().unwrap())
            .collect()
    };
    let (a, r) = (times("arrive"), times("release"));
    assert_eq!(a.len(), r.len(), "every datagram released");
    a.into_iter().zip(r).collect()
}

/// The base delay of the example downstream train trace at `t` (ns), worked by hand: 20 ms
/// to 1 s, then rising linearly to 40 ms at 2 s (truncated to a whole ms), 40 ms to 3 s.
fn base_ms(t: u64) -> u64 {
    let ms = (t / MS) % 3000;
    match ms {
        0..1000 => 20,
        1000..2000 => 20 + (ms - 1000) * 20 / 1000,
        _ => 40,
    }
}

fn check(what: &str, rows: &[(u64, u64)]) {
    assert_eq!(rows.len(), 250, "{what}: every datagram");
    for (a, r) in rows {
        assert_eq!(
            *r,
            a / MS * MS + base_ms(*a) * MS,
            "{what}: a datagram arriving at {a} ns released after the base delay in force"
        );
    }
}

#[test]
fn sim_releases_a_light_stream_after_the_base_delay_in_force() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    common::lasthop_ok(&[
        "sim",
        scenario(tmp.path()).to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let rows = arrivals_and_releases(&out);
    check("simulated", &rows);
    // The base delay rose from 20 to 40 ms within the stream.
    assert_eq!(rows[0].1 - rows[0].0, 20 * MS);
    assert_eq!(rows[249].1 - rows[249].0, 40 * MS); // at 2590 ms
}

#[test]
fn emu_releases_a_light_stream_after_the_base_delay_in_force() {
    if !common::can_emulate("emu_releases_a_light_stream_after_the_base_delay_in_force") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu");
    let run = common::EmuRun::start(&scenario(tmp.path()), &out, &[]);
    let o = run.wait(std::time::Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // With the real clock each datagram still finds the link idle (10 ms apart, each train
    // done long before the next), and the model releases it after the base delay of its
    // arrival's millisecond, counted from that millisecond (CellReplay's clock).
    check("emulated", &arrivals_and_releases(&out));
    let udp = out.join("udp_flows.csv");
    assert_eq!(cell(&udp, "flow", "1", "lost"), "0");
}

/// A saturating stream: a 1396-byte datagram (1400 B with the TUN header, one PDO) every
/// 0.5 ms for 1 s, twice the heavy trace's 1400 B per ms. After the light PDOs the heavy queue
/// never empties, so every release from 300 ms on is exactly 1 ms after the one before, in
/// either mode (a late sender only deepens the queue).
fn saturating(what: &str, rows: &[(u64, u64)]) {
    assert_eq!(rows.len(), 2000, "{what}: every datagram");
    let late: Vec<u64> = rows
        .iter()
        .map(|r| r.1)
        .filter(|&r| r >= 300 * MS)
        .collect();
    assert!(
        late.len() > 1500,
        "{what}: {} released after 300 ms",
        late.len()
    );
    for w in late.windows(2) {
        assert_eq!(
            w[1] - w[0],
            MS,
            "{what}: releases one per heavy opportunity"
        );
    }
    // 2000 datagrams at 1 per ms take two seconds: the last leaves near 100 + 2000 + 20 ms.
    let last = rows.last().unwrap().1;
    assert!(
        (2100 * MS..2140 * MS).contains(&last),
        "{what}: last at {last}"
    );
}

#[test]
fn sim_releases_a_saturating_stream_at_the_heavy_traces_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    let spec = stream(tmp.path(), "1368B", "500us", "1s");
    common::lasthop_ok(&[
        "sim",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    saturating("simulated", &arrivals_and_releases(&out));
}

#[test]
fn emu_releases_a_saturating_stream_at_the_heavy_traces_rate() {
    if !common::can_emulate("emu_releases_a_saturating_stream_at_the_heavy_traces_rate") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu");
    let spec = stream(tmp.path(), "1368B", "500us", "1s");
    let run = common::EmuRun::start(&spec, &out, &[]);
    let o = run.wait(std::time::Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    saturating("emulated", &arrivals_and_releases(&out));
}
