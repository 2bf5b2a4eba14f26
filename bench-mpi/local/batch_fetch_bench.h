// The batch rows of rplasma-bench --mode fetch --batch N: many objects moved by one call, against
// the peers that move the same values or bytes at once. For one object size S and
// n = LocalBenchOptions::BatchCount(S) (N, capped so that n * S <= --batch-bytes):
//
//   batch_fetch   (rplasma)     cold: n objects put on node A (untimed, distinct bytes per object),
//                               then ONE Client::Fetch of all n ids on node B (timed), then every
//                               byte checked on B (Client::Get of all ids, untimed) and the copies
//                               deleted on B (untimed); B's manager guesses A as the owner once
//                               two lookups agreed (manager/fetch/owner_guess.h), so after the
//                               warm-up the cold rows go to A with no lookup, as a hinted fetch does
//   batch_fetch_warm            the same n ids fetched again the same way: B's manager knows
//                               where they live (no directory call); then deleted on both nodes
//   batch_fetch_hinted          n more objects put on A and fetched at once naming A's node
//                               (Fetch's hint_node; no wait for the directory); deleted on both
//   batch_mget    (redis)       one MGET of n keys holding values of S bytes (set beforehand)
//   batch_stream  (tcp_stream)  n * S bytes in one request over the raw loopback TCP stream
//
// One untimed warm-up round, then --rounds measured rounds; each round runs the fetches, the MGET
// and the stream (the one that goes first rotates), so a drift in machine speed hits all of them
// alike. A row reports the
// median round as p50 (min and max in its detail); its latency columns are per batch, ops_per_s is
// objects per second from the median. The batch_fetch rows also carry ratio_vs_mget (fetch time /
// MGET time) and ratio_vs_stream (stream time / fetch time, i.e. the fetch's share of the stream's
// throughput). scripts/bench-targets.py judges them.
//
// Cold rounds use fresh ids. Directory publication is asynchronous, so before the cold fetch the
// round waits (untimed) until the directory lists every id; a retried fetch would move the bytes
// before the clock starts. The hinted fetch needs no directory, so it does not wait.
#ifndef RPLASMA_BENCH_MPI_LOCAL_BATCH_FETCH_BENCH_H_
#define RPLASMA_BENCH_MPI_LOCAL_BATCH_FETCH_BENCH_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"

#include "bench-mpi/common/redis_connection.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/common/tcp_stream_peer.h"
#include "bench-mpi/local/local_bench_options.h"
#include "client/client.h"
#include "manager/directory/directory.h"

namespace rplasma::bench {

// What a batch round runs against; all borrowed, started by RunFetchBench.
struct BatchFetchPeers {
  Client* owner = nullptr;         // node A: puts and deletes the originals
  Client* reader = nullptr;        // node B: fetches, checks and deletes the copies
  Directory* directory = nullptr;  // the nodes' directory, to wait for publication
  RedisConnection* redis = nullptr;
  TcpStreamClient* stream = nullptr;
  std::string owner_node;  // node A's manager's node id, for the hinted fetches
};

// Arena bytes one batch of the largest-footprint size of `options` occupies (objects are 64-byte
// aligned); 0 when options.batch is 1 (no batch rows).
uint64_t BatchArenaBytes(const LocalBenchOptions& options);
// Bytes of the largest batch (n * S) over the sizes; 0 when options.batch is 1.
uint64_t LargestBatchBytes(const LocalBenchOptions& options);

// The three batch rows of one size (see above) into `reporter`; a line on `out` says when the
// batch was capped by --batch-bytes. `protocol` labels the batch_fetch row ("get", "pin", "auto").
// Deletes what it put (objects on both nodes, Redis keys) whatever happens.
absl::Status RunBatchFetchSize(const LocalBenchOptions& options, const BatchFetchPeers& peers, uint64_t size,
                               const std::string& protocol, ResultReporter& reporter, std::ostream& out);

// The batch rows in `reporter` as one readable table, a line per size: fetch ms (min..max),
// objects/s, GB/s, MGET ms, stream ms, fetch/MGET time ratio, fetch/stream throughput ratio.
void PrintBatchFetchTable(const ResultReporter& reporter, std::ostream& out);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_BATCH_FETCH_BENCH_H_
