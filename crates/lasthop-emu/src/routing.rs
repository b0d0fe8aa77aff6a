//! Where a packet goes: across the link, straight to a host on the same side, or nowhere.
//!
//! The emulator is the router between the two sides. A packet a host writes to its TUN crosses
//! the link when its destination is on the other side (fixed side: `down`, mobile side: `up`);
//! hosts on one side share the router's wired side, so a packet between them is copied over
//! without the link. A packet the link releases goes to the host its destination names.

use lasthop_link::Dir;
use lasthop_scenario::Side;
use std::net::Ipv4Addr;

/// What to do with a packet read from a host's TUN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Push it into the link in this direction.
    Link(Dir),
    /// Hand it to this host directly (same side).
    Local(usize),
    /// No host has its destination (or it is not IPv4).
    Unroutable,
}

/// The hosts' addresses and sides, by host index (the order of the scenario's hosts).
#[derive(Debug, Clone)]
pub struct Routes {
    hosts: Vec<(u32, Side)>,
}

impl Routes {
    pub fn new(hosts: impl IntoIterator<Item = (Ipv4Addr, Side)>) -> Routes {
        Routes {
            hosts: hosts.into_iter().map(|(a, s)| (u32::from(a), s)).collect(),
        }
    }

    /// The host an IP packet is addressed to. A handful of hosts: a linear scan is fastest.
    pub fn destination(&self, packet: &[u8]) -> Option<usize> {
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            return None;
        }
        let dst = u32::from_be_bytes([packet[16], packet[17], packet[18], packet[19]]);
        self.hosts.iter().position(|&(a, _)| a == dst)
    }

    /// The route of a packet that host `from` sent.
    pub fn from_host(&self, from: usize, packet: &[u8]) -> Route {
        let side = self.hosts[from].1;
        match self.destination(packet) {
            Some(d) if self.hosts[d].1 != side => Route::Link(side.dir()),
            Some(d) => Route::Local(d),
            None => Route::Unroutable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(dst: [u8; 4]) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 20, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1];
        p.extend_from_slice(&dst);
        p
    }

    #[test]
    fn across_the_link_by_side_locally_within_a_side() {
        let r = Routes::new([
            (Ipv4Addr::new(198, 18, 0, 1), Side::Fixed),
            (Ipv4Addr::new(198, 18, 0, 2), Side::Fixed),
            (Ipv4Addr::new(198, 19, 0, 1), Side::Mobile),
        ]);
        assert_eq!(r.from_host(0, &ip([198, 19, 0, 1])), Route::Link(Dir::Down));
        assert_eq!(r.from_host(2, &ip([198, 18, 0, 2])), Route::Link(Dir::Up));
        assert_eq!(r.from_host(0, &ip([198, 18, 0, 2])), Route::Local(1));
        assert_eq!(r.from_host(0, &ip([10, 0, 0, 1])), Route::Unroutable);
        assert_eq!(r.destination(&ip([198, 19, 0, 1])), Some(2));
        let mut v6 = ip([198, 19, 0, 1]);
        v6[0] = 0x60;
        assert_eq!(r.destination(&v6), None);
        assert_eq!(r.destination(&[0x45; 10]), None);
    }
}
