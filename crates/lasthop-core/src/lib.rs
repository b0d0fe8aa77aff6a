//! The vocabulary every lasthop crate shares: integer-nanosecond time, seeded random streams,
//! quantities with units, IP packets and their header bytes (`wire`), and output files (atomic files, pcap captures).

pub mod output;
pub mod packet;
pub mod rng;
pub mod time;
pub mod units;
pub mod wire;

pub use packet::{Ecn, FlowKey, Packet, TcpInfo};
pub use rng::{Seeds, Stream};
pub use time::{Dur, Time};
pub use units::{Bytes, Rate};
