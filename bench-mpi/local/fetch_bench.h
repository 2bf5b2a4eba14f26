// RunFetchBench: rplasma-bench --mode fetch. Two nodes on loopback — a private redis-server (the
// directory), two rplasma-stores, two rplasma-managers (TCP transport) — and, by size, objects put
// on node A and fetched by a client of node B, with the peers measured in the same run:
//
//   fetch (rplasma)        Client::Fetch of one id on B (put on A beforehand, untimed; deleted on
//                          B afterwards, untimed): cold, B's manager never fetched it (no hint: it
//                          asks the directory, or, once two lookups found A, goes to A as its
//                          guessed owner; --manager-arg=--guess-owner=false keeps the lookups)
//   fetch_warm (rplasma)   the same id fetched again right after, B's copy deleted: B's manager
//                          knows where it lives (no directory call)
//   fetch_hinted (rplasma) an id put on A just before (untimed), fetched naming A's node
//                          (Fetch's hint_node): no directory call, no wait for publication
//   stream (tcp_stream)    the same bytes over a raw loopback TCP connection, request/response
//                          (tcp_stream_peer.h): at 1 KiB the TCP round trip, at 64 MiB the stream
//   get (redis)            a Redis GET of a value of the same size through hiredis
//
// All five are measured in the same iterations, the peers' turn rotating among the fetches', so a
// change in the machine's speed (this VM's wake-ups swing between a few and 80 us) hits them
// alike and their ratios hold within a run.
//
// With --batch N (N > 1) each size also gets the batch rows of batch_fetch_bench.h: N objects in
// one Client::Fetch against Redis MGET and the TCP stream of the same bytes.
//
// scripts/bench-targets.py judges the CSV against the fetch targets. Everything started is stopped
// before it returns.
#ifndef RPLASMA_BENCH_MPI_LOCAL_FETCH_BENCH_H_
#define RPLASMA_BENCH_MPI_LOCAL_FETCH_BENCH_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "bench-mpi/launch/manager_launcher.h"
#include "bench-mpi/launch/redis_server.h"
#include "bench-mpi/launch/store_process.h"
#include "bench-mpi/local/local_bench_options.h"
#include "client/client.h"

namespace rplasma::bench {

absl::Status RunFetchBench(const LocalBenchOptions& options, std::ostream& out);

// One node of the fetch benchmarks (this one and scrape_bench.h): a store, a manager (with the
// transport and threshold of `options`) and a client of both.
struct FetchNode {
  std::unique_ptr<StoreProcess> store;
  std::unique_ptr<LaunchedManager> manager;
  std::unique_ptr<Client> client;
};
// `store_args` and `manager_args` are appended to the daemons' command lines.
absl::StatusOr<FetchNode> StartFetchNode(const std::string& name, uint64_t memory, const RedisServer& redis,
                                         const std::string& secret_file, const LocalBenchOptions& options,
                                         std::vector<std::string> store_args = {},
                                         std::vector<std::string> manager_args = {});
// Fetches `id` through `client`, retrying while the directory does not know it yet (a fresh
// object is published asynchronously; each retry bumps *retries). The nanoseconds of the attempt
// that succeeded.
absl::StatusOr<int64_t> FetchOnce(Client& client, const ObjectID& id, int64_t* retries);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_FETCH_BENCH_H_
