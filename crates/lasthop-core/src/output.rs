//! Output files that appear whole or not at all, the lock on a run's output directory, and the
//! pcap capture writer.
//!
//! Every file the tool writes goes through [`AtomicFile`]: a regular file (or a new one) is
//! written to a temporary file in its final directory and renamed into place by
//! [`AtomicFile::commit`], so a run that dies half way leaves no truncated file behind; a symlink
//! is followed and its target replaced; standard output (`-`), a FIFO or a character device is
//! written through; a directory is refused ([`output_target`]).

use crate::packet::Packet;
use crate::time::Time;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The name every temporary output file starts with; with [`PARTIAL_SUFFIX`] it marks a file a
/// run had not finished (see [`remove_stale_partials`]).
pub const PARTIAL_PREFIX: &str = ".lasthop-";
pub const PARTIAL_SUFFIX: &str = ".partial";

/// What writing to an output path means, by what is at the path now (the rule every file the
/// tool writes follows):
///
/// - `-`: standard output;
/// - nothing, or a regular file: a temporary file beside it, renamed into place when complete;
/// - a symlink: the same rule applied to its target (so the symlink stays a symlink);
/// - a FIFO or a character device (`/dev/null`, a terminal): written through, never replaced;
/// - a directory, a block device or a socket: refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    Stdout,
    /// Write a temporary file and rename it to this path (the symlink-resolved one).
    Replace(PathBuf),
    /// Open this path for writing and write through (FIFO, character device).
    WriteThrough(PathBuf),
}

const ALLOWED_OUTPUT: &str =
    "give a file path (a new or a regular file), `-` for standard output, a FIFO or a character device";

/// Classifies `path` by the rule of [`OutputTarget`], following symlinks (at most 40).
pub fn output_target(path: &Path) -> io::Result<OutputTarget> {
    if path.as_os_str() == "-" {
        return Ok(OutputTarget::Stdout);
    }
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(OutputTarget::Replace(p)),
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", p.display()))),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let to = std::fs::read_link(&p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
            p = match p.parent() {
                Some(dir) if to.is_relative() => dir.join(to),
                _ => to,
            };
            continue;
        }
        if ft.is_file() {
            return Ok(OutputTarget::Replace(p));
        }
        if ft.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!(
                    "{}: is a directory, not a file: {ALLOWED_OUTPUT}",
                    p.display()
                ),
            ));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ft.is_fifo() || ft.is_char_device() {
                return Ok(OutputTarget::WriteThrough(p));
            }
            let what = if ft.is_block_device() {
                "a block device"
            } else if ft.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            };
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: is {what}: refusing to write to it: {ALLOWED_OUTPUT}",
                    p.display()
                ),
            ));
        }
        #[cfg(not(unix))]
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a regular file: {ALLOWED_OUTPUT}", p.display()),
        ));
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: too many levels of symbolic links", path.display()),
    ))
}

enum Sink {
    /// The temporary file and the path it is renamed to.
    Temp(BufWriter<tempfile::NamedTempFile>, PathBuf),
    Through(BufWriter<Box<dyn Write + Send>>),
}

/// A buffered output file that follows the rule of [`OutputTarget`]: a regular file (or a new
/// one) becomes visible at its path only when committed, whole; standard output, a FIFO or a
/// character device is written through.
pub struct AtomicFile {
    /// `None` once committed.
    sink: Option<Sink>,
    /// The permissions a new file gets at commit (default: those of the file it replaces, or
    /// 0644).
    mode: Option<u32>,
}

impl AtomicFile {
    pub fn create(path: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let path = path.as_ref();
        let sink = match output_target(path)? {
            OutputTarget::Stdout => Sink::Through(BufWriter::with_capacity(
                1 << 16,
                Box::new(io::stdout()) as Box<dyn Write + Send>,
            )),
            OutputTarget::WriteThrough(p) => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&p)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
                Sink::Through(BufWriter::with_capacity(
                    1 << 16,
                    Box::new(f) as Box<dyn Write + Send>,
                ))
            }
            OutputTarget::Replace(target) => {
                let dir = match target.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                // Created and registered at once: a signal's cleanup (`exit_cleanly`) holds
                // the registry while it removes what is registered and ends the process.
                let mut live = registry();
                let tmp = tempfile::Builder::new()
                    .prefix(PARTIAL_PREFIX)
                    .suffix(PARTIAL_SUFFIX)
                    .tempfile_in(&dir)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
                live.partials.push(tmp.path().to_path_buf());
                Sink::Temp(BufWriter::with_capacity(1 << 16, tmp), target)
            }
        };
        Ok(AtomicFile {
            sink: Some(sink),
            mode: None,
        })
    }

    /// The permission bits the file gets when committed, in place of those of the file it
    /// replaces (or 0644 for a new one); no effect on a file written through.
    pub fn set_mode(&mut self, mode: u32) {
        self.mode = Some(mode);
    }

    /// Completes the file. A temporary file is flushed, synced and renamed into place with the
    /// mode of the file it replaces (readable by all for a new file, as a plain file would be;
    /// the temporary file was private); a written-through one is flushed.
    pub fn commit(self) -> io::Result<()> {
        self.commit_with(true)
    }

    /// [`AtomicFile::commit`] without syncing the file's data first: for the many files of a
    /// run, whose directory the caller syncs once when they are all written (`sync_dir`). A
    /// crash before that sync may leave such a file empty or short, never half-renamed.
    pub fn commit_unsynced(self) -> io::Result<()> {
        self.commit_with(false)
    }

    fn commit_with(mut self, sync: bool) -> io::Result<()> {
        match self.sink.take().expect("committed once") {
            Sink::Through(mut w) => w.flush(),
            Sink::Temp(w, target) => {
                // Leaves the registry on every way out of here.
                let _registered = Registered(w.get_ref().path().to_path_buf());
                let named = |e: io::Error| named(e, &target);
                let tmp = w.into_inner().map_err(|e| named(e.into_error()))?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = self.mode.unwrap_or_else(|| {
                        std::fs::metadata(&target)
                            .map(|m| m.permissions().mode() & 0o7777)
                            .unwrap_or(0o644)
                    });
                    tmp.as_file()
                        .set_permissions(std::fs::Permissions::from_mode(mode))
                        .map_err(named)?;
                }
                if sync {
                    tmp.as_file().sync_all().map_err(named)?;
                }
                // Renamed into place under the registry: a stop signal's `exit_cleanly_saying`
                // holds it while it counts what is committed and ends the process, so no file
                // appears between its count and the end.
                let mut live = registry();
                let path = tmp.path().to_path_buf();
                let persisted = tmp.persist(&target);
                if let Some(i) = live.partials.iter().rposition(|p| *p == path) {
                    live.partials.swap_remove(i);
                }
                drop(live);
                persisted.map_err(|e| {
                    io::Error::new(e.error.kind(), format!("{}: {}", target.display(), e.error))
                })?;
                Ok(())
            }
        }
    }

    /// Writes `bytes` to `path` by the rule of [`OutputTarget`].
    pub fn write_all_to(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
        AtomicFile::write_all_to_with(path, bytes, true)
    }

    /// [`AtomicFile::write_all_to`], committed with [`AtomicFile::commit_unsynced`] unless
    /// `sync`: for one of a run's files, whose directory the caller syncs once.
    pub fn write_all_to_with(path: impl AsRef<Path>, bytes: &[u8], sync: bool) -> io::Result<()> {
        let mut f = AtomicFile::create(path)?;
        f.write_all(bytes)?;
        f.commit_with(sync)
    }
}

impl Drop for AtomicFile {
    /// Not committed: the temporary file goes (`tempfile` removes it) and leaves the registry.
    fn drop(&mut self) {
        if let Some(Sink::Temp(w, _)) = &self.sink {
            let path = w.get_ref().path().to_path_buf();
            drop(self.sink.take());
            drop(Registered(path));
        }
    }
}

impl AtomicFile {
    #[inline]
    fn sink(&mut self) -> &mut Sink {
        self.sink.as_mut().expect("not committed")
    }
}

/// Makes everything written under `dir`'s file system durable, with one call (`syncfs`):
/// what [`AtomicFile::commit_unsynced`] left to the caller, for a run's files before its
/// marker.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    let f =
        File::open(dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    #[cfg(unix)]
    {
        rustix::fs::syncfs(&f)
            .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))
    }
    #[cfg(not(unix))]
    {
        f.sync_all()
    }
}

/// An error writing the temporary file of `target`, named by `target` (the file the user asked
/// for, not the temporary one), of the same kind (a full disk stays `StorageFull`).
fn named(e: io::Error, target: &Path) -> io::Error {
    // `tempfile` adds "at path <the temporary file>" to its errors: not what the user gave.
    let text = e.to_string();
    let what = text.split(" at path ").next().unwrap_or(&text);
    io::Error::new(e.kind(), format!("{}: {what}", target.display()))
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.sink() {
            Sink::Temp(w, t) => w.write(buf).map_err(|e| named(e, t)),
            Sink::Through(w) => w.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self.sink() {
            Sink::Temp(w, t) => w.write_all(buf).map_err(|e| named(e, t)),
            Sink::Through(w) => w.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self.sink() {
            Sink::Temp(w, t) => w.flush().map_err(|e| named(e, t)),
            Sink::Through(w) => w.flush(),
        }
    }
}

/// The temporary files of this process's [`AtomicFile`]s (created, not yet committed or
/// dropped), and the lock files of its [`RunDirLock`]s: what [`exit_cleanly`] removes.
struct Registry {
    partials: Vec<PathBuf>,
    locks: Vec<PathBuf>,
}

static REGISTRY: std::sync::Mutex<Registry> = std::sync::Mutex::new(Registry {
    partials: Vec::new(),
    locks: Vec::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes a temporary file's path out of the registry when dropped.
struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        let mut r = registry();
        if let Some(i) = r.partials.iter().rposition(|p| *p == self.0) {
            r.partials.swap_remove(i);
        }
    }
}

/// Ends the process with `code` after removing what it would leave behind: the temporary files
/// of its uncommitted [`AtomicFile`]s and the lock files of its [`RunDirLock`]s (the lock
/// itself goes with the process). For a stop signal's handler thread (`code` = 128 + N): other
/// threads may be writing; the registry stays locked until the end, so none creates another
/// temporary file meanwhile. Committed files stay.
pub fn exit_cleanly(code: i32) -> ! {
    exit_cleanly_saying(code, || {})
}

/// [`exit_cleanly`], calling `say` first with the registry held: no [`AtomicFile`] is
/// committed after `say` starts, so what it counts of the committed files (a sweep's finished
/// runs) is what the process leaves.
pub fn exit_cleanly_saying(code: i32, say: impl FnOnce()) -> ! {
    let r = registry();
    say();
    for p in r.partials.iter().chain(&r.locks) {
        let _ = std::fs::remove_file(p);
    }
    std::process::exit(code)
}

/// The temporary files this process has not committed yet (for tests and messages).
pub fn live_partial_files() -> Vec<PathBuf> {
    registry().partials.clone()
}

/// Removes the temporary files (`.lasthop-*.partial`) that runs killed before their commit left
/// in `dir`, and in its subdirectories down to `depth` levels (0: `dir` only), never through a
/// symbolic link; returns what it removed. Call it only while holding the directory's
/// [`RunDirLock`]: a live run's temporary files look the same.
pub fn remove_stale_partials(dir: &Path, depth: usize) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", dir.display()))),
    };
    for e in rd {
        let e = e?;
        let ft = e.file_type()?;
        let name = e.file_name();
        let name = name.to_string_lossy();
        if ft.is_file() && name.starts_with(PARTIAL_PREFIX) && name.ends_with(PARTIAL_SUFFIX) {
            std::fs::remove_file(e.path())?;
            removed.push(e.path());
        } else if ft.is_dir() && depth > 0 {
            removed.extend(remove_stale_partials(&e.path(), depth - 1)?);
        }
    }
    removed.sort();
    Ok(removed)
}

/// The lock file's name inside a locked directory.
pub const LOCK_FILE: &str = ".lasthop.lock";

/// The file that marks a directory as one run's outputs (`lasthop sim`, `lasthop emu`,
/// Python's `lasthop.sim`): such a run writes only into a new or empty directory, or one that
/// holds this marker.
pub const RUN_MARKER: &str = "lasthop-run.txt";

/// Claims `dir` for one run's outputs, creating it when missing: a new or empty directory
/// (lasthop's lock and temporary files aside) gets the marker; one that holds the marker is a
/// run's already; anything else is refused, naming what is in it, so a run never replaces
/// files that are not lasthop's.
pub fn claim_run_dir(dir: &Path) -> io::Result<()> {
    check_run_dir(dir)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    mark_run_dir(dir)
}

/// Writes the marker into a run's directory (when it is not there yet).
pub fn mark_run_dir(dir: &Path) -> io::Result<()> {
    let marker = dir.join(RUN_MARKER);
    if marker.is_file() {
        return Ok(());
    }
    AtomicFile::write_all_to(&marker, b"lasthop run outputs\n")
}

/// [`claim_run_dir`]'s check alone, creating nothing: `dir` is missing, empty (lasthop's lock
/// and temporary files aside) or holds the marker.
pub fn check_run_dir(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a directory: give a directory for the run's outputs (it is created when missing)",
                dir.display()
            ),
        ));
    }
    if dir.join(RUN_MARKER).is_file() {
        return Ok(());
    }
    let mut foreign = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        let ours = name == LOCK_FILE
            || (name.starts_with(PARTIAL_PREFIX) && name.ends_with(PARTIAL_SUFFIX));
        if !ours {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        let n = foreign.len();
        foreign.truncate(3);
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is not empty ({}{}) and is not a lasthop run's directory (it has no {RUN_MARKER}): refusing to write into what is not lasthop's (its connections.csv, link.csv, events, captures and traces would be replaced); give a new or empty directory (a run's directory written by a lasthop before this rule: remove it first)",
                dir.display(),
                foreign.join(", "),
                if n > 3 { format!(" and {} more", n - 3) } else { String::new() }
            ),
        ));
    }
    Ok(())
}

/// An exclusive lock on an output directory for the length of a run: a second run into the same
/// directory fails with [`RunDirLock::acquire`]'s error, which names the holder's process. The
/// lock is an `flock` on `DIR/.lasthop.lock` (holding the holder's pid), so the kernel releases
/// it when the process dies, also by kill -9; the file is removed on drop.
#[derive(Debug)]
pub struct RunDirLock {
    path: PathBuf,
    #[allow(dead_code)] // holds the lock while open
    file: File,
}

/// Why a directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{dir} is in use by another lasthop run ({holder}): wait for it to end, or give another output directory")]
    Busy { dir: String, holder: String },
    #[error("{dir} exists and is not a directory: give a directory for the outputs (it is created when missing)")]
    NotADirectory { dir: String },
    #[error("locking {dir}: {error}")]
    Io { dir: String, error: io::Error },
}

impl RunDirLock {
    /// Creates `dir` if needed and locks it, or fails at once when another process holds it.
    pub fn acquire(dir: &Path) -> Result<RunDirLock, LockError> {
        let io_err = |error: io::Error| LockError::Io {
            dir: dir.display().to_string(),
            error,
        };
        if dir.exists() && !dir.is_dir() {
            return Err(LockError::NotADirectory {
                dir: dir.display().to_string(),
            });
        }
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let path = dir.join(LOCK_FILE);
        loop {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io_err)?;
            if !try_lock(&file).map_err(io_err)? {
                let mut text = String::new();
                let _ = io::Read::read_to_string(&mut file, &mut text);
                let holder = describe_holder(text.trim());
                return Err(LockError::Busy {
                    dir: dir.display().to_string(),
                    holder,
                });
            }
            // The holder before us may have removed the file between our open and our lock:
            // then we hold a lock on a file nobody else sees; start again.
            if !same_file(&file, &path) {
                continue;
            }
            file.set_len(0).map_err(io_err)?;
            writeln!(file, "{}", std::process::id()).map_err(io_err)?;
            registry().locks.push(path.clone());
            return Ok(RunDirLock { path, file });
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunDirLock {
    fn drop(&mut self) {
        // Removed while still locked; a waiter that opened it meanwhile sees it gone and retries.
        let mut r = registry();
        if let Some(i) = r.locks.iter().rposition(|p| *p == self.path) {
            r.locks.swap_remove(i);
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn describe_holder(pid: &str) -> String {
    match pid.parse::<u32>() {
        Ok(pid) => {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| {
                    b.split(|&c| c == 0)
                        .filter(|a| !a.is_empty())
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            if cmd.is_empty() {
                format!("pid {pid}")
            } else {
                format!("pid {pid}: {cmd}")
            }
        }
        Err(_) => "pid unknown".into(),
    }
}

#[cfg(unix)]
fn try_lock(f: &File) -> io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    match flock(f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(unix))]
fn try_lock(_: &File) -> io::Result<bool> {
    Ok(true)
}

#[cfg(unix)]
fn same_file(f: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, _: &Path) -> bool {
    true
}

/// A pcap capture of raw IP packets (link type 101) with nanosecond timestamps, as tcpdump,
/// tshark and tcptrace read it. Virtual payloads are recorded as truncated packets: the captured
/// length is the header bytes, the original length the wire length.
pub struct PcapSink<W: Write> {
    w: PcapWriter<W>,
    snaplen: usize,
}

/// The default snap length: every header of a full TCP segment with options.
pub const DEFAULT_SNAPLEN: u32 = 256;

impl<W: Write> PcapSink<W> {
    pub fn new(out: W, snaplen: u32) -> io::Result<PcapSink<W>> {
        // The header's snap length is informational; pcap-file refuses records whose original
        // length exceeds it, so it states the IP maximum and `snaplen` truncates below.
        let header = PcapHeader {
            snaplen: 65_535,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            ..Default::default()
        };
        let w = PcapWriter::with_header(out, header).map_err(pcap_io)?;
        Ok(PcapSink {
            w,
            snaplen: snaplen as usize,
        })
    }

    pub fn write(&mut self, at: Time, p: &Packet) -> io::Result<()> {
        let n = p.data.len().min(self.snaplen);
        let rec = PcapPacket::new(at.as_nanos_duration(), p.wire_len, &p.data[..n]);
        self.w.write_packet(&rec).map_err(pcap_io)?;
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.w.into_writer()
    }
}

/// pcap-file's error as the I/O error it wraps, when it wraps one (so that a full disk stays
/// `StorageFull`).
fn pcap_io(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => io::Error::other(e),
    }
}

impl Time {
    fn as_nanos_duration(self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::PcapReader;

    #[test]
    fn pcap_roundtrip_with_virtual_payload() {
        let mut hdr = vec![
            0x45, 0, 0, 0, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1,
        ];
        hdr.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 28, 0, 0]);
        let p = Packet::with_wire_len(hdr.clone(), 540);
        let mut sink = PcapSink::new(Vec::new(), DEFAULT_SNAPLEN).unwrap();
        sink.write(Time(1_234_567_891), &p).unwrap();
        let bytes = sink.into_inner();
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header().ts_resolution, TsResolution::NanoSecond);
        let rec = r.next_packet().unwrap().unwrap();
        assert_eq!(
            rec.timestamp,
            std::time::Duration::from_nanos(1_234_567_891)
        );
        assert_eq!(rec.orig_len, 540);
        assert_eq!(&rec.data[..], &hdr[..]);
    }

    #[test]
    fn uncommitted_temporary_files_are_registered_for_a_signal_s_cleanup() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mine = |v: Vec<PathBuf>| -> Vec<PathBuf> {
            v.into_iter()
                .filter(|p| p.starts_with(dir.path()))
                .collect()
        };
        let mut a = AtomicFile::create(dir.path().join("a.csv")).unwrap();
        let b = AtomicFile::create(dir.path().join("b.csv")).unwrap();
        let live = mine(live_partial_files());
        assert_eq!(live.len(), 2, "{live:?}");
        assert!(live.iter().all(|p| p.exists()));
        a.write_all(b"x").unwrap();
        a.set_mode(0o600);
        a.commit().unwrap();
        drop(b);
        assert!(mine(live_partial_files()).is_empty());
        let m = std::fs::metadata(dir.path().join("a.csv")).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        // A lock's file is registered while it is held.
        let lock = RunDirLock::acquire(dir.path()).unwrap();
        assert!(registry().locks.contains(&dir.path().join(LOCK_FILE)));
        drop(lock);
        assert!(!registry().locks.contains(&dir.path().join(LOCK_FILE)));
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"a,b\n").unwrap();
        assert!(!path.exists());
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a,b\n");
        let f = AtomicFile::create(dir.path().join("y.csv")).unwrap();
        drop(f);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
    fn read_to_string(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn a_regular_file_is_replaced_whole_keeping_its_mode() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.csv");
        std::fs::write(&path, "old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let ino = std::fs::metadata(&path).unwrap().ino();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"new\n").unwrap();
        assert_eq!(read_to_string(&path), "old\n", "visible before the commit");
        f.commit().unwrap();
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(read_to_string(&path), "new\n");
        assert_ne!(m.ino(), ino, "replaced by rename, not rewritten in place");
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_symlink_stays_a_symlink_and_its_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real/out.csv");
        std::fs::write(&target, "old\n").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("real/out.csv", &link).unwrap();
        assert_eq!(
            output_target(&link).unwrap(),
            OutputTarget::Replace(dir.path().join("real/out.csv"))
        );
        AtomicFile::write_all_to(&link, b"new\n").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(read_to_string(&target), "new\n");
        // A dangling symlink: its target is created.
        let dangling = dir.path().join("dangling.csv");
        std::os::unix::fs::symlink(dir.path().join("real/made.csv"), &dangling).unwrap();
        AtomicFile::write_all_to(&dangling, b"x\n").unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(read_to_string(&dir.path().join("real/made.csv")), "x\n");
        // A loop of symlinks is an error, not a hang.
        std::os::unix::fs::symlink("loop2", dir.path().join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", dir.path().join("loop2")).unwrap();
        let e = AtomicFile::create(dir.path().join("loop1")).err().unwrap();
        assert!(e.to_string().contains("too many levels"), "{e}");
    }

    #[test]
    fn a_fifo_is_written_through() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(
            output_target(&fifo).unwrap(),
            OutputTarget::WriteThrough(fifo.clone())
        );
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        AtomicFile::write_all_to(&fifo, b"through the pipe\n").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe\n");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_character_device_is_written_through_never_replaced() {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let null = Path::new("/dev/null");
        let before = std::fs::metadata(null).unwrap();
        assert!(before.file_type().is_char_device());
        assert_eq!(
            output_target(null).unwrap(),
            OutputTarget::WriteThrough(null.into())
        );
        // As root this would have replaced /dev/null by a regular file before; as anyone else
        // the rename would have failed. Now it writes through either way.
        AtomicFile::write_all_to(null, b"discarded\n").unwrap();
        let after = std::fs::metadata(null).unwrap();
        assert!(after.file_type().is_char_device());
        assert_eq!((before.ino(), before.rdev()), (after.ino(), after.rdev()));
        // /dev/stdout is a symlink into /proc: followed, never replaced.
        let t = output_target(Path::new("/dev/stdout")).unwrap();
        assert!(
            !matches!(t, OutputTarget::Replace(ref p) if p == Path::new("/dev/stdout")),
            "{t:?}"
        );
    }

    #[test]
    fn a_directory_is_refused_and_dash_is_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let e = AtomicFile::create(dir.path()).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert!(e.to_string().contains("`-` for standard output"), "{e}");
        // Through a symlink too.
        let link = dir.path().join("d");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(AtomicFile::create(&link).is_err());
        assert_eq!(output_target(Path::new("-")).unwrap(), OutputTarget::Stdout);
    }

    #[test]
    fn stale_partials_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runs/a/0")).unwrap();
        let stale = dir.path().join("runs/a/0/.lasthop-x1y2.partial");
        std::fs::write(&stale, "half").unwrap();
        std::fs::write(dir.path().join(".lasthop-top.partial"), "half").unwrap();
        std::fs::write(dir.path().join("keep.partial"), "mine").unwrap();
        std::fs::write(dir.path().join("runs/a/0/events.csv"), "x").unwrap();
        let flat = remove_stale_partials(dir.path(), 0).unwrap();
        assert_eq!(flat, vec![dir.path().join(".lasthop-top.partial")]);
        assert!(stale.exists());
        assert!(remove_stale_partials(dir.path(), 2).unwrap().is_empty());
        assert!(stale.exists(), "three levels down");
        let deep = remove_stale_partials(dir.path(), 3).unwrap();
        assert_eq!(deep, vec![stale.clone()]);
        assert!(!stale.exists());
        assert!(dir.path().join("keep.partial").exists());
        assert!(dir.path().join("runs/a/0/events.csv").exists());
    }

    #[test]
    fn a_locked_directory_refuses_a_second_run_naming_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let lock = RunDirLock::acquire(&out).unwrap();
        assert!(out.join(LOCK_FILE).exists());
        // flock locks belong to the open file, so a second acquire in this process conflicts
        // as another process's would.
        let e = RunDirLock::acquire(&out).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, LockError::Busy { .. }), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        assert!(msg.contains("in use by another lasthop run"), "{msg}");
        drop(lock);
        assert!(!out.join(LOCK_FILE).exists(), "the lock file is removed");
        let again = RunDirLock::acquire(&out).unwrap();
        drop(again);
        // A file where the directory should be is named as such.
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let e = RunDirLock::acquire(&file).unwrap_err().to_string();
        assert!(e.contains("exists and is not a directory"), "{e}");
        // A lock file a killed run left behind (no one holds its flock) does not block.
        std::fs::write(out.join(LOCK_FILE), "999999999\n").unwrap();
        drop(RunDirLock::acquire(&out).unwrap());
    }
}
