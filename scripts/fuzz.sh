#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ for a long time: each grows its own corpus in a scratch
# directory (seeded from the committed tests/fuzz/corpus/<target>/, which is only read) and stops
# at its first crash. At the end every crash input found is printed; exit status 1 if there is one.
#
#   scripts/fuzz.sh [--minutes N] [target...]     (default: 60 minutes, every target)
#
# Targets run side by side, $FUZZ_JOBS at a time (default: the number of cores). Environment:
# BUILD_DIR (default build-asan, configured like scripts/test.sh's asan stage if it does not exist),
# FUZZ_DIR (default /tmp/rplasma-fuzz: corpus/<target>/, crashes/<target>/, logs/<target>.log).
# docs/FUZZING.md says how a crash becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

MINUTES=60
TARGETS=()
while (($#)); do
  case $1 in
    --minutes) MINUTES=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[[ $MINUTES =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --minutes takes a whole number >= 1" >&2; exit 2; }
BUILD_DIR=${BUILD_DIR:-build-asan}
FUZZ_DIR=${FUZZ_DIR:-/tmp/rplasma-fuzz}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)}
if ((${#TARGETS[@]} == 0)); then
  for dir in tests/fuzz/corpus/*/; do TARGETS+=("$(basename "$dir")"); done
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DRPLASMA_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRPLASMA_WERROR=ON -DRPLASMA_FUZZ=ON >/dev/null
fi
cmake --build "$BUILD_DIR" --target "${TARGETS[@]/%/_fuzzer}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_one() {  # target
  local t=$1
  mkdir -p "$FUZZ_DIR/corpus/$t" "$FUZZ_DIR/crashes/$t" "$FUZZ_DIR/logs"
  echo "fuzz.sh: $t for $MINUTES min (log $FUZZ_DIR/logs/$t.log)"
  "$BUILD_DIR/tests/fuzz/bin/${t}_fuzzer" -max_total_time=$((MINUTES * 60)) -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$FUZZ_DIR/crashes/$t/" \
    "$FUZZ_DIR/corpus/$t" "tests/fuzz/corpus/$t" >"$FUZZ_DIR/logs/$t.log" 2>&1 || true
  echo "fuzz.sh: $t done: $(grep -E '^#[0-9]+ +DONE' "$FUZZ_DIR/logs/$t.log" | tail -1 || echo 'stopped early (crash?)')"
}
running=0
for t in "${TARGETS[@]}"; do
  [ -x "$BUILD_DIR/tests/fuzz/bin/${t}_fuzzer" ] || { echo "fuzz.sh: no target $t" >&2; exit 2; }
  run_one "$t" &
  running=$((running + 1))
  if ((running >= FUZZ_JOBS)); then wait -n; running=$((running - 1)); fi
done
wait

crashes=$(find "$FUZZ_DIR/crashes" -type f 2>/dev/null | sort)
if [ -n "$crashes" ]; then
  echo "fuzz.sh: crash inputs (replay one: $BUILD_DIR/tests/fuzz/bin/<target>_fuzzer <file>):"
  echo "$crashes"
  exit 1
fi
echo "fuzz.sh: no crash; corpus grown in $FUZZ_DIR/corpus"
