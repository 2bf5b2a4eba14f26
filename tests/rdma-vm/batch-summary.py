#!/usr/bin/env python3
"""batch-summary.py OUT_DIR — summarizes what batch-compare.sh left in OUT_DIR.

Per batch (the batch_fetch rows of batch-*.csv: one Client::Fetch of the whole batch, median of the
rounds): fetch ms, objects/s, GB/s (10^9 bytes/s), and the ratio to perftest at the same object
size on the same rxe0: objects/s over ib_send_bw's messages/s for objects up to 64 KiB (each object
is at least one message's worth of work), GB/s over ib_read_bw's GB/s for larger ones (they move by
RDMA READ). perftest's bandwidth is its BW average column (MB = 2^20 bytes), its message rate that
over the message size. Also the batch's Redis MGET and TCP stream ratios the bench computed.
"""
import csv
import glob
import os
import sys

SMALL = 64 * 1024


def batch_rows(out_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(out_dir, "batch-*.csv"))):
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["benchmark"] != "batch_fetch":
                    continue
                detail = dict(kv.split("=", 1) for kv in row.get("detail", "").split(";") if "=" in kv)
                rows.append({
                    "size": int(row["object_size"]),
                    "batch": int(float(detail.get("batch", "0"))),
                    "p50_us": float(row["p50_us"]),
                    "objects_per_s": float(row["ops_per_s"]),
                    "gbps": float(row["gb_per_s"]),
                    "vs_mget": float(detail.get("ratio_vs_mget", "nan")),
                    "vs_stream": float(detail.get("ratio_vs_stream", "nan")),
                })
    return sorted(rows, key=lambda r: r["size"])


def perftest_bw(path):
    """{bytes: (messages/s, bytes/s)} from perftest bandwidth result lines: bytes iters peak average
    MsgRate. perftest's MB/sec is 2^20 bytes/s (its MsgRate x size says so); MsgRate[Mpps] has six
    decimals, too few for large messages, so both figures come from the average."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        fields = line.split()
        if len(fields) >= 5 and fields[0].isdigit():
            size = int(fields[0])
            bytes_per_s = float(fields[3]) * (1 << 20)
            out[size] = (bytes_per_s / size, bytes_per_s)
    return out


def human(n):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def main(out_dir):
    rows = batch_rows(out_dir)
    send = perftest_bw(os.path.join(out_dir, "ib_send_bw.txt"))
    read = perftest_bw(os.path.join(out_dir, "ib_read_bw.txt"))
    print("perftest on rxe0 (same session):")
    for name, table in (("ib_send_bw", send), ("ib_read_bw", read)):
        for s in sorted(table):
            print(f"  {name} {human(s)}: {table[s][0]:.0f} msg/s, {table[s][1] / 1e9:.4f} GB/s")
    print()
    print("batch | fetch ms | objects/s | GB/s | perftest peer | peer figure | fetch / peer | fetch/mget | fetch/stream")
    for r in rows:
        s = r["size"]
        if s <= SMALL:
            peer, figure = f"ib_send_bw {human(s)} msg/s", send[s][0] if s in send else None
            ratio = r["objects_per_s"] / figure if figure else float("nan")
            shown = f"{figure:.0f}" if figure else "missing"
        else:
            peer, gbps = f"ib_read_bw {human(s)} GB/s", (read[s][1] / 1e9 if s in read else None)
            ratio = r["gbps"] / gbps if gbps else float("nan")
            shown = f"{gbps:.4f}" if gbps else "missing"
        print(f"{r['batch']} x {human(s)} | {r['p50_us'] / 1e3:.2f} | {r['objects_per_s']:.0f} | {r['gbps']:.4f} | "
              f"{peer} | {shown} | {ratio:.2f} | {r['vs_mget']:.2f}x | {r['vs_stream']:.3f}x")
    if not rows:
        print("(no batch_fetch rows: see bench-*.txt)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
