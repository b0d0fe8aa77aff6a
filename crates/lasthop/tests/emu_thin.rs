//! Seed 003's thin streams emulated with real Linux (`lasthop app thin-send`, `thin-recv`)
//! beside the simulated ones: the same seed gives every stream the same payloads in both modes,
//! one segment per write with TCP_NODELAY, about one ITT apart. Needs root; without it the test
//! says SKIPPED and why (and fails when `LASTHOP_ROOT_TESTS=1`).

mod common;

use pcap_file::pcap::PcapReader;
use std::collections::BTreeMap;
use std::path::Path;

const LINK: &str = "mtu = \"1500B\"\n[both]\nrate = \"5000kbit\"\ndelay = \"10ms\"\n";

const SCENARIO: &str = r#"
name = "emu-thin"
duration = "3s"
link = "link.toml"
[hosts.s]
side = "fixed"
tcp = { nagle = false }
[hosts.r]
side = "mobile"
# An ACK for every segment in both modes, so no write waits for the window.
tcp = { delayed_ack = "off" }
route = { quickack = true }
[[flows]]
kind = "thin"
from = "s"
to = "r"
streams = 3
payload = "120:30"
itt = "30:3"
duration = "2s"
"#;

/// A stream's data segments: (time ns, payload length).
type Segments = Vec<(u64, usize)>;

/// One client port's first data time, its segments, and the next sequence number expected.
type PortState = (u64, Segments, u32);

/// Per client port (in order of first data), the payload lengths and times of its segments
/// from s (198.18.0.1), first sendings only.
fn streams(pcap: &Path) -> Vec<Segments> {
    let mut r = PcapReader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut by_port: BTreeMap<u16, PortState> = BTreeMap::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let d = &p.data;
        if d[9] != 6 || d[12..16] != [198, 18, 0, 1] {
            continue;
        }
        let ihl = usize::from(d[0] & 0x0f) * 4;
        let doff = usize::from(d[ihl + 12] >> 4) * 4;
        let len = p.orig_len as usize - ihl - doff;
        let port = u16::from_be_bytes([d[ihl], d[ihl + 1]]);
        let seq = u32::from_be_bytes([d[ihl + 4], d[ihl + 5], d[ihl + 6], d[ihl + 7]]);
        let t = p.timestamp.as_nanos() as u64;
        let e = by_port.entry(port).or_insert((u64::MAX, vec![], 0));
        if len == 0 {
            continue;
        }
        // A retransmission starts below the highest sequence sent.
        if e.1.is_empty() || seq.wrapping_sub(e.2) as i32 >= 0 {
            e.0 = e.0.min(t);
            e.1.push((t, len));
            e.2 = seq.wrapping_add(len as u32);
        }
    }
    let mut v: Vec<_> = by_port.into_values().filter(|e| !e.1.is_empty()).collect();
    v.sort_by_key(|e| e.0);
    v.into_iter().map(|e| e.1).collect()
}

#[test]
fn emu_thin_streams_send_the_models_payloads() {
    if !common::can_emulate("emu_thin_streams_send_the_models_payloads") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("link.toml"), LINK).unwrap();
    let spec = tmp.path().join("scenario.toml");
    std::fs::write(&spec, SCENARIO).unwrap();
    let (sim, emu) = (tmp.path().join("sim"), tmp.path().join("emu"));
    common::lasthop_ok(&[
        "sim",
        spec.to_str().unwrap(),
        "--out",
        sim.to_str().unwrap(),
    ]);
    let out = common::lasthop_ok(&[
        "emu",
        spec.to_str().unwrap(),
        "--out",
        emu.to_str().unwrap(),
    ]);
    println!("{out}");
    let (a, b) = (streams(&sim.join("s.pcap")), streams(&emu.join("s.pcap")));
    assert_eq!((a.len(), b.len()), (3, 3), "three streams in each");
    let lens = |v: &[(u64, usize)]| v.iter().map(|s| s.1).collect::<Vec<_>>();
    // The three real programs start at the same instant, so which connects first is up to the
    // scheduler: pair each simulated stream with the emulated one that opens with its first
    // five drawn sizes (sizes from 120:30, so two streams cannot share them by chance).
    let mut paired = vec![];
    for (k, x) in a.iter().enumerate() {
        let j = b.iter().position(|y| lens(&y[..5]) == lens(&x[..5]));
        let j = j.unwrap_or_else(|| {
            panic!(
                "stream {k}: no emulated stream opens with its payloads {:?}",
                lens(&x[..5])
            )
        });
        assert!(
            !paired.contains(&j),
            "stream {k}: emulated stream {j} paired twice"
        );
        paired.push(j);
    }
    for (k, (x, y)) in a.iter().zip(paired.iter().map(|&j| &b[j])).enumerate() {
        // About 2 s / 30 ms = 67 writes per stream, each one segment of the same drawn size.
        assert!(
            (60..75).contains(&x.len()),
            "stream {k}: {} writes simulated",
            x.len()
        );
        let n = x.len().min(y.len());
        assert!(
            n + 2 >= x.len(),
            "stream {k}: {} against {} writes",
            x.len(),
            y.len()
        );
        assert_eq!(
            lens(&x[..n]),
            lens(&y[..n]),
            "stream {k}: the payloads differ"
        );
        // Real spacing: the ITT draws, 30:3 ms, give a median gap near 30 ms.
        let mut gaps: Vec<u64> = y.windows(2).map(|w| w[1].0 - w[0].0).collect();
        gaps.sort_unstable();
        let median = gaps[gaps.len() / 2];
        assert!(
            (27_000_000..33_000_000).contains(&median),
            "stream {k}: median gap {median} ns"
        );
    }
}
