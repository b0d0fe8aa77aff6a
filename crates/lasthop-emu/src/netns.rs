//! Network namespaces and the run registry.
//!
//! Every name the emulator creates carries the prefix `lh-` and the run id: namespace
//! `lh-<runid>-<host>`, TUN device `lh-<runid>` inside it. Before it creates anything a run
//! registers itself in `/run/lasthop/<runid>` (its pid and process start time, and each namespace
//! as it is made), so that `lasthop cleanup` can tell a dead run's leftovers from a live run's and
//! never touches a namespace no registered run created.

use crate::sys;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const PREFIX: &str = "lh-";
pub const REGISTRY: &str = "/run/lasthop";
pub const NETNS_DIR: &str = "/run/netns";

pub fn ns_name(run_id: &str, host: &str) -> String {
    format!("{PREFIX}{run_id}-{host}")
}

pub fn dev_name(run_id: &str) -> String {
    format!("{PREFIX}{run_id}")
}

pub fn new_run_id() -> String {
    format!("{:06x}", sys::random_u64() & 0xff_ffff)
}

/// The run id in a name made by [`ns_name`], if it is one.
pub fn run_id_of(ns: &str) -> Option<&str> {
    let rest = ns.strip_prefix(PREFIX)?;
    let (id, host) = rest.split_once('-')?;
    (id.len() == 6 && id.bytes().all(|b| b.is_ascii_hexdigit()) && !host.is_empty()).then_some(id)
}

/// Runs `ip ARGS`, failing with its stderr.
pub fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run `ip` (iproute2 is needed)")?;
    if !out.status.success() {
        bail!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The packets device `dev` of namespace `ns` dropped on transmit (`ip -s -j link`'s
/// `stats64.tx.dropped`): a TUN's, those beyond its queue while the emulator did not read it.
/// `None` if `ip` or its output fails.
pub fn tx_dropped(ns: &str, dev: &str) -> Option<u64> {
    let out = Command::new("ip")
        .args(["-n", ns, "-s", "-j", "link", "show", "dev", dev])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v.get(0)?
        .get("stats64")?
        .get("tx")?
        .get("dropped")?
        .as_u64()
}

/// Runs `ip -n NS -batch -` with `lines` on its stdin.
pub fn ip_batch(ns: &str, lines: &[String]) -> Result<()> {
    let mut child = Command::new("ip")
        .args(["-n", ns, "-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run `ip` (iproute2 is needed)")?;
    {
        let mut stdin = child.stdin.take().expect("piped");
        for l in lines {
            writeln!(stdin, "{l}")?;
        }
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "configuring namespace {ns} failed: {}\n  commands were:\n    {}",
            String::from_utf8_lossy(&out.stderr).trim(),
            lines.join("\n    ")
        );
    }
    Ok(())
}

/// Runs `f` on a helper thread that has entered the namespace `ns` (the calling thread stays
/// where it is). File descriptors opened there (TUN devices, sockets) keep their namespace.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let path = Path::new(NETNS_DIR).join(ns);
    std::thread::scope(|s| {
        s.spawn(move || {
            let fd = sys::open_netns(&path).with_context(|| format!("{}", path.display()))?;
            sys::setns_net(std::os::fd::AsFd::as_fd(&fd))
                .with_context(|| format!("setns into {ns}"))?;
            f()
        })
        .join()
        .map_err(|_| anyhow::anyhow!("helper thread for namespace {ns} panicked"))?
    })
}

/// One run's entry in the registry.
pub struct Registration {
    path: PathBuf,
    file: std::fs::File,
}

impl Registration {
    /// Registers the calling process as run `run_id`.
    pub fn create(run_id: &str) -> Result<Registration> {
        std::fs::create_dir_all(REGISTRY).with_context(|| format!("creating {REGISTRY}"))?;
        let path = Path::new(REGISTRY).join(run_id);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("registering run {run_id} in {}", path.display()))?;
        let pid = std::process::id();
        let start = sys::process_start_time(pid).unwrap_or(0);
        writeln!(file, "pid={pid}\nstart={start}")?;
        file.sync_all()?;
        Ok(Registration { path, file })
    }

    /// Records a namespace before it is created.
    pub fn add_namespace(&mut self, ns: &str) -> Result<()> {
        writeln!(self.file, "ns={ns}")?;
        self.file.sync_all()?;
        Ok(())
    }

    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the registry says about a run.
#[derive(Debug, PartialEq, Eq)]
pub enum RunState {
    Alive(u32),
    Dead,
    /// No registry entry: not made by a run of this tool (or its registry was removed).
    Unknown,
}

pub fn run_state(run_id: &str) -> RunState {
    let Ok(text) = std::fs::read_to_string(Path::new(REGISTRY).join(run_id)) else {
        return RunState::Unknown;
    };
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let (Some(pid), start) = (field("pid"), field("start")) else {
        return RunState::Dead;
    };
    let pid = pid as u32;
    match sys::process_start_time(pid) {
        Some(s) if start.is_none_or(|st| st == s || st == 0) => RunState::Alive(pid),
        _ => RunState::Dead,
    }
}

/// Namespaces named like ours (`lh-<6 hex>-<host>`).
pub fn our_namespaces() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(NETNS_DIR)
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| run_id_of(n).is_some())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Kills what still runs in a namespace and deletes it.
pub fn delete_namespace(ns: &str) -> Result<()> {
    if run_id_of(ns).is_none() {
        bail!("refusing to delete {ns:?}: not a lasthop namespace");
    }
    if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Ok(pid) = pid.parse::<u32>() {
                if pid != std::process::id() {
                    let _ = sys::kill(pid, rustix::process::Signal::KILL);
                }
            }
        }
    }
    match ip(&["netns", "del", ns]) {
        // Someone else (a concurrent cleanup) removed it first: it is gone, as wanted.
        Err(_) if !Path::new(NETNS_DIR).join(ns).exists() => Ok(()),
        r => r,
    }
}

/// What `lasthop cleanup` did.
#[derive(Debug, Default)]
pub struct CleanupReport {
    pub removed: Vec<String>,
    pub kept_live: Vec<String>,
    pub kept_unknown: Vec<String>,
    pub registry_removed: Vec<String>,
    pub errors: Vec<String>,
}

/// Removes the namespaces (and the processes in them) of runs that are no longer alive, and
/// their registry entries. With `force_unknown`, also `lh-XXXXXX-*` namespaces no registry entry
/// explains. Live runs are never touched.
pub fn cleanup(force_unknown: bool) -> CleanupReport {
    let mut rep = CleanupReport::default();
    for ns in our_namespaces() {
        let id = run_id_of(&ns).expect("filtered");
        match run_state(id) {
            RunState::Alive(_) => rep.kept_live.push(ns),
            RunState::Unknown if !force_unknown => rep.kept_unknown.push(ns),
            _ => match delete_namespace(&ns) {
                Ok(()) => rep.removed.push(ns),
                Err(e) => rep.errors.push(format!("{ns}: {e:#}")),
            },
        }
    }
    if let Ok(rd) = std::fs::read_dir(REGISTRY) {
        for e in rd.flatten() {
            let Ok(id) = e.file_name().into_string() else {
                continue;
            };
            let dead = run_state(&id) == RunState::Dead
                && !our_namespaces()
                    .iter()
                    .any(|n| run_id_of(n) == Some(id.as_str()));
            if dead && std::fs::remove_file(e.path()).is_ok() {
                rep.registry_removed.push(id);
            }
        }
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(ns_name("0a1b2c", "server"), "lh-0a1b2c-server");
        assert_eq!(run_id_of("lh-0a1b2c-server"), Some("0a1b2c"));
        assert_eq!(run_id_of("lh-0a1b2c-"), None);
        assert_eq!(run_id_of("lh-xyz-server"), None);
        assert_eq!(run_id_of("other-0a1b2c-server"), None);
        assert!(dev_name("0a1b2c").len() < 16);
        let id = new_run_id();
        assert_eq!(id.len(), 6);
        assert_eq!(run_id_of(&ns_name(&id, "h")), Some(id.as_str()));
    }

    #[test]
    fn start_time_of_self() {
        assert!(sys::process_start_time(std::process::id()).is_some());
    }
}
