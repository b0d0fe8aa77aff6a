//! The Linux calls the emulator needs, as safe functions: the monotonic clock, epoll, timerfd,
//! signalfd, pidfd, setns, TUN devices, timer slack, real-time scheduling.
//!
//! Most are `rustix` (signalfd and the signal mask: `nix`). The few calls neither offers
//! (`TUNSETIFF`, `sched_setscheduler`, the pre-exec hook that moves a child into a namespace) are
//! here too, as the only `unsafe` blocks of the crate outside `app.rs` (the workload programs,
//! moving to their own crate); each says why it is sound.

use nix::sys::signal::{SigSet, Signal as NixSignal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use rustix::event::epoll;
use rustix::fs::{Mode, OFlags};
use rustix::process::{Pid, PidfdFlags, Signal};
use rustix::thread::LinkNameSpaceType;
use rustix::time::{
    ClockId, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec,
};
use std::io;
use std::num::NonZeroU64;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// `CLOCK_MONOTONIC` in nanoseconds. The same clock in every network namespace, so the apps in
/// the namespaces and the emulator share it.
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timespec(ns: u64) -> Timespec {
    Timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reads `ns` (absolute).
pub fn sleep_until_monotonic(ns: u64) {
    let ts = timespec(ns);
    while let Err(rustix::io::Errno::INTR) =
        rustix::thread::clock_nanosleep_absolute(ClockId::Monotonic, &ts)
    {}
}

/// The thread's timer slack: how late the kernel may fire its timers to batch wakeups.
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    rustix::thread::set_current_timer_slack(NonZeroU64::new(ns))?;
    Ok(())
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Reads one packet (or anything) from a non-blocking fd: `Ok(None)` when nothing is waiting.
pub fn read_nonblocking(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Option<usize>> {
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(n) => return Ok(Some(n)),
            Err(rustix::io::Errno::AGAIN) => return Ok(None),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::io::write(fd, buf)?)
}

/// Waits up to `timeout_ms` for `fd` to become readable; false on timeout.
pub fn wait_readable(fd: BorrowedFd<'_>, timeout_ms: u64) -> io::Result<bool> {
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let t = timespec(timeout_ms * 1_000_000);
    Ok(rustix::event::poll(&mut fds, Some(&t))? > 0)
}

/// An epoll instance (level-triggered, readable events) whose events carry a `u64` token.
pub struct Epoll(OwnedFd);

/// One ready event, as [`Epoll::wait`] fills it.
pub type EpollEvent = epoll::Event;

pub const EMPTY_EVENT: EpollEvent = epoll::Event {
    flags: epoll::EventFlags::empty(),
    data: epoll::EventData::new_u64(0),
};

/// The token of a ready event.
pub fn token(ev: &EpollEvent) -> u64 {
    // `Event` is packed on x86_64: copy the field out rather than borrow it.
    let data = ev.data;
    data.u64()
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        Ok(Epoll(epoll::create(epoll::CreateFlags::CLOEXEC)?))
    }

    pub fn add(&self, fd: impl AsFd, token: u64) -> io::Result<()> {
        epoll::add(
            &self.0,
            fd,
            epoll::EventData::new_u64(token),
            epoll::EventFlags::IN,
        )?;
        Ok(())
    }

    pub fn del(&self, fd: impl AsFd) -> io::Result<()> {
        epoll::delete(&self.0, fd)?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (`None`: forever, `Some(0)`: poll) and fills `events` with the
    /// ones that are ready; returns how many.
    pub fn wait(&self, events: &mut [EpollEvent], timeout_ms: Option<u64>) -> io::Result<usize> {
        let t = timeout_ms.map(|ms| timespec(ms * 1_000_000));
        match epoll::wait(&self.0, events, t.as_ref()) {
            Ok(n) => Ok(n),
            Err(rustix::io::Errno::INTR) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }
}

/// A `CLOCK_MONOTONIC` timerfd armed with absolute deadlines.
pub struct TimerFd(OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        Ok(TimerFd(rustix::time::timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?))
    }

    /// Arms the timer to fire when `CLOCK_MONOTONIC` reaches `abs_ns`.
    pub fn arm_abs(&self, abs_ns: u64) -> io::Result<()> {
        let spec = Itimerspec {
            it_interval: timespec(0),
            // 0 would disarm the timer.
            it_value: timespec(abs_ns.max(1)),
        };
        rustix::time::timerfd_settime(&self.0, TimerfdTimerFlags::ABSTIME, &spec)?;
        Ok(())
    }

    /// Consumes an expiry (nothing to consume is fine).
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&self.0, &mut buf);
    }
}

impl AsFd for TimerFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// The signals that end a run cleanly.
pub const STOP_SIGNALS: [NixSignal; 3] = [NixSignal::SIGINT, NixSignal::SIGTERM, NixSignal::SIGHUP];

fn stop_sigset() -> SigSet {
    let mut set = SigSet::empty();
    for s in STOP_SIGNALS {
        set.add(s);
    }
    set
}

/// Blocks the stop signals in the calling thread (threads created later inherit the mask) and
/// returns a signalfd that reports them, with the mask the thread had before. The workload
/// programs get the usual mask back ([`spawn_in_netns`]).
pub fn block_stop_signals() -> io::Result<(SignalFd, SigSet)> {
    let set = stop_sigset();
    let old = set.thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK)?;
    let fd = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
    Ok((fd, old))
}

/// Gives the thread back the mask it had before [`block_stop_signals`] (after the run, so a
/// second Ctrl-C works as usual; a caller that blocked the stop signals itself, such as
/// `lasthop emu` for the length of the command, keeps them blocked).
pub fn restore_signal_mask(old: &SigSet) {
    let _ = old.thread_set_mask();
}

/// Sends signal `sig` to this process (not only to the calling thread: any thread that waits
/// for it may take it).
pub fn signal_self(sig: i32) {
    if let Ok(s) = NixSignal::try_from(sig) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), s);
    }
}

/// Reads one pending signal from a signalfd.
pub fn read_signal(fd: &SignalFd) -> Option<i32> {
    fd.read_signal().ok().flatten().map(|i| i.ssi_signo as i32)
}

/// A pidfd: readable when the process exits.
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    let pid = Pid::from_raw(pid as i32).ok_or_else(|| io::Error::other("pid 0"))?;
    Ok(rustix::process::pidfd_open(pid, PidfdFlags::empty())?)
}

pub fn kill(pid: u32, sig: Signal) -> io::Result<()> {
    let pid = Pid::from_raw(pid as i32).ok_or_else(|| io::Error::other("pid 0"))?;
    rustix::process::kill_process(pid, sig)?;
    Ok(())
}

/// Opens a network namespace handle (`/run/netns/NAME`).
pub fn open_netns(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Moves the calling thread into the network namespace `fd`.
pub fn setns_net(fd: BorrowedFd<'_>) -> io::Result<()> {
    rustix::thread::move_into_link_name_space(fd, Some(LinkNameSpaceType::Network))?;
    Ok(())
}

/// Makes `cmd`, when spawned, start in the network namespace `netns` (an open
/// `/run/netns/NAME`, which must stay open until the spawn), die with the emulator
/// (`PR_SET_PDEATHSIG` SIGKILL), and have the usual signal mask and dispositions: the emulator
/// blocks its stop signals (it reads them from a signalfd), and SIGTERM must end the program.
pub fn spawn_in_netns(cmd: &mut Command, netns: BorrowedFd<'_>) {
    // Kept as a raw number: the closure outlives the borrow, and runs before `Command::spawn`
    // returns, while the caller still holds the fd open.
    let raw = std::os::fd::AsRawFd::as_raw_fd(&netns);
    // SAFETY: `pre_exec` runs the closure in the child between fork and exec, where only
    // async-signal-safe work is allowed. It allocates nothing and takes no lock: `setns`,
    // `prctl`, `pthread_sigmask` and `signal` are plain system calls (async-signal-safe by
    // POSIX and the man pages), `BorrowedFd::borrow_raw` only wraps the number, and the fd is
    // valid in the child (inherited; the caller keeps it open across the spawn).
    unsafe {
        cmd.pre_exec(move || {
            let fd = BorrowedFd::borrow_raw(raw);
            rustix::thread::move_into_link_name_space(fd, Some(LinkNameSpaceType::Network))?;
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            SigSet::empty().thread_set_mask()?;
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as `TUNSETIFF` reads it: the name, then the flags (a union of 24 bytes).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Creates the TUN device `name` in the calling thread's network namespace, without packet info
/// and without a virtio-net header (so no offloads: the kernel hands over real, MTU-sized IP
/// packets). Non-blocking. The device lives as long as the returned fd.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::other(format!(
            "device name {name:?} is too long"
        )));
    }
    let fd = rustix::fs::open(
        "/dev/net/tun",
        OFlags::RDWR | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| io::Error::new(io::Error::from(e).kind(), format!("/dev/net/tun: {e}")))?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    // The name is shorter than IFNAMSIZ, so it stays NUL-terminated.
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq` (40 bytes, `IfReq` has its layout)
    // through the pointer, which is valid and exclusive for the call; `fd` is an open
    // /dev/net/tun. (rustix has no TUN wrapper, and its generic `ioctl` is just as unsafe.)
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            TUNSETIFF,
            &mut req as *mut IfReq,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")));
    }
    Ok(fd)
}

/// Random bytes from the kernel.
pub fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    match rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty()) {
        Ok(8) => u64::from_ne_bytes(b),
        _ => monotonic_ns() ^ (u64::from(std::process::id()) << 32),
    }
}

/// The start time of a process (field 22 of `/proc/PID/stat`, in clock ticks since boot): with
/// the pid it names a process even after its pid is reused.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Puts the calling thread under `SCHED_FIFO` at `priority` (1..99), with `SCHED_RESET_ON_FORK`
/// so that the programs it starts run under the normal scheduler.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    sched_setscheduler(libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, priority)
}

/// Back to the normal scheduler.
pub fn set_normal() {
    let _ = sched_setscheduler(libc::SCHED_OTHER, 0);
}

fn sched_setscheduler(policy: libc::c_int, priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid `sched_param` that the call only reads; pid 0 is the calling
    // thread. (Neither rustix nor nix wraps sched_setscheduler.)
    let r = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
