//! Which keys each mode honours, and what a scenario's keys do in the mode that runs it.
//!
//! A scenario is one format for both modes, but not every key acts in both: the simulator runs
//! the TCP model (`hosts.NAME.tcp`), the emulator the hosts' own Linux (`hosts.NAME.sysctl`,
//! `hosts.NAME.route`, the programs' socket options). The rule (DESIGN.md, decision 8): every
//! key takes effect in the mode that runs it, or is refused there with an error naming the
//! key, the mode and what would make it work; a legal combination that leaves an element doing
//! nothing is a warning (`check`, `sim`, `emu` and `run` print them on stderr).
//!
//! [`KEYS`] is that rule as a table (rendered into `docs/modes.md` by [`keys_markdown`], which a
//! test keeps equal to the file); [`LINUX`] pairs the TCP model's keys with the Linux settings
//! that do the same, so that a scenario written for both modes (a `tcp` table for the model and
//! the matching `sysctl` / `route` for Linux) runs quietly in either, and a key whose
//! counterpart is missing or different is named. [`Scenario::check_mode`] applies both.

use crate::config::{ClockPhase, Flow, Host, MiddleboxConfig, Scenario};
use lasthop_apps::AppParams;
use lasthop_core::spec::{err, warn, SpecError, Warning};
use lasthop_tcp::config::{CongestionControl, DelayedAck, InitialWindow};
use lasthop_tcp::TcpConfig;
use std::fmt::Write as _;

/// The two ways to run a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `lasthop sim`: the TCP model in virtual time.
    Sim,
    /// `lasthop emu`: real Linux hosts in network namespaces.
    Emu,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sim => "simulation",
            Mode::Emu => "emulation",
        }
    }
}

/// What a mode does with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Honour {
    /// It takes effect.
    Yes,
    /// It takes effect for some values; the others are refused (the text says which).
    Some(&'static str),
    /// It takes effect through its counterpart when the spec gives that the same value; else a
    /// warning names it (the text says how).
    Counterpart(&'static str),
    /// Refused with an error (the text says what to do instead).
    Refused(&'static str),
}

/// One row of [`KEYS`].
#[derive(Debug, Clone, Copy)]
pub struct KeyRow {
    /// The key, as a scenario writes it (`NAME` a host, `i` a flow's index).
    pub key: &'static str,
    pub sim: Honour,
    pub emu: Honour,
}

const BOTH: (Honour, Honour) = (Honour::Yes, Honour::Yes);

const fn row(key: &'static str, (sim, emu): (Honour, Honour)) -> KeyRow {
    KeyRow { key, sim, emu }
}

/// Every key of a scenario and what each mode does with it.
pub const KEYS: &[KeyRow] = &[
    row("name, description, duration, log", BOTH),
    row(
        "seed, replication",
        BOTH, // the link's random streams in both; the TCP model's and applications' in sim
    ),
    // The link model runs in both: its traces, Seawind's and netem's keys and the data files
    // they name (read relative to the link spec) included.
    row(
        "link (every key of the link spec, with the trace and data files it names), link_set",
        BOTH,
    ),
    row("hosts.NAME: side, count, address, mtu", BOTH),
    row("hosts.NAME: access_rate, access_delay", BOTH),
    row(
        "hosts.NAME.tcp.KEY",
        (
            Honour::Yes,
            Honour::Counterpart("the hosts run their own Linux TCP: a key with a Linux counterpart (table below) that the host's `sysctl` / `route` (or Linux's default) gives the same value is quiet, any other key is a warning naming the sysctl or route option to set"),
        ),
    ),
    row(
        "hosts.NAME.sysctl.KEY",
        (
            Honour::Counterpart("the TCP model reads `tcp`: a sysctl whose model key (table below) runs with the same value is quiet, any other is a warning naming the `tcp` key to set"),
            Honour::Yes,
        ),
    ),
    row(
        "hosts.NAME.sysctl.tcp_congestion_control",
        (
            Honour::Counterpart("as any sysctl: quiet when `tcp.congestion_control` is the same"),
            Honour::Some("only an algorithm in the machine's `net.ipv4.tcp_allowed_congestion_control` (a new network namespace may use no other); any other is refused before the run, with the command that allows it"),
        ),
    ),
    row(
        "hosts.NAME.route.KEY (initcwnd, initrwnd, rto_min, quickack)",
        (
            Honour::Counterpart("as `sysctl`: quiet when the model's `initial_window`, `rto_min`, `delayed_ack` agree; `initrwnd` has no model counterpart"),
            Honour::Yes,
        ),
    ),
    row(
        "flows[i]: kind, from, to, start, port and the application's parameters",
        BOTH,
    ),
    row(
        "flows[i].tcp.KEY (bulk, thin)",
        (
            Honour::Yes,
            Honour::Some("congestion_control, nagle, thin_linear_timeouts, thin_dupack (socket options; thin_dupack is a warning on Linux 4.13 and later, which ignores it); any other key is refused: Linux sets it per host"),
        ),
    ),
    row(
        "flows[i].congestion_control (bulk)",
        (
            Honour::Some("\"reno\", \"cubic\" and \"bbr\" (the TCP model's), on both ends' sockets; \"bbr\" needs a host that can pace (`tcp.profile = \"linux-6.18\"` or `tcp.pacing`); any other is refused: run it in emulation"),
            Honour::Yes,
        ),
    ),
    row(
        "flows[i].nodelay, flows[i].window_clamp (bulk)",
        (
            Honour::Yes, // the model's nagle = false and window_clamp on both ends' sockets
            Honour::Yes,
        ),
    ),
    row(
        "flows[i].sndbuf, flows[i].rcvbuf (bulk)",
        (
            Honour::Refused("SO_SNDBUF / SO_RCVBUF of the real sockets: the model's send buffer is Linux 6.18's autotuned one (`kernel = \"linux-6.18\"`; none before), and its receive buffer is the host's `tcp.rcvbuf` (the most the receiver advertises); set that, or run in emulation"),
            Honour::Yes,
        ),
    ),
    row("middleboxes", BOTH),
    row(
        "clock_phase",
        (
            Honour::Yes,
            Honour::Some("\"shared\" only: the namespaces run on the machine's one kernel, whose jiffies a run cannot set; \"per_host\" and a given phase are refused"),
        ),
    ),
];

/// Where Linux keeps the counterpart of a TCP model key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `net.ipv4.NAME` in the host's namespace (`hosts.NAME.sysctl`).
    Sysctl(&'static str),
    /// An option of the host's routes across the link (`hosts.NAME.route`).
    Route(&'static str),
}

impl Place {
    /// The scenario key that sets it, under `hosts.NAME`.
    pub fn key(self) -> String {
        match self {
            Place::Sysctl(n) => format!("sysctl.{n}"),
            Place::Route(n) => format!("route.{n}"),
        }
    }
}

/// A TCP model key and the Linux setting that does the same.
#[derive(Debug, Clone, Copy)]
pub struct Counterpart {
    /// The key of `hosts.NAME.tcp`.
    pub model: &'static str,
    pub linux: Place,
    /// Whether a Linux value (as written to /proc, or the route option's) does what the
    /// model's configuration does.
    pub same: fn(&TcpConfig, &str) -> bool,
    /// The Linux value that does what the model's configuration does (None: none does).
    pub linux_value: fn(&TcpConfig) -> Option<String>,
    /// Linux's value in a new namespace when the spec sets none (None: the machine's own).
    pub linux_default: Option<&'static str>,
}

fn flag(b: bool) -> Option<String> {
    Some(u8::from(b).to_string())
}

/// The TCP model keys with a Linux counterpart. The others (`profile`, `fack`, `rcvbuf`, the
/// recovery variants ...) have none the emulator sets: in emulation they are warned about.
pub const LINUX: &[Counterpart] = &[
    Counterpart {
        model: "sack",
        linux: Place::Sysctl("tcp_sack"),
        same: |c, v| (v != "0") == c.sack,
        linux_value: |c| flag(c.sack),
        linux_default: Some("1"),
    },
    Counterpart {
        model: "dsack",
        linux: Place::Sysctl("tcp_dsack"),
        same: |c, v| (v != "0") == c.dsack,
        linux_value: |c| flag(c.dsack),
        linux_default: Some("1"),
    },
    Counterpart {
        model: "timestamps",
        linux: Place::Sysctl("tcp_timestamps"),
        same: |c, v| (v != "0") == c.timestamps,
        linux_value: |c| flag(c.timestamps),
        linux_default: Some("1"),
    },
    Counterpart {
        model: "window_scaling",
        linux: Place::Sysctl("tcp_window_scaling"),
        same: |c, v| (v != "0") == c.window_scaling,
        linux_value: |c| flag(c.window_scaling),
        linux_default: Some("1"),
    },
    Counterpart {
        // Linux 1 asks for ECN and accepts it; 2 (its default) only accepts it, which in a run
        // where no host asks is no ECN, as the model's false.
        model: "ecn",
        linux: Place::Sysctl("tcp_ecn"),
        same: |c, v| (v == "1") == c.ecn,
        linux_value: |c| flag(c.ecn),
        linux_default: Some("2"),
    },
    Counterpart {
        model: "frto",
        linux: Place::Sysctl("tcp_frto"),
        same: |c, v| (v != "0") == c.frto,
        linux_value: |c| Some(if c.frto { "2" } else { "0" }.into()),
        linux_default: Some("2"),
    },
    Counterpart {
        model: "congestion_control",
        linux: Place::Sysctl("tcp_congestion_control"),
        same: |c, v| CongestionControl::from_linux_name(v) == Some(c.congestion_control),
        linux_value: |c| {
            Some(
                match c.congestion_control {
                    CongestionControl::Reno => "reno",
                    CongestionControl::Cubic => "cubic",
                    CongestionControl::Bbr => "bbr",
                }
                .into(),
            )
        },
        linux_default: None,
    },
    Counterpart {
        model: "thin_linear_timeouts",
        linux: Place::Sysctl("tcp_thin_linear_timeouts"),
        same: |c, v| (v != "0") == c.thin_linear_timeouts,
        linux_value: |c| flag(c.thin_linear_timeouts),
        linux_default: Some("0"),
    },
    Counterpart {
        model: "thin_dupack",
        linux: Place::Sysctl("tcp_thin_dupack"),
        same: |c, v| (v != "0") == c.thin_dupack,
        linux_value: |c| flag(c.thin_dupack),
        linux_default: Some("0"),
    },
    Counterpart {
        // RFC 2861's cwnd restart after an idle RTO (`tcp_cwnd_restart`).
        model: "slow_start_after_idle",
        linux: Place::Sysctl("tcp_slow_start_after_idle"),
        same: |c, v| (v != "0") == c.slow_start_after_idle,
        linux_value: |c| flag(c.slow_start_after_idle),
        linux_default: Some("1"),
    },
    Counterpart {
        model: "syn_retries",
        linux: Place::Sysctl("tcp_syn_retries"),
        same: |c, v| v == c.syn_retries.to_string(),
        linux_value: |c| Some(c.syn_retries.to_string()),
        linux_default: Some("6"),
    },
    Counterpart {
        model: "synack_retries",
        linux: Place::Sysctl("tcp_synack_retries"),
        same: |c, v| v == c.synack_retries.to_string(),
        linux_value: |c| Some(c.synack_retries.to_string()),
        linux_default: Some("5"),
    },
    Counterpart {
        model: "retries2",
        linux: Place::Sysctl("tcp_retries2"),
        same: |c, v| v == c.retries2.to_string(),
        linux_value: |c| Some(c.retries2.to_string()),
        linux_default: Some("15"),
    },
    Counterpart {
        // The per-destination metrics cache: Linux saves ssthresh and RTT unless told not to.
        model: "cbi",
        linux: Place::Sysctl("tcp_no_metrics_save"),
        same: |c, v| (v == "0") == c.cbi,
        linux_value: |c| flag(!c.cbi),
        linux_default: Some("0"),
    },
    Counterpart {
        // Linux 4.10+: bit 1 of tcp_recovery is RACK loss detection.
        model: "rack",
        linux: Place::Sysctl("tcp_recovery"),
        same: |c, v| (v.parse::<u32>().unwrap_or(0) & 1 == 1) == c.rack,
        linux_value: |c| flag(c.rack),
        linux_default: Some("1"),
    },
    Counterpart {
        // Linux 4.10+: tcp_early_retrans 0 turns the tail loss probe off, 3 or 4 on (early
        // retransmit itself is gone, RACK's); the model's `early_retransmit` has none.
        model: "tlp",
        linux: Place::Sysctl("tcp_early_retrans"),
        same: |c, v| (v != "0") == c.tlp,
        linux_value: |c| Some(if c.tlp { "3" } else { "0" }.into()),
        linux_default: Some("3"),
    },
    Counterpart {
        // Linux 4.13+: the pacing rate of an algorithm without its own (BBR has one), in
        // percent of cwnd · mss / srtt; it acts when the socket paces (the model's `pacing`).
        model: "pacing_ss_ratio",
        linux: Place::Sysctl("tcp_pacing_ss_ratio"),
        same: |c, v| v == c.pacing_ss_ratio.to_string(),
        linux_value: |c| Some(c.pacing_ss_ratio.to_string()),
        linux_default: Some("200"),
    },
    Counterpart {
        model: "pacing_ca_ratio",
        linux: Place::Sysctl("tcp_pacing_ca_ratio"),
        same: |c, v| v == c.pacing_ca_ratio.to_string(),
        linux_value: |c| Some(c.pacing_ca_ratio.to_string()),
        linux_default: Some("120"),
    },
    Counterpart {
        model: "initial_window",
        linux: Place::Route("initcwnd"),
        same: |c, v| matches!(c.initial_window, InitialWindow::Segments(n) if v == n.to_string()),
        linux_value: |c| match c.initial_window {
            InitialWindow::Segments(n) => Some(n.to_string()),
            InitialWindow::Rfc3390 => None,
        },
        linux_default: Some("10"),
    },
    Counterpart {
        model: "rto_min",
        linux: Place::Route("rto_min"),
        same: |c, v| v == c.rto_min.to_string(),
        linux_value: |c| Some(c.rto_min.to_string()),
        linux_default: Some("200ms"),
    },
    Counterpart {
        model: "delayed_ack",
        linux: Place::Route("quickack"),
        same: |c, v| (v == "1") == (c.delayed_ack == DelayedAck::Off),
        linux_value: |c| flag(c.delayed_ack == DelayedAck::Off),
        linux_default: Some("0"),
    },
];

/// The value a host's `sysctl` or `route` gives a place, as text (`None`: not given).
fn linux_given(h: &Host, p: Place) -> Option<String> {
    match p {
        Place::Sysctl(n) => h
            .sysctl
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.to_proc()),
        Place::Route(n) => {
            let r = &h.route;
            match n {
                "initcwnd" => r.initcwnd.map(|x| x.to_string()),
                "initrwnd" => r.initrwnd.map(|x| x.to_string()),
                "rto_min" => r.rto_min.map(|x| x.to_string()),
                "quickack" => r.quickack.map(|x| u8::from(x).to_string()),
                _ => None,
            }
        }
    }
}

/// `hosts.NAME` of a host as the spec wrote it (a group member: its group's).
fn host_key(h: &Host) -> String {
    format!("hosts.{}", h.group.as_ref().map_or(&h.name, |g| &g.0))
}

/// The route options a host sets, as (name, value text).
fn route_given(h: &Host) -> Vec<(&'static str, String)> {
    ["initcwnd", "initrwnd", "rto_min", "quickack"]
        .into_iter()
        .filter_map(|n| linux_given(h, Place::Route(n)).map(|v| (n, v)))
        .collect()
}

impl Flow {
    /// Simulation: the TCP model's configurations of the flow's two ends, `[server, client]`
    /// (`None`: the host's own). The client's is its host's `tcp` table with the flow's `tcp`
    /// table over it; a bulk flow's socket options act on both ends, as in emulation:
    /// `congestion_control` ("reno", "cubic" or "bbr"), `nodelay` (the model's `nagle = false`),
    /// `window_clamp`. What the model cannot do (another `congestion_control`, `sndbuf`,
    /// `rcvbuf`) is an error naming the key, the mode and what would work.
    pub fn sim_tcp(&self, sc: &Scenario) -> Result<[Option<TcpConfig>; 2], SpecError> {
        let key = self.spec_key();
        let mut sock = toml::Table::new();
        if let AppParams::Bulk(b) = &self.app {
            let s = &b.socket;
            if let Some(cc) = &s.congestion_control {
                if CongestionControl::from_linux_name(cc).is_none() {
                    return Err(err(
                        format!("{key}.congestion_control"),
                        format!(
                            "{cc:?} cannot run in simulation: the TCP model has \"reno\", \"cubic\" and \"bbr\" (it refuses an algorithm it would otherwise run as Reno); run the scenario in emulation (lasthop emu, where the hosts' Linux runs {cc}) or choose one of those"
                        ),
                    ));
                }
                sock.insert("congestion_control".into(), cc.clone().into());
            }
            if let Some(n) = s.nodelay {
                sock.insert("nagle".into(), (!n).into());
            }
            if let Some(w) = s.window_clamp {
                sock.insert("window_clamp".into(), format!("{w}B").into());
            }
            for (name, set, what) in [
                ("sndbuf", s.sndbuf.is_some(), "SO_SNDBUF: the TCP model's send buffer is Linux 6.18's autotuned one (`kernel = \"linux-6.18\"`; before 6.x the application's bytes are always ready to send)"),
                ("rcvbuf", s.rcvbuf.is_some(), "SO_RCVBUF (Linux doubles it and offers part of it as window): the TCP model's receive buffer is the host's tcp.rcvbuf, the most the receiver advertises"),
            ] {
                if set {
                    return Err(err(
                        format!("{key}.{name}"),
                        format!("cannot act in simulation: it is the real sockets' {what}; set hosts.{}.tcp.rcvbuf for the model, or run the scenario in emulation (lasthop emu)", sc.hosts[self.to].name),
                    ));
                }
            }
        }
        if sock.is_empty() {
            return Ok([None, self.tcp.clone()]);
        }
        let mut client = self.tcp_table.clone();
        lasthop_core::spec::merge_tables(&mut client, &sock);
        // The socket's algorithm may not suit the host (BBR where the host cannot pace): the
        // error names the flow's key and what would work.
        let sock_cc = sock.contains_key("congestion_control");
        let on = |h: usize, t: &toml::Table| {
            crate::validate::flows::flow_tcp_config(&key, &sc.hosts[h], t).map_err(|e| {
                if sock_cc && e.key == format!("{key}.tcp.congestion_control") {
                    err(
                        format!("{key}.congestion_control"),
                        format!(
                            "{}; for this flow give hosts.{}.tcp a profile that paces (profile = \"linux-6.18\"), or run the scenario in emulation (lasthop emu)",
                            e.message,
                            host_key(&sc.hosts[h]).trim_start_matches("hosts.")
                        ),
                    )
                } else {
                    e
                }
            })
        };
        let server = on(self.to, &sock)?;
        let client = on(self.from, &client)?;
        Ok([Some(server), Some(client)])
    }

    /// The hosts that send TCP data in this flow (`[]` for a UDP flow): the client of a bulk,
    /// repeat or thin flow; both ends of an http page (requests and objects).
    fn tcp_data_senders(&self) -> Vec<usize> {
        match self.app {
            AppParams::Cbr(_) | AppParams::Ping(_) => vec![],
            AppParams::Http(_) => vec![self.to, self.from],
            AppParams::Bulk(_) | AppParams::Repeat(_) | AppParams::Thin(_) => vec![self.from],
        }
    }
}

impl Scenario {
    /// What the scenario's keys do in `mode`: an error for the first key that mode refuses
    /// (naming the key, the mode and what would work), else the warnings about elements that
    /// do nothing there (the link's own, [`lasthop_link::LinkConfig::warnings`], among them).
    /// The machine's congestion controls are [`Scenario::check_machine`]'s.
    pub fn check_mode(&self, mode: Mode) -> Result<Vec<Warning>, SpecError> {
        let mut w = self.link.warnings();
        // The TCP configurations each flow's ends run with in simulation (refusals first).
        let mut ends = vec![];
        for f in &self.flows {
            let [s, c] = match mode {
                Mode::Sim => f.sim_tcp(self)?,
                Mode::Emu => {
                    f.socket_options()?;
                    [None, None]
                }
            };
            ends.push([
                s.unwrap_or_else(|| self.hosts[f.to].tcp.clone()),
                c.unwrap_or_else(|| self.hosts[f.from].tcp.clone()),
            ]);
        }
        match mode {
            Mode::Sim => {
                self.linux_keys_in_sim(&mut w);
                self.clock_phase_in_sim(&ends, &mut w);
            }
            Mode::Emu => {
                self.clock_phase_in_emu()?;
                self.model_keys_in_emu(&mut w);
            }
        }
        self.ecn_warnings(mode, &ends, &mut w);
        self.middlebox_warnings(&mut w);
        Ok(w)
    }

    /// Simulation: a `clock_phase` nothing reads (no host or flow runs the timer wheel, 6.x
    /// CUBIC or BBR, the model's readers of jiffies).
    fn clock_phase_in_sim(&self, ends: &[[TcpConfig; 2]], w: &mut Vec<Warning>) {
        let reads_jiffies = |c: &TcpConfig| {
            c.timer_wheel
                || c.congestion_control == CongestionControl::Bbr
                || (c.congestion_control == CongestionControl::Cubic
                    && c.kernel == Some(lasthop_tcp::Kernel::Linux618))
        };
        let mut configs = self
            .hosts
            .iter()
            .map(|h| &h.tcp)
            .chain(ends.iter().flatten());
        if self.clock_phase.is_some() && !configs.any(reads_jiffies) {
            w.push(warn(
                "clock_phase",
                "does nothing here: no host's TCP model reads a jiffies clock (the timer wheel, `tcp.timer_wheel`, on in the profile \"linux-6.18\", or 6.x CUBIC's or BBR's `tcp_jiffies32`), so every timer fires on time",
            ));
        }
    }

    /// Emulation: the hosts share the machine's kernel clock; any other `clock_phase` is
    /// refused.
    fn clock_phase_in_emu(&self) -> Result<(), SpecError> {
        match self.clock_phase {
            None | Some(ClockPhase::Shared) => Ok(()),
            Some(_) => Err(err(
                "clock_phase",
                "refused in emulation: the hosts are namespaces of the machine's one kernel, whose jiffies a run cannot set; only \"shared\" (what emulation does anyway) is allowed, or simulate",
            )),
        }
    }

    /// Simulation: each `sysctl` and `route` key, unless the model runs with the same value.
    fn linux_keys_in_sim(&self, w: &mut Vec<Warning>) {
        let mut seen = std::collections::HashSet::new();
        for h in &self.hosts {
            let hk = host_key(h);
            let given = h
                .sysctl
                .iter()
                .map(|(k, v)| {
                    let c = LINUX
                        .iter()
                        .find(|c| c.linux == Place::Sysctl(sysctl_name(k)));
                    (format!("sysctl.{k}"), c, v.to_proc())
                })
                .chain(route_given(h).into_iter().map(|(n, v)| {
                    let c = LINUX.iter().find(|c| c.linux == Place::Route(n));
                    (format!("route.{n}"), c, v)
                }));
            for (k, c, v) in given {
                let key = format!("{hk}.{k}");
                if !seen.insert(key.clone()) {
                    continue; // a group's members share their tables
                }
                match c {
                    Some(c) if (c.same)(&h.tcp, &v) => {}
                    Some(c) => w.push(warn(
                        key,
                        format!(
                            "{v} does nothing in simulation, where the TCP model runs with {hk}.tcp.{} = {}: set that key to match (the model reads `tcp`, the emulator `sysctl` and `route`)",
                            c.model,
                            model_value(&h.tcp, c.model)
                        ),
                    )),
                    None => w.push(warn(
                        key,
                        format!("{v} does nothing in simulation: the TCP model has no counterpart of it (only the emulated hosts' Linux reads it)"),
                    )),
                }
            }
        }
    }

    /// Emulation: each key of a host's `tcp` table, unless its Linux counterpart is set (or
    /// left at Linux's default) to the same value.
    fn model_keys_in_emu(&self, w: &mut Vec<Warning>) {
        let mut seen = std::collections::HashSet::new();
        for h in &self.hosts {
            let hk = host_key(h);
            if h.tcp_table.is_empty() || !seen.insert(hk.clone()) {
                continue;
            }
            let mut none = vec![];
            for k in h.tcp_table.keys() {
                let Some(c) = LINUX.iter().find(|c| c.model == k) else {
                    none.push(k.as_str());
                    continue;
                };
                let want = (c.linux_value)(&h.tcp);
                let key = format!("{hk}.tcp.{k}");
                let set = format!("{hk}.{}", c.linux.key());
                match (linux_given(h, c.linux), c.linux_default) {
                    (Some(v), _) if (c.same)(&h.tcp, &v) => {}
                    (None, Some(d)) if (c.same)(&h.tcp, d) => {}
                    (Some(v), _) => w.push(warn(
                        key,
                        format!(
                            "does nothing in emulation, where the host's Linux runs with {set} = {v}{}",
                            hint(&set, want.as_deref())
                        ),
                    )),
                    (None, d) => w.push(warn(
                        key,
                        format!(
                            "does nothing in emulation, where the host's Linux keeps its own {} ({}){}",
                            c.linux.key(),
                            d.map_or("the machine's default".to_string(), |d| format!("Linux's default {d}")),
                            hint(&set, want.as_deref())
                        ),
                    )),
                }
            }
            if !none.is_empty() {
                w.push(warn(
                    format!("{hk}.tcp"),
                    format!(
                        "{} {} the TCP model's only: emulation runs the host's own Linux TCP, which {} not change (see docs/modes.md)",
                        none.join(", "),
                        if none.len() == 1 { "is" } else { "are" },
                        if none.len() == 1 { "it does" } else { "they do" }
                    ),
                ));
            }
        }
    }

    /// ECN marking asked of a queue when no connection of the run can be ECN-capable.
    fn ecn_warnings(&self, mode: Mode, ends: &[[TcpConfig; 2]], w: &mut Vec<Warning>) {
        let dirs: Vec<_> = lasthop_link::Dir::BOTH
            .iter()
            .zip(&self.link.dirs)
            .filter(|(_, d)| d.queue.ecn_asked)
            .map(|(d, _)| *d)
            .collect();
        if dirs.is_empty() {
            return;
        }
        let tcp_flows: Vec<(usize, &Flow)> = self
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.tcp_data_senders().is_empty())
            .collect();
        let ecn_capable = tcp_flows.iter().any(|(i, f)| match mode {
            Mode::Sim => ends[*i][0].ecn && ends[*i][1].ecn,
            Mode::Emu => {
                let v = |h: &Host| linux_given(h, Place::Sysctl("tcp_ecn"));
                v(&self.hosts[f.from]).as_deref() == Some("1")
                    && v(&self.hosts[f.to]).as_deref() != Some("0")
            }
        });
        if ecn_capable {
            return;
        }
        let how = match mode {
            Mode::Sim => "set tcp = { ecn = true } on both ends' hosts",
            Mode::Emu => "set sysctl tcp_ecn = 1 on the hosts that open the connections",
        };
        for d in dirs {
            w.push(warn(
                format!("{d}.queue"),
                format!(
                    "marks ECN-capable packets ({} with ecn = true), but no connection of this run negotiates ECN in {}, so it drops instead: {how}, or remove ecn",
                    self.link.dirs[d.index()].queue.policy_name(),
                    mode.name()
                ),
            ));
        }
    }

    /// Middleboxes that match no flow of the run.
    fn middlebox_warnings(&self, w: &mut Vec<Warning>) {
        for (i, m) in self.middleboxes.iter().enumerate() {
            let key = format!("middleboxes[{i}]");
            let senders = || self.flows.iter().flat_map(|f| f.tcp_data_senders());
            match m {
                MiddleboxConfig::RateControl(c) => {
                    if !senders().any(|h| self.hosts[h].side.dir() == c.data_dir) {
                        w.push(warn(
                            key,
                            format!(
                                "rate control of TCP data going {} matches no flow: no TCP flow of the run sends data in that direction (give data_dir, or a flow from the {} side)",
                                c.data_dir,
                                match c.data_dir {
                                    lasthop_link::Dir::Down => "fixed",
                                    lasthop_link::Dir::Up => "mobile",
                                }
                            ),
                        ));
                    }
                }
                MiddleboxConfig::Rdb(c) => {
                    let found = senders().any(|h| {
                        c.senders
                            .contains(&std::net::IpAddr::V4(self.hosts[h].address))
                    });
                    if !found {
                        w.push(warn(
                            format!("{key}.hosts"),
                            format!(
                                "bundles the TCP data of {}, but none of them sends TCP data in any flow of the run",
                                c.hosts.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
    }

    /// Emulation on this machine: every host's `sysctl.tcp_congestion_control` must be in the
    /// machine's `allowed` list (a new network namespace may use no other: Linux refuses the
    /// write with "Operation not permitted"); a socket's `TCP_CONGESTION` (a flow's
    /// `congestion_control`) needs only `available` (root may choose any), else the kernel
    /// tries to load the module (a warning). The emulator does not change the machine-wide
    /// list: the error gives the command that does.
    pub fn check_machine(
        &self,
        allowed: &[&str],
        available: &[&str],
    ) -> Result<Vec<Warning>, SpecError> {
        let mut w = vec![];
        for h in &self.hosts {
            let Some(cc) = linux_given(h, Place::Sysctl("tcp_congestion_control")) else {
                continue;
            };
            if allowed.contains(&cc.as_str()) {
                continue;
            }
            let mut list: Vec<&str> = allowed.to_vec();
            list.push(&cc);
            let load = if available.contains(&cc.as_str()) {
                String::new()
            } else {
                format!("sudo modprobe tcp_{cc} && ")
            };
            return Err(err(
                format!("{}.sysctl.tcp_congestion_control", host_key(h)),
                format!(
                    "{cc:?} cannot be set in emulation on this machine: a new network namespace may only use the algorithms in net.ipv4.tcp_allowed_congestion_control ({:?}; Linux refuses any other with \"Operation not permitted\"). The emulator changes nothing machine-wide; allow it with `{load}sudo sysctl -w net.ipv4.tcp_allowed_congestion_control=\"{}\"`, or choose one of {}",
                    allowed.join(" "),
                    list.join(" "),
                    allowed.join(", ")
                ),
            ));
        }
        for f in &self.flows {
            let sock = f.socket_options()?;
            let bulk = match &f.app {
                AppParams::Bulk(b) => b.socket.congestion_control.clone(),
                _ => None,
            };
            for (key, cc) in [
                (
                    format!("{}.tcp.congestion_control", f.spec_key()),
                    sock.congestion_control,
                ),
                (format!("{}.congestion_control", f.spec_key()), bulk),
            ] {
                if let Some(cc) = cc.filter(|cc| !available.contains(&cc.as_str())) {
                    w.push(warn(
                        key,
                        format!(
                            "{cc:?} is not among this machine's available congestion controls ({}): the kernel will try to load tcp_{cc} when the program sets it (`sudo modprobe tcp_{cc}` loads it now)",
                            available.join(" ")
                        ),
                    ));
                }
            }
        }
        Ok(w)
    }

    /// [`Scenario::check_mode`], and in emulation [`Scenario::check_machine`] with this
    /// machine's lists (when /proc has them).
    pub fn check_here(&self, mode: Mode) -> Result<Vec<Warning>, SpecError> {
        let mut w = self.check_mode(mode)?;
        if mode == Mode::Emu && std::path::Path::new("/proc/sys/net/ipv4").exists() {
            // Every sysctl must exist in this kernel (the emulator's preflight says the same).
            for h in &self.hosts {
                for (k, _) in &h.sysctl {
                    let path = std::path::Path::new("/proc/sys/net/ipv4").join(k.replace('.', "/"));
                    if !path.exists() {
                        return Err(err(
                            format!("{}.sysctl.{k}", host_key(h)),
                            format!("this kernel has no sysctl net.ipv4.{k} ({} is missing), so emulation cannot set it: remove it, or run on a kernel that has it", path.display()),
                        ));
                    }
                }
            }
        }
        if mode == Mode::Emu {
            let read = |n: &str| std::fs::read_to_string(format!("/proc/sys/net/ipv4/{n}")).ok();
            if let (Some(allowed), Some(available)) = (
                read("tcp_allowed_congestion_control"),
                read("tcp_available_congestion_control"),
            ) {
                let allowed: Vec<&str> = allowed.split_whitespace().collect();
                let available: Vec<&str> = available.split_whitespace().collect();
                w.extend(self.check_machine(&allowed, &available)?);
            }
            if let Some(d) = read("tcp_congestion_control") {
                w.extend(self.default_cc_warnings(d.trim())?);
            }
            let release = kernel_release();
            w.extend(self.thin_dupack_warnings(release)?);
            w.extend(self.tcp_recovery_warnings(release));
        }
        Ok(w)
    }

    /// Emulation: a host that sends TCP data without choosing its congestion control (no
    /// `sysctl.tcp_congestion_control`, and some of its flows without a per-socket one) runs
    /// the machine's default (`net.ipv4.tcp_congestion_control`, `machine_default`), which a new
    /// namespace inherits; when that is not the algorithm the host's TCP model runs in
    /// simulation, the two modes run different algorithms without a word. One warning per host.
    pub fn default_cc_warnings(&self, machine_default: &str) -> Result<Vec<Warning>, SpecError> {
        let mut w = vec![];
        for (i, h) in self.hosts.iter().enumerate() {
            if linux_given(h, Place::Sysctl("tcp_congestion_control")).is_some() {
                continue;
            }
            let mut unchosen = false;
            for f in self
                .flows
                .iter()
                .filter(|f| f.tcp_data_senders().contains(&i))
            {
                let bulk = match &f.app {
                    AppParams::Bulk(b) => b.socket.congestion_control.is_some(),
                    _ => false,
                };
                if !bulk && f.socket_options()?.congestion_control.is_none() {
                    unchosen = true;
                }
            }
            let model = match h.tcp.congestion_control {
                CongestionControl::Reno => "reno",
                CongestionControl::Cubic => "cubic",
                CongestionControl::Bbr => "bbr",
            };
            if unchosen && model != machine_default {
                w.push(warn(
                    format!("{}.sysctl.tcp_congestion_control", host_key(h)),
                    format!(
                        "not set: in emulation this host sends with this machine's default congestion control {machine_default:?} (net.ipv4.tcp_congestion_control, which a new namespace inherits), where the simulated host's model runs {model:?}; set it (e.g. tcp_congestion_control = {model:?}) for the same algorithm in both modes"
                    ),
                ));
            }
        }
        Ok(w)
    }

    /// Emulation: from Linux 6.17 RACK is the kernel's only loss detection with SACK (the RFC
    /// 6675 code was removed, `net.ipv4.tcp_recovery`'s RACK bit "has no effect"), so a host's
    /// `sysctl.tcp_recovery` without bit 0 does not turn RACK off there.
    pub fn tcp_recovery_warnings(&self, kernel: Option<(u32, u32)>) -> Vec<Warning> {
        let mut w = vec![];
        let Some((major, minor)) = kernel.filter(|&k| k >= (6, 17)) else {
            return w;
        };
        for h in &self.hosts {
            if sysctl_int(h, "tcp_recovery").is_some_and(|n| n & 1 == 0) {
                w.push(warn(
                    format!("{}.sysctl.tcp_recovery", host_key(h)),
                    format!("does not turn RACK off in emulation on this Linux {major}.{minor}: since 6.17 RACK is the kernel's only loss detection with SACK (RFC 6675's was removed), so the host runs RACK; the simulated host's model runs what its `tcp.rack` says"),
                ));
            }
        }
        w
    }

    /// Emulation: whether every host's own Linux runs (RACK, tail loss probes), for the RTO
    /// inference. Both need SACK (`tcp_sack`); tail loss probes are `tcp_early_retrans` 3 or 4
    /// (3.10+, the default 3); RACK is bit 0 of `tcp_recovery` from 4.18 (the default 1) and,
    /// from 6.17, whatever `tcp_recovery` says.
    pub fn emulated_rack_tlp(&self, kernel: Option<(u32, u32)>) -> (bool, bool) {
        let always_rack = kernel.is_some_and(|k| k >= (6, 17));
        let all = |on: &dyn Fn(&Host) -> bool| {
            self.hosts
                .iter()
                .all(|h| sysctl_int(h, "tcp_sack") != Some(0) && on(h))
        };
        let rack =
            all(&|h| always_rack || sysctl_int(h, "tcp_recovery").is_none_or(|n| n & 1 == 1));
        let tlp = all(&|h| sysctl_int(h, "tcp_early_retrans").is_none_or(|n| n >= 3));
        (rack, tlp)
    }

    /// Emulation: `TCP_THIN_DUPACK` is accepted and ignored from Linux 4.13 (the mechanism was
    /// removed), so a flow's `tcp.thin_dupack = true` does nothing on such a kernel.
    pub fn thin_dupack_warnings(
        &self,
        kernel: Option<(u32, u32)>,
    ) -> Result<Vec<Warning>, SpecError> {
        let mut w = vec![];
        let Some((major, minor)) = kernel.filter(|&k| k >= (4, 13)) else {
            return Ok(w);
        };
        for f in &self.flows {
            if f.socket_options()?.thin_dupack == Some(true) {
                w.push(warn(
                    format!("{}.tcp.thin_dupack", f.spec_key()),
                    format!("does nothing in emulation on this Linux {major}.{minor}: the kernel accepts TCP_THIN_DUPACK and ignores it since 4.13 (the mechanism was removed); only the simulator's TCP model runs it"),
                ));
            }
        }
        Ok(w)
    }
}

/// A host's `sysctl.KEY` as an integer, if it sets it to one.
fn sysctl_int(h: &Host, key: &'static str) -> Option<i64> {
    linux_given(h, Place::Sysctl(key))?.trim().parse().ok()
}

/// This machine's kernel version (major, minor), from /proc.
pub fn kernel_release() -> Option<(u32, u32)> {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let mut it = r.trim().split(['.', '-']);
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// `; set KEY = VALUE to match` when some Linux value does what the model does.
fn hint(set: &str, want: Option<&str>) -> String {
    match want {
        Some(v) => format!(": set {set} = {v} to match the TCP model"),
        None => ": no Linux value does what the TCP model does".into(),
    }
}

/// The model's value of a key, as the `tcp` table would write it.
fn model_value(c: &TcpConfig, key: &str) -> String {
    match key {
        "sack" => c.sack.to_string(),
        "dsack" => c.dsack.to_string(),
        "timestamps" => c.timestamps.to_string(),
        "window_scaling" => c.window_scaling.to_string(),
        "ecn" => c.ecn.to_string(),
        "frto" => c.frto.to_string(),
        "congestion_control" => match c.congestion_control {
            CongestionControl::Reno => "\"reno\"".into(),
            CongestionControl::Cubic => "\"cubic\"".into(),
            CongestionControl::Bbr => "\"bbr\"".into(),
        },
        "thin_linear_timeouts" => c.thin_linear_timeouts.to_string(),
        "thin_dupack" => c.thin_dupack.to_string(),
        "syn_retries" => c.syn_retries.to_string(),
        "synack_retries" => c.synack_retries.to_string(),
        "retries2" => c.retries2.to_string(),
        "initial_window" => match c.initial_window {
            InitialWindow::Segments(n) => n.to_string(),
            InitialWindow::Rfc3390 => "\"rfc3390\"".into(),
        },
        "rto_min" => format!("\"{}\"", c.rto_min),
        "delayed_ack" => format!("\"{:?}\"", c.delayed_ack).to_lowercase(),
        "cbi" => c.cbi.to_string(),
        "rack" => c.rack.to_string(),
        "tlp" => c.tlp.to_string(),
        "pacing_ss_ratio" => c.pacing_ss_ratio.to_string(),
        "pacing_ca_ratio" => c.pacing_ca_ratio.to_string(),
        _ => "?".into(),
    }
}

/// A sysctl name as the `&'static str` of its [`Place`] in [`LINUX`] (`"-"`, which no entry
/// has, for any other name).
fn sysctl_name(k: &str) -> &'static str {
    LINUX
        .iter()
        .find_map(|c| match c.linux {
            Place::Sysctl(n) if n == k => Some(n),
            _ => None,
        })
        .unwrap_or("-")
}

/// `docs/modes.md`: [`KEYS`] and [`LINUX`] as tables.
pub fn keys_markdown() -> String {
    let cell = |h: Honour| match h {
        Honour::Yes => "yes".to_string(),
        Honour::Some(t) => format!("some: {t}"),
        Honour::Counterpart(t) => format!("through its counterpart: {t}"),
        Honour::Refused(t) => format!("refused: {t}"),
    };
    let mut s = String::from(
        "# Which keys each mode honours\n\n\
         Generated from `crates/lasthop-scenario/src/modes.rs` (`KEYS`, `LINUX`); the test\n\
         `modes_doc_is_generated_from_the_code` keeps this file equal to it. Regenerate with\n\
         `LASTHOP_WRITE_DOCS=1 cargo test -p lasthop-scenario modes_doc`.\n\n\
         A scenario is one format for both modes. Every key takes effect in the mode that runs it\n\
         or is refused there with an error naming the key, the mode and what would make it work;\n\
         a key that acts only through its counterpart, and a legal combination that leaves an\n\
         element doing nothing (an AQM that can never see a queue, ECN marking with no\n\
         ECN-capable connection, a middlebox that matches no flow), is a warning that `lasthop\n\
         check`, `sim`, `emu` and `run` print on stderr. `lasthop check SCENARIO` prints both\n\
         modes' verdicts.\n\n\
         | key | simulation (`lasthop sim`) | emulation (`lasthop emu`) |\n|---|---|---|\n",
    );
    for r in KEYS {
        let _ = writeln!(s, "| `{}` | {} | {} |", r.key, cell(r.sim), cell(r.emu));
    }
    s.push_str(
        "\n## The TCP model's keys and their Linux counterparts\n\n\
         A `hosts.NAME.tcp` key and the `sysctl` or `route` option below do the same thing. In\n\
         simulation a `sysctl` / `route` value is quiet when the model runs with the same value;\n\
         in emulation a `tcp` key is quiet when the host's `sysctl` / `route` (or, when it sets\n\
         none, Linux's default in a new namespace) has the same value. Any other `tcp` key has no\n\
         counterpart the emulator sets, and any other `sysctl` none in the model: each is a\n\
         warning in the mode that does not read it.\n\n\
         | `tcp` key | Linux | Linux's default |\n|---|---|---|\n",
    );
    for c in LINUX {
        let _ = writeln!(
            s,
            "| `{}` | `{}` | {} |",
            c.model,
            c.linux.key(),
            c.linux_default.map_or(
                "the machine's (inherited from the initial namespace)".into(),
                |d| { format!("`{d}`") }
            )
        );
    }
    s
}
