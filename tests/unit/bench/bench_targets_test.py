#!/usr/bin/env python3
"""scripts/bench-targets.py on the CSV fixtures next to this file: ratios from the right rows,
PASS/SHORT on the right side of each limit, SKIPPED (with a reason) when a row is missing, and
with several rounds the median per-round ratio judged against the same limit.

    bench_targets_test.py PATH/TO/bench-targets.py
"""

import os
import re
import subprocess
import sys
import unittest

SCRIPT = None  # set from argv in __main__
HERE = os.path.dirname(os.path.abspath(__file__))
# "  PASS    get latency           <goal> — <measured> — ratio 1.250 (limit 1.3)"
LINE = re.compile(r"^  (PASS|SHORT|SKIPPED) +(.+?) {2,}(.*)$")


def run(fixture, *flags):
    """The script's output on tests/unit/bench/<fixture> as {name: (outcome, rest, ratio)} plus
    the raw text and the number of target lines."""
    result = subprocess.run([sys.executable, SCRIPT, *flags, os.path.join(HERE, fixture)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise AssertionError("bench-targets.py exited %d: %s" % (result.returncode, result.stderr))
    checks, count = {}, 0
    for line in result.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        count += 1
        ratio = re.search(r" — ratio ([0-9.]+) \(limit ", m.group(3))
        checks.setdefault(m.group(2), []).append((m.group(1), m.group(3), float(ratio.group(1)) if ratio else None))
    return {name: entries[0] if len(entries) == 1 else entries for name, entries in checks.items()}, \
        result.stdout, count


class BenchTargetsTest(unittest.TestCase):
    def assertTarget(self, checks, name, outcome, ratio=None):
        self.assertIn(name, checks)
        self.assertEqual(checks[name][0], outcome, checks[name])
        if ratio is not None:
            self.assertAlmostEqual(checks[name][2], ratio, places=3, msg=checks[name])

    def test_local_targets_compute_ratios_and_outcomes(self):
        checks, text, count = run("bench_targets_local.csv")
        self.assertEqual(count, 8, text)
        self.assertTarget(checks, "get latency", "PASS", 1.25)  # the process ping-pong, not the thread's
        self.assertTarget(checks, "get size-independent", "SHORT", 1.4)
        self.assertTarget(checks, "write bandwidth", "SHORT", 0.5)  # put 0.5x memcpy
        self.assertIn("= 0.25x", checks["write bandwidth"][1])     # create_write_seal: shown, not judged
        self.assertTarget(checks, "small round trip", "PASS", 6.0)
        self.assertTarget(checks, "get without IPC", "SHORT", 7.0)  # the slowest size, in us
        self.assertTarget(checks, "put+get vs redis", "PASS", 6.0)
        self.assertTarget(checks, "batch get", "PASS", 0.05)
        self.assertTarget(checks, "memory per object", "SHORT")
        self.assertIn("PASS", text)
        self.assertIn("SHORT", text)

    def test_rounds_combine_into_the_median_ratio_judged_against_the_same_limit(self):
        checks, text, count = run("bench_targets_rounds.csv")
        self.assertEqual(count, 8, text)  # one line per target, not one per round
        # 1.2, 9.0 (a flipped round), 1.6: the median 1.6 is SHORT, though one round passed.
        self.assertTarget(checks, "get latency", "SHORT", 1.6)
        self.assertIn("median of 3 rounds", checks["get latency"][1])
        self.assertIn("get(16B) p50 16.00 us", checks["get latency"][1])  # the median round's numbers
        # At-least targets keep their direction: median 0.8 >= 0.7.
        self.assertTarget(checks, "write bandwidth", "PASS", 0.8)
        # Measured in one round only: that round's value.
        self.assertTarget(checks, "memory per object", "PASS", 163)
        # Measured in no round: stays SKIPPED.
        self.assertTarget(checks, "batch get", "SKIPPED")
        # A target for every round is the worst round's: 90 us in round 2.
        self.assertTarget(checks, "get without IPC", "SHORT", 90.0)
        self.assertIn("worst of 3 rounds", checks["get without IPC"][1])

    def test_missing_measurements_are_skipped_not_failed(self):
        checks, text, count = run("bench_targets_get_only.csv")
        self.assertEqual(count, 8, text)
        for name, (outcome, reason, _) in checks.items():
            if name == "get without IPC":  # the one target a get alone measures
                continue
            self.assertEqual(outcome, "SKIPPED", name)
            self.assertNotEqual(reason.strip(), "", "%s gives no reason" % name)
        checks, text, count = run("bench_targets_get_only.csv", "--mode", "fetch")
        self.assertEqual(count, 5, text)
        for line in text.splitlines():
            m = LINE.match(line)
            if m:
                self.assertEqual(m.group(1), "SKIPPED", line)

    def test_fetch_targets_use_sixty_four_mebibyte_and_one_kibibyte_rows(self):
        checks, text, count = run("bench_targets_fetch.csv")  # told apart from local by its rows
        self.assertEqual(count, 5, text)
        self.assertTarget(checks, "small fetch latency", "PASS", 2.0)
        # Issue 20's: one 1 KiB object against Redis GET, warm (30 / 20 <= 2) and cold (20 / 20 <= 3).
        self.assertTarget(checks, "warm fetch vs GET", "PASS", 1.5)
        self.assertTarget(checks, "cold fetch vs GET", "PASS", 1.0)
        self.assertTarget(checks, "fetch vs stream", "PASS", 0.9)
        self.assertTarget(checks, "fetch vs redis", "SHORT", 3.0)

    def test_batch_targets_judge_fetch_against_mget_and_the_stream_per_size(self):
        checks, text, count = run("bench_targets_batch.csv")  # fetch mode, told apart by its rows
        self.assertEqual(count, 11, text)  # the five single-fetch targets and six batch targets
        # The same ids again: 1000 / 1600 misses 0.5; the 100-object one needs a batch of 100.
        self.assertTarget(checks, "batch 1000x1KiB warm", "SHORT", 0.625)
        self.assertTarget(checks, "batch 100x1KiB warm", "SKIPPED")
        self.assertTarget(checks, "warm fetch vs GET", "SKIPPED")
        # Fetch time over MGET time, at most: 1500 / 1600 passes 1.0; 22000 / 22000 misses 0.5.
        self.assertTarget(checks, "batch 1000x1KiB", "PASS", 0.9375)
        self.assertTarget(checks, "batch 1000x16KiB", "SHORT", 1.0)
        self.assertIn("fetch 22.000 ms, MGET 22.000 ms", checks["batch 1000x16KiB"][1])
        # Stream time over fetch time, at least: 55000 / 100000 misses 0.85; 180000 / 200000 passes.
        self.assertTarget(checks, "batch 1MiB", "SHORT", 0.55)
        self.assertTarget(checks, "batch 16MiB", "PASS", 0.9)
        self.assertIn("16x16MiB", checks["batch 16MiB"][1])

    def test_directory_targets_judge_cluster_seals_against_one_redis_and_the_key_balance(self):
        checks, text, count = run("bench_targets_directory.csv")  # told apart by its directory_ rows
        self.assertEqual(count, 2, text)
        self.assertTarget(checks, "directory seals", "SHORT", 0.55)  # 110000 / 200000 ids/s
        self.assertIn("256 ids/call", checks["directory seals"][1])
        self.assertTarget(checks, "keys per master", "PASS", 1.05)
        checks, text, _ = run("bench_targets_local.csv", "--mode", "directory")
        self.assertTarget(checks, "directory seals", "SKIPPED")
        self.assertTarget(checks, "keys per master", "SKIPPED")

    def test_batch_targets_need_the_stated_batch_and_are_absent_without_batch_rows(self):
        checks, text, count = run("bench_targets_batch_small.csv")
        self.assertEqual(count, 11, text)
        # 50 objects are not the target's 1000: skipped with the reason, never judged.
        self.assertTarget(checks, "batch 1000x1KiB", "SKIPPED")
        self.assertIn("batch of 50, not 1000", checks["batch 1000x1KiB"][1])
        for name in ("batch 1000x16KiB", "batch 1MiB", "batch 16MiB"):
            self.assertTarget(checks, name, "SKIPPED")
        checks, text, count = run("bench_targets_fetch.csv")  # a run without --batch
        self.assertFalse(any(name.startswith("batch ") for name in checks), text)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: bench_targets_test.py PATH/TO/bench-targets.py [unittest args]")
    SCRIPT = sys.argv.pop(1)
    unittest.main()
