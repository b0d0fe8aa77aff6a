#!/usr/bin/env bash
# Prints a sha256 digest of every output file that the shipped scenarios and the quick-start
# experiment produce in simulation, one line per file. Run it before and after a refactoring:
# the two listings must be identical (`diff <(scripts/output-digests.sh) saved.txt`).
#   scripts/output-digests.sh [LASTHOP_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/lasthop}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in examples/scenarios/*.toml; do
  n=$(basename "$s" .toml)
  case "$n" in bench-* | soak-*) continue ;; esac # long runs for measurements, not outputs
  grep -q "^\[hosts\." "$s" || continue # a link spec kept beside the scenarios
  "$bin" sim "$s" --out "$tmp/sim/$n" >/dev/null
done
"$bin" run experiments/quickstart.toml --out "$tmp/run" --quiet >/dev/null
# Run files name the link spec by its absolute path (and done.json holds a hash of that
# scenario text): hash them with the checkout's path replaced and without that hash, so that
# the digests hold in any clone.
root=$(pwd -P)
(cd "$tmp" && find . -type f | LC_ALL=C sort | while read -r f; do
  case "$f" in
    *.pcap) sum=$(sha256sum < "$f") ;;
    *) sum=$(sed -e "s|$root|<repo>|g" -e '/"scenario_hash"/d' "$f" | sha256sum) ;;
  esac
  echo "${sum%% *}  $f"
done)
