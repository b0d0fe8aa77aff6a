//! CellReplay's pair of traces (`[down.trace] cellreplay`), worked by hand on the shipped
//! example traces (`examples/traces/cellreplay/`):
//!
//! - `down-delay-light-pdo`: trains at 0 and 1000 ms with a 20 ms base delay and light PDOs at
//!   0, 5, 10 and 15 ms; at 2000 ms 40 ms and six PDOs (0..25 ms); the cycle ends at 3000 ms
//!   (its delay, 40 ms, only ends the interpolation from 2000 ms). So the base delay is 20 ms
//!   up to 1000 ms, rises linearly to 40 ms at 2000 ms, stays 40 ms to 3000 ms, and repeats.
//! - `down-heavy-pdo`: one opportunity every millisecond (1..10, looping): 1400 B/ms, 11.2
//!   Mbit/s under saturation, against the light PDOs' four 1400 B packets in 15 ms.
//!
//! Packets are 1396-byte IP packets with `overhead = "4B"` (1400 B, one PDO each, CellReplay's
//! accounting with its TUN header) unless said otherwise.

mod common;

use common::{drain, link, ms, udp, MS};
use lasthop_core::Time;
use lasthop_link::{Dir, LinkSpec};

const TRACES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/traces/cellreplay"
);

fn spec(extra: &str) -> String {
    format!(
        "[both]\noverhead = \"4B\"\n[down.trace]\ncellreplay = {{ train = \"{TRACES}/down-delay-light-pdo\", heavy = \"{TRACES}/down-heavy-pdo\"{extra} }}\n"
    )
}

/// Pushes packets of `len` bytes at the given times (ns) downstream; their release times in
/// ms (as f64, exact to the ns for these traces).
fn releases(spec: &str, at: &[(u64, usize)]) -> Vec<f64> {
    let mut l = link(spec);
    let mut ids = vec![];
    for &(t, len) in at {
        while let Some(d) = l.poll_timeout().filter(|&d| d.0 <= t) {
            l.handle_timeout(d);
        }
        ids.push(l.push(Time(t), Dir::Down, udp(len, 5000, 0)));
    }
    let (out, _) = drain(&mut l);
    assert_eq!(out.len(), at.len(), "every packet leaves");
    ids.iter()
        .map(|id| {
            let t = out.iter().find(|o| o.0 == *id).unwrap().1;
            t.0 as f64 / MS as f64
        })
        .collect()
}

#[test]
fn a_single_packet_takes_the_trains_base_delay_interpolated_as_cellreplay_does() {
    // A lone packet starts a train: it leaves after the base delay alone (its light PDO is the
    // train's first, at 0). 1234 ms: 20 + 234·(40−20)/1000 = 24.68, truncated to 24 ms;
    // 1500 ms: 30 ms; 2500 ms: 40 ms; 3100 ms is 100 ms into the second cycle: 20 ms. A packet
    // at 1234.7 ms arrives at 1234 ms by CellReplay's clock, of whole milliseconds: 1258 ms.
    let s = spec("");
    for (at_ms, want) in [
        (100.0, 120.0),
        (1234.0, 1258.0),
        (1234.7, 1258.0),
        (1500.0, 1530.0),
        (2500.0, 2540.0),
        (3100.0, 3120.0),
    ] {
        let t = (at_ms * MS as f64).round() as u64;
        let got = releases(&s, &[(t, 100)]);
        assert!(
            (got[0] - want).abs() < 1e-6,
            "a packet at {at_ms} ms left at {} ms, expected {want}",
            got[0]
        );
    }
}

#[test]
fn a_burst_takes_the_light_pdos_then_the_heavy_trace() {
    // Six 1400 B packets at 100 ms: the first starts the train (base 20 ms) and leaves at 120;
    // the next three take the light PDOs at +5, +10, +15 ms: 125, 130, 135. The fifth is past
    // the light PDOs: its release into the heavy queue, 100 + max(20, 15) = 120 ms, is raised
    // to the fourth's, 135, and the heavy trace's next opportunity after it sends it: 136. The
    // sixth is past them too (raised to 135; the heavy queue holds the fifth): 137.
    let at: Vec<(u64, usize)> = (0..6).map(|_| (100 * MS, 1396)).collect();
    assert_eq!(
        releases(&spec(""), &at),
        [120.0, 125.0, 130.0, 135.0, 136.0, 137.0]
    );
    // Small packets share a light PDO: 1400 B carries three 400 B packets (with their 4 B)
    // but not a fourth, which takes the next PDO.
    let at: Vec<(u64, usize)> = (0..5).map(|_| (100 * MS, 396)).collect();
    assert_eq!(
        releases(&spec(""), &at),
        [120.0, 120.0, 120.0, 125.0, 125.0]
    );
    // At 2000 ms the train has six light PDOs (0..25 ms) and a 40 ms base: seven packets take
    // 2040, 2045, .., 2065, and the seventh goes heavy: released into the heavy queue at
    // 2000 + max(40, 25) = 2040, raised to 2065, sent by the opportunity at 2066.
    let at: Vec<(u64, usize)> = (0..7).map(|_| (2000 * MS, 1396)).collect();
    assert_eq!(
        releases(&spec(""), &at),
        [2040.0, 2045.0, 2050.0, 2055.0, 2060.0, 2065.0, 2066.0]
    );
}

#[test]
fn a_saturating_flow_gets_the_heavy_traces_rate() {
    // 900 packets at time 0 (base delay 20 ms): four on the light PDOs (20, 25, 30, 35 ms);
    // the others are past them, raised to the fourth's release (35 ms) into the heavy queue,
    // and sent one per heavy opportunity from 36 ms: packet k (from 1) leaves at k + 31 ms for
    // k ≥ 5. The router queue in front holds them meanwhile (the serializer is busy with each
    // until a base delay before it leaves). From the 5th to the 900th,
    // 895 packets of 1400 B in 895 ms: 11.2 Mbit/s, the heavy trace's rate, where the light
    // PDOs alone would give 1400 B per 5 ms (2.24 Mbit/s).
    let at: Vec<(u64, usize)> = (0..900).map(|_| (0, 1396)).collect();
    let got = releases(&spec(""), &at);
    assert_eq!(&got[..4], [20.0, 25.0, 30.0, 35.0]);
    for (i, t) in got.iter().enumerate().skip(4) {
        assert_eq!(*t, (i + 1) as f64 + 31.0, "packet {}", i + 1);
    }
    let mbps = 895.0 * 1400.0 * 8.0 / ((got[899] - got[4]) / 1000.0) / 1e6;
    assert!((mbps - 11.2).abs() < 0.02, "{mbps} Mbit/s");
}

#[test]
fn the_switch_follows_cellreplays_restart_rule() {
    // Default restart timer 0: a packet whose earliest release (arrival + base delay) is later
    // than the previous packet's release starts a new train, so packets 4 ms apart (each
    // arriving after the train before it drained) each leave after the base delay alone,
    // while the same packets arriving together are spread over the light PDOs.
    let spaced: Vec<(u64, usize)> = (0..6).map(|i| (i * 4 * MS, 1396)).collect();
    assert_eq!(
        releases(&spec(""), &spaced),
        [20.0, 24.0, 28.0, 32.0, 36.0, 40.0]
    );
    // With `restart_after = "50ms"` (CellReplay's --long-to-short-timer) the same packets stay
    // in the first train: the 2nd arrives at 4 ms, past PDO 0, and takes PDO 1 (5 ms): 25;
    // the 3rd (8 ms) PDO 2: 30; the 4th (12 ms) PDO 3: 35; the 5th (16 ms) is past the last:
    // released into the heavy queue at 16 + max(20, 15) = 36, sent at opportunity 37; the 6th
    // (20 ms) heavy too (still the same train): 40, opportunity 41.
    assert_eq!(
        releases(&spec(", restart_after = \"50ms\""), &spaced),
        [20.0, 25.0, 30.0, 35.0, 37.0, 41.0]
    );
}

#[test]
fn packets_within_one_millisecond_arrive_together() {
    // A packet every 0.5 ms (2 per ms, 22.4 Mbit/s of 1400 B packets, twice the heavy trace's
    // rate): by CellReplay's clock the two of each millisecond arrive together, so they walk
    // the light PDOs (20, 25, 30, 35 ms) and then wait for the heavy trace, one per ms from
    // 36 ms: packet k (from 1) at k + 31 ms, as in a burst. (Counted in nanoseconds, each would
    // start a train of its own and leave after the base delay alone, at any rate.)
    let at: Vec<(u64, usize)> = (0..400).map(|i| (i * MS / 2, 1396)).collect();
    let got = releases(&spec(""), &at);
    assert_eq!(&got[..4], [20.0, 25.0, 30.0, 35.0]);
    for (i, t) in got.iter().enumerate().skip(4) {
        assert_eq!(*t, (i + 1) as f64 + 31.0, "packet {}", i + 1);
    }
}

#[test]
fn the_latency_offset_adds_by_packet_size() {
    // latency-offset-down: 0 ms at 100 B rising by 0.2 ms per 100 B to 2.6 ms at 1400 B. A
    // 1000 B packet (1004 B counted): 1.8 + 0.04·0.2 = 1.808, rounded to 2 ms: 122 ms; a
    // 96 B one (100 B): 0 ms: 120 ms; a 1396 B one (1400 B): 2.6 → 3 ms: 123 ms.
    let s = spec(&format!(
        ", latency_offset = \"{TRACES}/latency-offset-down\""
    ));
    for (len, want) in [(1000, 122.0), (96, 120.0), (1396, 123.0)] {
        assert_eq!(releases(&s, &[(100 * MS, len)]), [want], "{len} B");
    }
}

#[test]
fn the_example_link_and_its_description() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/links/cellreplay.toml"
    );
    let cfg = LinkSpec::load(path).unwrap_or_else(|e| panic!("{e}"));
    let words = cfg.describe();
    assert!(
        words.contains("rate and base delay from CellReplay's pair"),
        "{words}"
    );
    assert!(
        words.contains("3 trains over 3 s (base delay 20–40 ms, 4–6 light PDOs of 1400B each)"),
        "{words}"
    );
    // The heavy trace is the direction's capacity: 1400 B per ms.
    let t = cfg.dirs[0].trace.as_ref().unwrap();
    assert!((t.mean_bps() - 11.2e6).abs() < 1.0, "{}", t.mean_bps());
    let _ = ms(0);
}

#[test]
fn bad_cellreplay_specs_name_the_key_and_what_is_allowed() {
    let dir = std::env::temp_dir().join(format!("lasthop-cellreplay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let heavy = format!("{TRACES}/down-heavy-pdo");
    let pair = |train: &str| {
        format!("[down.trace]\ncellreplay = {{ train = \"{train}\", heavy = \"{heavy}\" }}\n")
    };
    let cases: Vec<(String, &str, &str)> = vec![
        (
            pair(&write("two", "0 20 0\n100 20 0\n")),
            "down.trace.cellreplay.train",
            "at least three",
        ),
        (
            pair(&write("nopdo", "0 20\n100 20 0\n200 20 0\n")),
            "down.trace.cellreplay.train",
            "line 1: \"0 20\" has no light PDO",
        ),
        (
            pair(&write("first", "0 20 3 5\n100 20 0\n200 20 0\n")),
            "down.trace.cellreplay.train",
            "the first PDO is 3, not 0",
        ),
        (
            pair(&write("dec", "0 20 0 5 4\n100 20 0\n200 20 0\n")),
            "down.trace.cellreplay.train",
            "PDO 4 comes after 5",
        ),
        (
            pair(&write("back", "0 20 0\n100 20 0\n50 20 0\n")),
            "down.trace.cellreplay.train",
            "line 3: 50 comes after 100",
        ),
        (
            pair(&write("word", "0 20 0\n100 x 0\n200 20 0\n")),
            "down.trace.cellreplay.train",
            "\"x\" is not a whole number of milliseconds",
        ),
        (
            pair(&write("late", "10 20 0\n100 20 0\n200 20 0\n")),
            "down.trace.cellreplay.train",
            "the first line is at 10 ms, not 0",
        ),
        (
            "[down.trace]\ncellreplay = { train = \"x\" }\n".into(),
            "down.trace.cellreplay.heavy",
            "missing",
        ),
        (
            format!("[down.trace]\nmahimahi = \"{heavy}\"\ncellreplay = {{ train = \"{TRACES}/down-delay-light-pdo\", heavy = \"{heavy}\" }}\n"),
            "down.trace.cellreplay",
            "give one of `mahimahi`, `rates` or `cellreplay`",
        ),
        (
            format!("[both]\ndelay = \"5ms\"\n{}", pair(&format!("{TRACES}/down-delay-light-pdo"))),
            "both.delay",
            "base delay comes from CellReplay's packet-train trace",
        ),
        (
            format!(
                "[down.trace]\ncellreplay = {{ train = \"{TRACES}/down-delay-light-pdo\", heavy = \"{}\" }}\n",
                write("heavy0", "0\n")
            ),
            "down.trace.cellreplay.heavy",
            "lasts 0 ms",
        ),
        (
            format!(
                "[down.trace]\ncellreplay = {{ train = \"{TRACES}/down-delay-light-pdo\", heavy = \"{heavy}\", latency_offset = \"{}\" }}\n",
                write("off", "100 0\n300 1\n")
            ),
            "down.trace.cellreplay.latency_offset",
            "this line's must be 200",
        ),
        (
            format!("[down.trace]\nopportunity = \"0B\"\ncellreplay = {{ train = \"{TRACES}/down-delay-light-pdo\", heavy = \"{heavy}\" }}\n"),
            "down.trace",
            "",
        ),
    ];
    for (text, key, words) in cases {
        let e = LinkSpec::config_from_str(&text).expect_err(&text);
        assert!(
            e.key.starts_with(key) && e.message.contains(words),
            "{text}\n→ {}: {}",
            e.key,
            e.message
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// CellReplay's `CellularQueue` written again from its code (`read_packet`,
/// `get_pkt_release_time_from_trace`, `write_packets`, `rationalize`), on whole milliseconds as
/// its clock runs: the delay queue's release of each packet, then the bypass or the heavy queue
/// (Mahimahi's link queue on the heavy trace, 1400 B per opportunity). `trains`: (time, base,
/// PDOs) lines; `heavy`: one cycle of opportunity times; `arrivals`: (ms, bytes counted), in
/// order; the traces start at 0. Returns each packet's departure (ms).
fn cellreplay_departures(
    trains: &[(i64, i64, Vec<i64>)],
    heavy: &[i64],
    offsets: &[f64],
    arrivals: &[(i64, i64)],
) -> Vec<i64> {
    // `get_psize_latency_offset`, rounded as `read_packet` does.
    let offset = |psize: i64| -> i64 {
        if offsets.is_empty() {
            return 0;
        }
        let (idx, rem) = (psize / 100 - 1, psize % 100);
        let v = if idx < 0 {
            offsets[0]
        } else if idx as usize >= offsets.len() - 1 {
            offsets[offsets.len() - 1]
        } else {
            let i = idx as usize;
            offsets[i] + (rem as f64 / 100.0) * (offsets[i + 1] - offsets[i])
        };
        v.round() as i64
    };
    const SIZE: i64 = 1400;
    let (mut idx, mut delay_base) = (0usize, 0i64);
    let (mut base, mut pdo_base, mut pdo_idx, mut curr) = (-1i64, 0i64, 0usize, SIZE);
    let (mut last_release, mut end_release) = (0i64, 0i64);
    // Delay queue: (release, bypass) per packet, releases not decreasing.
    let mut delayed = vec![];
    for &(t, size) in arrivals {
        let mut rel = t - delay_base;
        let (release, mut bypass);
        if base < 0 || t + base > last_release {
            while trains[idx + 1].0 <= rel {
                idx += 1;
                if idx >= trains.len() - 1 {
                    delay_base += trains[idx].0;
                    rel = t - delay_base;
                    idx = 0;
                }
            }
            let (a, b) = (&trains[idx], &trains[idx + 1]);
            let ratio = (rel - a.0) as f32 / (b.0 - a.0) as f32;
            base = (a.1 as f32 + ratio * (b.1 - a.1) as f32) as i64;
            release = t + base;
            bypass = true;
            pdo_base = rel;
            pdo_idx = 0;
            curr = SIZE - size;
        } else {
            let pdo = &trains[idx].2;
            let off = rel - pdo_base;
            while pdo_idx < pdo.len() && off > pdo[pdo_idx] {
                pdo_idx += 1;
                curr = SIZE;
            }
            if curr < size {
                pdo_idx += 1;
                curr = SIZE;
            }
            curr -= size;
            if pdo_idx >= pdo.len() {
                bypass = false;
                release = (t + base).max(t + pdo[pdo.len() - 1]);
            } else {
                release = t + base + (pdo[pdo_idx] - off);
                bypass = true;
            }
        }
        last_release = release;
        let mut release = release;
        let off = offset(size);
        if release + off >= end_release {
            release += off;
        }
        if release < end_release {
            release = end_release;
            bypass = false;
        }
        end_release = release;
        delayed.push((release, bypass, size));
    }
    // The heavy queue, opportunity by opportunity.
    let period = *heavy.last().unwrap();
    let opp = |k: usize| (k / heavy.len()) as i64 * period + heavy[k % heavy.len()];
    let mut out = vec![0; arrivals.len()];
    let mut queue: std::collections::VecDeque<(usize, i64)> = Default::default();
    let (mut k, mut last_done) = (0usize, -1i64);
    let serve = |upto: i64,
                 k: &mut usize,
                 queue: &mut std::collections::VecDeque<(usize, i64)>,
                 out: &mut Vec<i64>,
                 last_done: &mut i64| {
        while opp(*k) <= upto {
            let t = opp(*k);
            *k += 1;
            let mut budget = SIZE;
            while budget > 0 {
                let Some(h) = queue.front_mut() else { break };
                let used = h.1.min(budget);
                h.1 -= used;
                budget -= used;
                if h.1 == 0 {
                    out[h.0] = t;
                    *last_done = t;
                    queue.pop_front();
                }
            }
        }
    };
    for (i, &(r, bypass, size)) in delayed.iter().enumerate() {
        serve(r, &mut k, &mut queue, &mut out, &mut last_done);
        // Still counted in the heavy queue: waiting, or leaving at this very millisecond.
        if bypass && queue.is_empty() && last_done < r {
            out[i] = r;
        } else {
            queue.push_back((i, size));
        }
    }
    while !queue.is_empty() {
        let t = opp(k);
        serve(t, &mut k, &mut queue, &mut out, &mut last_done);
    }
    out
}

#[test]
fn release_times_equal_cellreplays_own_replay_on_whole_milliseconds() {
    // Random bursts on whole milliseconds (CellReplay's clock), packets of 40 to 1400 bytes
    // counted: every departure equals CellReplay's replay written above (the router queue is
    // unlimited, as CellReplay's default queue).
    use lasthop_core::rng::Rng;
    let text = std::fs::read_to_string(format!("{TRACES}/down-delay-light-pdo")).unwrap();
    let trains: Vec<(i64, i64, Vec<i64>)> = text
        .lines()
        .map(|l| {
            let v: Vec<i64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2..].to_vec())
        })
        .collect();
    // The example's heavy trace (every ms), and a bursty one with repeated timestamps and a
    // gap; without and with the example's latency offsets (0 to 2.6 ms by size).
    let dir = std::env::temp_dir().join(format!("lasthop-cr-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bursty = dir.join("heavy");
    std::fs::write(&bursty, "1\n1\n3\n4\n4\n4\n9\n12\n").unwrap();
    let offsets: Vec<f64> = (0..14).map(|i| 0.2 * i as f64).collect();
    let mut compared = 0;
    for seed in 0..40 {
        let (heavy, heavy_file): (Vec<i64>, String) = if seed % 2 == 0 {
            ((1..=10).collect(), format!("{TRACES}/down-heavy-pdo"))
        } else {
            (vec![1, 1, 3, 4, 4, 4, 9, 12], bursty.display().to_string())
        };
        let with_offsets = seed % 4 >= 2;
        let spec = format!(
            "[both]\noverhead = \"4B\"\n[down.trace]\ncellreplay = {{ train = \"{TRACES}/down-delay-light-pdo\", heavy = \"{heavy_file}\"{} }}\n",
            if with_offsets {
                format!(", latency_offset = \"{TRACES}/latency-offset-down\"")
            } else {
                String::new()
            }
        );
        let mut r = lasthop_core::Seeds::new(seed, 0).stream("test.cellreplay");
        let mut at = vec![];
        let mut t = 1i64;
        while at.len() < 400 {
            t += r.random_range(1..60);
            for _ in 0..r.random_range(1..9) {
                let len = *[40i64, 100, 396, 576, 1000, 1396, 1396]
                    .get(r.random_range(0..7))
                    .unwrap();
                at.push((t, len + 4));
            }
        }
        let offs: &[f64] = if with_offsets { &offsets } else { &[] };
        let want = cellreplay_departures(&trains, &heavy, offs, &at);
        let push: Vec<(u64, usize)> = at
            .iter()
            .map(|&(t, b)| (t as u64 * MS, (b - 4) as usize))
            .collect();
        let got = releases(&spec, &push);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if *g != *w as f64 {
                for j in i.saturating_sub(8)..(i + 3).min(at.len()) {
                    eprintln!("{j}: {:?} got {} want {}", at[j], got[j], want[j]);
                }
            }
            assert_eq!(*g, *w as f64, "seed {seed}, packet {i} ({:?})", at[i]);
            compared += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(compared >= 40 * 400);
}

#[test]
fn a_heavy_trace_that_does_not_loop_ends_the_heavy_path_only() {
    // `loop = false` (CellReplay's --once): the heavy trace ends at 10 ms. A burst of six at
    // 0 ms: four light (20, 25, 30, 35 ms); the fifth and sixth go to the heavy queue at 35 ms,
    // after the trace's last opportunity, and are never sent; nothing behind them either.
    let text = spec("").replace("[down.trace]\n", "[down.trace]\nloop = false\n");
    let mut l = link(&text);
    for _ in 0..6 {
        l.push(Time::ZERO, Dir::Down, udp(1396, 5000, 0));
    }
    let (out, _) = drain(&mut l);
    let at: Vec<f64> = out.iter().map(|o| o.1 .0 as f64 / MS as f64).collect();
    assert_eq!(at, [20.0, 25.0, 30.0, 35.0]);
    // With the trace looping they leave at 36 and 37.
    assert_eq!(
        releases(&spec(""), &[(0, 1396); 6]),
        [20.0, 25.0, 30.0, 35.0, 36.0, 37.0]
    );
}
