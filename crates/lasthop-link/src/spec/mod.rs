//! Link specs in TOML, and their validation into a [`LinkConfig`] the model runs.
//!
//! A spec describes both directions (`[down]` = fixed side to mobile side, `[up]` = back) and,
//! optionally, a Markov chain of named states that override per-direction parameters. Keys set
//! under `[both]` apply to both directions unless `[down]` or `[up]` sets them too.
//!
//! ```toml
//! name = "r1"
//! [both]
//! rate = "64kbit"
//! delay = "300ms"
//! lsb = "9600B"
//! lrb = "9600B"
//! [down.queue]
//! packets = 20
//! [up.queue]
//! packets = 1
//! initial_state = "good"
//! [states.good]
//! duration = "exponential(15s, min=1s, max=20s)"
//! next = "bad"
//! [states.bad]
//! duration = "uniform(200ms, 1500ms)"
//! next = "good"
//! both = { error = 0.63, handling = "arq", error_delay = "700ms", drop_threshold = "701ms" }
//! ```
//!
//! Loading never panics: a TOML syntax error, an unknown key, a bad unit or an impossible value is
//! a [`SpecError`] naming the key, the value and what is allowed.
//!
//! The files: [`schema`] (the spec as written), [`config`] (what the model runs),
//! [`validate`] (the checks between them), [`queue`] (the router queue's keys, one file per
//! discipline), [`loss`] (the loss models' keys), [`limits`] and [`describe`] (`lasthop
//! check`'s words and warnings). Everything is re-exported here for the link's users; the
//! crate's own files name the file they use.

pub mod config;
pub mod describe;
pub mod limits;
pub mod loss;
pub mod queue;
pub mod schema;
pub mod validate;

pub use crate::dir::Dir;
pub use config::*;
pub use limits::*;
pub use loss::*;
pub use queue::codel::*;
pub use queue::fq_codel::*;
pub use queue::pie::*;
pub use queue::red::*;
pub use queue::*;
pub use schema::*;

// Spec loading is shared by every spec (lasthop-core::spec); re-exported for the link's users.
pub use lasthop_core::spec::{err, from_toml, SpecError};
