//! The real-time loop: one thread, one epoll over the hosts' TUN fds, a `CLOCK_MONOTONIC` timerfd
//! (absolute deadlines), the signalfd and the workload programs' pidfds, driving the link model.
//!
//! Time is `CLOCK_MONOTONIC` minus the run's epoch `t0`, in integer ns: the link model's time. A
//! packet read from a TUN is pushed into the link at its read time; the loop sleeps until `spin`
//! before the link's next deadline, spins (`epoll_wait` with timeout 0) to the deadline, lets the
//! model handle it, and writes what it released to the destination host's TUN, recording how late
//! that write was. The model never sees the wall clock, so a late wake-up delays a packet but
//! never changes the model's timeline.
//!
//! A host with an access link (`access_rate`, `access_delay`) has its packets held in the
//! loop's [`AccessLink`]s, the simulator's, on their way to the router and on their way from
//! it; the loop wakes for their heads as for the link's deadlines. A host without one is
//! written to at once, as before.

use crate::progress::Progress;
use crate::routing::{Route, Routes};
use crate::setup::{Host, Resources};
use crate::stats::Lateness;
use crate::sys::{self, Epoll, TimerFd};
use crate::writer::Writer;
use crate::{EmuOptions, Stop};
use anyhow::{Context, Result};
use lasthop_core::{Dur, Packet, Rate, Time};
use lasthop_link::{AccessLink, Event, EventKind, Link, LogLevel};
use lasthop_scenario::Scenario;
use nix::sys::signalfd::SignalFd;
use serde::Serialize;
use std::collections::HashMap;
use std::os::fd::AsFd;

// Epoll tokens: a host index (< 2^32) is its TUN.
const TOKEN_TIMER: u64 = u64::MAX;
const TOKEN_SIGNAL: u64 = u64::MAX - 1;
const TOKEN_CHILD: u64 = 1 << 32;

/// Packets read from one TUN before the loop looks at its deadlines again.
const READ_BATCH: usize = 64;

/// Spin budget: at most half of every 10 ms window is spent spinning. A `SCHED_FIFO` thread that
/// spins before deadlines 120 us apart (100 Mbit/s) is busy nearly all the time and meets the
/// kernel's real-time throttling (`sched_rt_runtime_us`: 95 % of each second), which stalls it
/// for 50 ms: measured as a 50 ms p99.9 lateness, 5-9 ms without it.
const SPIN_WINDOW: u64 = 10_000_000;

/// What the loop counts besides the lateness (written to `summary.toml` as they are named).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Counters {
    /// Packets no host was addressed by.
    pub unroutable: u64,
    /// Writes to a TUN that failed (the packet is lost).
    pub write_errors: u64,
    /// Packets between hosts on the same side (copied over, no link).
    pub same_side: u64,
    /// Waits that slept on the timer.
    pub sleeps: u64,
    /// Loop rounds that spun.
    pub spins: u64,
    /// Waits that slept to the deadline because the spin budget was spent.
    pub spin_capped: u64,
    /// Times a host's TUN stopped being read because its packets waited unread at the router
    /// (`overflow = "stop"` or `"flow_control"`): the real host's packets then wait in its
    /// kernel, in front of the TUN device, as in front of Seawind's router.
    pub input_pauses: u64,
    /// The time, summed over hosts, their TUNs were not read for that reason (ns).
    pub input_paused_ns: u64,
}

/// Both directions of a host's access link.
struct Access {
    up: AccessLink,
    down: AccessLink,
}

/// Packets each host sent into and received from the emulator.
#[derive(Debug, Clone, Copy, Default)]
pub struct Traffic {
    pub sent: u64,
    pub received: u64,
}

pub struct Realtime<'a> {
    sc: &'a Scenario,
    opts: &'a EmuOptions,
    sigfd: &'a SignalFd,
    pub res: Resources,
    pub hosts: Vec<Host>,
    pub traffic: Vec<Traffic>,
    routes: Routes,
    pub link: Link,
    /// Each host's access link towards the router and from it; `None` for a host without one.
    access: Vec<Option<Access>>,
    /// The latest time given to the link model, which must not go backwards: a packet that
    /// left an access link late is pushed at its scheduled time or this, whichever is later.
    link_now: Time,
    /// The run's epoch: `CLOCK_MONOTONIC` ns at time 0.
    t0: u64,
    epoll: Epoll,
    timer: TimerFd,
    /// Lives until the run's end, when [`crate::summary`] commits the files.
    pub writer: Option<Writer>,
    ev_buf: Vec<Event>,
    /// Actual release times by packet id, until the release event is logged.
    actual: HashMap<u64, Time>,
    pub lateness: Lateness,
    pub counters: Counters,
    progress: Progress,
    /// Since when each host's TUN has not been read (STOP, FLOW CONTROL); `None` while it is.
    paused: Vec<Option<Time>>,
}

impl<'a> Realtime<'a> {
    /// Puts every fd the loop waits on into one epoll.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sc: &'a Scenario,
        opts: &'a EmuOptions,
        sigfd: &'a SignalFd,
        res: Resources,
        hosts: Vec<Host>,
        link: Link,
        writer: Writer,
        t0: u64,
    ) -> Result<Realtime<'a>> {
        let epoll = Epoll::new()?;
        let timer = TimerFd::new()?;
        epoll.add(&timer, TOKEN_TIMER)?;
        epoll.add(sigfd, TOKEN_SIGNAL)?;
        for (i, fd) in res.tuns.iter().enumerate() {
            epoll.add(fd, i as u64)?;
        }
        // A program that already exited leaves its pidfd readable: level-triggered, seen at once.
        for (i, c) in res.children.iter().enumerate() {
            epoll.add(&c.pidfd, TOKEN_CHILD + i as u64)?;
        }
        let routes = Routes::new(hosts.iter().map(|h| (h.address, h.side)));
        let access = sc
            .hosts
            .iter()
            .map(|h| {
                (h.access_rate.is_some() || h.access_delay.is_some()).then(|| {
                    let rate = h.access_rate.unwrap_or(Rate::UNLIMITED);
                    let delay = h.access_delay.unwrap_or(Dur::ZERO);
                    Access {
                        up: AccessLink::new(rate, delay),
                        down: AccessLink::new(rate, delay),
                    }
                })
            })
            .collect();
        Ok(Realtime {
            sc,
            opts,
            sigfd,
            traffic: vec![Traffic::default(); hosts.len()],
            paused: vec![None; hosts.len()],
            res,
            hosts,
            routes,
            link,
            access,
            link_now: Time::ZERO,
            t0,
            epoll,
            timer,
            writer: Some(writer),
            ev_buf: vec![],
            actual: HashMap::new(),
            lateness: Lateness::default(),
            counters: Counters::default(),
            progress: Progress::new(sc),
        })
    }

    /// Runs until the flows are done and the link has drained (plus 100 ms, at most 5 s after the
    /// last program), the duration passes, a program failed 0.5 s ago, or a stop signal came.
    pub fn run(&mut self) -> Result<Stop> {
        let end = Time::ZERO + self.sc.duration;
        let spin = self.opts.spin_ns;
        let mut evs = [sys::EMPTY_EVENT; 32];
        let mut buf = vec![0u8; 65_536];
        let mut apps_done_at: Option<Time> = None;
        let mut failed_at: Option<Time> = None;
        let have_apps = !self.res.children.is_empty();
        let (mut window_start, mut spun, mut spinning_since) = (0u64, 0u64, None::<u64>);
        loop {
            let now = self.now();
            if let Some(since) = spinning_since.take() {
                spun += now.as_nanos().saturating_sub(since);
            }
            if now.as_nanos() - window_start >= SPIN_WINDOW {
                (window_start, spun) = (now.as_nanos(), 0);
            }
            let may_spin = spun < SPIN_WINDOW / 2;
            let mut dl = end;
            if let Some(t) = self.link.poll_timeout() {
                dl = dl.min(t);
            }
            if let Some((t, ..)) = self.next_access_head() {
                dl = dl.min(t);
            }
            // Housekeeping deadline while winding down.
            if apps_done_at.is_some() || failed_at.is_some() {
                dl = dl.min(now + Dur::from_millis(10));
            }
            let timeout = if dl <= now {
                Some(0)
            } else if dl.as_nanos() - now.as_nanos() > spin || !may_spin {
                let wake = if may_spin {
                    dl.as_nanos() - spin
                } else {
                    self.counters.spin_capped += 1;
                    dl.as_nanos()
                };
                self.timer.arm_abs(self.t0 + wake)?;
                self.counters.sleeps += 1;
                None
            } else {
                self.counters.spins += 1;
                spinning_since = Some(now.as_nanos());
                Some(0)
            };
            self.pause_inputs(now)?;
            // What the last round captured and logged goes to the writer in one message.
            self.writer().send_batch();
            let n = self.epoll.wait(&mut evs, timeout)?;
            // Packets whose access link delivered them first, so that the link model's time
            // never goes back behind a packet read from a TUN in this round.
            self.access_heads(self.now());
            let mut stop = None;
            for ev in &evs[..n] {
                match sys::token(ev) {
                    TOKEN_TIMER => self.timer.clear(),
                    TOKEN_SIGNAL => {
                        if let Some(s) = sys::read_signal(self.sigfd) {
                            stop = Some(Stop::Signal(s));
                        }
                    }
                    t if t >= TOKEN_CHILD => {
                        if let Some(failed) = self.reap((t - TOKEN_CHILD) as usize) {
                            if failed && failed_at.is_none() {
                                failed_at = Some(self.now());
                            }
                        }
                    }
                    i => self.read_tun(i as usize, &mut buf)?,
                }
            }
            let now = self.now();
            self.access_heads(now);
            if self.link.poll_timeout().is_some_and(|t| t <= now) {
                self.link_now = self.link_now.max(now);
                self.link.handle_timeout(self.link_now);
            }
            self.flush();
            if self.opts.progress {
                if let Some(line) = self.progress.due(now) {
                    lasthop_core::say!("{line}");
                }
            }
            if let Some(s) = stop {
                return Ok(s);
            }
            // A full disk stops the run now, not at its end.
            if let Some(e) = self.writer().failed() {
                anyhow::bail!("writing the run's outputs: {e}: the run is stopped and its outputs removed (free some space, or give another --out)");
            }
            if now >= end {
                return Ok(Stop::Duration);
            }
            if failed_at.is_some_and(|f| now >= f + Dur::from_millis(500)) {
                return Ok(Stop::AppFailed);
            }
            if have_apps
                && apps_done_at.is_none()
                && self.res.children.iter().all(|c| c.status.is_some())
            {
                apps_done_at = Some(now);
            }
            if let Some(t) = apps_done_at {
                let idle = self.link.is_empty() && self.next_access_head().is_none();
                if (idle && now >= t + Dur::from_millis(100)) || now >= t + Dur::from_secs(5) {
                    return Ok(if failed_at.is_some() {
                        Stop::AppFailed
                    } else {
                        Stop::FlowsDone
                    });
                }
            }
        }
    }

    /// The run-relative time now.
    pub fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.t0))
    }

    fn writer(&self) -> &Writer {
        self.writer
            .as_ref()
            .expect("the writer lives until the summary")
    }

    /// Records the exit of workload program `idx` if it exited; `Some(failed)` then.
    fn reap(&mut self, idx: usize) -> Option<bool> {
        let now = self.now();
        let c = &mut self.res.children[idx];
        let s = c.child.try_wait().ok()??;
        c.status = Some(s);
        let _ = self.epoll.del(&c.pidfd);
        if self.opts.verbose {
            lasthop_core::say!("{} exited at {now}: {s}", c.name);
        }
        Some(!s.success())
    }

    /// Stops reading the TUN of every host whose direction has packets waiting unread at the
    /// router (STOP, FLOW CONTROL), and reads again the ones whose direction has none left.
    /// Called once per round, and [`Realtime::read_tun`] stops at the packet that had to wait.
    fn pause_inputs(&mut self, now: Time) -> Result<()> {
        for i in 0..self.hosts.len() {
            let waiting = self.link.input_waiting(self.hosts[i].side.dir());
            match self.paused[i] {
                None if waiting => {
                    self.epoll.del(&self.res.tuns[i])?;
                    self.paused[i] = Some(now);
                    self.counters.input_pauses += 1;
                }
                Some(since) if !waiting => {
                    self.epoll.add(&self.res.tuns[i], i as u64)?;
                    self.paused[i] = None;
                    self.counters.input_paused_ns += now.saturating_since(since).as_nanos();
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Adds the pauses still running at the run's end to [`Counters::input_paused_ns`].
    pub fn end_pauses(&mut self) {
        let now = self.now();
        for p in &mut self.paused {
            if let Some(since) = p.take() {
                self.counters.input_paused_ns += now.saturating_since(since).as_nanos();
            }
        }
    }

    /// Reads the packets waiting on host `i`'s TUN (at most a batch: epoll is level-triggered, so
    /// the rest comes next round, after any deadline that fell due) and routes them; none while
    /// its direction's packets wait unread at the router (STOP, FLOW CONTROL), and none after
    /// the one that had to wait.
    fn read_tun(&mut self, i: usize, buf: &mut [u8]) -> Result<()> {
        let dir = self.hosts[i].side.dir();
        for _ in 0..READ_BATCH {
            if self.link.input_waiting(dir) {
                return Ok(());
            }
            let Some(n) = sys::read_nonblocking(self.res.tuns[i].as_fd(), buf)
                .with_context(|| format!("reading the TUN of {}", self.hosts[i].name))?
            else {
                return Ok(());
            };
            let now = self.now();
            let pkt = Packet::from_bytes(buf[..n].to_vec());
            self.writer().pcap(i, now, pkt.clone());
            self.traffic[i].sent += 1;
            match self.routes.from_host(i, &pkt.data) {
                Route::Link(dir) => match &mut self.access[i] {
                    Some(a) => {
                        a.up.send(now, pkt);
                    }
                    None => self.push(now, dir, pkt),
                },
                Route::Local(d) => {
                    self.counters.same_side += 1;
                    self.deliver(d, pkt);
                }
                Route::Unroutable => self.counters.unroutable += 1,
            }
            self.flush();
        }
        Ok(())
    }

    /// Hands `pkt` to the link model at `at` (or later, if the model is already past it).
    fn push(&mut self, at: Time, dir: lasthop_link::Dir, pkt: Packet) {
        self.link_now = self.link_now.max(at);
        self.link.push(self.link_now, dir, pkt);
    }

    /// The earliest arrival of a packet at the far end of an access link: its time, its host,
    /// and whether it is on the way to the router.
    fn next_access_head(&self) -> Option<(Time, usize, bool)> {
        let heads = self.access.iter().enumerate().flat_map(|(i, a)| {
            let (up, down) = a
                .as_ref()
                .map_or((None, None), |a| (a.up.head(), a.down.head()));
            [up.map(|t| (t, i, true)), down.map(|t| (t, i, false))]
        });
        heads.flatten().min()
    }

    /// Moves the packets whose access link has delivered them by `now`, in order of arrival
    /// (so that the link model's pushes keep their order): towards the router into the link
    /// model, from it to their host.
    fn access_heads(&mut self, now: Time) {
        while let Some((at, i, up)) = self.next_access_head().filter(|h| h.0 <= now) {
            let a = self.access[i]
                .as_mut()
                .expect("a head is on an access link");
            if up {
                let (pkt, _) = a.up.take_head();
                let dir = self.hosts[i].side.dir();
                self.push(at, dir, pkt);
                self.flush();
            } else {
                let (pkt, _) = a.down.take_head();
                let actual = self.deliver(i, pkt);
                self.record_lateness(at, actual);
            }
        }
    }

    fn record_lateness(&mut self, due: Time, actual: Time) {
        let late = actual.as_nanos().saturating_sub(due.as_nanos());
        self.lateness.record(late);
        self.progress.lateness(late);
    }

    /// Writes `pkt` to host `d`'s TUN and captures it; returns when it was handed over.
    fn deliver(&mut self, d: usize, pkt: Packet) -> Time {
        // The actual release time is when the packet is handed to the host: the write itself runs
        // the host's receive path (and often its reply) before it returns.
        let actual = self.now();
        match sys::write(self.res.tuns[d].as_fd(), &pkt.data) {
            Ok(_) => {
                self.traffic[d].received += 1;
                if self.opts.progress {
                    self.progress.delivered(&pkt.data);
                }
            }
            Err(_) => self.counters.write_errors += 1,
        }
        self.writer().pcap(d, actual, pkt);
        actual
    }

    /// Delivers what the link released, records its lateness, and logs the link's events.
    fn flush(&mut self) {
        while let Some(o) = self.link.poll_output() {
            let Some(d) = self.routes.destination(&o.packet.data) else {
                self.counters.unroutable += 1;
                continue;
            };
            let actual = match &mut self.access[d] {
                // Released into the host's access link: that hand-over is the release.
                Some(a) => {
                    a.down.send(o.at, o.packet);
                    self.now()
                }
                None => {
                    let actual = self.deliver(d, o.packet);
                    self.record_lateness(o.at, actual);
                    actual
                }
            };
            if self.sc.log == LogLevel::All {
                self.actual.insert(o.id, actual);
            }
        }
        self.link.drain_events(&mut self.ev_buf);
        let w = self
            .writer
            .as_ref()
            .expect("the writer lives until the summary");
        for e in self.ev_buf.drain(..) {
            let actual = match (e.kind, &e.packet) {
                (EventKind::Release, Some(p)) => self.actual.remove(&p.id),
                _ => None,
            };
            w.event(e, actual);
        }
    }
}
