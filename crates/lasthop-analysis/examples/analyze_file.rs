//! Analyses one pcap capture several times and prints each run's wall time (for profiling the
//! analyser alone, without the CLI's output):
//!
//!     cargo run --release -p lasthop-analysis --example analyze_file -- CAPTURE.pcap [RUNS] [one]
//!
//! With `one`, the records are read and analysed on one thread (`analyze_reader`), for
//! comparison with `analyze_pcap_with`'s two threads; with `parse`, only read and parsed; with
//! `check`, both, checking that they give the same.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("CAPTURE.pcap");
    let runs: u32 = args.next().map_or(1, |s| s.parse().expect("RUNS"));
    let mode = args.next().unwrap_or_default();
    let one = mode == "one";
    if mode == "parse" {
        // Reading and parsing alone.
        for _ in 0..runs {
            let t0 = Instant::now();
            let f = std::fs::File::open(&path).unwrap();
            let mut n = 0u64;
            lasthop_analysis::read_pcap(f, &path, |s| n += u64::from(s.payload_len)).unwrap();
            println!("parsed, {n} bytes in {:.3} s", t0.elapsed().as_secs_f64());
        }
        return;
    }
    if mode == "check" {
        // The two-thread analysis gives what one thread gives.
        let f = std::fs::File::open(&path).unwrap();
        let one = lasthop_analysis::analyze_reader_with(f, &path, Default::default()).unwrap();
        let two = lasthop_analysis::analyze_pcap_with(&path, Default::default()).unwrap();
        assert_eq!(one.conns, two.conns);
        assert_eq!(one.summary, two.summary);
        assert_eq!(one.udp, two.udp);
        println!("same: {} connections, {:?}", one.conns.len(), one.summary);
        return;
    }
    for _ in 0..runs {
        let t0 = Instant::now();
        let conns = if one {
            let f = std::fs::File::open(&path).unwrap();
            lasthop_analysis::analyze_reader(f).unwrap()
        } else {
            lasthop_analysis::analyze_pcap_with(&path, Default::default())
                .unwrap()
                .conns
        };
        let segs: u64 = conns.iter().map(|c| c.c2s.packets + c.s2c.packets).sum();
        println!(
            "{} connections, {segs} segments in {:.3} s",
            conns.len(),
            t0.elapsed().as_secs_f64()
        );
    }
}
