//! Per-flow TCP options (a flow's `tcp` table) in simulation: the table's keys go over the
//! client host's TCP configuration for that flow's connections only.

mod common;

use common::tcp_data;
use lasthop_core::Time;
use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;

fn scenario(flows: &str) -> (tempfile::TempDir, Result<Scenario, String>) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("l.toml"),
        "mtu = \"1064B\"\n[both]\nrate = \"8Mbit\"\ndelay = \"5ms\"\nlsb = \"1064B\"\nlink_ack = false\n",
    )
    .unwrap();
    let text = format!(
        "name = \"flow-tcp\"\nduration = \"2s\"\nlink = \"l.toml\"\n[hosts.s]\nside = \"fixed\"\n[hosts.r]\nside = \"mobile\"\ntcp = {{ delayed_ack = \"off\" }}\n{flows}"
    );
    let s = Scenario::from_str_in(&text, d.path()).map_err(|e| e.to_string());
    (d, s)
}

const THIN: &str = "kind = \"thin\"\nfrom = \"s\"\nto = \"r\"\npayload = \"120:0\"\nitt = \"3:0\"\nduration = \"1s\"\n";

#[test]
fn nagle_off_for_one_flow_only() {
    // Two thin streams from s, 120 B every 3 ms, on 8 Mbit/s and 5 ms each way: a round trip
    // is 10 ms + 0.16 ms (160 B) + 0.04 ms (the 40 B ACK) ≈ 10.2 ms. Host s keeps Nagle on
    // (the model's default); flow 0 turns it off. Once slow start has opened the window
    // (well before 0.5 s), flow 0 sends every write as its own 120 B segment; flow 1 (Nagle)
    // holds writes while a small segment is unacknowledged, so each segment carries the
    // writes of one round trip: 10.2 / 3 → 3 or 4 writes, 360 or 480 B.
    let flows = format!("[[flows]]\n{THIN}tcp = {{ nagle = false }}\n[[flows]]\n{THIN}");
    let (d, s) = scenario(&flows);
    let s = s.unwrap();
    assert!(s.flows[0].tcp.as_ref().is_some_and(|c| !c.nagle));
    assert!(s.flows[1].tcp.is_none() && s.hosts[0].tcp.nagle);
    let opts = OutputOptions::all(d.path().join("out"));
    let r = lasthop_sim::run(&s, &opts).unwrap();
    let data = tcp_data(&d.path().join("out/s.pcap"));
    let late = |port: u16| -> Vec<usize> {
        data.iter()
            .filter(|x| x.1 == port && x.0 > Time(500_000_000) && x.0 < Time(1_000_000_000))
            .map(|x| x.2)
            .collect()
    };
    let (a, b) = (late(1024), late(1025));
    // 0.5 s of 3 ms writes: 166 or 167 segments of 120 B.
    assert!((166..=167).contains(&a.len()), "{}", a.len());
    assert!(a.iter().all(|&l| l == 120), "{a:?}");
    assert!(b.iter().all(|&l| l == 360 || l == 480), "{b:?}");
    // One segment per round trip of ~10.2 ms: about 49 in 0.5 s.
    assert!((45..=52).contains(&b.len()), "{}", b.len());
    for f in &r.flows {
        assert_eq!(f.delivered, f.bytes);
    }
}

#[test]
fn flow_tcp_keys_are_checked_by_the_model() {
    let err = |flows: &str| scenario(flows).1.unwrap_err();
    let e = err(&format!("[[flows]]\n{THIN}tcp = {{ nagel = false }}\n"));
    assert!(e.contains("flows[0].tcp") && e.contains("nagel"), "{e}");
    let e = err(&format!("[[flows]]\n{THIN}tcp = {{ nagle = 3 }}\n"));
    assert!(e.contains("flows[0].tcp.nagle"), "{e}");
    let e = err("[[flows]]\nkind = \"cbr\"\nfrom = \"s\"\nto = \"r\"\npayload = \"100B\"\ninterval = \"10ms\"\nduration = \"1s\"\ntcp = { nagle = false }\n");
    assert!(
        e.contains("flows[0].tcp") && e.contains("thin and bulk"),
        "{e}"
    );
    let e = err("[[flows]]\nkind = \"bulk\"\nfrom = \"s\"\nto = \"r\"\nbytes = 1000\nnodelay = true\ntcp = { nagle = false }\n");
    assert!(
        e.contains("flows[0].tcp.nagle") && e.contains("once"),
        "{e}"
    );
    // Any model key works per flow in simulation, e.g. the receiver-side delayed ACK of the
    // client's connections.
    let (_d, s) = scenario(&format!(
        "[[flows]]\n{THIN}tcp = {{ delayed_ack = \"off\", thin_linear_timeouts = true }}\n"
    ));
    let c = s.unwrap().flows[0].tcp.clone().unwrap();
    assert!(c.thin_linear_timeouts);
}
