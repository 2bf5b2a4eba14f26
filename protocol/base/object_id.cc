#include "protocol/base/object_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

#include "protocol/base/logging.h"
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
  // getrandom per call rather than a process-wide generator: a generator's state is copied by
  // fork(), so a parent and its forked workers would draw the same ids. 20 bytes from the
  // urandom source never block once the pool is initialised and are never short unless a signal
  // interrupts the call.
  ObjectID id;
  size_t filled = 0;
  while (filled < kSize) {
    ssize_t n = getrandom(id.bytes_.data() + filled, kSize - filled, 0);
    if (n < 0) {
      CHECK(errno == EINTR) << "getrandom: " << std::strerror(errno);
      continue;
    }
    filled += static_cast<size_t>(n);
  }
  return id;
}

ObjectID ObjectID::FromLabel(absl::string_view label) {
  // FNV-1a over the label, re-seeded per 8-byte lane, then a splitmix finaliser.
  ObjectID id;
  for (size_t lane = 0; lane * 8 < kSize; ++lane) {
    uint64_t h = 1469598103934665603ull ^ (lane * 0x9e3779b97f4a7c15ull);
    for (unsigned char c : label) h = (h ^ c) * 1099511628211ull;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    std::memcpy(id.bytes_.data() + lane * 8, &h, std::min<size_t>(8, kSize - lane * 8));
  }
  return id;
}

std::string ObjectID::Hex() const { return absl::BytesToHexString(binary()); }

}  // namespace rplasma
