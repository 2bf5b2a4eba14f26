#!/usr/bin/env bash
# The main job, from a fresh machine: set-up (packages + build), then a local two-node rplasma
# cluster on loopback — a redis-server, two stores, two managers — objects put on node A,
# fetched from node B over the TCP transport by both protocols (Get for small, Pin+stream for
# large), verified byte for byte, then a short fetch benchmark table judged against the targets
# (scripts/bench-targets.py). Stops everything it started.
#
#   scripts/demo.sh              # everything
#   RPLASMA_DEMO_SKIP_SETUP=1 scripts/demo.sh   # reuse an existing build/
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=$ROOT/build/bin

# Only what the demo runs: the daemons, the CLI and the benchmark (the tests are scripts/test.sh's).
[ -n "${RPLASMA_DEMO_SKIP_SETUP:-}" ] ||
  RPLASMA_BUILD_TARGETS="rplasma_store rplasma-manager rplasma_cli_main rplasma-bench" scripts/setup.sh

WORK=$(mktemp -d /tmp/rplasma-demo-XXXXXX)
chmod 700 "$WORK"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_for_socket() {  # path what
  for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done
  echo "demo: $2 did not come up (log: $WORK/*.log)"; tail -n 20 "$WORK"/*.log; exit 1
}
free_port() {  # a loopback TCP port nobody listens on
  local p
  while :; do
    p=$(shuf -i 20000-60000 -n 1)
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

echo "== starting redis-server, two stores and two managers on loopback (in $WORK)"
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/secret"
chmod 600 "$WORK/secret"

for node in a b; do
  mkdir -m 700 "$WORK/$node"
  "$BIN/rplasma-store" --socket "$WORK/$node/store.sock" --memory 512M --name "store-$node" \
    >"$WORK/store-$node.log" 2>&1 &
  PIDS+=($!)
  wait_for_socket "$WORK/$node/store.sock" "store $node"
  "$BIN/rplasma-manager" --store-socket "$WORK/$node/store.sock" --redis "127.0.0.1:$REDIS_PORT" \
    --listen 127.0.0.1:0 --client-socket "$WORK/$node/manager.sock" --secret-file "$WORK/secret" \
    --transport tcp --pin-threshold 64K --node-name "node-$node" >"$WORK/manager-$node.log" 2>&1 &
  PIDS+=($!)
  wait_for_socket "$WORK/$node/manager.sock" "manager $node"
done

A=(--store-socket "$WORK/a/store.sock" --manager-socket "$WORK/a/manager.sock")
B=(--store-socket "$WORK/b/store.sock" --manager-socket "$WORK/b/manager.sock")

echo "== putting objects on node A, fetching them from node B, verifying every byte"
printf "%-10s %-8s %10s  %s\n" size protocol fetch_ms verified
for size in 1K 64K 1M 16M 64M; do
  bytes=$(numfmt --from=iec "$size")
  head -c "$bytes" /dev/urandom >"$WORK/in-$size"
  "$BIN/rplasma" "${A[@]}" put --label "demo-$size" "$WORK/in-$size" >/dev/null
  proto=get; [ "$bytes" -gt 65536 ] && proto=pin
  start=$(date +%s%N)
  "$BIN/rplasma" "${B[@]}" fetch --label "demo-$size" --timeout 30000
  end=$(date +%s%N)
  "$BIN/rplasma" "${B[@]}" get --label "demo-$size" "$WORK/out-$size"
  if cmp -s "$WORK/in-$size" "$WORK/out-$size"; then ok=yes; else ok=NO; fi
  printf "%-10s %-8s %10.1f  %s\n" "$size" "$proto" "$(echo "($end - $start) / 1000000" | bc -l)" "$ok"
  [ "$ok" = yes ] || { echo "demo: bytes differ for $size"; exit 1; }
done
echo "(fetch_ms includes starting the CLI process; the benchmark below measures in-process)"
echo
echo "== node B's store now holds:"
"$BIN/rplasma" "${B[@]}" list

echo
echo "== short fetch benchmark (its own redis, two stores, two managers; TCP transport)"
"$BIN/rplasma-bench" --mode fetch --sizes 1K,64K,1M,16M,64M --iterations 20 --duration 2 \
  --csv "$WORK/fetch.csv"
python3 scripts/bench-targets.py "$WORK/fetch.csv"
echo
echo "demo: done; every process it started is stopped."
