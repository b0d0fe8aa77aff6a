//! Redundant data bundling (RDB) at the router, for senders whose kernels have none: seed 003's
//! RDBv2 bundling (Opstad 2015, extract §3.3) done on the wire. Each new small TCP data segment
//! of a bundled sender is rewritten to carry the previous still-unacknowledged bytes in front of
//! its new data, as RDBv2's `redundant_data_bundling` would have sent it, so that one lost packet
//! is repaired by the next one instead of by a retransmission.
//!
//! What the middlebox does, per TCP flow whose sender is one of `hosts` (by source address):
//!
//! - **New data only.** A segment is new when it starts at the highest sequence number seen so
//!   far (the sender's `snd_nxt` as the wire shows it); a retransmission (it starts below) passes
//!   untouched, as RDBv2's `do_rdb` returns at once for `retrans`. SYN, FIN, RST and URG
//!   segments pass untouched too (RDBv1 refuses SYN/FIN; an RDB packet is plain data).
//! - **What is bundled** (`rdb_can_bundle_check`, extract §3.3 step 4): the previous new-data
//!   segments, walking back from the newest, while `bytes + len ≤ MSS`, `≤ max_bytes` if set,
//!   and at most `max_segments` of them if set (the count starts at 1 for the new segment and is
//!   tested before a segment is added, so `max_segments = 1` bundles exactly one). A segment's
//!   whole length counts against the limits even when a prefix of it is acknowledged; the
//!   acknowledged prefix is skipped when the bytes are copied. Nothing is bundled when the
//!   newest previous segment is SACKed (`redundant_data_bundling`'s first test).
//! - **MSS.** The `mss` parameter, else the MSS option of the receiver's SYN-ACK (what the
//!   sender may send), else of the sender's SYN; less the TCP options each data segment carries
//!   (12 bytes of timestamps on Linux), which is Linux's `mss_now`: 1460 − 12 = 1448 at MTU 1500.
//!   A flow whose MSS the middlebox never learned is not bundled.
//! - **Acknowledgements.** The other direction's ACKs advance `snd_una` (segments wholly below
//!   it are forgotten) and their SACK blocks mark segments SACKed.
//! - **Thin test** (`run_rdb`, extract §3.3 step 2 and §3.4): with `pif_limit = N` (SPIFL) only
//!   while the packets in flight are fewer than N; with `itt_min = "10ms"` (DPIFL) while they are
//!   fewer than ⌊RTT_min / ITT_min⌋ in whole milliseconds, RTT_min the smallest time the
//!   middlebox measured between a data segment passing and the first ACK covering it (segments
//!   sent once only, Karn's rule), and without a sample yet always; with neither, always (as
//!   RDBv1, which had no limit). Packets in flight are the new-data segments passed and not yet
//!   cumulatively acknowledged, Linux's `packets_out` before the new segment is counted.
//!
//! Real and virtual payloads: in emulation packets carry their bytes, the middlebox keeps each
//! segment's bytes and the rewritten packet carries the real redundant bytes with fresh IP and
//! TCP checksums (`lasthop_core::wire::rebuild_tcp_ipv4`). In simulation payloads are virtual:
//! only the sequence number and the length change, so the TCP model receives the same byte
//! ranges a real receiver would.
//!
//! What it cannot reproduce of RDBv2 (docs/link-model.md): everything the sender's own kernel
//! does with RDB, i.e. hidden-loss detection and the congestion reaction (CWR or TFRC-SP) in
//! `rdb_ack` and `cong_avoid`, the quick ACK RDB asks of the receiver, and the exact
//! `packets_out` and `minrtt` (seen here only from the wire, at the router).

use crate::dir::Dir;
use crate::middlebox::hook::{Action, Inject, Middlebox};
use crate::model::Link;
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::wire::{self, seq_le, seq_lt, ACK, FIN, RST, SYN, URG};
use lasthop_core::{Dur, FlowKey, Packet, Time};
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    hosts: Option<Vec<String>>,
    mss: Option<u32>,
    max_bytes: Option<u32>,
    max_segments: Option<u32>,
    pif_limit: Option<u32>,
    itt_min: Option<Dur>,
}

/// When a flow counts as thin (RDBv2's `run_rdb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinTest {
    /// Always (RDBv1: no limit).
    Always,
    /// SPIFL: packets in flight below this many.
    PifLimit(u32),
    /// DPIFL: packets in flight below RTT_min / ITT_min (whole milliseconds).
    IttMin(Dur),
}

/// The bundler's validated parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RdbConfig {
    /// The bundled senders, as written (host or host group names).
    pub hosts: Vec<String>,
    /// Their addresses (filled in by the scenario, which knows the hosts).
    pub senders: Vec<IpAddr>,
    /// MSS option value to use instead of the SYNs' (bytes, before TCP options).
    pub mss: Option<u32>,
    /// At most this many bytes in an RDB packet (`tcp_rdb_max_bundle_bytes`).
    pub max_bytes: Option<u32>,
    /// At most this many previous segments bundled (`tcp_rdb_max_bundle_skbs`).
    pub max_segments: Option<u32>,
    pub thin: ThinTest,
}

impl RdbConfig {
    /// Checks a `kind = "rdb"` middlebox table (without `kind`); errors name `key`. The host
    /// names are checked by the scenario, which fills in [`RdbConfig::senders`].
    pub fn parse(t: toml::Table, key: &str) -> Result<RdbConfig, SpecError> {
        let s: Spec = from_table(t, key)?;
        let hosts = s.hosts.unwrap_or_default();
        if hosts.is_empty() {
            return Err(err(
                format!("{key}.hosts"),
                "missing: the senders whose data segments are bundled, e.g. hosts = [\"rdbsender\"] (host or host group names)",
            ));
        }
        let positive = |v: Option<u32>, k: &str, what: &str| match v {
            Some(0) => Err(err(format!("{key}.{k}"), format!("0: allowed {what}"))),
            _ => Ok(v),
        };
        let mss = positive(
            s.mss,
            "mss",
            "1..65495 bytes (an MSS option value, e.g. 1460)",
        )?;
        if let Some(m) = mss.filter(|&m| m > 65495) {
            return Err(err(
                format!("{key}.mss"),
                format!("{m}: allowed 1..65495 bytes (an MSS option value, e.g. 1460)"),
            ));
        }
        let max_bytes = positive(
            s.max_bytes,
            "max_bytes",
            "1 byte or more (omit it for no limit but the MSS)",
        )?;
        let max_segments = positive(
            s.max_segments,
            "max_segments",
            "1 previous segment or more (omit it for no limit)",
        )?;
        let thin = match (s.pif_limit, s.itt_min) {
            (Some(_), Some(_)) => return Err(err(
                format!("{key}.itt_min"),
                "given with pif_limit: allowed one thin test, pif_limit (SPIFL) or itt_min (DPIFL)",
            )),
            (Some(0), None) => {
                return Err(err(
                    format!("{key}.pif_limit"),
                    "0: allowed 1 or more packets in flight (the stream is thin below it)",
                ))
            }
            (Some(n), None) => ThinTest::PifLimit(n),
            (None, Some(d)) => {
                if d < Dur::from_millis(1) || d.as_nanos() % 1_000_000 != 0 {
                    return Err(err(
                        format!("{key}.itt_min"),
                        format!("{d}: allowed a whole number of milliseconds, 1ms or more (RDBv2's dynamic_pif)"),
                    ));
                }
                ThinTest::IttMin(d)
            }
            (None, None) => ThinTest::Always,
        };
        Ok(RdbConfig {
            hosts,
            senders: vec![],
            mss,
            max_bytes,
            max_segments,
            thin,
        })
    }

    pub fn describe(&self) -> String {
        let mut s = format!("RDB bundling of TCP data from {}", self.hosts.join(", "));
        match self.thin {
            ThinTest::Always => s.push_str(", always"),
            ThinTest::PifLimit(n) => {
                s.push_str(&format!(", while fewer than {n} packets in flight"))
            }
            ThinTest::IttMin(d) => s.push_str(&format!(", DPIFL with ITT_min {d}")),
        }
        if let Some(m) = self.mss {
            s.push_str(&format!(", MSS {m} B"));
        }
        if let Some(b) = self.max_bytes {
            s.push_str(&format!(", at most {b} B"));
        }
        if let Some(n) = self.max_segments {
            s.push_str(&format!(", at most {n} previous segments"));
        }
        s
    }
}

/// Previous new-data segments kept per flow at most (enough for any window the studies reach;
/// past it the oldest are forgotten and packets in flight are undercounted).
const MAX_SEGMENTS: usize = 4096;
/// Bytes kept behind the newest sequence number: more than any bundle can reach back.
const KEEP_BYTES: u32 = 65536;

/// A new-data segment as the sender sent it.
#[derive(Debug)]
struct Seg {
    seq: u32,
    len: u32,
    sent: Time,
    /// A retransmission of (part of) it passed: no RTT sample from it (Karn).
    retransmitted: bool,
    sacked: bool,
    /// Its payload, when packets carry real bytes.
    data: Option<Vec<u8>>,
}

impl Seg {
    fn end(&self) -> u32 {
        self.seq.wrapping_add(self.len)
    }
}

#[derive(Default, Debug)]
struct Flow {
    /// MSS options of the sender's SYN and the receiver's SYN-ACK.
    mss_syn: Option<u32>,
    mss_synack: Option<u32>,
    /// The next new sequence number (the sender's `snd_nxt` as seen here).
    nxt: Option<u32>,
    /// The highest cumulative ACK seen.
    una: Option<u32>,
    /// New-data segments not yet cumulatively acknowledged, oldest first.
    segs: VecDeque<Seg>,
    min_rtt: Option<Dur>,
}

/// The options of a TCP segment the bundler reads: the MSS (SYNs) and SACK blocks.
#[derive(Default)]
struct Options {
    mss: Option<u32>,
    sack: Vec<(u32, u32)>,
}

fn options(pkt: &Packet) -> Option<(usize, Options)> {
    let ip = wire::parse_ip(&pkt.data)?;
    let t = wire::parse_tcp(ip.transport(&pkt.data)?, true)?;
    let mut o = Options::default();
    for (kind, data) in t.option_list() {
        match kind {
            2 if data.len() == 2 => o.mss = Some(u32::from(u16::from_be_bytes([data[0], data[1]]))),
            5 => {
                for b in data.chunks_exact(8) {
                    let l = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let r = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    o.sack.push((l, r));
                }
            }
            _ => {}
        }
    }
    Some((t.header_len, o))
}

struct State {
    cfg: RdbConfig,
    flows: HashMap<FlowKey, Flow>,
}

impl State {
    fn is_sender(&self, a: IpAddr) -> bool {
        self.cfg.senders.contains(&a)
    }

    /// A packet of a bundled sender: the RDB packet to send instead, if any.
    fn on_data(&mut self, now: Time, pkt: &Packet) -> Option<Packet> {
        let info = pkt.tcp()?;
        let (thl, opts) = options(pkt)?;
        if info.flags & RST != 0 {
            self.flows.remove(&pkt.flow);
            return None;
        }
        let f = self.flows.entry(pkt.flow).or_default();
        if info.flags & SYN != 0 {
            f.mss_syn = opts.mss.or(f.mss_syn);
            f.nxt = Some(info.seq.wrapping_add(1));
            return None;
        }
        let len = info.payload_len;
        if len == 0 {
            return None;
        }
        let (seq, end) = (info.seq, info.seq.wrapping_add(len));
        let nxt = *f.nxt.get_or_insert(seq);
        if seq_lt(seq, nxt) {
            // A retransmission: untouched; the segments it repeats give no RTT sample.
            for s in f.segs.iter_mut() {
                if seq_lt(seq, s.end()) && seq_lt(s.seq, end) {
                    s.retransmitted = true;
                }
            }
            if seq_lt(nxt, end) {
                // Partly new (the sender re-segmented): start again from its end.
                f.segs.clear();
                f.nxt = Some(end);
            }
            return None;
        }
        if seq != nxt {
            // A gap the middlebox did not see: what came before is unknown.
            f.segs.clear();
        }
        let real = pkt.data.len() as u32 == pkt.wire_len;
        let hdr = pkt.data.len() - if real { len as usize } else { 0 };
        let payload = real.then(|| &pkt.data[hdr..]);
        let plain = info.flags & (FIN | URG) == 0;
        let rdb = if plain && seq == nxt {
            bundle(&self.cfg, f, pkt, thl, payload)
        } else {
            None
        };
        f.segs.push_back(Seg {
            seq,
            len,
            sent: now,
            retransmitted: false,
            sacked: false,
            data: payload.map(<[u8]>::to_vec),
        });
        if f.segs.len() > MAX_SEGMENTS {
            f.segs.pop_front();
        }
        f.nxt = Some(end);
        let keep_from = end.wrapping_sub(KEEP_BYTES);
        for s in f.segs.iter_mut() {
            if !seq_le(s.end(), keep_from) {
                break;
            }
            s.data = None;
        }
        rdb
    }

    /// A packet towards a bundled sender: the ACKs of its flow.
    fn on_ack(&mut self, now: Time, pkt: &Packet) {
        let Some(info) = pkt.tcp() else { return };
        let key = pkt.flow.reversed();
        if info.flags & RST != 0 {
            self.flows.remove(&key);
            return;
        }
        let Some(f) = self.flows.get_mut(&key) else {
            return;
        };
        let Some((_, opts)) = options(pkt) else {
            return;
        };
        if info.flags & SYN != 0 {
            f.mss_synack = opts.mss.or(f.mss_synack);
            return;
        }
        if info.flags & ACK == 0 {
            return;
        }
        let ack = info.ack;
        if f.una.is_none_or(|u| seq_lt(u, ack)) {
            f.una = Some(ack);
        }
        let una = f.una.unwrap_or(ack);
        let mut sample = None;
        while f.segs.front().is_some_and(|s| seq_le(s.end(), una)) {
            let s = f.segs.pop_front().expect("a front segment");
            if !s.retransmitted {
                sample = Some(now - s.sent);
            }
        }
        if let Some(r) = sample {
            f.min_rtt = Some(f.min_rtt.map_or(r, |m| m.min(r)));
        }
        for (l, r) in opts.sack {
            for s in f.segs.iter_mut() {
                if seq_le(l, s.seq) && seq_le(s.end(), r) {
                    s.sacked = true;
                }
            }
        }
    }
}

/// The RDB packet for new segment `pkt` (TCP header `thl` bytes, payload bytes if real), before
/// the segment joins `f.segs`: `rdb_can_bundle_check` over the segments before it.
fn bundle(
    cfg: &RdbConfig,
    f: &Flow,
    pkt: &Packet,
    thl: usize,
    payload: Option<&[u8]>,
) -> Option<Packet> {
    let info = pkt.tcp()?;
    let newest = f.segs.back()?;
    if newest.sacked || newest.end() != info.seq {
        return None;
    }
    let pif = f.segs.len() as u64;
    let thin = match cfg.thin {
        ThinTest::Always => true,
        ThinTest::PifLimit(n) => pif < u64::from(n),
        // Linux 3.16 RDBv2 `tcp_stream_is_thin_dpif`: packets_out < (min_rtt_us / 1000) / ITT_min_ms.
        ThinTest::IttMin(itt) => f
            .min_rtt
            .is_none_or(|r| pif < (r.as_nanos() / 1_000_000) / (itt.as_nanos() / 1_000_000)),
    };
    if !thin {
        return None;
    }
    // Linux's mss_now: the MSS option less the options every data segment carries.
    let mss = cfg.mss.or(f.mss_synack).or(f.mss_syn)?;
    let mss = mss.saturating_sub(thl.saturating_sub(20) as u32);
    let una = f.una.unwrap_or(f.segs.front()?.seq);
    let (mut bytes, mut count, mut first) = (info.payload_len, 1u32, None);
    for (i, s) in f.segs.iter().enumerate().rev() {
        if seq_le(s.end(), una)
            || bytes + s.len > mss
            || cfg.max_bytes.is_some_and(|m| bytes + s.len > m)
            || cfg.max_segments.is_some_and(|m| count > m)
        {
            break;
        }
        bytes += s.len;
        count += 1;
        first = Some(i);
    }
    let first = first?;
    let start = if seq_lt(f.segs[first].seq, una) {
        una
    } else {
        f.segs[first].seq
    };
    let total = info.seq.wrapping_sub(start) + info.payload_len;
    let bytes = match payload {
        Some(p) => {
            let mut b = Vec::with_capacity(total as usize);
            for s in f.segs.range(first..) {
                let d = s.data.as_ref()?;
                // The acknowledged prefix of the first segment is not sent again.
                let skip = if seq_lt(s.seq, start) {
                    start.wrapping_sub(s.seq) as usize
                } else {
                    0
                };
                b.extend_from_slice(&d[skip..]);
            }
            b.extend_from_slice(p);
            Some(b)
        }
        None => None,
    };
    wire::rebuild_tcp_ipv4(pkt, start, bytes.as_deref(), total)
}

/// One direction's half of the bundler (both share the state).
struct Half {
    state: Arc<Mutex<State>>,
}

impl Middlebox for Half {
    fn on_packet(&mut self, now: Time, _dir: Dir, pkt: Packet, _: &mut Inject) -> Action {
        if pkt.flow.proto != wire::PROTO_TCP {
            return Action::Pass(pkt);
        }
        let mut s = self.state.lock().expect("the bundler's state");
        if s.is_sender(pkt.flow.dst) {
            s.on_ack(now, &pkt);
        }
        if s.is_sender(pkt.flow.src) {
            if let Some(rdb) = s.on_data(now, &pkt) {
                return Action::Rewrite(rdb);
            }
        }
        Action::Pass(pkt)
    }
}

/// Installs a bundler on `link` (both directions: data one way, its ACKs the other).
pub fn install(link: &mut Link, cfg: &RdbConfig) {
    let state = Arc::new(Mutex::new(State {
        cfg: cfg.clone(),
        flows: HashMap::new(),
    }));
    for d in Dir::BOTH {
        link.add_middlebox(
            d,
            Box::new(Half {
                state: state.clone(),
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;

    const S: [u8; 4] = [198, 18, 0, 1];
    const R: [u8; 4] = [198, 19, 0, 1];

    fn cfg(extra: &str) -> RdbConfig {
        let t: toml::Table = format!("hosts = [\"s\"]\n{extra}").parse().unwrap();
        let mut c = RdbConfig::parse(t, "middleboxes[0]").unwrap();
        c.senders = vec![IpAddr::from(S)];
        c
    }

    fn boxes(c: &RdbConfig) -> (Half, Half) {
        let state = Arc::new(Mutex::new(State {
            cfg: c.clone(),
            flows: HashMap::new(),
        }));
        (
            Half {
                state: state.clone(),
            },
            Half { state },
        )
    }

    /// The sender's SYN (seq 999, MSS 1460) and the receiver's SYN-ACK (MSS 1460).
    fn handshake(data: &mut Half, acks: &mut Half) {
        let mut v = vec![];
        PacketBuilder::ipv4(S, R, 64)
            .tcp(1024, 5000, 999, 65535)
            .syn()
            .options(&[etherparse::TcpOptionElement::MaximumSegmentSize(1460)])
            .unwrap()
            .write(&mut v, &[])
            .unwrap();
        pass(data.on_packet(
            Time::ZERO,
            Dir::Down,
            Packet::from_bytes(v),
            &mut Inject::default(),
        ));
        let mut v = vec![];
        PacketBuilder::ipv4(R, S, 64)
            .tcp(5000, 1024, 5000, 65535)
            .syn()
            .ack(1000)
            .options(&[etherparse::TcpOptionElement::MaximumSegmentSize(1460)])
            .unwrap()
            .write(&mut v, &[])
            .unwrap();
        pass(acks.on_packet(
            Time::ZERO,
            Dir::Up,
            Packet::from_bytes(v),
            &mut Inject::default(),
        ));
    }

    /// A data segment of the sender: `len` bytes at `seq`, byte i of the stream being
    /// `(seq - 1000 + i) % 251` (the emulator's pattern), so any range can be checked.
    fn data(seq: u32, len: u32) -> Packet {
        let mut v = vec![];
        let payload: Vec<u8> = (0..len).map(|i| ((seq - 1000 + i) % 251) as u8).collect();
        PacketBuilder::ipv4(S, R, 64)
            .tcp(1024, 5000, seq, 65535)
            .ack(5001)
            .psh()
            .write(&mut v, &payload)
            .unwrap();
        Packet::from_bytes(v)
    }

    fn ack(n: u32, sack: Option<(u32, u32)>) -> Packet {
        let mut v = vec![];
        let b = PacketBuilder::ipv4(R, S, 64)
            .tcp(5000, 1024, 5001, 65535)
            .ack(n);
        let b = match sack {
            Some(blk) => b
                .options(&[
                    etherparse::TcpOptionElement::Noop,
                    etherparse::TcpOptionElement::Noop,
                    etherparse::TcpOptionElement::SelectiveAcknowledgement(blk, [None; 3]),
                ])
                .unwrap(),
            None => b,
        };
        b.write(&mut v, &[]).unwrap();
        Packet::from_bytes(v)
    }

    fn pass(a: Action) -> Packet {
        match a {
            Action::Pass(p) => p,
            other => panic!("expected a pass, got {other:?}"),
        }
    }

    fn send(h: &mut Half, t: u64, p: Packet) -> Action {
        h.on_packet(Time(t * 1_000_000), Dir::Down, p, &mut Inject::default())
    }

    fn recv(h: &mut Half, t: u64, p: Packet) {
        pass(h.on_packet(Time(t * 1_000_000), Dir::Up, p, &mut Inject::default()));
    }

    /// (seq, payload length) of a rewritten packet, after checking its bytes are the stream's
    /// bytes at those positions and both checksums are right.
    fn rewritten(a: Action) -> (u32, u32) {
        let Action::Rewrite(p) = a else {
            panic!("expected a rewrite, got {a:?}")
        };
        let t = p.tcp().unwrap();
        assert_eq!(p.data.len() as u32, p.wire_len, "real bytes");
        let ip = etherparse::Ipv4HeaderSlice::from_slice(&p.data)
            .unwrap()
            .to_header();
        assert_eq!(
            ip.header_checksum,
            ip.calc_header_checksum(),
            "IPv4 checksum"
        );
        let th = etherparse::TcpHeaderSlice::from_slice(&p.data[20..])
            .unwrap()
            .to_header();
        let payload = &p.data[40..];
        assert_eq!(
            th.checksum,
            th.calc_checksum_ipv4(&ip, payload).unwrap(),
            "TCP checksum"
        );
        for (i, b) in payload.iter().enumerate() {
            assert_eq!(u32::from(*b), (t.seq - 1000 + i as u32) % 251, "byte {i}");
        }
        (t.seq, t.payload_len)
    }

    #[test]
    fn third_packet_carries_the_two_before_it() {
        let c = cfg("");
        let (mut d, mut a) = boxes(&c);
        handshake(&mut d, &mut a);
        // 120-byte writes at 1000, 1120, 1240; MSS 1460 (no options on the data segments).
        pass(send(&mut d, 10, data(1000, 120)));
        assert_eq!(rewritten(send(&mut d, 40, data(1120, 120))), (1000, 240));
        // 3 × 120 = 360 ≤ 1460: the first two in front of the new 120 B.
        assert_eq!(rewritten(send(&mut d, 70, data(1240, 120))), (1000, 360));
        // A retransmission of the first passes untouched.
        let re = data(1000, 120);
        assert_eq!(pass(send(&mut d, 90, re.clone())), re);
        // An ACK covering the first (1120): the fourth carries 1120..1480, 360 B.
        recv(&mut a, 100, ack(1120, None));
        assert_eq!(rewritten(send(&mut d, 110, data(1360, 120))), (1120, 360));
        // A partial ACK (1180, inside the second): its acknowledged 60 B are skipped, but its
        // whole 120 B still count against the limits: 1180..1600 = 420 B.
        recv(&mut a, 120, ack(1180, None));
        assert_eq!(rewritten(send(&mut d, 130, data(1480, 120))), (1180, 420));
        // Everything acknowledged: nothing before the next write to bundle.
        recv(&mut a, 140, ack(1600, None));
        pass(send(&mut d, 150, data(1600, 120)));
    }

    #[test]
    fn one_previous_segment_with_max_segments_1() {
        let (mut d, mut a) = boxes(&cfg("max_segments = 1"));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 120)));
        assert_eq!(rewritten(send(&mut d, 40, data(1120, 120))), (1000, 240));
        // Only the second in front: 1120..1360, 240 B.
        assert_eq!(rewritten(send(&mut d, 70, data(1240, 120))), (1120, 240));
    }

    #[test]
    fn mss_and_byte_limits() {
        // 400-byte writes (extract §3.1, Fig. 2.10): 4 × 400 = 1600 > 1460, so the fourth
        // packet carries S2 + S3 + S4 = 1200 B from 1400.
        let (mut d, mut a) = boxes(&cfg(""));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 400)));
        assert_eq!(rewritten(send(&mut d, 20, data(1400, 400))), (1000, 800));
        assert_eq!(rewritten(send(&mut d, 30, data(1800, 400))), (1000, 1200));
        assert_eq!(rewritten(send(&mut d, 40, data(2200, 400))), (1400, 1200));
        // max_bytes = 1000: 400 + 400 fit, a third 400 does not.
        let (mut d, mut a) = boxes(&cfg("max_bytes = 1000"));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 400)));
        assert_eq!(rewritten(send(&mut d, 20, data(1400, 400))), (1000, 800));
        assert_eq!(rewritten(send(&mut d, 30, data(1800, 400))), (1400, 800));
        // mss = 536 overrides the SYNs': 400 + 400 > 536, nothing fits.
        let (mut d, mut a) = boxes(&cfg("mss = 536"));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 400)));
        pass(send(&mut d, 20, data(1400, 400)));
    }

    #[test]
    fn thin_tests_spifl_and_dpifl() {
        // SPIFL 2: the second write sees 1 packet in flight (< 2) and bundles, the third 2.
        let (mut d, mut a) = boxes(&cfg("pif_limit = 2"));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 120)));
        assert_eq!(rewritten(send(&mut d, 40, data(1120, 120))), (1000, 240));
        pass(send(&mut d, 70, data(1240, 120)));
        // An ACK of the first leaves 2 in flight (1120, 1240): still not thin; of the second, 1.
        recv(&mut a, 80, ack(1120, None));
        pass(send(&mut d, 90, data(1360, 120)));
        recv(&mut a, 100, ack(1360, None));
        assert_eq!(rewritten(send(&mut d, 110, data(1480, 120))), (1360, 240));

        // DPIFL with ITT_min 20 ms: no RTT sample yet, thin. The ACK at 160 ms of the segment
        // sent at 10 ms gives RTT_min 150 ms: limit ⌊150 / 20⌋ = 7 packets in flight.
        let (mut d, mut a) = boxes(&cfg("itt_min = \"20ms\""));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 100)));
        assert_eq!(rewritten(send(&mut d, 20, data(1100, 100))), (1000, 200));
        recv(&mut a, 160, ack(1100, None));
        // In flight now: 1100; then 6 more sent: 7 in flight when the 8th comes, not < 7.
        let mut seq = 1200;
        for k in 0..6 {
            let (s, _) = rewritten(send(&mut d, 170 + k, data(seq, 100)));
            assert_eq!(s, 1100, "bundles from the first unacknowledged byte");
            seq += 100;
        }
        pass(send(&mut d, 180, data(seq, 100)));
    }

    #[test]
    fn sacked_previous_segment_stops_bundling() {
        let (mut d, mut a) = boxes(&cfg(""));
        handshake(&mut d, &mut a);
        pass(send(&mut d, 10, data(1000, 120)));
        rewritten(send(&mut d, 20, data(1120, 120)));
        // The first lost, the second SACKed: RDBv2 does not bundle behind a SACKed segment.
        recv(&mut a, 30, ack(1000, Some((1120, 1240))));
        pass(send(&mut d, 40, data(1240, 120)));
    }

    #[test]
    fn virtual_payloads_change_seq_and_length_only() {
        let (mut d, mut a) = boxes(&cfg(""));
        handshake(&mut d, &mut a);
        let virt = |seq, len| {
            let p = data(seq, len);
            Packet::with_wire_len(p.data[..40].to_vec(), 40 + len)
        };
        pass(send(&mut d, 10, virt(1000, 120)));
        pass(send(&mut d, 20, virt(1000, 120))); // a retransmission
        let Action::Rewrite(p) = send(&mut d, 30, virt(1120, 120)) else {
            panic!("not bundled")
        };
        let t = p.tcp().unwrap();
        assert_eq!(
            (t.seq, t.payload_len, p.wire_len, p.data.len()),
            (1000, 240, 280, 40)
        );
    }

    #[test]
    fn other_hosts_pass_and_bad_parameters_are_named() {
        let (mut d, mut a) = boxes(&cfg(""));
        handshake(&mut d, &mut a);
        let mut v = vec![];
        PacketBuilder::ipv4([198, 18, 0, 2], R, 64)
            .tcp(1025, 5000, 1000, 65535)
            .write(&mut v, &[1u8; 100])
            .unwrap();
        pass(send(&mut d, 10, Packet::from_bytes(v.clone())));
        pass(send(&mut d, 20, Packet::from_bytes(v)));
        let e = |s: &str| {
            RdbConfig::parse(s.parse().unwrap(), "middleboxes[1]")
                .unwrap_err()
                .to_string()
        };
        assert!(e("").contains("middleboxes[1].hosts"));
        assert!(e("hosts = [\"s\"]\nmax_segments = 0").contains("middleboxes[1].max_segments"));
        assert!(e("hosts = [\"s\"]\npif_limit = 4\nitt_min = \"10ms\"").contains("one thin test"));
        assert!(e("hosts = [\"s\"]\nitt_min = \"2500us\"").contains("whole number of milliseconds"));
        assert!(e("hosts = [\"s\"]\nmss = 70000").contains("middleboxes[1].mss"));
        assert!(e("hosts = [\"s\"]\nbundle = 1").contains("bundle"));
    }
}
