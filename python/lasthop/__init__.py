"""Run and read lasthop from Python, in-process (the Rust crates through a native module).

>>> import lasthop
>>> out = lasthop.run(out="results/quickstart")          # the embedded quick start
>>> r = lasthop.load(out)
>>> r.connections.groupby("link")["elapsed_s"].median()

Every table is a pandas DataFrame with the run's ``point``, the experiment's matrix dimensions
(one categorical column each), ``replication`` and the file's own columns, typed: times in
float seconds (``_s``), counts as integers, categories as categoricals. See docs/python.md.
"""

from __future__ import annotations

from ._api import analyze, check, load, run, sim, Check, Results, ResultsSet
from ._lasthop import LasthopError, SpecError, TABLES

__all__ = [
    "analyze",
    "check",
    "load",
    "run",
    "sim",
    "Check",
    "Results",
    "ResultsSet",
    "LasthopError",
    "SpecError",
    "TABLES",
]
