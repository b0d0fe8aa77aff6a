//! Rows of the crates' typed readers turned into columns: a serde serializer that takes any
//! row struct of scalars (the row types of `lasthop_analysis::files`, `lasthop_link::meter`
//! and `lasthop_link::event`) and appends each field to the column of its name. The values
//! are those the row would write to its CSV file: a number a row writes with fixed decimals
//! (`fmt::f6`, `fmt::f3`) arrives as its text and is read back as that number.

use serde::ser::{self, Impossible, Serialize};
use std::fmt;

/// One value as a row serialized it.
#[derive(Clone, Debug)]
pub enum Cell {
    F(f64),
    I(i64),
    U(u64),
    B(bool),
    /// A string field, or a `1` / `0` flag, or an absent number's empty cell.
    Str(String),
    /// A number written with fixed decimals (`collect_str`).
    Num(String),
    Null,
}

/// A finished column, typed.
pub enum Column {
    Float(Vec<f64>),
    /// Values and, when some are absent, which are present.
    Int(Vec<i64>, Option<Vec<bool>>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

/// Columns by name, in the order the rows' fields first came.
#[derive(Default)]
pub struct Columns {
    pub names: Vec<String>,
    cells: Vec<Vec<Cell>>,
    pub rows: usize,
}

impl Columns {
    /// Appends one row.
    pub fn push<T: Serialize>(&mut self, row: &T) -> Result<(), Error> {
        row.serialize(RowSer {
            cols: self,
            next: 0,
        })?;
        self.rows += 1;
        for c in &mut self.cells {
            if c.len() < self.rows {
                c.push(Cell::Null);
            }
        }
        Ok(())
    }

    fn slot(&mut self, name: &str, hint: usize) -> usize {
        if self.names.get(hint).is_some_and(|n| n == name) {
            return hint;
        }
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return i;
        }
        self.names.push(name.to_string());
        self.cells.push(vec![Cell::Null; self.rows]);
        self.names.len() - 1
    }

    /// The typed columns: a column with a fixed-decimals number is float (empty cells NaN);
    /// else with a float, float; else with integers, integers (absent ones masked); else with
    /// booleans, or only `1` / `0` flags, boolean; else only absent numbers, float (all NaN);
    /// else strings.
    pub fn finish(self) -> Vec<(String, Column)> {
        self.names
            .into_iter()
            .zip(self.cells)
            .map(|(n, c)| (n, typed(c)))
            .collect()
    }
}

fn typed(cells: Vec<Cell>) -> Column {
    let any = |f: fn(&Cell) -> bool| cells.iter().any(f);
    let float = |c: &Cell| match c {
        Cell::F(v) => *v,
        Cell::I(v) => *v as f64,
        Cell::U(v) => *v as f64,
        Cell::B(b) => *b as u8 as f64,
        Cell::Num(s) | Cell::Str(s) => s.trim().parse().unwrap_or(f64::NAN),
        Cell::Null => f64::NAN,
    };
    if any(|c| matches!(c, Cell::Num(_) | Cell::F(_))) {
        return Column::Float(cells.iter().map(float).collect());
    }
    if any(|c| matches!(c, Cell::I(_) | Cell::U(_))) {
        let mask: Vec<bool> = cells.iter().map(|c| !matches!(c, Cell::Null)).collect();
        let vals = cells
            .iter()
            .map(|c| match c {
                Cell::I(v) => *v,
                Cell::U(v) => *v as i64,
                Cell::B(b) => *b as i64,
                _ => 0,
            })
            .collect();
        let all = mask.iter().all(|m| *m);
        return Column::Int(vals, (!all).then_some(mask));
    }
    let flag =
        |c: &Cell| matches!(c, Cell::B(_)) || matches!(c, Cell::Str(s) if s == "0" || s == "1");
    if !cells.is_empty() && cells.iter().all(flag) {
        return Column::Bool(
            cells
                .iter()
                .map(|c| matches!(c, Cell::B(true)) || matches!(c, Cell::Str(s) if s == "1"))
                .collect(),
        );
    }
    let absent = |c: &Cell| matches!(c, Cell::Null) || matches!(c, Cell::Str(s) if s.is_empty());
    if !cells.is_empty() && cells.iter().all(absent) {
        return Column::Float(vec![f64::NAN; cells.len()]);
    }
    Column::Str(
        cells
            .into_iter()
            .map(|c| match c {
                Cell::Str(s) | Cell::Num(s) => s,
                Cell::Null => String::new(),
                Cell::F(v) => v.to_string(),
                Cell::I(v) => v.to_string(),
                Cell::U(v) => v.to_string(),
                Cell::B(b) => (b as u8).to_string(),
            })
            .collect(),
    )
}

#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Error {}
impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, Error> {
    Err(Error(format!(
        "a row field of an unsupported kind ({what})"
    )))
}

/// Serializes one row: a struct of scalars.
struct RowSer<'a> {
    cols: &'a mut Columns,
    next: usize,
}

impl ser::SerializeStruct for RowSer<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let cell = value.serialize(CellSer)?;
        let i = self.cols.slot(key, self.next);
        self.next = i + 1;
        self.cols.cells[i].push(cell);
        Ok(())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

macro_rules! refuse {
    ($($m:ident($($t:ty),*)),* $(,)?) => {
        $(fn $m(self, $(_: $t),*) -> Result<Self::Ok, Error> { unsupported(stringify!($m)) })*
    };
}

impl<'a> ser::Serializer for RowSer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = RowSer<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<RowSer<'a>, Error> {
        Ok(self)
    }
    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Error> {
        unsupported("option")
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        unsupported("newtype")
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        unsupported("variant")
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        unsupported("seq")
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        unsupported("tuple")
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        unsupported("tuple struct")
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        unsupported("tuple variant")
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        unsupported("map")
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        unsupported("struct variant")
    }
}

/// Serializes one field's value into a [`Cell`].
struct CellSer;

impl ser::Serializer for CellSer {
    type Ok = Cell;
    type Error = Error;
    type SerializeSeq = Impossible<Cell, Error>;
    type SerializeTuple = Impossible<Cell, Error>;
    type SerializeTupleStruct = Impossible<Cell, Error>;
    type SerializeTupleVariant = Impossible<Cell, Error>;
    type SerializeMap = Impossible<Cell, Error>;
    type SerializeStruct = Impossible<Cell, Error>;
    type SerializeStructVariant = Impossible<Cell, Error>;

    fn serialize_bool(self, v: bool) -> Result<Cell, Error> {
        Ok(Cell::B(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Cell, Error> {
        Ok(Cell::I(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Cell, Error> {
        Ok(Cell::I(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Cell, Error> {
        Ok(Cell::I(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Cell, Error> {
        Ok(Cell::I(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Cell, Error> {
        Ok(Cell::U(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Cell, Error> {
        Ok(Cell::U(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Cell, Error> {
        Ok(Cell::U(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Cell, Error> {
        Ok(Cell::U(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Cell, Error> {
        Ok(Cell::F(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Cell, Error> {
        Ok(Cell::F(v))
    }
    fn serialize_char(self, v: char) -> Result<Cell, Error> {
        Ok(Cell::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Cell, Error> {
        Ok(Cell::Str(v.to_string()))
    }
    fn collect_str<T: ?Sized + fmt::Display>(self, v: &T) -> Result<Cell, Error> {
        Ok(Cell::Num(v.to_string()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Cell, Error> {
        unsupported("bytes")
    }
    fn serialize_none(self) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Cell, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Cell, Error> {
        Ok(Cell::Str(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Cell, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Cell, Error> {
        unsupported("variant")
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        unsupported("seq")
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        unsupported("tuple")
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        unsupported("tuple struct")
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        unsupported("tuple variant")
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        unsupported("map")
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        unsupported("struct")
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        unsupported("struct variant")
    }
}
