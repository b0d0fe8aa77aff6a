//! Seawind's emulated wireless path as a sans-IO core, shared by the simulator and the emulator.
//!
//! - [`spec`]: the TOML link spec, its validation, and the resolved [`LinkConfig`];
//! - [`model`]: the [`Link`] state machine (router queue, link buffers, serializer, propagation,
//!   error states with ARQ, in-order release);
//! - [`error_model`]: which transmission attempts fail (the state chain's probability, uniform
//!   loss, a fixed pattern);
//! - [`middlebox`]: per-direction packet hooks at the router (pass, rewrite, delay, drop,
//!   inject); [`rate_control`], [`rdb`] (redundant data bundling) and [`shared_window`] (seed
//!   001's shared advertised window, for emulation) are middleboxes;
//! - [`trace`]: a direction's capacity from a trace file (Mahimahi's delivery opportunities,
//!   or timed rates), with outages; [`cellreplay`] CellReplay's pair of traces (base delay and
//!   light PDOs from a packet-train trace, a heavy trace, chosen by the load);
//!   [`trace_summary`] its Mahimahi-style figures; [`files`] reads the data files specs name;
//! - [`background`]: Seawind's background load, other users' packets sharing the channel;
//! - [`access`]: a host's access link (a FIFO serializer and a delay) before the router;
//! - [`queue`], [`lsb`], [`serializer`], [`lrb`]: the stages of a direction;
//! - [`red`]: Random Early Detection (and adaptive RED) with ECN marking;
//! - [`codel`], [`pie`], [`fq_codel`]: CoDel (RFC 8289), PIE (RFC 8033), FQ-CoDel (RFC 8290);
//! - [`dist`]: duration distributions for state lengths and delays;
//! - [`event`]: the per-packet event log, its CSV writer and the one typed reader of
//!   `events.csv`.

pub mod access;
pub mod background;
pub mod cellreplay;
pub mod dir;
pub mod dist;
pub mod error_model;
pub mod event;
pub mod files;
mod input;
pub mod lrb;
pub mod lsb;
pub mod meter;
pub mod middlebox;
pub mod model;
pub mod netem;
pub mod netem_loss;
pub mod queue;
pub mod serializer;
pub mod spec;
mod timers;
pub mod trace;
pub mod trace_summary;

// The disciplines and middleboxes by their old paths (`lasthop_link::red`, ...), for users.
pub use middlebox::{rate_control, rdb, shared_window};
pub use queue::{codel, fq_codel, pie, red};

pub use access::AccessLink;
pub use dist::Dist;
pub use error_model::{Attempt, ErrorModel, LossModel};
pub use event::{Cause, Event, EventCsv, EventKind, LogLevel};
pub use meter::DirStats;
pub use meter::{Meter, MeterReading};
pub use middlebox::Middlebox;
pub use model::{Link, Output};
pub use queue::QueueDiscipline;
pub use spec::{Dir, LinkConfig, LinkSpec, SpecError};
