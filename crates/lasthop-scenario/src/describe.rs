//! `lasthop check`'s words for a scenario: a line per host (both modes' settings, each named
//! with the mode that reads it), middlebox and flow.

use crate::config::{ClockPhase, Flow, MiddleboxConfig, Scenario};
use crate::schema::SharedWindowAt;

impl Scenario {
    /// A short human description.
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {:?}: seed {}, replication {}, duration {}, log {:?}",
            self.name, self.seed, self.replication, self.duration, self.log
        );
        let _ = writeln!(s, "link {} ({})", self.link.name, self.link_path.display());
        match self.clock_phase {
            None | Some(ClockPhase::PerHost) => {}
            Some(ClockPhase::Shared) => {
                let _ = writeln!(
                    s,
                    "clock phase (simulation): one for all hosts, drawn per replication"
                );
            }
            Some(ClockPhase::Given(p)) => {
                let _ = writeln!(s, "clock phase (simulation): {p} on every host");
            }
        }
        for h in &self.hosts {
            let _ = write!(
                s,
                "host {} ({} side) {} mtu {}B",
                h.name, h.side, h.address, h.mtu
            );
            if let Some(sw) = h.shared_window {
                let _ = write!(
                    s,
                    " shared advertised window {} B with {} ({})",
                    sw.size,
                    sw.peer,
                    match sw.enforce {
                        SharedWindowAt::Receiver =>
                            "at the receiver in simulation, at the router in emulation",
                        SharedWindowAt::Router => "at the router",
                    }
                );
            }
            let _ = writeln!(s);
            if h.group.as_ref().is_some_and(|g| g.1 > 0) {
                continue; // a group's settings are its first member's
            }
            // Both modes' settings, each named with the mode that reads it (docs/modes.md).
            if !h.tcp_table.is_empty() {
                let keys: Vec<String> = h
                    .tcp_table
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let _ = writeln!(s, "  tcp (simulation: the TCP model): {}", keys.join(" "));
            }
            if !h.sysctl.is_empty() {
                let keys: Vec<String> = h.sysctl.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let _ = writeln!(
                    s,
                    "  sysctl (emulation: the host's Linux): {}",
                    keys.join(" ")
                );
            }
            if !h.route.is_empty() {
                let keys: Vec<String> = [
                    ("initcwnd", h.route.initcwnd.map(|x| x.to_string())),
                    ("initrwnd", h.route.initrwnd.map(|x| x.to_string())),
                    ("rto_min", h.route.rto_min.map(|x| x.to_string())),
                    ("quickack", h.route.quickack.map(|x| x.to_string())),
                ]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
                .collect();
                let _ = writeln!(
                    s,
                    "  route (emulation: the host's Linux): {}",
                    keys.join(" ")
                );
            }
        }
        for m in &self.middleboxes {
            let _ = writeln!(s, "middlebox: {}", m.describe());
        }
        for f in &self.flows {
            let _ = writeln!(
                s,
                "flow {}: {} {} -> {}:{} at {}",
                f.index,
                f.app.describe(),
                self.hosts[f.from].name,
                self.hosts[f.to].address,
                f.port,
                f.start
            );
            if !f.tcp_table.is_empty() {
                let keys: Vec<String> = f
                    .tcp_table
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let _ = writeln!(s, "  tcp options of its client sockets: {}", keys.join(" "));
            }
        }
        s
    }
}

impl Flow {
    /// `from -> to:port, <application>, start T`.
    pub fn describe(&self, sc: &Scenario) -> String {
        format!(
            "{} -> {}, {}, start {}",
            sc.hosts[self.from].name,
            sc.hosts[self.to].name,
            self.app.describe(),
            self.start
        )
    }
}

impl MiddleboxConfig {
    pub fn describe(&self) -> String {
        match self {
            MiddleboxConfig::RateControl(c) => c.describe(),
            MiddleboxConfig::Rdb(c) => c.describe(),
        }
    }
}
