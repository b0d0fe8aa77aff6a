#!/usr/bin/env bash
# Soak test of the emulator (docs/reliability.md, "Soak"). Needs root.
#
#   scripts/soak.sh [MINUTES] [OUT_DIR]        (default 30 minutes, /tmp/lasthop-soak)
#
# Runs examples/scenarios/soak-seed002-high.toml (seed 002's high-ARQ link, a bulk transfer each
# way and a CBR UDP stream) for MINUTES with `lasthop emu`, and prints:
#   - the emulator process's resident memory, sampled every 10 s, and its spread after warm-up
#     (the first 20 % of the run, at most 5 minutes): flat means within 10 %;
#   - release lateness (events.csv `actual_ns` - `time_ns`) in the first and the last window of
#     the run (5 minutes, or a third of a shorter run): p50, p99, max;
#   - packet accounting: every packet a host's capture shows it sent (read from its TUN) is an
#     `arrive` in events.csv, and every `release` is in the receiving host's capture, as multisets
#     of (flow, IP id, TCP seq/ack, length);
#   - what is left behind: lh-* namespaces, lh-* TUN devices in the root namespace, and the
#     emulator's child processes still alive;
#   - the load average at the start and at the end (other work on the machine moves lateness).
# Exits 1 when a check fails. LASTHOP=path/to/lasthop overrides the binary (default
# target/release/lasthop, built if missing).
set -euo pipefail

MIN=${1:-30}
OUT=${2:-/tmp/lasthop-soak}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LH=${LASTHOP:-$ROOT/target/release/lasthop}
[[ $(id -u) == 0 ]] || { echo "soak.sh: needs root (lasthop emu)" >&2; exit 2; }
[[ -x $LH ]] || (cd "$ROOT" && cargo build --release -p lasthop)

SECS=$((MIN * 60))
WORK=$(mktemp -d /tmp/lasthop-soak-spec.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# The scenario with its duration (and the CBR stream's) set, and the link path made absolute.
sed -e "s|duration = \"1800s\"|duration = \"${SECS}s\"|" \
    -e "s|^link = \"\.\./links/|link = \"$ROOT/examples/links/|" \
    "$ROOT/examples/scenarios/soak-seed002-high.toml" >"$WORK/soak.toml"

rm -rf "$OUT"
mkdir -p "$OUT"
echo "soak: $MIN min on seed002-high, output $OUT, load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$LH" emu "$WORK/soak.toml" --out "$OUT/run" >"$OUT/stdout.txt" 2>"$OUT/stderr.txt" &
EMU=$!
START=$(date +%s)
echo "t_s,rss_kb,load1" >"$OUT/rss.csv"
: >"$OUT/children.txt"
while kill -0 "$EMU" 2>/dev/null; do
    t=$(($(date +%s) - START))
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$EMU/status" 2>/dev/null || true)
    [[ -n $rss ]] && echo "$t,$rss,$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/rss.csv"
    pgrep -P "$EMU" >>"$OUT/children.txt" 2>/dev/null || true
    sleep 10
done
set +e
wait "$EMU"
RC=$?
set -e
echo "emulator exit status $RC, load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E '^run |releases' "$OUT/stdout.txt" || true
grep -v '^\[' "$OUT/stderr.txt" || true
grep '^\[' "$OUT/stderr.txt" | tail -n 1 || true

FAIL=0
[[ $RC == 0 ]] || { echo "FAIL: lasthop emu exited with $RC"; FAIL=1; }

# Left behind.
sleep 1
NS=$(ip netns list | grep -c '^lh-' || true)
TUNS=$(ip -o link show 2>/dev/null | grep -c ': lh-' || true)
ALIVE=0
for p in $(sort -u "$OUT/children.txt"); do
    if kill -0 "$p" 2>/dev/null; then ALIVE=$((ALIVE + 1)); echo "still alive: $(ps -o pid=,args= -p "$p")"; fi
done
echo "left behind: $NS lh-* namespaces, $TUNS lh-* devices in the root namespace, $ALIVE of $(sort -u "$OUT/children.txt" | wc -l) child processes alive"
[[ $NS == 0 && $TUNS == 0 && $ALIVE == 0 ]] || FAIL=1

python3 - "$OUT" "$SECS" <<'PY' || FAIL=1
import csv, struct, sys, collections, os
out, secs = sys.argv[1], int(sys.argv[2])
run = os.path.join(out, "run")
ok = True

# Resident memory.
rows = list(csv.DictReader(open(os.path.join(out, "rss.csv"))))
warm = min(secs * 0.2, 300)
after = [int(r["rss_kb"]) for r in rows if float(r["t_s"]) >= warm]
if after:
    lo, hi = min(after), max(after)
    spread = (hi - lo) / lo * 100
    print(f"RSS: {len(rows)} samples; after {warm:.0f} s warm-up min {lo} kB max {hi} kB "
          f"first {after[0]} kB last {after[-1]} kB: spread {spread:.1f} % (limit 10 %)")
    loads = [float(r["load1"]) for r in rows]
    print(f"load average (1 min) during the run: min {min(loads):.2f} median "
          f"{sorted(loads)[len(loads)//2]:.2f} max {max(loads):.2f}")
    ts = [float(r["t_s"]) for r in rows if float(r["t_s"]) >= warm]
    if len(after) > 1 and ts[-1] > ts[0]:
        print(f"  RSS growth after warm-up: {(after[-1] - after[0]) / (ts[-1] - ts[0]) * 3600:.0f} kB per hour")
    if spread > 10:
        print("FAIL: resident memory not flat"); ok = False
else:
    print("FAIL: no RSS samples after warm-up"); ok = False

# Events.
arrive, release = collections.Counter(), collections.Counter()
late = []  # (time_ns, lateness_ns)
with open(os.path.join(run, "events.csv")) as f:
    for r in csv.DictReader(f):
        ev = r["event"]
        if ev not in ("arrive", "release"):
            continue
        key = (r["flow"], int(r["ip_id"] or 0), r["tcp_seq"], r["tcp_ack"], int(r["bytes"]))
        if ev == "arrive":
            arrive[key] += 1
        else:
            release[key] += 1
            if r["actual_ns"]:
                late.append((int(r["time_ns"]), int(r["actual_ns"]) - int(r["time_ns"])))

def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")

win = min(300, secs / 3) * 1e9
end = max(t for t, _ in late) if late else 0
first = [l for t, l in late if t < win]
last = [l for t, l in late if t >= end - win]
print(f"lateness over {len(late)} releases: p50 {q([l for _, l in late], .5)/1e3:.1f} us "
      f"p99 {q([l for _, l in late], .99)/1e3:.1f} us max {max(l for _, l in late)/1e3:.1f} us")
for name, v, lo, hi in (("first", first, 0, win / 1e9), ("last", last, (end - win) / 1e9, end / 1e9)):
    ld = sorted(float(r["load1"]) for r in rows if lo <= float(r["t_s"]) <= hi)
    print(f"  {name} {win/60e9:.1f} min: {len(v)} releases, p50 {q(v, .5)/1e3:.1f} us "
          f"p99 {q(v, .99)/1e3:.1f} us max {max(v)/1e3:.1f} us, {sum(1 for l in v if l > 1e6)} over 1 ms; "
          f"load average (1 min) median {ld[len(ld)//2] if ld else float('nan'):.2f}")
if first and last and q(last, .99) > 2 * q(first, .99) and q(last, .99) > 1e6:
    print("FAIL: lateness p99 grew over the run (more than twice, and over 1 ms)"); ok = False

# Captures.
hosts = list(csv.DictReader(open(os.path.join(run, "hosts.csv"))))
def ip4(b): return ".".join(str(x) for x in b)
sent, recv = collections.Counter(), collections.Counter()
other = 0
for h in hosts:
    addr = h["address"]
    data = open(os.path.join(run, h["host"] + ".pcap"), "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    en = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack(en + "IIII", data[off:off + 16])
        p = data[off + 16: off + 16 + incl]
        off += 16 + incl
        if len(p) < 20 or p[0] >> 4 != 4:
            other += 1
            continue
        ihl = (p[0] & 15) * 4
        tot, ipid, proto = struct.unpack(">H", p[2:4])[0], struct.unpack(">H", p[4:6])[0], p[9]
        src, dst = ip4(p[12:16]), ip4(p[16:20])
        l4 = p[ihl:]
        if proto == 6:
            sp, dp, seq, ack = struct.unpack(">HHII", l4[:12])
            flow, s, a = f"tcp:{src}:{sp}>{dst}:{dp}", str(seq), str(ack)
        elif proto == 17:
            sp, dp = struct.unpack(">HH", l4[:4])
            flow, s, a = f"udp:{src}:{sp}>{dst}:{dp}", "", ""
        else:
            other += 1
            continue
        key = (flow, ipid, s, a, tot)
        if src == addr:
            sent[key] += 1
        elif dst == addr:
            recv[key] += 1
        else:
            other += 1
n_sent, n_recv = sum(sent.values()), sum(recv.values())
miss_arr = sent - arrive
extra_arr = arrive - sent
miss_cap = release - recv
extra_cap = recv - release
print(f"packets: {n_sent} read from the TUNs, {sum(arrive.values())} arrivals in events.csv, "
      f"{sum(release.values())} releases, {n_recv} written to the TUNs; {other} other captured packets")
print(f"  read but no arrival: {sum(miss_arr.values())}; arrival not in a capture: {sum(extra_arr.values())}; "
      f"released but not in the receiver's capture: {sum(miss_cap.values())}; "
      f"captured as received without a release: {sum(extra_cap.values())}")
if miss_arr or extra_arr or miss_cap or extra_cap or other:
    print("FAIL: packets not accounted for"); ok = False
sys.exit(0 if ok else 1)
PY
if [[ $FAIL == 0 ]]; then echo "soak: PASS"; else echo "soak: FAIL"; exit 1; fi
