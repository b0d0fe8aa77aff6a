//! Latency probes (`kind = "ping"`): each probe's round-trip time from the client host's
//! capture, the time between its ICMP echo request leaving and its reply arriving, the same way
//! in both modes (`docs/analysis.md`, *Latency probes*). The server host's capture is not
//! needed: a request without a reply in the client's capture is lost, wherever it was.
//!
//! The probes' echoes carry `lasthop_apps::ping::Record` (magic `LHP1`); `udp::parse_datagram`
//! reads them into the same [`Datagram`]s as UDP flows, with protocol 1 and the echo's
//! identifier (the flow's port) as the requester's port: a request's source port, a reply's
//! destination port (the other 0).

use crate::stats::quantile;
use crate::udp::Datagram;
use lasthop_core::{wire, FlowKey, Time};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

/// One probe: its request's and its reply's capture times at the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The probe's number (the record's, from 0).
    pub seq: u32,
    pub sent: Time,
    /// The first reply's arrival; `None`: no reply (lost either way, or discarded damaged).
    pub reply: Option<Time>,
}

impl Probe {
    pub fn rtt_ns(&self) -> Option<u64> {
        self.reply.map(|r| r.0.saturating_sub(self.sent.0))
    }
}

/// One probe flow (a client pinging a server with one identifier).
#[derive(Clone, Debug, PartialEq)]
pub struct PingStats {
    /// Client to server, protocol 1, the identifier as the source port (destination port 0).
    pub flow: FlowKey,
    /// In send order.
    pub probes: Vec<Probe>,
    /// Replies beyond the first of a probe.
    pub duplicates: u64,
}

impl PingStats {
    pub fn sent(&self) -> u64 {
        self.probes.len() as u64
    }

    pub fn replied(&self) -> u64 {
        self.probes.iter().filter(|p| p.reply.is_some()).count() as u64
    }

    /// Round-trip times in ms, in send order.
    pub fn rtts_ms(&self) -> Vec<f64> {
        self.probes
            .iter()
            .filter_map(|p| p.rtt_ns())
            .map(|n| n as f64 / 1e6)
            .collect()
    }

    /// (min, mean, p50, p90, p99, max) of the round-trip times, ms; `None` without a reply.
    pub fn rtt_summary_ms(&self) -> Option<RttSummary> {
        let mut v = self.rtts_ms();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(RttSummary {
            min: v[0],
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: quantile(&v, 0.5)?,
            p90: quantile(&v, 0.9)?,
            p99: quantile(&v, 0.99)?,
            max: v[v.len() - 1],
        })
    }
}

/// A probe flow's round-trip times, ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttSummary {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// The probe flows of a run, from every host's datagrams (`hosts` pairs a host's address with
/// its capture's datagrams): the requests a host sent and the replies it received, matched by
/// the record's probe number. In order of their first request.
pub fn pings(hosts: &[(IpAddr, Vec<Datagram>)]) -> Vec<PingStats> {
    #[derive(Default)]
    struct Acc {
        sent: BTreeMap<u32, Time>,
        replies: HashMap<u32, Time>,
        duplicates: u64,
    }
    let mut flows: BTreeMap<FlowKey, Acc> = BTreeMap::new();
    for (addr, dgs) in hosts {
        for d in dgs.iter().filter(|d| d.flow.proto == wire::PROTO_ICMP) {
            if d.flow.src == *addr && d.flow.sport != 0 {
                // A request this host sent: the first capture of each probe number.
                flows
                    .entry(d.flow)
                    .or_default()
                    .sent
                    .entry(d.record.seq)
                    .or_insert(d.time);
            }
        }
    }
    for (addr, dgs) in hosts {
        for d in dgs.iter().filter(|d| d.flow.proto == wire::PROTO_ICMP) {
            // A reply to one of this host's probe flows, not discarded by its stack.
            let Some(a) = flows.get_mut(&d.flow.reversed()) else {
                continue;
            };
            if d.flow.dst != *addr || d.discarded {
                continue;
            }
            match a.replies.entry(d.record.seq) {
                std::collections::hash_map::Entry::Occupied(_) => a.duplicates += 1,
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(d.time);
                }
            }
        }
    }
    let mut out: Vec<PingStats> = flows
        .into_iter()
        .map(|(flow, a)| PingStats {
            flow,
            probes: a
                .sent
                .iter()
                .map(|(&seq, &sent)| Probe {
                    seq,
                    sent,
                    // A reply captured before its request (not possible on one host's clock)
                    // would be another probe's: not this one's.
                    reply: a.replies.get(&seq).copied().filter(|&r| r >= sent),
                })
                .collect(),
            duplicates: a.duplicates,
        })
        .collect();
    out.sort_by_key(|p| (p.probes.first().map(|p| p.sent), p.flow));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::wire::build_ipv4_icmp_echo;
    use std::net::Ipv4Addr;

    fn echo(t: u64, reply: bool, seq: u32) -> Datagram {
        let (c, s) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1));
        let rec = lasthop_apps::ping::Record { seq, sent_ns: 0 }.encode();
        let (src, dst) = if reply { (s, c) } else { (c, s) };
        let p = build_ipv4_icmp_echo(src, dst, reply, 5002, seq as u16, 0, &rec, 84);
        crate::udp::parse_datagram(Time(t), &p.data, Some(p.wire_len)).unwrap()
    }

    #[test]
    fn round_trips_from_the_clients_capture() {
        let client: IpAddr = Ipv4Addr::new(198, 18, 0, 1).into();
        let server: IpAddr = Ipv4Addr::new(198, 18, 1, 1).into();
        // Probes 0..3 every second; 0 answered after 621 ms, 1 lost, 2 answered twice
        // (the second a duplicate), 3 answered after 1.5 s (after probe 4 left).
        let ms = 1_000_000;
        let at_client = vec![
            echo(0, false, 0),
            echo(621 * ms, true, 0),
            echo(1000 * ms, false, 1),
            echo(2000 * ms, false, 2),
            echo(2700 * ms, true, 2),
            echo(2800 * ms, true, 2),
            echo(3000 * ms, false, 3),
            echo(4000 * ms, false, 4),
            echo(4500 * ms, true, 3),
        ];
        // The server's capture adds nothing to the round trips.
        let at_server = vec![echo(310 * ms, false, 0), echo(311 * ms, true, 0)];
        let p = pings(&[(client, at_client), (server, at_server)]);
        assert_eq!(p.len(), 1);
        let f = &p[0];
        assert_eq!(
            (
                f.flow.src,
                f.flow.dst,
                f.flow.sport,
                f.flow.dport,
                f.flow.proto
            ),
            (client, server, 5002, 0, 1)
        );
        assert_eq!((f.sent(), f.replied(), f.duplicates), (5, 3, 1));
        assert_eq!(f.rtts_ms(), vec![621.0, 700.0, 1500.0]);
        let s = f.rtt_summary_ms().unwrap();
        assert_eq!((s.min, s.p50, s.max), (621.0, 700.0, 1500.0));
        assert!((s.mean - 940.333_333).abs() < 1e-3, "{s:?}");
        assert_eq!(f.probes[4].reply, None);
    }
}
