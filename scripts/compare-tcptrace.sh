#!/usr/bin/env bash
# Compares lasthop's capture analysis with tcptrace (Debian's 6.6.7).
#
#   scripts/compare-tcptrace.sh                 install tcptrace if missing, run the comparison tests
#   scripts/compare-tcptrace.sh --install-only  only make sure tcptrace is installed
#   scripts/compare-tcptrace.sh CAPTURE.pcap    print both tools' per-connection counters for a capture
#
# Installing needs root (or sudo) and Debian's package registry; when it cannot be done the
# script says why and exits non-zero, so CI fails loudly instead of skipping the comparison.
set -euo pipefail
cd "$(dirname "$0")/.."

install_tcptrace() {
    if command -v tcptrace >/dev/null 2>&1; then
        return 0
    fi
    echo "tcptrace not found; installing the Debian package" >&2
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo -n"
        else
            echo "error: tcptrace is missing and this is not root (no sudo either): cannot install it" >&2
            return 1
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: tcptrace is missing and there is no apt-get to install it with" >&2
        return 1
    fi
    if ! $sudo apt-get update -qq >&2; then
        echo "error: apt-get update failed: cannot install tcptrace" >&2
        return 1
    fi
    if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq tcptrace >&2; then
        echo "error: apt-get install tcptrace failed" >&2
        return 1
    fi
    command -v tcptrace >/dev/null 2>&1 || {
        echo "error: tcptrace still not on PATH after installing" >&2
        return 1
    }
}

case "${1:-}" in
--install-only)
    install_tcptrace
    ;;
"")
    install_tcptrace
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
    cargo test -p lasthop-analysis --test tcptrace
    ;;
*)
    install_tcptrace
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    for f in "$@"; do
        echo "== lasthop analyze --long $f"
        # tcptrace misreads nanosecond pcaps (the simulator's): it gets a microsecond copy
        cargo run -q -p lasthop -- analyze --long "$f" --usec-copy "$tmp/usec.pcap"
        echo "== tcptrace -l -r -n $f"
        tcptrace -l -r -n "$tmp/usec.pcap" | grep -E "host |total packets|pure acks|actual data|rexmt data|unique bytes|outoforder|zwnd probe pkts|duplicate acks|triple dupacks|sack pkts|RTT samples|RTT (min|avg|max):"
    done
    ;;
esac
