//! Helpers the simulator's integration tests share.

use lasthop_core::Time;
use pcap_file::pcap::PcapReader;
use std::path::Path;

/// (time, source port, payload length) of each TCP data segment in a capture.
pub fn tcp_data(pcap: &Path) -> Vec<(Time, u16, usize)> {
    let mut r = PcapReader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut out = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        if p.data[9] != 6 {
            continue;
        }
        let ihl = usize::from(p.data[0] & 0x0f) * 4;
        let doff = usize::from(p.data[ihl + 12] >> 4) * 4;
        let len = p.orig_len as usize - ihl - doff;
        if len > 0 {
            let sport = u16::from_be_bytes([p.data[ihl], p.data[ihl + 1]]);
            out.push((Time(p.timestamp.as_nanos() as u64), sport, len));
        }
    }
    out
}
