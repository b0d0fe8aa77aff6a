#!/usr/bin/env python3
"""Seed 000's tables and conclusions for docs/seed-comparison.md: ours beside the thesis's, for
all 48 configurations (experiments/seed000-{bulk,bulk-aqm,5s,2tcp1udp}.toml, whose
`[reference.*]` tables hold the published values).

    scripts/seed000-tables.py DIR                      # read DIR/seed000-*/summary.csv
    scripts/seed000-tables.py DIR --run LASTHOP [--reps N]
                                                       # first run the four experiments into DIR

With `--reps N` the experiments run with N replications instead of 20 (the CI's quick mode,
`crates/lasthop/tests/seed_scripts.rs`, runs 2). With `--spread N` (and `--run`) the 2tcp0udp
specs (bulk, bulk-aqm) also run with N replications into DIR/seed000-*-spread; a DIR that
holds those already is read without `--run`. The conclusions about the lossy links (r1, r3, r6)
are then judged on those medians, with the share of 20-replication experiments drawn from them
(the thesis's count) in which each holds: one 20-replication median on a random link is itself
a draw. Cells are "ours / thesis"; ours are medians over
the replications (five numbers where the thesis gives five), the thesis's from its Appendix B
and section 5. The conclusions of the thesis (research extract A.7) are checked one by one from
the same medians and printed as "holds" or "does not hold" with the numbers. Standard library
only.
"""
import argparse
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = ["bulk", "bulk-aqm", "5s", "2tcp1udp"]
LABEL = {"bl": "BL", "frto": "F-RTO", "dsack": "D-SACK", "eifel": "Eifel", "red": "RED",
         "ecn": "ECN", "cbi": "CBI", "cbi+ecn": "CBI-ECN"}


SPREAD_SPECS = ["bulk", "bulk-aqm"]
SUBSET = 20  # the thesis's replications per configuration
DRAWS = 2000


def run(binary, out, reps, names=EXPERIMENTS, suffix="", lean=False):
    """Runs the experiments into OUT/seed000-NAME{suffix} (with `reps` replications if given;
    `lean`: without captures, events and traces)."""
    for name in names:
        spec = os.path.join(ROOT, "experiments", f"seed000-{name}.toml")
        if reps:
            text = open(spec).read()
            text = re.sub(r"(?m)^replications = \d+", f"replications = {reps}", text)
            # The report's run may be a later replication than the quick run has.
            text = re.sub(r'(?m)^report_run = "([^/"]*)/\d+"', r'report_run = "\1/0"', text)
            text = text.replace('"../examples/', f'"{ROOT}/examples/')
            fd, spec = tempfile.mkstemp(suffix=".toml")
            os.write(fd, text.encode())
            os.close(fd)
        dest = os.path.join(out, f"seed000-{name}{suffix}")
        extra = ["--captures", "none", "--events", "none", "--tcp-trace", "none"] if lean else []
        r = subprocess.run([binary, "run", spec, "--out", dest, "--quiet"] + extra,
                           capture_output=True, text=True)
        if reps:
            os.unlink(spec)
        if r.returncode != 0:
            sys.exit(f"lasthop run seed000-{name} failed:\n{r.stderr}")


class Results:
    """One experiment's summary (point, class, metric) -> five numbers, and its references."""

    def __init__(self, out, name):
        self.spec = tomllib.load(open(os.path.join(ROOT, "experiments", f"seed000-{name}.toml"), "rb"))
        self.refs = self.spec.get("reference", {})
        self.d = {}
        with open(os.path.join(out, f"seed000-{name}", "summary.csv")) as f:
            for r in csv.DictReader(f):
                self.d[(r["point"], r["class"], r["metric"])] = [
                    float(r[k]) for k in ("min", "p25", "median", "p75", "max")]
        self.points = list(dict.fromkeys(p for p, _, _ in self.d))

    def med(self, point, cls, metric):
        v = self.d.get((point, cls, metric))
        return v[2] if v else None

    def five(self, point, cls, metric):
        return self.d.get((point, cls, metric))

    def ref(self, point, cls, metric):
        """The published value: (five numbers or [p25, median, p75] or None, median)."""
        v = self.refs.get(point, {}).get(cls, {}).get(metric)
        if v is None:
            return None, None
        if isinstance(v, list):
            return v, v[len(v) // 2]
        return None, float(v)


class Spread:
    """The 2tcp0udp points' every replication from the large runs: per replication the two
    connections' elapsed times. `otime(point, idx)` is the median over both connections of the
    replications `idx` (all if None), as the tables' "all" class."""

    def __init__(self, out):
        self.el = {}
        for name in SPREAD_SPECS:
            root = os.path.join(out, f"seed000-{name}-spread", "runs")
            for p in sorted(os.listdir(root)):
                reps = sorted(int(k) for k in os.listdir(os.path.join(root, p)) if k.isdigit())
                self.el[p] = [[c["elapsed_s"] for c in json.load(
                    open(os.path.join(root, p, str(k), "metrics.json")))["conns"]] for k in reps]
        self.n = min(len(v) for v in self.el.values())
        rng = random.Random(1)
        k = min(SUBSET, self.n)
        self.subsets = [rng.sample(range(self.n), k) for _ in range(DRAWS)]

    def otime(self, point, idx=None):
        v = self.el[point]
        return median([x for i in (idx if idx is not None else range(self.n)) for x in v[i]])

    def share(self, test):
        """The share of the 20-replication subsets for which test(otime_of) holds."""
        ok = sum(1 for idx in self.subsets if test(lambda p, idx=idx: self.otime(p, idx)))
        return ok / len(self.subsets)


def median(v):
    v = sorted(v)
    n = len(v)
    return None if n == 0 else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def f1(x):
    return "–" if x is None else f"{x:.1f}"


def f0(x):
    return "–" if x is None else f"{x:g}" if x == int(x) else f"{x:.1f}"


def quartiles(res, point, cls):
    ours = res.five(point, cls, "elapsed_s")
    pub, _ = res.ref(point, cls, "elapsed_s")
    o = "–" if ours is None else " / ".join(f"{x:.1f}" for x in ours[1:4])
    if pub is None:
        return o + " / –"
    p = pub[1:4] if len(pub) == 5 else pub
    return o + " / " + " / ".join(f"{x:.1f}" for x in p)


def pair(res, point, cls, metric):
    o = res.med(point, cls, metric)
    _, p = res.ref(point, cls, metric)
    return f"{f0(o)} / {f0(p)}"


def tcp_table(res, title, sets):
    print(f"### {title}\n")
    print("Cells: ours / the thesis's (medians; elapsed time 25 / 50 / 75 %, ours then the thesis's). "
          "Drops per connection of the data direction: q (router queue), r (RED drops + ECN "
          "marks), e (link errors). \"RTOs\" and \"spur.\" are ours only (the thesis counted them by "
          "hand in a few cases).\n")
    print("| point | set | elapsed (s) | otime (s) | rexmt | q | r | e | dupacks | 3 dupacks | "
          "ACKs with SACK | RTOs | spur. |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in res.points:
        link, var = p.split("-", 1)
        for i, c in enumerate(sets):
            o = pair(res, p, "all", "elapsed_s") if i == 0 else ""
            name = f"{link} {LABEL.get(var, var)}" if i == 0 else ""
            print(f"| {name} | {c} | {quartiles(res, p, c)} | {o} | "
                  f"{pair(res, p, c, 'rexmt_pkts')} | {pair(res, p, c, 'drops_queue')} | "
                  f"{pair(res, p, c, 'drops_red_marks')} | {pair(res, p, c, 'drops_error')} | "
                  f"{pair(res, p, c, 'dupacks')} | {pair(res, p, c, 'triple_dupacks')} | "
                  f"{pair(res, p, c, 'sack_pkts')} | {f0(res.med(p, c, 'rtos'))} | "
                  f"{f0(res.med(p, c, 'spurious_rtos'))} |")
    print()


def udp_table(res):
    print("### 2tcp1udp: the UDP stream (Tables 10, 11, 15, 16)\n")
    print("Cells: ours / the thesis's. Drops and throughput: min / median / max over the "
          "replications; spacing: 50 / 75 / 90 % (medians over the replications) and the lowest "
          "and highest per-replication maximum.\n")
    print("| point | drops q | drops r | drops e | throughput (B/s) | spacing 50/75/90 (ms) | "
          "spacing max (ms) |")
    print("|---|---|---|---|---|---|---|")

    def mmm(p, m, unit=f0):
        o = res.five(p, "flow2", m)
        pub, _ = res.ref(p, "flow2", m)
        a = "–" if o is None else " / ".join(unit(x) for x in (o[0], o[2], o[4]))
        b = "–" if pub is None else " / ".join(unit(x) for x in (pub[0], pub[2], pub[4]))
        return f"{a} ‖ {b}"

    for p in res.points:
        link, var = p.split("-", 1)
        sp = " / ".join(f0(res.med(p, "flow2", f"spacing_p{q}_ms")) for q in (50, 75, 90))
        ps = " / ".join(f0(res.ref(p, "flow2", f"spacing_p{q}_ms")[1]) for q in (50, 75, 90))
        mx = res.five(p, "flow2", "spacing_max_ms")
        pmx, _ = res.ref(p, "flow2", "spacing_max_ms")
        mxs = "–" if mx is None else f"{mx[0]:.0f}–{mx[4]:.0f}"
        pmxs = "–" if pmx is None else f"{pmx[0]:.0f}–{pmx[4]:.0f}"
        print(f"| {link} {LABEL[var]} | {mmm(p, 'drops_queue')} | {mmm(p, 'drops_red')} | "
              f"{mmm(p, 'drops_error')} | {mmm(p, 'throughput_Bps', lambda x: f'{x:.0f}')} | "
              f"{sp} ‖ {ps} | {mxs} ‖ {pmxs} |")
    print()


def gap(res, p, a, b):
    """(b − a) / a of the two sets' medians, in %."""
    x, y = res.med(p, a, "elapsed_s"), res.med(p, b, "elapsed_s")
    return None if x is None or y is None else (y - x) / x * 100


def conclusions(r, sp=None):
    b, a, s5, u = r["bulk"], r["bulk-aqm"], r["5s"], r["2tcp1udp"]
    out = []
    n = f" ({sp.n} replications; in % of 20-replication draws where it holds: {{}})" if sp else ""

    def check(text, ok, numbers):
        out.append(f"| {text} | {'holds' if ok else '**does not hold**'} | {numbers} |")

    def ot(res, p, m=None):
        """otime: the large run's for a 2tcp0udp point on a random link (when there is one),
        else the tables' 20 replications; `m` a subset's otime function."""
        if m is not None:
            return m(p)
        if sp and not p.startswith("e0-") and p in sp.el:
            return sp.otime(p)
        return res.med(p, "all", "elapsed_s")

    def share(test):
        return f"{sp.share(test):.0%}" if sp else None

    # 1. unfair sharing: the faster/slower gap on e0 BL and r6.
    g = {p: gap(b, p, "faster", "slower") for p in ("e0-bl", "r1-bl", "r6-bl")}
    check("1. the two connections share unfairly (faster/slower gap), most on the lossy links",
          all(v is not None and v > 0 for v in g.values()),
          ", ".join(f"{k} {v:.0f} %" for k, v in g.items() if v is not None))
    # 2. 5 s offset: the first locks the second out on e0; r1 softens it.
    e, r1 = gap(s5, "e0-eifel", "first", "second"), gap(s5, "r1-eifel", "first", "second")
    check("2. 5 s apart on e0 the first connection locks the second out (second ≥ 50 % longer); "
          "the lossy r1 softens it", e is not None and e >= 50 and r1 is not None and r1 < e,
          f"second longer by {e:.0f} % on e0, {r1:.0f} % on r1 (thesis: about 60 %, and less on r1)")
    # 3. CBI best or near best (2tcp0udp; with the 5 s offset and the UDP stream the thesis's own
    # CBI is not: Eifel 41.7 against CBI 48.2 s, and 102.3 against 106.8 on e0 2tcp1udp).

    def cbi_near_best(l, m=None):
        cands = [ot(res, p, m) for res in (a, b) for p in res.points if p.startswith(l + "-")]
        return ot(a, f"{l}-cbi", m) <= min(v for v in cands if v is not None) * 1.03

    rows = []
    ok = True
    for l in ("e0", "r1", "r3"):
        cands = {p: ot(res, p) for res in (a, b) for p in res.points if p.startswith(l + "-")}
        cbi = ot(a, f"{l}-cbi")
        best = min(v for v in cands.values() if v is not None)
        ok &= cbi <= best * 1.03
        rows.append(f"{l}: CBI {cbi:.1f}, best {best:.1f}")
    sh = share(lambda m: cbi_near_best("r1", m) and cbi_near_best("r3", m))
    check("3. on 2tcp0udp CBI is best or near best (within 3 %) in elapsed time (thesis: best on e0, r1, r3)",
          ok, "; ".join(rows) + (n.format(sh + " on r1 and r3") if sh else ""))
    # 4. RED slower than Eifel (the thesis: about 10 s on e0, 8 s on r3, and ineffective on r1).
    rows, ok = [], True
    for l in ("e0", "r1", "r3"):
        slow = ot(a, f"{l}-red"), ot(b, f"{l}-eifel")
        ok &= slow[0] > slow[1] * 1.03
        rows.append(f"{l}: otime RED {slow[0]:.1f} vs Eifel {slow[1]:.1f} s")
    sh = share(lambda m: all(m(f"{l}-red") > m(f"{l}-eifel") * 1.03 for l in ("r1", "r3")))
    check("4. RED is slower than Eifel (thesis: e0 67.1 vs 56.7, r1 66.6 vs 58.4, r3 65.8 vs 58.3 s)",
          ok, "; ".join(rows) + (n.format(sh + " on r1 and r3") if sh else ""))
    # 5. ECN about 5 % faster than RED on e0 2tcp0udp.
    red, ecn = ot(a, "e0-red"), ot(a, "e0-ecn")
    d = (red - ecn) / red * 100
    check("5. ECN about 5 % faster than RED on e0 2tcp0udp", 2 <= d <= 10,
          f"otime RED {red:.1f}, ECN {ecn:.1f} s: {d:.1f} % (thesis 67.1 / 63.8 s, 4.9 %)")
    # 6. CBI+ECN adds nothing over CBI; best fairness on 2tcp1udp.
    rows, ok = [], True
    for l in ("e0", "r1"):
        c, ce = ot(a, f"{l}-cbi"), ot(a, f"{l}-cbi+ecn")
        gaps = {p: gap(u, p, "faster", "slower") for p in u.points if p.startswith(l + "-")}
        fairest = min(gaps, key=lambda p: gaps[p])
        ok &= ce >= c and fairest == f"{l}-cbi+ecn"
        rows.append(f"{l}: otime CBI {c:.1f}, CBI-ECN {ce:.1f} s; fairest on 2tcp1udp {fairest} ({gaps[fairest]:.0f} %)")
    check("6. CBI-ECN adds nothing over CBI in elapsed time, and is the fairest on 2tcp1udp", ok, "; ".join(rows))
    # 7. RTO variants alike on e0/r1/r3; on r6 Eifel and F-RTO ahead of BL and D-SACK, F-RTO best.
    variants = ("bl", "frto", "dsack", "eifel")

    def spread_of(l, m=None):
        v = [ot(b, f"{l}-{x}", m) for x in variants]
        return (max(v) - min(v)) / min(v) * 100

    def r6_of(m=None):
        return {x: ot(b, f"r6-{x}", m) for x in variants}

    def ahead(r6):
        return max(r6["eifel"], r6["frto"]) < min(r6["bl"], r6["dsack"])

    spread = [(l, spread_of(l)) for l in ("e0", "r1", "r3")]
    r6 = r6_of()
    sh = share(lambda m: spread_of("r1", m) <= 5 and spread_of("r3", m) <= 5)
    check("7a. the RTO variants are nearly alike on e0, r1, r3 (otime spread ≤ 5 %)",
          all(s <= 5 for _, s in spread), ", ".join(f"{l} {s:.1f} %" for l, s in spread)
          + (n.format(sh + " on r1 and r3") if sh else ""))
    sh = share(lambda m: ahead(r6_of(m)))
    check("7b. on r6 Eifel and F-RTO are ahead of BL and D-SACK", ahead(r6),
          ", ".join(f"{LABEL[k]} {v:.1f}" for k, v in r6.items())
          + " s (thesis 71.5 / 63.7 / 67.3 / 65.6)" + (n.format(sh) if sh else ""))
    sh = share(lambda m: min(r6_of(m).items(), key=lambda kv: kv[1])[0] == "frto")
    check("7c. on r6 F-RTO gives the best otime", r6["frto"] == min(r6.values()),
          f"F-RTO {r6['frto']:.1f} s, best {min(r6.values()):.1f} s" + (n.format(sh) if sh else ""))
    notes = []
    if sp:
        bl = sorted(sp.otime("r6-bl", idx) for idx in sp.subsets)
        above = sum(x >= 71.5 for x in bl) / len(bl)
        notes.append(f"The thesis's r6 BL otime (71.5 s) as one 20-replication median of the model: "
                     f"the model's 20-replication medians span {bl[len(bl) // 20]:.1f}–"
                     f"{bl[len(bl) * 19 // 20]:.1f} s (5–95 %, {len(bl)} draws from {sp.n} "
                     f"replications), and 71.5 s or more comes in {above:.1%} of them.")
    spur = {x: b.five(f"r6-{x}", "all", "spurious_rtos") for x in ("bl", "frto", "dsack", "eifel")}
    check("7d. r6 connections see roughly 0 to 5 spurious RTOs each",
          all(v is not None and v[0] == 0 and 1 <= v[4] <= 8 for v in spur.values()),
          ", ".join(f"{LABEL[k]} {v[0]:.0f}–{v[4]:.0f} (median {v[2]:.0f})" for k, v in spur.items() if v))
    # 8. UDP: RED/ECN fewer queue drops, more RED drops, lower throughput; ARQ adds ~700 ms max spacing.
    rows, ok = [], True
    for l in ("e0", "r1"):
        q = u.med(f"{l}-eifel", "flow2", "drops_queue"), u.med(f"{l}-red", "flow2", "drops_queue")
        rd = u.med(f"{l}-red", "flow2", "drops_red")
        t = u.med(f"{l}-eifel", "flow2", "throughput_Bps"), u.med(f"{l}-red", "flow2", "throughput_Bps")
        ok &= q[1] < q[0] and rd > q[0] - q[1] and t[1] < t[0]
        rows.append(f"{l}: queue drops {q[0]:.0f} → {q[1]:.0f}, RED drops {rd:.0f}, throughput {t[0]:.0f} → {t[1]:.0f} B/s")
    m0, m1 = u.med("e0-eifel", "flow2", "spacing_max_ms"), u.med("r1-eifel", "flow2", "spacing_max_ms")
    ok8b = m1 - m0 >= 350
    check("8a. under RED the UDP stream loses fewer datagrams to the queue but more to RED, and its throughput falls", ok, "; ".join(rows))
    check("8b. link-layer retransmissions add about one RTT (700 ms) to the UDP stream's maximum spacing on r1",
          ok8b, f"max spacing e0 {m0:.0f} ms, r1 {m1:.0f} ms (thesis 427 and 911–1133 ms)")
    # 9. Eifel marginally slower than BL on e0 (timestamp overhead).
    bl, ei = ot(b, "e0-bl"), ot(b, "e0-eifel")
    check("9. Eifel is marginally slower than BL on e0 (12 bytes of timestamps per segment)",
          0 < (ei - bl) / bl * 100 <= 5, f"otime BL {bl:.1f}, Eifel {ei:.1f} s (thesis 55.4 / 56.7)")
    print("### The thesis's conclusions, checked\n")
    print("| conclusion (research extract A.7) | ours | numbers (ours) |")
    print("|---|---|---|")
    print("\n".join(out))
    print()
    for x in notes:
        print(x + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="the results directory holding seed000-*/")
    ap.add_argument("--run", metavar="LASTHOP", help="run the four experiments first with this binary")
    ap.add_argument("--reps", type=int, help="replications per point when running (default the specs' 20)")
    ap.add_argument("--spread", type=int, metavar="N", help="with --run: also run the 2tcp0udp "
                    "specs with N replications for the lossy links' conclusions")
    args = ap.parse_args()
    if args.run:
        run(args.run, args.dir, args.reps)
        if args.spread:
            run(args.run, args.dir, args.spread, SPREAD_SPECS, "-spread", lean=True)
    r = {n: Results(args.dir, n) for n in EXPERIMENTS}
    have = all(os.path.isdir(os.path.join(args.dir, f"seed000-{n}-spread", "runs"))
               for n in SPREAD_SPECS)
    sp = Spread(args.dir) if have else None
    tcp_table(r["bulk"], "2tcp0udp, the RTO variants (Tables 7, 12, 17, 18; Appendix B 26–29, 44–46, 61–64, 69–72)", ("faster", "slower"))
    tcp_table(r["bulk-aqm"], "2tcp0udp, RED, ECN, CBI and CBI-ECN (Tables 7, 12, 17; Appendix B 30–33, 47–50, 65–68)", ("faster", "slower"))
    tcp_table(r["5s"], "2tcp0udp5s (Tables 8, 13; Appendix B 34–38, 51–55)", ("first", "second"))
    tcp_table(r["2tcp1udp"], "2tcp1udp, the TCP connections (Tables 9, 14; Appendix B 39–43, 56–60)", ("faster", "slower"))
    udp_table(r["2tcp1udp"])
    conclusions(r, sp)


if __name__ == "__main__":
    main()
