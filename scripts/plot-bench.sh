#!/usr/bin/env bash
# Redraws the rplasma-bench-mpi plot from a CSV: scripts/plot-bench.sh IN.csv OUT.png [CONCURRENCY]
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 IN.csv OUT.png [CONCURRENCY]" >&2
  exit 2
fi
command -v gnuplot >/dev/null || { echo "gnuplot is missing: apt-get install gnuplot-nox" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gnuplot -e "csv='$1'; png='$2'; conc=${3:-1}" "$here/bench-mpi/mpi/plot_bench.gp"
echo "plot: $2"
