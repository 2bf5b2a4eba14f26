#!/usr/bin/python3
"""python_bench: the Python binding against its peers, in one run on one store.

  get_release  Python Client.get(id) + Buffer.release() of a 16-byte object, against the C++
               client's get+release (rplasma-bench --only get, its get_release row) on the same
               store, rounds interleaved.                                   target: <= 1.3x
  put          Client.put(64 MiB numpy array), against a plain memcpy of the same 64 MiB in the
               same process (numpy.copyto into a preallocated array).      target: >= 0.7x

Each round measures both sides of a ratio back to back; the ratio reported is the median of the
per-round ratios. Prints a table, writes CSV rows with the columns every rplasma benchmark shares
(bench-mpi/common/csv_writer.h) plus `round`. It judges nothing: it prints the targets next to the
ratios, and exits non-zero only when a measurement failed.

  python_bench.py [--bin-dir DIR] [--store-socket PATH] [--rounds N] [--iterations N]
                  [--put-iterations N] [--csv FILE]
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import rplasma

GET_SIZE = 16
PUT_SIZE = 64 << 20
COLUMNS = ["benchmark", "system", "transport", "protocol", "object_size", "ops_per_s", "gb_per_s", "p50_us",
           "p99_us", "round"]


def percentile(samples_ns, q):
    ordered = sorted(samples_ns)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000.0


def row(benchmark, system, protocol, size, samples_ns, round_index):
    p50 = percentile(samples_ns, 0.5)
    return {"benchmark": benchmark, "system": system, "transport": "unix" if protocol == "store" else "memory",
            "protocol": protocol, "object_size": size, "ops_per_s": f"{1e6 / p50:.1f}",
            "gb_per_s": f"{size / (p50 * 1e3):.3f}", "p50_us": f"{p50:.3f}",
            "p99_us": f"{percentile(samples_ns, 0.99):.3f}", "round": round_index}


def python_get_release(client, oid, iterations):
    for _ in range(min(100, iterations)):  # warm-up
        client.get(oid).release()
    samples = []
    clock = time.perf_counter_ns
    for _ in range(iterations):
        t0 = clock()
        buf = client.get(oid)
        buf.release()
        samples.append(clock() - t0)
    return samples


def cxx_get_release(bin_dir, store_socket, iterations, workdir):
    """The C++ client's get+release p50 (us), measured by rplasma-bench on the same store."""
    out = os.path.join(workdir, "cxx.csv")
    command = [os.path.join(bin_dir, "rplasma-bench"), "--store-socket", store_socket, "--only", "get",
               "--sizes", str(GET_SIZE), "--iterations", str(iterations), "--duration", "30",
               "--objects-overhead", "0", "--no-redis", "--csv", out]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    with open(out) as f:
        for r in csv.DictReader(f):
            if r["benchmark"] == "get_release" and int(r["object_size"]) == GET_SIZE:
                return r
    raise RuntimeError(f"rplasma-bench wrote no get_release row for {GET_SIZE} bytes")


def put_vs_memcpy(client, iterations):
    source = np.random.default_rng(1).integers(0, 255, size=PUT_SIZE, dtype=np.uint8)
    target = np.empty_like(source)
    np.copyto(target, source)  # touch the destination's pages once, as the arena's are after a put
    put, copy = [], []
    clock = time.perf_counter_ns
    for i in range(iterations + 1):  # the first of each is a warm-up
        t0 = clock()
        oid = client.put(source)
        t1 = clock()
        client.delete(oid)
        t2 = clock()
        np.copyto(target, source)
        t3 = clock()
        if i > 0:
            put.append(t1 - t0)
            copy.append(t3 - t2)
    return put, copy


def start_store(bin_dir, workdir):
    socket_path = os.path.join(workdir, "store.sock")
    log = open(os.path.join(workdir, "store.log"), "wb")
    process = subprocess.Popen([os.path.join(bin_dir, "rplasma-store"), "--socket", socket_path, "--memory", "512M"],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"rplasma-store exited at start: {open(log.name).read()}")
        try:
            rplasma.connect(socket_path, connect_timeout_ms=100).close()
            return process, socket_path
        except rplasma.Error:
            time.sleep(0.01)
    process.kill()
    raise RuntimeError("rplasma-store did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", default=os.environ.get("RPLASMA_BIN_DIR", ""),
                        help="the build's bin/ (rplasma-store, rplasma-bench); default $RPLASMA_BIN_DIR")
    parser.add_argument("--store-socket", help="use this running store instead of starting one")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20000, help="get+release operations per side per round")
    parser.add_argument("--put-iterations", type=int, default=10, help="64 MiB puts (and memcpys) per round")
    parser.add_argument("--csv", help="write the rows here")
    args = parser.parse_args()
    if not args.bin_dir:
        parser.error("--bin-dir (or RPLASMA_BIN_DIR) is required")

    workdir = tempfile.mkdtemp(prefix="rplasma-pybench-", dir="/tmp")
    store = None
    try:
        if args.store_socket:
            socket_path = args.store_socket
        else:
            store, socket_path = start_store(args.bin_dir, workdir)
        client = rplasma.connect(socket_path, client_name="python_bench")
        oid = client.put(np.arange(GET_SIZE, dtype=np.uint8))
        rows, get_ratios, put_ratios = [], [], []
        for r in range(1, args.rounds + 1):
            cxx = cxx_get_release(args.bin_dir, socket_path, args.iterations, workdir)
            py = python_get_release(client, oid, args.iterations)
            py_row = row("get_release", "rplasma-python", "store", GET_SIZE, py, r)
            cxx_row = {k: cxx.get(k, "") for k in COLUMNS}
            cxx_row.update({"system": "rplasma-cxx", "round": r})
            rows += [py_row, cxx_row]
            get_ratios.append(float(py_row["p50_us"]) / float(cxx["p50_us"]))
            put, copy = put_vs_memcpy(client, args.put_iterations)
            put_row = row("put", "rplasma-python", "store", PUT_SIZE, put, r)
            copy_row = row("memcpy", "numpy", "-", PUT_SIZE, copy, r)
            rows += [put_row, copy_row]
            put_ratios.append(float(copy_row["p50_us"]) / float(put_row["p50_us"]))
            print(f"round {r}: get+release python {py_row['p50_us']} us, c++ {float(cxx['p50_us']):.3f} us "
                  f"({get_ratios[-1]:.2f}x); put 64 MiB {put_row['gb_per_s']} GB/s, memcpy {copy_row['gb_per_s']} GB/s "
                  f"({put_ratios[-1]:.2f}x)", flush=True)
        client.delete(oid)
        client.close()
    finally:
        if store is not None:
            store.terminate()
            store.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    print(f"get+release p50, python / c++:   {statistics.median(get_ratios):.2f}x  (median of {len(get_ratios)} "
          f"rounds; target <= 1.3x)")
    print(f"put 64 MiB / memcpy 64 MiB speed: {statistics.median(put_ratios):.2f}x  (median of {len(put_ratios)} "
          f"rounds; target >= 0.7x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
