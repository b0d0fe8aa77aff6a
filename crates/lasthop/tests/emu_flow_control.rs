//! Seawind's FLOW CONTROL in both modes: a UDP stream of 1000-byte datagrams every 10 ms
//! (1028 B each on the wire, 822 kbit/s offered) into a 400 kbit/s link whose router queue holds
//! 5 packets and blocks its neighbour when full (`overflow = "flow_control"`). The link sends one
//! datagram per 1028 × 8 / 400 000 = 20.56 ms, half the offered rate, so after the queue fills
//! about every second datagram must wait for room.
//!
//! In simulation the waiting datagrams wait unread at the router's input (the sender is a
//! model; where its packets wait does not change their times). In emulation the emulator stops
//! reading the sending host's TUN device while any waits there, so the real datagrams wait in
//! the sending host's kernel, in front of its device, as in front of Seawind's router: the
//! router's input never holds more than the one datagram that found the queue full. Nothing is
//! lost in either mode, and the 200 datagrams take about 200 × 20.56 ms = 4.1 s of link time.
//!
//! Under STOP with `input = 20` the router's input holds at most 20 waiting datagrams and drops
//! the others (cause `input`): 78 of the 200 in simulation. In emulation the 20 are the sending
//! host's TUN queue (its `txqueuelen`), whose kernel drops the others (`hosts.csv`'s `tun_drops`).
//!
//! The emulated tests need root (without it the test says SKIPPED and why, and fails under
//! `LASTHOP_ROOT_TESTS=1`).

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The scenario with `overflow` (a TOML line or lines) in the queue's table.
fn scenario_with(dir: &Path, overflow: &str) -> PathBuf {
    std::fs::write(
        dir.join("link.toml"),
        format!(
            "[both]\nrate = \"400kbit\"\ndelay = \"10ms\"\n[both.queue]\npackets = 5\n{overflow}\n"
        ),
    )
    .unwrap();
    let spec = dir.join("fc.toml");
    std::fs::write(
        &spec,
        "name = \"fc\"\nduration = \"12s\"\nlink = \"link.toml\"\nlog = \"all\"\n[hosts.a]\nside = \"fixed\"\n[hosts.b]\nside = \"mobile\"\n[[flows]]\nkind = \"cbr\"\nfrom = \"a\"\nto = \"b\"\npayload = \"1000B\"\ninterval = \"10ms\"\nstart = \"100ms\"\nduration = \"2s\"\n",
    )
    .unwrap();
    spec
}

fn scenario(dir: &Path) -> PathBuf {
    scenario_with(dir, "overflow = \"flow_control\"")
}

const STOP: &str = "overflow = \"stop\"\ninput = 20";

/// What `events.csv` says of the stream: how many datagrams were released, the most that
/// waited unread at the router's input at once (an `unread` row adds one, the `enqueue` row of
/// the same packet takes it away), and how many the link dropped.
fn input_figures(dir: &Path) -> (usize, usize, usize) {
    let text = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (ev, d, id) = (col("event"), col("dir"), col("packet"));
    let (mut waiting, mut most, mut released, mut drops) = (HashSet::new(), 0, 0, 0);
    for f in lines.map(|l| l.split(',').collect::<Vec<_>>()) {
        if f[d] != "down" {
            continue;
        }
        match f[ev] {
            "unread" => {
                waiting.insert(f[id].to_string());
                most = most.max(waiting.len());
            }
            "enqueue" => {
                waiting.remove(f[id]);
            }
            "release" => released += 1,
            "drop" => drops += 1,
            _ => {}
        }
    }
    (released, most, drops)
}

#[test]
fn sim_holds_the_waiting_datagrams_at_the_routers_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    common::lasthop_ok(&[
        "sim",
        scenario(tmp.path()).to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (released, most, drops) = input_figures(&out);
    assert_eq!((released, drops), (200, 0), "every datagram delivered");
    // By the stream's end (2.1 s) about 2000 / 20.56 = 97 datagrams have entered the link of
    // the 200 sent, 5 sit in the queue: about 98 wait at the input.
    assert!((90..=105).contains(&most), "{most} waited unread at once");
}

#[test]
fn emu_stops_reading_the_senders_tun_while_datagrams_wait() {
    if !common::can_emulate("emu_stops_reading_the_senders_tun_while_datagrams_wait") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu");
    let run = common::EmuRun::start(&scenario(tmp.path()), &out, &[]);
    let o = run.wait(std::time::Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let (released, most, drops) = input_figures(&out);
    let summary: toml::Table = std::fs::read_to_string(out.join("summary.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let pauses = summary["input_pauses"].as_integer().unwrap();
    let paused_s = summary["input_paused_ns"].as_integer().unwrap() as f64 / 1e9;
    println!("{released} released, at most {most} unread at once, {pauses} pauses, {paused_s:.2} s paused");
    assert_eq!((released, drops), (200, 0), "every datagram delivered");
    // The emulator stops reading at the datagram that had to wait: the input holds it alone
    // (the simulated input holds about 98, the test above).
    assert_eq!(most, 1, "{most} waited unread at once");
    // Each datagram that waits pauses the reading once, about every second one from the queue's
    // filling on, and the reading stays paused for most of the 4.1 s the link needs.
    assert!(pauses >= 50, "{pauses} pauses");
    assert!(paused_s > 1.0, "{paused_s} s paused");
}

/// `hosts.csv`'s `tun_drops` of host `a`, the sender.
fn tun_drops(dir: &Path) -> u64 {
    let text = std::fs::read_to_string(dir.join("hosts.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "tun_drops").unwrap();
    let a = lines.find(|l| l.starts_with("a,")).unwrap();
    a.split(',').nth(col).unwrap().parse().unwrap()
}

#[test]
fn sim_drops_what_stops_input_cannot_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sim");
    common::lasthop_ok(&[
        "sim",
        scenario_with(tmp.path(), STOP).to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (released, most, drops) = input_figures(&out);
    assert_eq!(most, 20, "STOP's input holds 20");
    assert_eq!(released + drops, 200);
    // 200 sent in 2 s: the link carries 2000 / 20.56 = 97 by then, 5 queued, 20 waiting; the
    // rest, about 78, dropped.
    assert!((70..=85).contains(&drops), "{drops} dropped at the input");
}

#[test]
fn emu_leaves_what_stop_cannot_hold_to_the_senders_kernel() {
    if !common::can_emulate("emu_leaves_what_stop_cannot_hold_to_the_senders_kernel") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("emu");
    let run = common::EmuRun::start(&scenario_with(tmp.path(), STOP), &out, &[]);
    let o = run.wait(std::time::Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let (released, most, drops) = input_figures(&out);
    let kernel = tun_drops(&out);
    println!("{released} released, {drops} dropped by the link, {kernel} by the sender's kernel, at most {most} unread at once");
    assert_eq!(
        drops, 0,
        "the link drops none: the router's input holds one at most"
    );
    assert_eq!(most, 1);
    assert_eq!(
        released as u64 + kernel,
        200,
        "what the link did not deliver, the kernel dropped"
    );
    assert!(
        (70..=85).contains(&kernel),
        "{kernel} dropped in front of the TUN"
    );
}
