#!/usr/bin/env python3
"""Writes the project's example traces into examples/traces/ (deterministic: same files each run).

- steady-12mbit.mm: Mahimahi's constant 12 Mbit/s link, one opportunity every millisecond (the
  file "1": 1504 bytes per ms = 12.032 Mbit/s).
- outage-0.5s.mm: the same link with a 0.5 s outage in every 2 s cycle (opportunities at
  1..1000 ms and 1501..2000 ms).
- lte-bursty.mm: an LTE-like downlink, 20 s: a three-level channel (good 30, fair 10, poor
  2 Mbit/s) held for 100..1000 ms at a time, served in bursts every 4 ms (one scheduling grant
  covers four 1-ms subframes), with a 300 ms outage at 12 s.
- steps.rates: timed rates (TIME RATE): 12 Mbit/s, 4 Mbit/s at 2 s, an outage from 3 s to
  3.5 s, 12 Mbit/s again; the last line (5 s) ends the cycle.
- base-delay.txt: a one-way base delay (TIME DELAY, CellReplay's kind): 20 ms, rising to 60 ms
  for 300 ms at 4 s and to 35 ms from 6 s to 8 s; 10 s cycle.
"""
import os
import random

OUT = os.path.join(os.path.dirname(__file__), "..", "examples", "traces")
OPP = 1504 * 8  # bits per Mahimahi opportunity


def write(name, lines):
    with open(os.path.join(OUT, name), "w") as f:
        f.write("".join(f"{x}\n" for x in lines))


def lte():
    rng = random.Random(29)
    levels = [30e6, 10e6, 2e6]
    out, t, owed = [], 0, 0.0
    level = 0
    until = 0
    while t < 20000:
        if t >= until:
            level = rng.choices([0, 1, 2], weights=[0.45, 0.4, 0.15])[0]
            until = t + rng.randint(100, 1000)
        t_end = min(until, 20000)
        while t < t_end:
            t += 4
            if 12000 <= t < 12300:
                continue  # outage
            # four subframes' worth, varying +-30 % around the level
            owed += levels[level] * 0.004 * rng.uniform(0.7, 1.3) / OPP
            n = int(owed)
            owed -= n
            out += [t] * n
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    write("steady-12mbit.mm", [1])
    write("outage-0.5s.mm", list(range(1, 1001)) + list(range(1501, 2001)))
    write("lte-bursty.mm", lte())
    with open(os.path.join(OUT, "steps.rates"), "w") as f:
        f.write("# TIME RATE: each rate holds until the next line; the last line ends the cycle\n")
        f.write("0s 12Mbit\n2s 4Mbit\n3s 0bit\n3.5s 12Mbit\n5s 12Mbit\n")
    with open(os.path.join(OUT, "base-delay.txt"), "w") as f:
        f.write("# TIME DELAY: each delay holds until the next line; the last line ends the cycle\n")
        f.write("0s 20ms\n4s 60ms\n4.3s 20ms\n6s 35ms\n8s 20ms\n10s 20ms\n")


if __name__ == "__main__":
    main()
