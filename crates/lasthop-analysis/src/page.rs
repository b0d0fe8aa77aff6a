//! Web pages (seed 002's HTTP/1.0 "basic test", `kind = "http"`): per page the response time at
//! the client and the total time at the server, per object (one TCP connection each) its
//! server-side elapsed time and throughput, its class within the run, the tcptrace counters and
//! the drops per direction and cause. Definitions are in `docs/analysis.md` (*Pages*).
//!
//! The captures name no page, so the scenario does: a [`PageSpec`] says which client fetched
//! which objects from which server, object `k` from client port `first_port + k` (as
//! `lasthop_apps::http` does in both modes).

use crate::conn::ConnStats;
use crate::Error;
use lasthop_core::Time;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// One page of a scenario: an `http` flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageSpec {
    /// The scenario's flow index.
    pub flow: usize,
    /// The seed's workload label (`s+2s`, ...), or the sizes (`6288B+2x2096B`).
    pub label: String,
    /// The client's address (the flow's `from` host).
    pub client: IpAddr,
    /// The server's address and port.
    pub server: SocketAddr,
    /// Object `k` is fetched from client port `first_port + k`.
    pub first_port: u16,
    /// Object sizes in bytes, the main object first.
    pub objects: Vec<u64>,
}

impl PageSpec {
    /// The page of an `http` flow.
    pub fn of(ctx: &lasthop_apps::FlowCtx, p: &lasthop_apps::http::Params) -> PageSpec {
        let label = match &p.workload {
            Some(w) => w.clone(),
            None if p.objects.len() == 1 => format!("{}B", p.objects[0]),
            None => format!(
                "{}B+{}x{}B",
                p.objects[0],
                p.objects.len() - 1,
                p.objects[1]
            ),
        };
        PageSpec {
            flow: ctx.index,
            label,
            client: IpAddr::V4(ctx.client),
            server: SocketAddr::new(IpAddr::V4(ctx.server), ctx.port),
            first_port: ctx.client_port(),
            objects: p.objects.clone(),
        }
    }

    fn client_addr(&self, k: usize) -> SocketAddr {
        SocketAddr::new(self.client, self.first_port.wrapping_add(k as u16))
    }
}

/// Drops of one object's connection from the event log: data direction (server→client) and
/// ACK direction (client→server), router queue and link error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectDrops {
    pub queue: u64,
    pub error: u64,
    pub ack_queue: u64,
    pub ack_error: u64,
}

impl ObjectDrops {
    /// Queue and error drops of both directions (what seed 002's Σ maximum drops adds).
    pub fn total(&self) -> u64 {
        self.queue + self.error + self.ack_queue + self.ack_error
    }
}

/// One object of a page: one TCP connection.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectStats {
    /// 0 = the main object, then the in-lines in order.
    pub index: usize,
    /// 1 = the main object; the in-lines ranked by throughput within the run, the highest 2.
    pub class: usize,
    /// The object's size (the scenario's), bytes.
    pub bytes: u64,
    /// The client's view: first SYN sent, ACK of the client's FIN received (else its last
    /// packet); `None` when the client's capture holds no such connection.
    pub client: Option<(Time, Time)>,
    /// The server's view: first SYN arrived, the last ACK of the client's FIN sent (else its
    /// last packet); `None` when the server's capture holds no such connection.
    pub server: Option<(Time, Time)>,
    /// Both views (those present) ran from the client's SYN to the ACK of its FIN.
    pub complete: bool,
    /// tcptrace counters of the server→client direction, from the server's capture (else the
    /// merged row's): rexmt data pkts, duplicate acks, triple dupacks; and the client's ACKs
    /// carrying SACK blocks (sack pkts sent). `None` without a connection.
    pub rexmt_pkts: Option<u64>,
    pub dupacks: Option<u64>,
    pub triple_dupacks: Option<u64>,
    pub sack_pkts: Option<u64>,
    /// `None` without an event log (or without a connection).
    pub drops: Option<ObjectDrops>,
}

impl ObjectStats {
    /// Server side: SYN arrival → the last ACK of the client's FIN sent, seconds.
    pub fn elapsed_s(&self) -> Option<f64> {
        self.server.map(|(a, b)| secs(b.0.saturating_sub(a.0)))
    }
    /// Client side: SYN sent → ACK of the client's FIN received, seconds.
    pub fn client_elapsed_s(&self) -> Option<f64> {
        self.client.map(|(a, b)| secs(b.0.saturating_sub(a.0)))
    }
    /// Object bytes / [`Self::elapsed_s`], bytes/s (seed 002's server-side throughput).
    pub fn throughput_bytes_per_s(&self) -> Option<f64> {
        self.elapsed_s()
            .filter(|&e| e > 0.0)
            .map(|e| self.bytes as f64 / e)
    }
}

/// One page of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct PageStats {
    pub spec: PageSpec,
    /// In object order.
    pub objects: Vec<ObjectStats>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn span(v: impl Iterator<Item = Option<(Time, Time)>>) -> Option<(Time, Time)> {
    let mut out: Option<(Time, Time)> = None;
    for x in v {
        let (a, b) = x?;
        out = Some(match out {
            None => (a, b),
            Some((c, d)) => (c.min(a), d.max(b)),
        });
    }
    out
}

impl PageStats {
    /// Client side: the first SYN sent → the ACK of the client's last FIN received; `None`
    /// when an object's connection is missing from the client's capture.
    pub fn response(&self) -> Option<(Time, Time)> {
        span(self.objects.iter().map(|o| o.client))
    }
    pub fn response_s(&self) -> Option<f64> {
        self.response().map(|(a, b)| secs(b.0.saturating_sub(a.0)))
    }
    /// Server side: the first SYN's arrival → the last ACK of a client's FIN sent (seed 002's
    /// "total time of a basic test"); `None` when an object's connection is missing from the
    /// server's capture.
    pub fn total_s(&self) -> Option<f64> {
        span(self.objects.iter().map(|o| o.server)).map(|(a, b)| secs(b.0.saturating_sub(a.0)))
    }
    /// Every object's connection seen in both captures from the client's SYN to the ACK of its
    /// FIN.
    pub fn complete(&self) -> bool {
        self.objects
            .iter()
            .all(|o| o.complete && o.client.is_some() && o.server.is_some())
    }
}

fn find(conns: &[ConnStats], client: SocketAddr, server: SocketAddr) -> Option<&ConnStats> {
    conns
        .iter()
        .find(|c| c.client == client && c.server == server)
}

/// The pages of a run: `client_side` and `server_side` are the connections of the client's and
/// the server's captures (either may be empty), `merged` the run's rows with the event log
/// joined ([`crate::merge_sides`], [`crate::EventLog::join`]).
pub fn pages(
    specs: &[PageSpec],
    client_side: &[ConnStats],
    server_side: &[ConnStats],
    merged: &[ConnStats],
) -> Vec<PageStats> {
    specs
        .iter()
        .map(|spec| {
            let mut objects: Vec<ObjectStats> = spec
                .objects
                .iter()
                .enumerate()
                .map(|(k, &bytes)| {
                    let ca = spec.client_addr(k);
                    let c = find(client_side, ca, spec.server);
                    let s = find(server_side, ca, spec.server);
                    let m = find(merged, ca, spec.server);
                    let view = |c: &ConnStats| (c.start, c.end());
                    // The server's end is its last ACK of the client's FIN (a lost ACK makes
                    // the client resend its FIN, and the server acknowledges it again).
                    let server_view =
                        |c: &ConnStats| (c.start, c.fin_acked_last.unwrap_or_else(|| c.end()));
                    let counters = s.or(m);
                    let drops = m.filter(|m| m.events_joined).map(|m| ObjectDrops {
                        queue: m.s2c.drops.queue,
                        error: m.s2c.drops.error,
                        ack_queue: m.c2s.drops.queue,
                        ack_error: m.c2s.drops.error,
                    });
                    ObjectStats {
                        index: k,
                        class: 0,
                        bytes,
                        client: c.map(view),
                        server: s.map(server_view),
                        complete: (c.is_some() || s.is_some())
                            && c.is_none_or(ConnStats::complete)
                            && s.is_none_or(ConnStats::complete),
                        rexmt_pkts: counters.map(|x| x.s2c.rexmt_pkts),
                        dupacks: counters.map(|x| x.s2c.dupacks),
                        triple_dupacks: counters.map(|x| x.s2c.triple_dupacks),
                        sack_pkts: counters.map(|x| x.c2s.sack_pkts),
                        drops,
                    }
                })
                .collect();
            assign_classes(&mut objects);
            PageStats {
                spec: spec.clone(),
                objects,
            }
        })
        .collect()
}

/// Seed 002's classes within one run: the main object is class 1; the in-lines are ranked by
/// throughput, the highest class 2 ... the lowest class N; ties (and objects without a
/// throughput, ranked last) by object index.
pub fn assign_classes(objects: &mut [ObjectStats]) {
    let mut order: Vec<usize> = (0..objects.len())
        .filter(|&i| objects[i].index != 0)
        .collect();
    let key = |o: &ObjectStats| o.throughput_bytes_per_s().unwrap_or(f64::NEG_INFINITY);
    order.sort_by(|&a, &b| {
        key(&objects[b])
            .total_cmp(&key(&objects[a]))
            .then(objects[a].index.cmp(&objects[b].index))
    });
    for o in objects.iter_mut() {
        if o.index == 0 {
            o.class = 1;
        }
    }
    for (rank, i) in order.into_iter().enumerate() {
        objects[i].class = rank + 2;
    }
}

/// Every column of `page_objects.csv`, in order ([`crate::files::page_objects`]).
pub use crate::files::page_objects::COLUMNS as PAGE_OBJECTS_CSV_COLUMNS;
/// Every column of `pages.csv`, in order ([`crate::files::pages`]).
pub use crate::files::pages::COLUMNS as PAGES_CSV_COLUMNS;

/// The text of `pages.csv`: one row per page.
pub fn pages_csv(pages: &[PageStats]) -> String {
    crate::files::pages::text(pages, &[])
}

/// The text of `page_objects.csv`: one row per object, pages in order, objects in index order.
pub fn page_objects_csv(pages: &[PageStats]) -> String {
    crate::files::page_objects::text(pages, &[])
}

/// Writes `pages.csv` and `page_objects.csv` into `dir`, atomically; nothing at all when there
/// is no page.
pub fn write_page_files(dir: &Path, pages: &[PageStats]) -> Result<(), Error> {
    if pages.is_empty() {
        return Ok(());
    }
    let f = lasthop_core::layout::RunFiles::new(dir);
    let io = |path: std::path::PathBuf| {
        move |error| Error::Io {
            path: path.display().to_string(),
            error,
        }
    };
    crate::files::pages::write(&f.pages_csv(), pages).map_err(io(f.pages_csv()))?;
    crate::files::page_objects::write(&f.page_objects_csv(), pages)
        .map_err(io(f.page_objects_csv()))
}

/// A readable table, one line per page and one per object (empty when there is no page).
pub fn format_page_table(pages: &[PageStats]) -> String {
    let mut s = String::new();
    if pages.is_empty() {
        return s;
    }
    let o = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |v| format!("{v:.prec$}"));
    let n = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for p in pages {
        let _ = writeln!(
            s,
            "page flow {} ({}, {} objects): response {} s (client), total {} s (server){}",
            p.spec.flow,
            p.spec.label,
            p.spec.objects.len(),
            o(p.response_s(), 3),
            o(p.total_s(), 3),
            if p.complete() { "" } else { ", INCOMPLETE" }
        );
        let _ = writeln!(
            s,
            "{:>4} {:>5} {:>7} {:>9} {:>9} {:>5} {:>5} {:>5} {:>5} {:>4} {:>4} {:>5} {:>5}",
            "obj",
            "class",
            "bytes",
            "elapsed_s",
            "B/s",
            "rexmt",
            "dupak",
            "3dup",
            "sacks",
            "dq",
            "de",
            "ackdq",
            "ackde"
        );
        for ob in &p.objects {
            let d = ob.drops;
            let _ = writeln!(
                s,
                "{:>4} {:>5} {:>7} {:>9} {:>9} {:>5} {:>5} {:>5} {:>5} {:>4} {:>4} {:>5} {:>5}",
                ob.index,
                ob.class,
                ob.bytes,
                o(ob.elapsed_s(), 3),
                o(ob.throughput_bytes_per_s(), 1),
                n(ob.rexmt_pkts),
                n(ob.dupacks),
                n(ob.triple_dupacks),
                n(ob.sack_pkts),
                n(d.map(|d| d.queue)),
                n(d.map(|d| d.error)),
                n(d.map(|d| d.ack_queue)),
                n(d.map(|d| d.ack_error)),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::{DirStats, Drops};
    use std::net::Ipv4Addr;

    const MS: u64 = 1_000_000;
    const C: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
    const S: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

    fn spec() -> PageSpec {
        PageSpec {
            flow: 2,
            label: "s+2s".into(),
            client: IpAddr::V4(C),
            server: SocketAddr::new(IpAddr::V4(S), 80),
            first_port: 1024,
            objects: vec![6288, 2096, 2096],
        }
    }

    /// A connection from client port `port`, SYN at `start` ms, ACK of the client's FIN at
    /// `end` ms (`None`: never, the last packet at `start + 1000` ms).
    fn conn(port: u16, start: u64, end: Option<u64>) -> ConnStats {
        ConnStats {
            id: 1,
            client: SocketAddr::new(IpAddr::V4(C), port),
            server: SocketAddr::new(IpAddr::V4(S), 80),
            syn_seen: true,
            client_isn: Some(1),
            start: Time(start * MS),
            fin_acked: end.map(|e| Time(e * MS)),
            fin_acked_last: end.map(|e| Time(e * MS)),
            first: Time(start * MS),
            last: Time(end.unwrap_or(start + 1000) * MS),
            c2s: DirStats::default(),
            s2c: DirStats::default(),
            events_joined: false,
            merged: false,
            partial_bytes: 10_240,
        }
    }

    #[test]
    fn a_page_worked_by_hand() {
        // Client capture: SYNs sent at 0, 1500, 1510 ms; ACKs of the FINs received at 4500,
        // 3800, 4100 ms. Server capture: SYNs arrive 300 ms later, ACKs sent 300 ms earlier.
        let client = vec![
            conn(1024, 0, Some(4500)),
            conn(1025, 1500, Some(3800)),
            conn(1026, 1510, Some(4100)),
        ];
        let mut server = vec![
            conn(1024, 300, Some(4200)),
            conn(1025, 1800, Some(3500)),
            conn(1026, 1810, Some(3800)),
        ];
        server[0].s2c.rexmt_pkts = 2;
        server[0].s2c.dupacks = 5;
        server[0].s2c.triple_dupacks = 1;
        server[0].c2s.sack_pkts = 3;
        // The merged rows carry the event log: object 2 lost 1 data packet to the queue and 2
        // to errors, and 1 ACK-direction packet to errors.
        let mut merged = client.clone();
        for m in &mut merged {
            m.events_joined = true;
        }
        merged[2].s2c.drops = Drops {
            queue: 1,
            error: 2,
            ..Default::default()
        };
        merged[2].c2s.drops.error = 1;
        let p = &pages(&[spec()], &client, &server, &merged)[0];
        // Response: 0 -> 4500 ms at the client; total: 300 -> 4200 ms at the server.
        assert_eq!(p.response_s(), Some(4.5));
        assert_eq!(p.total_s(), Some(3.9));
        assert!(p.complete());
        // Server-side elapsed 3.9, 1.7, 1.99 s: throughputs 6288/3.9 = 1612.3, 2096/1.7 =
        // 1232.9, 2096/1.99 = 1053.3: object 1 is class 2, object 2 class 3.
        let o = &p.objects;
        assert_eq!(o[1].elapsed_s(), Some(1.7));
        assert!((o[1].throughput_bytes_per_s().unwrap() - 2096.0 / 1.7).abs() < 1e-9);
        assert_eq!([o[0].class, o[1].class, o[2].class], [1, 2, 3]);
        assert_eq!(o[1].client_elapsed_s(), Some(2.3));
        assert_eq!(
            (
                o[0].rexmt_pkts,
                o[0].dupacks,
                o[0].triple_dupacks,
                o[0].sack_pkts
            ),
            (Some(2), Some(5), Some(1), Some(3))
        );
        assert_eq!(
            o[2].drops,
            Some(ObjectDrops {
                queue: 1,
                error: 2,
                ack_queue: 0,
                ack_error: 1
            })
        );
        assert_eq!(o[2].drops.unwrap().total(), 4);
        assert_eq!(
            pages_csv(std::slice::from_ref(p)),
            "flow,workload,objects,bytes,client,server,start_s,response_s,total_s,complete,\
             flow_index,flow_name,client_host,server_host\n\
             2,s+2s,3,10480,198.19.0.1,198.18.0.1:80,0.000000,4.500000,3.900000,1,,,,\n"
        );
        // Named by the scenario's flow (found by its index, the page's `flow`).
        let flow = crate::run::FlowId {
            index: 2,
            name: "flows[1]#0".into(),
            client: "198.19.0.1".parse().unwrap(),
            server: "198.18.0.1".parse().unwrap(),
            port: 80,
            client_host: "browser0".into(),
            server_host: "web".into(),
        };
        let named = crate::files::pages::text(std::slice::from_ref(p), std::slice::from_ref(&flow));
        assert!(named.ends_with(",1,2,flows[1]#0,browser0,web\n"), "{named}");
        let objs = crate::files::page_objects::text(std::slice::from_ref(p), &[flow]);
        assert!(
            objs.lines().skip(1).all(|l| l.ends_with(",2,flows[1]#0")),
            "{objs}"
        );
        let rows = page_objects_csv(std::slice::from_ref(p));
        assert_eq!(
            rows.lines().nth(3).unwrap(),
            "2,2,3,2096,1026,1.810000,1.990000,1053.266,0,0,0,0,1,2,0,1,2.590000,,"
        );
        let table = format_page_table(std::slice::from_ref(p));
        assert!(
            table.contains("response 4.500 s (client), total 3.900 s (server)"),
            "{table}"
        );
    }

    #[test]
    fn ties_missing_objects_and_no_event_log() {
        // The in-lines' throughputs tie: by object index. Object 2 never reached the server's
        // capture: no elapsed time, ranked last, no total time, the page incomplete.
        let client = vec![conn(1024, 0, Some(4000)), conn(1025, 1000, Some(3000))];
        let server = vec![
            conn(1024, 300, Some(3700)),
            conn(1025, 1300, Some(2700)),
            conn(1027, 1300, Some(2700)),
        ];
        let mut sp = spec();
        sp.objects = vec![6288, 2096, 2096, 2096];
        let p = &pages(&[sp], &client, &server, &client)[0];
        let o = &p.objects;
        assert_eq!(
            [o[0].class, o[1].class, o[2].class, o[3].class],
            [1, 2, 4, 3]
        );
        assert_eq!(o[2].elapsed_s(), None);
        assert_eq!((o[2].rexmt_pkts, o[2].drops), (None, None));
        // no event log joined: drops unknown, not 0
        assert_eq!(o[0].drops, None);
        assert_eq!((p.response_s(), p.total_s()), (None, None));
        assert!(!p.complete());
        let csv = page_objects_csv(std::slice::from_ref(p));
        assert!(csv.contains("\n2,2,4,2096,1026,,,,,,,,,,,,,,\n"), "{csv}");
        // An unfinished connection: elapsed to its last packet, not complete.
        let client = vec![conn(1024, 0, None)];
        let mut sp = spec();
        sp.objects = vec![500];
        let p = &pages(&[sp], &client, &client, &client)[0];
        assert_eq!(p.response_s(), Some(1.0));
        assert!(!p.objects[0].complete && !p.complete());
        assert_eq!(format_page_table(&[]), "");
    }
}
