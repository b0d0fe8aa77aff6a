//! No import circle between the files of a crate: if `a.rs` uses `crate::b`, nothing `b.rs`
//! uses (directly or through others) may use `crate::a`. Checked over the source text: every
//! `crate::x`, `super::x` and `use crate::{x, y::z}` outside comments and test modules is an
//! edge from the file to the file of the longest module path it names; a path to an item of
//! `lib.rs` (a re-export) is an edge to `lib.rs`, which uses every module, so the crate's own
//! files name each other by their modules, never through the root.
//!
//! Checked for `lasthop-experiment`, `lasthop-core`, `lasthop-link`, `lasthop-scenario` and
//! `lasthop-report`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module path of every `.rs` file under `src` ("" for `lib.rs`).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts
                .last()
                .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
            {
                parts.pop();
            }
            out.insert(parts.join("::"), p);
        }
    }
    out
}

/// The text of a file without comments, strings' contents and its test modules.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::new();
    for line in text.lines() {
        let l = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        // String literals hold messages that may name paths.
        let mut in_str = false;
        let mut prev = ' ';
        for c in l.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
                out.push('"');
            } else if !in_str {
                out.push(c);
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

fn ident(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// The module paths named after `crate::` (or `super::`, resolved) in `code`.
fn paths(code: &str, here: &str) -> Vec<String> {
    let mut out = vec![];
    for prefix in ["crate::", "super::"] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            // `super::super::x`: one level up per `super`, from the file's own module.
            let mut base: Vec<&str> = if prefix == "crate::" {
                vec![]
            } else {
                let mut b: Vec<&str> = here.split("::").filter(|p| !p.is_empty()).collect();
                b.pop();
                while let Some(r) = rest.strip_prefix("super::") {
                    b.pop();
                    rest = r;
                }
                b
            };
            let base_s = base.join("::");
            let join = |p: &str| {
                if base_s.is_empty() {
                    p.to_string()
                } else {
                    format!("{base_s}::{p}")
                }
            };
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a, b::c, d::{e, f}}`: the first name of each top-level item.
                let mut depth = 0;
                let mut item = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            out.push(join(item.trim()));
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    if depth == 0 && c != '{' {
                        item.push(c);
                    }
                }
                if !item.trim().is_empty() {
                    out.push(join(item.trim()));
                }
                continue;
            }
            let mut p = String::new();
            let mut r = rest;
            loop {
                let (id, after) = ident(r);
                if id.is_empty() {
                    break;
                }
                if !p.is_empty() {
                    p.push_str("::");
                }
                p.push_str(id);
                match after.strip_prefix("::") {
                    Some(a) if a.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                        r = a
                    }
                    _ => break,
                }
            }
            base.clear();
            out.push(join(&p));
        }
    }
    out
}

/// The file (module) a path names: its longest prefix that is a module.
fn resolve(path: &str, mods: &BTreeMap<String, PathBuf>) -> String {
    let parts: Vec<&str> = path
        .split("::")
        .map(|p| p.split_whitespace().next().unwrap_or(""))
        .collect();
    for n in (1..=parts.len()).rev() {
        let m = parts[..n].join("::");
        if mods.contains_key(&m) {
            return m;
        }
    }
    String::new()
}

/// The import circles of the crate whose sources are in `src`: each as its files.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mods = modules(src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, file) in &mods {
        let text = std::fs::read_to_string(file).unwrap();
        let mut to = BTreeSet::new();
        for p in paths(&code(&text), m) {
            let t = resolve(&p, &mods);
            if &t != m {
                to.insert(t);
            }
        }
        // A file declaring submodules (`mod x;`) uses them.
        for line in code(&text).lines() {
            let l = line.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            if let Some(name) = l.strip_prefix("mod ").and_then(|x| x.strip_suffix(';')) {
                let sub = if m.is_empty() {
                    name.to_string()
                } else {
                    format!("{m}::{name}")
                };
                if mods.contains_key(&sub) {
                    to.insert(sub);
                }
            }
        }
        edges.insert(m.clone(), to);
    }
    // Tarjan's strongly connected components.
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_string(), t.next);
        t.low.insert(v.to_string(), t.next);
        t.next += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        for w in t.edges.get(v).cloned().unwrap_or_default() {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let l = t.low[v].min(t.low[&w]);
                t.low.insert(v.to_string(), l);
            } else if t.on.contains(&w) {
                let l = t.low[v].min(t.index[&w]);
                t.low.insert(v.to_string(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = vec![];
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = w == v;
                c.push(if w.is_empty() { "lib".into() } else { w });
                if done {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        next: 0,
        out: vec![],
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn lasthop_experiment_has_no_import_circle() {
    let c = circles(&crate_src("lasthop-experiment"));
    assert!(c.is_empty(), "files that import each other: {c:?}");
}

#[test]
fn lasthop_core_has_no_import_circle() {
    let c = circles(&crate_src("lasthop-core"));
    assert!(c.is_empty(), "files that import each other: {c:?}");
}

#[test]
fn lasthop_link_has_no_import_circle() {
    let c = circles(&crate_src("lasthop-link"));
    assert!(c.is_empty(), "files that import each other: {c:?}");
}

#[test]
fn lasthop_scenario_has_no_import_circle() {
    let c = circles(&crate_src("lasthop-scenario"));
    assert!(c.is_empty(), "files that import each other: {c:?}");
}

#[test]
fn lasthop_report_has_no_import_circle() {
    let c = circles(&crate_src("lasthop-report"));
    assert!(c.is_empty(), "files that import each other: {c:?}");
}

/// The checker finds a circle through a grouped `use`, a `super::` path and a re-export of the
/// root, and none where a test module or a comment names the other file.
#[test]
fn the_checker_finds_circles() {
    let d = tempfile::tempdir().unwrap();
    let w = |f: &str, t: &str| {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    };
    w(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub use a::A;\n",
    );
    w("a.rs", "use crate::{b::B, c};\npub struct A;\n");
    w(
        "b.rs",
        "pub struct B;\n// crate::a in a comment\n#[cfg(test)]\nmod tests { use crate::a::A; }\n",
    );
    w("c.rs", "pub fn f() {}\n");
    assert!(circles(d.path()).is_empty());
    w("c.rs", "pub fn f() { let _ = crate::A; }\n");
    assert_eq!(circles(d.path()), vec![vec!["a", "c", "lib"]]);
    w("c.rs", "pub fn f() {}\n");
    w("b.rs", "pub mod x;\npub struct B;\n");
    w("b/x.rs", "use super::super::a::A;\n");
    assert_eq!(circles(d.path()), vec![vec!["a", "b", "b::x"]]);
}
