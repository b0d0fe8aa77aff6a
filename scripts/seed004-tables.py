#!/usr/bin/env python3
"""Seed 004's tables for docs/seed-comparison.md: the paper's values beside ours.

The seven specs are experiments/seed004-{wan100,hetero10,short,wan100-stagger,lan100,lan10,wan10}.toml,
whose `[reference."POINT"]` tables hold the paper's values in class `bottleneck`.

    scripts/seed004-tables.py DIR                      # read DIR/seed004-NAME/summary.csv
    scripts/seed004-tables.py DIR --run LASTHOP        # first run the 7 experiments into DIR/seed004-NAME
    scripts/seed004-tables.py DIR [--run LASTHOP] --only wan100 [--only short ...]
                                                       # only these specs (the CI's quick mode)

It prints the part of the doc's seed 004 section from "### Tables: 100 flows, homogeneous WAN"
to just before "### The paper's conclusions, reproduced": Tables 1–3 (wan100), 4–6 (hetero10)
and 7–9 (short, with the AQMs' rows), then the σ/μ of per-flow goodput across the whole grid of
every spec but short. Cells are "paper / ours" (ours only for CoDel, PIE and FQ-CoDel, and in
the grid where the paper has no value), "–" where there is no value; ours are the medians of
the one replication. N·μ/C is N flows × the mean per-flow goodput / the link's rate. With
`--only` (the CI's quick mode, `crates/lasthop/tests/seed_scripts.rs`) only the named specs run
and are printed. Standard library only.
"""
import argparse
import csv
import os
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = ["wan100", "hetero10", "short", "wan100-stagger", "lan100", "lan10", "wan10"]
PAPER = ("red", "ecn", "rc")  # the paper's schemes; the others (the AQMs) are ours only


def run(binary, out, names):
    """Runs the experiments into OUT/seed004-NAME."""
    for name in names:
        spec = os.path.join(ROOT, "experiments", f"seed004-{name}.toml")
        dest = os.path.join(out, f"seed004-{name}")
        r = subprocess.run([binary, "run", spec, "--out", dest, "--quiet"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"lasthop run seed004-{name} failed:\n{r.stderr}")


def mbit(rate):
    """'28kbit', '1.5Mbit', '10Mbit' -> Mbit/s."""
    for unit, scale in (("Gbit", 1000.0), ("Mbit", 1.0), ("kbit", 0.001), ("bit", 1e-6)):
        if rate.endswith(unit):
            return float(rate[: -len(unit)]) * scale
    raise ValueError(f"unknown rate {rate!r}")


class Results:
    """One spec's bottleneck medians (point, metric) -> number, its references and its grid."""

    def __init__(self, out, name):
        path = os.path.join(ROOT, "experiments", f"seed004-{name}.toml")
        self.spec = tomllib.load(open(path, "rb"))
        self.refs = self.spec.get("reference", {})
        self.controls = list(self.spec["matrix"]["control"])
        self.speeds = {s: mbit(v["link_set.both.rate"])
                       for s, v in self.spec["matrix"]["speed"].items()}
        scenario = tomllib.load(open(os.path.join(os.path.dirname(path), self.spec["scenario"]), "rb"))
        self.flows = self.spec.get("set", {}).get("hosts.s.count", scenario["hosts"]["s"]["count"])
        self.d = {}
        with open(os.path.join(out, f"seed004-{name}", "summary.csv")) as f:
            for r in csv.DictReader(f):
                if r["class"] == "bottleneck":
                    self.d[(r["point"], r["metric"])] = float(r["median"]) if r["median"] else None
        self.points = list(dict.fromkeys(p for p, _ in self.d))

    def ours(self, point, metric):
        return self.d.get((point, metric))

    def paper(self, point, metric):
        v = self.refs.get(point, {}).get("bottleneck", {}).get(metric)
        return None if v is None else float(v)

    def aggregate(self, point, mean):
        """N·μ/C: the flows' summed goodput as a fraction of the link."""
        if mean is None:
            return None
        return self.flows * mean / self.speeds[point.rsplit("-", 1)[1]]


def g(x):
    """Three significant digits, one decimal between 10 and 100, whole numbers from 100."""
    if x is None:
        return "–"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def g2(x):
    return "–" if x is None else f"{x:.2g}"


def cell(res, point, metric, fmt=g):
    o = fmt(res.ours(point, metric))
    if point.split("-")[0] not in PAPER:
        return o
    return f"{fmt(res.paper(point, metric))} / {o}"


def table(res, name, columns, schemes):
    """One spec's table: a row for each point of `schemes`, the columns (title, cell function)."""
    print(f"**{name}** (paper / ours)\n")
    print("| point | " + " | ".join(t for t, _ in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for p in res.points:
        if p.split("-")[0] in schemes:
            print(f"| {p} | " + " | ".join(f(p) for _, f in columns) + " |")
    print()


def long_table(res, name):
    """Tables 1–6: the greedy flows' queue, drops and goodput (the paper's three schemes)."""
    def agg(p):
        return (f"{g2(res.aggregate(p, res.paper(p, 'goodput_mean_Mbps')))} / "
                f"{g2(res.aggregate(p, res.ours(p, 'goodput_mean_Mbps')))}")
    columns = [("Util %", lambda p: cell(res, p, "util_pct")),
               ("μQ", lambda p: cell(res, p, "queue_mean_pkts")),
               ("Max Q", lambda p: cell(res, p, "queue_max_pkts")),
               ("Drops", lambda p: cell(res, p, "drops")),
               ("μ goodput Mb/s", lambda p: cell(res, p, "goodput_mean_Mbps")),
               ("σ/μ", lambda p: cell(res, p, "goodput_cov")),
               ("N·μ/C", agg)]
    table(res, name, columns, PAPER)


def short_table(res, name):
    """Tables 7–9: the short transfers (every scheme, the AQMs ours only)."""
    columns = [("Util %", lambda p: cell(res, p, "util_pct")),
               ("μQ", lambda p: cell(res, p, "queue_mean_pkts")),
               ("Max Q", lambda p: cell(res, p, "queue_max_pkts")),
               ("μ time ms", lambda p: cell(res, p, "transfer_mean_ms")),
               ("σ time ms", lambda p: cell(res, p, "transfer_sd_ms")),
               ("# transfers", lambda p: cell(res, p, "transfers"))]
    table(res, name, columns, res.controls)


def fairness(res, name):
    """σ/μ of per-flow goodput, a row per scheme and a column per speed."""
    print(f"**{name}: goodput σ/μ** (paper / ours; the AQMs ours only)\n")
    print("| scheme | " + " | ".join(res.speeds) + " |")
    print("|---" * (len(res.speeds) + 1) + "|")
    for c in res.controls:
        cells = []
        for s in res.speeds:
            p = f"{c}-{s}"
            o, pub = res.ours(p, "goodput_cov"), res.paper(p, "goodput_cov")
            cells.append(g(o) if c not in PAPER or pub is None else f"{g(pub)} / {g(o)}")
        print(f"| {c} | " + " | ".join(cells) + " |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="the results directory holding seed004-NAME/")
    ap.add_argument("--run", metavar="LASTHOP", help="run the experiments first with this binary")
    ap.add_argument("--only", action="append", choices=EXPERIMENTS, metavar="NAME",
                    help=f"only this spec (repeatable; one of {', '.join(EXPERIMENTS)})")
    args = ap.parse_args()
    names = [n for n in EXPERIMENTS if not args.only or n in args.only]
    if args.run:
        run(args.run, args.dir, names)
    r = {n: Results(args.dir, n) for n in names}
    if "wan100" in r:
        print("### Tables: 100 flows, homogeneous WAN (Tables 1–3)\n")
        print("N·μ/C is the aggregate goodput as a fraction of the link (the paper's "
              "\"aggregate goodput\").\n")
        long_table(r["wan100"], "wan100")
    if "hetero10" in r:
        print("### Tables: 10 flows, heterogeneous RTTs (Tables 4–6)\n")
        long_table(r["hetero10"], "hetero10")
    if "short" in r:
        print("### Tables: repeated short transfers (Tables 7–9, and the AQMs)\n")
        short_table(r["short"], "short")
    grid = [n for n in names if n != "short"]
    if grid:
        print("### Fairness across the whole grid (σ/μ of per-flow goodput)\n")
        for n in grid:
            fairness(r[n], n)


if __name__ == "__main__":
    main()
