//! Seed 001's shared advertised window at the router, for hosts whose TCP cannot do it (real
//! Linux in emulation): the receiver's connections from one peer share a pool of `size` bytes,
//! and each ACK the receiver sends to that peer leaves the router advertising
//!
//! ```text
//! min(the window the receiver wrote, (size − bytes held by the receiver) / open connections)
//! ```
//!
//! and never less than what keeps the right edge already offered in place (a window is never
//! shrunk; a connection above its share decays as data arrives). This is the rule of the seed's
//! modified Linux 2.3.99 (`iwtcp_srwnd_addr`, `iwtcp_srwnd_size`, extract B.2.4), which the TCP
//! model does at the receiver (`lasthop_tcp::Host::set_shared_window`).
//!
//! What a router cannot see, and what is written down instead:
//!
//! - **The application's reads.** The pool loses the bytes a connection receives and gets them
//!   back when the application reads them. Our receivers (`lasthop app bulk-recv`, like the
//!   seed's ttcp) read at once, so only data held *out of order* stays in the pool; unread
//!   in-order data is left to the receiver's own window, which the rule never exceeds.
//! - **The out-of-order data.** From the receiver's ACKs alone: with SACK, the bytes the SACK
//!   blocks cover above the cumulative ACK (exact, up to the 3–4 blocks an ACK carries);
//!   without, one segment more for each duplicate ACK (an ACK that moves nothing, carries no
//!   data, SYN or FIN, and repeats the receiver's last window), and after an ACK that moves
//!   the cumulative point by A bytes, held + segment − A, at least 0 (the arriving segment
//!   filled a hole and released what was held behind it). The segment size is the largest
//!   payload the peer sent through the router (before that, the smaller of the two SYNs' MSS).
//! - **Open connections.** From the receiver's SYN or SYN-ACK to its FIN or RST.
//! - **The handshake.** The receiver's SYN or SYN-ACK window (never scaled) is capped by the
//!   share as well, as the TCP model caps it (the seed does not say whether its kernel did;
//!   its buffer-3 runs with two connections, one retransmission in the median, suggest so).
//!
//! Both directions run a half of it (the peer's SYN gives its MSS and window scale).

use crate::dir::Dir;
use crate::middlebox::hook::{set_tcp_window, Action, Inject, Middlebox};
use crate::model::Link;
use lasthop_core::wire::{self, seq_lt, ACK, FIN, RST, SYN};
use lasthop_core::{FlowKey, Packet, Time};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

/// A shared window at the router: `receiver`'s connections with `peer` share `size` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedWindowConfig {
    pub receiver: Ipv4Addr,
    pub peer: Ipv4Addr,
    pub size: u64,
}

impl SharedWindowConfig {
    pub fn describe(&self) -> String {
        format!(
            "shared advertised window at the router: {}'s connections from {} share {} B",
            self.receiver, self.peer, self.size
        )
    }
}

/// One connection, keyed by the receiver → peer 5-tuple.
#[derive(Default, Debug)]
struct Conn {
    open: bool,
    /// MSS options of the receiver's and the peer's SYNs, and the largest payload the peer sent.
    mss_recv: Option<u32>,
    mss_peer: Option<u32>,
    max_seg: u32,
    /// Window scale shifts offered in the receiver's and the peer's SYNs.
    ws_recv: Option<u8>,
    ws_peer: Option<u8>,
    /// The receiver's last cumulative ACK and the window it wrote then (before any rewrite).
    ack: Option<u32>,
    window: Option<u16>,
    /// Bytes the receiver holds out of order (estimated, see the module doc).
    held: u64,
    /// The right edge offered to the peer after the rewrite.
    right_edge: Option<u32>,
}

impl Conn {
    fn segment(&self) -> u64 {
        if self.max_seg > 0 {
            return u64::from(self.max_seg);
        }
        match (self.mss_recv, self.mss_peer) {
            (Some(a), Some(b)) => u64::from(a.min(b)),
            (Some(a), None) | (None, Some(a)) => u64::from(a),
            (None, None) => 536,
        }
    }
    fn scale(&self) -> u8 {
        match (self.ws_recv, self.ws_peer) {
            (Some(r), Some(_)) => r.min(14),
            _ => 0,
        }
    }
}

struct State {
    cfg: SharedWindowConfig,
    conns: HashMap<FlowKey, Conn>,
}

/// The TCP header fields, the SYN options (MSS, window scale) and the SACK blocks of a
/// TCP/IPv4 segment.
struct Seen {
    ack: u32,
    flags: u8,
    window: u16,
    payload: u32,
    mss: Option<u32>,
    wscale: Option<u8>,
    sacks: Vec<(u32, u32)>,
}

fn seen(pkt: &Packet) -> Option<Seen> {
    let info = pkt.tcp()?;
    let ip = wire::parse_ip(&pkt.data)?;
    let t = wire::parse_tcp(pkt.data.get(ip.header_len..)?, false)?;
    let mut s = Seen {
        ack: info.ack,
        flags: info.flags,
        window: info.window,
        payload: info.payload_len,
        mss: None,
        wscale: None,
        sacks: vec![],
    };
    for (kind, data) in t.option_list() {
        match (kind, data.len()) {
            (2, 2) if info.flags & SYN != 0 => {
                s.mss = Some(u32::from(u16::from_be_bytes([data[0], data[1]])))
            }
            (3, 1) if info.flags & SYN != 0 => s.wscale = Some(data[0]),
            (5, n) if n % 8 == 0 => {
                for b in data.chunks_exact(8) {
                    let l = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let r = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    s.sacks.push((l, r));
                }
            }
            _ => {}
        }
    }
    Some(s)
}

impl State {
    /// The rule's share: (size − bytes held) / connections open, over the open connections.
    fn share(&self) -> u64 {
        let open = self.conns.values().filter(|c| c.open).count() as u64;
        let held: u64 = self.conns.values().filter(|c| c.open).map(|c| c.held).sum();
        self.cfg.size.saturating_sub(held) / open.max(1)
    }

    /// A packet from the peer to the receiver (key: the receiver → peer direction).
    fn on_peer(&mut self, key: FlowKey, s: &Seen) {
        let c = self.conns.entry(key).or_default();
        if s.flags & SYN != 0 {
            c.mss_peer = s.mss.or(c.mss_peer);
            c.ws_peer = s.wscale;
        }
        c.max_seg = c.max_seg.max(s.payload);
    }

    /// A packet from the receiver to the peer: the new window field, if it changes.
    fn on_receiver(&mut self, key: FlowKey, s: &Seen) -> Option<u16> {
        if s.flags & SYN != 0 {
            let c = self.conns.entry(key).or_default();
            c.open = true;
            c.mss_recv = s.mss.or(c.mss_recv);
            c.ws_recv = s.wscale;
            c.held = 0;
            c.ack = (s.flags & ACK != 0).then_some(s.ack);
            c.window = None;
            // The SYN's window (never scaled) is capped like the TCP model's.
            let share = self.share();
            let field = u64::from(s.window).min(share) as u16;
            let c = self.conns.get_mut(&key).expect("inserted above");
            c.right_edge = c.ack.map(|a| a.wrapping_add(u32::from(field)));
            return (field != s.window).then_some(field);
        }
        let c = self.conns.get_mut(&key)?;
        if !c.open || s.flags & ACK == 0 {
            return None;
        }
        let seg = c.segment();
        let (ack, win) = (s.ack, s.window);
        match c.ack {
            Some(prev) if seq_lt(prev, ack) => {
                let advanced = u64::from(ack.wrapping_sub(prev));
                c.held = (c.held + seg).saturating_sub(advanced);
                c.ack = Some(ack);
            }
            Some(prev)
                if prev == ack
                    && s.payload == 0
                    && s.flags & (FIN | RST) == 0
                    && c.window == Some(win) =>
            {
                c.held += seg;
            }
            Some(_) => {}
            None => c.ack = Some(ack),
        }
        if !s.sacks.is_empty() {
            c.held = s
                .sacks
                .iter()
                .filter(|&&(l, r)| seq_lt(ack, r) && seq_lt(l, r))
                .map(|&(l, r)| {
                    let l = if seq_lt(l, ack) { ack } else { l };
                    u64::from(r.wrapping_sub(l))
                })
                .sum();
        }
        c.window = Some(win);
        let closing = s.flags & (FIN | RST) != 0;
        let share = self.share();
        let c = self.conns.get_mut(&key).expect("looked up above");
        let scale = c.scale();
        let offered = u64::from(win) << scale;
        let mut w = offered.min(share);
        if let Some(re) = c.right_edge.filter(|&re| seq_lt(ack, re)) {
            w = w.max(u64::from(re.wrapping_sub(ack)).min(offered));
        }
        // Rounded up to the scale unit, so the edge never moves back.
        let field = w.div_ceil(1 << scale).min(0xffff) as u16;
        c.right_edge = Some(ack.wrapping_add((u64::from(field) << scale) as u32));
        if closing {
            c.open = false;
        }
        (field != win).then_some(field)
    }
}

/// One direction's half (both share the state).
struct Half {
    state: Arc<Mutex<State>>,
}

impl Middlebox for Half {
    fn on_packet(&mut self, _now: Time, _dir: Dir, mut pkt: Packet, _: &mut Inject) -> Action {
        if pkt.flow.proto != 6 {
            return Action::Pass(pkt);
        }
        let mut st = self.state.lock().expect("the shared window's state");
        let (recv, peer) = (IpAddr::V4(st.cfg.receiver), IpAddr::V4(st.cfg.peer));
        let Some(s) = seen(&pkt) else {
            return Action::Pass(pkt);
        };
        if pkt.flow.src == peer && pkt.flow.dst == recv {
            st.on_peer(pkt.flow.reversed(), &s);
            return Action::Pass(pkt);
        }
        if pkt.flow.src != recv || pkt.flow.dst != peer {
            return Action::Pass(pkt);
        }
        match st.on_receiver(pkt.flow, &s) {
            Some(field) if set_tcp_window(&mut pkt, field) => Action::Rewrite(pkt),
            _ => Action::Pass(pkt),
        }
    }
}

/// Installs a shared window at the router of `link` (both directions).
pub fn install(link: &mut Link, cfg: &SharedWindowConfig) {
    let state = Arc::new(Mutex::new(State {
        cfg: cfg.clone(),
        conns: HashMap::new(),
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
