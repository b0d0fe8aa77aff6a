//! Every shipped scenario and the quick-start experiment give byte-identical outputs to the
//! digests recorded in `golden/output-digests.txt` (sha256 of every file, from
//! `scripts/output-digests.sh`). A refactoring must leave them alone; a change that is meant to
//! change a shipped output regenerates the file and says why in its commit:
//!
//! ```sh
//! cargo build --release -p lasthop && scripts/output-digests.sh > crates/lasthop/tests/golden/output-digests.txt
//! ```

use std::path::Path;
use std::process::Command;

#[test]
fn shipped_outputs_are_byte_identical_to_the_recorded_digests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let o = Command::new("bash")
        .arg(root.join("scripts/output-digests.sh"))
        .arg(env!("CARGO_BIN_EXE_lasthop"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "output-digests.sh failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = String::from_utf8(o.stdout).unwrap();
    let want = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/output-digests.txt"),
    )
    .unwrap();
    let differ: Vec<String> = want
        .lines()
        .zip(got.lines())
        .filter(|(w, g)| w != g)
        .map(|(w, _)| w.split_whitespace().nth(1).unwrap_or(w).to_string())
        .collect();
    assert!(
        got == want,
        "{} of {} outputs differ from the recorded digests (listed {}, produced {}): {:?}",
        differ.len(),
        want.lines().count(),
        want.lines().count(),
        got.lines().count(),
        differ
    );
}
