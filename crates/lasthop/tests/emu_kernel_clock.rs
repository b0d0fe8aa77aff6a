//! The emulating kernel's jiffies clock (`[kernel_clock]` in `summary.toml`) against the real
//! kernel's timers, and a simulated twin at that phase (`clock_phase`) firing the same timer at
//! the same instant. Needs root; without it the test says SKIPPED and why (and fails when
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use lasthop_core::wire::{parse_ip, parse_tcp, SYN};
use pcap_file::pcap::PcapReader;
use std::net::IpAddr;
use std::path::Path;

/// The first two packets down (the SYNs) held 3 s: each client's 1 s SYN timeout fires.
const LINK: &str = r#"
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
"#;

/// Two Linux 6.18 clients (`a`, `b`) connecting to `m` at time 0 (`{starts}` and the clock
/// phase filled in for the simulated twin).
fn scenario(clock_phase: &str, start_a: &str, start_b: &str) -> String {
    format!(
        r#"
name = "kernel-clock"
duration = "3s"
link = "link.toml"
clock_phase = "{clock_phase}"
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
start = "{start_a}"
[[flows]]
kind = "bulk"
from = "b"
to = "m"
bytes = 1000
start = "{start_b}"
"#
    )
}

/// The times (ns) of the SYNs `host` sent, from its capture.
fn syns(out: &Path, host: &str) -> Vec<u64> {
    let f = std::fs::File::open(out.join(format!("{host}.pcap"))).unwrap();
    let mut r = PcapReader::new(f).unwrap();
    let mut v = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let Some(ip) = parse_ip(&p.data) else {
            continue;
        };
        let from_host = matches!(ip.src, IpAddr::V4(a) if a.octets()[..2] == [198, 18]);
        let tcp = ip.transport(&p.data).and_then(|t| parse_tcp(t, false));
        if from_host && tcp.is_some_and(|t| t.flags == SYN) {
            v.push(p.timestamp.as_nanos() as u64);
        }
    }
    v
}

/// When a 1 s timeout armed at `at` fires on Linux's timer wheel at HZ 250 with the jiffies at
/// `phase` at time 0: 250 jiffies is level 1, whose 8-jiffy buckets end at whole multiples of
/// 8 jiffies of the kernel's count (docs/tcp-model.md, `timer_wheel`).
fn wheel_fire(at: u64, phase: u64) -> u64 {
    let tick = 4_000_000;
    let expires = (at + phase) / tick + 250;
    (((expires >> 3) + 1) << 3) * tick - phase
}

#[test]
fn emu_kernel_clock_puts_a_twins_timers_on_the_kernels_buckets() {
    if !common::can_emulate("emu_kernel_clock_puts_a_twins_timers_on_the_kernels_buckets") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("link.toml"), LINK).unwrap();
    let spec = tmp.path().join("emu.toml");
    std::fs::write(&spec, scenario("shared", "0s", "0s")).unwrap();
    let out = tmp.path().join("emu");
    let stdout = common::lasthop_ok(&[
        "emu",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    println!("{stdout}");
    let summary: toml::Table = std::fs::read_to_string(out.join("summary.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let clock = summary["kernel_clock"].as_table().expect("[kernel_clock]");
    // This test's machine runs CONFIG_HZ = 250 (the TCP model's `hz` for "linux-6.18").
    assert_eq!(clock["hz"].as_integer(), Some(250), "{clock:?}");
    let phase = clock["phase_ns"].as_integer().unwrap() as u64;
    assert!(phase < 4_000_000 << 15, "{phase}");
    // The kernel resent each SYN where the wheel's bucket ends at that phase, give or take its
    // softirq and the TUN (a tick off would be 4 ms, a bucket 32 ms).
    let (a, b) = (syns(&out, "a"), syns(&out, "b"));
    println!("a's SYNs {a:?}, b's {b:?}, phase {phase} ns");
    for s in [&a, &b] {
        assert!(s.len() >= 2, "{s:?}");
        let fire = wheel_fire(s[0], phase);
        assert!(
            (fire..fire + 2_000_000).contains(&s[1]),
            "the kernel resent at {} ns, its wheel's bucket at phase {phase} ends at {fire}",
            s[1]
        );
    }
    // The simulated twin at the kernel's phase, each client starting when the real one sent
    // its SYN, resends at the bucket's end exactly.
    let sim_spec = tmp.path().join("sim.toml");
    let ns = |t: u64| format!("{t}ns");
    std::fs::write(&sim_spec, scenario(&ns(phase), &ns(a[0]), &ns(b[0]))).unwrap();
    let sim_out = tmp.path().join("sim");
    common::lasthop_ok(&[
        "sim",
        sim_spec.to_str().unwrap(),
        "--out",
        sim_out.to_str().unwrap(),
    ]);
    for (host, kernel) in [("a", &a), ("b", &b)] {
        let twin = syns(&sim_out, host);
        assert_eq!(twin[0], kernel[0], "{host}");
        assert_eq!(twin[1], wheel_fire(kernel[0], phase), "{host}: {twin:?}");
    }
}
