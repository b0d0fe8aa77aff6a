//! What a run reports when it ends: the captures and the event log committed, `hosts.csv`,
//! `link.csv` (the link's counters and meters, as the simulator writes it), `summary.toml`
//! (serialized from [`Summary`]), and the [`RunOutputs`] for the caller.

use crate::kernel_clock::KernelClock;
use crate::realtime::{Counters, Realtime};
use crate::stats::LatenessSummary;
use crate::{EmuOptions, RunOutputs, Stop};
use anyhow::{Context, Result};
use lasthop_core::layout::RunFiles;
use lasthop_core::output::AtomicFile;
use lasthop_link::meter::{write_link_csv, LinkRow};
use lasthop_link::{Dir, DirStats};
use lasthop_scenario::Scenario;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// `summary.toml`: the run, how it ended, the loop's counters, the lateness of the releases and
/// the link's counters per direction (`[link.down]`, `[link.up]`).
#[derive(Debug, Serialize)]
pub struct Summary<'a> {
    pub scenario: &'a str,
    pub run_id: &'a str,
    pub seed: u64,
    pub replication: u64,
    /// [`Stop::name`].
    pub stop: String,
    pub end_ns: u64,
    pub spin_ns: u64,
    pub rt_priority: i32,
    pub snaplen: u32,
    /// The loop's counters, as keys of their own.
    #[serde(flatten)]
    pub counters: Counters,
    pub app_failures: &'a [String],
    /// The kernel's HZ and its jiffies phase at time 0 (`[kernel_clock]`: a simulated twin
    /// with `clock_phase = "<phase_ns>ns"` fires its timers on the kernel's buckets); absent
    /// when `/proc/timer_list` could not be read.
    pub kernel_clock: Option<KernelClock>,
    pub lateness: LatenessSummary,
    pub link: BTreeMap<String, DirStats>,
}

/// Stops the programs, commits every output and says what the run produced. The namespaces
/// and devices go when `rt` (its `Resources`) is dropped, after this.
pub fn finish(
    sc: &Scenario,
    opts: &EmuOptions,
    run_id: String,
    mut rt: Realtime<'_>,
    stop: Stop,
    kernel_clock: Option<KernelClock>,
) -> Result<RunOutputs> {
    let end = rt.now();
    rt.res.stop_children();
    // A greedy flow's programs run until the emulator stops them at the end: not a failure.
    let greedy = |name: &str| {
        sc.flows.iter().any(|f| {
            matches!(&f.app, lasthop_apps::AppParams::Bulk(b) if b.bytes == lasthop_apps::bulk::UNLIMITED)
                && name.starts_with(&format!("flow{}-", f.index))
        })
    };
    let mut failures = vec![];
    let mut app_logs = vec![];
    for c in &rt.res.children {
        match c.status {
            Some(s) if s.success() => {}
            Some(_) if greedy(&c.name) => {}
            Some(s) => failures.push(format!("{}: {s}", c.name)),
            None => failures.push(format!("{}: did not finish", c.name)),
        }
        if c.log.exists() {
            app_logs.push(c.log.clone());
        }
    }
    let out = &opts.out_dir;
    // tun_drops: what the host's kernel dropped in front of the emulator, beyond its TUN's
    // queue (under STOP, the router's unread input in emulation); empty if `ip` could not say.
    let mut hosts_csv =
        String::from("host,side,address,namespace,pcap,packets_sent,packets_received,tun_drops\n");
    let dev = crate::netns::dev_name(&run_id);
    for ((h, t), ns) in rt.hosts.iter().zip(&rt.traffic).zip(&rt.res.namespaces) {
        let drops = crate::netns::tx_dropped(ns, &dev).map_or(String::new(), |n| n.to_string());
        hosts_csv += &format!(
            "{},{},{},{ns},{}.pcap,{},{},{drops}\n",
            h.name, h.side, h.address, h.name, t.sent, t.received
        );
    }
    AtomicFile::write_all_to(RunFiles::new(out).hosts_csv(), hosts_csv.as_bytes())?;
    let link_rows: Vec<LinkRow> = [Dir::Down, Dir::Up]
        .iter()
        .map(|&d| LinkRow::new(d, &rt.link.stats(d), &rt.link.meter(d).reading(end), end))
        .collect();
    let link_csv = RunFiles::new(out).link_csv();
    write_link_csv(&link_csv, &link_rows)
        .with_context(|| format!("writing {}", link_csv.display()))?;
    lasthop_link::trace_summary::write_files(out, &rt.link.trace_summaries(end))
        .context("writing trace_summary.csv and trace_series.csv")?;
    if let Some(w) = rt.writer.take() {
        w.finish()
            .context("writing the captures and the event log")?;
    }
    let lateness = rt.lateness.summary();
    let summary = Summary {
        scenario: &sc.name,
        run_id: &run_id,
        seed: opts.seed.unwrap_or(sc.seed),
        replication: opts.replication.unwrap_or(sc.replication),
        stop: stop.name(),
        end_ns: end.as_nanos(),
        spin_ns: opts.spin_ns,
        rt_priority: opts.rt_priority,
        snaplen: opts.snaplen,
        counters: rt.counters,
        app_failures: &failures,
        kernel_clock,
        lateness,
        link: Dir::BOTH
            .into_iter()
            .map(|d| (d.to_string(), rt.link.stats(d)))
            .collect(),
    };
    let text = toml::to_string(&summary).context("serializing summary.toml")?;
    AtomicFile::write_all_to(RunFiles::new(out).summary_toml(), text.as_bytes())?;
    let _ = std::io::stderr().flush();
    Ok(RunOutputs {
        run_id,
        out_dir: out.clone(),
        pcaps: rt
            .hosts
            .iter()
            .map(|h| (h.name.clone(), h.address, h.pcap_path.clone()))
            .collect(),
        events: RunFiles::new(out).events_csv(),
        app_logs,
        lateness,
        stop,
        app_failures: failures,
        end,
        dir_lock: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_toml_keeps_its_keys_and_tables() {
        let failures = vec!["flow0-send: exit status: 1 \"quoted\"".to_string()];
        let s = Summary {
            scenario: "seed000-e0",
            run_id: "0a1b2c",
            seed: 1,
            replication: 0,
            stop: Stop::Signal(15).name(),
            end_ns: 28_496_433_777,
            spin_ns: 100_000,
            rt_priority: 10,
            snaplen: 65_535,
            counters: Counters {
                sleeps: 5,
                spins: 6,
                ..Counters::default()
            },
            app_failures: &failures,
            kernel_clock: Some(KernelClock {
                hz: 250,
                phase_ns: 77_224_000_123,
            }),
            lateness: LatenessSummary {
                releases: 676,
                p50: 4_100,
                p99: 947_500,
                p999: 24_913_600,
                max: 24_913_600,
                over_1ms: 5,
            },
            link: Dir::BOTH
                .into_iter()
                .map(|d| (d.to_string(), DirStats::default()))
                .collect(),
        };
        let text = toml::to_string(&s).unwrap();
        let v: toml::Table = text.parse().unwrap();
        assert_eq!(v["run_id"].as_str(), Some("0a1b2c"));
        assert_eq!(v["stop"].as_str(), Some("signal_15"));
        assert_eq!(v["end_ns"].as_integer(), Some(28_496_433_777));
        assert_eq!(v["app_failures"][0].as_str(), Some(failures[0].as_str()));
        let lat = &v["lateness"];
        for (k, n) in [
            ("releases", 676),
            ("p50_ns", 4_100),
            ("p99_ns", 947_500),
            ("p999_ns", 24_913_600),
            ("max_ns", 24_913_600),
            ("over_1ms", 5),
        ] {
            assert_eq!(lat[k].as_integer(), Some(n), "{k}");
        }
        for d in ["down", "up"] {
            assert_eq!(v["link"][d]["drops_queue"].as_integer(), Some(0), "{text}");
            assert_eq!(
                v["link"][d]["drops_middlebox"].as_integer(),
                Some(0),
                "{text}"
            );
        }
        // The loop's counters stay top-level keys.
        assert_eq!(v["spins"].as_integer(), Some(6), "{text}");
        assert_eq!(v["unroutable"].as_integer(), Some(0), "{text}");
        // Plain keys first, then the tables, as before.
        assert!(
            text.starts_with("scenario = \"seed000-e0\"\nrun_id = \"0a1b2c\"\n"),
            "{text}"
        );
        assert!(text.contains("\n[lateness]\nreleases = 676\n"), "{text}");
        assert!(
            text.contains("\n[kernel_clock]\nhz = 250\nphase_ns = 77224000123\n"),
            "{text}"
        );
        assert!(text.contains("\n[link.down]\narrived = 0\n"), "{text}");
    }
}
