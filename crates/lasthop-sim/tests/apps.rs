//! Applications on the simulated hosts: a CBR UDP stream worked out by hand on seed 000's
//! optimal link, and UDP beside TCP.

use lasthop_apps::cbr::Record;
use lasthop_core::{Dur, Time};
use lasthop_scenario::Scenario;
use lasthop_sim::OutputOptions;
use pcap_file::pcap::PcapReader;
use std::path::Path;

fn scenario(flows: &str) -> Scenario {
    let links = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/links");
    let text = format!(
        "name = \"apps\"\nduration = \"600s\"\nlink = \"seed000-e0.toml\"\n[hosts.fixed]\nside = \"fixed\"\n[hosts.mobile]\nside = \"mobile\"\n{flows}"
    );
    Scenario::from_str_in(&text, &links).unwrap_or_else(|e| panic!("{e}"))
}

/// (time, wire length, record) of every UDP packet in a capture.
fn udp_in(pcap: &Path) -> Vec<(Time, u32, Record)> {
    let mut r = PcapReader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        if p.data[9] != 17 {
            continue;
        }
        let t = Time(p.timestamp.as_nanos() as u64);
        out.push((t, p.orig_len, Record::decode(&p.data[28..]).unwrap()));
    }
    out
}

const CBR: &str = "[[flows]]\nkind = \"cbr\"\nfrom = \"fixed\"\nto = \"mobile\"\npayload = \"512B\"\ninterval = \"128ms\"\nduration = \"1280ms\"\n";

#[test]
fn a_cbr_stream_on_e0_arrives_one_serialization_and_one_delay_later() {
    // 512 B of payload + 8 B UDP + 20 B IP = 540 B, 67.5 ms at 64 kbit/s, then 300 ms of
    // propagation: datagram k leaves at k·128 ms and arrives at k·128 + 367.5 ms. 1280 ms of
    // sending is 10 datagrams (0 to 1152 ms); the receiver stops 10 s (JTG's -e 10) after the
    // sending ends, at 11.28 s, and so does the run.
    let s = scenario(CBR);
    let d = tempfile::tempdir().unwrap();
    let opts = OutputOptions {
        dir: Some(d.path().to_path_buf()),
        capture: true,
    };
    let r = lasthop_sim::run(&s, &opts).unwrap();
    assert_eq!(r.end, Time::ZERO + Dur::from_millis(11_280));
    let f = &r.flows[0];
    assert_eq!((f.kind, f.reliable), ("cbr", false));
    assert_eq!((f.bytes, f.delivered), (5120, 5120));
    assert_eq!(f.first_byte, Some(Time(367_500_000)));
    assert_eq!(f.last_byte, Some(Time(9 * 128_000_000 + 367_500_000)));
    let sent = udp_in(&d.path().join("fixed.pcap"));
    let got = udp_in(&d.path().join("mobile.pcap"));
    assert_eq!((sent.len(), got.len()), (10, 10));
    for (k, ((ts, len, rec), (tr, len_r, rec_r))) in sent.iter().zip(&got).enumerate() {
        let k = k as u64;
        assert_eq!(*ts, Time(k * 128_000_000));
        assert_eq!(*tr, Time(k * 128_000_000 + 367_500_000));
        assert_eq!((*len, *len_r), (540, 540));
        assert_eq!(rec.seq as u64, k);
        assert_eq!(rec, rec_r);
        assert_eq!(rec.sent_ns, ts.0);
    }
    // The analysis of the captures agrees: 10 sent, 10 received, 128 ms apart, 367.5 ms late;
    // 10 × 520 B (payload + UDP header) over the 1152 ms between the first and the last arrival.
    let u = &r.udp[0];
    assert_eq!((u.sent, u.received, u.lost()), (Some(10), 10, Some(0)));
    assert_eq!(u.spacing_ms().p50, Some(128.0));
    assert_eq!(u.delay_ms().max, Some(367.5));
    let tput = u.throughput_bps().unwrap();
    assert!((tput - 5200.0 / 1.152).abs() < 1e-6, "{tput}");
    let table = lasthop_analysis::format_udp_table(&r.udp);
    assert!(
        table.contains("198.19.0.1:5000") && table.contains("4513.9"),
        "{table}"
    );
    // The event log knows the datagrams as UDP flows.
    let events = std::fs::read_to_string(d.path().join("events.csv")).unwrap();
    assert!(events.contains("udp:198.18.0.1:1024>198.19.0.1:5000"));
}

#[test]
fn udp_and_tcp_share_the_link_and_the_transfer_still_completes() {
    // A 20 000-byte transfer beside the stream: flow 0's client starts first, so datagram 0
    // waits behind the SYN (well under one 576-byte segment, 72 ms) on the link, and no
    // datagram is lost (e0's 20-packet router queue holds this small window), and the transfer
    // completes.
    let bulk = "[[flows]]\nkind = \"bulk\"\nfrom = \"fixed\"\nto = \"mobile\"\nbytes = 20000\n";
    let s = scenario(&format!("{bulk}{CBR}"));
    let r = lasthop_sim::run(
        &s,
        &OutputOptions {
            dir: None,
            capture: true,
        },
    )
    .unwrap();
    assert_eq!(r.flows[0].delivered, 20_000);
    assert_eq!(r.flows[1].delivered, 5120);
    let first = r.flows[1].first_byte.unwrap();
    assert!(
        first > Time(367_500_000) && first < Time(367_500_000 + 72_000_000),
        "{first}"
    );
    assert_eq!(r.connections.len(), 1, "the stream is no TCP connection");
}
