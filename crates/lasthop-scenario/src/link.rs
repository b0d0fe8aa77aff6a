//! The link model a run's drivers build from a scenario: the link spec's, with the scenario's
//! middleboxes and shared advertised windows installed at the router.

use crate::config::{MiddleboxConfig, Scenario};
use crate::schema::SharedWindowAt;

impl Scenario {
    /// The link model of a run: the link spec's, with the scenario's middleboxes installed.
    /// Both modes build their link here.
    pub fn new_link(&self, seeds: lasthop_core::Seeds) -> lasthop_link::Link {
        let mut link = lasthop_link::Link::new(self.link.clone(), seeds, self.log);
        for m in &self.middleboxes {
            match m {
                MiddleboxConfig::RateControl(c) => {
                    let rate = self.link.dirs[c.data_dir.index()].per_state[0].base_rate;
                    lasthop_link::rate_control::install(&mut link, c, rate);
                }
                MiddleboxConfig::Rdb(c) => lasthop_link::rdb::install(&mut link, c),
            }
        }
        self.install_shared_windows(&mut link, SharedWindowAt::Router);
        link
    }

    /// The link model of an emulated run: [`Scenario::new_link`], and every host's shared
    /// advertised window as a middlebox at the router (real Linux has no such option, so
    /// `enforce = "receiver"` is enforced there too).
    pub fn new_emulated_link(&self, seeds: lasthop_core::Seeds) -> lasthop_link::Link {
        let mut link = self.new_link(seeds);
        self.install_shared_windows(&mut link, SharedWindowAt::Receiver);
        link
    }

    /// The router middleboxes of the shared windows whose `enforce` is `at`.
    fn install_shared_windows(&self, link: &mut lasthop_link::Link, at: SharedWindowAt) {
        for h in &self.hosts {
            let Some(sw) = h.shared_window.filter(|sw| sw.enforce == at) else {
                continue;
            };
            lasthop_link::shared_window::install(
                link,
                &lasthop_link::shared_window::SharedWindowConfig {
                    receiver: h.address,
                    peer: sw.peer,
                    size: sw.size,
                },
            );
        }
    }
}
