// The rplasma side of rplasma-bench: store operations through the client library, by size.
//
//   create_write_seal  Create + memcpy of the data + Seal + Release (phases in the detail)
//   get / release      GetOne of a sealed object, and the Release of that buffer, timed apart;
//   get_release        ... and together
//   batch_get          one Get of `batch` sealed ids; times are per id (release: per id too)
//   create_seal_get    the small-object round trip Redis SET+GET is compared with:
//                      Create + write + Seal + Release + GetOne + Release
//
// Every object a benchmark creates is deleted again (untimed), so sizes can follow each other in
// one arena. Not thread-safe: one benchmark at a time on one Client.
#ifndef RPLASMA_BENCH_MPI_LOCAL_STORE_BENCHMARKS_H_
#define RPLASMA_BENCH_MPI_LOCAL_STORE_BENCHMARKS_H_

#include <cstdint>

#include "absl/status/status.h"

#include "bench-mpi/common/measure_loop.h"
#include "bench-mpi/common/result_reporter.h"
#include "client/client.h"

namespace rplasma::bench {

struct StoreBenchContext {
  Client* client = nullptr;
  ResultReporter* reporter = nullptr;
  LoopLimits limits;
  int64_t batch = 1000;
};

absl::Status RunCreateWriteSeal(const StoreBenchContext& ctx, uint64_t size);
// Client::Put of `size` bytes (inline up to kMaxInlinePutBytes; else create, copy+hash in one
// pass, seal and release): the create+write+seal an application that has its bytes calls.
absl::Status RunPut(const StoreBenchContext& ctx, uint64_t size);
absl::Status RunGetRelease(const StoreBenchContext& ctx, uint64_t size);
absl::Status RunBatchGet(const StoreBenchContext& ctx, uint64_t size);
absl::Status RunCreateSealGet(const StoreBenchContext& ctx, uint64_t size);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LOCAL_STORE_BENCHMARKS_H_
