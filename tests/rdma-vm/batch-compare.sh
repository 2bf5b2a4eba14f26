#!/bin/bash
# batch-compare.sh BUILD_DIR OUT_DIR — inside the rdma-vm guest: batch fetch over verbs (one
# Client::Fetch of many objects: rplasma-bench --mode fetch --batch N, every byte verified by the
# bench) for 1000 x 1 KiB, 1000 x 16 KiB, 100 x 1 MiB and 16 x 16 MiB, next to perftest on the same
# rxe0 in the same session (ib_send_bw at 1 KiB and 16 KiB, ib_read_bw at 1 MiB and 16 MiB), then a
# summary (batch-summary.py): per batch, fetch ms, objects/s, GB/s and the ratio to perftest at the
# same size (objects/s over ib_send_bw's messages/s for the small ones, GB/s over ib_read_bw's for
# the large ones). From the host:
#   tests/rdma-vm/run-in-guest.sh -d "$PWD" -t 1500 -- tests/rdma-vm/batch-compare.sh build build/batch-compare
# The fetch mode always starts a redis-server (the directory; MGET is the batch's Redis peer), so
# redis-server must be installed. The runs are separate so that each one's arenas (sized for its
# largest batch) fit the guest's memory.
set -u
B=$(readlink -f "${1:-build}")
OUT=$(mkdir -p "${2:-$B/batch-compare}" && readlink -f "${2:-$B/batch-compare}")
HERE=$(dirname "$(readlink -f "$0")")
IP=${RDMA_VM_IP:?run inside tests/rdma-vm/run-in-guest.sh}
G=${RDMA_VM_GID_IDX:-1}
ROUNDS=${BATCH_COMPARE_ROUNDS:-5}
cd "$OUT" || exit 1
rm -f ./*.csv ./*.json ./*.txt

# name:sizes:batch. The single-object rows each run also prints are kept short (--iterations,
# --duration): the batch rows are what this script is for.
status=0
for run in small:1K,16K:1000 1m:1M:100 16m:16M:16; do
  IFS=: read -r name sizes batch <<< "$run"
  echo "### rplasma-bench fetch over verbs, --sizes $sizes --batch $batch --rounds $ROUNDS"
  "$B/bin/rplasma-bench" --mode fetch --transport verbs --listen-host "$IP" --sizes "$sizes" \
    --batch "$batch" --batch-bytes 256M --rounds "$ROUNDS" --iterations 20 --duration 1 \
    --csv "$OUT/batch-$name.csv" > "$OUT/bench-$name.txt" 2>&1
  rc=$?
  sed -n '/^batch fetch:/,/^fetch\/mget:/p' "$OUT/bench-$name.txt"; grep -E 'error|capped' "$OUT/bench-$name.txt"
  [ $rc -eq 0 ] || { echo "(rplasma-bench exited $rc: $OUT/bench-$name.txt)"; status=1; }
  # 16 x 16 MiB needs two 336 MiB arenas plus Redis holding and sending 256 MiB of values: more
  # than a 1.5 GiB guest has (the kernel kills the bench). Then half the batch, said so.
  if [ "$name" = 16m ] && [ $rc -eq 137 ]; then
    echo "### killed (out of memory?): again with --batch 8, 8 x 16 MiB"
    "$B/bin/rplasma-bench" --mode fetch --transport verbs --listen-host "$IP" --sizes 16M \
      --batch 8 --batch-bytes 128M --rounds "$ROUNDS" --iterations 20 --duration 1 \
      --csv "$OUT/batch-16m.csv" > "$OUT/bench-16m-8.txt" 2>&1 && status=0
    sed -n '/^batch fetch:/,/^fetch\/mget:/p' "$OUT/bench-16m-8.txt"
  fi
done

port=19300
PERFTEST_SERVER_LOG="$OUT/perftest-server.txt"
. "$HERE/perftest-pair.sh"
# Result lines: bytes iterations BW_peak BW_average[MB/s, MB = 2^20] MsgRate[Mpps].
for n in 1024 16384; do
  echo "### ib_send_bw -s $n"; pair ib_send_bw -s "$n" -n 5000 -F | grep -E '^ *[0-9]+ +[0-9]+' | tee -a "$OUT/ib_send_bw.txt"
done
for n in 1048576 16777216; do
  iters=200; [ "$n" -ge 16777216 ] && iters=20
  echo "### ib_read_bw -s $n"; pair ib_read_bw -s "$n" -n $iters -F | grep -E '^ *[0-9]+ +[0-9]+' | tee -a "$OUT/ib_read_bw.txt"
done
python3 "$HERE/batch-summary.py" "$OUT" | tee "$OUT/summary.txt"
exit $status
