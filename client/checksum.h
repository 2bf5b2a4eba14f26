// ObjectChecksum: the integrity checksum of an object, XXH3-64 over its data then its metadata
// (as if they were one contiguous buffer). The client computes it at Seal and the store records
// it; the manager recomputes it over fetched bytes before sealing them locally.
//
// Pure function; thread-safe.
#ifndef RPLASMA_CLIENT_CHECKSUM_H_
#define RPLASMA_CLIENT_CHECKSUM_H_

#include <cstdint>

#include "absl/types/span.h"

namespace rplasma {

uint64_t ObjectChecksum(absl::Span<const uint8_t> data, absl::Span<const uint8_t> metadata);

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_CHECKSUM_H_
