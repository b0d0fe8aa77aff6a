//! Error models (`[down.loss]` etc.): the fixed pattern, uniform loss, a model installed by
//! hand, how a model combines with the states' handling, and the spec's errors.
//!
//! The link is seed 000's: 64 kbit/s, so a 576-byte packet takes 72 ms; 300 ms propagation. A
//! burst of packets pushed at 0 therefore reaches the far end at 300 + 72·k ms for the k-th.

use lasthop_core::rng::Stream;
use lasthop_core::{Packet, Seeds, Time};
use lasthop_link::{Attempt, Cause, Dir, ErrorModel, Event, EventKind, Link, LinkSpec, LogLevel};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> Time {
    Time(n * MS)
}

fn udp(len: usize, port: u16) -> Packet {
    let b = etherparse::PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64).udp(port, 9);
    let mut v = Vec::new();
    b.write(&mut v, &vec![0u8; len - 28]).unwrap();
    Packet::from_bytes(v)
}

fn link(spec: &str, seed: u64) -> Link {
    let cfg = LinkSpec::config_from_str(spec).unwrap_or_else(|e| panic!("{e}"));
    Link::new(cfg, Seeds::new(seed, 0), LogLevel::All)
}

fn run(l: &mut Link) -> (Vec<(u64, Time)>, Vec<Event>) {
    let (mut out, mut ev) = (vec![], vec![]);
    loop {
        while let Some(o) = l.poll_output() {
            out.push((o.id, o.at));
        }
        let Some(t) = l.poll_timeout() else { break };
        l.handle_timeout(t);
    }
    l.drain_events(&mut ev);
    (out, ev)
}

fn drops(ev: &[Event]) -> Vec<(u64, Time)> {
    ev.iter()
        .filter(|e| e.kind == EventKind::Drop(Cause::Error))
        .map(|e| (e.packet.unwrap().id, e.time))
        .collect()
}

const BASE: &str = r#"
[both]
rate = "64kbit"
delay = "300ms"
"#;

#[test]
fn pattern_3_and_7_of_every_10_drops_packets_3_7_13_17_23_of_25() {
    let spec = format!("{BASE}[down.loss]\nmodel = \"pattern\"\ndrop = [7, 3]\nevery = 10\n");
    let mut l = link(&spec, 1);
    let ids: Vec<u64> = (0..25)
        .map(|i| l.push(Time::ZERO, Dir::Down, udp(576, i)))
        .collect();
    let (out, ev) = run(&mut l);
    // Packet k (1-based) reaches the far end at 300 + 72 k ms.
    let want: Vec<(u64, Time)> = [3u64, 7, 13, 17, 23]
        .iter()
        .map(|&k| (ids[k as usize - 1], ms(300 + 72 * k)))
        .collect();
    assert_eq!(drops(&ev), want);
    assert_eq!(out.len(), 20);
    assert_eq!(l.stats(Dir::Down).drops_error, 5);
    // The other direction has no loss model: nothing lost there.
    for i in 0..25 {
        l.push(ms(5000), Dir::Up, udp(576, i));
    }
    let (out, ev) = run(&mut l);
    assert_eq!((out.len(), drops(&ev).len()), (25, 0));
}

#[test]
fn a_failed_attempt_keeps_the_states_handling_and_a_retry_counts_as_an_attempt() {
    // Pattern: attempt 1 of every 2 fails. With ARQ (700 ms per retry), the first transmission
    // fails at 372 ms, the retry is attempt 2 and passes: released at 372 + 700 = 1072 ms.
    let spec = format!(
        "{BASE}[down]\nhandling = \"arq\"\nerror_delay = \"700ms\"\nretries = 3\n[down.loss]\nmodel = \"pattern\"\ndrop = [1]\nevery = 2\n"
    );
    let mut l = link(&spec, 1);
    let id = l.push(Time::ZERO, Dir::Down, udp(576, 1));
    let (out, ev) = run(&mut l);
    assert_eq!(out, [(id, ms(1072))]);
    let errors: Vec<(Time, u32, Option<u64>)> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Error(n) => Some((e.time, n, e.delay_ns)),
            _ => None,
        })
        .collect();
    assert_eq!(errors, [(ms(372), 1, Some(700 * MS))]);
}

/// Pushes `n` packets 1 µs apart through an unlimited link and returns how many were lost.
fn uniform_losses(p: f64, n: u64, seed: u64) -> usize {
    let spec = format!(
        "[both]\nrate = \"unlimited\"\n[down.loss]\nmodel = \"uniform\"\nprobability = {p}\n"
    );
    let mut l = link(&spec, seed);
    for i in 0..n {
        l.push(Time(i * 1000), Dir::Down, udp(100, 1));
    }
    let (out, ev) = run(&mut l);
    assert_eq!(out.len() + drops(&ev).len(), n as usize);
    drops(&ev).len()
}

#[test]
fn uniform_loss_extremes_and_a_binomial_count() {
    assert_eq!(uniform_losses(0.0, 1000, 1), 0);
    assert_eq!(uniform_losses(1.0, 1000, 1), 1000);
    // 10 000 packets at p = 0.01: mean 100, standard deviation sqrt(10 000 · 0.01 · 0.99) = 9.95;
    // every seed's count lies within 5 standard deviations (50..150).
    for seed in 1..=5 {
        let k = uniform_losses(0.01, 10_000, seed);
        assert!((50..=150).contains(&k), "seed {seed}: {k} losses");
    }
    // Repeatable: the count is a function of the seed.
    assert_eq!(
        uniform_losses(0.01, 10_000, 3),
        uniform_losses(0.01, 10_000, 3)
    );
}

#[test]
fn uniform_loss_draws_from_its_own_stream() {
    // The `link.errors.down` stream is not touched by the uniform model: the error delays the ARQ
    // handling draws from it are the same as those of a state model failing every packet.
    let arq = "[down]\nhandling = \"arq\"\nerror_delay = \"uniform(100ms, 900ms)\"\nretries = 1\n";
    let delays = |spec: String| {
        let mut l = link(&spec, 7);
        for i in 0..20 {
            l.push(Time::ZERO, Dir::Down, udp(576, i));
        }
        let (_, ev) = run(&mut l);
        ev.iter()
            .filter(|e| e.kind == EventKind::Error(1))
            .map(|e| e.delay_ns)
            .collect::<Vec<_>>()
    };
    let uniform = delays(format!(
        "{BASE}{arq}[down.loss]\nmodel = \"uniform\"\nprobability = 1.0\n"
    ));
    let states = delays(format!("{BASE}{arq}error = 1.0\n"));
    assert_eq!(uniform.len(), 20);
    assert_eq!(uniform, states);
}

/// A model installed by hand: fails the first attempt of packets whose UDP source port is odd.
struct OddPorts;

impl ErrorModel for OddPorts {
    fn fails(&mut self, a: &Attempt<'_>, _: &mut Stream) -> bool {
        a.attempt == 1 && a.packet.flow.sport % 2 == 1
    }
}

#[test]
fn a_model_installed_by_hand_decides_per_attempt() {
    let mut l = link(BASE, 1);
    l.set_error_model(Dir::Down, Box::new(OddPorts));
    let ids: Vec<u64> = (1..=4)
        .map(|port| l.push(Time::ZERO, Dir::Down, udp(576, port)))
        .collect();
    let (out, ev) = run(&mut l);
    // Ports 1 and 3 (packets 1 and 3) are lost at 372 and 516 ms; 2 and 4 leave at 444, 588 ms.
    assert_eq!(drops(&ev), [(ids[0], ms(372)), (ids[2], ms(516))]);
    assert_eq!(out, [(ids[1], ms(444)), (ids[3], ms(588))]);
}

fn error(text: &str) -> String {
    match LinkSpec::config_from_str(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(text: &str, wants: &[&str]) {
    let e = error(text);
    for w in wants {
        assert!(e.contains(w), "error {e:?} does not mention {w:?}");
    }
}

#[test]
fn bad_loss_specs_name_the_key_the_value_and_what_is_allowed() {
    assert_mentions(
        "[down.loss]\nmodel = \"gilbert\"\n",
        &[
            "down.loss.model",
            "gilbert",
            "\"states\", \"uniform\", \"pattern\"",
        ],
    );
    assert_mentions(
        "[both.loss]\nmodel = \"uniform\"\nprobability = 1.5\n",
        &["both.loss.probability", "1.5", "0..1"],
    );
    assert_mentions(
        "[up.loss]\nmodel = \"uniform\"\n",
        &["up.loss.probability", "missing", "probability = 0.01"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"pattern\"\ndrop = [3, 11]\nevery = 10\n",
        &["down.loss.drop", "11", "1..=10"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"pattern\"\ndrop = [0]\nevery = 10\n",
        &["down.loss.drop", "packet 0", "1..=10"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"pattern\"\ndrop = [1]\nevery = 0\n",
        &["down.loss.every", "0", "1 or more"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"pattern\"\nevery = 10\n",
        &["down.loss.drop", "missing"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"pattern\"\ndrop = [2, 2]\nevery = 10\n",
        &["down.loss.drop", "2", "twice"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"uniform\"\nprobability = 0.1\nevery = 10\n",
        &["down.loss.every", "pattern"],
    );
    assert_mentions(
        "[down.loss]\nmodel = \"uniform\"\nprobabilty = 0.1\n",
        &["down.loss", "probabilty", "probability"],
    );
    // The loss model replaces `error`: both set in a direction is refused, naming the state.
    assert_mentions(
        "[down]\nerror = 0.1\n[down.loss]\nmodel = \"uniform\"\nprobability = 0.1\n",
        &["down.loss.model", "error", "0.1", "remove one"],
    );
    assert_mentions(
        "initial_state = \"bad\"\n[states.bad]\nboth = { error = 0.5 }\n[both.loss]\nmodel = \"pattern\"\ndrop = [1]\nevery = 2\n",
        &["both.loss.model", "0.5", "\"bad\""],
    );
    // `both` applies to each direction unless it sets its own.
    let cfg = LinkSpec::config_from_str(
        "[both.loss]\nmodel = \"uniform\"\nprobability = 0.25\n[up.loss]\nmodel = \"states\"\n",
    )
    .unwrap();
    assert_eq!(
        cfg.dirs[Dir::Down.index()].loss,
        lasthop_link::LossModel::Uniform { probability: 0.25 }
    );
    assert_eq!(
        cfg.dirs[Dir::Up.index()].loss,
        lasthop_link::LossModel::States
    );
}

#[test]
fn the_shipped_uniform_loss_example_loses_1pct_downstream() {
    let cfg = LinkSpec::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/links/uniform-loss-1pct.toml"
    ))
    .unwrap();
    let down = &cfg.dirs[Dir::Down.index()];
    assert_eq!(
        down.loss,
        lasthop_link::LossModel::Uniform { probability: 0.01 }
    );
    assert_eq!(
        down.per_state[0].base_rate.tx_time(576),
        lasthop_core::Dur::from_millis(72)
    );
    assert_eq!(
        cfg.dirs[Dir::Up.index()].loss,
        lasthop_link::LossModel::States
    );
    assert!(cfg
        .describe()
        .contains("each packet lost with probability 0.01"));
}
