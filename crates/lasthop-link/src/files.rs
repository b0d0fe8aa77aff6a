//! Data files a link spec names: rate traces, `user` distributions, loss traces.
//!
//! A file's path is relative to the link spec's own directory (the directory of the file
//! `LinkSpec::load` read; the working directory for a spec given as text). Reads are bounded
//! like every spec read ([`lasthop_core::spec::read_text_limited`]), and every problem is a
//! [`SpecError`] naming the key, the file, the line and what is allowed.

use lasthop_core::spec::{err, SpecError};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The most bytes a data file may hold: Mahimahi's longest public traces are a few MB, and a
/// device or a wrong file should fail at once rather than fill the memory.
pub const MAX_DATA_BYTES: u64 = 256 << 20;

/// The most values (lines) a data file may hold.
pub const MAX_DATA_LINES: usize = 20_000_000;

/// Where a file named in a spec lies.
pub fn resolve(base: &Path, file: &str) -> PathBuf {
    base.join(file)
}

/// Reads the data file `file` (relative to `base`) that `key` names; `what` says what it is
/// ("a Mahimahi trace") for the error messages.
pub fn read(base: &Path, key: &str, file: &str, what: &str) -> Result<String, SpecError> {
    if file.is_empty() {
        return Err(err(key, format!("an empty path: give the file of {what}")));
    }
    let path = resolve(base, file);
    // A FIFO or a terminal would block the reading, a device never end: only regular files.
    match std::fs::metadata(&path) {
        Ok(m) if !m.is_file() => {
            return Err(err(
                key,
                format!(
                    "{file:?} ({}) is not a regular file: give the file of {what}",
                    path.display()
                ),
            ))
        }
        _ => {}
    }
    let text = lasthop_core::spec::read_text_limited(&path, MAX_DATA_BYTES, what)
        .map_err(|e| err(key, format!("{file:?} ({}): {e}", path.display())))?;
    READ.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            v.push(DataFile {
                file: file.to_string(),
                digest: fnv1a(text.as_bytes()),
            });
        }
    });
    Ok(text)
}

/// A data file a link spec read, for fingerprints: its name as the spec wrote it and a digest
/// of its contents (FNV-1a), so that an experiment whose trace changed is not taken for the
/// same one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub file: String,
    pub digest: u64,
}

thread_local! {
    /// The files read while [`recording`] runs on this thread.
    static READ: RefCell<Option<Vec<DataFile>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns what it gave and the data files it read, in order.
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<DataFile>) {
    let outer = READ.with(|r| r.borrow_mut().replace(Vec::new()));
    let t = f();
    let read = READ.with(|r| std::mem::replace(&mut *r.borrow_mut(), outer));
    (t, read.unwrap_or_default())
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The lines of a data file that carry values, with their line numbers (from 1): blank lines
/// and lines starting with `#` (comments) are skipped, and a line's surrounding spaces trimmed.
pub fn value_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// An error about line `line` of `file`, at `key`.
pub fn line_err(key: &str, file: &str, line: usize, problem: impl std::fmt::Display) -> SpecError {
    err(key, format!("{file:?} line {line}: {problem}"))
}

/// Refuses a file with more than [`MAX_DATA_LINES`] values.
pub fn check_count(key: &str, file: &str, n: usize) -> Result<(), SpecError> {
    if n > MAX_DATA_LINES {
        return Err(err(
            key,
            format!(
                "{file:?} has more than {MAX_DATA_LINES} values, the most a data file may hold"
            ),
        ));
    }
    Ok(())
}
