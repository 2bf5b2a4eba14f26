#!/usr/bin/env python3
"""scripts/auto-vs-best.py on small rplasma-bench-mpi CSVs written here: the median over runs per
point from the aggregate auto rows only, every run's ratio listed, and PASS only when every
point's median reaches the target.

    auto_vs_best_test.py PATH/TO/auto-vs-best.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = None  # set from argv in __main__
HEADER = ("benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us,"
          "pattern,ranks,concurrency,mean_us,p95_us,rank,aggregate,auto_vs_best\n")


def row(protocol, size, pattern, aggregate, ratio=""):
    rank = "all" if aggregate else "1"
    return f"fetch,rplasma,tcp,{protocol},{size},1,1,100,200,{pattern},2,1,100,150,{rank},{aggregate},{ratio}\n"


class AutoVsBestTest(unittest.TestCase):
    def run_script(self, runs, exit_code=0):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, rows in enumerate(runs):
                path = os.path.join(d, f"run{i}.csv")
                with open(path, "w") as f:
                    f.write(HEADER + "".join(rows))
                paths.append(path)
            result = subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, exit_code, result.stderr)
        return result.stdout

    def test_the_median_over_runs_is_judged_not_the_worst_run(self):
        def run(small, large):
            return [row("get", 1024, "pairs", 1), row("auto", 1024, "pairs", 0, "0.5"),  # a per-rank row: ignored
                    row("auto", 1024, "pairs", 1, small), row("auto", 4 << 20, "pairs", 1, large)]
        out = self.run_script([run("0.90", "0.80"), run("0.99", "0.85"), run("1.01", "0.97")])
        self.assertIn("pairs c=1 1KiB               median 0.990 of 3 runs: 0.900 0.990 1.010\n", out)
        self.assertIn("pairs c=1 4MiB               median 0.850 of 3 runs: 0.800 0.850 0.970  (< 0.95)\n", out)
        self.assertIn("worst 0.850 (pairs c=1 4MiB), 1 of 2 points >= 0.95: SHORT", out)

    def test_pass_when_every_median_reaches_the_target(self):
        out = self.run_script([[row("auto", 65536, "gather", 1, "0.94")], [row("auto", 65536, "gather", 1, "0.96")],
                               [row("auto", 65536, "gather", 1, "0.99")]])
        self.assertIn("1 of 1 points >= 0.95: PASS", out)

    def test_no_ratio_says_so(self):
        out = self.run_script([[row("get", 1024, "pairs", 1)]], exit_code=1)  # nothing to judge
        self.assertIn("no auto_vs_best", out)


if __name__ == "__main__":
    SCRIPT = sys.argv.pop(1)
    unittest.main()
