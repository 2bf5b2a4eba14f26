#!/usr/bin/env bash
# Redraws the rplasma-bench-mpi plot from a CSV: scripts/plot-bench.sh IN.csv OUT.png [CONCURRENCY]
# (CONCURRENCY: which rows to draw; by default the CSV's lowest).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 IN.csv OUT.png [CONCURRENCY]" >&2
  exit 2
fi
command -v gnuplot >/dev/null || { echo "gnuplot is missing: apt-get install gnuplot-nox" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
settings="csv='$1'; png='$2'"
if [[ -n "${3:-}" ]]; then
  [[ "$3" =~ ^[0-9]+$ ]] || { echo "CONCURRENCY must be a number, not '$3'" >&2; exit 2; }
  settings+="; conc=$3"
fi
gnuplot -e "$settings" "$here/bench-mpi/mpi/plot_bench.gp"
echo "plot: $2"
