//! The stop signals (SIGINT, SIGTERM, SIGHUP) of the commands that write files: blocked in
//! every thread, taken by one thread that says what happened and ends the process with
//! 128 + the signal, after removing the process's temporary files and the lock files of its
//! output directories (`lasthop_core::output::exit_cleanly`). Committed outputs stay.

use anyhow::{Context, Result};
use nix::sys::signal::{SigSet, Signal};

pub fn stop_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(s);
    }
    set
}

/// Blocks the stop signals in the calling thread (threads it starts later inherit the mask).
pub fn block() -> Result<()> {
    stop_signals()
        .thread_block()
        .context("blocking stop signals")
}

/// [`block`]s the stop signals, then starts the thread that takes the first of them: it calls
/// `say` with the signal's number and ends the process with 128 + it, cleanly. Call it before
/// the threads that do the work are started, and not while another part of the process takes
/// the signals itself (the emulator's signalfd).
pub fn exit_on_stop_signal(say: impl FnOnce(i32) + Send + 'static) -> Result<()> {
    block()?;
    std::thread::Builder::new()
        .name("lasthop-signals".into())
        .spawn(move || {
            if let Ok(sig) = stop_signals().wait() {
                // Said with no run committing meanwhile: the count it gives is what stays.
                lasthop_core::output::exit_cleanly_saying(128 + sig as i32, || say(sig as i32));
            }
        })
        .context("starting the signal thread")?;
    Ok(())
}
