#!/usr/bin/env python3
"""Seed 001 (Sarolahti 2000) beside our simulator: every table of its Appendix A (Tables 14-47),
the summary tables of its text (Tables 3-13), the figures its text quotes, and its conclusions
(research extract B.7) checked one by one. Prints the markdown of the seed 001 section of
docs/seed-comparison.md.

Usage:
    scripts/seed001-tables.py PATH/TO/lasthop [--out DIR] [--quick] [--reuse]

Runs experiments/seed001-{single,single-random,2par,4par}.toml with the given binary into DIR
(default: a temporary directory; `--reuse` keeps finished runs there) and reads their
summary.csv, their references (the appendix values, written by scripts/seed001-experiments.py)
and, for Tables 3 and 4, the first run of each no-delay baseline point (events.csv,
tcp_trace.csv, fixed.pcap). `--quick` runs one replication per point (what CI does, to keep the
script working; its numbers are not the doc's). Cells are "ours / seed"; a "*" marks a
median more than 3 % away from the seed's.

The random-delay points are run a second time with many replications (SPREADS: 1 000 for one
connection, 400 for two and four; 20 with `--quick`): the medians of subsets of the seed's size
(50, or 20 in parallel) drawn from them (the same replications for every variant, as the seed's
common random sequence) show how far one such median, the seed's or ours, can fall from the
model's own, and the random-delay conclusions are checked on the large sample with the share of
50-replication experiments in which they hold.

Percentiles are linear interpolation between order statistics, as in the summaries. Standard
library only.
"""

import argparse
import csv
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = ["seed001-single", "seed001-single-random", "seed001-2par", "seed001-4par"]
# The random-delay points again, with many replications, into NAME + "-spread": one connection
# (1 000 replications, subsets of the seed's 50) and two or four (400, subsets of 20).
RANDOM = "seed001-single-random"
SPREADS = {RANDOM: (1000, 50), "seed001-2par": (400, 20), "seed001-4par": (400, 20)}
SPREAD_QUICK = 20
DRAWS = 2000

DELAY_LABEL = {
    "none": "–", "rand": "rand. 0.01, 6 s",
}


def delay_label(code):
    if code in DELAY_LABEL:
        return DELAY_LABEL[code]
    m = re.match(r"d([\d+]+)x([\d.]+)$", code)
    nths = m.group(1).split("+")
    return " & ".join(f"{n}th" for n in nths) + f", {m.group(2)} s"


# ---------------------------------------------------------------------------------------------
# Running and reading.


def run_experiments(binary, out, quick, reuse):
    tmp = tempfile.mkdtemp(prefix="seed001-specs-")
    for name in EXPERIMENTS:
        text = open(os.path.join(ROOT, "experiments", f"{name}.toml")).read()
        text = text.replace('"../examples/', f'"{ROOT}/examples/')
        if quick:
            text = re.sub(r"^replications = \d+", "replications = 1", text, flags=re.M)
        spec = os.path.join(tmp, f"{name}.toml")
        open(spec, "w").write(text)
        # Tables 3 and 4 read replication 0's tcp_trace.csv, events.csv and capture, which a
        # sweep keeps only for its report run unless asked.
        lasthop_run(binary, spec, os.path.join(out, name), reuse, "all")
    # The random-delay points once more with many replications (only metrics.json is read).
    for name, (n, _) in SPREADS.items():
        spec = tomllib.load(open(os.path.join(ROOT, "experiments", f"{name}.toml"), "rb"))
        cases = {p: v for p, v in spec["matrix"]["case"].items() if p.endswith("_rand")}
        lines = [f"name = {toml_value(name + '-spread')}",
                 f"scenario = {toml_value(os.path.join(ROOT, 'experiments', spec['scenario']))}",
                 'mode = "sim"', f"replications = {SPREAD_QUICK if quick else n}",
                 f"seed = {spec['seed']}", f"classes = {toml_value(spec['classes'])}", "",
                 "[matrix.case]"]
        for p, v in cases.items():
            v = {k: (os.path.join(ROOT, "experiments", x) if k == "link" else x)
                 for k, x in v.items()}
            lines.append(f"{toml_value(p)} = {toml_value(v)}")
        path = os.path.join(tmp, f"{name}-spread.toml")
        open(path, "w").write("\n".join(lines) + "\n")
        lasthop_run(binary, path, os.path.join(out, f"{name}-spread"), reuse, "none")
    shutil.rmtree(tmp, ignore_errors=True)


def lasthop_run(binary, spec, dest, reuse, keep):
    """`lasthop run SPEC --out DEST`, keeping every run's captures, events and traces (`keep` =
    "all") or none; DEST is emptied first unless `reuse`."""
    if not reuse and os.path.exists(dest):
        shutil.rmtree(dest)
    p = subprocess.run([binary, "run", spec, "--out", dest, "--quiet", "--captures", keep,
                        "--events", keep, "--tcp-trace", keep], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"lasthop run {spec} failed:\n{p.stdout}\n{p.stderr}")


def toml_value(v):
    """A TOML value for the spread specs (strings, numbers, lists and inline tables)."""
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{toml_value(k)} = {toml_value(x)}" for k, x in v.items()) + " }"


class Spread:
    """The random-delay points' every replication from the large run of one experiment, and the
    medians of `subset`-replication subsets drawn from it. Replication k draws the same delays
    in every variant, so a subset takes the same replications for all points (paired, as the
    seed's common random sequence). Per replication: flow0 (the one connection's elapsed time),
    or fastest / slowest (elapsed) and fast10k / slow10k (first 10 KB)."""

    def __init__(self, out, name, subset):
        root = os.path.join(out, f"{name}-spread", "runs")
        self.v = {}
        for p in sorted(os.listdir(root)):
            reps = sorted(int(k) for k in os.listdir(os.path.join(root, p)) if k.isdigit())
            rows = []
            for k in reps:
                conns = json.load(open(os.path.join(root, p, str(k), "metrics.json")))["conns"]
                el = [c["elapsed_s"] for c in conns]
                pe = [c["partial_elapsed_s"] for c in conns if c.get("partial_elapsed_s")]
                rows.append({"flow0": next(c["elapsed_s"] for c in conns if c["flow"] == 0),
                             "fastest": min(el), "slowest": max(el),
                             "fast10k": min(pe) if pe else None,
                             "slow10k": max(pe) if pe else None})
            self.v[p] = rows
        self.n = min(len(v) for v in self.v.values())
        rng = random.Random(1)
        k = min(subset, self.n)
        self.subset = k
        self.subsets = [rng.sample(range(self.n), k) for _ in range(DRAWS)]

    def median(self, point, idx=None, key="flow0"):
        v = self.v[point]
        return quantile([v[i][key] for i in (idx if idx is not None else range(self.n))], 0.5)

    def subset_medians(self, point, key="flow0"):
        return [self.median(point, idx, key) for idx in self.subsets]

    def share(self, test):
        """The share of subsets for which test(median_of) holds; median_of(point) gives the
        subset's median of that point."""
        ok = sum(1 for idx in self.subsets if test(lambda p, idx=idx: self.median(p, idx)))
        return ok / len(self.subsets)


def quantile(v, q):
    v = sorted(v)
    if not v:
        return None
    x = q * (len(v) - 1)
    i = int(x)
    return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (x - i)


class Exp:
    """One experiment's summary and references."""

    def __init__(self, out, name):
        self.name = name
        self.dir = os.path.join(out, name)
        self.spec = tomllib.load(open(os.path.join(ROOT, "experiments", f"{name}.toml"), "rb"))
        self.refs = self.spec.get("reference", {})
        self.s = {}
        with open(os.path.join(self.dir, "summary.csv")) as f:
            for r in csv.DictReader(f):
                cls = "run" if r["scheme"] == "run" else r["class"]
                self.s[(r["point"], cls, r["metric"])] = r
        self.points = list(self.spec["matrix"]["case"].keys())

    def ours(self, point, cls, metric, q="median"):
        r = self.s.get((point, cls, metric))
        if r is None or r[q] == "":
            return None
        return float(r[q])

    def ref(self, point, cls, metric, q=1):
        v = self.refs.get(point, {}).get(cls, {}).get(metric)
        if v is None:
            return None
        if isinstance(v, list):
            return v[q] if len(v) == 3 else v[q + 1]
        return v if q == 1 else None

    def runs(self, point):
        return os.path.join(self.dir, "runs", point, "0")


def fmt(x, d=2):
    if x is None:
        return "–"
    if d < 2 and abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return f"{x:.{d}f}"


def cell(ours, seed, d=2, flag=True):
    """"ours / seed", with * when the medians differ by more than 3 %."""
    if ours is None and seed is None:
        return "–"
    s = fmt(ours, d)
    if seed is not None:
        s += " / " + fmt(seed, d)
        if flag and ours is not None and seed and abs(ours - seed) > 0.03 * abs(seed):
            s += " *"
    return s


def parse_point(p):
    variant, buf, code = p.split("_", 2)
    return variant, int(buf[1:]), code


# ---------------------------------------------------------------------------------------------
# Appendix tables.

SINGLE_TABLES = [
    ("T14", "bl", "Baseline TCP, one 100 KB transfer"),
    ("T19", "sack", "SACK, one transfer"),
    ("T23", "sw2k", "limited advertised window 2 KB, one transfer"),
    ("T28", "sw3k", "limited advertised window 3 KB, one transfer"),
    ("T33", "sw5k", "limited advertised window 5 KB, one transfer"),
    ("T38", "red", "Baseline TCP through a RED router (R1 / R2 / R3, Table 11), one transfer"),
    ("T43", "iw4", "initial window 4 segments, one transfer"),
]
PAR_TABLES = [
    ("seed001-2par", "T15", "T16", "bl", "Baseline TCP, 2 × 50 KB"),
    ("seed001-4par", "T17", "T18", "bl", "Baseline TCP, 4 × 50 KB"),
    ("seed001-2par", "T20", "T21", "sack", "SACK, 2 × 50 KB"),
    ("seed001-4par", None, "T22", "sack", "SACK, 4 × 50 KB (first 10 KB only)"),
    ("seed001-2par", "T24", "T25", "sw2k", "shared advertised window 2 KB, 2 × 50 KB"),
    ("seed001-4par", "T26", "T27", "sw2k", "shared advertised window 2 KB, 4 × 50 KB"),
    ("seed001-2par", "T29", "T30", "sw3k", "shared advertised window 3 KB, 2 × 50 KB"),
    ("seed001-4par", "T31", "T32", "sw3k", "shared advertised window 3 KB, 4 × 50 KB"),
    ("seed001-2par", "T34", "T35", "sw5k", "shared advertised window 5 KB, 2 × 50 KB"),
    ("seed001-4par", "T36", "T37", "sw5k", "shared advertised window 5 KB, 4 × 50 KB"),
    ("seed001-2par", "T39", "T40", "red", "RED router, 2 × 50 KB"),
    ("seed001-4par", "T41", "T42", "red", "RED router, 4 × 50 KB"),
    ("seed001-2par", "T44", "T45", "iw4", "initial window 4, 2 × 50 KB"),
    ("seed001-4par", "T46", "T47", "iw4", "initial window 4, 4 × 50 KB"),
]


def variant_of(v, want):
    return v in ("r1", "r2", "r3") if want == "red" else v == want


def single_table(exps, table, want, title):
    rows = []
    for e in (exps["seed001-single"], exps["seed001-single-random"]):
        for p in e.points:
            v, buf, code = parse_point(p)
            if variant_of(v, want):
                rows.append((e, p, v, buf, code))
    rows.sort(key=lambda r: (r[3], r[0].name, r[0].points.index(r[1])))
    out = [f"\n**{table}: {title}** (ours / seed; * = median more than 3 % off)\n",
           "| buffer | delay | elapsed 25 % | 50 % | 75 % | tput (B/s) | rexmt | drops | "
           "unnecessary rexmt | RTOs (ours) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for e, p, v, buf, code in rows:
        d = delay_label(code) + (f" ({v.upper()})" if v.startswith("r") and v != "rand" else "")
        o = lambda m, q="median": e.ours(p, "flow0", m, q)
        r = lambda m, q=1: e.ref(p, "flow0", m, q)
        drops_o = None
        if o("drops_queue") is not None:
            # RED's drops are router drops too (the seed's "drops").
            drops_o = (o("drops_queue") or 0) + (o("drops_red") or 0)
        seed_drops = SEED_DROPS.get(p)
        seed_unneeded = (None if r("rexmt_pkts") is None or seed_drops is None
                         else r("rexmt_pkts") - seed_drops)
        out.append(
            f"| {buf} | {d} | {cell(o('elapsed_s', 'p25'), r('elapsed_s', 0), flag=False)} | "
            f"{cell(o('elapsed_s'), r('elapsed_s'))} | "
            f"{cell(o('elapsed_s', 'p75'), r('elapsed_s', 2), flag=False)} | "
            f"{cell(o('throughput_Bps'), r('throughput_Bps'), 0)} | "
            f"{cell(o('rexmt_pkts'), r('rexmt_pkts'), 1, False)} | "
            f"{cell(drops_o, seed_drops, 1, False)} | "
            f"{cell(o('unneeded_rexmt'), seed_unneeded, 1, False)} | {fmt(o('rtos'), 1)} |")
    return out


def par_table(e, full, first, want, title):
    rows = [p for p in e.points if variant_of(parse_point(p)[0], want)]
    out = []
    if full:
        out += [f"\n**{full}: {title}, whole connections** (elapsed time, s; ours / seed)\n",
                "| buffer | delay | fastest 25 % | 50 % | 75 % | slowest 25 % | 50 % | 75 % | "
                "RxMin | RxMax |", "|---|---|---|---|---|---|---|---|---|---|"]
        for p in rows:
            if e.ref(p, "fastest", "elapsed_s") is None:
                continue
            out.append(par_row(e, p, "fastest", "slowest", "elapsed_s", "rx_min", "rx_max"))
    if first:
        out += [f"\n**{first}: {title}, first 10 KB** (SYN to the ACK of 10 240 bytes, s; "
                "retransmissions before it; ours / seed)\n",
                "| buffer | delay | fastest 25 % | 50 % | 75 % | slowest 25 % | 50 % | 75 % | "
                "RxMin | RxMax |", "|---|---|---|---|---|---|---|---|---|---|"]
        for p in rows:
            if e.ref(p, "fast10k", "partial_elapsed_s") is None:
                continue
            out.append(par_row(e, p, "fast10k", "slow10k", "partial_elapsed_s", "rx10k_min",
                               "rx10k_max"))
    return out


def par_row(e, p, fast, slow, m, rmin, rmax):
    v, buf, code = parse_point(p)
    d = delay_label(code) + (f" ({v.upper()})" if v in ("r1", "r2", "r3") else "")
    c = []
    for cls in (fast, slow):
        for q, i in (("p25", 0), ("median", 1), ("p75", 2)):
            c.append(cell(e.ours(p, cls, m, q), e.ref(p, cls, m, i), flag=q == "median"))
    c.append(cell(e.ours(p, "run", rmin), e.ref(p, "run", rmin), 1, False))
    c.append(cell(e.ours(p, "run", rmax), e.ref(p, "run", rmax), 1, False))
    return f"| {buf} | {d} | " + " | ".join(c) + " |"


# The appendix's drops of the single-connection tables (not in the references for RED points,
# where the seed counts RED and queue drops together); read back from the experiment files
# below and completed with the RED rows.
SEED_DROPS = {}


def load_drops(exps):
    for name in ("seed001-single", "seed001-single-random"):
        e = exps[name]
        for p in e.points:
            d = e.ref(p, "flow0", "drops_queue")
            if d is not None:
                SEED_DROPS[p] = d
    # Table 38's drops (RED + queue).
    red = {"r1_b7_none": 36.5, "r1_b7_d20x6": 31, "r2_b7_none": 39.5, "r3_b7_none": 24.5,
           "r3_b7_d20x6": 26, "r2_b7_rand": 37.5, "r3_b7_rand": 30.5, "r1_b20_none": 32,
           "r1_b20_d40x6": 22, "r2_b20_none": 30, "r2_b20_d40x6": 27.5, "r3_b20_none": 23.5,
           "r3_b20_d40x6": 21.5, "r2_b20_rand": 30, "r3_b20_rand": 27.5}
    SEED_DROPS.update(red)


# ---------------------------------------------------------------------------------------------
# Tables 3 and 4 (the no-delay baseline runs).

TABLE3 = {1: (6, 9, 13), 3: (8, 9, 9), 7: (12, 13, 4), 20: (25, 26, 1)}
TABLE4 = {
    1: (830.4, 602.2, 785.1, 933.8, 973.0, 985.4),
    3: (831.1, 631.1, 677.7, 949.8, 981.7, 978.9),
    7: (831.2, 896.6, 564.6, 923.6, 981.4, 998.3),
    20: (831.5, 896.5, 952.5, 500.3, 923.3, 967.3),
}
TABLE4_KB = (3, 5, 10, 25, 50, 100)


def equation1(m, n):
    h = n // 2
    return (2 * (m - 2 * n)) // (n * (n + 1) - (h - 1) * h) + n


def slow_start_drops(out):
    with open(os.path.join(out, "tcp_trace.csv")) as f:
        trace = [r for r in csv.DictReader(f) if r["host"] == "fixed"]
    first = next((int(r["time_ns"]) for r in trace if r["ca_state"] in ("Recovery", "Loss")), None)
    with open(os.path.join(out, "events.csv")) as f:
        drops = [int(r["time_ns"]) for r in csv.DictReader(f)
                 if r["event"] == "drop" and r["dir"] == "down"]
    ss = sum(1 for t in drops if first is None or t < first)
    return ss, len(drops) - ss


def pcap_packets(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    off, pkts = 24, []
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        off += 16
        p = data[off:off + incl]
        off += incl
        if len(p) < 20 or p[0] >> 4 != 4 or p[9] != 6:
            continue
        ihl = (p[0] & 15) * 4
        tot = struct.unpack(">H", p[2:4])[0]
        t = p[ihl:]
        seq, ack = struct.unpack(">II", t[4:12])
        doff = (t[12] >> 4) * 4
        pkts.append((sec + frac / (1e9 if nano else 1e6), p[12:16], seq, ack,
                     tot - ihl - doff, t[13]))
    return pkts


def table4(out):
    """Throughput when N KB are acknowledged, from the first data segment (as the seed's)."""
    pk = pcap_packets(os.path.join(out, "fixed.pcap"))
    syn = next(p for p in pk if p[5] & 0x02 and not p[5] & 0x10)
    sender, iss = syn[1], syn[2]
    t0 = next(p[0] for p in pk if p[1] == sender and p[4] > 0)
    res = {}
    for t, src, _, ack, _, flags in pk:
        if src == sender or not flags & 0x10:
            continue
        acked = (ack - iss - 1) % (1 << 32)
        for kb in TABLE4_KB:
            if kb not in res and acked >= kb * 1024:
                res[kb] = kb * 1024 / (t - t0)
    return [res.get(kb) for kb in TABLE4_KB]


# ---------------------------------------------------------------------------------------------
# The text's summary tables (5-13), from the same points.

def comparison_table(exps, title, variants, rows):
    """Tables 5, 7, 9, 12: elapsed median and rexmt of the baseline and of `variants`."""
    out = [f"\n**{title}** (median elapsed time, s / retransmissions; ours / seed)\n"]
    head = "| buffer | delay | " + " | ".join(f"{v} time | {v} rexmt" for v in variants) + " |"
    out += [head, "|---|---|" + "---|---|" * len(variants)]
    for buf, code in rows:
        c = []
        for v in variants:
            p = f"{v}_b{buf}_{code}"
            e = exps["seed001-single-random"] if code == "rand" else exps["seed001-single"]
            if p not in e.points:
                c += ["–", "–"]
                continue
            c.append(cell(e.ours(p, "flow0", "elapsed_s"), e.ref(p, "flow0", "elapsed_s")))
            c.append(cell(e.ours(p, "flow0", "rexmt_pkts"), e.ref(p, "flow0", "rexmt_pkts"), 1,
                          False))
        out.append(f"| {buf} | {delay_label(code)} | " + " | ".join(c) + " |")
    return out


def tput_fair_table(exps, title, variants, rows):
    """Tables 6, 8, 10, 13: the slowest connection's first-10 KB throughput and Jain ×100."""
    e = exps["seed001-2par"]
    out = [f"\n**{title}** (two connections: the slower one's first-10 KB throughput, B/s, and "
           "Jain's index ×100 of both; ours / seed)\n"]
    out.append("| buffer | delay | " + " | ".join(f"{v} tput | {v} fairness" for v in variants)
               + " |")
    out.append("|---|---|" + "---|---|" * len(variants))
    for buf, code in rows:
        c = []
        for v in variants:
            p = f"{v}_b{buf}_{code}"
            if p not in e.points:
                c += ["–", "–"]
                continue
            c.append(cell(e.ours(p, "slow10k", "partial_throughput_Bps"),
                          e.ref(p, "slow10k", "partial_throughput_Bps")))
            c.append(cell(e.ours(p, "run", "jain10k_x100"), e.ref(p, "run", "jain10k_x100")))
        out.append(f"| {buf} | {delay_label(code)} | " + " | ".join(c) + " |")
    return out


# ---------------------------------------------------------------------------------------------
# Conclusions (research extract B.7), checked.


def spread_table(e, sp):
    """The random-delay points: this experiment's 50-replication median, the large sample's,
    the 5-95 % range of 50-replication medians drawn from it, and whether the seed's median
    lies in that range."""
    n = f"{sp.n:,}".replace(",", " ")
    out = ["\n### Random delays: what 50 replications can tell\n",
           f"A median of 50 replications with random delays is itself random. The random-delay "
           f"points were run again with {n} replications; the medians of 50 of them drawn "
           f"{DRAWS} times (the same replications for every variant) give the range in which one "
           "50-replication median of the model falls. \"in range\" says whether the seed's "
           "median lies in that 5–95 % range, i.e. whether the model could have produced it.\n",
           f"| point | seed (50) | ours (50, the tables above) | ours ({n}) | 5–95 % of "
           "50-replication medians | seed in range |", "|---|---|---|---|---|---|"]
    inside = 0
    rows = [p for p in e.points if p in sp.v]
    for p in rows:
        seed = e.ref(p, "flow0", "elapsed_s")
        ms = sp.subset_medians(p)
        lo, hi = quantile(ms, 0.05), quantile(ms, 0.95)
        ok = seed is not None and lo <= seed <= hi
        inside += ok
        out.append(f"| {p} | {fmt(seed)} | {fmt(e.ours(p, 'flow0', 'elapsed_s'))} | "
                   f"{fmt(sp.median(p))} | {fmt(lo)}–{fmt(hi)} | {'yes' if ok else '**no**'} |")
    out.append(f"\nThe seed's median lies in the model's range at {inside} of {len(rows)} "
               "points.")
    return out


def spread_table_par(exps, sps):
    """The same for two and four connections (20 replications a point in the seed): per random
    point, the seed's median of the fastest and slowest connection, whole and first 10 KB, and
    the range of the model's 20-replication medians."""
    sp = next(iter(sps.values()))
    n = f"{sp.n:,}".replace(",", " ")
    out = ["\n#### Two and four connections\n",
           f"The same with the parallel random-delay points: each ran again with {n} replications, "
           f"and {DRAWS} draws of {sp.subset} of them (the seed's count here) give the 5–95 % "
           "range of a 20-replication median. Cells: the seed's median, then the range; bold "
           "where the seed's median lies outside it.\n",
           "| point | fastest | slowest | fastest, first 10 KB | slowest, first 10 KB |",
           "|---|---|---|---|---|"]
    inside = total = 0
    for name, sp in sps.items():
        e = exps[name]
        conns = "2" if name.endswith("2par") else "4"
        for p in [p for p in e.points if p in sp.v]:
            cells = []
            for key, m in (("fastest", "elapsed_s"), ("slowest", "elapsed_s"),
                           ("fast10k", "partial_elapsed_s"), ("slow10k", "partial_elapsed_s")):
                seed = e.ref(p, key, m)
                if seed is None or sp.v[p][0][key] is None:
                    cells.append("–")
                    continue
                ms = sp.subset_medians(p, key)
                lo, hi = quantile(ms, 0.05), quantile(ms, 0.95)
                ok = lo <= seed <= hi
                inside += ok
                total += 1
                c = f"{fmt(seed)} ({fmt(lo)}–{fmt(hi)})"
                cells.append(c if ok else f"**{c}**")
            out.append(f"| {conns} × {p} | " + " | ".join(cells) + " |")
    out.append(f"\nThe seed's median lies in the model's range in {inside} of {total} cells.")
    return out


def conclusions(exps, big):
    s, p2, p4 = exps["seed001-single"], exps["seed001-2par"], exps["seed001-4par"]
    el = lambda e, p, m="elapsed_s", c="flow0": e.ours(p, c, m)
    rows = []

    def check(what, test, seed, ours, holds):
        rows.append(f"| {what} | {test} | {seed} | {ours} | {'yes' if holds else '**no**'} |")

    # 1. Slow-start overshoot drops pipe + 1 (Table 3).
    ss = {}
    for b in (3, 7, 20):
        d = s.runs(f"bl_b{b}_none")
        if os.path.exists(os.path.join(d, "tcp_trace.csv")):
            ss[b] = slow_start_drops(d)[0]
    check("1. Slow-start overshoot drops pipe + 1 packets", "slow-start drops, buffers 3 / 7 / 20",
          "9 / 13 / 26", " / ".join(str(ss.get(b, "–")) for b in (3, 7, 20)),
          [ss.get(b) for b in (3, 7, 20)] == [9, 13, 26])
    # 2. No delays: buffer 7 best; a short delay does not hurt.
    e3, e7, e20 = el(s, "bl_b3_none"), el(s, "bl_b7_none"), el(s, "bl_b20_none")
    check("2. Without delays the 7-packet buffer is best", "elapsed, buffers 3 / 7 / 20 (s)",
          "105.15 / 103.11 / 106.40", f"{fmt(e3)} / {fmt(e7)} / {fmt(e20)}",
          e7 is not None and e7 < e3 and e7 < e20)
    short = [("bl_b3_d12x1", "bl_b3_none"), ("bl_b7_d20x1.5", "bl_b7_none"),
             ("bl_b20_d40x4", "bl_b20_none")]
    ratios = [el(s, a) / el(s, b) for a, b in short]
    check("2. A delay shorter than the RTO does not hurt", "elapsed with / without the short "
          "delay, buffers 3 / 7 / 20", "0.98 / 1.02 / 1.03",
          " / ".join(f"{x:.2f}" for x in ratios), all(x < 1.05 for x in ratios))
    # 3. A spurious RTO hurts; bigger buffers more; second backed-off RTO.
    sp = [("bl_b3_d12x6", "bl_b3_none"), ("bl_b7_d20x6", "bl_b7_none"),
          ("bl_b20_d40x6", "bl_b20_none")]
    hurt = [el(s, a) / el(s, b) for a, b in sp]
    check("3. A delay that causes a spurious RTO hurts, the more the bigger the buffer",
          "elapsed with / without the 6 s delay before the first overflow, buffers 3 / 7 / 20",
          "1.08 / 1.17 / 1.23", " / ".join(f"{x:.2f}" for x in hurt),
          all(x > 1.03 for x in hurt) and hurt[0] < hurt[2])
    un = [s.ours(a, "flow0", "unneeded_rexmt") for a, _ in sp]
    check("3. ... with more unnecessary retransmissions in bigger buffers",
          "rexmt − drops, same cases", "5.5 / 8 / 15", " / ".join(fmt(x, 1) for x in un),
          None not in un and un[0] <= un[2])
    rto = s.ours("bl_b3_d12x6", "flow0", "rtos")
    check("3. Spurious RTO + a dropped necessary retransmission = a second, backed-off RTO",
          "RTOs, buffer 3, 12th packet 6 s", "2 (Figure 8)", fmt(rto, 1), (rto or 0) >= 2)
    two = [el(s, "bl_b7_d20x15"), el(s, "bl_b20_d40x30")]
    check("3. Two successive RTOs collapse the throughput", "elapsed, buffer 7 20th 15 s / "
          "buffer 20 40th 30 s", "140.30 / 178.73", " / ".join(fmt(x) for x in two),
          all(x and x > 130 for x in two))
    # 4. Random delays: small buffer best; no enhancement helps much. Judged on the large
    # sample's medians, with the share of 50-replication experiments in which each holds.
    n = f"{big.n:,}".replace(",", " ")
    rb = [big.median(f"bl_b{b}_rand") for b in (3, 7, 20)]
    share = big.share(lambda m: m("bl_b3_rand") <= m("bl_b7_rand") <= m("bl_b20_rand"))
    check("4. With random delays the smallest buffer is best", "elapsed, buffers 3 / 7 / 20 "
          f"({n} replications; share of 50-replication draws where it holds)",
          "130.63 / 132.61 / 137.42", " / ".join(fmt(x) for x in rb) + f" ({share:.0%})",
          rb[0] <= rb[1] <= rb[2])
    enh = [f"{v}_b{b}_rand" for v in ("sack", "sw2k", "sw3k", "sw5k", "iw4", "r2", "r3")
           for b in (3, 7, 20) if f"{v}_b{b}_rand" in big.v]

    def best_gain(m):
        return min((m(p) - m(f"bl_b{parse_point(p)[1]}_rand")) / m(f"bl_b{parse_point(p)[1]}_rand")
                   for p in enh)
    best = best_gain(big.median)
    share = big.share(lambda m: best_gain(m) > -0.06)
    check("4. No enhancement improves much with random delays",
          f"best change of the median elapsed time over the baseline ({n} replications; share "
          "of 50-replication draws where it is above −6 %)", "−3.8 % (sw5k, 20)",
          f"{best * 100:+.1f} % ({share:.0%})", best > -0.06)
    # 5. Parallel baseline: unfair; 4 connections lock out at buffer 7, not at 20; 2
    # connections, no delays: the small buffer is fairest for the first 10 KB.
    j = [p2.ours(f"bl_b{b}_none", "run", "jain10k_x100") for b in (3, 7, 20)]
    check("5. Two connections, no delays: the smallest buffer is fairest (first 10 KB)",
          "Jain ×100, buffers 3 / 7 / 20", "100 / 100 / 94.75",
          " / ".join(fmt(x) for x in j), None not in j and j[0] >= j[2])
    lock = [p4.ours(f"bl_b{b}_none", "slow10k", "partial_elapsed_s") /
            p4.ours(f"bl_b{b}_none", "fast10k", "partial_elapsed_s") for b in (7, 20)]
    check("5. Four connections: lock-out at buffer 7, not at 20", "slowest / fastest first "
          "10 KB, buffers 7 / 20", "5.7 / 1.6", " / ".join(f"{x:.1f}" for x in lock),
          lock[0] > 2 and lock[1] < lock[0])
    q4 = (p4.ours("bl_b7_none", "slow10k", "partial_elapsed_s"),
          p4.ours("bl_b7_none", "fast10k", "partial_elapsed_s"))
    check("5. (text) Four connections, buffer 7, no delays: slowest ~138 s, fastest ~24 s to "
          "10 KB", "first 10 KB, slowest / fastest (s)", "137.59 / 24.30",
          f"{fmt(q4[0])} / {fmt(q4[1])}", abs(q4[0] - 138) < 0.15 * 138 and abs(q4[1] - 24) < 4)
    q2 = (p2.ours("bl_b20_none", "fast10k", "partial_elapsed_s"),
          p2.ours("bl_b20_none", "slow10k", "partial_elapsed_s"))
    check("5. (text) Two connections, buffer 20, no delays: 10 KB in ~25 and ~41 s",
          "first 10 KB, fastest / slowest (s)", "25.41 / 40.77",
          f"{fmt(q2[0])} / {fmt(q2[1])}", abs(q2[0] - 25) < 2 and abs(q2[1] - 41) < 2)
    # 6. SACK.
    sk = [(el(s, f"sack_b{b}_none"), el(s, f"bl_b{b}_none")) for b in (3, 7, 20)]
    check("6. SACK is faster under the overshoot", "elapsed SACK / baseline, no delay, "
          "buffers 3 / 7 / 20", "0.97 / 1.00 / 0.97",
          " / ".join(f"{a / b:.2f}" for a, b in sk), all(a / b < 1.01 for a, b in sk))
    dr = [(s.ours(f"sack_b{b}_none", "flow0", "drops_queue"),
           s.ours(f"bl_b{b}_none", "flow0", "drops_queue")) for b in (3, 7, 20)]
    check("6. ... but more aggressive: more drops", "drops SACK / baseline, buffers 3 / 7 / 20",
          "19/18, 22/17, 29/27", ", ".join(f"{fmt(a, 0)}/{fmt(b, 0)}" for a, b in dr),
          all(a >= b for a, b in dr))
    jf = [(p2.ours(f"sack_b{b}_none", "run", "jain10k_x100"),
           p2.ours(f"bl_b{b}_none", "run", "jain10k_x100")) for b in (3, 7, 20)]
    check("6. ... and unfairer with parallel connections", "Jain ×100 SACK / baseline, two "
          "connections, no delay, buffers 3 / 7 / 20", "98.2/100, 97.7/100, 91.5/94.8",
          ", ".join(f"{fmt(a, 1)}/{fmt(b, 1)}" for a, b in jf),
          sum(a <= b for a, b in jf) >= 2)
    # 7. IW4.
    iw = [el(s, f"iw4_b{b}_none") / el(s, f"bl_b{b}_none") for b in (3, 7, 20)]
    check("7. IW 4 gives no meaningful gain for one connection", "elapsed IW4 / baseline, "
          "buffers 3 / 7 / 20", "1.00 / 1.00 / 1.00", " / ".join(f"{x:.2f}" for x in iw),
          all(abs(x - 1) < 0.02 for x in iw))
    ji = (p2.ours("iw4_b3_none", "run", "jain10k_x100"),
          p2.ours("bl_b3_none", "run", "jain10k_x100"))
    check("7. IW 4 hurts parallel connections with a small buffer", "Jain ×100 IW4 / "
          "baseline, two connections, buffer 3", "65.06 / 100", f"{fmt(ji[0])} / {fmt(ji[1])}",
          ji[0] < ji[1] - 5)
    # 8. Shared window.
    w = [el(s, f"sw2k_b{b}_none") for b in (3, 7, 20)]
    rx = [s.ours(f"sw2k_b{b}_none", "flow0", "rexmt_pkts") for b in (3, 7, 20)]
    base = min(el(s, f"bl_b{b}_none") for b in (3, 7, 20))
    check("8. A window below the pipe is the best enhancement: no drops, the best time",
          "2 KB window, buffers 3 / 7 / 20: elapsed (rexmt)", "102.03 (0) / 102.02 (0) / "
          "102.03 (0)", " / ".join(f"{fmt(a)} ({fmt(b, 0)})" for a, b in zip(w, rx)),
          all(x == 0 for x in rx) and max(w) < base)
    fj = [p2.ours(f"sw2k_b{b}_{c}", "run", "jain10k_x100") for b, c in
          ((3, "none"), (7, "none"), (20, "none"), (7, "d20x6"))]
    check("8. ... with almost optimal fairness", "Jain ×100, 2 KB shared, two connections "
          "(no delay 3 / 7 / 20, 20th 6 s at 7)", "99.54 / 99.95 / 99.95 / 99.36",
          " / ".join(fmt(x) for x in fj), all(x and x > 97 for x in fj))
    st = [(p2.ours(f"sw2k_b{b}_none", "slow10k", "partial_throughput_Bps"),
           p2.ours(f"bl_b{b}_none", "slow10k", "partial_throughput_Bps")) for b in (7, 20)]
    check("8. ... and a faster slowest connection", "slowest first-10 KB throughput, shared "
          "2 KB / baseline, buffers 7 / 20", "484/411, 484/254",
          ", ".join(f"{fmt(a, 0)}/{fmt(b, 0)}" for a, b in st), all(a > b for a, b in st))
    # 9. RED.
    red7 = [el(s, f"{v}_b7_none") for v in ("r1", "r2", "r3")]
    check("9. RED lowers the throughput; R3 is the best RED", "elapsed R1 / R2 / R3, buffer 7 "
          "(tail drop 103.11)", "111.51 / 114.91 / 104.21",
          " / ".join(fmt(x) for x in red7) + f" (tail drop {fmt(e7)})",
          min(red7) == red7[2] and all(x > e7 for x in red7))
    r20 = el(s, "r3_b20_none")
    check("9. R3 with 20 packets beats tail drop with 20, not tail drop with 7", "elapsed R3 "
          "buffer 20 / tail drop 20 / tail drop 7", "103.77 / 106.40 / 103.11",
          f"{fmt(r20)} / {fmt(e20)} / {fmt(e7)}", r20 < e20 and r20 > e7)
    reds = (("r2", 7), ("r3", 7), ("r2", 20), ("r3", 20))
    rr = [big.median(f"{v}_b{b}_rand") / big.median(f"bl_b{b}_rand") for v, b in reds]
    share = big.share(lambda m: all(m(f"{v}_b{b}_rand") > m(f"bl_b{b}_rand") for v, b in reds))
    check("9. With random delays RED is worse in every configuration", "elapsed RED / tail "
          f"drop, random delays (R2 7, R3 7, R2 20, R3 20; {n} replications; share of "
          "50-replication draws where all four are above 1)", "1.10 / 1.04 / 1.07 / 1.05",
          " / ".join(f"{x:.2f}" for x in rr) + f" ({share:.0%})", all(x > 1 for x in rr))
    out = ["| conclusion (extract B.7) | what is compared | seed | ours | holds |",
           "|---|---|---|---|---|"] + rows
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--out", help="results directory (default: temporary)")
    ap.add_argument("--quick", action="store_true", help="one replication per point")
    ap.add_argument("--reuse", action="store_true", help="keep finished runs in --out")
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary}: not an executable")
    out = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix="seed001-tables-")
    os.makedirs(out, exist_ok=True)
    run_experiments(binary, out, a.quick, a.reuse)
    exps = {n: Exp(out, n) for n in EXPERIMENTS}
    spread = Spread(out, RANDOM, SPREADS[RANDOM][1])
    spreads_par = {n: Spread(out, n, SPREADS[n][1]) for n in ("seed001-2par", "seed001-4par")}
    load_drops(exps)
    lines = []
    w = lines.append
    w("<!-- generated by scripts/seed001-tables.py"
      + (" --quick (one replication per point: not the doc's numbers)" if a.quick else "")
      + " -->")
    w("\n### Tables 3 and 4: the no-delay baseline\n")
    w("Table 3: drops in slow start (before the first Recovery or Loss) and after; equation (1) "
      "with n = pipe + 1.\n")
    w("| buffer | pipe (buffer + 5) | seed slow start / later / total | equation (1) | "
      "ours slow start / later / total |")
    w("|---|---|---|---|---|")
    s = exps["seed001-single"]
    for b in (1, 3, 7, 20):
        d = s.runs(f"bl_b{b}_none")
        pipe, ss, ca = TABLE3[b]
        o = slow_start_drops(d)
        w(f"| {b} | {pipe} | {ss} / {ca} / {ss + ca} | {equation1(400, pipe + 1)} | "
          f"{o[0]} / {o[1]} / {o[0] + o[1]} |")
    w("\nTable 4: throughput (B/s) once N KB are acknowledged, from the first data segment.\n")
    w("| buffer | " + " | ".join(f"{k} KB" for k in TABLE4_KB) + " |")
    w("|---|" + "---|" * len(TABLE4_KB))
    for b in (1, 3, 7, 20):
        t4 = table4(s.runs(f"bl_b{b}_none"))
        w(f"| {b} | " + " | ".join(cell(x, y, 1) for x, y in zip(t4, TABLE4[b])) + " |")

    w("\n### The text's summary tables (5–13)\n")
    t5rows = [(3, "none"), (3, "d12x1"), (3, "d12x6"), (3, "d30x6"), (3, "rand"), (7, "none"),
              (7, "d20x1.5"), (7, "d20x6"), (7, "d40x10"), (7, "d300x6"), (7, "d20x15"),
              (7, "rand"), (20, "none"), (20, "d40x4"), (20, "d40x6"), (20, "d100x12"),
              (20, "d300x6"), (20, "rand")]
    lines += comparison_table(exps, "Table 5: baseline and SACK, one transfer", ["bl", "sack"],
                              t5rows)
    sixrows = [(3, "none"), (3, "d12x6"), (3, "rand"), (7, "none"), (7, "d20x6"), (7, "rand"),
               (20, "none"), (20, "d40x6"), (20, "rand")]
    lines += tput_fair_table(exps, "Table 6: baseline and SACK", ["bl", "sack"], sixrows)
    lines += comparison_table(exps, "Table 7: baseline and IW 4, one transfer", ["bl", "iw4"],
                              sixrows)
    lines += tput_fair_table(exps, "Table 8: baseline and IW 4", ["bl", "iw4"], sixrows)
    t9rows = [(3, "none"), (3, "d12x1"), (3, "d12x6"), (3, "d30x6"), (3, "rand"), (7, "none"),
              (7, "d20x1.5"), (7, "d20x6"), (7, "d40x10"), (7, "rand"), (20, "none"),
              (20, "d40x6"), (20, "d100x12"), (20, "rand")]
    lines += comparison_table(exps, "Table 9: limited advertised window 2 / 3 / 5 KB, one "
                              "transfer", ["bl", "sw2k", "sw3k", "sw5k"], t9rows)
    lines += tput_fair_table(exps, "Table 10: baseline and a shared window of 2 KB",
                             ["bl", "sw2k"], sixrows)
    lines += comparison_table(exps, "Table 12: tail drop and RED R3, one transfer",
                              ["bl", "r3"], [x for x in sixrows if x[0] != 3])
    lines += tput_fair_table(exps, "Table 13: tail drop and RED R3", ["bl", "r3"],
                             [x for x in sixrows if x[0] != 3])

    w("\n### Appendix A, every table\n")
    for table, want, title in SINGLE_TABLES:
        lines += single_table(exps, table, want, title)
    for ename, full, first, want, title in PAR_TABLES:
        lines += par_table(exps[ename], full, first, want, title)

    lines += spread_table(exps[RANDOM], spread)
    lines += spread_table_par(exps, spreads_par)
    w("\n### The seed's conclusions, checked\n")
    lines += conclusions(exps, spread)
    print("\n".join(lines))
    if not a.out:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
