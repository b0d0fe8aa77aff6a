//! Helpers the link model's tests share: packets, a link from spec text, running it.
#![allow(dead_code)] // each test binary uses what it needs

use lasthop_core::{Packet, Seeds, Time};
use lasthop_link::{Event, Link, LinkSpec, LogLevel, Output};

pub const MS: u64 = 1_000_000;

pub fn ms(n: u64) -> Time {
    Time(n * MS)
}

/// A real IPv4/UDP packet of `len` bytes on the wire from source port `port`, with `ecn` in the
/// TOS byte.
pub fn udp(len: usize, port: u16, ecn: u8) -> Packet {
    let b = etherparse::PacketBuilder::ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64).udp(port, 9);
    let mut v = Vec::new();
    b.write(&mut v, &vec![0u8; len - 28]).unwrap();
    if ecn != 0 {
        v[1] |= ecn;
        let mut h = etherparse::Ipv4HeaderSlice::from_slice(&v)
            .unwrap()
            .to_header();
        h.header_checksum = h.calc_header_checksum();
        v[10..12].copy_from_slice(&h.header_checksum.to_be_bytes());
    }
    Packet::from_bytes(v)
}

/// A link from spec text, seed 1, replication 0, logging everything.
pub fn link(spec: &str) -> Link {
    let cfg = LinkSpec::config_from_str(spec).unwrap_or_else(|e| panic!("{e}"));
    Link::new(cfg, Seeds::new(1, 0), LogLevel::All)
}

/// Runs the model until nothing is left to do (a link without states or a background load):
/// each output's id and release time, and the events.
pub fn drain(l: &mut Link) -> (Vec<(u64, Time)>, Vec<Event>) {
    let mut out = vec![];
    loop {
        while let Some(o) = l.poll_output() {
            out.push((o.id, o.at));
        }
        let Some(t) = l.poll_timeout() else { break };
        l.handle_timeout(t);
    }
    let mut ev = vec![];
    l.drain_events(&mut ev);
    (out, ev)
}

/// Runs the model until nothing is scheduled before `until`, collecting outputs and events.
pub fn run(l: &mut Link, until: Time) -> (Vec<Output>, Vec<Event>) {
    let (mut out, mut ev) = (vec![], vec![]);
    while let Some(t) = l.poll_timeout().filter(|&t| t <= until) {
        l.handle_timeout(t);
        while let Some(o) = l.poll_output() {
            out.push(o);
        }
    }
    l.drain_events(&mut ev);
    (out, ev)
}
