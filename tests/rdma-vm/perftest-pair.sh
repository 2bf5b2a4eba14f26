# perftest-pair.sh — sourced by the guest benchmark scripts (perf-compare.sh, fetch-compare.sh).
# pair TOOL ARGS...: runs a perftest server and its client on this guest's rxe0 (GID index $G,
# client to $IP), on the next port after $port; prints the client's output. The server's output
# goes to $PERFTEST_SERVER_LOG (default /tmp/perf_srv.log).
pair() {
  port=$((port + 1))
  timeout 300 "$1" -d rxe0 -x "$G" -p $port "${@:2}" > "${PERFTEST_SERVER_LOG:-/tmp/perf_srv.log}" 2>&1 &
  local srv=$!
  for _ in $(seq 600); do ss -Htln "sport = :$port" | grep -q . && break; sleep 0.1; done
  timeout 300 "$1" -d rxe0 -x "$G" -p $port "${@:2}" "$IP"
  wait $srv
}
