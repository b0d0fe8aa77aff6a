//! Times the thin-stream analysis on a generated run the size of seed 003's: 20 streams of
//! 120-byte writes every 30 ms for 5 minutes (200 000 byte ranges), 75 ms each way, 1 % of the
//! packets lost and their bytes bundled into the next packet (RDB); the sender's and the
//! receiver's captures (header-only records with nanosecond timestamps, as the simulator
//! writes them), analysed as a run with and without the stream analysis.
//!
//!     cargo run --release -p lasthop-analysis --example bench_streams
//!
//! Not a test: timings live here.

use lasthop_analysis::{analyse_run, AnalysisOptions, Capture};
use lasthop_core::output::{PcapSink, DEFAULT_SNAPLEN};
use lasthop_core::{Packet, Time};
use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

fn packet(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, seq: u32, ack: u32, len: u32) -> Packet {
    let mut p = Vec::with_capacity(40);
    let total = 40 + len;
    p.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(&sp.to_be_bytes());
    p.extend_from_slice(&dp.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    Packet::with_wire_len(p, total)
}

fn main() {
    const MS: u64 = 1_000_000;
    let (c, s) = ([198, 18, 0, 1], [198, 19, 0, 1]);
    // (time, packet) at the sender and at the receiver.
    let mut tx: Vec<(u64, Packet)> = vec![];
    let mut rx: Vec<(u64, Packet)> = vec![];
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut ranges = 0;
    for k in 0..20u16 {
        let port = 10_000 + k;
        let mut seq = 1u32;
        let mut pending: Option<u32> = None; // start of a lost packet's bytes
        let mut t = u64::from(k) * MS;
        while t < 300_000 * MS {
            let (start, len) = match pending.take() {
                Some(p) => (p, seq + 120 - p),
                None => (seq, 120),
            };
            tx.push((t, packet(c, s, port, 80, start, 1, len)));
            ranges += 1;
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if rng % 100 == 0 {
                pending = Some(start);
            } else {
                rx.push((t + 75 * MS, packet(c, s, port, 80, start, 1, len)));
                let a = packet(s, c, 80, port, 1, seq + 120, 0);
                rx.push((t + 75 * MS, a.clone()));
                tx.push((t + 150 * MS, a));
            }
            seq += 120;
            t += 30 * MS;
        }
    }
    let write = |mut v: Vec<(u64, Packet)>| {
        v.sort_by_key(|x| x.0);
        let mut sink = PcapSink::new(Vec::new(), DEFAULT_SNAPLEN).unwrap();
        for (t, p) in &v {
            sink.write(Time(*t), p).unwrap();
        }
        (v.len(), sink.into_inner())
    };
    let ((ntx, tx), (nrx, rx)) = (write(tx), write(rx));
    println!("{ranges} ranges; sender capture {ntx} packets, receiver capture {nrx}");
    let hosts = [
        (IpAddr::V4(Ipv4Addr::from(c)), Capture::Bytes(&tx)),
        (IpAddr::V4(Ipv4Addr::from(s)), Capture::Bytes(&rx)),
    ];
    for streams in [false, true, false, true] {
        let t0 = Instant::now();
        let run = analyse_run(
            &hosts,
            None,
            &AnalysisOptions {
                streams,
                ..Default::default()
            },
        )
        .unwrap();
        println!(
            "streams {streams:5}: {:.3} s ({} connections, {} streams)",
            t0.elapsed().as_secs_f64(),
            run.conns.len(),
            run.streams.len()
        );
    }
}
