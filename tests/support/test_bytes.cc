#include "tests/support/test_bytes.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/synchronization/mutex.h"

#include "protocol/base/mutex_lock.h"

namespace rplasma::testing {

void FillTestBytes(uint64_t seed, absl::Span<uint8_t> out) {
  constexpr uint64_t kOffsets = 1u << 20;
  static absl::Mutex mu;
  static std::string* pool = new std::string();
  const uint64_t size = out.size();
  const uint64_t offset = (seed * 8191) % kOffsets;
  MutexLock lock(&mu);
  if (pool->size() < offset + size) {
    const uint64_t want = std::max<uint64_t>(kOffsets + size, pool->size() * 2);
    pool->resize(want);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i + 8 <= want; i += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::memcpy(&(*pool)[i], &x, 8);
    }
  }
  if (size > 0) std::memcpy(out.data(), pool->data() + offset, size);
}

}  // namespace rplasma::testing
