//! What the CLI and emulator tests share: running `lasthop`, and whether this machine can emulate.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether the tests that need the real thing (root, `/dev/net/tun`, iproute2) can run here.
///
/// When they cannot, the test is skipped: it says so on the terminal (written past the test
/// harness's capture, so the skip is seen, not only a pass) and returns. With
/// `LASTHOP_ROOT_TESTS=1` in the environment (`.ci/run` sets it) a skip is a failure instead:
/// where the emulator must be tested, a test that cannot run must not pass.
#[allow(dead_code)] // each test binary uses what it needs
pub fn can_emulate(test: &str) -> bool {
    let mut missing = Vec::new();
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root");
    }
    if !Path::new("/dev/net/tun").exists() {
        missing.push("/dev/net/tun");
    }
    if !Command::new("ip")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        missing.push("iproute2 (`ip`)");
    }
    runs_or_skips(test, &missing, "the emulator's namespaces and TUN devices")
}

/// `true` when nothing is `missing`; else the test is skipped, saying why (past the harness's
/// capture), or fails under `LASTHOP_ROOT_TESTS=1`.
#[allow(dead_code)]
pub fn runs_or_skips(test: &str, missing: &[impl AsRef<str>], what: &str) -> bool {
    if missing.is_empty() {
        return true;
    }
    let missing: Vec<&str> = missing.iter().map(AsRef::as_ref).collect();
    let why = format!("{test}: needs {} ({what})", missing.join(", "));
    if std::env::var("LASTHOP_ROOT_TESTS").is_ok_and(|v| v == "1") {
        panic!("LASTHOP_ROOT_TESTS=1 but {why}");
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {why}; set LASTHOP_ROOT_TESTS=1 to make this a failure"
    );
    false
}

/// The network namespaces whose name starts with `prefix`.
#[allow(dead_code)]
pub fn namespaces(prefix: &str) -> Vec<String> {
    let o = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

/// Runs `lasthop ARGS` and returns what it did.
#[allow(dead_code)] // each test binary uses what it needs
pub fn lasthop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lasthop"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `lasthop ARGS`, asserts it failed with a message (not a panic), returns stderr.
#[allow(dead_code)]
pub fn lasthop_err(args: &[&str]) -> String {
    let o = lasthop(args);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "{args:?} succeeded: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

/// Runs `lasthop ARGS`, asserts it succeeded (else shows its output), and returns its stdout.
#[allow(dead_code)] // each test binary uses what it needs
pub fn lasthop_ok(args: &[&str]) -> String {
    let o = lasthop(args);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

/// A running or finished `lasthop emu`; dropping it stops the emulator (SIGTERM: it removes what
/// it made) and runs `lasthop cleanup`, also when the test fails.
#[allow(dead_code)]
pub struct EmuRun {
    pub child: Option<Child>,
}

#[allow(dead_code)]
impl EmuRun {
    /// Starts `lasthop emu SPEC --out OUT EXTRA...` with its output piped.
    pub fn start(spec: &Path, out: &Path, extra: &[&str]) -> EmuRun {
        let child = Command::new(env!("CARGO_BIN_EXE_lasthop"))
            .arg("emu")
            .arg(spec)
            .arg("--out")
            .arg(out)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start lasthop emu");
        EmuRun { child: Some(child) }
    }

    /// Waits for the emulator to end; past `limit` stops it and fails with its output.
    pub fn wait(mut self, limit: Duration) -> Output {
        let mut child = self.child.take().unwrap();
        let t = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if t.elapsed() > limit {
                // SAFETY: plain syscall on our child.
                let _ = unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                let out = child.wait_with_output().unwrap();
                panic!(
                    "lasthop emu took longer than {limit:?}\nstdout:\n{}\nstderr:\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    }
}

impl Drop for EmuRun {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            if c.try_wait().ok().flatten().is_none() {
                // SAFETY: plain syscall on our child.
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                let t = Instant::now();
                while c.try_wait().ok().flatten().is_none() && t.elapsed() < Duration::from_secs(5)
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _guard = REAPING.lock();
        let _ = Command::new(env!("CARGO_BIN_EXE_lasthop"))
            .arg("cleanup")
            .output();
    }
}

/// Held by a test that checks what the next run reaps after a kill -9, so that no other test's
/// `lasthop cleanup` (in [`EmuRun`]'s drop) removes the dead run's namespaces first.
#[allow(dead_code)]
pub static REAPING: std::sync::Mutex<()> = std::sync::Mutex::new(());
