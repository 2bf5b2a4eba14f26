#include "protocol/base/object_id.h"

#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "protocol/base/mutex_lock.h"
#include "protocol/base/status.h"

namespace rplasma {

absl::StatusOr<ObjectID> ObjectID::FromBinary(absl::string_view binary) {
  if (binary.size() != kSize) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("object id must be ", kSize, " bytes, got ", binary.size()));
  }
  ObjectID id;
  std::memcpy(id.bytes_.data(), binary.data(), kSize);
  return id;
}

absl::StatusOr<ObjectID> ObjectID::FromHex(absl::string_view hex) {
  if (hex.size() != 2 * kSize) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("object id must be ", 2 * kSize, " hex digits, got ", hex.size()));
  }
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("object id is not hex: ", hex));
    }
  }
  return FromBinary(absl::HexStringToBytes(hex));
}

ObjectID ObjectID::Random() {
  static absl::Mutex mu;
  static std::mt19937_64* engine = new std::mt19937_64(std::random_device{}());
  ObjectID id;
  rplasma::MutexLock lock(&mu);
  for (size_t i = 0; i < kSize; i += 8) {
    uint64_t r = (*engine)();
    std::memcpy(id.bytes_.data() + i, &r, std::min<size_t>(8, kSize - i));
  }
  return id;
}

ObjectID ObjectID::FromLabel(absl::string_view label) {
  // FNV-1a over the label, re-seeded per 8-byte lane, then a splitmix finaliser.
  ObjectID id;
  for (size_t lane = 0; lane * 8 < kSize; ++lane) {
    uint64_t h = 1469598103934665603ull ^ (lane * 0x9e3779b97f4a7c15ull);
    for (unsigned char c : label) h = (h ^ c) * 1099511628211ull;
    h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ull; h ^= h >> 27; h *= 0x94d049bb133111ebull; h ^= h >> 31;
    std::memcpy(id.bytes_.data() + lane * 8, &h, std::min<size_t>(8, kSize - lane * 8));
  }
  return id;
}

std::string ObjectID::Hex() const { return absl::BytesToHexString(binary()); }

}  // namespace rplasma
