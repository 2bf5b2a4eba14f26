#!/usr/bin/env bash
# Installs every Debian package rplasma needs (idempotent), then configures and builds into
# build/ (or $BUILD_DIR). Extra CMake arguments are passed through: scripts/setup.sh -DRPLASMA_WERROR=ON
# RPLASMA_BUILD_TARGETS="a b" builds only those targets (and what they need), as scripts/demo.sh does;
# RPLASMA_BUILD_FOR_TESTS="<ctest arguments>" only the executables of the tests they select.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential clang libclang-rt-14-dev lld cmake ninja-build pkg-config git clang-format
  libabsl-dev libflatbuffers-dev flatbuffers-compiler libgtest-dev libgmock-dev nlohmann-json3-dev
  libhiredis-dev redis-server libxxhash-dev libssl-dev
  libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
  libopenmpi-dev openmpi-bin gnuplot-nox iproute2 nftables procps bc
  pybind11-dev python3-dev python3-numpy python3-pytest prometheus
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
# The flags every build of the scripts shares (arguments given later win), so that demo.sh,
# check.sh and test.sh reuse one build/: warnings are errors, and line tables only (-g1: backtraces
# and sanitizer reports still name files and lines; full debug info made every build about a
# quarter slower).
DEFAULTS=(-DRPLASMA_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
          -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1)
cmake -S . -B "$BUILD_DIR" -G Ninja "${DEFAULTS[@]}" "$@" >/dev/null
targets=()
for t in ${RPLASMA_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
# RPLASMA_BUILD_FOR_TESTS="<ctest selection>" builds only the executables of the tests it selects
# (each test executable depends on the daemons and tools its tests start), as the sanitizer stages
# of scripts/test.sh do: no benchmark or test they do not run is compiled there. A test's target
# is the executable it runs: the one its RPLASMA_TEST_EXECUTABLE names where several ctest tests
# share one (tests/CMakeLists.txt), else its name (a sharded test's without the .N); a selected
# test of another name (a script) makes it build everything.
if [ -n "${RPLASMA_BUILD_FOR_TESTS:-}" ]; then
  known=$(ninja -C "$BUILD_DIR" -t targets all | sed -n 's/: phony$//p')
  # shellcheck disable=SC2086 # the selection is a list of ctest arguments
  selected=$(ctest --test-dir "$BUILD_DIR" -N --show-only=json-v1 $RPLASMA_BUILD_FOR_TESTS | python3 -c '
import json, re, sys
def target(test):
    for p in test.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            for v in p["value"]:
                if v.startswith("RPLASMA_TEST_EXECUTABLE="):
                    return v.split("=", 1)[1]
    return re.sub(r"[.][0-9]+$", "", test["name"])
print(*sorted({target(t) for t in json.load(sys.stdin)["tests"]}))')
  for t in $selected; do
    grep -qx -- "$t" <<<"$known" || { targets=(); break; }
    targets+=(--target "$t")
  done
fi
cmake --build "$BUILD_DIR" "${targets[@]}"
echo "setup: built into $BUILD_DIR/bin"
