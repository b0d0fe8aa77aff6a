//! A spec's checks and its resolution into a [`LinkConfig`]: directions over `both`, states over
//! the base link, the data files read relative to the spec. The router queue's and the loss
//! model's own checks are in [`super::queue`] and [`super::loss`].

use crate::background::Background;
use crate::cellreplay::CellReplay;
use crate::dir::Dir;
use crate::dist::{Dist, NumDist};
use crate::netem::NetemConfig;
use crate::spec::config::*;
use crate::spec::loss::validate_loss;
use crate::spec::loss::LossModel;
use crate::spec::queue::validate_queue;
use crate::spec::schema::*;
use crate::trace::{DelayTrace, Trace};
use indexmap::IndexMap;
use lasthop_core::spec::from_toml;
use lasthop_core::spec::{err, SpecError};
use lasthop_core::{Dur, Rate, Time};

use std::path::Path;

/// A distribution of the spec, of either kind (see [`LinkSpec::each_dist`]).
enum AnyDist<'a> {
    Duration(&'a mut Dist),
    Number(&'a mut NumDist),
}

/// Weighted choices among states: (state index, probability).
type Choices = Vec<(usize, f64)>;

impl LinkSpec {
    pub fn parse(text: &str) -> Result<LinkSpec, SpecError> {
        from_toml(text)
    }

    /// Reads and validates a link spec file; the data files it names (traces) are relative to
    /// its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<LinkConfig, SpecError> {
        let path = path.as_ref();
        let with_file = |mut e: SpecError| {
            e.file = Some(path.display().to_string());
            e
        };
        let text = lasthop_core::spec::read_spec_text(path)
            .map_err(|e| with_file(err("", e.to_string())))?;
        let spec = LinkSpec::parse(&text).map_err(with_file)?;
        spec.validate_in(path.parent().unwrap_or(Path::new("")))
            .map_err(with_file)
    }

    /// Parses and validates TOML text (data files it names relative to the working directory).
    pub fn config_from_str(text: &str) -> Result<LinkConfig, SpecError> {
        LinkSpec::parse(text)?.validate()
    }

    /// [`LinkSpec::validate_in`] with data files relative to the working directory.
    pub fn validate(&self) -> Result<LinkConfig, SpecError> {
        self.validate_in(Path::new(""))
    }

    /// Checks every value and resolves the directions and states into a [`LinkConfig`]; the
    /// data files the spec names (traces) are read relative to `base`.
    pub fn validate_in(&self, base: &Path) -> Result<LinkConfig, SpecError> {
        let (cfg, read) = crate::files::recording(|| {
            let mut spec = self.clone();
            spec.load_user_files(base)?;
            spec.validate_loaded(base)
        });
        let mut cfg = cfg?;
        cfg.data_files = read;
        Ok(cfg)
    }

    /// Reads the values of every `user(FILE)` distribution, relative to `base`.
    fn load_user_files(&mut self, base: &Path) -> Result<(), SpecError> {
        self.each_dist(&mut |key, d| match d {
            AnyDist::Duration(d) => d.load_files(key, base),
            AnyDist::Number(d) => d.load_files(key, base),
        })
    }

    /// Calls `f` with every distribution of the spec and its key path. A new key holding a
    /// distribution is added here, so that a `user` file in it is read.
    fn each_dist(
        &mut self,
        f: &mut dyn FnMut(&str, AnyDist<'_>) -> Result<(), SpecError>,
    ) -> Result<(), SpecError> {
        for (name, t) in [
            ("both", &mut self.both),
            ("down", &mut self.down),
            ("up", &mut self.up),
        ] {
            let k = |f: &str| format!("{name}.{f}");
            for (key, d) in [
                ("extra_delay", &mut t.extra_delay),
                ("error_delay", &mut t.error_delay),
                ("allocation_delay", &mut t.allocation_delay),
                ("rate_change_interval", &mut t.rate_change_interval),
            ] {
                if let Some(d) = d {
                    f(&k(key), AnyDist::Duration(d))?;
                }
            }
            for (key, d) in [
                ("error", &mut t.error),
                ("available_rate", &mut t.available_rate),
                ("output_dropper", &mut t.output_dropper),
            ] {
                if let Some(d) = d {
                    f(&k(key), AnyDist::Number(d))?;
                }
            }
            for (i, sd) in t.delays.iter_mut().flatten().enumerate() {
                f(
                    &k(&format!("delays[{i}].delay")),
                    AnyDist::Duration(&mut sd.delay),
                )?;
            }
        }
        for (name, st) in self.states.iter_mut() {
            if let Some(d) = &mut st.duration {
                f(&format!("states.{name}.duration"), AnyDist::Duration(d))?;
            }
            for (dir, p) in [
                ("both", &mut st.both),
                ("down", &mut st.down),
                ("up", &mut st.up),
            ] {
                let k = |f: &str| format!("states.{name}.{dir}.{f}");
                if let Some(d) = &mut p.extra_delay {
                    f(&k("extra_delay"), AnyDist::Duration(d))?;
                }
                if let Some(d) = &mut p.error_delay {
                    f(&k("error_delay"), AnyDist::Duration(d))?;
                }
                if let Some(d) = &mut p.error {
                    f(&k("error"), AnyDist::Number(d))?;
                }
            }
        }
        Ok(())
    }

    fn validate_loaded(&self, base: &Path) -> Result<LinkConfig, SpecError> {
        let mtu = self.mtu.map(|m| m.0);
        let mtu32 = mtu.map(|m| m as u32);
        if let Some(m) = mtu {
            if !(68..=65535).contains(&m) {
                return Err(err(
                    "mtu",
                    format!("{m}B is not a valid IPv4 MTU: allowed 68B..65535B"),
                ));
            }
        }
        let (states, initial) = self.validate_states()?;
        let dirs = [
            self.validate_dir(Dir::Down, &states, base)?,
            self.validate_dir(Dir::Up, &states, base)?,
        ];
        for (d, dc) in Dir::BOTH.iter().zip(&dirs) {
            for (buf, size) in [("lsb", dc.lsb), ("lrb", dc.lrb)] {
                if let (Some(size), Some(m)) = (size, mtu) {
                    if size < m {
                        return Err(err(
                            format!("{d}.{buf}"),
                            format!("{size}B cannot hold one packet of the {m}B MTU: a buffer holds whole packets only"),
                        ));
                    }
                }
            }
        }
        Ok(LinkConfig {
            name: self.name.clone().unwrap_or_else(|| "link".into()),
            description: self.description.clone(),
            mtu: mtu32,
            dirs,
            states,
            initial,
            data_files: vec![],
        })
    }

    fn validate_states(&self) -> Result<(Vec<StateConfig>, Choices), SpecError> {
        if self.states.is_empty() {
            if self.initial_state.is_some() {
                return Err(err(
                    "initial_state",
                    "there are no [states.NAME] tables to start in",
                ));
            }
            let steady = StateConfig {
                name: "steady".into(),
                duration: None,
                next: vec![],
            };
            return Ok((vec![steady], vec![(0, 1.0)]));
        }
        let names: Vec<&String> = self.states.keys().collect();
        let resolve = |key: &str, c: &Choice| -> Result<Vec<(usize, f64)>, SpecError> {
            let pairs: Vec<(String, f64)> = match c {
                Choice::One(n) => vec![(n.clone(), 1.0)],
                Choice::Weighted(m) => m.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            };
            let mut out = vec![];
            for (name, p) in pairs {
                let idx = names.iter().position(|n| **n == name).ok_or_else(|| {
                    err(
                        key,
                        format!(
                            "no state is called {name:?}; the states are {}",
                            quoted_list(&names)
                        ),
                    )
                })?;
                if !(0.0..=1.0).contains(&p) || p.is_nan() {
                    return Err(err(
                        format!("{key}.{name}"),
                        format!("probability {p} is outside 0..1"),
                    ));
                }
                out.push((idx, p));
            }
            let sum: f64 = out.iter().map(|(_, p)| p).sum();
            if (sum - 1.0).abs() > 1e-9 {
                return Err(err(
                    key,
                    format!("the probabilities add up to {sum}, they must add up to 1"),
                ));
            }
            Ok(out)
        };
        let initial = match &self.initial_state {
            Some(c) => resolve("initial_state", c)?,
            None if self.states.len() == 1 => vec![(0, 1.0)],
            None => {
                return Err(err(
                    "initial_state",
                    format!(
                        "missing: with several states, say which one the link starts in ({})",
                        quoted_list(&names)
                    ),
                ))
            }
        };
        let mut states = vec![];
        for (name, s) in &self.states {
            let key = format!("states.{name}");
            // State names are written into events.csv (quoted when they need it, but other
            // readers split on commas) and read in spreadsheets.
            if let Some(c) = name.chars().find(|c| matches!(c, ',' | '"' | '\n' | '\r')) {
                return Err(err(
                    key,
                    format!(
                        "state name {name:?} contains {c:?}: a state name is written into events.csv, so it may not contain a comma, a double quote or a line break, nor start with '=', '+', '-', '@' or a tab"
                    ),
                ));
            }
            if lasthop_core::spec::formula_leading(name) {
                return Err(err(
                    key,
                    format!(
                        "state name {name:?} starts with {:?}: a state name is written into events.csv, where a spreadsheet would take it for a formula; it may not start with '=', '+', '-', '@' or a tab, nor contain a comma, a double quote or a line break",
                        name.chars().next().unwrap_or(' ')
                    ),
                ));
            }
            if name.is_empty() {
                return Err(err(key, "a state needs a non-empty name"));
            }
            let next = match &s.next {
                Some(c) => resolve(&format!("{key}.next"), c)?,
                None => vec![],
            };
            if s.duration.is_some() && next.is_empty() {
                return Err(err(
                    format!("{key}.next"),
                    "missing: a state with a duration must say which state comes next",
                ));
            }
            if s.duration.is_none() && !next.is_empty() {
                return Err(err(
                    format!("{key}.duration"),
                    "missing: a state with a next state needs a duration",
                ));
            }
            if let Some(d) = &s.duration {
                if d.max() == Some(Dur::ZERO) {
                    return Err(err(
                        format!("{key}.duration"),
                        "a state must last longer than 0s",
                    ));
                }
            }
            states.push(StateConfig {
                name: name.clone(),
                duration: s.duration.clone(),
                next,
            });
        }
        Ok((states, initial))
    }

    fn validate_dir(
        &self,
        d: Dir,
        states: &[StateConfig],
        files_dir: &Path,
    ) -> Result<DirConfig, SpecError> {
        let own = match d {
            Dir::Down => &self.down,
            Dir::Up => &self.up,
        };
        let b = &self.both;
        // The key path of a value: the direction's own table if it sets it, else `both`.
        let src = |set: bool| if set { d.name() } else { "both" };
        let base_rate = own.rate.or(b.rate).unwrap_or(Rate::UNLIMITED);
        let delay = own.delay.or(b.delay).unwrap_or(Dur::ZERO);
        let overhead = own.overhead.or(b.overhead).unwrap_or_default().0;
        if overhead > 65535 {
            return Err(err(
                format!("{}.overhead", src(own.overhead.is_some())),
                format!("{overhead}B per packet is more than a packet: allowed 0B..65535B"),
            ));
        }
        let lsb = own.lsb.or(b.lsb).map(|x| x.0);
        let lrb = own.lrb.or(b.lrb).map(|x| x.0);
        for (name, v, set) in [
            ("lsb", lsb, own.lsb.is_some()),
            ("lrb", lrb, own.lrb.is_some()),
        ] {
            if v == Some(0) {
                return Err(err(
                    format!("{}.{name}", src(set)),
                    match name {
                        "lsb" => "0B holds no packet: give a size, or leave the key out for a buffer of the one packet being sent",
                        _ => "0B holds no packet: give a size, or leave the key out for no limit",
                    },
                ));
            }
        }
        // Without `lsb` the link send buffer holds only the packet being sent and frees it when
        // its last bit is sent (a link with no buffer of its own, as a wired interface's
        // device ring of one): link-layer ACK emulation would hold that one packet until it
        // left the LRB, one packet per round trip, so it is refused there. With `lsb` it is on
        // unless `link_ack = false` (Seawind's `link_layer_ack_emulation = TRUE`).
        let link_ack = match (own.link_ack.or(b.link_ack), lsb) {
            (Some(true), None) => {
                return Err(err(
                    format!("{}.link_ack", src(own.link_ack.is_some())),
                    "true needs a link send buffer: this direction has no `lsb`, so its LSB holds only the packet being sent, and holding that packet until it leaves the LRB would make the link stop-and-wait (one packet per round trip). Give the LSB a size (e.g. lsb = \"9600B\", Seawind's) or remove `link_ack`",
                ))
            }
            (Some(x), _) => x,
            (None, lsb) => lsb.is_some(),
        };
        if let (Some(_), None) = (own.lsb_admit.or(b.lsb_admit), lsb) {
            return Err(err(
                format!("{}.lsb_admit", src(own.lsb_admit.is_some())),
                "says when a packet may enter a link send buffer of `lsb` bytes, but this direction has no `lsb` (its LSB holds only the packet being sent): give `lsb` or remove `lsb_admit`",
            ));
        }
        let link_ack_delay = own.link_ack_delay.or(b.link_ack_delay);
        if let Some(x) = link_ack_delay {
            let key = format!("{}.link_ack_delay", src(own.link_ack_delay.is_some()));
            if !link_ack && x > Dur::ZERO {
                return Err(err(
                    key,
                    "the link-level ACK's delay needs `link_ack = true` and a link send buffer (`lsb`): without link-layer ACK emulation the space is freed when the packet is sent",
                ));
            }
            if x > Dur::from_secs(60) {
                return Err(err(key, format!("{x} is too long: allowed 0s..=60s")));
            }
        }
        let queue_src = src(own.queue.is_some());
        let queue = validate_queue(
            &format!("{queue_src}.queue"),
            own.queue.as_ref().or(b.queue.as_ref()),
        )?;
        let delays_src = src(own.delays.is_some());
        let delays = own.delays.clone().or(b.delays.clone()).unwrap_or_default();
        for (i, s) in delays.iter().enumerate() {
            let key = format!("{delays_src}.delays[{i}]");
            match (s.nth, s.probability) {
                (Some(0), None) => {
                    return Err(err(
                        format!("{key}.nth"),
                        "0: packets are counted from 1 (the first packet sent down the link, the SYN included): allowed 1 or more",
                    ))
                }
                (Some(_), None) => {}
                (None, Some(p)) if (0.0..=1.0).contains(&p) => {}
                (None, Some(p)) => {
                    return Err(err(
                        format!("{key}.probability"),
                        format!("{p} is outside 0..1"),
                    ))
                }
                _ => {
                    return Err(err(
                        key,
                        "give exactly one of `nth` (a packet number) or `probability`",
                    ))
                }
            }
        }
        let sched_src = src(own.schedule.is_some());
        let mut schedule: Vec<(Time, Rate)> = own
            .schedule
            .clone()
            .or(b.schedule.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|s| (Time(s.at.0), s.rate))
            .collect();
        if schedule.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(err(
                format!("{sched_src}.schedule"),
                "the steps must be in increasing order of `at`",
            ));
        }
        schedule.sort_by_key(|s| s.0);

        let base = Params {
            rate_override: None,
            base_rate,
            delay,
            extra_delay: own.extra_delay.clone().or(b.extra_delay.clone()),
            error: 0.0,
            error_dist: None,
            error_unit: ErrorUnit::Packet,
            handling: Handling::Drop,
            error_delay: None,
            retries: None,
            drop_threshold: None,
        };
        let base_err = merge_err(&own.err_spec(), &b.err_spec());
        let mut per_state = vec![];
        for i in 0..states.len() {
            let (key, sp) = match self.states.get_index(i) {
                Some((name, s)) => {
                    let own_s = match d {
                        Dir::Down => &s.down,
                        Dir::Up => &s.up,
                    };
                    let set = own_s != &StateParams::default();
                    (
                        format!("states.{name}.{}", src(set)),
                        Some(merge_state(own_s, &s.both)),
                    )
                }
                None => (src(own.err_spec() != ErrSpec::default()).to_string(), None),
            };
            let mut p = base.clone();
            let mut e = base_err.clone();
            if let Some(sp) = &sp {
                p.rate_override = sp.rate;
                p.delay = sp.delay.unwrap_or(p.delay);
                p.extra_delay = sp.extra_delay.clone().or(p.extra_delay);
                e = merge_err(&sp.err, &e);
            }
            apply_err(&key, &e, &mut p)?;
            per_state.push(p);
        }
        let loss_src = src(own.loss.is_some());
        let loss = validate_loss(
            &format!("{loss_src}.loss"),
            own.loss.as_ref().or(b.loss.as_ref()),
            files_dir,
        )?;
        if loss != LossModel::States {
            if let Some((i, p)) = per_state.iter().enumerate().find(|(_, p)| p.has_errors()) {
                let whose = match self.states.get_index(i) {
                    Some((name, _)) => format!(" in state {name:?}"),
                    None => String::new(),
                };
                return Err(err(
                    format!("{loss_src}.loss.model"),
                    format!(
                        "the loss model replaces the states' `error` in this direction, which is also set ({}{whose}): remove one of them",
                        p.error_text()
                    ),
                ));
            }
        }
        let (trace, cellreplay) =
            validate_trace(d, own, b, &schedule, &per_state, &self.states, files_dir)?;
        let pick = |o: &Option<Dist>, bo: &Option<Dist>| o.clone().or(bo.clone());
        let idle_timeout = own.idle_timeout.or(b.idle_timeout);
        let allocation = match (pick(&own.allocation_delay, &b.allocation_delay), idle_timeout) {
            (Some(a), t) => Some((a, t.unwrap_or(Dur::ZERO))),
            (None, Some(_)) => {
                return Err(err(
                    format!("{}.idle_timeout", src(own.idle_timeout.is_some())),
                    "says how long the link must be idle before a packet needs the allocation delay, but there is no `allocation_delay`: give one or remove `idle_timeout`",
                ))
            }
            (None, None) => None,
        };
        let avail = own.available_rate.clone().or(b.available_rate.clone());
        let interval = pick(&own.rate_change_interval, &b.rate_change_interval);
        let available = match (avail, interval) {
            (Some(a), Some(i)) => {
                let key = src(own.available_rate.is_some());
                if let Some(t) = &trace {
                    return Err(err(
                        format!("{key}.available_rate"),
                        format!("the {d} direction's rate comes from its trace ({:?}): an available rate cannot scale it; write the variation into the trace", t.file),
                    ));
                }
                if let Some(x) = a.as_static().filter(|x| *x < 0.0) {
                    return Err(err(
                        format!("{key}.available_rate"),
                        format!("{x} is below 0: the available rate multiplies the rate, allowed 0 or more (0 stops the link until the next change)"),
                    ));
                }
                if a.as_static() == Some(0.0) {
                    return Err(err(
                        format!("{key}.available_rate"),
                        "a multiplier of 0 for ever never sends: give a distribution, or a positive number",
                    ));
                }
                if i.max() == Some(Dur::ZERO) {
                    return Err(err(
                        format!("{}.rate_change_interval", src(own.rate_change_interval.is_some())),
                        "0s: the available rate must hold for some time; give a positive duration or distribution",
                    ));
                }
                Some((a, i))
            }
            (Some(_), None) => {
                return Err(err(
                    format!("{}.rate_change_interval", src(own.available_rate.is_some())),
                    "missing: `available_rate` is drawn again every `rate_change_interval` (a duration or a distribution, e.g. \"exponential(2s)\")",
                ))
            }
            (None, Some(_)) => {
                return Err(err(
                    format!("{}.available_rate", src(own.rate_change_interval.is_some())),
                    "missing: `rate_change_interval` says how often the available rate changes, but no `available_rate` is given (a multiplier of the rate, e.g. \"uniform(0.5, 1)\")",
                ))
            }
            (None, None) => None,
        };
        let output_dropper = own.output_dropper.clone().or(b.output_dropper.clone());
        if let Some(o) = &output_dropper {
            o.check_probability(&format!(
                "{}.output_dropper",
                src(own.output_dropper.is_some())
            ))?;
        }
        Ok(DirConfig {
            overhead: overhead as u32,
            lsb,
            lrb,
            link_ack,
            link_ack_delay: link_ack_delay.unwrap_or(Dur::ZERO),
            lsb_admit: own.lsb_admit.or(b.lsb_admit).unwrap_or_default(),
            in_order: own.in_order.or(b.in_order).unwrap_or(true),
            queue,
            delays,
            schedule,
            per_state,
            loss,
            trace,
            allocation,
            available,
            output_dropper,
            delay_trace: validate_delay_trace(d, own, b, &self.states, files_dir)?,
            cellreplay,
            netem: match own.netem.as_ref().or(b.netem.as_ref()) {
                Some(n) => NetemConfig::validate(
                    &format!("{}.netem", src(own.netem.is_some())),
                    n,
                    delay,
                    own.in_order.or(b.in_order).unwrap_or(true),
                )?,
                None => NetemConfig::default(),
            },
            background: match own.background.as_ref().or(b.background.as_ref()) {
                Some(bg) => Some(Background::validate(
                    &format!("{}.background", src(own.background.is_some())),
                    bg,
                )?),
                None => None,
            },
        })
    }
}

/// The direction's trace, if it has one: the most specific of `rate` and `trace` gives the
/// direction's capacity (its own table over `both`), and nothing else may change a traced
/// direction's rate.
fn validate_trace(
    d: Dir,
    own: &DirSpec,
    b: &DirSpec,
    schedule: &[(Time, Rate)],
    per_state: &[Params],
    states: &IndexMap<String, StateSpec>,
    base: &Path,
) -> Result<(Option<Trace>, Option<CellReplay>), SpecError> {
    for (name, t) in [(d.name(), own), ("both", b)] {
        if t.trace.is_some() && t.rate.is_some() {
            return Err(err(
                format!("{name}.rate"),
                format!("`{name}.trace` gives this rate already: remove one of them"),
            ));
        }
    }
    let (key, spec) = match (&own.trace, own.rate, &b.trace) {
        (Some(t), _, _) => (format!("{d}.trace"), t),
        (None, None, Some(t)) => ("both.trace".to_string(), t),
        _ => return Ok((None, None)),
    };
    if !schedule.is_empty() {
        let src = if own.schedule.is_some() {
            d.name()
        } else {
            "both"
        };
        return Err(err(
            format!("{src}.schedule"),
            format!("the {d} direction's rate comes from its trace (`{key}`): a schedule of rates cannot change it; write the changes into the trace"),
        ));
    }
    if let Some(i) = per_state.iter().position(|p| p.rate_override.is_some()) {
        let name = states.get_index(i).map_or("", |(n, _)| n.as_str());
        return Err(err(
            format!("states.{name}.rate"),
            format!("the {d} direction's rate comes from its trace (`{key}`): a state cannot override it; give the rate in the other direction's table only (`states.{name}.{}`)", match d { Dir::Down => "up", Dir::Up => "down" }),
        ));
    }
    if let Some(c) = &spec.cellreplay {
        if spec.mahimahi.is_some() || spec.rates.is_some() {
            return Err(err(
                format!("{key}.cellreplay"),
                format!("give one of `mahimahi`, `rates` or `cellreplay` in `{key}`, not more: `cellreplay`'s `heavy` is the direction's Mahimahi trace"),
            ));
        }
        // The train trace gives the base delay: nothing else may.
        let base_from = format!("{key}.cellreplay.train");
        for (name, t) in [(d.name(), own), ("both", b)] {
            if t.delay.is_some() {
                return Err(err(
                    format!("{name}.delay"),
                    format!("the {d} direction's base delay comes from CellReplay's packet-train trace (`{base_from}`): remove `delay`"),
                ));
            }
            if t.delay_trace.is_some() {
                return Err(err(
                    format!("{name}.delay_trace"),
                    format!("the {d} direction's base delay comes from CellReplay's packet-train trace (`{base_from}`): remove the delay trace"),
                ));
            }
        }
        if let Some(name) = state_with_delay(states, d) {
            return Err(err(
                format!("states.{name}.delay"),
                format!("the {d} direction's base delay comes from CellReplay's packet-train trace (`{base_from}`): a state cannot override it"),
            ));
        }
        let looping = spec.looping.unwrap_or(true);
        let pair = CellReplay::load(
            &format!("{key}.cellreplay"),
            c,
            spec.opportunity,
            looping,
            base,
        )?;
        return Ok((Some((*pair.heavy).clone()), Some(pair)));
    }
    Trace::load(&key, spec, base).map(|t| (Some(t), None))
}

/// The first state that sets a delay for direction `d` (its own table or `both`): a delay
/// trace or CellReplay's train trace gives the direction's delay, so none may.
fn state_with_delay(states: &IndexMap<String, StateSpec>, d: Dir) -> Option<&String> {
    states
        .iter()
        .find(|(_, s)| {
            let own = match d {
                Dir::Down => &s.down,
                Dir::Up => &s.up,
            };
            own.delay.or(s.both.delay).is_some()
        })
        .map(|(name, _)| name)
}

/// The direction's delay trace, if it has one (its own table over `both`): it replaces the
/// `delay` of the direction and of its states, which may not set one too.
fn validate_delay_trace(
    d: Dir,
    own: &DirSpec,
    b: &DirSpec,
    states: &IndexMap<String, StateSpec>,
    base: &Path,
) -> Result<Option<DelayTrace>, SpecError> {
    let (key, spec) = match (&own.delay_trace, &b.delay_trace) {
        (Some(t), _) => (format!("{d}.delay_trace"), t),
        (None, Some(t)) => ("both.delay_trace".to_string(), t),
        _ => return Ok(None),
    };
    for (name, t) in [(d.name(), own), ("both", b)] {
        if t.delay.is_some() {
            return Err(err(
                format!("{name}.delay"),
                format!("the {d} direction's propagation delay comes from `{key}`: remove `delay`"),
            ));
        }
    }
    if let Some(name) = state_with_delay(states, d) {
        return Err(err(
            format!("states.{name}.delay"),
            format!("the {d} direction's propagation delay comes from `{key}`: a state cannot override it"),
        ));
    }
    DelayTrace::load(&key, spec, base).map(Some)
}

macro_rules! err_spec {
    ($t:ty) => {
        impl $t {
            pub fn err_spec(&self) -> ErrSpec {
                ErrSpec {
                    error: self.error.clone(),
                    error_unit: self.error_unit,
                    handling: self.handling,
                    error_delay: self.error_delay.clone(),
                    retries: self.retries,
                    drop_threshold: self.drop_threshold,
                }
            }
        }
    };
}
err_spec!(DirSpec);
err_spec!(StateParams);

fn merge_err(over: &ErrSpec, under: &ErrSpec) -> ErrSpec {
    ErrSpec {
        error: over.error.clone().or(under.error.clone()),
        error_unit: over.error_unit.or(under.error_unit),
        handling: over.handling.or(under.handling),
        error_delay: over.error_delay.clone().or(under.error_delay.clone()),
        retries: over.retries.or(under.retries),
        drop_threshold: over.drop_threshold.or(under.drop_threshold),
    }
}

/// A state's overrides for one direction: its own table over its `both` table.
struct StateOverride {
    rate: Option<Rate>,
    delay: Option<Dur>,
    extra_delay: Option<Dist>,
    err: ErrSpec,
}

fn merge_state(over: &StateParams, under: &StateParams) -> StateOverride {
    StateOverride {
        rate: over.rate.or(under.rate),
        delay: over.delay.or(under.delay),
        extra_delay: over.extra_delay.clone().or(under.extra_delay.clone()),
        err: merge_err(&over.err_spec(), &under.err_spec()),
    }
}

fn apply_err(key: &str, e: &ErrSpec, p: &mut Params) -> Result<(), SpecError> {
    let (error, error_dist) = match &e.error {
        None => (0.0, None),
        Some(d) => {
            d.check_probability(&format!("{key}.error"))?;
            match d.as_static() {
                Some(x) => (x, None),
                None => (0.0, Some(d.clone())),
            }
        }
    };
    let handling = e.handling.unwrap_or(Handling::Drop);
    match handling {
        Handling::Drop => {}
        Handling::Delay | Handling::Arq if e.error_delay.is_none() => {
            return Err(err(
                format!("{key}.error_delay"),
                format!(
                    "missing: handling = \"{}\" needs the delay of each error, e.g. error_delay = \"700ms\"",
                    if handling == Handling::Arq { "arq" } else { "delay" }
                ),
            ))
        }
        Handling::Arq if e.retries.is_none() && e.drop_threshold.is_none() => {
            return Err(err(
                format!("{key}.retries"),
                "missing: handling = \"arq\" needs `retries` (a count) or `drop_threshold` (a duration)",
            ))
        }
        _ => {}
    }
    if e.retries.is_some() && e.drop_threshold.is_some() {
        return Err(err(
            format!("{key}.drop_threshold"),
            "give either `retries` or `drop_threshold`, not both",
        ));
    }
    p.error = error;
    p.error_dist = error_dist;
    p.error_unit = e.error_unit.unwrap_or_default();
    p.handling = handling;
    p.error_delay = e.error_delay.clone();
    p.retries = e.retries;
    p.drop_threshold = e.drop_threshold;
    Ok(())
}

fn quoted_list(names: &[&String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
