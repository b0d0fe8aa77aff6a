//! Seawind's background load (`[down.background]`): the traffic of the link's other users,
//! which shares the channel with ours (anchors: "the competing traffic of other users is
//! injected as background load"; seed 002's parameter table: `background_load`, `bgl_load_type`,
//! `bgl_average_rate`, `bgl_user_priority`, `bgl_output_handling`).
//!
//! Background packets of `packet` bytes arrive at the serializer at a mean `rate` (Poisson or
//! constant-rate arrivals, from `link.background.{dir}`), wait in a FIFO of their own, take
//! the channel for their transmission time at the rate in force (or the trace's capacity), and
//! are discarded at the far end (Seawind's output handling DISCARD): they never meet the router
//! queue, the errors or the LRB, and they log no event (their transmissions count in the
//! serializer's busy time). Who goes first when both wait is `priority`: `"equal"` (the one that
//! waited longer; ours at a tie), `"user"` (ours) or `"background"` (theirs).
//!
//! Seawind's channel allocation among several background users (`bgl_max_users_per_channel`,
//! `bgl_channel_allocation_algorithm`) is not modelled: the background is one aggregate
//! stream.

use crate::dist::Dist;
use lasthop_core::rng::Stream;
use lasthop_core::{Bytes, Dur, Rate, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[down.background]` as written.
#[derive(Deserialize, Serialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSpec {
    /// Mean offered load of the other users.
    pub rate: Option<Rate>,
    /// Each background packet's size (default 576B).
    pub packet: Option<Bytes>,
    /// `"poisson"` (default) or `"cbr"`.
    pub arrivals: Option<Arrivals>,
    /// Who goes first: `"equal"` (default), `"user"` or `"background"`.
    pub priority: Option<Priority>,
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential gaps.
    #[default]
    Poisson,
    /// Equal gaps.
    Cbr,
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// First come, first served; ours at a tie.
    #[default]
    Equal,
    /// Ours first.
    User,
    /// Theirs first.
    Background,
}

/// The validated background load of a direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    pub rate: Rate,
    pub packet: u64,
    pub arrivals: Arrivals,
    pub priority: Priority,
}

impl Background {
    pub fn validate(key: &str, b: &BackgroundSpec) -> Result<Background, lasthop_core::SpecError> {
        use lasthop_core::spec::err;
        let rate = b.rate.ok_or_else(|| {
            err(
                format!("{key}.rate"),
                "missing: the other users' mean load, e.g. rate = \"4800bit\" (Seawind's bgl_average_rate)",
            )
        })?;
        if rate.is_unlimited() {
            return Err(err(
                format!("{key}.rate"),
                "\"unlimited\": a background load would take the whole channel; give a rate",
            ));
        }
        let packet = b.packet.map_or(576, |p| p.0);
        if !(1..=65535).contains(&packet) {
            return Err(err(
                format!("{key}.packet"),
                format!("{packet}B: allowed 1B..65535B"),
            ));
        }
        Ok(Background {
            rate,
            packet,
            arrivals: b.arrivals.unwrap_or_default(),
            priority: b.priority.unwrap_or_default(),
        })
    }

    /// The mean gap between arrivals.
    fn gap(&self) -> Dur {
        self.rate.tx_time(self.packet).max(Dur(1))
    }
}

/// A direction's background traffic as it runs.
pub(crate) struct Load {
    /// The next arrival.
    pub next: Time,
    /// Arrival times of the packets waiting for the channel.
    pub waiting: VecDeque<Time>,
    /// A background packet is being sent.
    pub busy: bool,
    /// Packets sent, and packets the waiting line could not take.
    pub sent: u64,
    pub lost: u64,
    rng: Stream,
}

impl Load {
    pub fn new(b: &Background, mut rng: Stream) -> Load {
        let next = Time::ZERO + Load::draw_gap(b, &mut rng);
        Load {
            next,
            waiting: VecDeque::new(),
            busy: false,
            sent: 0,
            lost: 0,
            rng,
        }
    }

    fn draw_gap(b: &Background, rng: &mut Stream) -> Dur {
        match b.arrivals {
            Arrivals::Cbr => b.gap(),
            Arrivals::Poisson => Dist::exponential(b.gap()).sample(rng).max(Dur(1)),
        }
    }

    /// The arrival due now: it joins the waiting line (up to the queue ceiling); returns when
    /// the next one comes.
    pub fn arrive(&mut self, b: &Background) -> Time {
        if (self.waiting.len() as u64) < crate::spec::limits::MAX_QUEUE_PACKETS {
            self.waiting.push_back(self.next);
        } else {
            self.lost += 1;
        }
        self.next += Load::draw_gap(b, &mut self.rng);
        self.next
    }

    /// Whether a background packet goes before ours, which has waited since `ours` (`None`:
    /// none of ours can start).
    pub fn goes_first(&self, b: &Background, ours: Option<Time>) -> bool {
        let Some(&theirs) = self.waiting.front() else {
            return false;
        };
        match (ours, b.priority) {
            (None, _) => true,
            (Some(_), Priority::Background) => true,
            (Some(_), Priority::User) => false,
            (Some(o), Priority::Equal) => theirs < o,
        }
    }
}
