//! The vocabulary every lasthop crate shares: integer-nanosecond time, seeded random streams,
//! quantities with units, IP packets and their header bytes (`wire`), output files (atomic files,
//! pcap captures), and spec loading (the error that names the key, TOML parsing with key paths).

pub mod layout;
pub mod output;
pub mod packet;
pub mod rng;
pub mod spec;
pub mod stats;
pub mod time;
pub mod units;
pub mod wire;

pub use packet::{Ecn, FlowKey, Packet, TcpInfo};
pub use rng::{Seeds, Stream};
pub use spec::SpecError;
pub use time::{Dur, Time};
pub use units::{ByteCount, Bytes, Rate};

/// `eprintln!` for what a run says on the way (progress, warnings, what it removed): a closed
/// standard error (`lasthop emu -v 2>&1 | head`) is ignored instead of panicking, which in an
/// emulator's teardown would abort it half way and leave its namespaces behind.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
