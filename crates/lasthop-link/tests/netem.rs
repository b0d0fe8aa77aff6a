//! netem's impairments: the Gilbert–Elliott and 4-state loss models against their stationary
//! figures, losses replayed from files, jitter with correlation (and whether it reorders),
//! reordering with a gap, duplication, each event with its own cause; and common random
//! numbers: adding an impairment leaves every other draw of a replication where it was.

mod common;

use common::{drain, link, ms, udp, MS};
use lasthop_core::{Seeds, Time};
use lasthop_link::{Cause, Dir, Event, EventKind, Link, LinkSpec, LogLevel};

/// Which of `n` packets (1 µs apart, unlimited link) are lost, in order.
fn lost(spec: &str, n: u64, seed: u64) -> Vec<bool> {
    let cfg = LinkSpec::config_from_str(spec).unwrap_or_else(|e| panic!("{e}"));
    let mut l = Link::new(cfg, Seeds::new(seed, 0), LogLevel::Drops);
    let first = l.push(Time::ZERO, Dir::Down, udp(100, 1, 0));
    for i in 1..n {
        l.push(Time(i * 1000), Dir::Down, udp(100, 1, 0));
    }
    let (out, _) = drain(&mut l);
    let mut got = vec![true; n as usize];
    for (id, _) in out {
        got[(id - first) as usize] = false;
    }
    got
}

fn rate(v: &[bool]) -> f64 {
    v.iter().filter(|&&x| x).count() as f64 / v.len() as f64
}

/// Mean length of the runs of losses.
fn burst(v: &[bool]) -> f64 {
    let runs = v.windows(2).filter(|w| !w[0] && w[1]).count() + usize::from(v[0]);
    v.iter().filter(|&&x| x).count() as f64 / runs as f64
}

#[test]
fn gilbert_elliott_loses_at_its_stationary_rate_in_bursts() {
    let n = 400_000;
    // Simple Gilbert: p 0.01, r 0.25: bad a fraction p/(p+r) = 0.03846 of the time, every
    // packet lost there; bursts of mean 1/r = 4.
    let spec = "[both]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"gilbert_elliott\"\np = 0.01\nr = 0.25\n";
    let v = lost(spec, n, 1);
    assert!((rate(&v) - 0.03846).abs() < 0.003, "{}", rate(&v));
    assert!((burst(&v) - 4.0).abs() < 0.2, "{}", burst(&v));
    // Gilbert–Elliott: losses in both states, 1 - h = 0.5, 1 - k = 0.02: 0.03846·0.5 +
    // 0.96154·0.02 = 0.03846.
    let spec = "[both]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"gilbert_elliott\"\np = 0.01\nr = 0.25\nloss_bad = 0.5\nloss_good = 0.02\n";
    let v = lost(spec, n, 2);
    assert!((rate(&v) - 0.03846).abs() < 0.003, "{}", rate(&v));
    // Only p: Bernoulli (r = 1 by default: one-packet bad states, each lost).
    let spec = "[both]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"gilbert_elliott\"\np = 0.05\n";
    let v = lost(spec, n, 3);
    assert!((rate(&v) - 0.05).abs() < 0.002 && (burst(&v) - 1.0 / 0.95).abs() < 0.02);
}

/// The stationary loss of the 4-state chain, by iterating its transition matrix (states 1..4;
/// lost in 3 and 4), independently of the model's code.
fn four_state_loss(p13: f64, p31: f64, p32: f64, p23: f64, p14: f64) -> f64 {
    let m = [
        [1.0 - p13 - p14, 0.0, p13, p14],
        [0.0, 1.0 - p23, p23, 0.0],
        [p31, p32, 1.0 - p31 - p32, 0.0],
        [1.0, 0.0, 0.0, 0.0],
    ];
    let mut pi = [1.0, 0.0, 0.0, 0.0];
    for _ in 0..100_000 {
        let mut next = [0.0; 4];
        for (i, row) in m.iter().enumerate() {
            for j in 0..4 {
                next[j] += pi[i] * row[j];
            }
        }
        pi = next;
    }
    pi[2] + pi[3]
}

#[test]
fn the_4_state_model_loses_at_its_stationary_rate() {
    let n = 400_000;
    let spec = "[both]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"4state\"\np13 = 0.02\np31 = 0.4\np32 = 0.3\np23 = 0.2\np14 = 0.01\n";
    let want = four_state_loss(0.02, 0.4, 0.3, 0.2, 0.01);
    let v = lost(spec, n, 1);
    assert!((rate(&v) - want).abs() < 0.004, "{} vs {want}", rate(&v));
    // Only p13: Bernoulli.
    let v = lost(
        "[both]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"4state\"\np13 = 0.05\n",
        n,
        2,
    );
    assert!((rate(&v) - 0.05).abs() < 0.002, "{}", rate(&v));
    let e = LinkSpec::config_from_str("[down.loss]\nmodel = \"4state\"\np13 = 0.7\np14 = 0.5\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("key `down.loss.p13`: p13 + p14 = 1.2"), "{e}");
}

#[test]
fn loss_traces_replay_lost_attempts_and_episodes() {
    let dir = std::env::temp_dir().join(format!("lasthop-netem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lost.txt"), "# attempts\n2\n5\n").unwrap();
    std::fs::write(dir.join("ep.txt"), "1s 2s\n3 3.5\n").unwrap();
    std::fs::write(dir.join("bad.txt"), "2\n2\n").unwrap();
    let load = |spec: &str| -> Result<Link, String> {
        let p = dir.join("l.toml");
        std::fs::write(&p, spec).unwrap();
        LinkSpec::load(&p)
            .map(|c| Link::new(c, Seeds::new(1, 0), LogLevel::All))
            .map_err(|e| e.to_string())
    };
    // Attempts 2 and 5 of the direction fail; the `error` rows name the trace.
    let mut l =
        load("[down]\nrate = \"64kbit\"\n[down.loss]\nmodel = \"trace\"\nlost = \"lost.txt\"\n")
            .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<u64> = (0..6)
        .map(|_| l.push(Time::ZERO, Dir::Down, udp(576, 1, 0)))
        .collect();
    let (out, ev) = drain(&mut l);
    let ok: Vec<u64> = out.iter().map(|o| o.0).collect();
    assert_eq!(ok, [ids[0], ids[2], ids[3], ids[5]]);
    let errors: Vec<(u64, Option<Cause>)> = ev
        .iter()
        .filter(|e| e.kind.name() == "error")
        .map(|e| (e.packet.unwrap().id, e.cause()))
        .collect();
    assert_eq!(
        errors,
        [
            (ids[1], Some(Cause::LossTrace)),
            (ids[4], Some(Cause::LossTrace))
        ]
    );
    // Episodes: what reaches the far end in [1 s, 2 s) or [3 s, 3.5 s) is lost.
    let mut l = load(
        "[down]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"trace\"\nepisodes = \"ep.txt\"\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let at = [500, 1000, 1999, 2000, 3200, 3500];
    let ids: Vec<u64> = at
        .iter()
        .map(|&t| {
            while let Some(d) = l.poll_timeout().filter(|&d| d <= ms(t)) {
                l.handle_timeout(d);
            }
            l.push(ms(t), Dir::Down, udp(100, 1, 0))
        })
        .collect();
    let (out, _) = drain(&mut l);
    let ok: Vec<u64> = out.iter().map(|o| o.0).collect();
    assert_eq!(ok, [ids[0], ids[3], ids[5]]);
    let e = load("[down.loss]\nmodel = \"trace\"\nlost = \"bad.txt\"\n")
        .err()
        .unwrap();
    assert!(
        e.contains("key `down.loss.lost`: \"bad.txt\" line 2: 2 does not come after 2"),
        "{e}"
    );
    let e = load("[down.loss]\nmodel = \"trace\"\n").err().unwrap();
    assert!(
        e.contains("key `down.loss`: model = \"trace\" needs one of"),
        "{e}"
    );
    let e = load("[down.loss]\nmodel = \"uniform\"\nprobability = 0.1\nlost = \"lost.txt\"\n")
        .err()
        .unwrap();
    assert!(
        e.contains("key `down.loss.lost`: `lost` belongs to model = \"trace\""),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each packet's propagation delay (release − push on an unlimited link), in push order, and
/// whether the releases came out of push order.
fn delays(spec: &str, n: u64) -> (Vec<f64>, bool) {
    let mut l = link(spec);
    let ids: Vec<u64> = (0..n)
        .map(|i| l.push(ms(i), Dir::Down, udp(100, 1, 0)))
        .collect();
    let (out, ev) = drain(&mut l);
    let mut d = vec![0.0; n as usize];
    for &(id, at) in &out {
        let i = (id - ids[0]) as usize;
        d[i] = (at.as_nanos() - i as u64 * MS) as f64 / 1e6;
    }
    assert!(ev
        .iter()
        .filter(|e| e.kind == EventKind::Jitter)
        .all(|e| e.cause() == Some(Cause::Jitter)));
    let reordered = out.windows(2).any(|w| w[1].0 < w[0].0);
    (d, reordered)
}

fn mean_sd_lag1(v: &[f64]) -> (f64, f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    let cov = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt(), cov / var)
}

#[test]
fn jitter_has_its_spread_its_correlation_and_reorders_only_out_of_order_links() {
    let n = 50_000;
    let base = "[down]\nrate = \"unlimited\"\ndelay = \"100ms\"\n";
    // Uniform in [90, 110) ms: sd 10/√3; no correlation.
    let (d, reordered) = delays(
        &format!("{base}in_order = false\n[down.netem]\njitter = \"10ms\"\n"),
        n,
    );
    let (m, sd, r) = mean_sd_lag1(&d);
    assert!(d.iter().all(|&x| (90.0..=110.0).contains(&x)));
    assert!(
        (m - 100.0).abs() < 0.1 && (sd - 5.7735).abs() < 0.06 && r.abs() < 0.02,
        "{m} {sd} {r}"
    );
    assert!(
        reordered,
        "1 ms apart with ±10 ms jitter, packets pass each other"
    );
    // Correlation 0.75: netem's (1 − ρ)u + ρ·last is an AR(1) of lag-1 correlation ρ.
    let (d, _) = delays(
        &format!(
            "{base}in_order = false\n[down.netem]\njitter = \"10ms\"\njitter_correlation = 0.75\n"
        ),
        n,
    );
    let (m, _, r) = mean_sd_lag1(&d);
    assert!(
        (m - 100.0).abs() < 0.3 && (r - 0.75).abs() < 0.02,
        "{m} {r}"
    );
    // Normal, sd 10 ms.
    let (d, _) = delays(
        &format!(
            "{base}in_order = false\n[down.netem]\njitter = \"10ms\"\ndistribution = \"normal\"\n"
        ),
        n,
    );
    let (m, sd, _) = mean_sd_lag1(&d);
    assert!(
        (m - 100.0).abs() < 0.2 && (sd - 10.0).abs() < 0.15,
        "{m} {sd}"
    );
    // In order (the default): the LRB keeps link order.
    let (_, reordered) = delays(&format!("{base}[down.netem]\njitter = \"10ms\"\n"), 5_000);
    assert!(!reordered);
}

#[test]
fn reordering_with_a_gap_sends_every_fifth_packet_at_once() {
    // gap 5, reorder 1: packets 5, 10, 15, ... skip the 100 ms delay.
    let spec = "[down]\nrate = \"unlimited\"\ndelay = \"100ms\"\nin_order = false\n[down.netem]\nreorder = 1.0\ngap = 5\n";
    let (d, reordered) = delays(spec, 20);
    let want: Vec<f64> = (1..=20)
        .map(|k| if k % 5 == 0 { 0.0 } else { 100.0 })
        .collect();
    assert_eq!(d, want);
    assert!(reordered);
    // Probability 0.25 without a gap: a quarter of the packets.
    let (d, _) = delays(
        "[down]\nrate = \"unlimited\"\ndelay = \"100ms\"\nin_order = false\n[down.netem]\nreorder = 0.25\n",
        40_000,
    );
    let share = d.iter().filter(|&&x| x == 0.0).count() as f64 / d.len() as f64;
    assert!((share - 0.25).abs() < 0.01, "{share}");
    for (spec, key, what) in [
        (
            "[down]\ndelay = \"1s\"\n[down.netem]\nreorder = 0.1\n",
            "down.netem.reorder",
            "in_order = false",
        ),
        (
            "[down]\nin_order = false\n[down.netem]\nreorder = 0.1\n",
            "down.netem.reorder",
            "give `delay`",
        ),
        (
            "[down.netem]\ngap = 3\n",
            "down.netem.gap",
            "qualifies `reorder`",
        ),
        (
            "[down.netem]\njitter_correlation = 0.3\n",
            "down.netem.jitter_correlation",
            "qualifies `jitter`",
        ),
        (
            "[down.netem]\nduplicate = 1.5\n",
            "down.netem.duplicate",
            "outside 0..1",
        ),
    ] {
        let e = LinkSpec::config_from_str(spec).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("key `{key}`")) && e.contains(what),
            "{spec}: {e}"
        );
    }
}

#[test]
fn duplication_sends_a_copy_behind_the_packet() {
    let mut l = link("[down]\nrate = \"64kbit\"\n[down.netem]\nduplicate = 1.0\n");
    let a = l.push(Time::ZERO, Dir::Down, udp(576, 1, 0));
    let (out, ev) = drain(&mut l);
    // The copy is the next id and follows the packet: 72 and 144 ms.
    assert_eq!(out, [(a, ms(72)), (a + 1, ms(144))]);
    let dup: Vec<_> = ev
        .iter()
        .filter(|e| e.kind == EventKind::Duplicate)
        .collect();
    assert_eq!(dup.len(), 1);
    assert_eq!(
        (dup[0].packet.unwrap().id, dup[0].cause()),
        (a + 1, Some(Cause::Duplicate))
    );
    assert_eq!(l.stats(Dir::Down).duplicated, 1);
    assert_eq!(l.stats(Dir::Down).arrived, 2);
}

/// What every random stream of a run decided: the state timeline, the outcome of each error
/// test and each extra delay in the order they were drawn, and which packets (by their place
/// among the pushed ones) the errors hit and which were released.
#[derive(Debug, PartialEq)]
struct Draws {
    states: Vec<(Time, String)>,
    outcomes: Vec<bool>,
    extra: Vec<u64>,
    errors: Vec<u64>,
    released: Vec<u64>,
}

fn draws(extra_keys: &str) -> Draws {
    // A two-state chain, errors (drop) downstream in both states at 0.2, random extra delays;
    // a packet each way every 500 ms on a fast link, so that no impairment below changes which
    // packets meet.
    let spec = format!(
        "initial_state = \"good\"\n[both]\nrate = \"1Mbit\"\ndelay = \"50ms\"\nextra_delay = \"uniform(0ms, 20ms)\"\nin_order = false\n{extra_keys}\n[states.good]\nduration = \"exponential(3s)\"\nnext = \"bad\"\ndown = {{ error = 0.2 }}\n[states.bad]\nduration = \"uniform(1s, 2s)\"\nnext = \"good\"\ndown = {{ error = 0.2 }}\n"
    );
    let cfg = LinkSpec::config_from_str(&spec).unwrap_or_else(|e| panic!("{e}"));
    let mut l = Link::new(cfg, Seeds::new(9, 3), LogLevel::All);
    for i in 0..400 {
        let t = ms(500 * i);
        while let Some(d) = l.poll_timeout().filter(|&d| d <= t) {
            l.handle_timeout(d);
        }
        l.push(t, Dir::Down, udp(500, 1, 0));
        l.push(t, Dir::Up, udp(40, 2, 0));
    }
    let end = ms(500 * 400 + 10_000);
    while let Some(d) = l.poll_timeout().filter(|&d| d <= end) {
        l.handle_timeout(d);
    }
    let mut ev = vec![];
    l.drain_events(&mut ev);
    let down: Vec<&Event> = ev.iter().filter(|e| e.dir == Some(Dir::Down)).collect();
    // A packet's place among the pushed ones: ids count the copies of `duplicate` too.
    let copies: Vec<u64> = ev
        .iter()
        .filter(|e| e.kind == EventKind::Duplicate)
        .map(|e| e.packet.unwrap().id)
        .collect();
    let place = |id: u64| {
        (!copies.contains(&id)).then(|| id - copies.iter().filter(|&&c| c < id).count() as u64)
    };
    let failed: Vec<u64> = down
        .iter()
        .filter(|e| e.kind == EventKind::Error(1))
        .map(|e| e.packet.unwrap().id)
        .collect();
    Draws {
        states: ev
            .iter()
            .filter(|e| e.kind == EventKind::State)
            .map(|e| (e.time, e.state.as_deref().unwrap().to_string()))
            .filter(|s| s.0 <= ms(200_000))
            .collect(),
        // In the order the tests were drawn: at the far end, where a packet that passes is
        // released at once (in_order = false; or dropped by the output dropper) and one that
        // fails is dropped.
        outcomes: down
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Error(1) | EventKind::Release | EventKind::Drop(Cause::Output)
                )
            })
            .map(|e| e.kind == EventKind::Error(1))
            .collect(),
        extra: down
            .iter()
            .filter(|e| e.kind == EventKind::Delay)
            .map(|e| e.delay_ns.unwrap())
            .collect(),
        errors: failed.iter().filter_map(|&id| place(id)).collect(),
        released: down
            .iter()
            .filter(|e| e.kind == EventKind::Release)
            .filter_map(|e| place(e.packet.unwrap().id))
            .collect(),
    }
}

#[test]
fn adding_an_impairment_moves_no_other_draw() {
    let base = draws("");
    assert!(base.errors.len() > 50 && base.states.len() > 40 && base.extra.len() > 380);
    for added in [
        "[down.netem]\njitter = \"5ms\"\njitter_correlation = 0.5\n",
        "[down.netem]\nreorder = 0.3\n",
        "[down.netem]\nduplicate = 0.1\n",
        "[up.loss]\nmodel = \"gilbert_elliott\"\np = 0.1\nr = 0.5\n",
        "[up.loss]\nmodel = \"4state\"\np13 = 0.1\n",
        "[down]\nallocation_delay = \"uniform(1ms, 30ms)\"\n",
        "[down]\navailable_rate = \"uniform(0.5, 1)\"\nrate_change_interval = \"exponential(2s)\"\n",
        "[down]\noutput_dropper = 0.1\n",
        "[down.background]\nrate = \"50kbit\"\npacket = \"100B\"\n",
    ] {
        let with = draws(added);
        assert_eq!(with.states, base.states, "{added}: the state timeline");
        if added.contains("duplicate") {
            // The copies take their own error tests and extra delays: the draws are the same
            // values in the same order, spread over more packets.
            let n = base.outcomes.len();
            assert_eq!(with.outcomes[..n], base.outcomes[..], "{added}: the error draws");
            assert_eq!(with.extra[..base.extra.len()], base.extra[..], "{added}: the delays");
            continue;
        }
        assert_eq!(with.outcomes, base.outcomes, "{added}: the error draws");
        assert_eq!(with.errors, base.errors, "{added}: the packets the errors hit");
        assert_eq!(with.extra, base.extra, "{added}: each packet's extra delay");
        if added.contains("output_dropper") {
            // Released: the same packets but those the dropper took.
            assert!(with.released.len() < base.released.len());
            assert!(with.released.iter().all(|id| base.released.contains(id)));
        } else {
            let (mut a, mut b) = (with.released.clone(), base.released.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{added}: the packets released");
        }
    }
}
