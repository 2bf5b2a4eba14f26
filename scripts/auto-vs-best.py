#!/usr/bin/env python3
"""auto / best fixed protocol over several rplasma-bench-mpi runs: the median per point.

    for i in 1 2 3 4 5; do mpirun -np 2 build/bin/rplasma-bench-mpi --start-redis --csv=run$i.csv; done
    scripts/auto-vs-best.py run*.csv

Each run's CSV has, on the aggregate `auto` row of every point, auto_vs_best: the point's ratio
paired by round (bench-mpi/mpi/auto_ratio.h). Within one run the lanes share the machine's
moments, but not its processes: every protocol has its own store and manager, and on a small
machine a process's or a connection's luck (where the scheduler keeps it, what its TCP state
learned) can hold for a whole run and move one lane by 20-40% against another running the same
protocol. A fresh run deals again. So the figure per point is the median over runs; the table
shows every run's ratio beside it, and the last line says PASS when every point's median reaches
the target (0.95), else SHORT.
"""
import argparse
import csv
import statistics
import sys


def read_points(path):
    """{(benchmark, pattern, concurrency, size): ratio} of one run's aggregate auto rows."""
    points = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("protocol") != "auto" or row.get("aggregate") != "1" or not row.get("auto_vs_best"):
                continue
            key = (row["benchmark"], row["pattern"], int(row["concurrency"]), int(row["object_size"]))
            points[key] = float(row["auto_vs_best"])
    return points


def size_label(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return f"{n}B"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="one rplasma-bench-mpi CSV per run")
    parser.add_argument("--target", type=float, default=0.95)
    args = parser.parse_args()
    runs = [read_points(p) for p in args.csv]
    keys = list(dict.fromkeys(k for r in runs for k in r))  # in the sweep's order
    if not keys:
        print("no auto_vs_best in these CSVs (a sweep with get and/or pin beside auto writes them)")
        return 1
    reached, worst, worst_at = 0, None, ""
    for key in keys:
        ratios = [r[key] for r in runs if key in r]
        median = statistics.median(ratios)
        label = f"{'' if key[0] == 'fetch' else key[0] + ' '}{key[1]} c={key[2]} {size_label(key[3])}"
        each = " ".join(f"{x:.3f}" for x in ratios)
        mark = "" if median >= args.target else f"  (< {args.target:.2f})"
        print(f"  {label:28s} median {median:.3f} of {len(ratios)} runs: {each}{mark}")
        reached += median >= args.target
        if worst is None or median < worst:
            worst, worst_at = median, label
    verdict = "PASS" if reached == len(keys) else "SHORT"
    print(f"auto/best median over runs: worst {worst:.3f} ({worst_at}), {reached} of {len(keys)} points "
          f">= {args.target:.2f}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
