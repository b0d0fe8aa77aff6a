//! The progress line `lasthop emu` prints on stderr every few seconds of a run: elapsed real
//! time, the payload bytes each flow has had delivered to its receiving host, and the lateness
//! of the releases so far.
//!
//! A flow's data goes to its server end (`to`, its port): a bulk client sends, a CBR client
//! streams. For TCP the count is the highest sequence number delivered past the SYN (each byte
//! once, retransmissions not counted twice); for UDP the payload bytes of the datagrams delivered.

use lasthop_core::wire::{parse_ip, parse_tcp, parse_udp, PROTO_TCP, PROTO_UDP, SYN};
use lasthop_core::Time;
use lasthop_scenario::Scenario;
use std::fmt::Write as _;
use std::net::IpAddr;

/// How often the line is printed.
pub const EVERY_NS: u64 = 5_000_000_000;

#[derive(Debug, Clone)]
struct FlowProgress {
    dst: IpAddr,
    port: u16,
    /// TCP: the receiver's initial sequence number (from the SYN) and the highest end seen.
    isn: Option<u32>,
    high: u32,
    /// UDP payload bytes.
    udp: u64,
}

impl FlowProgress {
    fn delivered(&self) -> u64 {
        match self.isn {
            Some(isn) => u64::from(self.high.wrapping_sub(isn.wrapping_add(1))),
            None => self.udp,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Progress {
    flows: Vec<FlowProgress>,
    next_ns: u64,
    /// Lateness so far: releases, worst, and how many later than 1 ms (no sorting in the loop).
    releases: u64,
    max_late: u64,
    over_1ms: u64,
}

impl Progress {
    pub fn new(sc: &Scenario) -> Progress {
        Progress {
            flows: sc
                .flows
                .iter()
                .map(|f| FlowProgress {
                    dst: IpAddr::V4(sc.hosts[f.to].address),
                    port: f.port,
                    isn: None,
                    high: 0,
                    udp: 0,
                })
                .collect(),
            next_ns: EVERY_NS,
            releases: 0,
            max_late: 0,
            over_1ms: 0,
        }
    }

    /// A packet handed to a host (IP bytes).
    pub fn delivered(&mut self, data: &[u8]) {
        let Some(ip) = parse_ip(data) else { return };
        let Some(rest) = ip.transport(data) else {
            return;
        };
        match ip.proto {
            PROTO_TCP => {
                let Some(t) = parse_tcp(rest, false) else {
                    return;
                };
                let Some(f) = self
                    .flows
                    .iter_mut()
                    .find(|f| f.dst == ip.dst && f.port == t.dport)
                else {
                    return;
                };
                if t.has(SYN) {
                    f.isn = Some(t.seq);
                    f.high = t.seq.wrapping_add(1);
                    return;
                }
                let Some(isn) = f.isn else { return };
                let len =
                    (ip.total_len as usize).saturating_sub(ip.header_len + t.header_len) as u32;
                let end = t.seq.wrapping_add(len);
                // Ahead of the highest end so far (in sequence space, from the ISN).
                if end.wrapping_sub(isn) > f.high.wrapping_sub(isn) {
                    f.high = end;
                }
            }
            PROTO_UDP => {
                let Some(u) = parse_udp(rest) else { return };
                if let Some(f) = self
                    .flows
                    .iter_mut()
                    .find(|f| f.dst == ip.dst && f.port == u.dport)
                {
                    f.udp += u64::from(u.length.saturating_sub(8));
                }
            }
            _ => {}
        }
    }

    /// A release `late_ns` after its scheduled time.
    pub fn lateness(&mut self, late_ns: u64) {
        self.releases += 1;
        self.max_late = self.max_late.max(late_ns);
        if late_ns > crate::LATE_THRESHOLD_NS {
            self.over_1ms += 1;
        }
    }

    /// The progress line when it is due at `now` (run-relative), else `None`.
    pub fn due(&mut self, now: Time) -> Option<String> {
        if now.as_nanos() < self.next_ns {
            return None;
        }
        while self.next_ns <= now.as_nanos() {
            self.next_ns += EVERY_NS;
        }
        Some(self.line(now))
    }

    pub fn line(&self, now: Time) -> String {
        let mut s = format!("[{:>6.1} s]", now.as_secs_f64());
        for (i, f) in self.flows.iter().enumerate() {
            let _ = write!(s, " flow{i} {} B;", f.delivered());
        }
        let _ = write!(
            s,
            " lateness: {} releases, max {:.3} ms, {} later than 1 ms",
            self.releases,
            self.max_late as f64 / 1e6,
            self.over_1ms
        );
        s
    }

    /// Bytes delivered to flow `i`'s receiver so far.
    pub fn flow_bytes(&self, i: usize) -> u64 {
        self.flows[i].delivered()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::wire::{ACK, PROTO_TCP};

    fn tcp(dst: [u8; 4], dport: u16, seq: u32, flags: u8, payload: usize) -> Vec<u8> {
        let total = 40 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = PROTO_TCP;
        p[12..16].copy_from_slice(&[198, 18, 0, 1]);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = flags;
        p
    }

    #[test]
    fn counts_each_tcp_byte_once_and_prints_every_five_seconds() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("l.toml"), "[both]\nrate = \"64kbit\"\n").unwrap();
        let sc = Scenario::from_str_in(
            "duration = \"60s\"\nlink = \"l.toml\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n[[flows]]\nkind = \"bulk\"\nfrom = \"a\"\nto = \"b\"\nbytes = 10000\n",
            d.path(),
        )
        .unwrap();
        let b = sc.hosts[1].address.octets();
        let port = sc.flows[0].port;
        let mut p = Progress::new(&sc);
        let isn = u32::MAX - 100; // wraps during the transfer
        p.delivered(&tcp(b, port, isn, SYN, 0));
        p.delivered(&tcp(b, port, isn.wrapping_add(1), ACK, 536));
        p.delivered(&tcp(b, port, isn.wrapping_add(537), ACK, 536));
        // A retransmission of the first segment adds nothing.
        p.delivered(&tcp(b, port, isn.wrapping_add(1), ACK, 536));
        // Another port, another host: not this flow.
        p.delivered(&tcp(b, port + 1, isn.wrapping_add(1073), ACK, 536));
        p.delivered(&tcp(
            [198, 19, 0, 9],
            port,
            isn.wrapping_add(1073),
            ACK,
            536,
        ));
        assert_eq!(p.flow_bytes(0), 1072);
        p.lateness(20_000);
        p.lateness(2_500_000);
        assert_eq!(p.due(Time(1_000_000_000)), None);
        let line = p.due(Time(5_000_000_001)).unwrap();
        assert_eq!(
            line,
            "[   5.0 s] flow0 1072 B; lateness: 2 releases, max 2.500 ms, 1 later than 1 ms"
        );
        assert_eq!(p.due(Time(6_000_000_000)), None);
        assert!(p.due(Time(10_000_000_000)).is_some());
    }
}
