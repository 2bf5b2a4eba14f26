#!/usr/bin/env bash
# Runs every rplasma test from a fresh machine: set-up (packages + build), then ctest on the
# release build (all labels), then the unit and integration tests under ASan+UBSan and TSan.
# Every build treats warnings as errors. The ASan+UBSan build uses clang, so it also checks the
# thread-safety annotations (-Wthread-safety) and runs each libFuzzer target of tests/fuzz/ for
# RPLASMA_FUZZ_SECONDS (30) over its seed corpus (label fuzz); the TSan build leaves out verbs and MPI
# (-DRPLASMA_WITH_VERBS=OFF -DRPLASMA_WITH_MPI=OFF), so it also proves the store, the client and
# the manager build without rdma-core and Open MPI. Exits non-zero on any failure.
# Stages: RPLASMA_TEST_STAGES="release asan tsan" (default all).
set -euo pipefail
cd "$(dirname "$0")/.."

STAGES=${RPLASMA_TEST_STAGES:-"release asan tsan"}
JOBS=${RPLASMA_TEST_JOBS:-2}
status=0

run_stage() {  # name build_dir ctest-args... ; cmake args come from $CMAKE_ARGS
  local name=$1 dir=$2; shift 2
  echo "=== test stage: $name ($(date +%T))"
  BUILD_DIR=$dir scripts/setup.sh -DRPLASMA_WERROR=ON $CMAKE_ARGS
  if ! ctest --test-dir "$dir" --output-on-failure -j "$JOBS" "$@"; then
    echo "=== test stage $name FAILED"
    status=1
  fi
}

for stage in $STAGES; do
  case $stage in
    release) CMAKE_ARGS="" run_stage release build ;;
    asan)
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      # clang: -Wthread-safety is on for every clang build (CMakeLists.txt).
      CMAKE_ARGS="-DRPLASMA_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++" \
        run_stage asan build-asan -L "unit|integration|fuzz" -LE "rdma|bench"
      ;;
    tsan)
      export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
      CMAKE_ARGS="-DRPLASMA_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DRPLASMA_WITH_VERBS=OFF -DRPLASMA_WITH_MPI=OFF" \
        run_stage tsan build-tsan -L "unit|integration" -LE "rdma|bench|fault"
      ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
exit $status
