//! The Parquet form of a run's large CSV files (`events.csv`, `tcp_trace.csv`; `[outputs]
//! format = "parquet"`): the same columns under the same names, each typed by what its cells
//! hold (64-bit integers when every cell is one, else 64-bit floats when every cell is a
//! number, else strings; an empty cell is null), snappy-compressed, in row groups of
//! [`BATCH`] rows. `events.csv` becomes `events.parquet` beside it.
//!
//! Readers take either form through [`open`]: a Parquet file reads back as the CSV text its
//! typed reader reads (an integer as written, a float in the shortest text that parses to the
//! same number, null as an empty cell), so a run's rows are the same whichever form it kept.

use super::FileError;
use arrow_array::{
    Array, ArrayRef, Float64Array, Int64Array, RecordBatch, RecordBatchReader, StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per Parquet row group (and per Arrow batch written or read).
pub const BATCH: usize = 1 << 16;

/// The Parquet file that stands for the CSV file `csv` (`events.csv` → `events.parquet`).
pub fn parquet_path(csv: &Path) -> PathBuf {
    csv.with_extension("parquet")
}

/// A column's type, from its cells: the widest seen (an empty cell says nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Empty,
    Int,
    Float,
    Str,
}

fn kind_of(cell: &str) -> Kind {
    if cell.is_empty() {
        return Kind::Empty;
    }
    // An integer only in its canonical text, so that it reads back as written.
    if let Ok(v) = cell.parse::<i64>() {
        if v.to_string() == cell {
            return Kind::Int;
        }
        return Kind::Str;
    }
    let digits = cell.trim_start_matches('-');
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // Beyond i64: kept as text, not rounded to a float.
        return Kind::Str;
    }
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Kind::Float,
        _ => Kind::Str,
    }
}

fn io_error(path: &Path) -> impl Fn(io::Error) -> FileError + '_ {
    move |error| FileError::Io {
        path: path.display().to_string(),
        error,
    }
}

fn other(path: &Path, e: impl std::fmt::Display) -> FileError {
    FileError::Parse {
        path: path.display().to_string(),
        line: 0,
        msg: e.to_string(),
    }
}

fn csv_reader(path: &Path) -> Result<csv::Reader<io::BufReader<std::fs::File>>, FileError> {
    let f = std::fs::File::open(path).map_err(io_error(path))?;
    Ok(csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(io::BufReader::with_capacity(1 << 16, f)))
}

/// Writes the CSV file `csv` as its Parquet file ([`parquet_path`], atomically) and removes
/// the CSV file. Two passes over the file, neither holding more than [`BATCH`] rows: the
/// columns' types, then the rows.
pub fn csv_to_parquet(csv: &Path) -> Result<PathBuf, FileError> {
    let out = parquet_path(csv);
    let mut rd = csv_reader(csv)?;
    let names: Vec<String> = rd
        .headers()
        .map_err(|e| other(csv, e))?
        .iter()
        .map(str::to_string)
        .collect();
    let mut kinds = vec![Kind::Empty; names.len()];
    let mut rec = csv::StringRecord::new();
    while rd.read_record(&mut rec).map_err(|e| other(csv, e))? {
        for (k, cell) in kinds.iter_mut().zip(rec.iter()) {
            *k = (*k).max(kind_of(cell));
        }
    }
    let fields: Vec<Field> = names
        .iter()
        .zip(&kinds)
        .map(|(n, k)| {
            let t = match k {
                Kind::Int => DataType::Int64,
                Kind::Float => DataType::Float64,
                Kind::Empty | Kind::Str => DataType::Utf8,
            };
            Field::new(n, t, true)
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_max_row_group_size(BATCH)
        .build();
    let mut file = lasthop_core::output::AtomicFile::create(&out).map_err(io_error(&out))?;
    {
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut file, schema.clone(), Some(props))
            .map_err(|e| other(&out, e))?;
        let mut rd = csv_reader(csv)?;
        let mut rows: Vec<csv::StringRecord> = Vec::with_capacity(BATCH);
        let mut flush = |rows: &mut Vec<csv::StringRecord>| -> Result<(), FileError> {
            if rows.is_empty() {
                return Ok(());
            }
            let cols: Vec<ArrayRef> = kinds
                .iter()
                .enumerate()
                .map(|(i, k)| column(*k, rows, i))
                .collect();
            let batch = RecordBatch::try_new(schema.clone(), cols).map_err(|e| other(&out, e))?;
            w.write(&batch).map_err(|e| other(&out, e))?;
            rows.clear();
            Ok(())
        };
        let mut rec = csv::StringRecord::new();
        while rd.read_record(&mut rec).map_err(|e| other(csv, e))? {
            rows.push(rec.clone());
            if rows.len() == BATCH {
                flush(&mut rows)?;
            }
        }
        flush(&mut rows)?;
        w.close().map_err(|e| other(&out, e))?;
    }
    file.commit().map_err(io_error(&out))?;
    std::fs::remove_file(csv).map_err(io_error(csv))?;
    Ok(out)
}

fn cell(r: &csv::StringRecord, i: usize) -> Option<&str> {
    r.get(i).filter(|c| !c.is_empty())
}

fn column(kind: Kind, rows: &[csv::StringRecord], i: usize) -> ArrayRef {
    match kind {
        Kind::Int => Arc::new(Int64Array::from(
            rows.iter()
                .map(|r| cell(r, i).and_then(|c| c.parse().ok()))
                .collect::<Vec<Option<i64>>>(),
        )),
        Kind::Float => Arc::new(Float64Array::from(
            rows.iter()
                .map(|r| cell(r, i).and_then(|c| c.parse().ok()))
                .collect::<Vec<Option<f64>>>(),
        )),
        Kind::Empty | Kind::Str => Arc::new(StringArray::from(
            rows.iter()
                .map(|r| cell(r, i))
                .collect::<Vec<Option<&str>>>(),
        )),
    }
}

/// The Parquet file at `path` as the CSV text of its columns (header first, `\n` ended), which
/// the file's typed reader reads.
pub fn csv_text(path: &Path) -> Result<Vec<u8>, FileError> {
    let f = std::fs::File::open(path).map_err(io_error(path))?;
    let rd = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| other(path, e))?
        .with_batch_size(BATCH)
        .build()
        .map_err(|e| other(path, e))?;
    let schema = rd.schema();
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    w.write_record(schema.fields().iter().map(|f| f.name()))
        .map_err(|e| other(path, e))?;
    let mut row: Vec<String> = vec![];
    for batch in rd {
        let batch = batch.map_err(|e| other(path, e))?;
        let cols = batch.columns();
        for r in 0..batch.num_rows() {
            row.clear();
            for c in cols {
                row.push(cell_text(c.as_ref(), r).map_err(|e| other(path, e))?);
            }
            w.write_record(&row).map_err(|e| other(path, e))?;
        }
    }
    w.into_inner().map_err(|e| other(path, e.error()))
}

fn cell_text(c: &dyn Array, r: usize) -> Result<String, String> {
    if c.is_null(r) {
        return Ok(String::new());
    }
    let any = c.as_any();
    if let Some(a) = any.downcast_ref::<Int64Array>() {
        return Ok(a.value(r).to_string());
    }
    if let Some(a) = any.downcast_ref::<Float64Array>() {
        return Ok(a.value(r).to_string());
    }
    if let Some(a) = any.downcast_ref::<StringArray>() {
        return Ok(a.value(r).to_string());
    }
    Err(format!(
        "a column of type {}: lasthop writes Int64, Float64 and Utf8",
        c.data_type()
    ))
}

/// The run file `csv` to read in whichever form the run kept: the CSV file, else its Parquet
/// file as CSV text ([`csv_text`]), else `None`.
pub fn open(csv: &Path) -> Result<Option<Box<dyn Read + Send>>, FileError> {
    if csv.exists() {
        let f = std::fs::File::open(csv).map_err(io_error(csv))?;
        return Ok(Some(Box::new(io::BufReader::with_capacity(1 << 16, f))));
    }
    let pq = parquet_path(csv);
    if pq.exists() {
        return Ok(Some(Box::new(io::Cursor::new(csv_text(&pq)?))));
    }
    Ok(None)
}

/// Whether the run kept the file `csv` in either form.
pub fn exists(csv: &Path) -> bool {
    csv.exists() || parquet_path(csv).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_cells() {
        assert_eq!(kind_of(""), Kind::Empty);
        assert_eq!(kind_of("-12"), Kind::Int);
        assert_eq!(kind_of("007"), Kind::Str);
        assert_eq!(kind_of("18446744073709551615"), Kind::Str);
        assert_eq!(kind_of("0.250000"), Kind::Float);
        assert_eq!(kind_of("NaN"), Kind::Str);
        assert_eq!(kind_of("drop"), Kind::Str);
    }

    #[test]
    fn csv_to_parquet_and_back() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("events.csv");
        let text = "time_ns,event,len,rate,note,none\n\
                    1,arrive,1500,0.500000,\"a,b\",\n\
                    2,drop,,12,x,\n\
                    30000000000,send,40,1.25,,\n";
        std::fs::write(&csv, text).unwrap();
        let pq = csv_to_parquet(&csv).unwrap();
        assert_eq!(pq, dir.path().join("events.parquet"));
        assert!(!csv.exists() && pq.exists() && exists(&csv));
        // Integers as written, floats in their shortest text, strings quoted as needed, empty
        // cells empty.
        let back = String::from_utf8(csv_text(&pq).unwrap()).unwrap();
        assert_eq!(
            back,
            "time_ns,event,len,rate,note,none\n\
             1,arrive,1500,0.5,\"a,b\",\n\
             2,drop,,12,x,\n\
             30000000000,send,40,1.25,,\n"
        );
        let mut s = String::new();
        open(&csv).unwrap().unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, back);
        assert!(open(&dir.path().join("tcp_trace.csv")).unwrap().is_none());
        // The columns are typed.
        let f = std::fs::File::open(&pq).unwrap();
        let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
        let types: Vec<DataType> = b
            .schema()
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        assert_eq!(
            types,
            [
                DataType::Int64,
                DataType::Utf8,
                DataType::Int64,
                DataType::Float64,
                DataType::Utf8,
                DataType::Utf8
            ]
        );
    }
}
