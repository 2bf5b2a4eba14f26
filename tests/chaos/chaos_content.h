// The bytes a chaos-test object must hold: its size and contents follow from its id alone, so a
// reader on any node checks every byte without asking the writer (tests/chaos).
#ifndef RPLASMA_TESTS_CHAOS_CHAOS_CONTENT_H_
#define RPLASMA_TESTS_CHAOS_CHAOS_CONTENT_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

#include "protocol/base/object_id.h"
#include "xxhash.h"

namespace rplasma::chaos {

// Sizes on both sides of the chaos cluster's get/pin threshold (64 KiB).
inline constexpr uint64_t kContentSizes[] = {0, 100, 1000, 4096, 30000, 70000, 300000, 1 << 20};

inline std::string ContentOf(const ObjectID& id) {
  const uint64_t seed = XXH3_64bits(id.data(), ObjectID::kSize);
  std::string bytes(kContentSizes[seed % std::size(kContentSizes)], '\0');
  uint64_t state = seed;
  for (size_t i = 0; i < bytes.size(); i += 8) {
    state += 0x9e3779b97f4a7c15ull;  // splitmix64
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::memcpy(bytes.data() + i, &z, std::min<size_t>(8, bytes.size() - i));
  }
  return bytes;
}

}  // namespace rplasma::chaos

#endif  // RPLASMA_TESTS_CHAOS_CHAOS_CONTENT_H_
