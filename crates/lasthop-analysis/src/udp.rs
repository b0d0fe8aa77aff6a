//! Constant-bit-rate UDP flows (seed 000's "1 UDP" workload): loss, throughput, drops by cause,
//! spacing (jitter) and one-way delay per flow, from the sender's and the receiver's captures.
//! Definitions are in `docs/analysis.md` (*UDP flows*).
//!
//! Our UDP senders put a 16-byte record at the start of each datagram's payload (big-endian):
//! the magic `LHU1`, the sequence number (u32, from 0) and the send time (u64 ns, run-relative).
//! A UDP flow is a 5-tuple whose datagrams carry it; other UDP datagrams are ignored.

use crate::stats::quantile;
use crate::Error;
use lasthop_core::{wire, FlowKey, Time};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;

/// The record the CBR application writes (`lasthop_apps::cbr`): written and read in one place.
pub use lasthop_apps::cbr::Record;

/// One datagram of a UDP flow as a capture saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    pub time: Time,
    pub flow: FlowKey,
    /// The UDP length field: payload + the 8-byte header (an echo's: its ICMP length).
    pub udp_len: u32,
    pub record: Record,
    /// A receiving stack would discard it by its checksums ([`wire::receiver_discards`]: a link
    /// damaged it, `handling = "forward"`). Only the receiver's capture is judged by this: a
    /// sender's capture may hold checksums its NIC fills in later.
    pub discarded: bool,
}

/// Parses an IP datagram (IPv4 or IPv6, possibly only its head) holding a UDP datagram that
/// starts with our record; `None` for anything else (other protocols, later fragments, UDP
/// without the record, headers cut short). `wire_len` is used when a length field is 0.
///
/// An ICMP echo whose payload starts with a latency probe's record (`lasthop_apps::ping`) is a
/// datagram too, of protocol 1 with the echo's identifier as the requester's port (source
/// port of a request, destination port of a reply; the other 0) and the probe's number and
/// send time as its record: [`crate::ping`] reads the probes from these.
pub fn parse_datagram(time: Time, ip: &[u8], wire_len: Option<u32>) -> Option<Datagram> {
    let v = wire::parse_ip(ip)?;
    // A first fragment holds the UDP header and the record; later ones are skipped.
    if v.frag & 0x1fff != 0 {
        return None;
    }
    if v.proto == wire::PROTO_ICMP {
        let e = wire::parse_icmp_echo(v.transport(ip)?)?;
        let r = lasthop_apps::ping::Record::decode(e.payload)?;
        return Some(Datagram {
            time,
            flow: FlowKey {
                proto: wire::PROTO_ICMP,
                src: v.src,
                dst: v.dst,
                // The identifier on the requester's side, as a port pair: a request
                // (ident, 0), its reply (0, ident), so the reply's key is the request's
                // reversed.
                sport: if e.reply { 0 } else { e.ident },
                dport: if e.reply { e.ident } else { 0 },
            },
            udp_len: v
                .datagram_len(wire_len, ip.len())
                .saturating_sub(v.header_len as u32),
            record: Record {
                seq: r.seq,
                sent_ns: r.sent_ns,
            },
            discarded: wire::receiver_discards(ip),
        });
    }
    if v.proto != wire::PROTO_UDP {
        return None;
    }
    let u = wire::parse_udp(v.transport(ip)?)?;
    let record = Record::decode(u.payload)?;
    let udp_len = match u.length {
        0 => v
            .datagram_len(wire_len, ip.len())
            .saturating_sub(v.header_len as u32),
        n => u32::from(n),
    };
    Some(Datagram {
        time,
        flow: FlowKey {
            proto: wire::PROTO_UDP,
            src: v.src,
            dst: v.dst,
            sport: u.sport,
            dport: u.dport,
        },
        udp_len,
        record,
        discarded: wire::receiver_discards(ip),
    })
}

/// Drops of one UDP flow by cause, from the event log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpDrops {
    pub queue: u64,
    /// RED drops and ECN marks (seed 000's "r"; marks of any discipline, as seed 000 counted
    /// them: this project's CBR streams are not ECN-capable, so only RED's ECN runs mark).
    pub red: u64,
    /// CoDel's, PIE's and FQ-CoDel's CoDel drops (causes `codel`, `pie`).
    pub aqm: u64,
    pub error: u64,
    /// MTU and unknown causes.
    pub mtu: u64,
}

/// Quantiles 50/75/90/99 and the maximum, in ms; `None` without samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quantiles {
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

impl Quantiles {
    /// Of `values` (any order).
    pub fn of(values: &[f64]) -> Quantiles {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Quantiles {
            p50: quantile(&v, 0.5),
            p75: quantile(&v, 0.75),
            p90: quantile(&v, 0.9),
            p99: quantile(&v, 0.99),
            max: v.last().copied(),
        }
    }
}

/// One received datagram of a flow (its first copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub seq: u32,
    /// Receiver capture time.
    pub time: Time,
    /// Sender capture time of the same sequence number, if the sender's capture saw it.
    pub sent: Option<Time>,
}

impl Received {
    /// One-way delay (receiver capture time − sender capture time), ns.
    pub fn delay_ns(&self) -> Option<i64> {
        self.sent.map(|s| self.time.0 as i64 - s.0 as i64)
    }
}

/// The statistics of one UDP flow.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpFlowStats {
    pub flow: FlowKey,
    /// Distinct sequence numbers in the sender's capture; `None` without it.
    pub sent: Option<u64>,
    /// Distinct sequence numbers in the receiver's capture.
    pub received: u64,
    /// Copies received beyond the first of a sequence number.
    pub duplicates: u64,
    /// UDP length (payload + 8) summed over the received datagrams (first copies).
    pub bytes: u64,
    /// First copies in receive order.
    pub packets: Vec<Received>,
    /// Drops by cause; `None` without an event log.
    pub drops: Option<UdpDrops>,
}

impl UdpFlowStats {
    pub fn lost(&self) -> Option<u64> {
        self.sent.map(|s| s.saturating_sub(self.received))
    }

    /// lost / sent.
    pub fn loss_rate(&self) -> Option<f64> {
        match (self.sent, self.lost()) {
            (Some(s), Some(l)) if s > 0 => Some(l as f64 / s as f64),
            _ => None,
        }
    }

    /// Time between the first and the last received datagram.
    pub fn duration_ns(&self) -> Option<u64> {
        let (a, b) = (self.packets.first()?, self.packets.last()?);
        Some(b.time.0.saturating_sub(a.time.0))
    }

    /// Received bytes (UDP header included) / time between the first and the last received
    /// datagram, bytes/s (seed 000's UDP throughput); `None` under two datagrams or no time.
    pub fn throughput_bytes_per_s(&self) -> Option<f64> {
        let d = self.duration_ns().filter(|&d| d > 0)?;
        Some(self.bytes as f64 / (d as f64 / 1e9))
    }

    /// Receiver inter-arrival gaps in ms of consecutive sequence numbers (a pair with a loss or
    /// a reordering between them is left out).
    pub fn gaps_ms(&self) -> Vec<f64> {
        self.packets
            .windows(2)
            .filter(|w| w[1].seq == w[0].seq.wrapping_add(1))
            .map(|w| (w[1].time.0 as f64 - w[0].time.0 as f64) / 1e6)
            .collect()
    }

    /// Spacing quantiles (p99 is computed too; the CSV lists 50/75/90 and the max).
    pub fn spacing_ms(&self) -> Quantiles {
        Quantiles::of(&self.gaps_ms())
    }

    /// One-way delays in ms, in receive order.
    pub fn delays_ms(&self) -> Vec<f64> {
        self.packets
            .iter()
            .filter_map(|p| p.delay_ns())
            .map(|d| d as f64 / 1e6)
            .collect()
    }

    pub fn delay_ms(&self) -> Quantiles {
        Quantiles::of(&self.delays_ms())
    }
}

/// Per UDP flow, from every host's datagrams: `hosts` pairs a host's address with the
/// datagrams its capture holds. A flow's sender capture is that of the host with the flow's
/// source address, its receiver capture that of the destination's. Flows are in order of their
/// first datagram in either capture.
pub fn udp_flows(hosts: &[(IpAddr, Vec<Datagram>)]) -> Vec<UdpFlowStats> {
    // flow -> (first seen, sent seq -> first send time, received datagrams in capture order)
    #[derive(Default)]
    struct Acc {
        first: Option<Time>,
        sent: Option<HashMap<u32, Time>>,
        rx: Vec<Datagram>,
    }
    let mut flows: BTreeMap<FlowKey, Acc> = BTreeMap::new();
    for (addr, dgs) in hosts {
        // Latency probes' echoes are `crate::ping`'s.
        for d in dgs.iter().filter(|d| d.flow.proto == wire::PROTO_UDP) {
            let a = flows.entry(d.flow).or_default();
            a.first = Some(a.first.map_or(d.time, |f: Time| f.min(d.time)));
            if d.flow.src == *addr {
                a.sent
                    .get_or_insert_with(HashMap::new)
                    .entry(d.record.seq)
                    .or_insert(d.time);
            }
            // What the receiving stack discarded, its application never read: lost.
            if d.flow.dst == *addr && !d.discarded {
                a.rx.push(*d);
            }
        }
    }
    // A sender whose capture was given but held none of the flow's datagrams sent none.
    for (addr, _) in hosts {
        for (k, a) in flows.iter_mut() {
            if k.src == *addr && a.sent.is_none() {
                a.sent = Some(HashMap::new());
            }
        }
    }
    let mut out: Vec<(Time, UdpFlowStats)> = flows
        .into_iter()
        .map(|(flow, a)| {
            let mut seen = std::collections::HashSet::new();
            let mut packets = vec![];
            let (mut bytes, mut duplicates) = (0u64, 0u64);
            for d in &a.rx {
                if !seen.insert(d.record.seq) {
                    duplicates += 1;
                    continue;
                }
                bytes += u64::from(d.udp_len);
                packets.push(Received {
                    seq: d.record.seq,
                    time: d.time,
                    sent: a.sent.as_ref().and_then(|s| s.get(&d.record.seq)).copied(),
                });
            }
            let stats = UdpFlowStats {
                flow,
                sent: a.sent.as_ref().map(|s| s.len() as u64),
                received: packets.len() as u64,
                duplicates,
                bytes,
                packets,
                drops: None,
            };
            (a.first.unwrap_or(Time(0)), stats)
        })
        .collect();
    out.sort_by_key(|(t, s)| (*t, s.flow));
    out.into_iter().map(|(_, s)| s).collect()
}

/// Every column of `udp_flows.csv`, in order (the schema is [`crate::files::udp_flows`]).
pub use crate::files::udp_flows::COLUMNS as UDP_CSV_COLUMNS;
/// The columns of `udp_packets.csv` ([`crate::files::udp_packets`]).
pub use crate::files::udp_packets::COLUMNS as UDP_PACKETS_COLUMNS;

/// One CSV row (no newline), in [`UDP_CSV_COLUMNS`] order; `n` is the flow's number (from 1).
pub fn udp_csv_row(n: usize, f: &UdpFlowStats) -> String {
    crate::files::row_text(crate::files::udp_flows::UdpFlowRow::of(n, f))
}

/// The text of `udp_flows.csv`.
pub fn udp_csv(flows: &[UdpFlowStats]) -> String {
    crate::files::udp_flows::text(flows, &[])
}

/// The text of `udp_packets.csv` (the series behind the spacing CDF and the delay plot).
pub fn udp_packets_csv(flows: &[UdpFlowStats]) -> String {
    crate::files::udp_packets::text(flows)
}

/// Writes `udp_flows.csv` and `udp_packets.csv` into `dir`, atomically; nothing at all when
/// there is no UDP flow.
pub fn write_udp_files(dir: &Path, flows: &[UdpFlowStats]) -> Result<(), Error> {
    if flows.is_empty() {
        return Ok(());
    }
    let f = lasthop_core::layout::RunFiles::new(dir);
    let io = |path: std::path::PathBuf| {
        move |error| Error::Io {
            path: path.display().to_string(),
            error,
        }
    };
    crate::files::udp_flows::write(&f.udp_flows_csv(), flows).map_err(io(f.udp_flows_csv()))?;
    crate::files::udp_packets::write(&f.udp_packets_csv(), flows).map_err(io(f.udp_packets_csv()))
}
