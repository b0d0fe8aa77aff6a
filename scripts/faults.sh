#!/usr/bin/env bash
# Fault injection (docs/reliability.md, "Faults"): kill -9 at random moments, then resume or
# clean up, and check that nothing differs and nothing is left behind.
#
#   scripts/faults.sh [RUN_KILLS] [EMU_KILLS] [WORK_DIR]     (default 20, 6, a temporary dir)
#
# 1. `lasthop run` on a copy of experiments/seed000-bulk.toml with 3 replications (48 simulated
#    runs, -j 2): one uninterrupted reference run, then RUN_KILLS times: start it into a fresh
#    directory, kill -9 after a random delay between 0 and the reference's wall time, rerun it to
#    the end (resume), and compare the whole results directory with the reference byte for byte
#    (`diff -r`: summary.csv, summary.json, report.html and every run's files).
# 2. `lasthop emu` (root only; skipped otherwise) on examples/scenarios/seed000-e0-2tcp-5s.toml,
#    EMU_KILLS times: kill -9 after a random delay between 0.1 and 8 s (in setup, or while the
#    transfers run), then either `lasthop cleanup` (odd kills) or the next `lasthop emu` into the
#    same directory (even kills; examples/scenarios/passthrough.toml, a second long), and count
#    what the killed run left: its namespaces (`ip netns list`), lh-* devices in the root
#    namespace, its child processes still running 5 s on, its registry entry in /run/lasthop.
# Prints the figures; exits 1 when a resumed run differs or anything is left behind.
# LASTHOP=path/to/lasthop overrides the binary (default target/release/lasthop, built if missing).
set -euo pipefail

RUN_KILLS=${1:-20}
EMU_KILLS=${2:-6}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LH=${LASTHOP:-$ROOT/target/release/lasthop}
[[ -x $LH ]] || (cd "$ROOT" && cargo build --release -p lasthop)
if [[ -n ${3:-} ]]; then W=$3; rm -rf "$W"; mkdir -p "$W"; KEEP=1; else W=$(mktemp -d /tmp/lasthop-faults.XXXXXX); KEEP=0; fi
cleanup_w() { [[ $KEEP == 1 ]] || rm -rf "$W"; }
trap cleanup_w EXIT
FAIL=0

# A random integer in [0, $1).
rnd() { echo $(( ( (RANDOM << 15) | RANDOM ) % $1 )); }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---- 1. lasthop run ------------------------------------------------------------------------
sed -e 's|^replications = 20|replications = 3|' \
    -e "s|\"\.\./examples/|\"$ROOT/examples/|g" \
    "$ROOT/experiments/seed000-bulk.toml" >"$W/exp.toml"
grep -q '^replications = 3$' "$W/exp.toml"
t0=$(now_ms)
"$LH" run "$W/exp.toml" --out "$W/ref" -j 2 -q >/dev/null
T=$(( $(now_ms) - t0 ))
NRUNS=$(find "$W/ref/runs" -name done.json | wc -l)
echo "lasthop run: reference of $NRUNS runs took $T ms"

same=0 differ=0 early=0 stale=0 done_at_kill=""
for i in $(seq 1 "$RUN_KILLS"); do
    out="$W/k$i"
    delay=$(rnd "$T")
    "$LH" run "$W/exp.toml" --out "$out" -j 2 -q >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; else early=$((early + 1)); fi
    wait "$pid" 2>/dev/null || true
    n=$(find "$out/runs" -name done.json 2>/dev/null | wc -l || true)
    done_at_kill="$done_at_kill $n"
    "$LH" run "$W/exp.toml" --out "$out" -j 2 -q >/dev/null 2>"$W/resume$i.err" \
        || { echo "kill $i: the resumed run failed:"; cat "$W/resume$i.err"; FAIL=1; }
    if grep -q '^removed .* temporary files' "$W/resume$i.err"; then stale=$((stale + 1)); fi
    if diff -r "$W/ref" "$out" >"$W/diff$i.txt" 2>&1; then
        same=$((same + 1))
        rm -rf "$out" "$W/diff$i.txt"
    else
        differ=$((differ + 1))
        echo "kill $i after $delay ms: resumed results differ from the reference:"
        head -n 20 "$W/diff$i.txt"
        FAIL=1
    fi
done
echo "lasthop run: $RUN_KILLS kill -9 at random moments (finished runs at the kill:$done_at_kill of $NRUNS; $early finished before the kill; $stale resumes removed half-written temporary files first), resumed: $same identical to the reference, $differ different"

# ---- 2. lasthop emu ------------------------------------------------------------------------
if [[ $(id -u) != 0 || $EMU_KILLS == 0 ]]; then
    [[ $EMU_KILLS == 0 ]] && echo "lasthop emu: no kills asked" || echo "lasthop emu: SKIPPED (needs root)"
    [[ $FAIL == 0 ]] && echo "faults: PASS" || { echo "faults: FAIL"; exit 1; }
    exit 0
fi
left_ns=0 left_dev=0 left_proc=0 left_reg=0 registered=0
for i in $(seq 1 "$EMU_KILLS"); do
    out="$W/emu"
    delay=$(( 100 + $(rnd 7900) ))
    "$LH" emu "$ROOT/examples/scenarios/seed000-e0-2tcp-5s.toml" --out "$out" --quiet >"$W/emu$i.log" 2>&1 &
    pid=$!
    t0=$(now_ms)
    kids=""
    while (( $(now_ms) - t0 < delay )) && kill -0 "$pid" 2>/dev/null; do
        kids="$kids $(pgrep -P "$pid" | tr '\n' ' ' || true)"
        sleep 0.05
    done
    # The run's id, from its registry entry (absent when killed before it registered).
    id=$(grep -l "^pid=$pid\$" /run/lasthop/* 2>/dev/null | head -n 1 | xargs -r basename || true)
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    nsb=$(ip netns list | grep -c "^lh-${id:-none}-" || true)
    if (( i % 2 == 1 )); then
        how="lasthop cleanup"
        "$LH" cleanup >"$W/cleanup$i.log" 2>&1 || { echo "lasthop cleanup failed:"; cat "$W/cleanup$i.log"; FAIL=1; }
    else
        how="next lasthop emu"
        "$LH" emu "$ROOT/examples/scenarios/passthrough.toml" --out "$out" --quiet >"$W/next$i.log" 2>&1 \
            || { echo "next run failed:"; tail -n 5 "$W/next$i.log"; FAIL=1; }
    fi
    [[ -n $id ]] && registered=$((registered + 1))
    ns=$(ip netns list | grep -c "^lh-${id:-none}-" || true)
    dev=$(ip -o link show 2>/dev/null | grep -c ": lh-${id:-none}" || true)
    # The programs die with the emulator (parent-death signal); a killed one is a zombie until
    # init reaps it, so a process counts as left when it still runs (not state Z) 5 s on.
    proc=0
    for t in 1 2 3 4 5 6; do
        proc=0
        for k in $(echo "$kids" | tr ' ' '\n' | sort -u); do
            st=$(awk '{print $3}' "/proc/$k/stat" 2>/dev/null || true)
            [[ -n $st && $st != Z ]] && proc=$((proc + 1))
        done
        (( proc == 0 )) && break
        sleep 1
    done
    reg=0; [[ -n $id && -e /run/lasthop/$id ]] && reg=1
    echo "emu kill $i after $delay ms (run ${id:-not yet registered}, $nsb namespaces at the kill), then $how: left $ns namespaces, $dev devices, $proc processes, $reg registry entries"
    left_ns=$((left_ns + ns)) left_dev=$((left_dev + dev)) left_proc=$((left_proc + proc)) left_reg=$((left_reg + reg))
done
all_ns=$(ip netns list | grep -c '^lh-' || true)
echo "lasthop emu: $EMU_KILLS kill -9 ($registered after the run registered), then cleanup or the next run: left $left_ns namespaces, $left_dev TUN devices, $left_proc processes, $left_reg registry entries; lh-* namespaces on the machine now: $all_ns"
(( left_ns + left_dev + left_proc + left_reg == 0 )) || FAIL=1
[[ $FAIL == 0 ]] && echo "faults: PASS" || { echo "faults: FAIL"; exit 1; }
