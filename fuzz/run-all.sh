#!/usr/bin/env bash
# Runs the fuzz targets one after another (docs/reliability.md, "Measured runs"), each from a
# copy of its committed corpus, under nice -n 19, then set-cover-merges what it found.
#
#   fuzz/run-all.sh [SECONDS] [WORK_DIR] [TARGET...]   (default 600 s, /tmp/lasthop-fuzz, all six)
#
# For each target: WORK_DIR/corpus/<target> starts as a copy of fuzz/corpus/<target> and grows;
# WORK_DIR/<target>.log is libFuzzer's output (its last lines give executions, coverage and
# whether it crashed); WORK_DIR/merged/<target> is libFuzzer's smallest covering set of the
# grown corpus (-set_cover_merge=1). Crashes land in fuzz/artifacts/<target>/.
# fuzz/keep-small.sh then picks the committed corpus from the merged set.
set -uo pipefail

SECS=${1:-600}
W=${2:-/tmp/lasthop-fuzz}
shift 2 2>/dev/null || shift $#
TARGETS=("$@")
[[ ${#TARGETS[@]} == 0 ]] && TARGETS=(tcp_input link_spec scenario_spec experiment_spec link_model pcap_reader)
cd "$(dirname "$0")"
mkdir -p "$W/corpus" "$W/merged"
for t in "${TARGETS[@]}"; do
    rm -rf "${W:?}/corpus/$t" "${W:?}/merged/$t"
    cp -r "corpus/$t" "$W/corpus/$t"
    mkdir -p "$W/merged/$t"
    echo "$(date -u +%T) $t: fuzzing for $SECS s, load $(cut -d' ' -f1-3 /proc/loadavg)"
    nice -n 19 cargo +nightly fuzz run "$t" -s none -a "$W/corpus/$t" -- \
        -max_total_time="$SECS" -print_final_stats=1 >"$W/$t.log" 2>&1
    echo "$(date -u +%T) $t: exit $?; $(grep -E '^Done|stat::number_of_executed_units|DONE' "$W/$t.log" | tr '\n' ' ')"
    grep -E 'ERROR|crash-|Test unit written' "$W/$t.log" | head -n 5
    nice -n 19 cargo +nightly fuzz run "$t" -s none -a "$W/merged/$t" "$W/corpus/$t" -- \
        -set_cover_merge=1 >"$W/$t.merge.log" 2>&1
    echo "$(date -u +%T) $t: merged: $(grep -E 'MERGE-OUTER: [0-9]+ new files' "$W/$t.merge.log" | tail -n 1); $(ls "$W/merged/$t" | wc -l) files"
done
