// The peers rplasma-bench measures in the same run, so targets are ratios on one machine:
//
//   ping_pong (unix_socket)  a bare round trip on a Unix stream socket to an echo thread, with the
//                            exact frame sizes of a one-id Get request and its reply
//   copy (memcpy)            memcpy of each size between pre-faulted buffers (bandwidth)
//   set / get / set_get      Redis SET and GET of each size through hiredis (redis)
//
// Not thread-safe; ping_pong starts and joins its own echo thread.
#ifndef RPLASMA_BENCH_MPI_LOCAL_PEER_BENCHMARKS_H_
#define RPLASMA_BENCH_MPI_LOCAL_PEER_BENCHMARKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "bench-mpi/common/bench_redis_server.h"
#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/result_reporter.h"

namespace rplasma::bench {

absl::Status RunUnixPingPong(const LoopLimits& limits, ResultReporter& reporter);
absl::Status RunMemcpy(const LoopLimits& limits, ResultReporter& reporter, uint64_t size);
absl::Status RunRedisSetGet(const LoopLimits& limits, ResultReporter& reporter,
                            RedisConnection& redis, uint64_t size);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_PEER_BENCHMARKS_H_
