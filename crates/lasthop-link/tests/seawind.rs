//! Seawind's remaining simulation-process parameters (seed 001, Appendix E.1.2), each with
//! times worked by hand: the allocation delay, the available rate with its change interval,
//! bit error rates, FORWARD corruption, the output dropper, distributions read from `user`
//! files.
//!
//! The link is 64 kbit/s unless said: a 576-byte packet takes 72 ms.

mod common;

use common::{drain, link, ms, udp, MS};
use lasthop_core::{Packet, Time};
use lasthop_link::{Cause, Dir, EventKind, Link, LinkSpec};

/// Pushes at `t`, running the model up to it first.
fn push_at(l: &mut Link, t: Time, p: Packet) -> u64 {
    while let Some(due) = l.poll_timeout().filter(|&d| d <= t) {
        l.handle_timeout(due);
    }
    l.push(t, Dir::Down, p)
}

/// A data file in a fresh directory, and a spec text that may name it by its file name.
struct Files(std::path::PathBuf);

impl Files {
    fn new(tag: &str, files: &[(&str, &str)]) -> Files {
        let dir =
            std::env::temp_dir().join(format!("lasthop-seawind-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        Files(dir)
    }

    fn link(&self, spec: &str) -> Link {
        let path = self.0.join("link.toml");
        std::fs::write(&path, spec).unwrap();
        let cfg = LinkSpec::load(&path).unwrap_or_else(|e| panic!("{e}"));
        Link::new(
            cfg,
            lasthop_core::Seeds::new(1, 0),
            lasthop_link::LogLevel::All,
        )
    }

    fn error(&self, spec: &str) -> String {
        let path = self.0.join("link.toml");
        std::fs::write(&path, spec).unwrap();
        LinkSpec::load(&path).unwrap_err().to_string()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_allocation_delay_comes_before_a_packet_that_finds_the_link_idle() {
    let mut l = link("[down]\nrate = \"64kbit\"\nallocation_delay = \"100ms\"\n");
    // Idle at 0: allocation 0..100, sent 100..172.
    let a = push_at(&mut l, Time::ZERO, udp(576, 1, 0));
    // Waiting behind it: sent at once when it ends, 172..244.
    let b = push_at(&mut l, ms(10), udp(576, 1, 0));
    // Idle again at 1 s: 1100..1172.
    let c = push_at(&mut l, ms(1000), udp(576, 1, 0));
    let (out, ev) = drain(&mut l);
    assert_eq!(out, [(a, ms(172)), (b, ms(244)), (c, ms(1172))]);
    let allocs: Vec<(Time, u64)> = ev
        .iter()
        .filter(|e| e.kind == EventKind::Alloc)
        .map(|e| (e.time, e.delay_ns.unwrap() / MS))
        .collect();
    assert_eq!(allocs, [(ms(0), 100), (ms(1000), 100)]);

    // With idle_timeout = 500ms a pause of 400 ms needs no allocation, one of 600 ms does.
    let mut l =
        link("[down]\nrate = \"64kbit\"\nallocation_delay = \"100ms\"\nidle_timeout = \"500ms\"\n");
    let a = push_at(&mut l, Time::ZERO, udp(576, 1, 0));
    let b = push_at(&mut l, ms(572), udp(576, 1, 0));
    let c = push_at(&mut l, ms(1244), udp(576, 1, 0));
    let (out, _) = drain(&mut l);
    assert_eq!(out, [(a, ms(172)), (b, ms(644)), (c, ms(1416))]);
}

#[test]
fn the_available_rate_scales_the_rate_and_a_zero_stops_the_link() {
    // Multipliers 1, 0.5, 0, 1, ... each for 1 s (a user file, in order, then again).
    let f = Files::new("avail", &[("avail.txt", "1\n0.5\n0\n1\n")]);
    let mut l = f.link(
        "[down]\nrate = \"64kbit\"\navailable_rate = \"user(avail.txt)\"\nrate_change_interval = \"1s\"\n",
    );
    let a = push_at(&mut l, Time::ZERO, udp(576, 1, 0)); // 64 kbit/s: 72 ms
    let b = push_at(&mut l, ms(1000), udp(576, 1, 0)); // 32 kbit/s: 144 ms
    let c = push_at(&mut l, ms(2500), udp(576, 1, 0)); // stopped until 3 s, then 72 ms
    let d = push_at(&mut l, ms(5500), udp(576, 1, 0)); // the file again: 0.5 from 5 s
    let (out, _) = drain(&mut l);
    assert_eq!(
        out,
        [(a, ms(72)), (b, ms(1144)), (c, ms(3072)), (d, ms(5644))]
    );
}

/// The fraction of `n` packets of `len` bytes lost on a link with `spec`'s errors.
fn loss_fraction(spec: &str, len: usize, n: u64) -> f64 {
    let mut l = link(spec);
    for i in 0..n {
        l.push(Time(i * 1000), Dir::Down, udp(len, 1, 0));
    }
    let (out, _) = drain(&mut l);
    1.0 - out.len() as f64 / n as f64
}

#[test]
fn a_bit_error_rate_fails_a_packet_by_its_size() {
    // BER 1e-5: 576 B (4608 bits) fail with 1 − (1 − 1e-5)^4608 = 0.04505, 40 B (320 bits)
    // with 0.00319; with 7 bytes of overhead each, 4664 and 376 bits: 0.04558 and 0.00375.
    let spec = |extra: &str| {
        format!("[down]\nrate = \"unlimited\"\nerror = 1e-5\nerror_unit = \"bit\"\n{extra}")
    };
    let n = 200_000;
    for (len, extra, want) in [
        (576, "", 0.04505),
        (40, "", 0.00319),
        (576, "overhead = \"7B\"\n", 0.04558),
        (40, "overhead = \"7B\"\n", 0.00375),
    ] {
        let got = loss_fraction(&spec(extra), len, n);
        let sd = (want * (1.0 - want) / n as f64).sqrt();
        assert!(
            (got - want).abs() < 4.0 * sd,
            "{len} B {extra}: {got} vs {want}"
        );
    }
    // Per packet (the default) the size does not matter.
    let per_packet = "[down]\nrate = \"unlimited\"\nerror = 0.05\n";
    for len in [40, 1500] {
        let got = loss_fraction(per_packet, len, n);
        assert!((got - 0.05).abs() < 0.003, "{len}: {got}");
    }
}

#[test]
fn forward_sends_a_damaged_packet_on_and_its_checksum_fails() {
    // Every packet fails and is forwarded: released on time, damaged, logged as `corrupt`.
    let mut l = link("[down]\nrate = \"64kbit\"\nerror = 1\nhandling = \"forward\"\n");
    let tcp = {
        let b = etherparse::PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
            .tcp(5001, 80, 7, 1000)
            .ack(1);
        let mut v = Vec::new();
        b.write(&mut v, &[0x55; 536]).unwrap();
        Packet::from_bytes(v)
    };
    assert_eq!(sum_tcp(&tcp.data), 0, "a good segment sums to 0");
    l.push(Time::ZERO, Dir::Down, tcp.clone());
    let mut out = vec![];
    loop {
        while let Some(o) = l.poll_output() {
            out.push(o);
        }
        let Some(t) = l.poll_timeout() else { break };
        l.handle_timeout(t);
    }
    assert_eq!(out.len(), 1);
    let p = &out[0].packet;
    assert_eq!((out[0].at, p.damaged), (ms(72), true));
    assert_eq!(p.data.len(), tcp.data.len());
    let diff: Vec<usize> = (0..p.data.len())
        .filter(|&i| p.data[i] != tcp.data[i])
        .collect();
    assert_eq!(diff, [40 + 268], "one bit of the middle payload byte");
    assert_ne!(sum_tcp(&p.data), 0, "the receiver's checksum fails");
    assert_eq!(l.stats(Dir::Down).corrupted, 1);
    let mut ev = vec![];
    l.drain_events(&mut ev);
    let c: Vec<_> = ev.iter().filter(|e| e.kind == EventKind::Corrupt).collect();
    assert_eq!(
        (c.len(), c[0].time, c[0].cause()),
        (1, ms(72), Some(Cause::Error))
    );

    // A simulated segment (headers only, payload virtual): its checksum field is changed.
    let mut sim = Packet::with_wire_len(tcp.data[..40].to_vec(), 576);
    sim.damage();
    assert_eq!(sim.data[36..38], [tcp.data[36], tcp.data[37] ^ 1]);
    // UDP without a checksum: the TTL, which the IPv4 header checksum covers.
    let mut u = udp(100, 1, 0);
    u.data[26..28].copy_from_slice(&[0, 0]);
    let before = u.data.clone();
    u.damage();
    assert_eq!(u.data[8], before[8] ^ 1);
    assert_ne!(lasthop_core::wire::checksum(&u.data[..20]), 0);
}

/// The TCP checksum over a whole IPv4 segment: 0 when right.
fn sum_tcp(ip: &[u8]) -> u16 {
    let src = std::net::Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]);
    let dst = std::net::Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
    lasthop_core::wire::tcp_checksum_ipv4(src, dst, &ip[20..])
}

#[test]
fn the_output_dropper_drops_packets_as_they_leave() {
    // Probability 0, 1, 0, 1, ... from a user file: every second packet is dropped on its way
    // out, after its transmission.
    let f = Files::new("dropper", &[("p.txt", "0\n1\n")]);
    let mut l = f.link("[down]\nrate = \"64kbit\"\noutput_dropper = \"user(p.txt)\"\n");
    let ids: Vec<u64> = (0..4)
        .map(|_| push_at(&mut l, Time::ZERO, udp(576, 1, 0)))
        .collect();
    let (out, ev) = drain(&mut l);
    assert_eq!(out, [(ids[0], ms(72)), (ids[2], ms(216))]);
    let drops: Vec<(u64, Time)> = ev
        .iter()
        .filter(|e| e.kind == EventKind::Drop(Cause::Output))
        .map(|e| (e.packet.unwrap().id, e.time))
        .collect();
    assert_eq!(drops, [(ids[1], ms(144)), (ids[3], ms(288))]);
    assert_eq!(l.stats(Dir::Down).drops_output, 2);
    // A fixed probability: about that share of packets.
    let got = {
        let mut l = link("[down]\nrate = \"unlimited\"\noutput_dropper = 0.2\n");
        for i in 0..50_000 {
            l.push(Time(i * 1000), Dir::Down, udp(100, 1, 0));
        }
        drain(&mut l);
        l.stats(Dir::Down).drops_output as f64 / 50_000.0
    };
    assert!((got - 0.2).abs() < 0.008, "{got}");
}

#[test]
fn user_files_give_error_delays_in_order_and_bad_ones_are_errors() {
    // ARQ with the retry delays 100 ms, 2 s, 100 ms, ... from a file: two packets that fail
    // once each (a pattern) recover after 100 ms, then after 2 s.
    let f = Files::new(
        "user",
        &[
            ("d.txt", "# retry delays\n100ms\n2s\n"),
            ("bad.txt", "100ms\n3 fortnights\n"),
            ("p.txt", "0.5\n1.5\n"),
        ],
    );
    let mut l = f.link(
        "[down]\nrate = \"64kbit\"\nhandling = \"arq\"\nretries = 3\nerror_delay = \"user(d.txt)\"\n[down.loss]\nmodel = \"pattern\"\ndrop = [1]\nevery = 2\n",
    );
    let a = push_at(&mut l, Time::ZERO, udp(576, 1, 0));
    let b = push_at(&mut l, ms(1000), udp(576, 1, 0));
    let (out, _) = drain(&mut l);
    assert_eq!(out, [(a, ms(172)), (b, ms(3072))]);
    let e = f.error("[down]\nerror = 0.1\nhandling = \"delay\"\nerror_delay = \"user(bad.txt)\"\n");
    assert!(
        e.contains("key `down.error_delay`: \"bad.txt\" line 2: invalid duration \"3 fortnights\""),
        "{e}"
    );
    let e = f.error("[down]\nerror = \"user(missing.txt)\"\n");
    assert!(e.contains("key `down.error`: \"missing.txt\""), "{e}");
    // A user file of probabilities is clipped into 0..1 as it is drawn; a fixed one is checked.
    let e = f.error("[down]\noutput_dropper = 1.5\n");
    assert!(
        e.contains("key `down.output_dropper`: probability 1.5 is outside 0..1"),
        "{e}"
    );
    assert!(LinkSpec::config_from_str("[down]\nerror = \"beta(2, 50)\"\n").is_ok());
}

#[test]
fn seawind_keys_that_need_each_other_say_so() {
    let bad = |spec: &str, key: &str, what: &str| {
        let e = LinkSpec::config_from_str(spec).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("key `{key}`")) && e.contains(what),
            "{spec}: {e}"
        );
    };
    bad(
        "[down]\navailable_rate = 0.5\n",
        "down.rate_change_interval",
        "missing",
    );
    bad(
        "[up]\nrate_change_interval = \"1s\"\n",
        "up.available_rate",
        "missing",
    );
    bad(
        "[down]\navailable_rate = -1\nrate_change_interval = \"1s\"\n",
        "down.available_rate",
        "below 0",
    );
    bad(
        "[down]\navailable_rate = 0.5\nrate_change_interval = \"0s\"\n",
        "down.rate_change_interval",
        "0s",
    );
    bad(
        "[down]\nidle_timeout = \"1s\"\n",
        "down.idle_timeout",
        "allocation_delay",
    );
    bad(
        "[both]\nerror = \"normal(0.1)\"\n",
        "both.error",
        "unknown name or wrong number of arguments",
    );
    bad(
        "[down]\nallocation_delay = \"gamma(-1, 1s)\"\n",
        "down.allocation_delay",
        "SHAPE must be above zero",
    );
    bad(
        "[down]\nerror_unit = \"byte\"\n",
        "down.error_unit",
        "unknown variant",
    );
}

#[test]
fn stop_and_flow_control_keep_arrivals_unread_until_the_queue_has_room() {
    // 64 kbit/s, a 2-packet router queue: five packets at 0. One is sent (0..72), two wait in
    // the queue, two find it full.
    let base = "[down]\nrate = \"64kbit\"\n[down.queue]\npackets = 2\n";
    let five = |l: &mut Link| -> Vec<u64> {
        (0..5)
            .map(|_| push_at(l, Time::ZERO, udp(576, 1, 0)))
            .collect()
    };
    // DROP: the last two are lost.
    let mut l = link(base);
    let ids = five(&mut l);
    let (out, _) = drain(&mut l);
    assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), ids[..3]);
    // STOP with room for one unread packet: the fourth waits unread and is read at 72 ms, when
    // the first leaves the queue for the link; the fifth finds the input full (cause `input`).
    let mut l = link(&format!("{base}overflow = \"stop\"\ninput = 1\n"));
    let ids = five(&mut l);
    let (out, ev) = drain(&mut l);
    assert_eq!(
        out,
        [
            (ids[0], ms(72)),
            (ids[1], ms(144)),
            (ids[2], ms(216)),
            (ids[3], ms(288))
        ]
    );
    let kinds = |id: u64| -> Vec<(EventKind, Time)> {
        ev.iter()
            .filter(|e| e.packet.is_some_and(|p| p.id == id) && e.kind != EventKind::Arrive)
            .map(|e| (e.kind, e.time))
            .take(2)
            .collect()
    };
    assert_eq!(
        kinds(ids[3]),
        [(EventKind::Unread, ms(0)), (EventKind::Enqueue, ms(72))]
    );
    assert_eq!(kinds(ids[4]), [(EventKind::Drop(Cause::Input), ms(0))]);
    assert_eq!(l.stats(Dir::Down).drops_input, 1);
    // FLOW CONTROL: nothing is lost; all five leave in order.
    let mut l = link(&format!("{base}overflow = \"flow_control\"\n"));
    let ids = five(&mut l);
    let (out, _) = drain(&mut l);
    assert_eq!(
        out,
        ids.iter()
            .enumerate()
            .map(|(k, &id)| (id, ms(72 * (k as u64 + 1))))
            .collect::<Vec<_>>()
    );
    assert!(l.is_empty());
    // What does not fit Seawind's overflow handling is refused.
    for (spec, key) in [
        ("[down.queue]\noverflow = \"stop\"\n", "down.queue.overflow"),
        (
            "[down.queue]\npackets = 3\noverflow = \"stop\"\npolicy = \"codel\"\n",
            "down.queue.overflow",
        ),
        ("[down.queue]\npackets = 3\ninput = 5\n", "down.queue.input"),
        (
            "[down.queue]\npackets = 3\noverflow = \"stop\"\ninput = 0\n",
            "down.queue.input",
        ),
    ] {
        let e = LinkSpec::config_from_str(spec).unwrap_err().to_string();
        assert!(e.starts_with(&format!("key `{key}`")), "{spec}: {e}");
    }
}

#[test]
fn a_background_load_shares_the_channel() {
    // 64 kbit/s; the other users send a 576-byte packet every 144 ms (32 kbit/s, constant
    // gaps): at 144, 288, ... ms, each taking the channel for 72 ms. Ours: a at 100 ms (sent
    // 100..172), b at 150 ms. At 172 ms the background packet of 144 ms and b both wait.
    let spec = |priority: &str| {
        format!("[down]\nrate = \"64kbit\"\n[down.background]\nrate = \"32kbit\"\narrivals = \"cbr\"\npriority = \"{priority}\"\n")
    };
    for (priority, b_out) in [("equal", 316), ("background", 316), ("user", 244)] {
        let mut l = link(&spec(priority));
        let a = push_at(&mut l, ms(100), udp(576, 1, 0));
        let b = push_at(&mut l, ms(150), udp(576, 1, 0));
        let mut out = vec![];
        while out.len() < 2 {
            let t = l.poll_timeout().unwrap();
            l.handle_timeout(t);
            while let Some(o) = l.poll_output() {
                out.push((o.id, o.at));
            }
        }
        assert_eq!(out, [(a, ms(172)), (b, ms(b_out))], "{priority}");
        // By 1 s: background packets of 144, 288, ..., 864 ms sent (the one at 864 ends at 936).
        while let Some(t) = l.poll_timeout().filter(|&t| t <= ms(1000)) {
            l.handle_timeout(t);
        }
        assert_eq!(l.stats(Dir::Down).background, 6, "{priority}");
    }
    // Poisson arrivals at 16 kbit/s of a 64 kbit/s channel keep it busy a quarter of the time.
    let mut l = link("[down]\nrate = \"64kbit\"\n[down.background]\nrate = \"16kbit\"\n");
    while let Some(t) = l.poll_timeout().filter(|&t| t <= ms(2_000_000)) {
        l.handle_timeout(t);
    }
    let busy = l.meter(Dir::Down).reading(ms(2_000_000)).busy_ns as f64 / 2e12;
    assert!((busy - 0.25).abs() < 0.01, "{busy}");
    let e = LinkSpec::config_from_str("[up.background]\npacket = \"100B\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("key `up.background.rate`: missing"), "{e}");
}

#[test]
fn the_available_rate_scales_a_states_rate_too() {
    // A state of 32 kbit/s with the multiplier 0.5: 16 kbit/s, a 576-byte packet in 288 ms.
    let mut l = link(
        "initial_state = \"s\"\n[states.s]\ndown = { rate = \"32kbit\" }\n[down]\nrate = \"64kbit\"\navailable_rate = 0.5\nrate_change_interval = \"10s\"\n",
    );
    let a = push_at(&mut l, Time::ZERO, udp(576, 1, 0));
    let mut out = vec![];
    while let Some(t) = l.poll_timeout().filter(|&t| t <= ms(1000)) {
        l.handle_timeout(t);
        while let Some(o) = l.poll_output() {
            out.push((o.id, o.at));
        }
    }
    assert_eq!(out, [(a, ms(288))]);
}
