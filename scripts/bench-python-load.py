#!/usr/bin/env python3
"""Times lasthop.load of results directories: their connections and pages DataFrames
(BENCHMARKS.md, "Python: lasthop.load"). Usage: scripts/bench-python-load.py DIR..."""
import sys, time
import lasthop
dirs = sys.argv[1:]
t0 = time.perf_counter(); c0 = time.process_time()
n_c = n_p = 0
for d in dirs:
    r = lasthop.load(d)
    n_c += len(r.connections); n_p += len(r.pages)
t1 = time.perf_counter(); c1 = time.process_time()
print(f"{len(dirs)} dirs: {n_c} connections, {n_p} pages in {t1-t0:.2f} s wall, {c1-c0:.2f} s CPU")
