// RunFetchBench: rplasma-bench --mode fetch. Two nodes on loopback — a private redis-server (the
// directory), two rplasma-stores, two rplasma-managers (TCP transport) — and, by size, objects put
// on node A and fetched by a client of node B, with the peers measured in the same run:
//
//   fetch (rplasma)        Client::Fetch of one id on B (put on A beforehand, untimed; deleted on
//                          B afterwards, untimed)
//   stream (tcp_stream)    the same bytes over a raw loopback TCP connection, request/response
//                          (tcp_stream_peer.h): at 1 KiB the TCP round trip, at 64 MiB the stream
//   get (redis)            a Redis GET of a value of the same size through hiredis
//
// With --batch N (N > 1) each size also gets the batch rows of batch_fetch_bench.h: N objects in
// one Client::Fetch against Redis MGET and the TCP stream of the same bytes.
//
// scripts/bench-targets.py judges the CSV against the fetch targets. Everything started is stopped
// before it returns.
#ifndef RPLASMA_BENCH_MPI_LOCAL_FETCH_BENCH_H_
#define RPLASMA_BENCH_MPI_LOCAL_FETCH_BENCH_H_

#include <ostream>

#include "absl/status/status.h"
#include "bench-mpi/local/local_bench_options.h"

namespace rplasma::bench {

absl::Status RunFetchBench(const LocalBenchOptions& options, std::ostream& out);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_FETCH_BENCH_H_
