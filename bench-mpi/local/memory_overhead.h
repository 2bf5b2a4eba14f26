// Store memory per object: create `count` tiny sealed objects and compare the store process's
// memory before and after (process_memory.h).
//
// Reported (benchmark "memory_per_object", system rplasma): the put rate and latency of the tiny
// objects, and metrics
//   anon_bytes_per_object   RssAnon delta / count: the store's own bookkeeping (the target)
//   rss_bytes_per_object    VmRSS delta / count: bookkeeping plus arena pages first touched
//   arena_bytes_per_object  used_bytes delta (store Stats) / count: data + alignment in the arena
// The objects are deleted afterwards; anon_bytes_after_delete_per_object shows what stays.
#ifndef RPLASMA_BENCH_MPI_LOCAL_MEMORY_OVERHEAD_H_
#define RPLASMA_BENCH_MPI_LOCAL_MEMORY_OVERHEAD_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/status.h"

#include "bench-mpi/common/result_reporter.h"
#include "client/client.h"

namespace rplasma::bench {

// REQUIRES: count > 0; store_pid is the store `client` is connected to.
absl::Status RunMemoryOverhead(Client& client, pid_t store_pid, int64_t count, uint64_t object_size,
                               ResultReporter& reporter);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_MEMORY_OVERHEAD_H_
