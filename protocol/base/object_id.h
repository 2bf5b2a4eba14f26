// ObjectID: the 20-byte name of an object, as in Plasma. Plain data; hashable; ordered.
// The human form is 40 lowercase hex digits.
#ifndef RPLASMA_PROTOCOL_BASE_OBJECT_ID_H_
#define RPLASMA_PROTOCOL_BASE_OBJECT_ID_H_

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma {

class ObjectID {
 public:
  static constexpr size_t kSize = 20;

  ObjectID() : bytes_{} {}

  // REQUIRES: binary.size() == kSize.
  static absl::StatusOr<ObjectID> FromBinary(absl::string_view binary);
  // Accepts exactly 40 hex digits (either case).
  static absl::StatusOr<ObjectID> FromHex(absl::string_view hex);
  // 20 bytes from the kernel's random source (getrandom), drawn per call, so forked processes
  // never repeat each other's ids.
  static ObjectID Random();
  // A deterministic id derived from a text label (SHA-free: a stable mix, not cryptographic).
  static ObjectID FromLabel(absl::string_view label);

  const uint8_t* data() const { return bytes_.data(); }
  uint8_t* mutable_data() { return bytes_.data(); }
  absl::string_view binary() const { return absl::string_view(reinterpret_cast<const char*>(bytes_.data()), kSize); }
  std::string Hex() const;

  friend auto operator<=>(const ObjectID&, const ObjectID&) = default;
  friend bool operator==(const ObjectID&, const ObjectID&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const ObjectID& id) {
    return H::combine_contiguous(std::move(h), id.bytes_.data(), kSize);
  }

 private:
  std::array<uint8_t, kSize> bytes_;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_OBJECT_ID_H_
