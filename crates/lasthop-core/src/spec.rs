//! Spec loading, written once for every kind of spec (link, TCP, scenario, application,
//! experiment): the error type that names the key, the value and what is allowed; TOML parsing
//! that keeps the key path of the first error; reading a file with its path in the message; and
//! the check of user-given names.

use std::fmt;
use std::path::Path;

/// A spec that cannot be used: where, what, and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The file, when the spec came from one.
    pub file: Option<String>,
    /// Dotted key path, e.g. `down.queue.red.min_th` (empty for whole-document errors).
    pub key: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "key `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for SpecError {}

impl SpecError {
    /// The same error seen from a table at `prefix` (`hosts.a.tcp` + `sack` → `hosts.a.tcp.sack`).
    pub fn under(mut self, prefix: &str) -> SpecError {
        self.key = join_key(prefix, &self.key);
        self
    }
}

/// A legal spec with an element that will do nothing (an AQM that can never see a queue, ECN
/// marking with no ECN-capable host, a key the running mode does not read): said on stderr by
/// `check`, `sim`, `emu` and `run`, which still run it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Warning {
    /// Dotted key path of the element that does nothing.
    pub key: String,
    /// Why, and what would make it act.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "warning: {}", self.message)
        } else {
            write!(f, "warning: key `{}`: {}", self.key, self.message)
        }
    }
}

/// A [`Warning`] at `key`.
pub fn warn(key: impl Into<String>, message: impl Into<String>) -> Warning {
    Warning {
        key: key.into(),
        message: message.into(),
    }
}

/// `prefix.key`, or whichever of the two is not empty.
pub fn join_key(prefix: &str, key: &str) -> String {
    match (prefix.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{key}"),
    }
}

/// A spec error at `key` (a dotted path; empty for the whole document). Every spec builds its
/// errors with this.
pub fn err(key: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError {
        file: None,
        key: key.into(),
        message: message.into(),
    }
}

/// Deserializes any spec type from TOML text, naming the key path of the first error (and its
/// line).
pub fn from_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, SpecError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        let mut message = inner.message().to_string();
        if let Some(span) = inner.span() {
            let line = text[..span.start].matches('\n').count() + 1;
            message = format!("{message} (line {line})");
        }
        err(if key == "." { String::new() } else { key }, message)
    })
}

/// Deserializes a spec type from a table already parsed (a part of a larger spec, such as an
/// application's parameters); errors name their key under `prefix`.
pub fn from_table<T: serde::de::DeserializeOwned>(
    table: toml::Table,
    prefix: &str,
) -> Result<T, SpecError> {
    from_value(toml::Value::Table(table), prefix)
}

/// Deserializes a spec type from one value already parsed (a table, a list or a single value);
/// errors name their key under `prefix`.
pub fn from_value<T: serde::de::DeserializeOwned>(
    value: toml::Value,
    prefix: &str,
) -> Result<T, SpecError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." { String::new() } else { key };
        err(join_key(prefix, &key), e.into_inner().message().to_string())
    })
}

/// Puts `over`'s values over `base`'s, key by key: tables merge recursively, anything else
/// (a value, a list) replaces what was there.
pub fn merge_tables(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Reads a spec file and hands its text to `parse`; every error, including one reading the
/// file, names the file.
pub fn load_file<T>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, SpecError>,
) -> Result<T, SpecError> {
    let with_file = |mut e: SpecError| {
        e.file = Some(path.display().to_string());
        e
    };
    let text = read_spec_text(path).map_err(|e| with_file(err("", e.to_string())))?;
    parse(&text).map_err(with_file)
}

/// The most a spec file may hold (the largest shipped one, `experiments/seed003-exp3.toml`, is
/// 60 KB): a spec names a device such as `/dev/zero`, or a huge file, is refused after this
/// many bytes instead of being read whole.
pub const MAX_SPEC_BYTES: u64 = 8 << 20;

/// Reads a spec file's text, refusing one longer than [`MAX_SPEC_BYTES`]. Every spec reader
/// (link, scenario, experiment, `lasthop check`) reads through this; the message says what
/// went wrong, without the path (the caller names the file).
pub fn read_spec_text(path: &Path) -> std::io::Result<String> {
    read_text_limited(path, MAX_SPEC_BYTES, "a spec file")
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot read the file: {e}")))
}

/// Reads at most `limit` bytes of UTF-8 text from `path`; a longer file, or an endless one, is
/// an `InvalidData` error naming the limit and `what` the file is.
pub fn read_text_limited(path: &Path, limit: u64, what: &str) -> std::io::Result<String> {
    let bytes = read_bytes_limited(path, limit, what)?;
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// [`read_text_limited`] for bytes.
pub fn read_bytes_limited(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "longer than {limit} bytes, the most {what} may hold (is it the file you meant?)"
            ),
        ));
    }
    Ok(bytes)
}

/// Checks a user-given name (a host, a host group's member, ...): it becomes part of file and
/// namespace names and a cell of CSV files, so 1 to 32 of a-z, A-Z, 0-9, '_' and '-', not
/// starting with '-' (an option on a command line, a formula in a spreadsheet).
pub fn check_name(key: &str, what: &str, name: &str) -> Result<(), SpecError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(err(
            key,
            format!("invalid {what} {name:?}: allowed 1 to 32 of a-z, A-Z, 0-9, '_' and '-', not starting with '-'"),
        ))
    }
}

/// Checks a name that becomes a directory's name: an experiment's or a scenario's `name`, whose
/// results go to `results/<name>` by default. 1 to 64 of a-z, A-Z, 0-9, '_', '-' and '.', not
/// starting with '.' or '-': no absolute path, no `..`, no hidden directory, no option.
pub fn check_dir_name(key: &str, what: &str, name: &str) -> Result<(), SpecError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(err(
            key,
            format!("invalid {what} {name:?}: it names the default results directory results/<name>, so allowed 1 to 64 of a-z, A-Z, 0-9, '_', '-' and '.', not starting with '.' or '-' (no path)"),
        ))
    }
}

/// Whether a CSV cell starting with `s` would be read as a formula by a spreadsheet (`=`, `+`,
/// `-`, `@`, or a tab or carriage return before one). Names written into CSV files are refused
/// when this holds (numbers are written by the tool, never names).
pub fn formula_leading(s: &str) -> bool {
    s.starts_with(['=', '+', '-', '@', '\t', '\r', '"'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct P {
        a: u32,
    }

    #[test]
    fn keys_are_named_with_their_path() {
        let e = from_toml::<P>("a = 1\nb = 2\n").unwrap_err();
        assert_eq!(e.key, "b");
        assert!(e.message.contains("line 2"), "{e}");
        let t: toml::Table = toml::from_str("a = \"x\"").unwrap();
        let e = from_table::<P>(t, "flows[0]").unwrap_err();
        assert_eq!(e.key, "flows[0].a", "{e}");
        assert_eq!(err("", "m").under("x").key, "x");
        assert_eq!(err("k", "m").under("").key, "k");
    }

    #[test]
    fn a_missing_file_is_named() {
        let e = load_file(Path::new("/nonexistent/x.toml"), |_| Ok(())).unwrap_err();
        assert_eq!(e.file.as_deref(), Some("/nonexistent/x.toml"));
        assert!(e.to_string().contains("cannot read the file"), "{e}");
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("hosts.a", "host name", "mobile-1").is_ok());
        let e = check_name("hosts.a", "host name", "a b").unwrap_err();
        assert!(e.message.contains("a-z"), "{e}");
        assert!(check_name("k", "n", &"x".repeat(33)).is_err());
        let e = check_name("hosts.-a", "host name", "-a").unwrap_err();
        assert!(e.message.contains("not starting with '-'"), "{e}");
    }

    #[test]
    fn directory_names_stay_below_the_results_directory() {
        for ok in ["quickstart", "seed002-emu-low-m8m-sim", "a.b_c", "x"] {
            assert!(
                check_dir_name("name", "experiment name", ok).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "/etc",
            "../../x",
            "..",
            ".",
            ".hidden",
            "-rf",
            "a/b",
            "",
            "a b",
            &"x".repeat(65),
        ] {
            let e = check_dir_name("name", "experiment name", bad).unwrap_err();
            assert_eq!(e.key, "name");
            assert!(e.message.contains("results/<name>"), "{e}");
            assert!(e.message.contains("not starting with '.' or '-'"), "{e}");
        }
    }

    #[test]
    fn formula_leading_cells() {
        for f in ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\"q"] {
            assert!(formula_leading(f), "{f:?}");
        }
        for n in ["good", "a=b", "1-2", ""] {
            assert!(!formula_leading(n), "{n:?}");
        }
    }

    #[test]
    fn spec_reads_are_bounded() {
        // /dev/zero never ends: read whole it would fill the memory.
        let t = std::time::Instant::now();
        let e = read_spec_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(
            e.to_string()
                .contains("longer than 8388608 bytes, the most a spec file may hold"),
            "{e}"
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
        let e = load_file(Path::new("/dev/zero"), |_| Ok(())).unwrap_err();
        assert_eq!(e.file.as_deref(), Some("/dev/zero"));
        assert!(
            e.message.starts_with("cannot read the file: longer than"),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.toml");
        std::fs::write(&p, "a = 1\n").unwrap();
        assert_eq!(read_spec_text(&p).unwrap(), "a = 1\n");
        std::fs::write(&p, vec![b'x'; 11]).unwrap();
        assert!(read_text_limited(&p, 10, "x").is_err());
        assert_eq!(read_text_limited(&p, 11, "x").unwrap().len(), 11);
    }
}
