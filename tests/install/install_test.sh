#!/usr/bin/env bash
# install_test.sh BUILD_DIR CONSUMER_DIR LIBDIR CXX GENERATOR
#
# The installed package works on its own: installs BUILD_DIR into a temporary prefix, starts the
# installed rplasma-store, round-trips bytes with the installed CLI, then builds the consumer
# (CONSUMER_DIR, out of tree, seeing only the prefix) three ways — find_package(rplasma) with
# rplasma::client and with rplasma::client_static, and pkg-config — and runs each against the
# store: put, get, compare; the CLI then reads the consumer's object back. Removes the prefix and
# stops the store on every exit. ctest label `install`.
set -euo pipefail

build_dir=$1 consumer_dir=$2 libdir=$3 cxx=$4 generator=$5

tmp=$(mktemp -d /tmp/rplasma-install-test.XXXXXX)
store_pid=""
cleanup() {
  if [[ -n $store_pid ]] && kill -0 "$store_pid" 2>/dev/null; then
    kill -TERM "$store_pid" && wait "$store_pid" || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
for f in bin/rplasma-store bin/rplasma-manager bin/rplasma bin/rplasma-bench include/rplasma/client.h \
         "$libdir/librplasma_client.so" "$libdir/librplasma_client.a" "$libdir/cmake/rplasma/rplasmaConfig.cmake" \
         "$libdir/pkgconfig/rplasma.pc"; do
  [[ -e $prefix/$f ]] || fail "the install has no $f"
done

socket=$tmp/store.sock
"$prefix/bin/rplasma-store" --socket "$socket" --memory 64M >"$tmp/store.log" 2>&1 &
store_pid=$!
cli=("$prefix/bin/rplasma" --store-socket "$socket")
for ((i = 0; i < 200; i++)); do  # up to 20 s for the socket to accept
  "${cli[@]}" stats >/dev/null 2>&1 && break
  kill -0 "$store_pid" 2>/dev/null || { cat "$tmp/store.log"; fail "rplasma-store exited"; }
  sleep 0.1
done
"${cli[@]}" stats >/dev/null || { cat "$tmp/store.log"; fail "rplasma-store does not answer on $socket"; }

printf 'bytes through the installed CLI' | "${cli[@]}" put --label install-test-cli - >/dev/null
[[ $("${cli[@]}" get --label install-test-cli -) == "bytes through the installed CLI" ]] || fail "CLI put/get"

# run_consumer NAME BINARY: the consumer's put/get, then the same object read by the CLI.
run_consumer() {
  local name=$1 binary=$2 text="bytes from the $1 consumer" id
  id=$("$binary" "$socket" "$text") || fail "$name consumer"
  [[ $("${cli[@]}" get "$id" -) == "$text" ]] || fail "$name consumer: the CLI reads other bytes for $id"
  echo "install_test: $name consumer ok ($id)"
}

for target in client client_static; do
  out=$tmp/cmake-$target
  cmake -S "$consumer_dir" -B "$out" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_PREFIX_PATH="$prefix" -DRPLASMA_TARGET="rplasma::$target" >"$out.log" 2>&1 \
    && cmake --build "$out" >>"$out.log" 2>&1 || { cat "$out.log"; fail "building the consumer with rplasma::$target"; }
  # The shared consumer loads the installed library; the static one carries it.
  if [[ $target == client ]]; then
    # ldd's output is read whole first: with pipefail, `ldd | grep -q` fails whenever grep finds
    # its line before ldd has written the rest (SIGPIPE), as it did under load.
    libs=$(ldd "$out/consumer")
    grep -q "$prefix/$libdir/librplasma_client.so" <<<"$libs" || fail "rplasma::client: not linked to the installed .so"
  else
    libs=$(ldd "$out/consumer")
    ! grep -q librplasma_client <<<"$libs" || fail "rplasma::client_static: linked to a shared librplasma_client"
  fi
  run_consumer "find_package rplasma::$target" "$out/consumer"
done

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
read -r -a pc_flags <<<"$(pkg-config --cflags --libs rplasma)"
"$cxx" -std=c++20 -o "$tmp/consumer-pkg-config" "$consumer_dir/consumer.cc" "${pc_flags[@]}" \
  || fail "building the consumer with pkg-config (${pc_flags[*]})"
LD_LIBRARY_PATH=$prefix/$libdir run_consumer pkg-config "$tmp/consumer-pkg-config"

kill -TERM "$store_pid"
wait "$store_pid" || fail "rplasma-store exited with status $? on SIGTERM"
store_pid=""
echo "install_test: ok"
