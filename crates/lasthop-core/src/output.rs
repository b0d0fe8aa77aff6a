//! Output files that appear whole or not at all, and the pcap capture writer.
//!
//! Every result file is written to a temporary file in its final directory and renamed into place
//! by [`AtomicFile::commit`]; a run that dies half way leaves no truncated file behind.

use crate::packet::Packet;
use crate::time::Time;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered file that becomes visible at `path` only when committed.
pub struct AtomicFile {
    tmp: BufWriter<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl AtomicFile {
    pub fn create(path: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".lasthop-")
            .suffix(".partial")
            .tempfile_in(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        Ok(AtomicFile {
            tmp: BufWriter::with_capacity(1 << 16, tmp),
            path,
        })
    }

    /// Flushes, syncs and renames the file into place, readable by all (as a plain file would
    /// be; the temporary file was private).
    pub fn commit(self) -> io::Result<()> {
        let tmp = self.tmp.into_inner().map_err(|e| e.into_error())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Writes `bytes` to `path` atomically.
    pub fn write_all_to(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
        let mut f = AtomicFile::create(path)?;
        f.write_all(bytes)?;
        f.commit()
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
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
        let w = PcapWriter::with_header(out, header).map_err(io::Error::other)?;
        Ok(PcapSink {
            w,
            snaplen: snaplen as usize,
        })
    }

    pub fn write(&mut self, at: Time, p: &Packet) -> io::Result<()> {
        let n = p.data.len().min(self.snaplen);
        let rec = PcapPacket::new(at.as_nanos_duration(), p.wire_len, &p.data[..n]);
        self.w.write_packet(&rec).map_err(io::Error::other)?;
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.w.into_writer()
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
}
