//! The Python package (`python/`): `scripts/test-python.sh` makes a venv under `target/`,
//! installs the package from the repository with pip (maturin builds the native module),
//! runs its pytest tests (against this binary, `LASTHOP_BIN`) and executes the quick-start
//! notebook. Any failing step fails the test.

use std::path::Path;
use std::process::Command;

#[test]
fn python_package_installs_tests_and_runs_its_notebook() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let started = std::time::Instant::now();
    let status = Command::new("bash")
        .arg(root.join("scripts/test-python.sh"))
        .env("LASTHOP_BIN", env!("CARGO_BIN_EXE_lasthop"))
        .status()
        .expect("running scripts/test-python.sh");
    eprintln!(
        "scripts/test-python.sh: {status} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert!(status.success(), "scripts/test-python.sh failed: {status}");
}
