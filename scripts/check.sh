#!/usr/bin/env bash
# A developer's inner loop: rebuilds build/ (configured by scripts/setup.sh or scripts/test.sh) and
# runs the release build's unit and integration tests, three at a time. Leaves out what only the
# full run needs: the Soft-RoCE guest (label rdma), the chaos and netns runs, the mpirun
# benchmarks, Python and the installed package; scripts/test.sh runs all of them, and the sanitizer
# builds. Extra arguments go to ctest: scripts/check.sh -R store
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || scripts/setup.sh
cmake --build build
ctest --test-dir build --output-on-failure -j "${RPLASMA_TEST_JOBS:-3}" -L 'unit|integration' \
  -LE 'rdma|chaos|netns|mpi|python|install' "$@"
