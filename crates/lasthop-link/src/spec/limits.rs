//! The bounds every queue of the link keeps whatever its spec says, and the defaults limits
//! take from Linux: plain constants, so that the stages and the checks share them without
//! importing each other.

/// The most packets a router queue holds, and the most packets waiting in a link send buffer,
/// whatever the spec's limits (a queue "without limit" has this one): a queue fed faster than
/// the link grows until it reaches it, and each packet costs memory (its header bytes in
/// simulation, all its bytes in emulation). Packets over it are dropped as over any limit
/// (cause `queue`). No shipped experiment comes near it.
pub const MAX_QUEUE_PACKETS: u64 = 100_000;

/// STOP's unread input when `input` is not given: Linux's default `txqueuelen`.
pub const DEFAULT_INPUT_PACKETS: u64 = 1000;

/// The packet limit of Linux's `codel` and `pie` qdiscs when none is given (`sch_codel.c`,
/// `sch_pie.c`: `sch->limit = 1000`).
pub const LINUX_CODEL_PIE_LIMIT: u64 = 1000;
/// The packet limit of Linux's `fq_codel` when none is given (`sch_fq_codel.c`:
/// `sch->limit = 10*1024`).
pub const LINUX_FQ_CODEL_LIMIT: u64 = 10 * 1024;
