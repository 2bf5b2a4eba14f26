#!/usr/bin/env python3
"""fetch-summary.py OUT_DIR — summarizes what fetch-compare.sh left in OUT_DIR.

Per size: the full-stack fetch p50 with Get forced (bytes inline, SEND/RECV), Pin forced (RDMA READ)
and auto; the measured crossover (the smallest size from which Pin stays faster); the threshold auto used
(node B manager's stats); auto / better fixed protocol (throughput ratio of medians: best p50 /
auto p50, from three runs one after another, each with its own processes: a rough look, as the
guest's speed drifts between them; fetch-compare.sh's verdict on auto is the interleaved
rplasma-bench-mpi sweep after it); and the perftest peers at the same size: ib_send_lat (one-way, so x2 for a round trip),
ib_read_lat (a round trip) and ib_read_bw.
"""
import csv
import json
import os
import sys


def fetch_p50(path):
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["benchmark"] == "fetch":
                out[int(row["object_size"])] = float(row["p50_us"])
    return out


def perftest(path, column):
    """{bytes: value of `column`} from perftest's result lines."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        fields = line.split()
        if len(fields) > column and fields[0].isdigit():
            out[int(fields[0])] = float(fields[column])
    return out


def human(n):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def main(out_dir):
    get = fetch_p50(os.path.join(out_dir, "fetch-get.csv"))
    pin = fetch_p50(os.path.join(out_dir, "fetch-pin.csv"))
    auto = fetch_p50(os.path.join(out_dir, "fetch-auto.csv"))
    # perftest latency columns: bytes iters t_min t_max t_typical t_avg ...; bw: bytes iters peak avg
    send_lat = perftest(os.path.join(out_dir, "ib_send_lat.txt"), 4)
    read_lat = perftest(os.path.join(out_dir, "ib_read_lat.txt"), 4)
    read_bw = perftest(os.path.join(out_dir, "ib_read_bw.txt"), 3)
    threshold = "?"
    stats_path = os.path.join(out_dir, "fetch-auto.csv.manager-b.json")
    if os.path.exists(stats_path):
        stats = json.load(open(stats_path))
        threshold = json.dumps(stats.get("peer_thresholds", stats.get("default_threshold")))

    sizes = sorted(set(get) & set(pin))
    print("size | Get p50 us | Pin p50 us | auto p50 us | auto/best | ib_send_lat x2 us | ib_read_lat us | "
          "fetch p50 / ib_send_lat x2 | Pin GB/s | ib_read_bw GB/s | Pin / ib_read_bw")
    worst = None
    for s in sizes:
        best = min(get[s], pin[s])
        ratio = best / auto[s] if s in auto and auto[s] > 0 else float("nan")
        worst = ratio if worst is None or ratio < worst else worst
        rtt = 2 * send_lat[s] if s in send_lat else float("nan")
        pin_gbs = s / pin[s] / 1e3
        bw = read_bw.get(s, float("nan")) * 1e6 / 1e9  # perftest MB/s is 10^6 bytes
        print(f"{human(s)} | {get[s]:.0f} | {pin[s]:.0f} | {auto.get(s, float('nan')):.0f} | {ratio:.2f} | "
              f"{rtt:.0f} | {read_lat.get(s, float('nan')):.0f} | {best / rtt:.1f} | {pin_gbs:.4f} | {bw:.4f} | "
              f"{pin_gbs / bw:.2f}")
    crossover = None
    for i, s in enumerate(sizes):
        if all(pin[t] < get[t] for t in sizes[i:]):
            crossover = s
            break
    print(f"measured crossover (Pin faster from here on): {human(crossover) if crossover else 'none in range'}")
    print(f"auto's threshold (node B, per peer): {threshold}")
    if worst is not None:
        print(f"auto / better fixed protocol, worst size: {worst:.2f} (separate runs; the interleaved verdict follows)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
