#!/usr/bin/env python3
"""Seed 000's published values as experiment `[reference.POINT]` tables.

    scripts/seed000-references.py PATH/TO/000_e755ec88ca0f048b.txt EXPERIMENT

EXPERIMENT is one of `bulk`, `bulk-aqm`, `5s`, `2tcp1udp` (experiments/seed000-EXPERIMENT.toml).
It parses the seed's Appendix B (Tables 26-72: per set the five numbers min / 25 % / 50 % / 75 %
/ max of every metric) and adds the section-5 summary tables' otime (Tables 7-18) and the UDP
spacing (Tables 11 and 16), which the appendix does not list. Prints TOML on stdout; the
experiment files hold its output below their matrix. Standard library only.

Metric names: elapsed time -> elapsed_s, throughput -> throughput_Bps, rexmt data pkts ->
rexmt_pkts, duplicate acks -> dupacks, triple dupacks -> triple_dupacks, pkts dropped (q / r / e)
-> drops_queue / drops_red_marks (the seed's r counts RED drops and ECN marks) / drops_error,
the ACK direction's "sacks sent" -> sack_pkts and its drops (when it lists no queue drops) ->
ack_drops. A UDP set's (r) is drops_red (a UDP datagram is never ECT, so never marked).
"""
import re
import sys

METRIC = {
    "elapsed time": "elapsed_s",
    "throughput": "throughput_Bps",
    "rexmt data pkts": "rexmt_pkts",
    "duplicate acks": "dupacks",
    "triple dupacks": "triple_dupacks",
    "pkts dropped (q)": "drops_queue",
    "pkts dropped (r)": "drops_red_marks",
    "pkts dropped (e)": "drops_error",
    "sacks sent": "sack_pkts",
}
VARIANT = {
    "Baseline": "bl",
    "Eifel": "eifel",
    "F-RTO": "frto",
    "D-SACK": "dsack",
    "Eifel + RED": "red",
    "Eifel + ECN": "ecn",
    "Eifel + CBI": "cbi",
    "Eifel + CBI + ECN": "cbi+ecn",
}
LINK = {"no errors": "e0", "low ARQ": "r1", "medium ARQ": "r3", "high ARQ": "r6"}

# otime (s): the section-5 summary tables (7-18), by (workload, link, variant).
OTIME = {
    ("2tcp", "e0"): dict(bl=55.4, eifel=56.7, frto=55.0, dsack=55.4, red=67.1, ecn=63.8, cbi=53.1, **{"cbi+ecn": 60.4}),
    ("5s", "e0"): dict(eifel=41.7, red=55.6, ecn=53.0, cbi=48.2, **{"cbi+ecn": 52.9}),
    ("2tcp1udp", "e0"): dict(eifel=102.3, red=106.2, ecn=105.2, cbi=106.8, **{"cbi+ecn": 105.8}),
    ("2tcp", "r1"): dict(bl=58.7, eifel=58.4, frto=57.5, dsack=57.1, red=66.6, ecn=68.2, cbi=55.6, **{"cbi+ecn": 59.9}),
    ("5s", "r1"): dict(eifel=53.3, red=59.6, ecn=57.3, cbi=53.4, **{"cbi+ecn": 60.8}),
    ("2tcp1udp", "r1"): dict(eifel=111.7, red=118.2, ecn=112.9, cbi=108.9, **{"cbi+ecn": 113.8}),
    ("2tcp", "r3"): dict(bl=57.4, eifel=58.3, frto=57.0, dsack=57.6, red=65.8, ecn=66.2, cbi=55.9, **{"cbi+ecn": 60.4}),
    ("2tcp", "r6"): dict(bl=71.5, eifel=65.6, frto=63.7, dsack=67.3),
}
# r1 D-SACK has no appendix table: Table 12's quartiles of the elapsed time only.
R1_DSACK = {"faster": [51.5, 54.8, 57.1], "slower": [57.0, 58.9, 62.3]}
# UDP spacing (ms), Tables 11 and 16: 50 %, 75 %, 90 %, and the lowest and highest
# per-replication maximum (written as min and max of the five numbers, the median their mean).
SPACING = {
    ("e0", "eifel"): (127, 130, 211, 427, 427), ("e0", "red"): (127, 138, 211, 427, 427),
    ("e0", "ecn"): (127, 138, 211, 427, 460), ("e0", "cbi"): (127, 138, 211, 427, 655),
    ("e0", "cbi+ecn"): (127, 138, 211, 427, 655),
    ("r1", "eifel"): (127, 128, 211, 911, 1133), ("r1", "red"): (127, 139, 211, 916, 1127),
    ("r1", "ecn"): (127, 128, 211, 911, 1055), ("r1", "cbi"): (127, 128, 211, 839, 1055),
    ("r1", "cbi+ecn"): (127, 139, 211, 911, 1199),
}


def parse(text):
    """Table number -> (caption, {set name: {metric: five numbers}})."""
    tables = {}
    sets, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"(TCP|UDP) SET (\d), (CLI→SRV|SRV→CLI)\tmin", line)
        if m:
            cur = (f"{m[1]}{m[2]}", m[3])
            sets.setdefault(cur, {})
            continue
        m = re.match(r"Table (\d+): (.*)", line)
        if m and 26 <= int(m[1]) <= 72:
            tables[int(m[1])] = (m[2], sets)
            sets, cur = {}, None
            continue
        if cur is None:
            continue
        f = line.split("\t")
        if len(f) == 6 and f[0] in METRIC:
            sets[cur][f[0]] = [float(x) for x in f[1:]]
    return tables


def key(caption):
    link = next(v for k, v in LINK.items() if k in caption)
    work = "5s" if "5 second" in caption else "2tcp1udp" if "UDP flow" in caption else "2tcp"
    var = re.search(r"traffic\. (.*?), (no errors|low|medium|high)", caption)
    var = var or re.search(r"UDP flow\. (.*?), (no errors|low|medium|high)", caption)
    return work, link, VARIANT[var[1]]


def num(x):
    return f"{x:g}"


def five(v):
    return "[" + ", ".join(num(x) for x in v) + "]"


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    want = {"bulk": ("2tcp", ["bl", "frto", "dsack", "eifel"]),
            "bulk-aqm": ("2tcp", ["red", "ecn", "cbi", "cbi+ecn"]),
            "5s": ("5s", ["eifel", "red", "ecn", "cbi", "cbi+ecn"]),
            "2tcp1udp": ("2tcp1udp", ["eifel", "red", "ecn", "cbi", "cbi+ecn"])}[sys.argv[2]]
    tables = parse(text)
    found = {key(c): (n, s) for n, (c, s) in tables.items()}
    links = ["e0", "r1", "r3", "r6"] if want[0] == "2tcp" else ["e0", "r1"]
    classes = ("first", "second") if want[0] == "5s" else ("faster", "slower")
    for link in links:
        for var in want[1]:
            if (want[0], link) not in OTIME or var not in OTIME[(want[0], link)]:
                continue
            point = f"{link}-{var}"
            print(f'[reference."{point}"]')
            hit = found.get((want[0], link, var))
            if hit is None:
                print(f'source = "seed 000, Table 12 (no appendix table for r1 D-SACK); otime: section 5"')
                for c in classes:
                    print(f"{c} = {{ elapsed_s = {five(R1_DSACK[c])} }}")
            else:
                n, sets = hit
                print(f'source = "seed 000, Appendix B Table {n}; otime: section 5"')
                for i, c in enumerate(classes):
                    data = sets.get((f"TCP{i + 1}", "CLI→SRV"), {})
                    back = sets.get((f"TCP{i + 1}", "SRV→CLI"), {})
                    parts = [f"{METRIC[k]} = {five(v)}" for k, v in data.items()]
                    if "sacks sent" in back:
                        parts.append(f"sack_pkts = {five(back['sacks sent'])}")
                    q = back.get("pkts dropped (q)")
                    if q is not None and max(q) == 0 and "pkts dropped (e)" in back:
                        parts.append(f"ack_drops = {five(back['pkts dropped (e)'])}")
                    print(f"{c} = {{ " + ", ".join(parts) + " }")
                udp = sets.get(("UDP1", "CLI→SRV"))
                if udp:
                    parts = []
                    for k, v in udp.items():
                        if k == "elapsed time":
                            continue
                        name = {"pkts dropped (r)": "drops_red"}.get(k, METRIC[k])
                        parts.append(f"{name} = {five(v)}")
                    s = SPACING[(link, var)]
                    parts += [f"spacing_p50_ms = {s[0]}", f"spacing_p75_ms = {s[1]}",
                              f"spacing_p90_ms = {s[2]}",
                              f"spacing_max_ms = {five([s[3], s[3], (s[3] + s[4]) / 2, s[4], s[4]])}"]
                    print("flow2 = { " + ", ".join(parts) + " }")
            print(f"all = {{ elapsed_s = {num(OTIME[(want[0], link)][var])} }}")
            print()


if __name__ == "__main__":
    main()
