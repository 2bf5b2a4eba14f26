#!/bin/bash
# perf-compare.sh BUILD_DIR — inside the rdma-vm guest: rplasma-verbs-bench next to perftest
# (ib_send_lat, ib_read_lat, ib_read_bw) on the same rxe0, same session. Emulated numbers are only
# meaningful as ratios. From the host:
#   tests/rdma-vm/run-in-guest.sh -d BUILD_DIR -t 900 -- "$PWD"/tests/rdma-vm/perf-compare.sh BUILD_DIR
set -u
B=$(readlink -f "${1:-.}")
IP=${RDMA_VM_IP:?run inside tests/rdma-vm/run-in-guest.sh}
G=${RDMA_VM_GID_IDX:-1}
port=19100
. "$(dirname "$(readlink -f "$0")")/perftest-pair.sh"
echo "### rplasma-verbs-bench"
"$B/bin/rplasma-verbs-bench" --address="$IP" --call_sizes=64,4096,65536 --call_iters=500 \
  --read_sizes=4096,65536,1048576,4194304 --read_bytes_per_size=$((32 << 20))
for s in 64 4096 65536; do echo "### ib_send_lat -s $s"; pair ib_send_lat -s $s -n 500 -F | grep -E '^ *[0-9]+ +[0-9]+'; done
for s in 4096; do echo "### ib_read_lat -s $s"; pair ib_read_lat -s $s -n 500 -F | grep -E '^ *[0-9]+ +[0-9]+'; done
for s in 4096 65536 1048576 4194304; do
  n=1000; [ $s -ge 1048576 ] && n=$(( (32 << 20) / s ))
  echo "### ib_read_bw -s $s"; pair ib_read_bw -s $s -n $n -F | grep -E '^ *[0-9]+ +[0-9]+'
done
