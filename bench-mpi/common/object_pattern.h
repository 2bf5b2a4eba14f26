// The bytes every benchmark puts in an object, derived from the object's id and the byte offset,
// so any rank or node can check every byte it fetched without being sent the original (the one
// generator of benchmark bytes: bench-mpi's fetches, rplasma-bench's batches and their MGET values).
//
// Word i (8 bytes, little-endian) of object `id` is Mix(seed(id) + i); a tail shorter than a word
// holds that word's first bytes. Pure functions; thread-safe.
#ifndef RPLASMA_BENCH_MPI_COMMON_OBJECT_PATTERN_H_
#define RPLASMA_BENCH_MPI_COMMON_OBJECT_PATTERN_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

#include "protocol/base/object_id.h"

namespace rplasma::bench {

void FillPattern(const ObjectID& id, absl::Span<uint8_t> data);
// OK, or kStaleObject naming the first offset that differs.
absl::Status VerifyPattern(const ObjectID& id, absl::Span<const uint8_t> data);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_OBJECT_PATTERN_H_
