//! The router's middleboxes: each `[[middleboxes]]` table by its `kind` (the parameters are
//! checked by the middlebox's own module in `lasthop-link`), and the hosts an `rdb` middlebox
//! bundles for, by host or group name.

use crate::config::{Host, MiddleboxConfig, MIDDLEBOX_KINDS};
use crate::schema::HostSpec;
use crate::validate::groups::names;
use indexmap::IndexMap;
use lasthop_core::spec::{err, SpecError};
use lasthop_link::rate_control::RateControlConfig;
use lasthop_link::rdb::RdbConfig;

/// Every middlebox of `tables`, in order, with an `rdb` middlebox's senders resolved.
pub(crate) fn validate_middleboxes(
    tables: &[toml::Table],
    spec: &IndexMap<String, HostSpec>,
    hosts: &[Host],
) -> Result<Vec<MiddleboxConfig>, SpecError> {
    let mut middleboxes = tables
        .iter()
        .enumerate()
        .map(|(i, t)| parse(t.clone(), &format!("middleboxes[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, m) in middleboxes.iter_mut().enumerate() {
        if let MiddleboxConfig::Rdb(c) = m {
            // The bundled senders: hosts or groups (all their members) by name.
            for n in &c.hosts {
                let found: Vec<_> = hosts
                    .iter()
                    .filter(|h| h.name == *n || h.group.as_ref().is_some_and(|g| g.0 == *n))
                    .map(|h| std::net::IpAddr::V4(h.address))
                    .collect();
                if found.is_empty() {
                    return Err(err(
                        format!("middleboxes[{i}].hosts"),
                        format!(
                            "no host or host group is called {n:?}; they are {}",
                            names(spec)
                        ),
                    ));
                }
                c.senders.extend(found);
            }
        }
    }
    Ok(middleboxes)
}

/// One `[[middleboxes]]` table by its `kind`.
fn parse(mut t: toml::Table, key: &str) -> Result<MiddleboxConfig, SpecError> {
    let kind = match t.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(other) => {
            return Err(err(
                format!("{key}.kind"),
                format!(
                    "{other}: expected a string, one of {}",
                    MIDDLEBOX_KINDS.join(", ")
                ),
            ))
        }
        None => {
            return Err(err(
                format!("{key}.kind"),
                format!("missing: one of {}", MIDDLEBOX_KINDS.join(", ")),
            ))
        }
    };
    match kind.as_str() {
        "rate_control" => RateControlConfig::parse(t, key).map(MiddleboxConfig::RateControl),
        "rdb" => RdbConfig::parse(t, key).map(MiddleboxConfig::Rdb),
        other => Err(err(
            format!("{key}.kind"),
            format!(
                "unknown middlebox kind {other:?}: the kinds are {}",
                MIDDLEBOX_KINDS.join(", ")
            ),
        )),
    }
}
