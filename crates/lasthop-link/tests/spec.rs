//! Spec loading: every shipped example loads; every kind of bad input is refused with a message
//! naming the key, the value and what is allowed; random specs and random packets never panic.

use lasthop_core::{Dur, Packet, Seeds, Time};
use lasthop_link::{Dir, Link, LinkSpec, LogLevel};
use proptest::prelude::*;

fn examples() -> Vec<std::path::PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/links");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn shipped_seed_links_load_with_the_seeds_numbers() {
    let files = examples();
    assert!(files.len() >= 11, "{files:?}");
    for f in &files {
        LinkSpec::load(f).unwrap_or_else(|e| panic!("{e}"));
    }
    let dir = |n: &str| {
        LinkSpec::load(format!(
            "{}/../../examples/links/{n}.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    let e0 = dir("seed000-e0");
    let down = &e0.dirs[Dir::Down.index()];
    assert_eq!(
        down.per_state[0].base_rate.tx_time(576),
        Dur::from_millis(72)
    );
    assert_eq!(down.per_state[0].delay, Dur::from_millis(300));
    assert_eq!(
        (down.queue.packets, down.lsb, down.lrb),
        (Some(20), Some(9600), Some(9600))
    );
    assert_eq!(e0.dirs[Dir::Up.index()].queue.packets, Some(1));
    let high = dir("seed002-high");
    let names: Vec<&str> = high.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["master", "good", "bad"]);
    let bad = &high.dirs[Dir::Up.index()].per_state[2];
    assert_eq!(
        (bad.error, bad.drop_threshold),
        (0.63, Some(Dur::from_millis(2101)))
    );
    let gsm = dir("seed001-buf7");
    let d = &gsm.dirs[Dir::Down.index()];
    // 296 B + 7 B PPP at 9600 bit/s: 252.5 ms; the 1220 B buffers hold four such packets.
    assert_eq!(
        d.per_state[0]
            .base_rate
            .tx_time(296 + u64::from(d.overhead)),
        Dur::from_micros(252_500)
    );
    assert_eq!(d.lsb, Some(1220));
    assert_eq!(gsm.dirs[Dir::Up.index()].queue.packets, None);
}

/// The error for `text`, as `lasthop check` would print it.
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
fn bad_specs_name_the_key_the_value_and_what_is_allowed() {
    // Unknown keys, with the allowed ones listed and the line.
    assert_mentions(
        "[down]\nrat = \"64kbit\"\n",
        &["down", "rat", "expected one of", "rate", "line 2"],
    );
    assert_mentions("colour = 1\n", &["colour"]);
    // Bad units and bare numbers.
    assert_mentions(
        "[down]\nrate = \"64kbps\"\n",
        &["down.rate", "64kbps", "kbit"],
    );
    assert_mentions(
        "[both]\ndelay = 300\n",
        &["both.delay", "300", "write the unit", "ms"],
    );
    assert_mentions(
        "[up]\nlsb = \"9600 bytes\"\n",
        &["up.lsb", "9600 bytes", "KiB"],
    );
    // Negative and impossible values.
    assert_mentions(
        "[down.queue]\npackets = -1\n",
        &["down.queue.packets", "-1"],
    );
    assert_mentions("[down]\nlsb = \"0B\"\n", &["down.lsb", "0B"]);
    assert_mentions("mtu = \"40B\"\n", &["mtu", "40B", "68B..65535B"]);
    assert_mentions(
        "mtu = \"576B\"\n[both]\nlsb = \"500B\"\n",
        &["down.lsb", "500B", "576B"],
    );
    // Probabilities outside 0..1.
    assert_mentions("[down]\nerror = 1.5\n", &["down.error", "1.5", "0..1"]);
    assert_mentions(
        "[[down.delays]]\nprobability = -0.1\ndelay = \"6s\"\n",
        &["down.delays[0].probability", "-0.1"],
    );
    // RED thresholds in the wrong order, and RED without its parameters.
    assert_mentions(
        "[down.queue]\npolicy = \"red\"\nred = { min_th = 9.0, max_th = 7.0, max_p = 0.1, w_q = 0.002 }\n",
        &["down.queue.red.min_th", "9", "below max_th (7)"],
    );
    assert_mentions(
        "[down.queue]\npolicy = \"red\"\n",
        &["down.queue.red", "min_th"],
    );
    assert_mentions(
        "[down.queue]\npolicy = \"fifo\"\n",
        &["down.queue.policy", "fifo", "droptail", "red"],
    );
    assert_mentions(
        "[down]\nlsb_admit = \"always\"\n",
        &["down.lsb_admit", "always", "fits", "below"],
    );
    // States that do not exist, probabilities that do not add up, missing pieces.
    let two = "[states.good]\nduration = \"1s\"\nnext = \"bad\"\n[states.bad]\nduration = \"1s\"\nnext = \"good\"\n";
    assert_mentions(
        &format!("initial_state = \"ugly\"\n{two}"),
        &["initial_state", "ugly", "\"good\", \"bad\""],
    );
    assert_mentions(two, &["initial_state", "missing"]);
    assert_mentions(
        &format!("initial_state = {{ good = 0.5, bad = 0.6 }}\n{two}"),
        &["initial_state", "1.1", "add up to 1"],
    );
    assert_mentions(
        "initial_state = \"a\"\n[states.a]\nduration = \"1s\"\nnext = \"b\"\n",
        &["states.a.next", "\"b\""],
    );
    assert_mentions(
        "initial_state = \"a\"\n[states.a]\nduration = \"1s\"\n",
        &["states.a.next", "missing"],
    );
    assert_mentions(
        "initial_state = \"a\"\n[states.a]\nduration = \"uniform(2s, 1s)\"\n",
        &["states.a.duration", "uniform(2s, 1s)", "MIN is above MAX"],
    );
    // ARQ without its delay or its limit, in a state or in the base link.
    assert_mentions(
        "initial_state = \"bad\"\n[states.bad]\nboth = { error = 0.6, handling = \"arq\", retries = 1 }\n",
        &["states.bad.both.error_delay", "missing", "arq"],
    );
    assert_mentions(
        "[up]\nerror = 0.1\nhandling = \"arq\"\nerror_delay = \"700ms\"\n",
        &["up.retries", "drop_threshold"],
    );
    assert_mentions(
        "[[down.delays]]\nnth = 0\ndelay = \"6s\"\n",
        &["down.delays[0].nth", "0:", "from 1", "allowed 1 or more"],
    );
    assert_mentions("[down]\nrate = \"64kbit\"\nschedule = [{ at = \"2s\", rate = \"1kbit\" }, { at = \"1s\", rate = \"2kbit\" }]\n", &["down.schedule", "increasing"]);
    // Zero where zero means nothing: say so, and what is allowed.
    assert_mentions(
        "[down]\nrate = \"0kbit\"\n",
        &["down.rate", "0kbit", "zero is not allowed", "\"unlimited\""],
    );
    assert_mentions(
        "[both]\ndelay = \"99999999999999h\"\n",
        &["both.delay", "too large", "the largest is"],
    );
    assert_mentions(
        "[down.queue]\npackets = 0\n",
        &[
            "down.queue.packets",
            "no queue at all",
            "1 or more",
            "leave the key out",
        ],
    );
    assert_mentions(
        "[up.queue]\nbytes = \"0B\"\n",
        &["up.queue.bytes", "no queue at all"],
    );
    // TOML syntax errors say where.
    assert_mentions("[down\nrate = 1\n", &["line 1"]);
}

#[test]
fn missing_file_is_a_clear_error() {
    let e = LinkSpec::load("/nonexistent/link.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/nonexistent/link.toml") && e.contains("cannot read"),
        "{e}"
    );
}

// ---- property tests -----------------------------------------------------------------------

/// Fragments of spec text, valid and not, to assemble random specs from.
fn fragment() -> impl Strategy<Value = String> {
    let durs = prop::sample::select(vec![
        "0s",
        "1ms",
        "72ms",
        "300ms",
        "6s",
        "-1s",
        "1.5ns",
        "x",
        "uniform(1ms, 2s)",
        "exponential(1s, max=3s)",
        "exponential(0s)",
    ]);
    let rates = prop::sample::select(vec![
        "64kbit",
        "9600bit",
        "unlimited",
        "0bit",
        "1Gbit",
        "64",
    ]);
    let sizes = prop::sample::select(vec!["576B", "9600B", "1B", "0B", "1MiB", "10"]);
    let probs = prop::sample::select(vec!["0.0", "0.5", "1.0", "1.5", "-0.2", "0.63"]);
    let dirs = prop::sample::select(vec!["down", "up", "both"]);
    prop_oneof![
        (dirs.clone(), rates).prop_map(|(d, r)| format!("[{d}]\nrate = \"{r}\"\n")),
        (dirs.clone(), durs.clone()).prop_map(|(d, x)| format!("[{d}]\ndelay = \"{x}\"\nextra_delay = \"{x}\"\n")),
        (dirs.clone(), sizes.clone(), sizes.clone()).prop_map(|(d, a, b)| format!("[{d}]\nlsb = \"{a}\"\nlrb = \"{b}\"\nlink_ack = false\n")),
        (dirs.clone(), 0u64..30).prop_map(|(d, n)| format!("[{d}.queue]\npackets = {n}\nsojourn = \"500ms\"\n")),
        (dirs.clone(), probs.clone(), durs.clone()).prop_map(|(d, p, x)| format!("[{d}]\nerror = {p}\nhandling = \"arq\"\nerror_delay = \"{x}\"\nretries = 2\n")),
        (dirs.clone(), probs.clone(), durs.clone()).prop_map(|(d, p, x)| format!("[{d}]\nerror = {p}\nhandling = \"delay\"\nerror_delay = \"{x}\"\n")),
        (dirs.clone(), probs.clone(), durs.clone()).prop_map(|(d, p, x)| format!("[[{d}.delays]]\nprobability = {p}\ndelay = \"{x}\"\n")),
        (dirs.clone(), 0u64..50).prop_map(|(d, n)| format!("[[{d}.delays]]\nnth = {n}\ndelay = \"2s\"\n")),
        (dirs, 0.0f64..10.0, 0.0f64..10.0, probs.clone()).prop_map(|(d, a, b, p)| format!("[{d}.queue]\npolicy = \"red\"\nred = {{ min_th = {a}, max_th = {b}, max_p = {p}, w_q = 0.5, ecn = true, gentle = true, mode = \"bytes\" }}\n")),
        (durs.clone(), probs.clone()).prop_map(|(x, p)| format!("initial_state = \"g\"\n[states.g]\nduration = \"{x}\"\nnext = \"b\"\n[states.b]\nduration = \"{x}\"\nnext = {{ g = 1.0 }}\nboth = {{ error = {p}, handling = \"arq\", error_delay = \"700ms\", drop_threshold = \"1401ms\", rate = \"9600bit\" }}\n")),
        sizes.prop_map(|s| format!("mtu = \"{s}\"\n")),
        "[a-z_=\\[\\]\"0-9. \n]{0,40}".prop_map(|s| s),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random specs load or fail cleanly; those that load carry random packets without
    /// panicking, and every packet is accounted for: released once, or dropped once.
    #[test]
    fn random_specs_and_packets_never_panic(
        parts in prop::collection::vec(fragment(), 0..5),
        packets in prop::collection::vec((0u64..3_000_000_000, any::<bool>(), prop::collection::vec(any::<u8>(), 0..80), 20u32..1600), 0..60),
        seed in any::<u64>(),
    ) {
        // Later fragments may repeat a table: TOML refuses that, which is a fine outcome too.
        let text = parts.concat();
        let Ok(cfg) = LinkSpec::config_from_str(&text) else { return Ok(()); };
        let mut link = Link::new(cfg, Seeds::new(seed, 0), LogLevel::All);
        let mut packets = packets;
        packets.sort_by_key(|p| p.0);
        let mut ids = std::collections::BTreeSet::new();
        for (t, up, bytes, wire) in packets {
            let t = Time(t);
            while let Some(next) = link.poll_timeout().filter(|&n| n <= t) {
                link.handle_timeout(next);
            }
            let dir = if up { Dir::Up } else { Dir::Down };
            ids.insert(link.push(t, dir, Packet::with_wire_len(bytes, wire)));
        }
        // Run on for a long simulated while: every packet must come out or be dropped.
        let end = Time(3_000_000_000) + Dur::from_secs(3600);
        let mut steps = 0;
        while let Some(next) = link.poll_timeout().filter(|&n| n <= end) {
            link.handle_timeout(next);
            steps += 1;
            prop_assert!(steps < 5_000_000, "the model keeps waking up");
        }
        let mut released = std::collections::BTreeSet::new();
        while let Some(o) = link.poll_output() {
            prop_assert!(released.insert(o.id), "released twice: {}", o.id);
        }
        let mut events = vec![];
        link.drain_events(&mut events);
        let mut dropped = std::collections::BTreeSet::new();
        for e in &events {
            if let lasthop_link::EventKind::Drop(_) = e.kind {
                prop_assert!(dropped.insert(e.packet.unwrap().id), "dropped twice");
            }
        }
        prop_assert!(released.is_disjoint(&dropped));
        let accounted: std::collections::BTreeSet<u64> = released.union(&dropped).copied().collect();
        prop_assert_eq!(accounted, ids, "spec:\n{}", text);
        // Events come in time order.
        prop_assert!(events.windows(2).all(|w| w[0].time <= w[1].time));
    }
}

#[test]
fn formula_leading_state_names_are_refused() {
    // A state's name is a cell of events.csv: a spreadsheet would run "=HYPERLINK(...)".
    for name in ["=HYPERLINK(1)", "+1", "-bad", "@SUM(1)"] {
        let text = format!("[both]\nrate = \"64kbit\"\n[states.\"{name}\"]\n");
        let e = LinkSpec::config_from_str(&text).unwrap_err();
        assert_eq!(e.key, format!("states.{name}"), "{e}");
        assert!(
            e.message
                .contains("where a spreadsheet would take it for a formula")
                && e.message
                    .contains("may not start with '=', '+', '-', '@' or a tab"),
            "{e}"
        );
    }
    // Inside a name they are fine.
    assert!(LinkSpec::config_from_str("[both]\nrate = \"64kbit\"\n[states.\"a-b=c\"]\n").is_ok());
}
