//! Standard output and standard error that a closed pipe does not crash.
//!
//! `lasthop check SPEC | head -1` closes the pipe after one line; std's `println!` then panics
//! ("failed printing to stdout: Broken pipe"). The binary's `print!`, `println!` and
//! `eprintln!` are this module's (the macros below, defined before every other module of the
//! crate, shadow std's): a failed write to standard output stops the printing, the command goes
//! on with its work (a simulation still writes every output file, nothing is lost), and `main`
//! then exits quietly with 141 (128 + SIGPIPE, what a shell reports for a program SIGPIPE
//! ended, as `seq 1000000 | head -1` does) or, for another error writing standard output, with
//! an error. A failed write to standard error is ignored.

use std::io::Write;
use std::sync::Mutex;

/// The first error writing standard output, once one happened.
static STDOUT_ERROR: Mutex<Option<std::io::ErrorKind>> = Mutex::new(None);

/// Writes to standard output unless a write to it failed before.
pub fn stdout(args: std::fmt::Arguments) {
    let mut failed = STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_some() {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        *failed = Some(e.kind());
    }
}

/// Writes to standard error; an error is ignored (there is nowhere left to say it).
pub fn stderr(args: std::fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Flushes standard output and returns the first error writing it, if any.
pub fn stdout_error() -> Option<std::io::ErrorKind> {
    let mut failed = STDOUT_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_none() {
        if let Err(e) = std::io::stdout().lock().flush() {
            *failed = Some(e.kind());
        }
    }
    *failed
}

macro_rules! print {
    ($($arg:tt)*) => { $crate::out::stdout(format_args!($($arg)*)) };
}

macro_rules! println {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

macro_rules! eprintln {
    () => { $crate::out::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}
