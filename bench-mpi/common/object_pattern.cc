#include "bench-mpi/common/object_pattern.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma::bench {
namespace {

uint64_t Seed(const ObjectID& id) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < ObjectID::kSize; ++i) seed = (seed ^ id.data()[i]) * 0x100000001b3ull;
  return seed;
}

// splitmix64's finaliser: every word differs, so a shifted or repeated block is caught.
inline uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

void FillPattern(const ObjectID& id, absl::Span<uint8_t> data) {
  const uint64_t seed = Seed(id);
  const size_t words = data.size() / 8;
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = Mix(seed + i);
    std::memcpy(data.data() + i * 8, &w, 8);
  }
  if (data.size() % 8 != 0) {
    const uint64_t w = Mix(seed + words);
    std::memcpy(data.data() + words * 8, &w, data.size() % 8);
  }
}

absl::Status VerifyPattern(const ObjectID& id, absl::Span<const uint8_t> data) {
  const uint64_t seed = Seed(id);
  const size_t words = data.size() / 8;
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = Mix(seed + i);
    if (std::memcmp(data.data() + i * 8, &w, 8) != 0) {
      return MakeError(ErrorCode::kStaleObject,
                       absl::StrCat("verify(", id.Hex(), "): bytes differ at word offset ", i * 8));
    }
  }
  if (data.size() % 8 != 0) {
    const uint64_t w = Mix(seed + words);
    if (std::memcmp(data.data() + words * 8, &w, data.size() % 8) != 0) {
      return MakeError(ErrorCode::kStaleObject,
                       absl::StrCat("verify(", id.Hex(), "): bytes differ in the tail at ", words * 8));
    }
  }
  return absl::OkStatus();
}

}  // namespace rplasma::bench
