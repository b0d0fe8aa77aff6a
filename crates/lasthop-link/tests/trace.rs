//! Trace-driven rate (`[down.trace]`): Mahimahi's delivery opportunities checked against an
//! independent replay of `mm-link`'s rules, throughput over a looped trace against its
//! capacity, timed rates with an outage worked by hand, the Mahimahi-style summary, and the
//! errors of bad trace files.

mod common;

use common::{drain, link, udp, MS};
use lasthop_core::{Seeds, Time};
use lasthop_link::{Dir, EventKind, Link, LinkSpec, LogLevel};
use std::collections::VecDeque;

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces");

fn traced(trace_line: &str, extra: &str) -> String {
    format!("[both]\noverhead = \"4B\"\n{extra}\n[down.trace]\n{trace_line}\n")
}

/// `mm-link`'s `LinkQueue::rationalize`, written again from its rules: opportunities in time
/// order (the trace looping), each carrying 1504 bytes of the packets that arrived strictly
/// before it, a packet leaving at the opportunity that carries its last byte. Returns each
/// packet's departure time (`arrivals`: (time ns, bytes counted), in arrival order).
fn mahimahi_departures(ms: &[u64], arrivals: &[(u64, u64)]) -> Vec<u64> {
    let period = ms.last().unwrap() * MS;
    let mut out = vec![0; arrivals.len()];
    let mut next = 0; // next arrival not yet queued
    let mut queue: VecDeque<(usize, u64)> = VecDeque::new(); // (index, bytes left)
    'cycles: for cycle in 0.. {
        for &m in ms {
            let t = cycle * period + m * MS;
            while next < arrivals.len() && arrivals[next].0 < t {
                queue.push_back((next, arrivals[next].1));
                next += 1;
            }
            let mut budget = 1504u64;
            while budget > 0 {
                let Some(head) = queue.front_mut() else { break };
                if head.1 <= budget {
                    budget -= head.1;
                    out[head.0] = t;
                    queue.pop_front();
                } else {
                    head.1 -= budget;
                    budget = 0;
                }
            }
            if next == arrivals.len() && queue.is_empty() {
                break 'cycles;
            }
        }
    }
    out
}

fn read_ms(name: &str) -> Vec<u64> {
    std::fs::read_to_string(format!("{TRACES}/{name}"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// Packets of random sizes in random bursts, some on whole milliseconds (the ties Mahimahi's
/// order decides), over `span_ms`.
fn arrivals(seed: u64, n: usize, span_ms: u64) -> Vec<(u64, usize)> {
    use lasthop_core::rng::Rng;
    let mut r = Seeds::new(seed, 0).stream("test.arrivals");
    let mut v: Vec<(u64, usize)> = (0..n)
        .map(|_| {
            let t = if r.random_bool(0.3) {
                r.random_range(0..span_ms) * MS
            } else {
                r.random_range(0..span_ms * MS)
            };
            let len = *[40usize, 52, 576, 1000, 1500, 1500, 1500]
                .get(r.random_range(0..7))
                .unwrap();
            (t, len)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn mahimahi_delivery_times_equal_the_traces_opportunities() {
    for (name, n, span) in [
        ("lte-bursty.mm", 60_000, 45_000),
        ("outage-0.5s.mm", 8_000, 9_000),
        ("steady-12mbit.mm", 5_000, 3_000),
    ] {
        let spec = traced(&format!("mahimahi = \"{TRACES}/{name}\""), "");
        let mut l = link(&spec);
        let arr = arrivals(7, n, span);
        let mut ids = vec![];
        for &(t, len) in &arr {
            while let Some(due) = l.poll_timeout().filter(|&d| d <= Time(t)) {
                l.handle_timeout(due);
            }
            ids.push(l.push(Time(t), Dir::Down, udp(len, 1, 0)));
        }
        let mut out = drain(&mut l).0;
        out.sort();
        let want = mahimahi_departures(
            &read_ms(name),
            &arr.iter()
                .map(|&(t, len)| (t, len as u64 + 4))
                .collect::<Vec<_>>(),
        );
        assert_eq!(out.len(), arr.len(), "{name}");
        for (i, (&id, &w)) in ids.iter().zip(&want).enumerate() {
            assert_eq!(out[id as usize], (id, Time(w)), "{name}: packet {i}");
        }
    }
}

#[test]
fn throughput_over_a_looped_trace_matches_its_capacity_within_1_percent() {
    // The LTE-like trace (20 s, looping) kept saturated for three cycles: 1500-byte packets
    // (1504 counted) use one opportunity each; 1000-byte ones share them.
    let cfg = LinkSpec::config_from_str(&traced(
        &format!("mahimahi = \"{TRACES}/lte-bursty.mm\""),
        "",
    ))
    .unwrap();
    let capacity = cfg.dirs[0].trace.as_ref().unwrap().mean_bps();
    assert!((capacity / 1e6 - 15.579).abs() < 0.001, "{capacity}");
    for len in [1500usize, 1000] {
        let mut l = Link::new(cfg.clone(), Seeds::new(1, 0), LogLevel::None);
        let end = Time(60_000 * MS);
        let pkt = udp(len, 1, 0);
        // 20 % more than the capacity, every millisecond.
        let per_ms = (capacity * 1.2 / 8.0 / 1000.0 / len as f64).ceil() as u64;
        let mut t = Time::ZERO;
        while t < end {
            while let Some(due) = l.poll_timeout().filter(|&d| d <= t) {
                l.handle_timeout(due);
            }
            for _ in 0..per_ms {
                l.push(t, Dir::Down, pkt.clone());
            }
            while l.poll_output().is_some() {}
            t += lasthop_core::Dur::from_millis(1);
        }
        while let Some(due) = l.poll_timeout().filter(|&d| d <= end) {
            l.handle_timeout(due);
        }
        let s = &l.trace_summaries(end)[0].row;
        // What the trace carried, in the bytes it counts (the packet and its 4-byte header).
        let carried = s.throughput_mbps * (len as f64 + 4.0) / len as f64;
        assert!(
            (carried / (capacity / 1e6) - 1.0).abs() < 0.01,
            "{len}B: {carried} Mbit/s carried, capacity {capacity}"
        );
        assert!((s.capacity_mbps / (capacity / 1e6) - 1.0).abs() < 1e-9);
    }
}

#[test]
fn an_outage_holds_a_packet_until_the_next_opportunity() {
    // outage-0.5s.mm: opportunities at 1..1000 ms and 1501..2000 ms of every 2 s.
    let spec = traced(&format!("mahimahi = \"{TRACES}/outage-0.5s.mm\""), "");
    let mut l = link(&spec);
    let a = l.push(Time(1_200 * MS), Dir::Down, udp(1500, 1, 0));
    let b = l.push(Time(1_200 * MS), Dir::Down, udp(1500, 1, 0));
    // A packet on an opportunity's millisecond misses it (Mahimahi serves it first): c waits
    // for 2501 ms, and d, behind it, shares that opportunity.
    let c = l.push(Time(2_500 * MS), Dir::Down, udp(100, 1, 0));
    let d = l.push(Time(2_500 * MS + 1), Dir::Down, udp(100, 1, 0));
    // 3000 ms is the last opportunity before the second cycle's outage: e waits it out.
    let e = l.push(Time(3_000 * MS), Dir::Down, udp(100, 1, 0));
    let out = drain(&mut l).0;
    assert_eq!(
        out,
        [
            (a, Time(1_501 * MS)),
            (b, Time(1_502 * MS)),
            (c, Time(2_501 * MS)),
            (d, Time(2_501 * MS)),
            (e, Time(3_501 * MS))
        ]
    );
}

#[test]
fn a_trace_that_does_not_loop_stops_sending_at_its_end() {
    let spec = traced(
        &format!("mahimahi = \"{TRACES}/outage-0.5s.mm\"\nloop = false"),
        "",
    );
    let mut l = link(&spec);
    let a = l.push(Time(1_999 * MS + 1), Dir::Down, udp(1500, 1, 0));
    l.push(Time(1_999 * MS + 2), Dir::Down, udp(1500, 1, 0));
    assert_eq!(drain(&mut l).0, [(a, Time(2_000 * MS))]);
    assert!(!l.is_empty(), "the second packet waits for ever");
}

#[test]
fn timed_rates_send_bit_by_bit_through_a_change_and_an_outage() {
    // steps.rates: 12 Mbit/s, 4 Mbit/s from 2 s, 0 from 3 s, 12 Mbit/s from 3.5 s; 5 s cycle.
    let spec = format!("[down.trace]\nrates = \"{TRACES}/steps.rates\"\n");
    let mut l = link(&spec);
    // 1500 B = 12 000 bits: 1 ms at 12 Mbit/s.
    let a = l.push(Time::ZERO, Dir::Down, udp(1500, 1, 0));
    // At 2.9995 s: 0.5 ms at 4 Mbit/s sends 2000 bits; the outage; the other 10 000 bits at
    // 12 Mbit/s take 833 333.3 ns, so the transmission ends at 3.5 s + 833 334 ns.
    let b = l.push(Time(2_999_500_000), Dir::Down, udp(1500, 1, 0));
    // The next cycle starts at 5 s with 12 Mbit/s again.
    let c = l.push(Time(5_000 * MS), Dir::Down, udp(1500, 1, 0));
    assert_eq!(
        drain(&mut l).0,
        [
            (a, Time(MS)),
            (b, Time(3_500_833_334)),
            (c, Time(5_001 * MS))
        ]
    );
}

#[test]
fn the_summary_has_mahimahis_delay_percentiles() {
    // Ten 1500-byte packets at 0 on the steady trace leave at 1, 2, ..., 10 ms.
    let spec = traced(&format!("mahimahi = \"{TRACES}/steady-12mbit.mm\""), "");
    let mut l = link(&spec);
    for _ in 0..10 {
        l.push(Time::ZERO, Dir::Down, udp(1500, 1, 0));
    }
    let (_, ev) = drain(&mut l);
    let s = l.trace_summaries(Time(1_000 * MS));
    assert_eq!(s.len(), 1, "only the traced direction");
    let r = &s[0].row;
    assert_eq!((r.dir.as_str(), r.packets), ("down", 10));
    assert!((r.delay_p50_ms - 5.5).abs() < 1e-9 && (r.delay_p95_ms - 9.55).abs() < 1e-9);
    // 1504 B per ms = 12.032 Mbit/s; 15 000 B in 1 s = 0.12 Mbit/s.
    assert!(
        (r.capacity_mbps - 12.032).abs() < 1e-9,
        "{}",
        r.capacity_mbps
    );
    assert!((r.throughput_mbps - 0.12).abs() < 1e-9);
    assert_eq!(s[0].series.len(), 2);
    assert!((s[0].series[0].throughput_mbps - 0.24).abs() < 1e-9);
    // The model logged each end of transmission at its opportunity.
    let ends: Vec<Time> = ev
        .iter()
        .filter(|e| e.kind == EventKind::TxEnd)
        .map(|e| e.time)
        .collect();
    assert_eq!(ends, (1..=10).map(|k| Time(k * MS)).collect::<Vec<_>>());
}

fn spec_error(spec: &str) -> String {
    LinkSpec::config_from_str(spec).unwrap_err().to_string()
}

fn file_with(text: &str) -> tempfile_path::Path {
    tempfile_path::Path::new(text)
}

/// A temporary file that removes itself.
mod tempfile_path {
    pub struct Path(pub std::path::PathBuf);
    impl Path {
        pub fn new(text: &str) -> Path {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "lasthop-trace-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::write(&p, text).unwrap();
            Path(p)
        }
        pub fn s(&self) -> String {
            self.0.display().to_string()
        }
    }
    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[test]
fn bad_traces_are_errors_naming_the_key_the_value_and_what_is_allowed() {
    let mm = |text: &str| {
        let f = file_with(text);
        spec_error(&format!("[down.trace]\nmahimahi = \"{}\"\n", f.s()))
    };
    let e = mm("");
    assert!(
        e.contains("key `down.trace.mahimahi`") && e.contains("has no timestamps"),
        "{e}"
    );
    let e = mm("1\n5\n3\n");
    assert!(
        e.contains("line 3: 3 comes after 5: the timestamps must not decrease"),
        "{e}"
    );
    let e = mm("1\n2.5\n");
    assert!(
        e.contains("line 2: \"2.5\" is not a whole number of milliseconds"),
        "{e}"
    );
    let e = mm("0\n0\n");
    assert!(e.contains("lasts 0 ms"), "{e}");
    let e = mm("1\n99999999999\n");
    assert!(e.contains("past the longest trace"), "{e}");
    // A device is refused, and a file past the bound is refused after it, not read whole (a
    // sparse file of 300 MB).
    let e = spec_error("[down.trace]\nmahimahi = \"/dev/zero\"\n");
    assert!(e.contains("is not a regular file"), "{e}");
    let big = file_with("");
    std::fs::File::options()
        .write(true)
        .open(&big.0)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let e = spec_error(&format!("[down.trace]\nmahimahi = \"{}\"\n", big.s()));
    assert!(e.contains("longer than 268435456 bytes"), "{e}");
    let e = spec_error("[down.trace]\nmahimahi = \"/nonexistent/trace\"\n");
    assert!(
        e.contains("key `down.trace.mahimahi`") && e.contains("No such file"),
        "{e}"
    );

    let rates = |text: &str, extra: &str| {
        let f = file_with(text);
        spec_error(&format!("[up.trace]\nrates = \"{}\"\n{extra}", f.s()))
    };
    let e = rates("1s 12Mbit\n2s 3Mbit\n", "");
    assert!(
        e.contains("key `up.trace.rates`") && e.contains("line 1: the first line is at 1s"),
        "{e}"
    );
    let e = rates("0 12\n2 3\n2 4\n", "");
    assert!(e.contains("line 3: 2s does not come after 2s"), "{e}");
    let e = rates("0s 12Mbit 3\n", "");
    assert!(e.contains("is not two values"), "{e}");
    let e = rates("0s 12parsecs\n1s 1Mbit\n", "");
    assert!(e.contains("invalid rate \"12parsecs\""), "{e}");
    let e = rates("0s 12Mbit\n", "");
    assert!(e.contains("a looping trace needs two"), "{e}");
    let one = file_with("0s 12Mbit\n");
    let c = LinkSpec::config_from_str(&format!(
        "[up.trace]\nrates = \"{}\"\nloop = false\n",
        one.s()
    ))
    .unwrap();
    assert_eq!(c.dirs[1].trace.as_ref().unwrap().mean_bps(), 12e6);
    let e = rates("0s 0bit\n1s 0\n2s 5Mbit\n", "");
    assert!(e.contains("every rate is 0"), "{e}");
    let e = rates("0s 1Mbit\n1s 2Mbit\n", "opportunity = \"1500B\"\n");
    assert!(
        e.contains("key `up.trace.opportunity`: belongs to a Mahimahi trace"),
        "{e}"
    );

    let steady = format!("{TRACES}/steady-12mbit.mm");
    for (spec, key) in [
        (format!("[down]\nrate = \"1Mbit\"\n[down.trace]\nmahimahi = \"{steady}\"\n"), "down.rate"),
        (
            format!("[down]\nschedule = [{{ at = \"1s\", rate = \"1Mbit\" }}]\n[down.trace]\nmahimahi = \"{steady}\"\n"),
            "down.schedule",
        ),
        (
            format!("initial_state = \"a\"\n[states.a]\nboth = {{ rate = \"1Mbit\" }}\n[down.trace]\nmahimahi = \"{steady}\"\n"),
            "states.a.rate",
        ),
        ("[down.trace]\n".to_string(), "down.trace"),
        (
            format!("[down.trace]\nmahimahi = \"{steady}\"\nrates = \"{steady}\"\n"),
            "down.trace",
        ),
        (
            format!("[down.trace]\nmahimahi = \"{steady}\"\nopportunity = \"0B\"\n"),
            "down.trace.opportunity",
        ),
    ] {
        let e = spec_error(&spec);
        assert!(e.starts_with(&format!("key `{key}`")), "{spec}: {e}");
    }
    // `both.rate` still gives the other direction its rate beside `down.trace`.
    let c = LinkSpec::config_from_str(&format!(
        "[both]\nrate = \"1Mbit\"\n[down.trace]\nmahimahi = \"{steady}\"\n"
    ))
    .unwrap();
    assert!(c.dirs[0].trace.is_some() && c.dirs[1].trace.is_none());
    assert_eq!(c.dirs[1].per_state[0].base_rate.bits_per_sec(), 1_000_000);
}

#[test]
fn a_trace_is_found_beside_the_link_spec_that_names_it() {
    let link = format!(
        "{}/../../examples/links/mahimahi-lte.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let c = LinkSpec::load(&link).unwrap_or_else(|e| panic!("{e}"));
    let d = c.describe();
    assert!(
        d.contains("rate from the Mahimahi trace \"../traces/lte-bursty.mm\": 25896 opportunities of 1504B over 20 s, mean 15.579 Mbit/s, looping"),
        "{d}"
    );
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn the_data_files_a_link_read_are_named_with_digests_of_their_contents() {
    // What an experiment's fingerprint adds, so that a changed trace is a changed experiment.
    let f = file_with("1\n2\n");
    let spec = format!("[down.trace]\nmahimahi = \"{}\"\n", f.s());
    let a = LinkSpec::config_from_str(&spec).unwrap();
    assert_eq!(a.data_files.len(), 1);
    assert_eq!(a.data_files[0].file, f.s());
    std::fs::write(&f.0, "1\n3\n").unwrap();
    let b = LinkSpec::config_from_str(&spec).unwrap();
    assert_ne!(a.data_files[0].digest, b.data_files[0].digest);
    assert!(LinkSpec::config_from_str("[down]\nrate = \"1Mbit\"\n")
        .unwrap()
        .data_files
        .is_empty());
}

#[test]
fn a_delay_trace_gives_each_packet_the_propagation_in_force_when_it_is_sent() {
    // base-delay.txt: 20 ms, 60 ms from 4 s, 20 ms from 4.3 s, 35 ms from 6 s, 20 ms from 8 s;
    // a 10 s cycle. Unlimited rate: a packet's transmission ends when it arrives.
    let spec = format!("[down]\nrate = \"unlimited\"\nin_order = false\n[down.delay_trace]\nfile = \"{TRACES}/base-delay.txt\"\n");
    let mut l = link(&spec);
    let at = [0, 4_100, 4_300, 7_000, 14_200];
    let ids: Vec<u64> = at
        .iter()
        .map(|&t| {
            while let Some(d) = l.poll_timeout().filter(|&d| d <= Time(t * MS)) {
                l.handle_timeout(d);
            }
            l.push(Time(t * MS), Dir::Down, udp(100, 1, 0))
        })
        .collect();
    let out = drain(&mut l).0;
    let want: Vec<(u64, Time)> = [20, 60, 20, 35, 60]
        .iter()
        .zip(&at)
        .zip(&ids)
        .map(|((d, t), id)| (*id, Time((t + d) * MS)))
        .collect();
    assert_eq!(out, want);
    for (spec, key) in [
        (
            format!(
                "[down]\ndelay = \"1ms\"\n[down.delay_trace]\nfile = \"{TRACES}/base-delay.txt\"\n"
            ),
            "down.delay",
        ),
        (
            "[down.delay_trace]\nloop = false\n".to_string(),
            "down.delay_trace.file",
        ),
    ] {
        let e = spec_error(&spec);
        assert!(e.starts_with(&format!("key `{key}`")), "{spec}: {e}");
    }
}
