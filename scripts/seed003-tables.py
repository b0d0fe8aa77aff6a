#!/usr/bin/env python3
"""Seed 003's tables for docs/seed-comparison.md: ours beside the thesis's (the references in
experiments/seed003-exp{1,2,3,4}.toml), read from the results of

    lasthop run experiments/seed003-expN.toml --out DIR/seed003-expN      (N = 1..4)

    scripts/seed003-tables.py DIR

Cells are "ours / thesis" (the thesis's value left out where it has none). Standard library only.
"""
import csv
import os
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(results, n):
    spec = tomllib.load(open(os.path.join(ROOT, f"experiments/seed003-exp{n}.toml"), "rb"))
    d = {}
    with open(os.path.join(results, f"seed003-exp{n}", "summary.csv")) as f:
        for r in csv.DictReader(f):
            if r["scheme"] == "thin":
                d[(r["point"], r["class"], r["metric"])] = float(r["median"])
    return spec, d


def cell(d, refs, point, cls, m, fmt="{:.0f}"):
    ours = d.get((point, cls, m))
    ref = refs.get(point, {}).get(cls, {}).get(m)
    s = fmt.format(ours) if ours is not None else "–"
    if ref is not None:
        s += " / " + (fmt.format(ref) if isinstance(ref, float) and fmt != "{:.0f}" else f"{ref:g}")
    return s


def exp1(results):
    spec, d = load(results, 1)
    refs = spec["reference"]
    print("| loss | ITT | variant | mean | 90th | 95th | 97th | 99th | 99.9th | max | sent p | retr p | RDB p |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for loss in ["0.5", "2", "5", "10"]:
        for itt in ["30", "50", "75", "100"]:
            for v in ["tcp", "rdb4", "rdb8"]:
                p = f"{v}-loss{loss}-itt{itt}"
                c = "host-rdbsender"
                ms = ["lat_mean_ms", "lat_p90_ms", "lat_p95_ms", "lat_p97_ms", "lat_p99_ms",
                      "lat_p99_9_ms", "lat_max_ms"]
                cells = [cell(d, refs, p, c, m) for m in ms]
                cells += [cell(d, {}, p, c, m) for m in ["sent_pkts", "retr_pkts", "rdb_pkts"]]
                name = {"tcp": "TCP", "rdb4": "RDB 4", "rdb8": "RDB 8"}[v]
                print(f"| {loss} % | {itt} | {name} | " + " | ".join(cells) + " |")


def greedy(results, n):
    spec, d = load(results, n)
    refs = spec.get("reference", {})
    points = list(refs)
    print("| point | host | mean | 50th | 90th | 99th | 99.9th | ITT avg | payload avg | sent p | retr p | RDB p | loss % p |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in points:
        for h in ["wsender", "rdbsender", "zsender"]:
            c = f"host-{h}"
            ms = ["lat_mean_ms", "lat_p50_ms", "lat_p90_ms", "lat_p99_ms", "lat_p99_9_ms",
                  "itt_avg_ms", "payload_avg_B"]
            cells = [cell(d, refs, p, c, m) for m in ms]
            cells += [big(d, refs, p, c, m) for m in ["sent_pkts", "retr_pkts", "rdb_pkts"]]
            cells.append(cell(d, refs, p, c, "loss_pkts_pct", "{:.2f}"))
            print(f"| {p} | {h} | " + " | ".join(cells) + " |")


def big(d, refs, p, c, m):
    k = lambda v: f"{v / 1000:.1f} K" if v >= 10000 else f"{v:.0f}"
    ours = d.get((p, c, m))
    ref = refs.get(p, {}).get(c, {}).get(m)
    s = k(ours) if ours is not None else "–"
    return s + (" / " + k(ref) if ref is not None else "")


def main():
    results = sys.argv[1]
    print("### Experiment 1\n")
    exp1(results)
    for n in (2, 3, 4):
        print(f"\n### Experiment {n}\n")
        greedy(results, n)


main()
