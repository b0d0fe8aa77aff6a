//! The run files the analysis writes, one module each with its schema (a row type and its
//! columns), its writer and its one typed reader, as `lasthop_link::event` (`events.csv`) and
//! `lasthop_link::meter` (`link.csv`) hold theirs: [`connections`], [`udp_flows`],
//! [`udp_packets`], [`pages`], [`page_objects`], [`streams`], [`latency`], [`pings`] (two
//! files), and [`tcp_trace`]
//! (written by the simulator). The file names are `lasthop_core::layout`'s.
//!
//! Rows are written and read with serde and the `csv` crate. Readers find columns by their
//! header name, so a file written before a column was added still reads: such a column reads
//! as empty (`None`, or 0 for a count), never as an error.

pub mod columnar;
pub mod connections;
pub mod latency;
pub mod page_objects;
pub mod pages;
pub mod pings;
pub mod streams;
pub mod tcp_trace;
pub mod udp_flows;
pub mod udp_packets;

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// What can go wrong reading a run file. Messages name the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path}: {error}")]
    Io { path: String, error: io::Error },
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: String,
        line: usize,
        msg: String,
    },
}

/// Writes `columns` as the header and then `rows` to `w` (the header also when there is no
/// row), one line each, `\n` ended.
pub(crate) fn write_rows<W: Write, T: Serialize>(
    w: W,
    columns: &[&str],
    rows: impl IntoIterator<Item = T>,
) -> io::Result<()> {
    let mut cw = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(w);
    cw.write_record(columns).map_err(csv_io)?;
    for r in rows {
        cw.serialize(r).map_err(csv_io)?;
    }
    cw.flush()
}

/// [`write_rows`] into `path`, atomically (the file appears whole or not at all).
pub(crate) fn write_file<T: Serialize>(
    path: &Path,
    columns: &[&str],
    rows: impl IntoIterator<Item = T>,
) -> io::Result<()> {
    let mut f = lasthop_core::output::AtomicFile::create(path)?;
    write_rows(&mut f, columns, rows)?;
    f.commit()
}

/// [`write_rows`] into a string.
pub fn to_text<T: Serialize>(columns: &[&str], rows: impl IntoIterator<Item = T>) -> String {
    let mut v = vec![];
    write_rows(&mut v, columns, rows).expect("writes to memory");
    String::from_utf8(v).expect("UTF-8 in, UTF-8 out")
}

/// `rows` as a reader of their file gets them back: written under `columns` and read again,
/// so numbers are rounded as the file rounds them. What in-process users of a run's tables
/// see, so that the same run gives the same figures from memory as from its files.
pub fn as_written<T: Serialize + DeserializeOwned>(
    columns: &[&str],
    rows: impl IntoIterator<Item = T>,
) -> Vec<T> {
    let text = to_text(columns, rows);
    if text.contains('"') {
        return read_from(text.as_bytes(), "<memory>").expect("rows read back as written");
    }
    // No field needed quoting (our tables' never do): split on commas, which is what the
    // reader would do, without building a reader for each table of each run.
    let mut lines = text.lines();
    let headers =
        csv::StringRecord::from(lines.next().unwrap_or("").split(',').collect::<Vec<_>>());
    lines
        .map(|l| {
            csv::StringRecord::from(l.split(',').collect::<Vec<_>>())
                .deserialize(Some(&headers))
                .expect("rows read back as written")
        })
        .collect()
}

/// One row as CSV text, without its line end.
pub(crate) fn row_text<T: Serialize>(row: T) -> String {
    let mut v = vec![];
    let mut cw = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(&mut v);
    cw.serialize(row).expect("writes to memory");
    drop(cw);
    v.pop();
    String::from_utf8(v).expect("UTF-8 in, UTF-8 out")
}

fn csv_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        k => io::Error::other(format!("{k:?}")),
    }
}

/// Reads every row of the CSV file at `path` by its header.
pub(crate) fn read_file<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, FileError> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|error| FileError::Io {
        path: name.clone(),
        error,
    })?;
    read_from(io::BufReader::with_capacity(1 << 16, f), &name)
}

/// Reads every row of CSV text by its header; `source` names it in errors.
pub(crate) fn read_from<T: DeserializeOwned, R: io::Read>(
    r: R,
    source: &str,
) -> Result<Vec<T>, FileError> {
    let mut rd = csv::ReaderBuilder::new().flexible(true).from_reader(r);
    let mut out = vec![];
    for row in rd.deserialize() {
        out.push(row.map_err(|e| parse_error(source, e))?);
    }
    Ok(out)
}

fn parse_error(source: &str, e: csv::Error) -> FileError {
    let line = e.position().map_or(0, |p| p.line() as usize);
    match e.into_kind() {
        csv::ErrorKind::Io(error) => FileError::Io {
            path: source.to_string(),
            error,
        },
        csv::ErrorKind::Deserialize { err, .. } => FileError::Parse {
            path: source.to_string(),
            line,
            msg: match err.field() {
                Some(i) => format!("column {}: {}", i + 1, err.kind()),
                None => err.kind().to_string(),
            },
        },
        k => FileError::Parse {
            path: source.to_string(),
            line,
            msg: format!("{k:?}"),
        },
    }
}

/// How a number is written: a fixed number of decimals (times in s with 6, rates and ms with
/// 3), an empty cell for `None`; and `complete`-like flags as `1` / `0`.
pub(crate) mod fmt {
    use serde::{Deserialize, Deserializer, Serializer};

    fn fixed<S: Serializer>(v: Option<f64>, decimals: usize, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.collect_str(&format_args!("{v:.decimals$}")),
            None => s.serialize_str(""),
        }
    }
    pub fn f6<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        fixed(Some(*v), 6, s)
    }
    pub fn f3<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        fixed(Some(*v), 3, s)
    }
    pub fn opt_f6<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        fixed(*v, 6, s)
    }
    pub fn opt_f3<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        fixed(*v, 3, s)
    }

    /// `1` / `0` (read back: also `true`, `yes` / `false`, `no`, empty).
    pub mod b01 {
        use super::*;
        pub fn serialize<S: Serializer>(v: &bool, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(if *v { "1" } else { "0" })
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
            let s = String::deserialize(d)?;
            Ok(matches!(s.as_str(), "1" | "true" | "yes"))
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every row type's serde names are its file's columns, in order (the header is written
    /// from the column list, the rows from the fields).
    #[test]
    fn columns_are_the_fields() {
        fn header<T: serde::Serialize>(row: T) -> String {
            let mut w = csv::Writer::from_writer(vec![]);
            w.serialize(row).unwrap();
            let t = String::from_utf8(w.into_inner().unwrap()).unwrap();
            t.lines().next().unwrap().to_string()
        }
        use super::*;
        let check = |got: String, want: &[&str]| assert_eq!(got, want.join(","));
        check(
            header(connections::ConnRow::default()),
            &connections::COLUMNS,
        );
        check(
            header(udp_flows::UdpFlowRow::default()),
            &udp_flows::COLUMNS,
        );
        check(
            header(udp_packets::UdpPacketRow::default()),
            &udp_packets::COLUMNS,
        );
        check(header(pages::PageRow::default()), &pages::COLUMNS);
        check(
            header(page_objects::PageObjectRow::default()),
            &page_objects::COLUMNS,
        );
        check(header(streams::StreamRow::default()), &streams::COLUMNS);
        check(header(latency::LatencyRow::default()), &latency::COLUMNS);
        check(header(tcp_trace::TraceRow::default()), &tcp_trace::COLUMNS);
        check(header(pings::PingFlowRow::default()), &pings::FLOW_COLUMNS);
        check(header(pings::PingRow::default()), &pings::COLUMNS);
    }
}
