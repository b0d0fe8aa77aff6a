//! Seed 004's workload and middlebox emulated with real Linux: repeated short transfers
//! (`lasthop app repeat-send` / `repeat-recv`) and the TCP rate controller rewriting the windows
//! of real ACKs. Needs root; without it the test says SKIPPED and why (and fails when
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use pcap_file::pcap::PcapReader;
use std::path::Path;

const LINK: &str = r#"
mtu = "1500B"
[both]
rate = "2Mbit"
delay = "10ms"
lsb = "1500B"
link_ack = false
[down.queue]
packets = 500
"#;

/// Two pairs across a 2 Mbit/s, 10 ms link: a greedy transfer s0 -> r0 and repeated 10 KB
/// transfers s1 -> r1 with 250 ms pauses, behind the rate controller (windows only).
const SCENARIO: &str = r#"
name = "emu-seed004"
duration = "4s"
link = "link.toml"
[hosts.s]
side = "fixed"
count = 2
[hosts.r]
side = "mobile"
count = 2
[[flows]]
kind = "bulk"
from = "s0"
to = "r0"
bytes = 4000000
[[flows]]
kind = "repeat"
from = "s1"
to = "r1"
bytes = 10240
pause = "250ms"
[[middleboxes]]
kind = "rate_control"
pace_acks = false
"#;

/// (time ns, source address, TCP flags, window field, window scale option) of a TCP packet.
type Seg = (u64, [u8; 4], u8, u16, Option<u8>);

fn tcp_packets(path: &Path) -> Vec<Seg> {
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let d = &p.data;
        if d.len() < 40 || d[9] != 6 {
            continue;
        }
        let ihl = usize::from(d[0] & 0x0f) * 4;
        let t = &d[ihl..];
        let (flags, window) = (t[13], u16::from_be_bytes([t[14], t[15]]));
        let doff = usize::from(t[12] >> 4) * 4;
        let mut ws = None;
        let mut o = &t[20..doff.min(t.len())];
        while let Some((&k, rest)) = o.split_first() {
            match k {
                0 => break,
                1 => o = rest,
                _ => {
                    let Some(&len) = rest.first() else { break };
                    let len = usize::from(len);
                    if len < 2 || len > o.len() {
                        break;
                    }
                    if k == 3 && len == 3 {
                        ws = Some(o[2]);
                    }
                    o = &o[len..];
                }
            }
        }
        let src = [d[12], d[13], d[14], d[15]];
        out.push((p.timestamp.as_nanos() as u64, src, flags, window, ws));
    }
    out
}

#[test]
fn emu_repeated_transfers_and_rate_control_on_real_linux() {
    if !common::can_emulate("emu_repeated_transfers_and_rate_control_on_real_linux") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("link.toml"), LINK).unwrap();
    let spec = tmp.path().join("scenario.toml");
    std::fs::write(&spec, SCENARIO).unwrap();
    let out = tmp.path().join("out");
    let stdout = common::lasthop_ok(&[
        "emu",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    println!("{stdout}");

    // Repeated transfers: each a complete connection from s1 (198.18.0.2), one after another
    // with at least the 250 ms pause between one's end and the next one's SYN. Each takes
    // about 2 round trips of 20 ms plus 10 KB at up to 2 Mbit/s (41 ms): at least 6 fit in 4 s.
    let rows = std::fs::read_to_string(out.join("connections.csv")).unwrap();
    let mut header = rows.lines().next().unwrap().split(',');
    let col = |name: &str| header.clone().position(|c| c == name).unwrap();
    let (client, start, end, complete) =
        (col("client"), col("start_s"), col("end_s"), col("complete"));
    header.next();
    let transfers: Vec<(f64, f64, bool)> = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| r[client].starts_with("198.18.0.2:"))
        .map(|r| {
            (
                r[start].parse().unwrap(),
                r[end].parse().unwrap(),
                r[complete] == "1",
            )
        })
        .collect();
    assert!(transfers.len() >= 6, "{transfers:?}");
    assert!(
        transfers[..transfers.len() - 1].iter().all(|t| t.2),
        "{transfers:?}"
    );
    for w in transfers.windows(2) {
        assert!(w[1].0 - w[0].1 >= 0.249, "pause too short: {w:?}");
    }

    // Rate control: the router rewrote r0's ACKs. Two open flows share 2 Mbit/s: 125 000
    // bytes/s each; with a base round trip near 20 ms that is 1.7 packets, so the window is the
    // floor of 2 segments (2 × 1460 bytes at most); while the short flow pauses, r0's flow has
    // the whole 250 000 bytes/s, 3.4 packets. So the ACKs r0 (198.19.0.1) sent after the first
    // second offer s0 a few segments (rounded down to r0's window scale, and an edge already
    // offered kept), where Linux's own would offer tens of kilobytes.
    let events = std::fs::read_to_string(out.join("events.csv")).unwrap();
    assert!(events.contains(",mbox_rewrite,up,"), "no ACK was rewritten");
    let s0 = tcp_packets(&out.join("s0.pcap"));
    let scale = s0
        .iter()
        .find(|p| p.1 == [198, 19, 0, 1] && p.2 & 0x12 == 0x12)
        .and_then(|p| p.4)
        .unwrap_or(0);
    let windows: Vec<u64> = s0
        .iter()
        .filter(|p| p.1 == [198, 19, 0, 1] && p.0 > 1_000_000_000 && p.2 & 0x02 == 0)
        .map(|p| u64::from(p.3) << scale)
        .collect();
    assert!(windows.len() > 50, "{} ACKs after 1 s", windows.len());
    let mut sorted = windows.clone();
    sorted.sort_unstable();
    let (median, max) = (sorted[sorted.len() / 2], sorted[sorted.len() - 1]);
    // The base round trip the router measures includes r0's delayed ACKs (Linux's quick-ACK
    // mode ends early in a transfer): up to 4 segments.
    assert!(median <= 4 * 1460, "median window {median} (scale {scale})");
    assert!(max <= 8 * 1460, "largest window {max} (scale {scale})");
    // What r0 itself offered: the rewriting cut it at least tenfold.
    let mut own: Vec<u64> = tcp_packets(&out.join("r0.pcap"))
        .iter()
        .filter(|p| p.1 == [198, 19, 0, 1] && p.0 > 1_000_000_000 && p.2 & 0x02 == 0)
        .map(|p| u64::from(p.3) << scale)
        .collect();
    own.sort_unstable();
    assert!(
        own[own.len() / 2] >= 10 * median,
        "r0 offered {} (median)",
        own[own.len() / 2]
    );
}
