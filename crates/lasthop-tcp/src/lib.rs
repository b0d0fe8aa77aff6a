//! `lasthop-tcp`: a sans-IO TCP endpoint model for simulation, defaulting to the seeds'
//! Linux-2.4-like baseline (SACK, limited transmit, static 200 ms delayed ACK, IW 2, Linux RTO).
//!
//! Packets are real IPv4 + TCP headers with a virtual payload ([`lasthop_core::Packet`]). A
//! [`Connection`] is one endpoint; a [`Host`] demultiplexes by 4-tuple and accepts SYNs on
//! listening ports. See `docs/tcp-model.md` for what is modelled and where it follows Linux 2.4
//! or an RFC.

pub mod config;
pub mod conn;
pub mod host;
pub mod metrics;
pub mod rtt;
pub mod wire;

pub use config::{
    ConfigError, DelayedAck, HandshakeRtt, InitialWindow, RecoveryExit, SsthreshFrom, TcpConfig,
};
pub use conn::{
    AbortReason, CaState, Connection, Event, State, Stats, TraceRecord, SSTHRESH_INFINITE,
};
pub use host::{ConnKey, Host};
pub use metrics::Metrics;
pub use wire::Segment;
