#!/usr/bin/env python3
"""The fidelity matrix (docs/sim-vs-emu.md, "Linux 6.18 in both modes"): one experiment's
results simulated and emulated, side by side.

    scripts/fidelity.py SIM_RESULTS EMU_RESULTS [--csv OUT]

For every point of the experiment (runs/<point>/<k>/), per run:
  * tput_Bps: the data bytes of every connection over the longest elapsed time
    (connections.csv, bytes / elapsed; for greedy flows the run's goodput);
  * slower_s / faster_s: the slowest and fastest connection's elapsed time (transfers);
  * rexmt: retransmitted data packets, summed over connections; rtos: RTOs, summed;
  * rtt_p50_ms / rtt_p99_ms: the latency probe's round trips (the scenario's `ping` flow, ICMP
    echoes from the data sender through the same queue as the data), the run's p50 and p99 from
    its ping_flows.csv (the first probe flow's row), measured the same way in both modes;
    ping_loss: the probe's loss rate there;
  * tcp_rtt_p50_ms / tcp_rtt_p99_ms: RTT samples pooled over the run's data connections, from the
    data sender's capture: each data segment sent once (Karn: none retransmitted) and the first
    ACK from the receiver that covers its last byte (so a sample also holds the receiver's ACK
    delay and, after a loss, the wait for the repair);
  * share_min / share_max: the smallest and largest connection's share of the bytes (1/n each
    when fair);
then the median over the replications, simulated | emulated | sim / emu - 1, as a Markdown table
(and with --csv OUT the same rows as CSV: point, metric, simulated, emulated, sim_over_emu_pct).
A run without a probe flow has no rtt_* or ping_loss rows. Standard library only; captures are
the emulator's and the simulator's pcaps (any byte order, µs or ns).
"""
import csv
import os
import statistics
import struct
import sys

METRICS = ["tput_Bps", "slower_s", "faster_s", "rexmt", "rtos", "rtt_p50_ms", "rtt_p99_ms",
           "ping_loss", "tcp_rtt_p50_ms", "tcp_rtt_p99_ms", "share_min", "share_max"]


def read_pcap(path):
    """Yields (time s, IPv4 packet bytes) of a raw-IP (101) or Ethernet (1) capture."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = head[:4]
        if magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            e = ">"
        else:
            e = "<"
        m = struct.unpack(e + "I", magic)[0]
        nano = m == 0xA1B23C4D
        link = struct.unpack(e + "I", head[20:24])[0]
        off = 14 if link == 1 else 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            ts, frac, incl, _orig = struct.unpack(e + "IIII", rec)
            data = f.read(incl)
            yield ts + frac / (1e9 if nano else 1e6), data[off:]


def tcp_fields(p):
    """(src, dst, sport, dport, seq, ack, flags, payload length) of an IPv4 TCP packet."""
    if len(p) < 20 or p[0] >> 4 != 4 or p[9] != 6:
        return None
    ihl = (p[0] & 15) * 4
    total = struct.unpack(">H", p[2:4])[0]
    t = p[ihl:]
    if len(t) < 20:
        return None
    sport, dport, seq, ack = struct.unpack(">HHII", t[:12])
    doff = (t[12] >> 4) * 4
    flags = t[13]
    return p[12:16], p[16:20], sport, dport, seq, ack, flags, total - ihl - doff


def rtt_samples(pcap):
    """RTT samples (s) of every data connection seen in a sender's capture."""
    sent = {}  # (flow) -> {end_seq: (time, count)}
    out = []
    pending = {}  # flow -> sorted list of (end, time) not yet acked, first transmissions
    for t, p in read_pcap(pcap):
        f = tcp_fields(p)
        if f is None:
            continue
        src, dst, sp, dp, seq, ack, flags, plen = f
        key = (src, sp, dst, dp)
        if plen > 0:
            end = (seq + plen) & 0xFFFFFFFF
            d = sent.setdefault(key, {})
            if end in d:
                d[end] = (d[end][0], d[end][1] + 1)
            else:
                d[end] = (t, 1)
                pending.setdefault(key, []).append(end)
        if flags & 0x10:
            rkey = (dst, dp, src, sp)
            if rkey not in sent:
                continue
            d = sent[rkey]
            q = pending.get(rkey, [])
            keep = []
            for end in q:
                # Covered (modulo 2^32, within 2^31).
                if ((ack - end) & 0xFFFFFFFF) < 0x80000000:
                    t0, n = d[end]
                    if n == 1:
                        out.append(t - t0)
                else:
                    keep.append(end)
            pending[rkey] = keep
    return out


def percentile(xs, q):
    """Nearest rank, as the project's one quantile (lasthop-analysis stats.rs)."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-q * len(xs) // 1)) - 1))
    return xs[k]


def run_metrics(run):
    rows = [r for r in csv.DictReader(open(os.path.join(run, "connections.csv")))
            if int(r["bytes"] or 0) > 0]
    m = {}
    if not rows:
        return m
    el = [float(r["elapsed_s"]) for r in rows]
    by = [int(r["bytes"]) for r in rows]
    m["tput_Bps"] = sum(by) / max(el)
    m["slower_s"] = max(el)
    m["faster_s"] = min(el)
    m["rexmt"] = sum(int(r["rexmt_pkts"] or 0) for r in rows)
    m["rtos"] = sum(int(r["rtos"] or 0) for r in rows)
    total = sum(by)
    m["share_min"] = min(by) / total
    m["share_max"] = max(by) / total
    # The data senders' captures (the clients of the connections): from hosts.csv when the
    # run has one (emulation), else the capture whose samples are the longer (a receiver's
    # capture sees each ACK leave right after the data arrives).
    senders = {r["client"].rsplit(":", 1)[0] for r in rows}
    pcaps = [n for n in sorted(os.listdir(run)) if n.endswith(".pcap")]
    hosts = os.path.join(run, "hosts.csv")
    if os.path.exists(hosts):
        pcaps = [h["pcap"] for h in csv.DictReader(open(hosts)) if h["address"] in senders]
    samples = []
    for name in pcaps:
        s = rtt_samples(os.path.join(run, name))
        if s and (not samples or statistics.median(s) > statistics.median(samples)):
            samples = s
    if samples:
        m["tcp_rtt_p50_ms"] = percentile(samples, 0.5) * 1000
        m["tcp_rtt_p99_ms"] = percentile(samples, 0.99) * 1000
    m.update(probe_metrics(run))
    return m


def probe_metrics(run):
    """The latency probe's p50, p99 and loss rate from the run's ping_flows.csv (its first probe
    flow; the analysis writes the file only when the run has probes); {} without one, and no
    round trips when no probe was answered (the file's empty cells)."""
    path = os.path.join(run, "ping_flows.csv")
    if not os.path.exists(path):
        return {}
    rows = sorted(csv.DictReader(open(path)), key=lambda r: int(r["flow"]))
    if not rows:
        return {}
    r = rows[0]
    m = {"ping_loss": float(r["loss_rate"])}
    for col, key in (("rtt_p50_ms", "rtt_p50_ms"), ("rtt_p99_ms", "rtt_p99_ms")):
        if r[col]:
            m[key] = float(r[col])
    return m


def experiment(path):
    """{point: {metric: [values over replications]}}"""
    out = {}
    runs = os.path.join(path, "runs")
    for point in sorted(os.listdir(runs)):
        for k in sorted(os.listdir(os.path.join(runs, point)), key=lambda x: int(x)):
            run = os.path.join(runs, point, k)
            if not os.path.exists(os.path.join(run, "done.json")):
                continue
            for key, v in run_metrics(run).items():
                out.setdefault(point, {}).setdefault(key, []).append(v)
    return out


def fmt(v):
    if v != v:
        return "–"
    if abs(v) >= 1000:
        return f"{v:,.0f}".replace(",", " ")
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def main():
    argv = sys.argv[1:]
    csv_out = None
    if "--csv" in argv:
        i = argv.index("--csv")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        csv_out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or len(args) != len(argv):
        sys.exit(__doc__)
    sim, emu = experiment(args[0]), experiment(args[1])
    rows = []
    print("| point | metric | simulated | emulated | sim / emu − 1 |")
    print("|---|---|---|---|---|")
    for point in sorted(set(sim) | set(emu)):
        for key in METRICS:
            s = sim.get(point, {}).get(key)
            e = emu.get(point, {}).get(key)
            if not s and not e:
                continue
            ms = statistics.median(s) if s else float("nan")
            me = statistics.median(e) if e else float("nan")
            d = (ms / me - 1) * 100 if me and me == me and ms == ms else float("nan")
            dd = "–" if d != d else f"{d:+.1f} %"
            print(f"| {point} | {key} | {fmt(ms)} | {fmt(me)} | {dd} |")
            rows.append((point, key, ms, me, d))
    if csv_out:
        with open(csv_out, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["point", "metric", "simulated", "emulated", "sim_over_emu_pct"])
            for point, key, ms, me, d in rows:
                w.writerow([point, key] + ["" if v != v else repr(v) for v in (ms, me, d)])


if __name__ == "__main__":
    main()
