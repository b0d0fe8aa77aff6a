//! The hosts: each `[hosts.NAME]` entry's members with their names, addresses, MTUs, access
//! links, sysctls, route options and TCP model configurations, then the shared advertised
//! windows, once every peer is known.

use crate::config::{in_bench_range, Host, SharedWindow};
use crate::schema::{HostSpec, RouteOptions, Side, SysctlValue};
use crate::validate::groups::{members, per_member_opt, Entry};
use indexmap::IndexMap;
use lasthop_core::spec::{check_name, err, from_table, SpecError};
use lasthop_core::{Dur, Rate};
use lasthop_link::LinkConfig;
use lasthop_tcp::TcpConfig;
use std::net::Ipv4Addr;

/// Every host of `spec` in order (a group's members in a row), and each entry's first host
/// and members.
pub(crate) fn validate_hosts(
    spec: &IndexMap<String, HostSpec>,
    link: &LinkConfig,
) -> Result<(Vec<Host>, Vec<Entry>), SpecError> {
    if spec.is_empty() {
        return Err(err("hosts", "missing: at least one [hosts.NAME] table"));
    }
    let mut hosts: Vec<Host> = vec![];
    let mut entries: Vec<Entry> = vec![];
    // Hosts so far on each side: the default addresses count up from .1.
    let mut count = [0u8; 2];
    for (name, h) in spec {
        let key = format!("hosts.{name}");
        check_name(&key, "host name", name)?;
        let members = members(&key, h.count)?;
        let rates: Vec<Option<Rate>> = per_member_opt(
            h.access_rate.as_ref(),
            &format!("{key}.access_rate"),
            members,
        )?;
        let delays: Vec<Option<Dur>> = per_member_opt(
            h.access_delay.as_ref(),
            &format!("{key}.access_delay"),
            members,
        )?;
        entries.push((hosts.len(), members));
        for i in 0..members.unwrap_or(1) {
            let member = match members {
                None => name.clone(),
                Some(_) => format!("{name}{i}"),
            };
            if members.is_some() {
                check_name(&format!("{key}.count"), "group member name", &member)?;
            }
            if let Some(o) = hosts.iter().find(|o| o.name == member) {
                return Err(err(
                    &key,
                    format!(
                        "host {member:?} is defined twice (a host group's members are named NAME0, NAME1, ...; {:?} is {})",
                        o.name,
                        o.group.as_ref().map_or("a host of its own".to_string(), |g| format!("member {} of group {:?}", g.1, g.0))
                    ),
                ));
            }
            let n = &mut count[h.side as usize];
            *n = n
                .checked_add(1)
                .filter(|&n| n < 255)
                .ok_or_else(|| err(&key, "too many hosts on one side: at most 254"))?;
            let address = address(&key, h, i, *n)?;
            if let Some(other) = hosts.iter().find(|o| o.address == address) {
                return Err(err(
                    format!("{key}.address"),
                    format!("{address} is already host {:?}'s address", other.name),
                ));
            }
            let mtu = mtu(&key, h, link)?;
            let sysctl = sysctls(&key, h)?;
            check_route(&key, &h.route)?;
            hosts.push(Host {
                name: member,
                group: members.map(|_| (name.clone(), i as u32)),
                side: h.side,
                address,
                mtu,
                access_rate: rates[i],
                access_delay: delays[i],
                sysctl,
                route: h.route.clone(),
                tcp: match hosts.iter().find(|o| o.tcp_table == h.tcp && o.mtu == mtu) {
                    // Hosts usually share a few tables (a dumbbell's hundred senders one).
                    Some(o) => o.tcp.clone(),
                    None => tcp_config(name, &h.tcp, mtu)?,
                },
                tcp_table: h.tcp.clone(),
                shared_window: None,
            });
        }
    }
    Ok((hosts, entries))
}

/// Member `i`'s address: the entry's address + i, else the side's `n`th default address.
fn address(key: &str, h: &HostSpec, i: usize, n: u8) -> Result<Ipv4Addr, SpecError> {
    match h.address {
        Some(a) => {
            let a = u32::from(a).checked_add(i as u32).map(Ipv4Addr::from);
            match a.filter(|&a| in_bench_range(a)) {
                Some(a) => Ok(a),
                None => Err(err(
                    format!("{key}.address"),
                    format!("{} (member {i}'s) is outside the benchmarking range: allowed 198.18.0.0/15 (198.18.0.0 to 198.19.255.255)", a.map_or("beyond 255.255.255.255".into(), |a| a.to_string())),
                )),
            }
        }
        None => Ok(match h.side {
            Side::Fixed => Ipv4Addr::new(198, 18, 0, n),
            Side::Mobile => Ipv4Addr::new(198, 19, 0, n),
        }),
    }
}

/// The host's MTU: its own, else the link's, else 1500.
fn mtu(key: &str, h: &HostSpec, link: &LinkConfig) -> Result<u32, SpecError> {
    match h.mtu {
        Some(m) => {
            if !(68..=65535).contains(&m.0) {
                return Err(err(
                    format!("{key}.mtu"),
                    format!("{m} is not a valid IPv4 MTU: allowed 68B..65535B"),
                ));
            }
            Ok(m.0 as u32)
        }
        None => Ok(link.mtu.unwrap_or(1500)),
    }
}

/// The host's sysctls with names relative to `net.ipv4.`, each name checked.
fn sysctls(key: &str, h: &HostSpec) -> Result<Vec<(String, SysctlValue)>, SpecError> {
    let mut sysctl = vec![];
    for (k, v) in &h.sysctl {
        let k2 = k.strip_prefix("net.ipv4.").unwrap_or(k);
        let ok = !k2.is_empty()
            && k2.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            });
        if !ok {
            return Err(err(
                format!("{key}.sysctl.{k}"),
                "invalid sysctl name: allowed a name under net.ipv4. such as tcp_sack or conf.all.rp_filter",
            ));
        }
        sysctl.push((k2.to_string(), v.clone()));
    }
    Ok(sysctl)
}

/// The route options' ranges.
fn check_route(key: &str, route: &RouteOptions) -> Result<(), SpecError> {
    if route.initcwnd == Some(0) || route.initrwnd == Some(0) {
        return Err(err(
            format!("{key}.route"),
            "initcwnd and initrwnd are in segments: allowed 1 or more",
        ));
    }
    if let Some(r) = route.rto_min {
        if r < Dur::from_millis(1) || r > Dur::from_secs(120) {
            return Err(err(
                format!("{key}.route.rto_min"),
                format!("{r}: allowed 1ms..120s"),
            ));
        }
    }
    Ok(())
}

/// The host's TCP model configuration: its `tcp` table over the seeds' baseline, with the
/// host's MTU unless the table sets one.
fn tcp_config(host: &str, table: &toml::Table, mtu: u32) -> Result<TcpConfig, SpecError> {
    let key = format!("hosts.{host}.tcp");
    let mut t = table.clone();
    t.entry("mtu")
        .or_insert_with(|| toml::Value::String(format!("{mtu}B")));
    let cfg: TcpConfig = from_table(t, &key)?;
    cfg.validate()
        .map_err(|e| err(lasthop_core::spec::join_key(&key, &e.key), e.message))?;
    Ok(cfg)
}

/// Shared advertised windows, once every host (and so every peer) is known: each entry's
/// `shared_window` on all its members.
pub(crate) fn validate_shared_windows(
    spec: &IndexMap<String, HostSpec>,
    hosts: &mut [Host],
    entries: &[Entry],
) -> Result<(), SpecError> {
    for (e, (name, h)) in spec.iter().enumerate() {
        let Some(sw) = &h.shared_window else { continue };
        let key = format!("hosts.{name}.shared_window");
        let (first, members) = entries[e];
        let others: Vec<&Host> = hosts.iter().filter(|o| o.side != h.side).collect();
        let peer = match &sw.peer {
                Some(p) => match hosts.iter().find(|o| o.name == *p) {
                    Some(o) if o.side != h.side => o,
                    Some(_) => {
                        return Err(err(
                            format!("{key}.peer"),
                            format!("{p:?} is on the {} side like {name:?}: the peer must be across the link", h.side),
                        ))
                    }
                    None => {
                        return Err(err(
                            format!("{key}.peer"),
                            format!(
                                "no host is called {p:?}; the hosts across the link are {}",
                                others.iter().map(|o| format!("{:?}", o.name)).collect::<Vec<_>>().join(", ")
                            ),
                        ))
                    }
                },
                None => match others.as_slice() {
                    [one] => *one,
                    [] => return Err(err(&key, "no host across the link to share a window with")),
                    _ => {
                        return Err(err(
                            format!("{key}.peer"),
                            format!(
                                "missing: {} hosts are across the link ({}); name the one whose connections share the window",
                                others.len(),
                                others.iter().map(|o| format!("{:?}", o.name)).collect::<Vec<_>>().join(", ")
                            ),
                        ))
                    }
                },
            };
        let peer = peer.address;
        for member in &mut hosts[first..first + members.unwrap_or(1)] {
            let mss = u64::from(member.tcp.adv_mss());
            if sw.size.0 < mss {
                return Err(err(
                        format!("{key}.size"),
                        format!(
                            "{}: below one MSS of {name:?} ({mss} B), no segment could be sent; allowed {mss}B..=1GiB",
                            sw.size
                        ),
                    ));
            }
            if sw.size.0 > 1 << 30 {
                return Err(err(
                    format!("{key}.size"),
                    format!("{}: allowed {mss}B..=1GiB", sw.size),
                ));
            }
            member.shared_window = Some(SharedWindow {
                peer,
                size: sw.size.0,
                enforce: sw.enforce.unwrap_or_default(),
            });
        }
    }
    Ok(())
}
