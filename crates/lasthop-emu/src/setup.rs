//! Everything before the real-time loop, and its undoing: the checks, the namespaces with their
//! sysctls, TUN devices and routes, and the workload programs.
//!
//! All of it is held by [`Resources`], whose `Drop` removes it (programs, devices, namespaces,
//! registry entry) however the run ends: normally, with an error, or by a signal.

use crate::netns::{self, Registration};
use crate::{sys, EmuOptions, TXQUEUELEN};
use anyhow::{bail, Context, Result};
use lasthop_scenario::{Mode, Scenario, Side};
use nix::sys::signalfd::SignalFd;
use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

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
    for h in &sc.hosts {
        for (k, _) in &h.sysctl {
            let path = sysctl_path(k);
            if !path.exists() {
                bail!(
                    "hosts.{}.sysctl.{k}: this kernel has no sysctl net.ipv4.{k} ({} is missing)",
                    h.name,
                    path.display()
                );
            }
        }
    }
    // What emulation refuses (a flow's `tcp` keys Linux has no socket option for), then the
    // congestion controls this machine lets a new namespace use (its allowed list, which the
    // emulator does not change: the error names the command that does).
    sc.check_mode(Mode::Emu)?;
    let read = |n: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/{n}"))
            .with_context(|| format!("reading /proc/sys/net/ipv4/{n}"))
    };
    let (allowed, available) = (
        read("tcp_allowed_congestion_control")?,
        read("tcp_available_congestion_control")?,
    );
    let allowed: Vec<&str> = allowed.split_whitespace().collect();
    let available: Vec<&str> = available.split_whitespace().collect();
    sc.check_machine(&allowed, &available)?;
    Ok(())
}

/// Settings that will drop packets or do nothing in emulation, as lines for the user: a host
/// MTU above the link's, and [`Scenario::check_here`]'s warnings (a host's `tcp` key whose Linux
/// counterpart is not set to the same value, an AQM that never sees a queue, ...; docs/modes.md).
pub fn warnings(sc: &Scenario) -> Vec<String> {
    let mut w: Vec<String> = sc
        .check_here(Mode::Emu)
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.to_string().trim_start_matches("warning: ").to_string())
        .collect();
    for h in &sc.hosts {
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

/// Fails when a stop signal came: setup takes seconds, and a Ctrl-C then must not wait for the
/// loop (the signals are blocked, so only the signalfd tells).
pub fn check_signal(sigfd: &SignalFd) -> Result<()> {
    if let Some(s) = sys::read_signal(sigfd) {
        return Err(Interrupted(s).into());
    }
    Ok(())
}

/// A stop signal (its number) ended the run during its setup; what the setup made is removed.
/// The command ends with 128 + the signal, as a shell reports a process the signal killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stopped by signal {0} during setup")]
pub struct Interrupted(pub i32);

/// A workload program the emulator started.
pub struct AppChild {
    pub name: String,
    pub child: Child,
    /// Readable when the program exits: the loop waits on it.
    pub pidfd: OwnedFd,
    pub status: Option<ExitStatus>,
    pub log: PathBuf,
}

/// Everything a run created; dropping it removes all of it.
pub struct Resources {
    reg: Option<Registration>,
    /// The hosts' namespaces, in host order.
    pub namespaces: Vec<String>,
    /// The TUN devices (each lives as long as its fd), in host order.
    pub tuns: Vec<OwnedFd>,
    pub children: Vec<AppChild>,
    verbose: bool,
}

impl Resources {
    /// Registers the run (in `/run/lasthop`, before anything is created, so that
    /// `lasthop cleanup` can tell what is ours).
    pub fn register(run_id: &str, verbose: bool) -> Result<Resources> {
        Ok(Resources {
            reg: Some(Registration::create(run_id)?),
            namespaces: vec![],
            tuns: vec![],
            children: vec![],
            verbose,
        })
    }

    /// SIGTERM to every program still running, then SIGKILL to those left after 1 s.
    pub fn stop_children(&mut self) {
        for c in &mut self.children {
            if c.status.is_none() {
                if let Ok(Some(s)) = c.child.try_wait() {
                    c.status = Some(s);
                } else {
                    let _ = sys::kill(c.child.id(), rustix::process::Signal::TERM);
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
                lasthop_core::say!("warning: removing namespace {ns}: {e:#}");
            } else if self.verbose {
                lasthop_core::say!("removed namespace {ns}");
            }
        }
        if let Some(r) = self.reg.take() {
            r.remove();
        }
    }
}

/// A host as the loop sees it: its address, side and capture; its TUN is `Resources::tuns[i]`.
pub struct Host {
    pub name: String,
    pub side: Side,
    pub address: Ipv4Addr,
    pub pcap_path: PathBuf,
}

/// Creates each host: its namespace (registered first), IPv6 off and its sysctls, its TUN device,
/// then addresses, MTU, transmit queue and routes across the link through `ip -batch`.
pub fn create_hosts(
    sc: &Scenario,
    opts: &EmuOptions,
    run_id: &str,
    res: &mut Resources,
    sigfd: &SignalFd,
) -> Result<Vec<Host>> {
    let dev = netns::dev_name(run_id);
    let mut hosts = vec![];
    for h in &sc.hosts {
        check_signal(sigfd)?;
        let ns = netns::ns_name(run_id, &h.name);
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
        res.tuns.push(fd);
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
        if opts.verbose {
            lasthop_core::say!(
                "host {} ({} side): namespace {ns}, {dev} {} mtu {}",
                h.name,
                h.side,
                h.address,
                h.mtu
            );
        }
        hosts.push(Host {
            name: h.name.clone(),
            side: h.side,
            address: h.address,
            pcap_path: lasthop_core::layout::RunFiles::new(&opts.out_dir).pcap(&h.name),
        });
    }
    Ok(hosts)
}

fn sysctl_path(key: &str) -> PathBuf {
    Path::new("/proc/sys/net/ipv4").join(key.replace('.', "/"))
}

/// The host's route options in `ip route` syntax, each with a leading space.
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

/// Starts the workload: for each flow its server program in the server host's namespace
/// (waiting until it says `ready`, i.e. listens), then every client program in its host's
/// namespace, which sleeps until the flow's start. Each application names its own programs and
/// arguments (`lasthop_apps::AppParams::programs`); their logs are `flow<i>-recv.csv` and
/// `flow<i>-send.csv`. `t0` is the run's epoch (`CLOCK_MONOTONIC` ns), shared with the
/// programs' logs.
pub fn start_workload(
    sc: &Scenario,
    opts: &EmuOptions,
    t0: u64,
    res: &mut Resources,
    sigfd: &SignalFd,
) -> Result<()> {
    let mut clients = vec![];
    for f in &sc.flows {
        let logs =
            ["recv", "send"].map(|end| opts.out_dir.join(format!("flow{}-{end}.csv", f.index)));
        let [server, mut client] = f.app.programs(&f.ctx(sc), t0, [&logs[0], &logs[1]]);
        // The flow's `tcp` table acts on the client's sockets, as a socket option acts on the
        // socket it is set on (the scenario refuses keys the application's own options repeat).
        client.extend(f.socket_options()?.to_args());
        let [recv_log, send_log] = logs;
        let name = format!("flow{}-recv", f.index);
        let mut c = spawn_app(opts, &res.namespaces[f.to], name, server, recv_log)?;
        let ready = wait_ready(&mut c);
        res.children.push(c);
        ready?;
        check_signal(sigfd)?;
        clients.push((f.from, format!("flow{}-send", f.index), client, send_log));
    }
    for (host, name, args, log) in clients {
        let c = spawn_app(opts, &res.namespaces[host], name, args, log)?;
        res.children.push(c);
    }
    Ok(())
}

/// Spawns `EXE app ARGS` inside the namespace `ns`; the child dies with the emulator.
fn spawn_app(
    opts: &EmuOptions,
    ns: &str,
    name: String,
    args: Vec<String>,
    log: PathBuf,
) -> Result<AppChild> {
    let nsfd = sys::open_netns(&Path::new(netns::NETNS_DIR).join(ns))?;
    let mut cmd = Command::new(&opts.exe);
    cmd.arg("app")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    sys::spawn_in_netns(&mut cmd, nsfd.as_fd());
    let child = cmd
        .spawn()
        .with_context(|| format!("starting {} app {}", opts.exe.display(), args.join(" ")))?;
    // Only now: the child's pre-exec hook uses it.
    drop(nsfd);
    let pidfd = sys::pidfd_open(child.id())?;
    if opts.verbose {
        lasthop_core::say!("started {name} in {ns}: app {}", args.join(" "));
    }
    Ok(AppChild {
        name,
        child,
        pidfd,
        status: None,
        log,
    })
}

/// Waits (10 s at most) for a receiver's `ready` line on its stdout.
fn wait_ready(c: &mut AppChild) -> Result<()> {
    let out = c.child.stdout.take().expect("piped");
    if !sys::wait_readable(out.as_fd(), 10_000)? {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_about_an_oversized_mtu_only() {
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
        assert!(
            !w.contains("access_delay"),
            "the emulator has access links: {w}"
        );
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
