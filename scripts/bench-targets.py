#!/usr/bin/env python3
"""Judges an rplasma-bench CSV against the project's performance targets.

    scripts/bench-targets.py out.csv                 # local, fetch or directory mode, told apart by the rows
    scripts/bench-targets.py --mode fetch fetch.csv

rplasma-bench prints numbers; this script turns them into ratios within one run and says PASS or
SHORT for each target (SKIPPED, with the reason, when the run did not measure its inputs).

Local mode (sizes are those of the run's per-size rows):
    get latency            get p50 (smallest size) <= 1.3 x unix-socket ping-pong (process) p50
    get size-independent   get p50 (largest size)  <= 1.2 x get p50 (smallest size)
    write bandwidth        put GB/s (64 MiB, else largest) >= 0.7 x memcpy GB/s
    small round trip       create_seal_get ops/s (smallest) >= 5 x Redis SET+GET ops/s
    (both throughputs from medians: size / p50 and 1 / p50)
    get without IPC        get p50 <= 1 us at every size, in every round (the slowest is judged)
    put+get vs redis       create_seal_get ops/s (smallest) >= 2 x Redis SET+GET, in every round
    batch get              batch_get p50 per id <= 0.1 us
    memory per object      store anon bytes per object <= 200 B
Fetch mode:
    fetch vs stream        fetch GB/s (64 MiB, else largest) >= 0.85 x raw TCP stream (medians)
    fetch vs redis         fetch GB/s (same size) >= 4 x Redis GET (medians)
    small fetch latency    fetch p50 (1 KiB, else smallest) <= 2.5 x TCP round trip p50
    warm fetch vs GET      fetch_warm p50 (1 KiB) <= 2 x Redis GET p50 (same iterations)
    cold fetch vs GET      fetch p50 (1 KiB) <= 3 x Redis GET p50
  and with --batch (rows batch_fetch[_warm|_hinted], batch_mget, batch_stream; times per batch,
  median rounds):
    batch 1000x1KiB        fetch time <= 1.0 x Redis MGET time of the same 1000 values
    batch 1000x1KiB warm   the same ids fetched again <= 0.5 x MGET time
    batch 100x1KiB warm    <= 1.0 x MGET time (needs --batch 100)
    batch 1000x16KiB       fetch time <= 0.5 x Redis MGET time
    batch 1MiB             fetch throughput >= 0.85 x raw TCP stream of the same bytes (any batch)
    batch 16MiB            the same at 16 MiB
    (each MGET target needs its batch exactly: another one is SKIPPED, not judged)
Directory mode (rows directory_seal and directory_lookup, systems redis and redis_cluster):
    directory seals        cluster seal ids/s >= 1.0 x one redis-server's (same ids per call)
    keys per master        cluster DBSIZE max / mean over the masters <= 1.10 (key_balance)

With --rounds the rows carry round=N in their detail; each round is judged on its own rows, and
each target is the median (the lower one: an actual round) of the ratios of the rounds that
measured it, against the same limit; a target stated for every round is the worst round's. Python 3 standard library only; exit 0 unless the CSV
cannot be read.
"""

import argparse
import csv
import sys

PASS, SHORT, SKIPPED = "PASS", "SHORT", "SKIPPED"
MIB64 = 64 << 20
KIB = 1 << 10
MIB = 1 << 20
# Rows that do not run once per size of the run's --sizes.
NOT_PER_SIZE = ("ping_pong", "ping_pong_thread", "ping_pong_epoll", "memory_per_object")


class Check:
    """One target: `ratio` passes when <= `limit` (at_most) or >= `limit` (not at_most)."""

    def __init__(self, name, goal, measured, ratio=0.0, limit=0.0, at_most=True, outcome=SKIPPED, every_round=False):
        self.name, self.goal, self.measured = name, goal, measured
        self.ratio, self.limit, self.at_most, self.outcome = ratio, limit, at_most, outcome
        self.every_round = every_round  # rounds combine into the worst one, not the median


def judged(name, goal, measured, ratio, limit, at_most, every_round=False):
    ok = ratio <= limit if at_most else ratio >= limit
    return Check(name, goal, measured, ratio, limit, at_most, PASS if ok else SHORT, every_round)


def skipped(name, goal, why):
    return Check(name, goal, why)


def format_size(size):
    """As rplasma-bench prints sizes: 16B, 4KiB, 64MiB."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    unit = 0
    while unit < 4 and size != 0 and size % 1024 == 0:
        size //= 1024
        unit += 1
    return "%d%s" % (size, units[unit])


class Row:
    def __init__(self, fields):
        self.benchmark = fields["benchmark"]
        self.system = fields["system"]
        self.object_size = int(fields["object_size"])
        self.ops_per_s = float(fields["ops_per_s"])
        self.p50_us = float(fields["p50_us"])
        self.metrics = {}
        for part in (fields.get("detail") or "").split(";"):
            key, sep, value = part.partition("=")
            if not sep:
                continue
            try:
                self.metrics[key] = float(value)
            except ValueError:
                pass  # a detail that is not a number is not an input of any target

    def metric(self, name):
        return self.metrics.get(name, 0.0)


def find(rows, benchmark, system, size):
    """The first row with these keys, as rplasma-bench's ResultReporter::Find; None if none."""
    for r in rows:
        if r.benchmark == benchmark and r.system == system and r.object_size == size:
            return r
    return None


def last(rows, benchmark):
    found = None
    for r in rows:
        if r.benchmark == benchmark:
            found = r
    return found


def median_gb(r):
    return r.object_size / r.p50_us / 1e3


def local_targets(rows):
    sizes = [r.object_size for r in rows if r.benchmark not in NOT_PER_SIZE]
    smallest = min(sizes) if sizes else None
    largest = max(sizes) if sizes else None
    bandwidth_size = MIB64 if MIB64 in sizes else largest
    checks = []

    get_small = find(rows, "get", "rplasma", smallest)
    get_large = find(rows, "get", "rplasma", largest)
    goal = "get p50 <= 1.3x unix-socket ping-pong p50"
    ping = last(rows, "ping_pong")
    if get_small and ping:
        checks.append(judged("get latency", goal,
                             "get(%s) p50 %.2f us, ping-pong p50 %.2f us"
                             % (format_size(smallest), get_small.p50_us, ping.p50_us),
                             get_small.p50_us / ping.p50_us, 1.3, True))
    else:
        checks.append(skipped("get latency", goal, "get or ping-pong not measured"))

    goal = "get p50 of the largest size <= 1.2x get p50 of the smallest"
    if get_small and get_large and largest != smallest:
        checks.append(judged("get size-independent", goal,
                             "get(%s) p50 %.2f us, get(%s) p50 %.2f us"
                             % (format_size(largest), get_large.p50_us, format_size(smallest), get_small.p50_us),
                             get_large.p50_us / get_small.p50_us, 1.2, True))
    else:
        checks.append(skipped("get size-independent", goal, "needs get at two sizes"))

    # Throughput ratios use medians (size / p50, 1 / p50): one preempted run of a large copy on a
    # shared machine otherwise moves the mean of a handful of samples by tens of percent.
    # Put is create+write+seal for a writer that has its bytes in hand; create_write_seal (a writer
    # filling the span itself, then Seal hashing it in a second pass) is shown beside it.
    goal = "create+write+seal (Put) GB/s >= 0.7x memcpy GB/s (medians)"
    put = find(rows, "put", "rplasma", bandwidth_size)
    cws = find(rows, "create_write_seal", "rplasma", bandwidth_size)
    copy = find(rows, "copy", "memcpy", bandwidth_size)
    if put and copy and put.p50_us > 0 and copy.p50_us > 0:
        copy_gb = median_gb(copy)
        raw = "not measured"
        if cws and cws.p50_us > 0:
            raw = "%.2f GB/s = %.2fx" % (median_gb(cws), median_gb(cws) / copy_gb)
        checks.append(judged("write bandwidth", goal,
                             "%s: put %.2f GB/s, memcpy %.2f GB/s; create+memcpy+seal %s"
                             % (format_size(bandwidth_size), median_gb(put), copy_gb, raw),
                             median_gb(put) / copy_gb, 0.7, False))
    else:
        checks.append(skipped("write bandwidth", goal, "put or memcpy not measured"))

    goal = "create+seal+get ops/s >= 5x Redis SET+GET ops/s (one client, medians)"
    cycle = find(rows, "create_seal_get", "rplasma", smallest)
    redis = find(rows, "set_get", "redis", smallest)
    if cycle and redis and cycle.p50_us > 0:
        ops = 1e6 / cycle.p50_us
        redis_ops = 1e6 / redis.p50_us
        checks.append(judged("small round trip", goal,
                             "%s: rplasma %.0f ops/s, redis %.0f ops/s (means: %.0f, %.0f)"
                             % (format_size(smallest), ops, redis_ops, cycle.ops_per_s, redis.ops_per_s),
                             ops / redis_ops, 5.0, False))
    else:
        checks.append(skipped("small round trip", goal, "create_seal_get or Redis not measured"))

    # Issue 13: a get of a sealed local object with no IPC, so no wake-up of the store whatever
    # the machine's scheduling does: judged in every round, at every size.
    goal = "get p50 <= 1 us at every size (every round)"
    gets = [r for r in rows if r.benchmark == "get" and r.system == "rplasma"]
    if gets:
        slowest = max(gets, key=lambda r: r.p50_us)
        checks.append(judged("get without IPC", goal,
                             "slowest: get(%s) p50 %.3f us over %d sizes"
                             % (format_size(slowest.object_size), slowest.p50_us, len(gets)),
                             slowest.p50_us, 1.0, True, every_round=True))
    else:
        checks.append(skipped("get without IPC", goal, "get not measured"))

    goal = "create+seal+get+release ops/s >= 2x Redis SET+GET ops/s (every round)"
    if cycle and redis and cycle.p50_us > 0:
        checks.append(judged("put+get vs redis", goal,
                             "%s: put+get+release p50 %.2f us, Redis SET+GET p50 %.2f us"
                             % (format_size(smallest), cycle.p50_us, redis.p50_us),
                             redis.p50_us / cycle.p50_us, 2.0, False, every_round=True))
    else:
        checks.append(skipped("put+get vs redis", goal, "create_seal_get or Redis not measured"))

    goal = "batch get <= 0.1 us per id (p50)"
    batch = find(rows, "batch_get", "rplasma", smallest)
    if batch:
        checks.append(judged("batch get", goal,
                             "%s: %.3f us per id in batches of %.0f"
                             % (format_size(smallest), batch.p50_us, batch.metric("batch")),
                             batch.p50_us, 0.1, True))
    else:
        checks.append(skipped("batch get", goal, "batch_get not measured"))

    goal = "store memory <= 200 B per object"
    mem = last(rows, "memory_per_object")
    if mem:
        anon = mem.metric("anon_bytes_per_object")
        checks.append(judged("memory per object", goal,
                             "%.0f objects: heap %.1f B/object (arena %.1f B/object, rss %.1f)"
                             % (mem.metric("objects"), anon, mem.metric("arena_bytes_per_object"),
                                mem.metric("rss_bytes_per_object")),
                             anon, 200, True))
    else:
        checks.append(skipped("memory per object", goal,
                              "memory run not selected (--objects-overhead 0 or --only)"))
    return checks


def fetch_targets(rows):
    sizes = [r.object_size for r in rows if r.benchmark == "fetch"]
    stream_goal = "fetch GB/s >= 0.85x raw TCP stream GB/s (medians)"
    redis_goal = "fetch GB/s >= 4x Redis GET GB/s (medians)"
    rtt_goal = "small fetch p50 <= 2.5x TCP round trip p50"
    warm_cold = (("warm fetch vs GET", "fetch_warm", 2.0), ("cold fetch vs GET", "fetch", 3.0))
    if not sizes:
        return [skipped("fetch", goal, "no fetch measured") for goal in (stream_goal, redis_goal, rtt_goal)] + \
               [skipped(name, "%s p50 <= %sx Redis GET p50" % (benchmark, limit), "no fetch measured")
                for name, benchmark, limit in warm_cold] + batch_targets(rows)
    big = MIB64 if MIB64 in sizes else max(sizes)
    small = KIB if KIB in sizes else min(sizes)
    checks = []
    fetch_big = find(rows, "fetch", "rplasma", big)
    stream_big = find(rows, "stream", "tcp_stream", big)
    redis_big = find(rows, "get", "redis", big)
    if fetch_big and stream_big:
        checks.append(judged("fetch vs stream", stream_goal,
                             "%s: fetch %.2f GB/s, raw stream %.2f GB/s"
                             % (format_size(big), median_gb(fetch_big), median_gb(stream_big)),
                             median_gb(fetch_big) / median_gb(stream_big), 0.85, False))
    else:
        checks.append(skipped("fetch vs stream", stream_goal, "fetch or stream missing"))
    if fetch_big and redis_big:
        checks.append(judged("fetch vs redis", redis_goal,
                             "%s: fetch %.2f GB/s, Redis GET %.2f GB/s"
                             % (format_size(big), median_gb(fetch_big), median_gb(redis_big)),
                             median_gb(fetch_big) / median_gb(redis_big), 4.0, False))
    else:
        checks.append(skipped("fetch vs redis", redis_goal, "fetch or Redis GET missing"))
    fetch_small = find(rows, "fetch", "rplasma", small)
    stream_small = find(rows, "stream", "tcp_stream", small)
    if fetch_small and stream_small:
        checks.append(judged("small fetch latency", rtt_goal,
                             "%s: fetch p50 %.1f us, TCP round trip p50 %.1f us"
                             % (format_size(small), fetch_small.p50_us, stream_small.p50_us),
                             fetch_small.p50_us / stream_small.p50_us, 2.5, True))
    else:
        checks.append(skipped("small fetch latency", rtt_goal, "fetch or stream missing"))
    # Issue 20: one small object against a one-key Redis GET of the same run, warm and cold.
    redis_small = find(rows, "get", "redis", small)
    for name, benchmark, limit in warm_cold:
        goal = "%s p50 (%s) <= %sx Redis GET p50" % (benchmark, format_size(small), limit)
        f = find(rows, benchmark, "rplasma", small)
        if f and redis_small and redis_small.p50_us > 0:
            checks.append(judged(name, goal, "%s: %s p50 %.1f us, Redis GET p50 %.1f us"
                                 % (format_size(small), benchmark, f.p50_us, redis_small.p50_us),
                                 f.p50_us / redis_small.p50_us, limit, True))
        else:
            checks.append(skipped(name, goal, "%s or Redis GET missing" % benchmark))
    return checks + batch_targets(rows)


# (name, row, object size, batch the target is stated for, limit) of the batch targets against MGET:
# cold (fresh ids) and warm (ids fetched before: no directory call) rows of batch_fetch_bench.h.
BATCH_VS_MGET = (("batch 1000x1KiB", "batch_fetch", KIB, 1000, 1.0),
                 ("batch 1000x1KiB warm", "batch_fetch_warm", KIB, 1000, 0.5),
                 ("batch 100x1KiB warm", "batch_fetch_warm", KIB, 100, 1.0),
                 ("batch 1000x16KiB", "batch_fetch", 16 * KIB, 1000, 0.5))
BATCH_VS_STREAM = (("batch 1MiB", MIB, None, 0.85), ("batch 16MiB", 16 * MIB, None, 0.85))


def batch_targets(rows):
    """The batch rows' targets; none at all when the run had no batch rows (no --batch)."""
    if not any(r.benchmark == "batch_fetch" for r in rows):
        return []
    checks = []
    for name, benchmark, size, batch, limit in BATCH_VS_MGET:
        goal = "%s of %dx%s in one call <= %sx Redis MGET time (medians)" % (benchmark, batch, format_size(size), limit)
        fetch = find(rows, benchmark, "rplasma", size)
        mget = find(rows, "batch_mget", "redis", size)
        if not fetch or not mget or mget.p50_us <= 0:
            checks.append(skipped(name, goal, "batch_fetch or batch_mget of %s missing" % format_size(size)))
        elif fetch.metric("batch") != batch:
            checks.append(skipped(name, goal, "batch of %.0f, not %d" % (fetch.metric("batch"), batch)))
        else:
            checks.append(judged(name, goal,
                                 "%.0fx%s: fetch %.3f ms, MGET %.3f ms"
                                 % (batch, format_size(size), fetch.p50_us / 1e3, mget.p50_us / 1e3),
                                 fetch.p50_us / mget.p50_us, limit, True))
    for name, size, _, limit in BATCH_VS_STREAM:
        goal = "batch fetch of %s objects >= %sx raw TCP stream of the same bytes (medians)" % (format_size(size), limit)
        fetch = find(rows, "batch_fetch", "rplasma", size)
        stream = find(rows, "batch_stream", "tcp_stream", size)
        if not fetch or not stream or fetch.p50_us <= 0:
            checks.append(skipped(name, goal, "batch_fetch or batch_stream of %s missing" % format_size(size)))
        else:
            bytes_moved = fetch.metric("batch") * size
            checks.append(judged(name, goal,
                                 "%.0fx%s: fetch %.2f GB/s, stream %.2f GB/s"
                                 % (fetch.metric("batch"), format_size(size), bytes_moved / fetch.p50_us / 1e3,
                                    bytes_moved / stream.p50_us / 1e3),
                                 stream.p50_us / fetch.p50_us, limit, False))
    return checks


def directory_targets(rows):
    seal_goal = "Redis Cluster seals/s >= 1.0x one redis-server's (same ids per call)"
    balance_goal = "DBSIZE max <= 1.10x mean over the masters (after the seals)"
    cluster = last(rows, "directory_seal")
    cluster = cluster if cluster and cluster.system == "redis_cluster" else None
    single = find(rows, "directory_seal", "redis", cluster.object_size) if cluster else None
    checks = []
    if cluster and single and single.ops_per_s > 0:
        checks.append(judged("directory seals", seal_goal,
                             "%d ids/call, %.0f nodes: cluster %.0f ids/s (%.0f masters), redis %.0f ids/s"
                             % (cluster.object_size, cluster.metric("nodes"), cluster.ops_per_s,
                                cluster.metric("masters"), single.ops_per_s),
                             cluster.ops_per_s / single.ops_per_s, 1.0, False))
    else:
        checks.append(skipped("directory seals", seal_goal, "directory_seal of redis or redis_cluster missing"))
    if cluster and cluster.metric("key_balance") > 0:
        checks.append(judged("keys per master", balance_goal,
                             "%.0f masters: %.0f to %.0f keys"
                             % (cluster.metric("masters"), cluster.metric("keys_min"), cluster.metric("keys_max")),
                             cluster.metric("key_balance"), 1.10, True))
    else:
        checks.append(skipped("keys per master", balance_goal, "directory_seal of redis_cluster missing"))
    return checks


def combine_rounds(rounds):
    """One check per name: the lower median of the ratios of the rounds that measured it (the worst
    round's for a target stated for every round)."""
    names = []  # in first-seen order
    for checks in rounds:
        for c in checks:
            if c.name not in names:
                names.append(c.name)
    combined = []
    for name in names:
        of_name = [c for checks in rounds for c in checks if c.name == name]
        measured = [c for c in of_name if c.outcome != SKIPPED]
        if not measured:
            combined.append(of_name[-1])
            continue
        ratios = ", ".join("%.3f" % c.ratio for c in measured)
        if measured[0].every_round:
            worst = (max if measured[0].at_most else min)(measured, key=lambda c: c.ratio)
            combined.append(judged(name, worst.goal,
                                   "worst of %d rounds (ratios %s); worst round: %s"
                                   % (len(measured), ratios, worst.measured),
                                   worst.ratio, worst.limit, worst.at_most, every_round=True))
            continue
        median = sorted(measured, key=lambda c: c.ratio)[(len(measured) - 1) // 2]
        combined.append(judged(name, median.goal,
                               "median of %d rounds (ratios %s); median round: %s"
                               % (len(measured), ratios, median.measured),
                               median.ratio, median.limit, median.at_most))
    return combined


def read_rounds(path):
    """The rows of `path` grouped by their round=N detail, in order of first appearance."""
    rounds = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = {"benchmark", "system", "object_size", "ops_per_s", "p50_us"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError("%s: not an rplasma-bench CSV (no column %s)" % (path, ", ".join(sorted(missing))))
        for line, fields in enumerate(reader, start=2):
            try:
                row = Row(fields)
            except (TypeError, ValueError) as e:
                raise ValueError("%s:%d: %s" % (path, line, e)) from e
            rounds.setdefault(row.metrics.get("round"), []).append(row)
    return list(rounds.values())


def print_targets(checks, out):
    out.write("\nTargets (ratios within this run)\n")
    for c in checks:
        if c.outcome == SKIPPED:
            out.write("  %-7s %-21s %s — %s\n" % (c.outcome, c.name, c.goal, c.measured))
        else:
            out.write("  %-7s %-21s %s — %s — ratio %.3f (limit %.3g)\n"
                      % (c.outcome, c.name, c.goal, c.measured, c.ratio, c.limit))


def main(argv):
    parser = argparse.ArgumentParser(description="Judge an rplasma-bench CSV against the targets.")
    parser.add_argument("--mode", choices=("auto", "local", "fetch", "directory"), default="auto",
                        help="which targets; auto: fetch when the CSV has fetch or stream rows, directory "
                             "when it has directory_ rows")
    parser.add_argument("csv", help="the file rplasma-bench --csv wrote")
    args = parser.parse_args(argv)
    try:
        rounds = read_rounds(args.csv)
    except (OSError, ValueError, csv.Error) as e:
        print("bench-targets: %s" % e, file=sys.stderr)
        return 1
    mode = args.mode
    if mode == "auto":
        fetch_rows = any(r.benchmark in ("fetch", "stream", "batch_fetch") for rows in rounds for r in rows)
        directory_rows = any(r.benchmark.startswith("directory_") for rows in rounds for r in rows)
        mode = "fetch" if fetch_rows else "directory" if directory_rows else "local"
    evaluate = {"fetch": fetch_targets, "directory": directory_targets}.get(mode, local_targets)
    per_round = [evaluate(rows) for rows in rounds] or [evaluate([])]
    print_targets(per_round[0] if len(per_round) == 1 else combine_rounds(per_round), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
