// AlignedRegion: zero-filled, 64-byte aligned memory standing in for a memfd mapping in the
// shm_index tests.
#ifndef RPLASMA_TESTS_UNIT_SHM_INDEX_ALIGNED_REGION_H_
#define RPLASMA_TESTS_UNIT_SHM_INDEX_ALIGNED_REGION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace rplasma::shm {

class AlignedRegion {
 public:
  explicit AlignedRegion(size_t bytes) : words_(bytes / 8 + 16, 0) {}
  // The first `bytes` bytes (at most the size given to the constructor).
  absl::Span<uint8_t> span(size_t bytes) {
    auto* base = reinterpret_cast<uint8_t*>(words_.data());
    base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
    return {base, bytes};
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace rplasma::shm

#endif  // RPLASMA_TESTS_UNIT_SHM_INDEX_ALIGNED_REGION_H_
