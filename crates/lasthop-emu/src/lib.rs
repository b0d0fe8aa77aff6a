//! The real-time emulator: real Linux hosts in network namespaces, joined through TUN devices by
//! the same sans-IO link model the simulator runs.
//!
//! One process owns everything: one namespace per host (`lh-<runid>-<host>`), a TUN device in
//! each (`lh-<runid>`, opened from a helper thread that entered the namespace), and a single
//! real-time loop that waits on epoll over the TUN fds, a `CLOCK_MONOTONIC` timerfd, a signalfd
//! and the workload processes' pidfds. Packets read from a host's TUN are pushed into the link at
//! their arrival time (run-relative ns); packets the link releases are written to the other host's
//! TUN as close to their scheduled time as the loop manages (absolute deadlines, 1 ns timer slack,
//! a short spin before each deadline), and each release's lateness is recorded.
//!
//! Outputs (in `--out DIR`, each written atomically): `<host>.pcap` per host (captured at its TUN:
//! what the host sent, with the time the emulator read it, and what it received, with the time the
//! emulator wrote it), `events.csv` (the link's event log; releases carry their actual time),
//! `flow<i>-send.csv` / `flow<i>-recv.csv` (application timestamps), `hosts.csv` and
//! `summary.toml` (lateness distribution, counters, how the run ended).

pub mod app;
pub mod netns;
pub mod stats;
pub mod sys;
pub mod writer;

use anyhow::{bail, Context, Result};
use lasthop_core::output::AtomicFile;
use lasthop_core::{Packet, Seeds, Time};
use lasthop_link::{Dir, Event, EventKind, Link, LogLevel};
use lasthop_scenario::{Scenario, Side};
use netns::Registration;
use stats::{Lateness, LatenessSummary};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

pub use stats::LATE_THRESHOLD_NS;

/// The TUN transmit queue length: long enough that a host never drops a packet on its way to the
/// emulator (Mahimahi's flaw); the emulator drains the queue continuously.
pub const TXQUEUELEN: u32 = 10_000;

#[derive(Debug, Clone)]
pub struct EmuOptions {
    /// Results directory (created if missing).
    pub out_dir: PathBuf,
    /// The `lasthop` binary, started inside the namespaces as `EXE app ...`.
    pub exe: PathBuf,
    /// Bytes of each packet kept in the captures.
    pub snaplen: u32,
    /// How long before a deadline the loop stops sleeping and spins.
    pub spin_ns: u64,
    /// Override the scenario's seed / replication.
    pub seed: Option<u64>,
    pub replication: Option<u64>,
    /// Run the real-time loop under `SCHED_FIFO` at this priority (0: normal scheduling).
    pub rt_priority: i32,
    /// Print progress lines on stderr.
    pub verbose: bool,
}

impl EmuOptions {
    pub fn new(out_dir: impl Into<PathBuf>, exe: impl Into<PathBuf>) -> EmuOptions {
        EmuOptions {
            out_dir: out_dir.into(),
            exe: exe.into(),
            snaplen: 65_535,
            spin_ns: 100_000,
            seed: None,
            replication: None,
            rt_priority: 10,
            verbose: false,
        }
    }
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every workload program exited and the link had drained.
    FlowsDone,
    /// The scenario's duration passed.
    Duration,
    /// A workload program failed.
    AppFailed,
    /// SIGINT, SIGTERM or SIGHUP.
    Signal(i32),
}

impl Stop {
    pub fn name(self) -> String {
        match self {
            Stop::FlowsDone => "flows_done".into(),
            Stop::Duration => "duration".into(),
            Stop::AppFailed => "app_failed".into(),
            Stop::Signal(s) => format!("signal_{s}"),
        }
    }
}

/// What a run produced: the input of the analysis (`connections.csv` is written from the
/// captures by `lasthop-analysis`, called by the `lasthop emu` command after the run).
#[derive(Debug, Clone)]
pub struct RunOutputs {
    pub run_id: String,
    pub out_dir: PathBuf,
    /// `(host name, address, capture path)` for each host, in spec order.
    pub pcaps: Vec<(String, Ipv4Addr, PathBuf)>,
    pub events: PathBuf,
    pub app_logs: Vec<PathBuf>,
    pub lateness: LatenessSummary,
    pub stop: Stop,
    /// Workload programs that exited with an error or did not finish, with their status.
    pub app_failures: Vec<String>,
    /// Run-relative end time.
    pub end: Time,
}

struct AppChild {
    name: String,
    child: Child,
    pidfd: OwnedFd,
    status: Option<ExitStatus>,
    log: PathBuf,
}

/// Everything a run created; dropping it removes all of it (children, devices, namespaces,
/// registry entry), whether the run ended normally, with an error, or by a signal.
struct Resources {
    reg: Option<Registration>,
    namespaces: Vec<String>,
    tuns: Vec<OwnedFd>,
    children: Vec<AppChild>,
    verbose: bool,
}

impl Resources {
    fn stop_children(&mut self) {
        for c in &mut self.children {
            if c.status.is_none() {
                if let Ok(Some(s)) = c.child.try_wait() {
                    c.status = Some(s);
                } else {
                    let _ = sys::kill(c.child.id(), libc::SIGTERM);
                }
            }
        }
        let deadline = sys::monotonic_ns() + 1_000_000_000;
        for c in &mut self.children {
            while c.status.is_none() {
                match c.child.try_wait() {
                    Ok(Some(s)) => c.status = Some(s),
                    Ok(None) if sys::monotonic_ns() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(5))
                    }
                    Ok(None) => {
                        let _ = c.child.kill();
                        c.status = c.child.wait().ok();
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        self.stop_children();
        self.tuns.clear();
        for ns in self.namespaces.drain(..).rev() {
            if let Err(e) = netns::delete_namespace(&ns) {
                eprintln!("warning: removing namespace {ns}: {e:#}");
            } else if self.verbose {
                eprintln!("removed namespace {ns}");
            }
        }
        if let Some(r) = self.reg.take() {
            r.remove();
        }
    }
}

/// Checks, before anything is created, that the machine can run the scenario: root,
/// `/dev/net/tun`, iproute2, and every sysctl and congestion control the spec names.
pub fn preflight(sc: &Scenario) -> Result<()> {
    if !sys::is_root() {
        bail!("the emulator needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create namespaces and TUN devices");
    }
    if !Path::new("/dev/net/tun").exists() {
        bail!("/dev/net/tun is missing: load the tun module (modprobe tun)");
    }
    let ipv = Command::new("ip")
        .arg("-V")
        .output()
        .context("cannot run `ip`: the emulator needs iproute2")?;
    if !ipv.status.success() {
        bail!("`ip -V` failed: the emulator needs iproute2");
    }
    let available = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    let available: Vec<&str> = available.split_whitespace().collect();
    let check_cc = |key: &str, cc: &str| -> Result<()> {
        if !available.contains(&cc) {
            bail!(
                "{key}: congestion control {cc:?} is not available in this kernel: available are {} (load the module tcp_{cc} first)",
                available.join(", ")
            );
        }
        Ok(())
    };
    for h in &sc.hosts {
        for (k, v) in &h.sysctl {
            let path = sysctl_path(k);
            if !path.exists() {
                bail!(
                    "hosts.{}.sysctl.{k}: this kernel has no sysctl net.ipv4.{k} ({} is missing)",
                    h.name,
                    path.display()
                );
            }
            if k == "tcp_congestion_control" {
                check_cc(&format!("hosts.{}.sysctl.{k}", h.name), &v.to_proc())?;
            }
        }
    }
    for f in &sc.flows {
        let lasthop_apps::AppParams::Bulk(b) = &f.app else {
            continue;
        };
        if let Some(cc) = &b.socket.congestion_control {
            check_cc(&format!("flows[{}].congestion_control", f.index), cc)?;
        }
    }
    Ok(())
}

/// What the emulator will not do that the spec asks for (the simulator's access links), and
/// settings that will drop packets, as lines for the user. (`tcp` tables are the simulator's
/// counterpart of `sysctl` and `route`: a scenario for both modes has both, so they pass silently.)
pub fn warnings(sc: &Scenario) -> Vec<String> {
    let mut w = vec![];
    for h in &sc.hosts {
        if h.access_rate.is_some() || h.access_delay.is_some() {
            w.push(format!(
                "hosts.{}: access_rate and access_delay are simulation-only; the emulator ignores them",
                h.name
            ));
        }
        if let Some(m) = sc.link.mtu {
            if h.mtu > m {
                w.push(format!(
                    "hosts.{}.mtu: {}B is more than the link's {m}B MTU: full-size packets will be dropped (cause mtu)",
                    h.name, h.mtu
                ));
            }
        }
    }
    w
}

fn sysctl_path(key: &str) -> PathBuf {
    Path::new("/proc/sys/net/ipv4").join(key.replace('.', "/"))
}

fn route_options(h: &lasthop_scenario::Host) -> String {
    let r = &h.route;
    let mut s = String::new();
    if let Some(n) = r.initcwnd {
        s += &format!(" initcwnd {n}");
    }
    if let Some(n) = r.initrwnd {
        s += &format!(" initrwnd {n}");
    }
    if let Some(d) = r.rto_min {
        s += &format!(" rto_min {}ms", d.as_nanos().div_ceil(1_000_000));
    }
    if let Some(q) = r.quickack {
        s += &format!(" quickack {}", u8::from(q));
    }
    s
}

/// Namespace-side setup, run on a helper thread inside the namespace: IPv6 off (no router
/// solicitations on the TUN), the host's sysctls (each read back), then the TUN device.
fn setup_in_namespace(
    host: String,
    dev: String,
    sysctls: Vec<(String, String)>,
) -> Result<OwnedFd> {
    for p in [
        "/proc/sys/net/ipv6/conf/all/disable_ipv6",
        "/proc/sys/net/ipv6/conf/default/disable_ipv6",
    ] {
        if Path::new(p).exists() {
            std::fs::write(p, "1").with_context(|| format!("writing {p}"))?;
        }
    }
    for (k, v) in &sysctls {
        let path = sysctl_path(k);
        std::fs::write(&path, v).with_context(|| {
            format!("hosts.{host}.sysctl.{k}: the kernel refused the value {v:?}")
        })?;
        let back = std::fs::read_to_string(&path).unwrap_or_default();
        let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        if norm(&back) != norm(v) {
            bail!(
                "hosts.{host}.sysctl.{k}: wrote {v:?} but the kernel reads back {:?}",
                back.trim()
            );
        }
    }
    Ok(sys::open_tun(&dev)?)
}

struct HostIo {
    name: String,
    side: Side,
    addr: u32,
    fd: OwnedFd,
    pcap_path: PathBuf,
    sent: u64,
    received: u64,
}

const TOKEN_TIMER: u64 = u64::MAX;
/// Packets read from one TUN before the loop looks at its deadlines again.
const READ_BATCH: usize = 64;
const TOKEN_SIGNAL: u64 = u64::MAX - 1;
const TOKEN_CHILD: u64 = 1 << 32;

struct Emu<'a> {
    sc: &'a Scenario,
    opts: &'a EmuOptions,
    run_id: String,
    res: Resources,
    hosts: Vec<HostIo>,
    link: Link,
    t0: u64,
    epoll: sys::Epoll,
    timer: sys::TimerFd,
    sigfd: &'a OwnedFd,
    writer: Option<writer::Writer>,
    ev_buf: Vec<Event>,
    actual: HashMap<u64, Time>,
    lateness: Lateness,
    unroutable: u64,
    write_errors: u64,
    local: u64,
    spins: u64,
    /// Waits that slept to the deadline because the spin budget was spent.
    spin_capped: u64,
    sleeps: u64,
}

/// Runs the scenario in real time. Returns when the flows are done (and the link has drained),
/// the duration has passed, or a stop signal came; the outputs are committed in every one of
/// these cases. Everything the run created is removed before this returns, also on error.
pub fn run(sc: &Scenario, opts: &EmuOptions) -> Result<RunOutputs> {
    preflight(sc)?;
    for w in warnings(sc) {
        eprintln!("warning: {w}");
    }
    std::fs::create_dir_all(&opts.out_dir)
        .with_context(|| format!("creating {}", opts.out_dir.display()))?;
    let sigfd = sys::block_stop_signals().context("blocking stop signals")?;
    let result = run_blocked(sc, opts, &sigfd);
    // Forget signals that came during teardown, then restore the mask.
    while sys::read_signal(&sigfd).is_some() {}
    sys::unblock_stop_signals();
    result
}

fn run_blocked(sc: &Scenario, opts: &EmuOptions, sigfd: &OwnedFd) -> Result<RunOutputs> {
    let mut emu = Emu::setup(sc, opts, sigfd)?;
    if opts.rt_priority > 0 {
        if let Err(e) = sys::set_realtime(opts.rt_priority) {
            eprintln!("warning: no real-time scheduling ({e}); lateness will suffer under load");
        }
    }
    let stop = emu.run_loop();
    sys::set_normal();
    emu.finish(stop?)
}

fn check_signal(sigfd: &OwnedFd) -> Result<()> {
    if let Some(s) = sys::read_signal(sigfd) {
        bail!("stopped by signal {s} during setup");
    }
    Ok(())
}

impl<'a> Emu<'a> {
    fn setup(sc: &'a Scenario, opts: &'a EmuOptions, sigfd: &'a OwnedFd) -> Result<Emu<'a>> {
        let run_id = netns::new_run_id();
        let mut res = Resources {
            reg: Some(Registration::create(&run_id)?),
            namespaces: vec![],
            tuns: vec![],
            children: vec![],
            verbose: opts.verbose,
        };
        let dev = netns::dev_name(&run_id);
        let epoll = sys::Epoll::new()?;
        let timer = sys::TimerFd::new()?;
        epoll.add(timer.0.as_raw_fd(), TOKEN_TIMER)?;
        epoll.add(sigfd.as_raw_fd(), TOKEN_SIGNAL)?;
        let mut hosts = vec![];
        for (i, h) in sc.hosts.iter().enumerate() {
            check_signal(sigfd)?;
            let ns = netns::ns_name(&run_id, &h.name);
            res.reg.as_mut().expect("registered").add_namespace(&ns)?;
            netns::ip(&["netns", "add", &ns])?;
            res.namespaces.push(ns.clone());
            let sysctls = h
                .sysctl
                .iter()
                .map(|(k, v)| (k.clone(), v.to_proc()))
                .collect();
            let (hn, d) = (h.name.clone(), dev.clone());
            let fd = netns::in_netns(&ns, move || setup_in_namespace(hn, d, sysctls))?;
            let mut lines = vec![
                "link set dev lo up".to_string(),
                format!("link set dev {dev} mtu {} txqueuelen {TXQUEUELEN}", h.mtu),
                format!("addr add {}/32 dev {dev}", h.address),
                format!("link set dev {dev} up"),
            ];
            let opts_s = route_options(h);
            for p in sc.hosts.iter().filter(|p| p.side != h.side) {
                lines.push(format!(
                    "route add {}/32 dev {dev} src {}{opts_s}",
                    p.address, h.address
                ));
            }
            netns::ip_batch(&ns, &lines)?;
            epoll.add(fd.as_raw_fd(), i as u64)?;
            let pcap_path = opts.out_dir.join(format!("{}.pcap", h.name));
            hosts.push(HostIo {
                name: h.name.clone(),
                side: h.side,
                addr: u32::from(h.address),
                fd: fd.try_clone()?,
                pcap_path,
                sent: 0,
                received: 0,
            });
            res.tuns.push(fd);
            if opts.verbose {
                eprintln!(
                    "host {} ({} side): namespace {ns}, {dev} {} mtu {}",
                    h.name, h.side, h.address, h.mtu
                );
            }
        }
        let pcap_paths: Vec<PathBuf> = hosts.iter().map(|h: &HostIo| h.pcap_path.clone()).collect();
        let events = (sc.log != LogLevel::None).then(|| opts.out_dir.join("events.csv"));
        let writer = writer::Writer::new(&pcap_paths, opts.snaplen, events)
            .context("creating the output files")?;
        let seeds = Seeds::new(
            opts.seed.unwrap_or(sc.seed),
            opts.replication.unwrap_or(sc.replication),
        );
        let link = Link::new(sc.link.clone(), seeds, sc.log);
        check_signal(sigfd)?;
        let _ = sys::set_timer_slack(1);
        let mut emu = Emu {
            sc,
            opts,
            run_id,
            res,
            hosts,
            link,
            t0: 0,
            epoll,
            timer,
            sigfd,
            writer: Some(writer),
            ev_buf: vec![],
            actual: HashMap::new(),
            lateness: Lateness::default(),
            unroutable: 0,
            write_errors: 0,
            local: 0,
            spins: 0,
            spin_capped: 0,
            sleeps: 0,
        };
        emu.start_apps()?;
        Ok(emu)
    }

    /// Spawns `EXE app ARGS` inside `host`'s namespace; the child dies with the emulator.
    fn spawn_app(
        &mut self,
        host: usize,
        name: &str,
        args: Vec<String>,
        log: PathBuf,
    ) -> Result<usize> {
        let ns = &self.res.namespaces[host];
        let nsfd = sys::open_netns(&Path::new(netns::NETNS_DIR).join(ns))?;
        let raw = nsfd.as_raw_fd();
        let mut cmd = Command::new(&self.opts.exe);
        cmd.arg("app")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(raw, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The emulator blocks its stop signals (it reads them from a signalfd): give the
                // program the usual mask and dispositions, so SIGTERM ends it.
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let child = cmd.spawn().with_context(|| {
            format!(
                "starting {} app {}",
                self.opts.exe.display(),
                args.join(" ")
            )
        })?;
        drop(nsfd);
        let pidfd = sys::pidfd_open(child.id())?;
        let idx = self.res.children.len();
        self.epoll
            .add(pidfd.as_raw_fd(), TOKEN_CHILD + idx as u64)?;
        if self.opts.verbose {
            eprintln!("started {name} in {ns}: app {}", args.join(" "));
        }
        self.res.children.push(AppChild {
            name: name.to_string(),
            child,
            pidfd,
            status: None,
            log,
        });
        Ok(idx)
    }

    fn start_apps(&mut self) -> Result<()> {
        self.t0 = sys::monotonic_ns();
        let sc = self.sc;
        // Server ends first; each says `ready` once it listens. Each application gives its
        // two programs' arguments (lasthop-apps); the logs are flow<i>-recv.csv / -send.csv.
        let mut clients = vec![];
        for f in &sc.flows {
            let logs = ["recv", "send"]
                .map(|end| self.opts.out_dir.join(format!("flow{}-{end}.csv", f.index)));
            let [server, client] = f.app.programs(&f.ctx(sc), self.t0, [&logs[0], &logs[1]]);
            let [recv_log, send_log] = logs;
            let idx = self.spawn_app(f.to, &format!("flow{}-recv", f.index), server, recv_log)?;
            self.wait_ready(idx)?;
            check_signal(self.sigfd)?;
            clients.push((f.from, format!("flow{}-send", f.index), client, send_log));
        }
        for (host, name, args, log) in clients {
            self.spawn_app(host, &name, args, log)?;
        }
        Ok(())
    }

    fn wait_ready(&mut self, idx: usize) -> Result<()> {
        let c = &mut self.res.children[idx];
        let out = c.child.stdout.take().expect("piped");
        let mut pfd = libc::pollfd {
            fd: out.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, 10_000) };
        if r <= 0 {
            bail!("{} did not start listening within 10s", c.name);
        }
        let mut line = String::new();
        BufReader::new(out).read_line(&mut line)?;
        if line.trim() != "ready" {
            let status = c.child.wait()?;
            c.status = Some(status);
            bail!("{} failed to start ({status})", c.name);
        }
        Ok(())
    }

    fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.t0))
    }

    fn host_of(&self, addr: u32) -> Option<usize> {
        self.hosts.iter().position(|h| h.addr == addr)
    }

    /// Reads the packets waiting on host `i`'s TUN (at most a batch: epoll is level-triggered, so
    /// the rest comes next round, after any deadline that fell due) and pushes them into the link.
    fn read_tun(&mut self, i: usize, buf: &mut [u8]) -> Result<()> {
        for _ in 0..READ_BATCH {
            // SAFETY: reading into a valid buffer.
            let n = unsafe {
                libc::read(
                    self.hosts[i].fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    std::io::ErrorKind::WouldBlock => return Ok(()),
                    std::io::ErrorKind::Interrupted => continue,
                    _ => {
                        return Err(e).context(format!("reading the TUN of {}", self.hosts[i].name))
                    }
                }
            }
            let now = self.now();
            let data = buf[..n as usize].to_vec();
            let pkt = Packet::from_bytes(data);
            self.writer().pcap(i, now, pkt.clone());
            let h = &mut self.hosts[i];
            h.sent += 1;
            let side = h.side;
            let dst = (pkt.data.len() >= 20 && pkt.data[0] >> 4 == 4)
                .then(|| {
                    u32::from_be_bytes([pkt.data[16], pkt.data[17], pkt.data[18], pkt.data[19]])
                })
                .and_then(|a| self.host_of(a));
            match dst {
                Some(d) if self.hosts[d].side != side => {
                    let dir = side.dir();
                    self.link.push(now, dir, pkt);
                }
                Some(d) => {
                    // Same side: hosts on one side share the router's wired side, no link.
                    self.local += 1;
                    self.deliver(d, pkt)?;
                }
                None => self.unroutable += 1,
            }
            self.flush()?;
        }
        Ok(())
    }

    fn writer(&self) -> &writer::Writer {
        self.writer.as_ref().expect("the writer lives until finish")
    }

    fn deliver(&mut self, d: usize, pkt: Packet) -> Result<Time> {
        let h = &mut self.hosts[d];
        // The actual release time is when the packet is handed to the host: the write itself runs
        // the host's receive path (and often its reply) before it returns.
        let actual = Time(sys::monotonic_ns().saturating_sub(self.t0));
        // SAFETY: writing a valid buffer.
        let r = unsafe { libc::write(h.fd.as_raw_fd(), pkt.data.as_ptr().cast(), pkt.data.len()) };
        if r < 0 {
            self.write_errors += 1;
        } else {
            h.received += 1;
        }
        self.writer().pcap(d, actual, pkt);
        Ok(actual)
    }

    /// Delivers what the link released and logs its events.
    fn flush(&mut self) -> Result<()> {
        while let Some(o) = self.link.poll_output() {
            let dst = (o.packet.data.len() >= 20)
                .then(|| {
                    let d = &o.packet.data;
                    u32::from_be_bytes([d[16], d[17], d[18], d[19]])
                })
                .and_then(|a| self.host_of(a));
            let Some(d) = dst else {
                self.unroutable += 1;
                continue;
            };
            let actual = self.deliver(d, o.packet)?;
            self.lateness
                .record(actual.as_nanos().saturating_sub(o.at.as_nanos()));
            if self.sc.log == LogLevel::All {
                self.actual.insert(o.id, actual);
            }
        }
        self.link.drain_events(&mut self.ev_buf);
        let w = self.writer.as_ref().expect("the writer lives until finish");
        for e in self.ev_buf.drain(..) {
            let actual = match (e.kind, &e.packet) {
                (EventKind::Release, Some(p)) => self.actual.remove(&p.id),
                _ => None,
            };
            w.event(e, actual);
        }
        Ok(())
    }

    fn run_loop(&mut self) -> Result<Stop> {
        let end = Time::ZERO + self.sc.duration;
        let spin = self.opts.spin_ns;
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 32];
        let mut buf = vec![0u8; 65_536];
        let mut apps_done_at: Option<Time> = None;
        let mut failed_at: Option<Time> = None;
        let have_apps = !self.res.children.is_empty();
        // Spin budget: at most half of every 10 ms window is spent spinning. A SCHED_FIFO thread
        // that spins before deadlines 120 us apart (100 Mbit/s) is busy nearly all the time and
        // meets the kernel's real-time throttling (`sched_rt_runtime_us`: 95 % of each second),
        // which stalls it for 50 ms: measured as a 50 ms p99.9 lateness, 5-9 ms without it.
        const SPIN_WINDOW: u64 = 10_000_000;
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
            // Housekeeping deadline while winding down.
            let mut dl = end;
            if let Some(t) = self.link.poll_timeout() {
                dl = dl.min(t);
            }
            if apps_done_at.is_some() || failed_at.is_some() {
                dl = dl.min(now + lasthop_core::Dur::from_millis(10));
            }
            let timeout = if dl <= now {
                0
            } else if dl.as_nanos() - now.as_nanos() > spin || !may_spin {
                let wake = if may_spin {
                    dl.as_nanos() - spin
                } else {
                    dl.as_nanos()
                };
                if !may_spin {
                    self.spin_capped += 1;
                }
                self.timer.arm_abs(self.t0 + wake)?;
                self.sleeps += 1;
                -1
            } else {
                self.spins += 1;
                spinning_since = Some(now.as_nanos());
                0
            };
            // What the last iteration captured and logged goes to the writer in one message.
            self.writer().send_batch();
            let n = self.epoll.wait(&mut evs, timeout)?;
            let mut stop = None;
            for ev in evs.iter().take(n) {
                let token = ev.u64;
                match token {
                    TOKEN_TIMER => self.timer.clear(),
                    TOKEN_SIGNAL => {
                        if let Some(s) = sys::read_signal(self.sigfd) {
                            stop = Some(Stop::Signal(s));
                        }
                    }
                    t if t >= TOKEN_CHILD => {
                        let idx = (t - TOKEN_CHILD) as usize;
                        let now = self.now();
                        let c = &mut self.res.children[idx];
                        if let Ok(Some(s)) = c.child.try_wait() {
                            c.status = Some(s);
                            let _ = self.epoll.del(c.pidfd.as_raw_fd());
                            if self.opts.verbose {
                                eprintln!("{} exited at {now}: {s}", c.name);
                            }
                            if !s.success() && failed_at.is_none() {
                                failed_at = Some(now);
                            }
                        }
                    }
                    i => self.read_tun(i as usize, &mut buf)?,
                }
            }
            let now = self.now();
            if self.link.poll_timeout().is_some_and(|t| t <= now) {
                self.link.handle_timeout(now);
            }
            self.flush()?;
            if let Some(s) = stop {
                return Ok(s);
            }
            if now >= end {
                return Ok(Stop::Duration);
            }
            if let Some(f) = failed_at {
                if now >= f + lasthop_core::Dur::from_millis(500) {
                    return Ok(Stop::AppFailed);
                }
            }
            if have_apps
                && apps_done_at.is_none()
                && self.res.children.iter().all(|c| c.status.is_some())
            {
                apps_done_at = Some(now);
            }
            if let Some(t) = apps_done_at {
                let idle = self.link.is_empty();
                if (idle && now >= t + lasthop_core::Dur::from_millis(100))
                    || now >= t + lasthop_core::Dur::from_secs(5)
                {
                    return Ok(if failed_at.is_some() {
                        Stop::AppFailed
                    } else {
                        Stop::FlowsDone
                    });
                }
            }
        }
    }

    fn finish(mut self, stop: Stop) -> Result<RunOutputs> {
        let end = self.now();
        self.res.stop_children();
        let mut failures = vec![];
        let mut app_logs = vec![];
        for c in &self.res.children {
            match c.status {
                Some(s) if s.success() => {}
                Some(s) => failures.push(format!("{}: {s}", c.name)),
                None => failures.push(format!("{}: did not finish", c.name)),
            }
            if c.log.exists() {
                app_logs.push(c.log.clone());
            }
        }
        let lat = self.lateness.summary();
        let out = &self.opts.out_dir;
        let mut pcaps = vec![];
        let mut hosts_csv =
            String::from("host,side,address,namespace,pcap,packets_sent,packets_received\n");
        for (h, ns) in self.hosts.drain(..).zip(&self.res.namespaces) {
            hosts_csv += &format!(
                "{},{},{},{ns},{}.pcap,{},{}\n",
                h.name,
                h.side,
                Ipv4Addr::from(h.addr),
                h.name,
                h.sent,
                h.received
            );
            pcaps.push((h.name, Ipv4Addr::from(h.addr), h.pcap_path));
        }
        AtomicFile::write_all_to(out.join("hosts.csv"), hosts_csv.as_bytes())?;
        let events = out.join("events.csv");
        if let Some(w) = self.writer.take() {
            w.finish()
                .context("writing the captures and the event log")?;
        }
        let mut s = String::new();
        let sc = self.sc;
        s += &format!("scenario = {:?}\nrun_id = {:?}\n", sc.name, self.run_id);
        s += &format!(
            "seed = {}\nreplication = {}\n",
            self.opts.seed.unwrap_or(sc.seed),
            self.opts.replication.unwrap_or(sc.replication)
        );
        s += &format!("stop = {:?}\nend_ns = {}\n", stop.name(), end.as_nanos());
        s += &format!(
            "spin_ns = {}\nrt_priority = {}\nsnaplen = {}\n",
            self.opts.spin_ns, self.opts.rt_priority, self.opts.snaplen
        );
        s += &format!(
            "unroutable = {}\nwrite_errors = {}\nsame_side = {}\nsleeps = {}\nspins = {}\nspin_capped = {}\n",
            self.unroutable, self.write_errors, self.local, self.sleeps, self.spins, self.spin_capped
        );
        s += &format!(
            "app_failures = [{}]\n",
            failures
                .iter()
                .map(|f| format!("{f:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!(
            "\n[lateness]\nreleases = {}\np50_ns = {}\np99_ns = {}\np999_ns = {}\nmax_ns = {}\nover_1ms = {}\n",
            lat.releases, lat.p50, lat.p99, lat.p999, lat.max, lat.over_1ms
        );
        for d in Dir::BOTH {
            let st = self.link.stats(d);
            s += &format!(
                "\n[link.{d}]\narrived = {}\nreleased = {}\ndrops_queue = {}\ndrops_red = {}\ndrops_error = {}\ndrops_mtu = {}\nmarks = {}\nerrors = {}\n",
                st.arrived, st.released, st.drops_queue, st.drops_red, st.drops_error, st.drops_mtu, st.marks, st.errors
            );
        }
        AtomicFile::write_all_to(out.join("summary.toml"), s.as_bytes())?;
        let _ = std::io::stderr().flush();
        Ok(RunOutputs {
            run_id: self.run_id.clone(),
            out_dir: out.clone(),
            pcaps,
            events,
            app_logs,
            lateness: lat,
            stop,
            app_failures: failures,
            end,
        })
    }
}

/// Re-exported for the CLI: remove what killed runs left behind.
pub fn cleanup(force_unknown: bool) -> netns::CleanupReport {
    netns::cleanup(force_unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_about_simulation_only_keys_and_oversized_mtu() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("l.toml"), "mtu = \"576B\"\n").unwrap();
        let sc = Scenario::from_str_in(
            r#"
duration = "1s"
link = "l.toml"
[hosts.a]
side = "fixed"
access_delay = "5ms"
mtu = "1500B"
[hosts.a.tcp]
sack = true
[hosts.b]
side = "mobile"
"#,
            d.path(),
        )
        .unwrap();
        let w = warnings(&sc).join("\n");
        assert!(w.contains("hosts.a: access_rate and access_delay"), "{w}");
        assert!(!w.contains("hosts.a.tcp"), "{w}");
        assert!(w.contains("hosts.a.mtu: 1500B"), "{w}");
        assert!(!w.contains("hosts.b"), "{w}");
    }

    #[test]
    fn route_options_in_ip_syntax() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("l.toml"), "").unwrap();
        let sc = Scenario::from_str_in(
            "duration = \"1s\"\nlink = \"l.toml\"\n[hosts.a]\nside = \"fixed\"\n[hosts.a.route]\ninitcwnd = 2\ninitrwnd = 4\nrto_min = \"200ms\"\nquickack = true\n",
            d.path(),
        )
        .unwrap();
        assert_eq!(
            route_options(&sc.hosts[0]),
            " initcwnd 2 initrwnd 4 rto_min 200ms quickack 1"
        );
    }
}
