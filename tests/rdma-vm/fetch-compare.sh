#!/bin/bash
# fetch-compare.sh BUILD_DIR OUT_DIR — inside the rdma-vm guest: the full-stack fetch benchmark
# (rplasma-bench --mode fetch over verbs) with Get forced (bytes inline, SEND/RECV), Pin forced
# (RDMA READ) and `auto`, next to
# perftest (ib_send_lat, ib_read_lat, ib_read_bw) at the same sizes on the same rxe0, then a summary
# (fetch-summary.py): per-size p50 of each protocol, the measured crossover, where auto put its
# threshold, auto / better fixed, and the ratios to perftest. Then auto against the fixed
# protocols the way the host measures it: rplasma-bench-mpi, two ranks over verbs, get, pin and
# auto interleaved round by round on one node per rank (auto/best paired by round; its CSV is
# bench-mpi.csv, for scripts/auto-vs-best.py), then the same with batches of 100 ids per Fetch
# (bench-mpi-batch.csv). FETCH_COMPARE_ROUNDS sets their rounds (60; 30 for the batches),
# FETCH_COMPARE_BATCH_SIZES the batches' sizes.
# From the host:
#   tests/rdma-vm/run-in-guest.sh -d "$PWD" -t 1800 -- tests/rdma-vm/fetch-compare.sh build build/fetch-compare
set -u
B=$(readlink -f "${1:-build}")
OUT=$(mkdir -p "${2:-$B/fetch-compare}" && readlink -f "${2:-$B/fetch-compare}")
HERE=$(dirname "$(readlink -f "$0")")
IP=${RDMA_VM_IP:?run inside tests/rdma-vm/run-in-guest.sh}
G=${RDMA_VM_GID_IDX:-1}
SIZES=${FETCH_COMPARE_SIZES:-1K,4K,16K,64K,256K,1M,4M}
DURATION=${FETCH_COMPARE_DURATION:-3}
cd "$OUT" || exit 1
rm -f ./*.csv ./*.json ./*.txt

# Largest Call = the manager's kMaxCallBytes (64 MiB): every size here goes by Get.
for mode in get:67108864 pin:0 auto:auto; do
  name=${mode%%:*}; threshold=${mode#*:}
  echo "### rplasma-bench fetch, protocol $name (--pin-threshold $threshold)"
  "$B/bin/rplasma-bench" --mode fetch --transport verbs --listen-host "$IP" --pin-threshold "$threshold" \
    --no-redis --sizes "$SIZES" --iterations 200 --duration "$DURATION" --csv "$OUT/fetch-$name.csv" 2>&1 |
    grep -E '^(fetch|stream) ' || echo "(rplasma-bench failed)"
done

port=19200
PERFTEST_SERVER_LOG="$OUT/perftest-server.txt"
. "$HERE/perftest-pair.sh"
bytes() { numfmt --from=iec "$1"; }
for s in ${SIZES//,/ }; do
  n=$(bytes "$s")
  iters=200; [ "$n" -ge 1048576 ] && iters=20
  echo "### ib_send_lat -s $n"; pair ib_send_lat -s "$n" -n $iters -F | grep -E '^ *[0-9]+ +[0-9]+' | tee -a "$OUT/ib_send_lat.txt"
  echo "### ib_read_lat -s $n"; pair ib_read_lat -s "$n" -n $iters -F | grep -E '^ *[0-9]+ +[0-9]+' | tee -a "$OUT/ib_read_lat.txt"
  if [ "$n" -ge 65536 ]; then
    echo "### ib_read_bw -s $n"; pair ib_read_bw -s "$n" -n $iters -F | grep -E '^ *[0-9]+ +[0-9]+' | tee -a "$OUT/ib_read_bw.txt"
  fi
done
python3 "$HERE/fetch-summary.py" "$OUT" | tee "$OUT/summary.txt"

echo "### rplasma-bench-mpi over verbs: get, pin and auto interleaved on one node per rank"
# Rank-to-rank MPI traffic over shared memory only: rxe0 belongs to the managers.
[ "$(hostname)" = "(none)" ] && hostname rplasma-rdma-vm
sweep() {  # NAME ARGS...: rplasma-bench-mpi over verbs, its auto/best summary printed
  local name=$1; shift
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 \
    mpirun -np 2 --oversubscribe "$B/bin/rplasma-bench-mpi" --start-redis --transport=verbs --listen_host="$IP" \
    --patterns=pairs --protocols=get,pin,auto --tcp_baseline=false --png= --csv="$OUT/$name.csv" "$@" \
    > "$OUT/$name.txt" 2>&1 || echo "(rplasma-bench-mpi failed: $OUT/$name.txt)"
  sed -n '/^auto vs the better/,/^auto\/best worst/p' "$OUT/$name.txt"
}
sweep bench-mpi --sizes="$SIZES" --repeat="${FETCH_COMPARE_ROUNDS:-60}"
echo "### the same, batches of 100 ids per Fetch call"
sweep bench-mpi-batch --batch=100 --sizes="${FETCH_COMPARE_BATCH_SIZES:-1K,16K,64K,256K}" \
  --repeat="${FETCH_COMPARE_ROUNDS:-30}"
