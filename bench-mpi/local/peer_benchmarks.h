// The peers rplasma-bench measures in the same run, so targets are ratios on one machine:
//
//   ping_pong (unix_socket)  a bare round trip on a Unix stream socket to an echo process (the
//                            store is a process too), with the exact frame sizes of a one-id Get
//                            request and its reply
//   ping_pong_thread         the same with the echo in a thread of this process
//   ping_pong_epoll          ... in a thread running an epoll loop shaped like the store's
//   copy (memcpy)            memcpy of each size between pre-faulted buffers (bandwidth)
//   checksum (xxh3)          XXH3-64 of each size: what Seal adds on top of the write
//   copy_checksum (fused)    memcpy + XXH3 in one pass, chunk by chunk while the chunk is still
//                            in cache: what a create+write+seal that hashes as it copies could do
//   set / get / set_get      Redis SET and GET of each size through hiredis (redis)
//
// Not thread-safe; ping_pong starts and joins its own echo thread.
#ifndef RPLASMA_BENCH_MPI_LOCAL_PEER_BENCHMARKS_H_
#define RPLASMA_BENCH_MPI_LOCAL_PEER_BENCHMARKS_H_

#include <cstdint>

#include "absl/status/status.h"

#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/redis_connection.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/launch/redis_server.h"

namespace rplasma::bench {

enum class PingPongPeer { kProcess, kThread, kEpollThread };
// REQUIRES (kProcess): no other thread of this process holds a lock the forked child could need
// (the child only reads and writes its socket).
absl::Status RunUnixPingPong(const LoopLimits& limits, ResultReporter& reporter,
                             PingPongPeer peer = PingPongPeer::kProcess);
absl::Status RunMemcpy(const LoopLimits& limits, ResultReporter& reporter, uint64_t size);
absl::Status RunChecksum(const LoopLimits& limits, ResultReporter& reporter, uint64_t size);
absl::Status RunCopyChecksum(const LoopLimits& limits, ResultReporter& reporter, uint64_t size);
absl::Status RunRedisSetGet(const LoopLimits& limits, ResultReporter& reporter, RedisConnection& redis, uint64_t size);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_PEER_BENCHMARKS_H_
