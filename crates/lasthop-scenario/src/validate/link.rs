//! The scenario's link: the link spec file, with `link_set`'s values over the file's.

use lasthop_core::spec::{err, load_file, SpecError};
use lasthop_link::{LinkConfig, LinkSpec};
use std::path::Path;

/// Loads the link spec, with `link_set`'s values over the file's.
pub(crate) fn load_link(path: &Path, link_set: &toml::Table) -> Result<LinkConfig, SpecError> {
    let in_file = |e: SpecError| {
        let file = e.file.clone().unwrap_or_else(|| path.display().to_string());
        let with = if link_set.is_empty() {
            ""
        } else {
            " with link_set"
        };
        err(
            "link",
            format!("{file}{with}: {}", SpecError { file: None, ..e }),
        )
    };
    if link_set.is_empty() {
        return LinkSpec::load(path).map_err(in_file);
    }
    let mut table: toml::Table = load_file(path, lasthop_core::spec::from_toml).map_err(in_file)?;
    lasthop_core::spec::merge_tables(&mut table, link_set);
    lasthop_core::spec::from_table::<LinkSpec>(table, "")
        .and_then(|s| s.validate_in(path.parent().unwrap_or(Path::new(""))))
        .map_err(in_file)
}
