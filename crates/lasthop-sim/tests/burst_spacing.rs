//! Seed 002's burst spacing (`tcp.burst_spacing`): of the packets a host sends back to back, at
//! most `packets` leave within any `gap`. Worked by hand on one initial window of 4 segments.

mod common;

use common::tcp_data;
use lasthop_core::Time;
use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;

/// One bulk transfer of 10 segments (MSS 536) from `fixed` (initial window 4) to `mobile` over
/// a link of `rate` and 100 ms; the hosts' own access links are unlimited. Returns the arrival
/// times at `mobile` of the data segments.
fn arrivals(rate: &str, spacing: &str) -> Vec<Time> {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("l.toml"),
        format!("mtu = \"576B\"\n[both]\nrate = \"{rate}\"\ndelay = \"100ms\"\nlsb = \"9600B\"\nlrb = \"9600B\"\n[down.queue]\npackets = 100\n[up.queue]\npackets = 100\n"),
    )
    .unwrap();
    let text = format!(
        "name = \"burst\"\nduration = \"20s\"\nlink = \"l.toml\"\n\
         [hosts.fixed]\nside = \"fixed\"\ntcp = {{ initial_window = 4{spacing} }}\n\
         [hosts.mobile]\nside = \"mobile\"\n\
         [[flows]]\nkind = \"bulk\"\nfrom = \"fixed\"\nto = \"mobile\"\nbytes = 5360\n"
    );
    let s = Scenario::from_str_in(&text, d.path()).unwrap_or_else(|e| panic!("{e}"));
    let opts = OutputOptions {
        dir: Some(d.path().join("out")),
        capture: true,
    };
    let r = lasthop_sim::run(&s, &opts).unwrap();
    assert_eq!(r.flows[0].delivered, 5360);
    let data = tcp_data(&d.path().join("out/mobile.pcap"));
    assert_eq!(data.len(), 10, "10 data segments, none lost");
    assert!(data.iter().all(|x| x.2 == 536));
    data.iter().map(|x| x.0).collect()
}

const SPACED: &str = ", burst_spacing = { packets = 3, gap = \"5ms\" }";

fn gaps_ns(t: &[Time]) -> Vec<u64> {
    t.windows(2).map(|w| (w[1] - w[0]).as_nanos()).collect()
}

#[test]
fn every_third_packet_of_a_burst_waits_5_ms_on_a_fast_link() {
    // The SYN-ACK's arrival releases a burst of five packets at the same instant t: the
    // handshake's ACK and the initial window d1..d4. At 10 Mbit/s a 576-byte packet takes
    // 460.8 us and the 40-byte ACK 32 us.
    // Unspaced: ACK [t, t+32us], d1 to t+492.8us, d2 to t+953.6us, d3 to t+1414.4us, d4 to
    // t+1875.2us: the data arrive 460.8 us apart.
    // Spaced, 3 per 5 ms: ACK, d1, d2 leave at t; d3 is the fourth packet, so it leaves 5 ms
    // after the first (the ACK), at t+5ms, and ends at t+5.4608ms; d4 (5 ms after d1) follows
    // it to t+5.9216ms. So d2 -> d3 arrive 5.4608 - 0.9536 = 4.5072 ms apart.
    let plain = arrivals("10Mbit", "");
    let spaced = arrivals("10Mbit", SPACED);
    assert_eq!(&gaps_ns(&plain)[..3], [460_800, 460_800, 460_800]);
    assert_eq!(&gaps_ns(&spaced)[..3], [460_800, 4_507_200, 460_800]);
    // The first two are not delayed.
    assert_eq!(plain[0], spaced[0]);
    assert_eq!(plain[1], spaced[1]);
}

#[test]
fn spacing_is_hidden_behind_a_64_kbit_link() {
    // At 64 kbit/s the ACK takes 5 ms and each data packet 72 ms: d1 [5, 77] ms, d2 [77, 149],
    // d3 [149, 221], d4 [221, 293] after t. d3 reaches the router at t+5ms instead of t, while
    // the link is busy until t+149ms, so nothing reaches the mobile host later: the seed's
    // "5 ms" matters only when the router queue is full or empty at that moment.
    let plain = arrivals("64kbit", "");
    let spaced = arrivals("64kbit", SPACED);
    assert_eq!(&gaps_ns(&plain)[..3], [72_000_000; 3]);
    assert_eq!(plain, spaced);
}

#[test]
fn a_flows_own_tcp_table_cannot_space_bursts() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("l.toml"),
        "[both]\nrate = \"64kbit\"\ndelay = \"100ms\"\n",
    )
    .unwrap();
    let text = format!(
        "name = \"burst\"\nduration = \"1s\"\nlink = \"l.toml\"\n\
         [hosts.fixed]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n\
         [[flows]]\nkind = \"bulk\"\nfrom = \"fixed\"\nto = \"mobile\"\nbytes = 536\n\
         tcp = {{ initial_window = 4{SPACED} }}\n"
    );
    let s = Scenario::from_str_in(&text, d.path()).unwrap_or_else(|e| panic!("{e}"));
    let e = lasthop_sim::run(&s, &OutputOptions::default())
        .expect_err("refused")
        .to_string();
    assert!(e.contains("flows[0].tcp.burst_spacing"), "{e}");
}
