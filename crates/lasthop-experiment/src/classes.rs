//! Connection classes: the schemes that put a run's connections into classes, and the classes
//! themselves (`faster`, `rank3`, `flow0`, `inline2`, `udp1`, ...), with their table order.
//! Kept apart from the spec and the summaries, which both use them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the connections of one run are put into classes (see `docs/experiments.md`).
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClassScheme {
    /// Seed 000 (simultaneous starts): per run, connections ranked by elapsed time, shortest
    /// first ("faster", "slower"; "rank1".."rankN" for more than two).
    #[serde(rename = "faster-slower")]
    FasterSlower,
    /// Seed 000 (staggered starts): ranked by start time ("first", "second", "startN").
    #[serde(rename = "start-order")]
    StartOrder,
    /// The scenario's flow index ("flow0", "flow1", ...).
    #[serde(rename = "flow")]
    Flow,
    /// Seed 002: flow 0 is the main object ("main"), the others ranked by throughput within
    /// each run, highest first ("inline1" fastest ... "inlineN" slowest).
    #[serde(rename = "main-inline")]
    MainInline,
    /// Seed 002's page classes (`c1` the main object, `c2` ... `cN` the in-lines by throughput,
    /// from `page_objects.csv`): connections are not classed by it (the pages' classes are
    /// summarised for every run with pages, scheme `page`); naming it first makes the report's
    /// summary table and class box plots those of the page classes.
    #[serde(rename = "page")]
    Page,
    /// Seed 004's figures of each run (class `bottleneck`): the bottleneck's utilisation, mean
    /// and maximum queue, drops and ECN marks, the flows' goodput (mean, σ, σ/μ, Jain's index)
    /// and the repeated short transfers' count and times. Connections are not classed by it.
    #[serde(rename = "bottleneck")]
    Bottleneck,
    /// Seed 003's tables (classes `host-<hostname>`): the streams of `streams.csv` and their
    /// ACK latencies (`latency.csv`) aggregated per sending host. Connections are not classed
    /// by it.
    #[serde(rename = "thin")]
    Thin,
    /// Seed 001 (parallel connections): per run the connection with the shortest and the
    /// longest elapsed time ("fastest", "slowest"), whatever the number of connections.
    #[serde(rename = "fastest-slowest")]
    FastestSlowest,
    /// Seed 001's "first 10 KB": per run the connection with the shortest and the longest time
    /// from its SYN to the ACK covering 10 240 bytes ("fast10k", "slow10k").
    #[serde(rename = "first10k")]
    First10k,
}

impl ClassScheme {
    pub fn name(self) -> &'static str {
        match self {
            ClassScheme::FasterSlower => "faster-slower",
            ClassScheme::StartOrder => "start-order",
            ClassScheme::Flow => "flow",
            ClassScheme::MainInline => "main-inline",
            ClassScheme::Page => "page",
            ClassScheme::Bottleneck => "bottleneck",
            ClassScheme::Thin => "thin",
            ClassScheme::FastestSlowest => "fastest-slowest",
            ClassScheme::First10k => "first10k",
        }
    }
    pub const ALL: [ClassScheme; 9] = [
        ClassScheme::FasterSlower,
        ClassScheme::StartOrder,
        ClassScheme::Flow,
        ClassScheme::MainInline,
        ClassScheme::Page,
        ClassScheme::Bottleneck,
        ClassScheme::Thin,
        ClassScheme::FastestSlowest,
        ClassScheme::First10k,
    ];
}

/// What each run computes beyond its connections, UDP flows and pages (always computed), and
/// summarises in a scheme of its own: the experiment's `figures` key. These were class schemes
/// before (`classes = ["bottleneck"]`), which a spec may still say, with a warning.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Figure {
    /// Seed 004's figures of each run (scheme and class `bottleneck`, from `link.csv` and the
    /// connections).
    Bottleneck,
    /// Seed 003's per-host stream figures (scheme `thin`, classes `host-<name>`, from
    /// `streams.csv` and `latency.csv`).
    Thin,
    /// Seed 002's page classes lead the report (its summary table and class box plots are the
    /// page classes'); the pages themselves are summarised for every run with pages.
    Page,
}

impl Figure {
    pub fn name(self) -> &'static str {
        self.scheme().name()
    }
    /// The class scheme it was before, and whose name its summaries carry.
    pub fn scheme(self) -> ClassScheme {
        match self {
            Figure::Bottleneck => ClassScheme::Bottleneck,
            Figure::Thin => ClassScheme::Thin,
            Figure::Page => ClassScheme::Page,
        }
    }
    /// The figure a class scheme of an older spec names, if it is one.
    pub fn of_scheme(s: ClassScheme) -> Option<Figure> {
        match s {
            ClassScheme::Bottleneck => Some(Figure::Bottleneck),
            ClassScheme::Thin => Some(Figure::Thin),
            ClassScheme::Page => Some(Figure::Page),
            _ => None,
        }
    }
}

/// Splits a list of class schemes (of a spec or an `experiment.json` written before `figures`)
/// into the connection class schemes and the figures among them, each in its order.
pub fn split_figures(schemes: &[ClassScheme]) -> (Vec<ClassScheme>, Vec<Figure>) {
    let mut classes = vec![];
    let mut figures = vec![];
    for &s in schemes {
        match Figure::of_scheme(s) {
            Some(f) if !figures.contains(&f) => figures.push(f),
            Some(_) => {}
            None => classes.push(s),
        }
    }
    (classes, figures)
}

/// One class of connections (or of UDP flows, or of pages' objects). Written as in
/// `summary.csv`: `faster`, `slower`, `first`, `second`, `main`, `rankN`, `startN`, `flowN`,
/// `inlineN`, `udpN`, `cN` and `page`, `other`
/// (a connection that matches no scenario flow) and `all` (every connection pooled).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Faster,
    Slower,
    /// Seed 001: the fastest and slowest of a run's connections (scheme `fastest-slowest`),
    /// and by their first 10 KB (scheme `first10k`).
    Fastest,
    Slowest,
    Fast10k,
    Slow10k,
    First,
    Second,
    Main,
    Rank(u64),
    Start(u64),
    Flow(u64),
    Inline(u64),
    /// A UDP flow of `udp_flows.csv` that matches no scenario flow.
    Udp(u64),
    /// Seed 002's connection class N of a page (scheme `page`): `c1` the main object, `c2` the
    /// fastest in-line ... `cN` the slowest.
    C(u64),
    /// A whole page (scheme `page`): response and total time, and the derived numbers of the
    /// seed's summary tables.
    Page,
    /// A run's bottleneck and flows as seed 004 reports them (scheme `bottleneck`).
    Bottleneck,
    /// The streams sent by one host (scheme `thin`): `host-<hostname>`.
    Host(String),
    Other,
    All,
}

/// A class name that is none of [`Class`]'s forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown class {0:?} (allowed: faster, slower, fastest, slowest, fast10k, slow10k, first, second, main, page, bottleneck, other, all, rankN, startN, flowN, inlineN, udpN, cN, host-NAME)")]
pub struct UnknownClass(pub String);

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Class::Faster => f.write_str("faster"),
            Class::Slower => f.write_str("slower"),
            Class::Fastest => f.write_str("fastest"),
            Class::Slowest => f.write_str("slowest"),
            Class::Fast10k => f.write_str("fast10k"),
            Class::Slow10k => f.write_str("slow10k"),
            Class::First => f.write_str("first"),
            Class::Second => f.write_str("second"),
            Class::Main => f.write_str("main"),
            Class::Rank(n) => write!(f, "rank{n}"),
            Class::Start(n) => write!(f, "start{n}"),
            Class::Flow(n) => write!(f, "flow{n}"),
            Class::Inline(n) => write!(f, "inline{n}"),
            Class::Udp(n) => write!(f, "udp{n}"),
            Class::C(n) => write!(f, "c{n}"),
            Class::Page => f.write_str("page"),
            Class::Bottleneck => f.write_str("bottleneck"),
            Class::Host(h) => write!(f, "host-{h}"),
            Class::Other => f.write_str("other"),
            Class::All => f.write_str("all"),
        }
    }
}

impl FromStr for Class {
    type Err = UnknownClass;
    fn from_str(s: &str) -> Result<Class, UnknownClass> {
        let fixed = match s {
            "faster" => Some(Class::Faster),
            "slower" => Some(Class::Slower),
            "fastest" => Some(Class::Fastest),
            "slowest" => Some(Class::Slowest),
            "fast10k" => Some(Class::Fast10k),
            "slow10k" => Some(Class::Slow10k),
            "first" => Some(Class::First),
            "second" => Some(Class::Second),
            "main" => Some(Class::Main),
            "page" => Some(Class::Page),
            "bottleneck" => Some(Class::Bottleneck),
            "other" => Some(Class::Other),
            "all" => Some(Class::All),
            _ => None,
        };
        if let Some(c) = fixed {
            return Ok(c);
        }
        if let Some(h) = s.strip_prefix("host-") {
            if is_host_name(h) {
                return Ok(Class::Host(h.to_string()));
            }
            return Err(UnknownClass(s.to_string()));
        }
        let digits = s.trim_start_matches(|c: char| !c.is_ascii_digit());
        let prefix = &s[..s.len() - digits.len()];
        let n: Option<u64> = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten();
        let bad = || UnknownClass(s.to_string());
        let n = n.ok_or_else(bad)?;
        match prefix {
            "rank" => Ok(Class::Rank(n)),
            "start" => Ok(Class::Start(n)),
            "flow" => Ok(Class::Flow(n)),
            "inline" => Ok(Class::Inline(n)),
            "udp" => Ok(Class::Udp(n)),
            "c" => Ok(Class::C(n)),
            _ => Err(bad()),
        }
    }
}

/// A host name as a class takes it (`host-<name>`): letters, digits, `_`, `-` and `.`.
pub fn is_host_name(h: &str) -> bool {
    !h.is_empty()
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// Table order of class names: the named ranks first in their natural order, then by number
/// (then prefix), then any other name alphabetically.
pub fn class_order(name: &str) -> (u32, u64, String) {
    let fixed = [
        "faster", "slower", "fastest", "slowest", "fast10k", "slow10k", "first", "second", "main",
    ];
    if let Some(i) = fixed.iter().position(|f| *f == name) {
        return (0, i as u64, String::new());
    }
    let digits: String = name.chars().skip_while(|c| !c.is_ascii_digit()).collect();
    let prefix: String = name.chars().take_while(|c| !c.is_ascii_digit()).collect();
    match digits.parse::<u64>() {
        Ok(n) => (1, n, prefix),
        Err(_) => (2, 0, name.to_string()),
    }
}

impl Ord for Class {
    /// Table order ([`class_order`] of the names).
    fn cmp(&self, other: &Class) -> std::cmp::Ordering {
        class_order(&self.to_string()).cmp(&class_order(&other.to_string()))
    }
}

impl PartialOrd for Class {
    fn partial_cmp(&self, other: &Class) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Class {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Class {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Class, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order() {
        for s in [
            "faster",
            "slower",
            "fastest",
            "slowest",
            "fast10k",
            "slow10k",
            "first",
            "second",
            "main",
            "rank3",
            "start1",
            "flow0",
            "inline12",
            "udp1",
            "c1",
            "c12",
            "page",
            "other",
            "all",
            "host-rdbsender",
            "host-s0",
        ] {
            assert_eq!(s.parse::<Class>().unwrap().to_string(), s);
        }
        for bad in [
            "", "rank", "flowx", "fast", "flow-1", "udp1a", "x1", "c", "cx1", "pages", "host-",
            "host-a b", "host", "fast10", "slow10kb",
        ] {
            let e = bad.parse::<Class>().unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
        let mut v: Vec<Class> = [
            "other", "flow2", "inline1", "slower", "flow10", "faster", "all", "slow10k", "slowest",
            "fast10k", "fastest",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        v.sort();
        let names: Vec<String> = v.iter().map(Class::to_string).collect();
        // named first; then by number (inline1 before flow2); then the rest alphabetically
        assert_eq!(
            names,
            [
                "faster", "slower", "fastest", "slowest", "fast10k", "slow10k", "inline1", "flow2",
                "flow10", "all", "other"
            ]
        );
        assert_eq!(serde_json::to_string(&Class::Rank(3)).unwrap(), "\"rank3\"");
        assert_eq!(
            serde_json::from_str::<Class>("\"udp2\"").unwrap(),
            Class::Udp(2)
        );
        assert!(serde_json::from_str::<Class>("\"nope\"").is_err());
    }
}
