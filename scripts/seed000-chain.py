#!/usr/bin/env python3
"""Seed 000's chained CBI replications read from one run of
examples/scenarios/seed000-e0-cbi-chain.toml (ten pairs of transfers, pair k starting at k x 90 s
on the same hosts), simulated and/or emulated:

    scripts/seed000-chain.py RUN_DIR [RUN_DIR ...]

Prints, per run directory, each pair's faster and slower elapsed time (s), queue drops and
retransmissions, then the medians over the pairs after the first (the thesis's "from the second
replication on") and the first pair's. Standard library only.
"""
import csv
import os
import statistics
import sys

SPACING = 90.0


def pairs(run):
    rows = list(csv.DictReader(open(os.path.join(run, "connections.csv"))))
    by = {}
    for r in rows:
        if r["complete"] not in ("1", "true", "yes") or float(r["bytes"]) < 188640:
            continue
        k = int(float(r["start_s"]) // SPACING)
        by.setdefault(k, []).append(
            (float(r["elapsed_s"]), int(r["drops_queue"] or 0), int(r["rexmt_pkts"])))
    return {k: sorted(v) for k, v in sorted(by.items()) if len(v) == 2}


def main():
    for run in sys.argv[1:]:
        p = pairs(run)
        print(f"#### {run}\n")
        print("| pair | faster (s) | slower (s) | queue drops | rexmt |")
        print("|---|---|---|---|---|")
        for k, (a, b) in p.items():
            print(f"| {k} | {a[0]:.2f} | {b[0]:.2f} | {a[1]} + {b[1]} | {a[2]} + {b[2]} |")
        later = [v for k, v in p.items() if k > 0]
        if later and 0 in p:
            med = lambda i, j: statistics.median(v[i][j] for v in later)
            print(f"\nfirst pair {p[0][0][0]:.2f} / {p[0][1][0]:.2f} s; later pairs (median) "
                  f"{med(0, 0):.2f} / {med(1, 0):.2f} s, queue drops {med(0, 1):g} + {med(1, 1):g}\n")


if __name__ == "__main__":
    main()
