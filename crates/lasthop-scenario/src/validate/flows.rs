//! The flows: each `[[flows]]` entry as one flow, or one per member between host groups, with
//! its ends, start, port, client ports, application parameters (checked by `lasthop-apps`) and
//! per-flow TCP options.

use crate::config::{Flow, Host};
use crate::schema::{FlowSpec, ScenarioSpec};
use crate::validate::groups::{host_or_group, per_member_opt, Entry};
use lasthop_apps::{AppParams, SpecCtx};
use lasthop_core::spec::{err, from_table, SpecError};
use lasthop_core::Dur;
use lasthop_tcp::TcpConfig;

/// Every flow of `spec` in order, a group's flow one per member.
pub(crate) fn validate_flows(
    spec: &ScenarioSpec,
    hosts: &[Host],
    entries: &[Entry],
) -> Result<Vec<Flow>, SpecError> {
    let mut flows: Vec<Flow> = vec![];
    for (i, f) in spec.flows.iter().enumerate() {
        let key = format!("flows[{i}]");
        let (from0, from_n) =
            host_or_group(&spec.hosts, hosts, entries, &format!("{key}.from"), &f.from)?;
        let (to0, to_n) = host_or_group(&spec.hosts, hosts, entries, &format!("{key}.to"), &f.to)?;
        let members = match (from_n, to_n) {
            (Some(a), Some(b)) if a != b => {
                return Err(err(
                    format!("{key}.to"),
                    format!(
                        "group {:?} has {b} members and group {:?} {a}: a flow between two groups pairs their members, so they must be as many",
                        f.to, f.from
                    ),
                ))
            }
            (a, b) => a.or(b),
        };
        if hosts[from0].side == hosts[to0].side {
            return Err(err(
                format!("{key}.to"),
                format!(
                    "{:?} is on the {} side like {:?}: a flow must cross the link",
                    f.to, hosts[to0].side, f.from
                ),
            ));
        }
        let starts: Vec<Option<Dur>> =
            per_member_opt(f.start.as_ref(), &format!("{key}.start"), members)?;
        for (m, start) in starts.into_iter().enumerate() {
            let from = from0 + if from_n.is_some() { m } else { 0 };
            let to = to0 + if to_n.is_some() { m } else { 0 };
            let start = start.unwrap_or(Dur::ZERO);
            if start >= spec.duration {
                return Err(err(
                    format!("{key}.start"),
                    format!(
                        "{start}{} is not before the end of the run ({})",
                        members.map_or(String::new(), |_| format!(" (member {m}'s)")),
                        spec.duration
                    ),
                ));
            }
            let index = flows.len();
            let port = port(&key, f, m, index, &flows, hosts, to)?;
            let ctx = SpecCtx {
                key: key.clone(),
                client_mtu: hosts[from].mtu,
                start,
                run: spec.duration,
            };
            let app = AppParams::parse(&f.kind, f.params.clone(), &ctx)?;
            let first_client_port = first_client_port(&key, &flows, &app)?;
            let tcp_table = f.tcp.clone().unwrap_or_default();
            let tcp = match &f.tcp {
                None => None,
                Some(_) if !matches!(f.kind.as_str(), "thin" | "bulk") => {
                    return Err(err(
                        format!("{key}.tcp"),
                        format!(
                            "per-flow TCP options are for thin and bulk flows, not {:?}: set the host's tcp table (simulation) or sysctl (emulation) instead",
                            f.kind
                        ),
                    ))
                }
                Some(t) => Some(flow_tcp_config(&key, &hosts[from], t)?),
            };
            check_bulk_options(&key, &app, &tcp_table)?;
            flows.push(Flow {
                tcp_table,
                tcp,
                index,
                spec: i,
                member: members.map(|_| m as u32),
                from,
                to,
                start,
                port,
                first_client_port,
                app,
            });
        }
    }
    Ok(flows)
}

/// Member `m`'s server port: the entry's `port` + m, else 5000 + the flow's index; one flow
/// per port of a host.
fn port(
    key: &str,
    f: &FlowSpec,
    m: usize,
    index: usize,
    flows: &[Flow],
    hosts: &[Host],
    to: usize,
) -> Result<u16, SpecError> {
    let port = match f.port {
        Some(0) => return Err(err(format!("{key}.port"), "0: allowed 1..65535")),
        Some(p) => p.checked_add(m as u16).ok_or_else(|| {
            err(
                format!("{key}.port"),
                format!("{p}: member {m}'s port {p} + {m} is beyond 65535"),
            )
        })?,
        None => u16::try_from(5000 + index)
            .map_err(|_| err(format!("{key}.port"), "too many flows for default ports"))?,
    };
    if let Some(o) = flows.iter().find(|o| o.to == to && o.port == port) {
        return Err(err(
            format!("{key}.port"),
            format!(
                "{port} on {:?} is already used by flow {} ({}): each flow needs its own",
                hosts[to].name,
                o.index,
                o.spec_key()
            ),
        ));
    }
    Ok(port)
}

/// The first of the flow's client ports: after the previous flow's, from
/// [`lasthop_apps::FIRST_CLIENT_PORT`]; every port must fit below 65536.
fn first_client_port(key: &str, flows: &[Flow], app: &AppParams) -> Result<u16, SpecError> {
    flows
        .last()
        .map_or(Some(lasthop_apps::FIRST_CLIENT_PORT), |p: &Flow| {
            p.first_client_port.checked_add(p.app.client_ports())
        })
        .filter(|&p| p.checked_add(app.client_ports()).is_some())
        .ok_or_else(|| {
            err(
                key,
                "the run's flows need more client ports than 1024..65535 holds",
            )
        })
}

/// One place per socket option: bulk's own keys set both ends' sockets, so its `tcp` table
/// may not set them again.
fn check_bulk_options(
    key: &str,
    app: &AppParams,
    tcp_table: &toml::Table,
) -> Result<(), SpecError> {
    if let AppParams::Bulk(b) = app {
        for (own, set, tk) in [
            (
                "congestion_control",
                b.socket.congestion_control.is_some(),
                "congestion_control",
            ),
            ("nodelay", b.socket.nodelay.is_some(), "nagle"),
        ] {
            if set && tcp_table.contains_key(tk) {
                return Err(err(
                    format!("{key}.tcp.{tk}"),
                    format!("the flow also sets {own}: give the option once (tcp.{tk} acts on the sending end only, {own} on both ends)"),
                ));
            }
        }
    }
    Ok(())
}

/// A flow's TCP model configuration: its `tcp` table over its client host's (with the host's
/// MTU unless either sets one). The keys are not listed here: `TcpConfig`'s deserialization
/// checks them, so every key the model has works, named `flows[i].tcp.KEY` in errors.
pub(crate) fn flow_tcp_config(
    key: &str,
    host: &Host,
    over: &toml::Table,
) -> Result<TcpConfig, SpecError> {
    let key = format!("{key}.tcp");
    let mut t = host.tcp_table.clone();
    lasthop_core::spec::merge_tables(&mut t, over);
    t.entry("mtu")
        .or_insert_with(|| toml::Value::String(format!("{}B", host.mtu)));
    let cfg: TcpConfig = from_table(t, &key)?;
    cfg.validate()
        .map_err(|e| err(lasthop_core::spec::join_key(&key, &e.key), e.message))?;
    Ok(cfg)
}
