#!/usr/bin/env bash
# Replaces the committed corpus of each target with the smallest inputs of its set-cover-merged
# set (fuzz/run-all.sh's WORK_DIR/merged/<target>) up to LIMIT bytes in all (docs/reliability.md:
# the committed corpus stays small; the replay test runs all of it in cargo test).
#
#   fuzz/keep-small.sh [WORK_DIR] [LIMIT] [TARGET...]   (default /tmp/lasthop-fuzz, 40960, all six)
#
# Crash reproducers named repro-* in fuzz/corpus/<target> are always kept.
set -euo pipefail

W=${1:-/tmp/lasthop-fuzz}
LIMIT=${2:-40960}
shift 2 2>/dev/null || shift $#
TARGETS=("$@")
[[ ${#TARGETS[@]} == 0 ]] && TARGETS=(tcp_input link_spec scenario_spec experiment_spec link_model pcap_reader)
cd "$(dirname "$0")"
for t in "${TARGETS[@]}"; do
    m="$W/merged/$t"
    [[ -d $m && -n $(ls -A "$m") ]] || { echo "$t: no merged set in $m, kept as it is"; continue; }
    find "corpus/$t" -maxdepth 1 -type f ! -name 'repro-*' -delete
    total=0 n=0
    while read -r size f; do
        (( total + size > LIMIT )) && break
        cp "$m/$f" "corpus/$t/$f"
        total=$((total + size)) n=$((n + 1))
    done < <(cd "$m" && find . -maxdepth 1 -type f -printf '%s %f\n' | sort -n -k1,1 -k2,2)
    echo "$t: kept $n of $(ls "$m" | wc -l) merged inputs, $total bytes"
done
