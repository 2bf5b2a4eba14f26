#!/usr/bin/env bash
# Long chaos runs: three nodes under a checksummed workload while a seeded killer SIGKILLs
# workers, stores, managers and Redis (tests/chaos/chaos_test.cc). The CI runs it for a minute as
# part of the test suite; this runs it for as long as you like, on the release build or another.
#   scripts/chaos.sh [--minutes N] [--seed S] [--build DIR]
# The seed is printed first; a failing run is replayed with --seed. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

MINUTES=10 SEED="" BUILD=build
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) MINUTES=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    -h|--help) sed -n 2,6p "$0"; exit 0 ;;
    *) echo "chaos.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$BUILD/tests/bin/chaos_test" ] || BUILD_DIR=$BUILD scripts/setup.sh -DRPLASMA_WERROR=ON
[ -n "$SEED" ] && export RPLASMA_CHAOS_SEED=$SEED
RPLASMA_CHAOS_SECONDS=$((MINUTES * 60)) exec "$BUILD/tests/bin/chaos_test"
