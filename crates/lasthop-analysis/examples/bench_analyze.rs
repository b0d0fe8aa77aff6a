//! Times the analyser on a generated capture of about a million packets (header-only records
//! with nanosecond timestamps, as the simulator writes them): 20 interleaved bulk transfers of
//! 536-byte segments, every second segment ACKed, 1% of segments retransmitted after 3 dupacks.
//!
//!     cargo run --release -p lasthop-analysis --example bench_analyze [-- PACKETS [KEEP.pcap]]
//!
//! Prints the time to read and analyse the file and the rate. Not a test: timings live here.

use lasthop_core::output::{PcapSink, DEFAULT_SNAPLEN};
use lasthop_core::{Packet, Time};
use std::io::BufWriter;
use std::time::Instant;

fn header(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, seq: u32, ack: u32, flags: u8) -> Vec<u8> {
    let mut p = Vec::with_capacity(40);
    p.extend_from_slice(&[0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(&sp.to_be_bytes());
    p.extend_from_slice(&dp.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    p
}

fn packet(mut hdr: Vec<u8>, payload: u32) -> Packet {
    let total = 40 + payload;
    hdr[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    Packet::with_wire_len(hdr, total)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let target: u64 = args
        .next()
        .map(|s| s.parse().expect("PACKETS"))
        .unwrap_or(1_000_000);
    let keep = args.next();
    let dir = tempfile::tempdir().unwrap();
    let path = keep
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("bench.pcap"));

    let t0 = Instant::now();
    let f = BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut sink = PcapSink::new(f, DEFAULT_SNAPLEN).unwrap();
    let conns = 20u32;
    let mss = 536u32;
    let (c, s) = ([198, 18, 0, 1], [198, 19, 0, 1]);
    let mut seq = vec![1u32; conns as usize];
    let mut n = 0u64;
    let mut t = 0u64;
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let emit = |sink: &mut PcapSink<_>, t: u64, p: Packet, n: &mut u64| {
        sink.write(Time(t), &p).unwrap();
        *n += 1;
    };
    for k in 0..conns {
        let port = 10_000 + k as u16;
        emit(
            &mut sink,
            t,
            packet(header(c, s, port, 80, 0, 0, 0x02), 0),
            &mut n,
        );
        emit(
            &mut sink,
            t + 1,
            packet(header(s, c, 80, port, 0, 1, 0x12), 0),
            &mut n,
        );
        emit(
            &mut sink,
            t + 2,
            packet(header(c, s, port, 80, 1, 1, 0x10), 0),
            &mut n,
        );
        t += 3;
    }
    while n < target {
        for k in 0..conns {
            let port = 10_000 + k as u16;
            let i = k as usize;
            t += 50_000;
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let lost = rng % 100 == 0;
            let a = seq[i];
            emit(
                &mut sink,
                t,
                packet(header(s, c, 80, port, a, 1, 0x10), mss),
                &mut n,
            );
            emit(
                &mut sink,
                t + 1,
                packet(header(s, c, 80, port, a + mss, 1, 0x10), mss),
                &mut n,
            );
            if lost {
                // three dupacks of `a`, then the retransmission and the ACK of both
                for d in 0..4 {
                    emit(
                        &mut sink,
                        t + 2 + d,
                        packet(header(c, s, port, 80, 1, a, 0x10), 0),
                        &mut n,
                    );
                }
                emit(
                    &mut sink,
                    t + 10,
                    packet(header(s, c, 80, port, a, 1, 0x10), mss),
                    &mut n,
                );
            }
            emit(
                &mut sink,
                t + 20,
                packet(header(c, s, port, 80, 1, a + 2 * mss, 0x10), 0),
                &mut n,
            );
            seq[i] = a + 2 * mss;
        }
    }
    drop(sink.into_inner());
    let size = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "generated {n} packets ({:.1} MB) in {:.2} s",
        size as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );

    // an event log of the same size: arrive and release rows, 1% of them drops
    let ev = dir.path().join("events.csv");
    {
        use std::io::Write;
        let mut w = BufWriter::new(std::fs::File::create(&ev).unwrap());
        w.write_all(b"time_ns,event,dir,packet,flow,ip_id,tcp_seq,tcp_ack,tcp_len,bytes,queue_pkts,queue_bytes,lsb_bytes,lrb_bytes,cause,attempt,state,delay_ns,actual_ns\n").unwrap();
        for i in 0..n / 2 {
            let k = i % u64::from(conns);
            let seq = 1 + (i / u64::from(conns)) as u32 * mss;
            let flow = format!("tcp:198.19.0.1:80>198.18.0.1:{}", 10_000 + k);
            writeln!(
                w,
                "{},arrive,down,{i},{flow},1,{seq},1,{mss},576,0,0,0,0,,,,,",
                i * 1000
            )
            .unwrap();
            let (e, cause) = if i % 100 == 0 {
                ("drop", "queue")
            } else {
                ("release", "")
            };
            writeln!(
                w,
                "{},{e},down,{i},{flow},1,{seq},1,{mss},576,0,0,0,0,{cause},,,,",
                i * 1000 + 500
            )
            .unwrap();
        }
    }
    let t2 = Instant::now();
    let log = lasthop_analysis::EventLog::load(&ev).unwrap();
    let dt2 = t2.elapsed().as_secs_f64();
    println!(
        "EventLog::load: {} rows in {dt2:.3} s ({:.2} M rows/s)",
        log.rows,
        log.rows as f64 / dt2 / 1e6
    );

    let t1 = Instant::now();
    let res = lasthop_analysis::analyze_pcap(&path).unwrap();
    let dt = t1.elapsed().as_secs_f64();
    let rexmt: u64 = res.iter().map(|c| c.s2c.rexmt_pkts).sum();
    println!(
        "analyze_pcap: {n} packets, {} connections, {rexmt} retransmissions in {dt:.3} s ({:.2} M packets/s)",
        res.len(),
        n as f64 / dt / 1e6
    );
}
