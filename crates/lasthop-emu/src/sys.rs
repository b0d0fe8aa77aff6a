//! Thin wrappers over the Linux calls the emulator needs: the monotonic clock, epoll, timerfd,
//! signalfd, pidfd, setns, TUN devices and timer slack.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds. The same clock in every network namespace, so the apps in
/// the namespaces and the emulator share it.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reads `ns` (absolute).
pub fn sleep_until_monotonic(ns: u64) {
    let ts = timespec(ns);
    loop {
        // SAFETY: valid timespec; no remainder needed with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// The thread's timer slack: how late the kernel may fire its timers to batch wakeups.
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long.
    cvt(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an fd we own.
    let fl = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) })?;
    Ok(())
}

pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall; the fd is owned from here.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: valid event pointer.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    pub fn del(&self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: valid event pointer.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) })?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1: forever, 0: poll) and returns the tokens that are ready.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: the buffer is valid for `events.len()` entries.
        let n = unsafe {
            libc::epoll_wait(
                self.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(n as usize)
    }
}

/// A `CLOCK_MONOTONIC` timerfd armed with absolute deadlines.
pub struct TimerFd(pub OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall.
        let fd = cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        Ok(TimerFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Arms the timer to fire when `CLOCK_MONOTONIC` reaches `abs_ns`.
    pub fn arm_abs(&self, abs_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: timespec(0),
            it_value: timespec(abs_ns.max(1)),
        };
        // SAFETY: valid itimerspec.
        cvt(unsafe {
            libc::timerfd_settime(
                self.0.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into a valid buffer; EAGAIN is fine.
        unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
    }
}

/// The signals that end a run cleanly.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn stop_sigset() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in STOP_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks the stop signals in the calling thread (threads created later inherit the mask) and
/// returns a signalfd that reports them. Child processes get an empty mask from `std::process`.
pub fn block_stop_signals() -> io::Result<OwnedFd> {
    let set = stop_sigset();
    // SAFETY: valid sigset.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    let fd = cvt(unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Unblocks the stop signals again (after the run, so a second Ctrl-C works as usual).
pub fn unblock_stop_signals() {
    let set = stop_sigset();
    // SAFETY: valid sigset.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
}

/// Reads one pending signal from a signalfd.
pub fn read_signal(fd: &OwnedFd) -> Option<i32> {
    // SAFETY: signalfd_siginfo is plain data; read at most its size.
    unsafe {
        let mut info: libc::signalfd_siginfo = std::mem::zeroed();
        let n = libc::read(
            fd.as_raw_fd(),
            (&mut info as *mut libc::signalfd_siginfo).cast(),
            std::mem::size_of::<libc::signalfd_siginfo>(),
        );
        (n == std::mem::size_of::<libc::signalfd_siginfo>() as isize)
            .then_some(info.ssi_signo as i32)
    }
}

/// A pidfd: readable when the process exits.
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

pub fn kill(pid: u32, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: plain syscall.
    cvt(unsafe { libc::kill(pid as libc::pid_t, sig) })?;
    Ok(())
}

/// Opens a network namespace handle (`/run/netns/NAME`).
pub fn open_netns(path: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(io::Error::other)?;
    // SAFETY: valid C string.
    let fd = cvt(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Moves the calling thread into the network namespace `fd`.
pub fn setns_net(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall.
    cvt(unsafe { libc::setns(fd, libc::CLONE_NEWNET) })?;
    Ok(())
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Creates the TUN device `name` in the calling thread's network namespace, without packet info
/// and without a virtio-net header (so no offloads: the kernel hands over real, MTU-sized IP
/// packets). The device lives as long as the returned fd.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::other(format!(
            "device name {name:?} is too long"
        )));
    }
    // SAFETY: valid C string literal.
    let fd = cvt(unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) })
        .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes an ifreq.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) })
        .map_err(|e| io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")))?;
    set_nonblocking(fd.as_raw_fd())?;
    Ok(fd)
}

/// Random bytes from the kernel.
pub fn random_u64() -> u64 {
    let mut v = 0u64;
    // SAFETY: 8-byte buffer.
    let n = unsafe { libc::getrandom((&mut v as *mut u64).cast(), 8, 0) };
    if n != 8 {
        v = monotonic_ns() ^ (u64::from(std::process::id()) << 32);
    }
    v
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
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: valid sched_param; 0 is the calling thread.
    cvt(unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    })?;
    Ok(())
}

/// Back to the normal scheduler.
pub fn set_normal() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}
