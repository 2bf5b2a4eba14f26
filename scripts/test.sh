#!/usr/bin/env bash
# Runs every rplasma test from a fresh machine: set-up (packages + build), then ctest on the
# release build (all labels), then the unit and integration tests under ASan+UBSan and TSan.
# Every build treats warnings as errors. The ASan+UBSan build uses clang, so it also checks the
# thread-safety annotations (-Wthread-safety) and runs each libFuzzer target of tests/fuzz/ for
# RPLASMA_FUZZ_SECONDS (20 here) over its seed corpus (label fuzz); the TSan build leaves out verbs and MPI
# (-DRPLASMA_WITH_VERBS=OFF -DRPLASMA_WITH_MPI=OFF), so it also proves the store, the client and
# the manager build without rdma-core and Open MPI. Exits non-zero on any failure.
# Stages: RPLASMA_TEST_STAGES="release asan tsan" (default all).
set -euo pipefail
cd "$(dirname "$0")/.."

STAGES=${RPLASMA_TEST_STAGES:-"release asan tsan"}
JOBS=${RPLASMA_TEST_JOBS:-2}
status=0

# Where every test must run (RPLASMA_REQUIRE_ALL=1, as .ci/run sets), a test that skips fails:
# gtest skips through RPLASMA_SKIP_TEST (tests/support/skip.h), whole ctest tests (the guest suite's
# exit 77) here, unless their need is listed in RPLASMA_ALLOWED_SKIPS (e.g. "rdma-vm").
check_skips() {  # ctest-output-file
  [ "${RPLASMA_REQUIRE_ALL:-0}" = 1 ] || return 0
  local skipped
  skipped=$(grep -E '\*\*\*Skipped|Not Run' "$1" || true)
  [ -n "$skipped" ] || return 0
  if grep -q 'rdma_vm_suite' <<<"$skipped" && [[ ",${RPLASMA_ALLOWED_SKIPS:-}," == *,rdma-vm,* ]]; then
    skipped=$(grep -v 'rdma_vm_suite' <<<"$skipped" || true)
  fi
  [ -n "$skipped" ] || return 0
  echo "=== tests skipped where every test must run (RPLASMA_REQUIRE_ALL=1):"
  echo "$skipped"
  return 1
}

run_stage() {  # name build_dir ctest-args... ; cmake args come from $CMAKE_ARGS
  local name=$1 dir=$2; shift 2
  echo "=== test stage: $name ($(date +%T))"
  # Test builds keep line tables only (-g1: backtraces and sanitizer reports still name files and
  # lines); full debug info for a debugger made every build about a quarter slower.
  BUILD_DIR=$dir scripts/setup.sh -DRPLASMA_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 $CMAKE_ARGS
  local out="$dir/ctest-output.log"
  if ! ctest --test-dir "$dir" --output-on-failure -j "$JOBS" "$@" 2>&1 | tee "$out"; then
    echo "=== test stage $name FAILED"
    status=1
  fi
  if ! check_skips "$out"; then
    echo "=== test stage $name FAILED (skips)"
    status=1
  fi
}

for stage in $STAGES; do
  case $stage in
    # The rdma-guest tests run inside the Soft-RoCE guest, through rdma_vm_suite.
    release) CMAKE_ARGS="" run_stage release build -LE '^rdma-guest$' ;;
    asan)
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      # The release stage runs the chaos test for its default 60 s; here half of that keeps CI in time.
      export RPLASMA_CHAOS_SECONDS=${RPLASMA_CHAOS_SECONDS:-30}
      # clang: -Wthread-safety is on for every clang build (CMakeLists.txt).
      # The netns run (real packet loss between namespaces) and the mpirun benchmarks (label mpi:
      # Open MPI's own allocations keep LeakSanitizer off in the ranks anyway) are left to the
      # release stage, and each fuzzer runs 20 s, to keep CI in time.
      CMAKE_ARGS="-DRPLASMA_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRPLASMA_FUZZ_SECONDS=20" \
        run_stage asan build-asan -L "unit|integration|fuzz" -LE "rdma|bench|netns|mpi"
      ;;
    tsan)
      export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
      # The fault tests run here too; the chaos and netns runs (a dozen processes each) run in the
      # release and ASan stages only, to keep the CI in time.
      CMAKE_ARGS="-DRPLASMA_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DRPLASMA_WITH_VERBS=OFF -DRPLASMA_WITH_MPI=OFF" \
        run_stage tsan build-tsan -L "unit|integration" -LE "rdma|bench|chaos|netns"
      ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
exit $status
