//! `lasthop-tcp`: a sans-IO TCP endpoint model for simulation, defaulting to the seeds'
//! Linux-2.4-like baseline (SACK, limited transmit, static 200 ms delayed ACK, IW 2, Linux RTO).
//!
//! Packets are real IPv4 + TCP headers with a virtual payload ([`lasthop_core::Packet`]). A
//! [`Connection`] is one endpoint; a [`Host`] demultiplexes by 4-tuple and accepts SYNs on
//! listening ports. See `docs/tcp-model.md` for what is modelled and where it follows Linux 2.4
//! or an RFC.
//!
//! ```
//! use lasthop_core::{Dur, Time};
//! use lasthop_tcp::{Event, Host, TcpConfig};
//! use std::net::{Ipv4Addr, SocketAddrV4};
//!
//! let cfg = TcpConfig::from_toml("timestamps = true").unwrap();
//! let (ca, sa) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 19, 0, 1));
//! let (mut client, mut server) = (Host::new(ca, cfg.clone()), Host::new(sa, cfg));
//! server.listen(80);
//! client.connect(Time::ZERO, 1025, SocketAddrV4::new(sa, 80), 12345);
//!
//! // A wire with a fixed 50 ms delay; the server writes 10 000 bytes and closes.
//! let mut now = Time::ZERO;
//! let mut wire: Vec<(Time, bool, lasthop_core::Packet)> = Vec::new();
//! let mut delivered = 0;
//! loop {
//!     while let Some((key, e)) = server.poll_event() {
//!         if e == Event::Connected {
//!             let c = server.conn_mut(&key).unwrap();
//!             c.send(10_000);
//!             c.close();
//!         }
//!     }
//!     while let Some((key, e)) = client.poll_event() {
//!         match e {
//!             Event::Delivered(n) => delivered += n,
//!             Event::PeerFin => client.conn_mut(&key).unwrap().close(),
//!             _ => {}
//!         }
//!     }
//!     while let Some(p) = client.poll_transmit(now) {
//!         wire.push((now + Dur::from_millis(50), true, p));
//!     }
//!     while let Some(p) = server.poll_transmit(now) {
//!         wire.push((now + Dur::from_millis(50), false, p));
//!     }
//!     let next = wire.iter().map(|w| w.0).chain(client.poll_timeout()).chain(server.poll_timeout()).min();
//!     match next {
//!         Some(t) if t < Time(5_000_000_000) => now = t,
//!         _ => break,
//!     }
//!     let (due, rest): (Vec<_>, Vec<_>) = wire.into_iter().partition(|w| w.0 == now);
//!     wire = rest;
//!     for (_, to_server, p) in due {
//!         if to_server { server.handle_packet(now, &p); } else { client.handle_packet(now, &p); }
//!     }
//!     client.handle_timeout(now);
//!     server.handle_timeout(now);
//! }
//! assert_eq!(delivered, 10_000);
//! ```

mod cc;
pub mod config;
pub mod conn;
pub mod host;
pub mod metrics;
pub mod rtt;
pub mod tfrc;
pub mod wire;

pub use config::{
    ConfigError, DelayedAck, HandshakeRtt, InitialWindow, RecoveryExit, RtoEstimator, RtoTimer,
    SackLossMarking, SsthreshFrom, TcpConfig,
};
pub use config::{CongestionControl, CwndLimited, EarlyRetransmit, Kernel, Pacing, Profile};
pub use config::{Rdb, RdbSsthresh};
pub use conn::{
    AbortReason, CaState, Connection, Event, State, Stats, TraceRecord, SSTHRESH_INFINITE,
};
pub use host::{ConnKey, Host};
pub use metrics::Metrics;
pub use wire::Segment;
