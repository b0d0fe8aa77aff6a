#!/usr/bin/env python3
"""Seed 003's published tables (extract Appendix R) as `[reference.POINT]` blocks for the
experiment specs experiments/seed003-exp{1,2,3,4}.toml, printed per experiment.

    scripts/seed003-references.py /work/shared/research/seed-003.md 1 > refs.toml

Point names follow the specs' matrices: experiment 1 `VARIANT-LOSS-ITT` (tcp | rdb4 | rdb8,
loss0.5 | loss2 | loss5 | loss10, itt30 | itt50 | itt75 | itt100); experiments 2-4
`VARIANT-sN-ITT` (tcp | dpif10 | dpif10+tfrc | dpif20 | dpif20+tfrc, s5 ..., itt5 | itt10 | ...).
Classes are the sending hosts (`host-rdbsender`, `host-wsender`, `host-zsender`); the seed's
misspellings ("rbsender", "rbdsender") are its rdbsender. Cells "70.5 K" and "19.1 M" are
thousands and millions; an empty cell is left out.
"""
import re
import sys

HOST = {"wsender": "wsender", "rbsender": "rdbsender", "rbdsender": "rdbsender",
        "rdbsender": "rdbsender", "zsender": "zsender"}
PCT = {"40th": "p40", "50th": "p50", "60th": "p60", "70th": "p70", "80th": "p80", "90th": "p90",
       "93th": "p93", "95th": "p95", "96th": "p96", "97th": "p97", "98th": "p98", "99th": "p99",
       "99.9th": "p99_9", "99.99th": "p99_99"}
VARIANT = {"TCP": "tcp", "RDB DPIF10": "dpif10", "RDB DPIF10 + TFRC": "dpif10+tfrc",
           "RDB DPIF20": "dpif20", "RDB DPIF20 + TFRC": "dpif20+tfrc"}
E1_VARIANT = {"TCP": "tcp", "RDB 4": "rdb4", "RDB 8": "rdb8"}


def num(cell):
    cell = cell.strip()
    m = re.fullmatch(r"([0-9.]+)\s*([KM]?)", cell)
    if not m:
        raise ValueError(f"not a number: {cell!r}")
    v = float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)]
    return int(v) if v == int(v) and "." not in m.group(1) or m.group(2) else v


def fmt(v):
    if isinstance(v, float) and v == int(v):
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v)


def rows(lines):
    """The rows of the markdown table starting at lines[0] (header) as lists of cells."""
    head = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    out = []
    for l in lines[2:]:
        if not l.startswith("|"):
            break
        out.append([c.strip() for c in l.strip().strip("|").split("|")])
    return head, out


def latency(head, row):
    d = {}
    for h, c in zip(head[1:], row[1:]):
        if not c:
            continue
        if h == "Mean":
            d["lat_mean_ms"] = num(c)
        elif h == "Max":
            d["lat_max_ms"] = num(c)
        else:
            d[f"lat_{PCT[h]}_ms"] = num(c)
    return d


def mmm(cell, names):
    parts = [p.strip() for p in cell.split("/")]
    return {n: num(p) for n, p in zip(names, parts)} if len(parts) == 3 else {}


def throughput(head, row):
    d = {}
    for h, c in zip(head, row):
        if not c:
            continue
        if h == "Str":
            d["streams"] = num(c)
        elif h.startswith("ITT"):
            d.update(mmm(c, ["itt_min_ms", "itt_avg_ms", "itt_max_ms"]))
        elif h.startswith("Payload"):
            d.update(mmm(c, ["payload_min_B", "payload_avg_B", "payload_max_B"]))
        elif h in ("Sent p", "Lost p", "Retr p", "RDB p", "Payl B", "Unique B", "Rdn B", "Retr B", "DupACKs"):
            key = {"Sent p": "sent_pkts", "Lost p": "lost_pkts", "Retr p": "retr_pkts",
                   "RDB p": "rdb_pkts", "Payl B": "payload_bytes", "Unique B": "unique_bytes",
                   "Rdn B": "redundant_bytes", "Retr B": "retr_bytes", "DupACKs": "dupacks"}[h]
            d[key] = num(c)
        elif h.startswith("Loss %"):
            b, p = [x.strip() for x in c.split("/")]
            d["loss_bytes_pct"], d["loss_pkts_pct"] = num(b), num(p)
    return d


def inline(d):
    return "{ " + ", ".join(f"{k} = {fmt(v)}" for k, v in d.items()) + " }"


def main():
    text = open(sys.argv[1]).read().splitlines()
    want = int(sys.argv[2])
    for i, l in enumerate(text):
        m1 = re.match(r"\*\*Fig\. (A\.1\.(\d)\(([a-d])\)) — uniform loss ([0-9.]+)%, ITT (\d+):\d+ ms", l)
        m2 = re.match(r"\*\*Fig\. (A\.(\d)\.(\d+)) \(E(\d)-(\d+)-(\d+):\d+, rdbsender = ([^;]+); payload (\d+) B\)", l)
        if m1 and want == 1:
            fig, loss, itt = m1.group(1), m1.group(4), m1.group(5)
            head, rs = rows(text[i + 2:])
            for r in rs:
                point = f"{E1_VARIANT[r[0]]}-loss{loss}-itt{itt}"
                print(f'[reference."{point}"]')
                print(f'source = "seed 003, Fig. {fig} (uniform loss {loss} %, ITT {itt}, 20 streams, 120 B): row {r[0]}; extract Appendix R.1"')
                print(f'"host-rdbsender" = {inline(latency(head, r))}')
                print()
        elif m2 and int(m2.group(4)) == want:
            fig, streams, itt, variant = m2.group(1), m2.group(5), m2.group(6), VARIANT[m2.group(7).strip()]
            j = i + 2
            thead, trs = rows(text[j:])
            j += 2 + len(trs) + 1
            lhead, lrs = rows(text[j:])
            point = f"{variant}-s{streams}-itt{itt}"
            print(f'[reference."{point}"]')
            print(f'source = "seed 003, Fig. {fig} (E{want}-{streams}-{itt}, rdbsender = {m2.group(7).strip()}); extract Appendix R.2/R.3"')
            lat = {HOST[r[0]]: latency(lhead, r) for r in lrs}
            for r in trs:
                h = HOST[r[1]]
                d = throughput(thead, r)
                d.update(lat.get(h, {}))
                print(f'"host-{h}" = {inline(d)}')
            print()


main()
