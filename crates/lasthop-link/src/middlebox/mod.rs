//! Middleboxes: per-direction packet hooks at the router, before the queue.
//!
//! A [`Middlebox`] sees every packet that reaches the router in its direction and returns an
//! [`Action`]: pass it on, pass on a rewritten copy, hold it for a while, or drop it; it may also
//! inject new packets, there or later from [`Middlebox::handle_timeout`]. Middleboxes of one
//! direction form a chain in the order they were installed ([`crate::model::Link::add_middlebox`]); a
//! packet a middlebox delays continues with the next one when its delay is over. Injected packets
//! join the router queue of the direction they name directly (they skip that direction's
//! middleboxes, so two boxes cannot feed each other forever) and get their own packet ids.
//!
//! Sans-IO like the link: a middlebox takes `now`, has no clock, sockets, threads or global
//! random state, and says when it next needs to run with [`Middlebox::poll_timeout`], which
//! [`crate::model::Link::poll_timeout`] covers. Every action but `Pass` is an event (`mbox_rewrite`,
//! `mbox_delay`, `mbox_drop`, `mbox_inject`, cause `middlebox`; docs/events.md). With no
//! middlebox installed the link does no middlebox work at all.

//!
//! The files: [`hook`] (the [`Middlebox`] trait, its [`Action`]s and the chain the model runs),
//! and one file per middlebox shipped: [`rate_control`] (seed 004's TCP rate controller),
//! [`rdb`] (seed 003's redundant data bundling on the wire) and [`shared_window`] (seed 001's
//! shared advertised window). They import [`hook`] and the model, never this file.

pub mod hook;
pub mod rate_control;
pub mod rdb;
pub mod shared_window;

pub use hook::{set_tcp_window, Action, Inject, Middlebox};
