//! A page of two objects worked out by hand from a client-side and a server-side capture
//! (300 ms one way): the main object (3000 bytes, client port 5001) whose server ACK of the
//! client's FIN is lost, so the client resends its FIN and the server acknowledges it again,
//! and one in-line object (1000 bytes, port 5002).

mod common;

use common::{seg, Format, Seg, CLIENT, SERVER};
use lasthop_analysis::{analyse_run, AnalysisOptions, Capture, PageSpec};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const ONE_WAY: u64 = 300;

/// Both captures, the receiver's 300 ms after the sender's.
fn captures(packets: &[(Seg, bool)]) -> (Vec<u8>, Vec<u8>) {
    common::two_captures(packets, ONE_WAY, Format::SimHeaderOnly)
}

fn page() -> Vec<(Seg, bool)> {
    let c = |t, seq, port| seg(t, true, seq).ports(port, SERVER.1);
    let s = |t, seq, port| seg(t, false, seq).ports(port, SERVER.1);
    vec![
        // object 0: SYN at 0 (arrives 300), request 350 B, 3 x 1000 B and FIN from 1000 ms
        (c(0, 0, 5001).syn(), false),
        (s(300, 1000, 5001).syn().ack(1), false),
        (c(600, 1, 5001).ack(1001).len(350), false),
        (s(1000, 1001, 5001).ack(351).len(1000), false),
        (s(1100, 2001, 5001).ack(351).len(1000), false),
        (s(1200, 3001, 5001).ack(351).len(1000), false),
        (s(1200, 4001, 5001).ack(351).fin(), false),
        (c(1500, 351, 5001).ack(4002).fin(), false),
        // the server's ACK of the FIN is lost; the FIN again at 2800, ACKed at 3100
        (s(1800, 4002, 5001).ack(352), true),
        (c(2800, 351, 5001).ack(4002).fin(), false),
        (s(3100, 4002, 5001).ack(352), false),
        // object 1: SYN at 700, 1000 B and FIN at 1600
        (c(700, 0, 5002).syn(), false),
        (s(1000, 5000, 5002).syn().ack(1), false),
        (c(1300, 1, 5002).ack(5001).len(350), false),
        (s(1600, 5001, 5002).ack(351).len(1000), false),
        (s(1600, 6001, 5002).ack(351).fin(), false),
        (c(1900, 351, 5002).ack(6002).fin(), false),
        (s(2200, 6002, 5002).ack(352), false),
    ]
}

#[test]
fn a_page_from_two_captures_by_hand() {
    let (client, server) = captures(&page());
    let ip = |a: [u8; 4]| IpAddr::V4(Ipv4Addr::from(a));
    let spec = PageSpec {
        flow: 0,
        label: "3000B+1x1000B".into(),
        client: ip(CLIENT.0),
        server: SocketAddr::new(ip(SERVER.0), SERVER.1),
        first_port: 5001,
        objects: vec![3000, 1000],
    };
    let hosts = [
        (ip(CLIENT.0), Capture::Bytes(&client)),
        (ip(SERVER.0), Capture::Bytes(&server)),
    ];
    let run = analyse_run(
        &hosts,
        None,
        &AnalysisOptions {
            pages: vec![spec],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(run.conns.len(), 2);
    let p = &run.pages[0];
    assert!(p.complete());
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
    // Object 0 at the server: SYN at 300 ms -> its second ACK of the FIN at 3100 ms (not the
    // lost one at 1800 ms); at the client: 0 -> 3400 ms.
    let o = &p.objects;
    assert!(close(o[0].elapsed_s(), 2.8), "{:?}", o[0].elapsed_s());
    assert!(close(o[0].client_elapsed_s(), 3.4));
    assert!(close(o[0].throughput_bytes_per_s(), 3000.0 / 2.8));
    // Object 1: 1000 -> 2200 ms at the server (833.3 B/s), 700 -> 2500 ms at the client.
    assert!(close(o[1].elapsed_s(), 1.2));
    assert!(close(o[1].client_elapsed_s(), 1.8));
    assert_eq!((o[0].class, o[1].class), (1, 2));
    // The resent FIN is a retransmission of the client->server direction, not the server's.
    assert_eq!((o[0].rexmt_pkts, o[1].rexmt_pkts), (Some(0), Some(0)));
    // No event log: drops unknown.
    assert_eq!(o[0].drops, None);
    // Response 0 -> 3400 ms; total 300 -> 3100 ms.
    assert!(close(p.response_s(), 3.4));
    assert!(close(p.total_s(), 2.8));
    // connections.csv still ends the connection at the first ACK of the FIN the client saw.
    assert!(close(Some(run.conns[0].elapsed().as_secs_f64()), 3.4));
}
