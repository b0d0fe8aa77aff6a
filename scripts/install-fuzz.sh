#!/usr/bin/env bash
# Installs what the fuzz targets need when it is missing: Rust's nightly toolchain (libFuzzer's
# sanitizer flags are nightly-only) and cargo-fuzz, pinned. `crates/lasthop/tests/fuzz_short.rs`
# runs it on a machine that has neither, so that `cargo test --workspace --release` needs nothing
# installed by hand. Idempotent; prints what it does on stderr. Takes about 2 minutes the first
# time (cargo-fuzz is built from crates.io), nothing after.
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.1

die() {
    echo "install-fuzz: $*" >&2
    exit 1
}

command -v rustup >/dev/null 2>&1 || die "rustup is missing: install Rust with rustup (https://rustup.rs)"

# The outer `cargo test` pins its own toolchain through this variable; the nightly check and the
# build of cargo-fuzz must not inherit it.
unset RUSTUP_TOOLCHAIN CARGO_TARGET_DIR

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "install-fuzz: installing the nightly toolchain (rustup, minimal profile)" >&2
    rustup toolchain install nightly --profile minimal >&2 || die "rustup toolchain install nightly failed"
fi

have_fuzz() {
    cargo +nightly fuzz --version >/dev/null 2>&1
}

if ! have_fuzz; then
    echo "install-fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION (cargo install, about 2 minutes)" >&2
    cargo +stable install --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION" >&2 ||
        die "cargo install cargo-fuzz $CARGO_FUZZ_VERSION failed"
fi
have_fuzz || die "cargo-fuzz was installed but \`cargo +nightly fuzz --version\` still fails (is ~/.cargo/bin on PATH?)"
echo "install-fuzz: $(cargo +nightly fuzz --version)" >&2
