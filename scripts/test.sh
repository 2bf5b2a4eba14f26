#!/usr/bin/env bash
# Runs every rplasma test from a fresh machine: set-up (packages + build), then ctest on the
# release build (all labels), then the unit and integration tests under ASan+UBSan and TSan.
# Every build treats warnings as errors. The ASan+UBSan build uses clang, so it also checks the
# thread-safety annotations (-Wthread-safety) and runs each libFuzzer target of tests/fuzz/ for
# RPLASMA_FUZZ_SECONDS (10 here) over its seed corpus (label fuzz); the TSan build leaves out verbs and MPI
# (-DRPLASMA_WITH_VERBS=OFF -DRPLASMA_WITH_MPI=OFF), so it also proves the store, the client and
# the manager build without rdma-core and Open MPI. Exits non-zero on any failure.
# Stages: RPLASMA_TEST_STAGES="lint release asan tsan" (default all; lint is scripts/lint.sh).
# At the end it prints each stage's build and test time and its slowest tests (docs/TESTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."

STAGES=${RPLASMA_TEST_STAGES:-"lint release asan tsan"}
# Tests run side by side: two at a time in the sanitizer stages, whose tests keep both cores busy;
# three in release, where the guest keeps about one core busy and the other tests mostly wait.
JOBS=${RPLASMA_TEST_JOBS:-}
status=0
started=$(date +%s)
TIMES=()    # "stage build_s test_s" per stage run
SLOWEST=()  # the 15 slowest tests of each stage, as printed at the end

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
  local t0 t1 t2
  t0=$(date +%s)
  # Test builds keep line tables only (-g1: backtraces and sanitizer reports still name files and
  # lines); full debug info for a debugger made every build about a quarter slower.
  if ! BUILD_DIR=$dir scripts/setup.sh -DRPLASMA_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 $CMAKE_ARGS; then
    echo "=== test stage $name FAILED (build)"
    status=1
    TIMES+=("$name $(($(date +%s) - t0)) -")
    return
  fi
  t1=$(date +%s)
  local out="$dir/ctest-output.log"
  if ! ctest --test-dir "$dir" --output-on-failure -j "${JOBS:-$STAGE_JOBS}" "$@" 2>&1 | tee "$out"; then
    echo "=== test stage $name FAILED"
    status=1
  fi
  t2=$(date +%s)
  if ! check_skips "$out"; then
    echo "=== test stage $name FAILED (skips)"
    status=1
  fi
  TIMES+=("$name $((t1 - t0)) $((t2 - t1))")
  SLOWEST+=("$name: $(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$out" | sed -E 's/.* Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec.*/\2 \1/' |
    sort -rn | head -15 | awk '{printf "%s %ss, ", $2, $1}' | sed 's/, $//')")
}

report() {  # the table docs/TESTING.md keeps, for this run
  echo
  echo "=== time per stage (s)"
  printf "%-8s %8s %8s\n" stage build test
  local row
  for row in "${TIMES[@]}"; do printf "%-8s %8s %8s\n" $row; done
  printf "%-8s %17s\n" total "$(($(date +%s) - started))"
  echo "=== slowest tests per stage"
  for row in "${SLOWEST[@]}"; do echo "$row"; done
}

for stage in $STAGES; do
  case $stage in
    lint)
      t0=$(date +%s)
      scripts/lint.sh || { echo "=== test stage lint FAILED"; status=1; }
      TIMES+=("lint - $(($(date +%s) - t0))")
      ;;
    # The rdma-guest tests run inside the Soft-RoCE guest, through rdma_vm_suite.
    release) STAGE_JOBS=3 CMAKE_ARGS="" run_stage release build -LE '^rdma-guest$' ;;
    asan)
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      # The release stage runs the chaos test for its default 60 s; here half of that keeps CI in time.
      export RPLASMA_CHAOS_SECONDS=${RPLASMA_CHAOS_SECONDS:-30}
      # clang: -Wthread-safety is on for every clang build (CMakeLists.txt). lld links the ASan
      # executables about 5x faster than GNU ld (1.3 s -> 0.27 s for manager_fetch_test).
      # The netns run (real packet loss between namespaces) and the mpirun benchmarks (label mpi:
      # Open MPI's own allocations keep LeakSanitizer off in the ranks anyway) are left to the
      # release stage, and each fuzzer runs 10 s over its corpus, to keep CI in time (scripts/fuzz.sh
      # fuzzes for as long as asked).
      STAGE_JOBS=2 CMAKE_ARGS="-DRPLASMA_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DRPLASMA_FUZZ_SECONDS=10" \
        run_stage asan build-asan -L "unit|integration|fuzz" -LE "rdma|bench|netns|mpi"
      ;;
    tsan)
      export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
      # The fault tests run here too; the chaos and netns runs (a dozen processes each) run in the
      # release and ASan stages only, to keep the CI in time.
      STAGE_JOBS=2 CMAKE_ARGS="-DRPLASMA_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DRPLASMA_WITH_VERBS=OFF -DRPLASMA_WITH_MPI=OFF" \
        run_stage tsan build-tsan -L "unit|integration" -LE "rdma|bench|chaos|netns"
      ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
report
exit $status
