//! What an error model is asked (an [`Attempt`]) and the [`ErrorModel`] it implements.

use crate::dir::Dir;
use crate::spec::config::Params;
use lasthop_core::rng::Stream;
use lasthop_core::{Packet, Time};

/// One transmission attempt reaching the far end.
pub struct Attempt<'a> {
    pub now: Time,
    pub dir: Dir,
    pub packet: &'a Packet,
    /// 1 = the first transmission, 2 = the first ARQ retry, ...
    pub attempt: u32,
    /// The parameters of the state in force (its `error` probability and handling).
    pub params: &'a Params,
    /// The bits the attempt sends: the packet and the link's per-packet overhead.
    pub bits: u64,
}

/// Decides which transmission attempts fail. Sans-IO: randomness only from named streams the
/// model owns (or, for the state model, the direction's error stream it is handed).
pub trait ErrorModel: Send {
    /// Whether attempt `a` fails. `errors` is the direction's `link.errors.{dir}` stream, which
    /// the default state model draws from and the handling's error delays draw from after it; a
    /// new model should own its own named stream and leave this one alone, so that adding it
    /// changes no other draw.
    fn fails(&mut self, a: &Attempt<'_>, errors: &mut Stream) -> bool;

    /// The cause its failures carry on their `error` events (`None`: the link's own errors,
    /// which leave the column empty).
    fn cause(&self) -> Option<crate::event::Cause> {
        None
    }
}
