#!/usr/bin/env bash
# The long mode of the store's randomized model test (tests/integration/store_model_test.cc): runs
# it over and over with fresh seeds until --minutes have passed or a run fails; a failing run's
# seed is printed (RPLASMA_MODEL_SEED=<seed> replays it).
#
#   scripts/model.sh [--minutes N] [--build DIR]     (default: 30 minutes, build/; build-asan or
#                                                    build-tsan run it under a sanitizer)
set -euo pipefail
cd "$(dirname "$0")/.."

MINUTES=30
BUILD=build
while (($#)); do
  case $1 in
    --minutes) MINUTES=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "model.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# The model is one test of the client's integration executable (tests/integration/client.cmake).
MODEL=("$BUILD/tests/bin/client_integration_test" --gtest_filter='StoreModelTest.*')
[ -x "${MODEL[0]}" ] || cmake --build "$BUILD" --target client_integration_test
end=$((SECONDS + MINUTES * 60))
runs=0
while ((SECONDS < end)); do
  left=$((end - SECONDS))
  if ! RPLASMA_MODEL_SECONDS=$((left < 300 ? left : 300)) "${MODEL[@]}" | tee /tmp/rplasma-model.log |
      grep -E '^store model'; then
    echo "model.sh: run $((runs + 1)) failed; its log is /tmp/rplasma-model.log (the seed is on its first line)" >&2
    exit 1
  fi
  if grep -q FAILED /tmp/rplasma-model.log; then
    echo "model.sh: run $((runs + 1)) failed; its log is /tmp/rplasma-model.log (the seed is on its first line)" >&2
    exit 1
  fi
  runs=$((runs + 1))
done
echo "model.sh: $runs runs passed"
