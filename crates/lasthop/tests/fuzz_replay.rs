//! The fuzz targets' short run on stable: every input of the committed corpus
//! (`fuzz/corpus/<target>/`, minimized by `cargo fuzz cmin`, crash reproducers included) goes
//! through the same function the cargo-fuzz target calls (`fuzz/src/lib.rs`), which must not
//! panic. The long runs need nightly and cargo-fuzz (`docs/reliability.md`).

#[path = "../../../fuzz/src/lib.rs"]
mod bodies;

use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn fuzz_corpus_replays_without_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let start = Instant::now();
    let mut total = 0;
    for (name, body) in bodies::TARGETS {
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no corpus", dir.display());
        for f in &files {
            let data = std::fs::read(f).unwrap();
            if let Err(p) = std::panic::catch_unwind(|| body(&data)) {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{name}: {} panicked: {msg}", f.display());
            }
        }
        total += files.len();
    }
    bodies::remove_spec_dir();
    eprintln!("{total} corpus inputs replayed in {:?}", start.elapsed());
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "the replay must stay short"
    );
}
