//! The project's one quantile lives in `lasthop-core` (the link model's summaries use it too);
//! re-exported here, where the analysis and the experiment summaries have always found it.

pub use lasthop_core::stats::quantile;
