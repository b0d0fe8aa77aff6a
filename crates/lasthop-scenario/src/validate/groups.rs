//! Host groups: how many members a `[hosts.NAME]` entry has (`count`), the values given once,
//! per member or per consecutive group ([`per_member`]), and what a name in `from`, `to` or a
//! middlebox's `hosts` refers to: a host, a whole group, or one member.

use crate::config::Host;
use crate::schema::HostSpec;
use indexmap::IndexMap;
use lasthop_core::spec::{err, SpecError};

/// A `[hosts]` entry as resolved: the index of its first host and its number of members
/// (`None`: one host, not a group).
pub(crate) type Entry = (usize, Option<usize>);

/// The members of the entry `key` with `count`: `None` for one host, else 1..254.
pub(crate) fn members(key: &str, count: Option<u32>) -> Result<Option<usize>, SpecError> {
    match count {
        None => Ok(None),
        Some(0) => Err(err(
            format!("{key}.count"),
            "0: a host group has 1 or more members (leave count out for one host)",
        )),
        Some(n) if n > 254 => Err(err(
            format!("{key}.count"),
            format!("{n}: allowed 1..254 (the hosts of one side share 254 addresses)"),
        )),
        Some(n) => Ok(Some(n as usize)),
    }
}

/// Resolves a value a host group (or a flow between groups) may give per member, for
/// `members` members (`None`: a single host or flow, which takes only a single value). Written
/// as one value for every member, a list of one value per member, or
/// `{ groups = [v0, v1, ...] }`: the members in that many consecutive groups of sizes as equal
/// as possible (the first groups one larger when they cannot be equal: 10 in 4 are 3, 3, 2, 2),
/// group g taking v_g.
pub fn per_member<T: serde::de::DeserializeOwned + Clone>(
    v: &toml::Value,
    key: &str,
    members: Option<usize>,
) -> Result<Vec<T>, SpecError> {
    let n = members.unwrap_or(1);
    let forms = format!(
        "allowed one value, a list of {n} (one per member) or {{ groups = [...] }} (consecutive groups of members)"
    );
    let one = |v: &toml::Value, k: &str| lasthop_core::spec::from_value::<T>(v.clone(), k);
    match v {
        toml::Value::Array(list) => {
            if members.is_none() {
                return Err(err(key, "a list of values is for a host group (count = N): a single host or flow takes one value"));
            }
            if list.len() != n {
                return Err(err(
                    key,
                    format!("a list of {} values for {n} members: {forms}", list.len()),
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, v)| one(v, &format!("{key}[{i}]")))
                .collect()
        }
        toml::Value::Table(t) if t.contains_key("groups") => {
            if members.is_none() {
                return Err(err(key, "{ groups = [...] } is for a host group (count = N): a single host or flow takes one value"));
            }
            if let Some(k) = t.keys().find(|k| *k != "groups") {
                return Err(err(
                    format!("{key}.{k}"),
                    "unknown key: allowed only groups",
                ));
            }
            let gkey = format!("{key}.groups");
            let Some(toml::Value::Array(groups)) = t.get("groups") else {
                return Err(err(gkey, "expected a list of values, one per group"));
            };
            let g = groups.len();
            if g == 0 || g > n {
                return Err(err(
                    gkey,
                    format!("{g} groups for {n} members: allowed 1..{n} groups"),
                ));
            }
            let values = groups
                .iter()
                .enumerate()
                .map(|(j, v)| one(v, &format!("{gkey}[{j}]")))
                .collect::<Result<Vec<T>, _>>()?;
            // Group j holds n / g members, and one more if j < n % g.
            let (base, extra) = (n / g, n % g);
            Ok(values
                .into_iter()
                .enumerate()
                .flat_map(|(j, v)| std::iter::repeat_n(v, base + usize::from(j < extra)))
                .collect())
        }
        v => Ok(vec![one(v, key)?; n]),
    }
}

/// [`per_member`] for an optional key: `None` for every member when it is absent.
pub(crate) fn per_member_opt<T: serde::de::DeserializeOwned + Clone>(
    v: Option<&toml::Value>,
    key: &str,
    members: Option<usize>,
) -> Result<Vec<Option<T>>, SpecError> {
    match v {
        None => Ok((0..members.unwrap_or(1)).map(|_| None).collect()),
        Some(v) => Ok(per_member::<T>(v, key, members)?
            .into_iter()
            .map(Some)
            .collect()),
    }
}

/// The `[hosts]` entries for an error message: `"a", "s" (a group of 10)`.
pub(crate) fn names(spec: &IndexMap<String, HostSpec>) -> String {
    spec.iter()
        .map(|(n, h)| match h.count {
            Some(c) => format!("{n:?} (a group of {c})"),
            None => format!("{n:?}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `name` (the value of `key`) refers to: an entry of `[hosts]` (a host, or a group: its
/// first host and its members), else one group member by its own name.
pub(crate) fn host_or_group(
    spec: &IndexMap<String, HostSpec>,
    hosts: &[Host],
    entries: &[Entry],
    key: &str,
    name: &str,
) -> Result<Entry, SpecError> {
    spec.get_index_of(name)
        .map(|e| entries[e])
        .or_else(|| hosts.iter().position(|h| h.name == name).map(|h| (h, None)))
        .ok_or_else(|| {
            err(
                key,
                format!(
                    "no host or host group is called {name:?}; they are {}",
                    names(spec)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_of_an_entry() {
        assert_eq!(members("hosts.a", None).unwrap(), None);
        assert_eq!(members("hosts.s", Some(254)).unwrap(), Some(254));
        assert_eq!(
            members("hosts.s", Some(0)).unwrap_err().key,
            "hosts.s.count"
        );
        assert!(members("hosts.s", Some(255))
            .unwrap_err()
            .message
            .contains("allowed 1..254"));
    }

    #[test]
    fn values_per_member_and_per_group() {
        let v = |t: &str| toml::from_str::<toml::Table>(&format!("v = {t}")).unwrap()["v"].clone();
        assert_eq!(per_member::<u32>(&v("7"), "k", None).unwrap(), [7]);
        assert_eq!(per_member::<u32>(&v("7"), "k", Some(3)).unwrap(), [7, 7, 7]);
        assert_eq!(
            per_member::<u32>(&v("[1, 2, 3]"), "k", Some(3)).unwrap(),
            [1, 2, 3]
        );
        // 10 members in 4 groups: 3, 3, 2, 2.
        assert_eq!(
            per_member::<u32>(&v("{ groups = [1, 2, 3, 4] }"), "k", Some(10)).unwrap(),
            [1, 1, 1, 2, 2, 2, 3, 3, 4, 4]
        );
        assert_eq!(
            per_member::<u32>(&v("[1, 2]"), "k", None).unwrap_err().key,
            "k"
        );
        assert_eq!(
            per_member::<u32>(&v("{ groups = [] }"), "k", Some(2))
                .unwrap_err()
                .key,
            "k.groups"
        );
        assert_eq!(
            per_member_opt::<u32>(None, "k", Some(2)).unwrap(),
            [None, None]
        );
    }
}
