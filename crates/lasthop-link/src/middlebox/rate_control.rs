//! TCP rate control at the router, as seed 004 describes Packeteer's PacketShaper: each TCP
//! flow gets a fair share of the bottleneck, enforced by rewriting the advertised window of its
//! ACKs to that share times its round-trip time and by pacing its ACKs at the share. The paper
//! withholds the algorithm ("due to patent and commercial reasons"); these are our choices, each
//! from what the paper and its extract say (`research/seed-004.md` §1.3):
//!
//! - **Share.** Max-min fairness over greedy flows on one bottleneck is an equal split:
//!   `R = utilisation × rate / N`, N the flows open through the router (SYN seen, no FIN or RST
//!   yet), recomputed on every change of N. Demand-limited flows are not detected (the study's
//!   flows are greedy or short).
//! - **Window.** `W = max(min_window, ⌊R × rtt / packet⌋)` segments, written into the ACK's
//!   window field (scaled by the receiver's window scale). `rtt` is the flow's base round trip
//!   seen from the router: the sender side from the handshake (the SYN-ACK passing the router to
//!   the sender's ACK of it) plus the smallest receiver-side sample (a data segment passing the
//!   router to the first ACK covering it). A window floor of 2 segments gives the paper's
//!   standing queue of about 2N − BDP packets (extract §1.3, "calibration"). The window only
//!   lowers what the receiver offers, and never moves a right edge already offered backwards.
//!   A smallest sample is only as good as the quietest moment the flow had: one whose first
//!   segments all waited behind another flow's burst keeps that wait in its round trip, and a
//!   window built on it keeps a queue standing that may never let a shorter sample through.
//! - **ACK pacing.** A flow's ACKs leave the router no faster than its share: each is held until
//!   `max(now, next)`, and `next` moves on by the bytes it newly acknowledges converted to
//!   packets on the wire, at `R`. Other packets of the ACK direction (SYN-ACK, FIN, duplicate
//!   ACKs) wait their turn behind them, so a flow's packets keep their order.
//! - **Placement.** One controller sees both directions at the router, before the queue: data in
//!   `data_dir`, ACKs in the other.
//!
//! Not modelled, as in the paper: its "enhancements for low speed bottlenecks".

use crate::dir::Dir;
use crate::middlebox::hook::{set_tcp_window, Action, Inject, Middlebox};
use crate::model::Link;
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::wire::{self, seq_le, seq_lt, ACK, FIN, RST, SYN};
use lasthop_core::{Dur, FlowKey, Packet, Rate, Time};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    data_dir: Option<Dir>,
    rate: Option<Rate>,
    utilisation: Option<f64>,
    min_window: Option<u32>,
    pace_acks: Option<bool>,
}

/// The controller's validated parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RateControlConfig {
    /// The direction of the data through the bottleneck (ACKs go the other way).
    pub data_dir: Dir,
    /// The capacity shared out; `None`: the link's rate in `data_dir`.
    pub rate: Option<Rate>,
    /// The fraction of it handed out (ERICA-style target utilisation).
    pub utilisation: f64,
    /// Smallest window, segments.
    pub min_window: u32,
    /// Whether ACKs are paced (else only windows are rewritten).
    pub pace_acks: bool,
}

impl RateControlConfig {
    /// Checks a `kind = "rate_control"` middlebox table (without `kind`); errors name `key`.
    pub fn parse(t: toml::Table, key: &str) -> Result<RateControlConfig, SpecError> {
        let s: Spec = from_table(t, key)?;
        let utilisation = s.utilisation.unwrap_or(1.0);
        if !(utilisation > 0.0 && utilisation <= 1.0) {
            return Err(err(
                format!("{key}.utilisation"),
                format!("{utilisation}: allowed above 0 and at most 1"),
            ));
        }
        if s.rate.is_some_and(|r| r.0 == 0) {
            return Err(err(format!("{key}.rate"), "0: allowed above 0"));
        }
        let min_window = s.min_window.unwrap_or(2);
        if min_window == 0 {
            return Err(err(
                format!("{key}.min_window"),
                "0: allowed 1 or more segments",
            ));
        }
        Ok(RateControlConfig {
            data_dir: s.data_dir.unwrap_or(Dir::Down),
            rate: s.rate,
            utilisation,
            min_window,
            pace_acks: s.pace_acks.unwrap_or(true),
        })
    }

    pub fn describe(&self) -> String {
        format!(
            "rate control of TCP flows {} ({} of {} shared equally; windows of at least {} segments{})",
            self.data_dir.name(),
            self.utilisation,
            self.rate.map_or("the link's rate".to_string(), |r| r.to_string()),
            self.min_window,
            if self.pace_acks { ", ACKs paced" } else { "" }
        )
    }
}

/// One flow, keyed by its data direction's 5-tuple.
#[derive(Default, Debug)]
struct Flow {
    open: bool,
    mss: Option<u32>,
    /// Window scale shifts: the data sender's and the ACK sender's (from their SYNs); scaling
    /// is in use only when both offered it.
    ws_data: Option<u8>,
    ws_ack: Option<u8>,
    /// When the SYN-ACK passed the router, until the sender's ACK of it.
    synack_at: Option<Time>,
    /// Sender-side round trip (router → sender → router).
    rtt_sender: Option<Dur>,
    /// Smallest receiver-side sample (router → receiver → router).
    rtt_receiver: Option<Dur>,
    /// Data segments waiting for an ACK sample: (end sequence, time), in sending order.
    probes: Vec<(u32, Time)>,
    /// Highest cumulative ACK seen and the right edge offered.
    acked: Option<u32>,
    right_edge: Option<u32>,
    /// The earliest time the flow's next ACK may leave.
    next_release: Time,
}

struct State {
    cfg: RateControlConfig,
    rate: Rate,
    flows: HashMap<FlowKey, Flow>,
    open: usize,
}

/// IPv4 + TCP headers without options: what a segment adds to its payload on the wire.
const HEADERS: u32 = 40;
/// Receiver-side samples kept in flight per flow (enough for any window the study reaches).
const MAX_PROBES: usize = 64;

impl State {
    /// The share of one flow, bytes per second (IP bytes on the link).
    fn share(&self) -> f64 {
        self.rate.0 as f64 / 8.0 * self.cfg.utilisation / self.open.max(1) as f64
    }

    fn on_data(&mut self, now: Time, pkt: &Packet) {
        let Some((tcp, opts)) = tcp_of(pkt) else {
            return;
        };
        let f = self.flows.entry(pkt.flow).or_default();
        if tcp.flags & SYN != 0 {
            if !f.open {
                f.open = true;
                self.open += 1;
            }
            f.mss = opts.mss.map(u32::from).or(f.mss);
            f.ws_data = opts.wscale;
            return;
        }
        if let Some(at) = f.synack_at.take() {
            f.rtt_sender = Some(now - at);
        }
        if tcp.payload_len > 0 && f.probes.len() < MAX_PROBES {
            f.probes.push((tcp.seq.wrapping_add(tcp.payload_len), now));
        }
        if tcp.flags & (FIN | RST) != 0 && f.open {
            f.open = false;
            self.open -= 1;
        }
    }

    /// An ACK-direction packet of a flow: its window rewritten (true if it was) and its
    /// release time, if later than `now`.
    fn on_ack(&mut self, now: Time, pkt: &mut Packet) -> (bool, Option<Time>) {
        let Some((tcp, opts)) = tcp_of(pkt) else {
            return (false, None);
        };
        let share = self.share();
        let (min_window, pace) = (self.cfg.min_window, self.cfg.pace_acks);
        let key = pkt.flow.reversed();
        let Some(f) = self.flows.get_mut(&key) else {
            return (false, None);
        };
        if tcp.flags & SYN != 0 {
            f.ws_ack = opts.wscale;
            f.synack_at = Some(now);
            // It acknowledges the SYN: data starts here.
            f.acked = Some(tcp.ack);
            return (false, None);
        }
        if tcp.flags & RST != 0 && f.open {
            f.open = false;
            self.open -= 1;
        }
        if tcp.flags & ACK == 0 {
            return (false, None);
        }
        // Receiver-side samples: every probe this ACK covers; keep the smallest.
        let ack = tcp.ack;
        let covered = f
            .probes
            .iter()
            .take_while(|(end, _)| seq_le(*end, ack))
            .count();
        if let Some(&(_, sent)) = f.probes[..covered].last() {
            let s = now - sent;
            f.rtt_receiver = Some(f.rtt_receiver.map_or(s, |r| r.min(s)));
        }
        f.probes.drain(..covered);
        let newly = match f.acked {
            Some(a) if seq_lt(a, ack) => ack.wrapping_sub(a),
            Some(_) => 0,
            None => 0,
        };
        if f.acked.is_none_or(|a| seq_lt(a, ack)) {
            f.acked = Some(ack);
        }
        let mss = f.mss.unwrap_or(536);
        let packet = f64::from(mss + HEADERS);
        // The window: the share times the base round trip, in whole segments, at least the
        // floor; only once both round-trip parts are known.
        let scale = match (f.ws_data, f.ws_ack) {
            (Some(_), Some(s)) => s.min(14),
            _ => 0,
        };
        let offered = u64::from(tcp.window) << scale;
        let mut rewritten = false;
        if let (Some(a), Some(b)) = (f.rtt_sender, f.rtt_receiver) {
            let rtt = (a + b).as_nanos() as f64 / 1e9;
            let segs = ((share * rtt / packet).floor() as u64).max(u64::from(min_window));
            let mut w = offered.min(segs * u64::from(mss));
            // Never move the right edge back.
            if let Some(re) = f.right_edge.filter(|&re| seq_lt(ack, re)) {
                w = w.max(u64::from(re.wrapping_sub(ack)).min(offered));
            }
            let field = (w >> scale).min(0xffff) as u16;
            if field != tcp.window {
                rewritten = set_tcp_window(pkt, field);
            }
            f.right_edge = Some(ack.wrapping_add((u64::from(field) << scale) as u32));
        }
        if !pace {
            return (rewritten, None);
        }
        let release = now.max(f.next_release);
        let bytes = newly as f64 * packet / f64::from(mss);
        f.next_release = release + Dur((bytes / share * 1e9).round() as u64);
        (rewritten, (release > now).then_some(release))
    }
}

/// The options the controller reads from a SYN.
#[derive(Default)]
struct SynOptions {
    mss: Option<u16>,
    wscale: Option<u8>,
}

/// The TCP fields and SYN options of a TCP/IPv4 segment.
fn tcp_of(pkt: &Packet) -> Option<(lasthop_core::TcpInfo, SynOptions)> {
    let info = pkt.tcp()?;
    let mut o = SynOptions::default();
    if info.flags & SYN != 0 {
        let ip = wire::parse_ip(&pkt.data)?;
        let t = wire::parse_tcp(pkt.data.get(ip.header_len..)?, true)?;
        for (kind, data) in t.option_list() {
            match (kind, data.len()) {
                (2, 2) => o.mss = Some(u16::from_be_bytes([data[0], data[1]])),
                (3, 1) => o.wscale = Some(data[0]),
                _ => {}
            }
        }
    }
    Some((info, o))
}

/// One direction's half of the controller (both share the state).
struct Half {
    state: Arc<Mutex<State>>,
}

impl Middlebox for Half {
    fn on_packet(&mut self, now: Time, dir: Dir, mut pkt: Packet, _: &mut Inject) -> Action {
        if pkt.flow.proto != 6 {
            return Action::Pass(pkt);
        }
        let mut s = self.state.lock().expect("the controller's state");
        if dir == s.cfg.data_dir {
            s.on_data(now, &pkt);
            return Action::Pass(pkt);
        }
        match s.on_ack(now, &mut pkt) {
            (_, Some(at)) => Action::Delay(pkt, at - now),
            (true, None) => Action::Rewrite(pkt),
            (false, None) => Action::Pass(pkt),
        }
    }
}

/// Installs a rate controller on `link` (both directions); `link_rate` is the link's rate in
/// the data direction, used when the config names none.
pub fn install(link: &mut Link, cfg: &RateControlConfig, link_rate: Rate) {
    let state = Arc::new(Mutex::new(State {
        rate: cfg.rate.unwrap_or(link_rate),
        cfg: cfg.clone(),
        flows: HashMap::new(),
        open: 0,
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
