// ObjectID: the 20-byte name of an object, as in Plasma. Plain data; hashable; ordered.
// The human form is 40 lowercase hex digits.
#ifndef RPLASMA_PROTOCOL_BASE_OBJECT_ID_H_
#define RPLASMA_PROTOCOL_BASE_OBJECT_ID_H_

#include <array>
#include <bit>
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

  // Byte order (memcmp's), compared a word at a time: the store's ordered containers compare ids
  // on every lookup, and a call to memcmp per comparison was a tenth of its time.
  friend std::strong_ordering operator<=>(const ObjectID& a, const ObjectID& b) {
    if (auto c = a.BigEndianWord(0) <=> b.BigEndianWord(0); c != 0) return c;
    if (auto c = a.BigEndianWord(8) <=> b.BigEndianWord(8); c != 0) return c;
    return a.BigEndianWord(12) <=> b.BigEndianWord(12);  // bytes 12..19: the last four are new
  }
  friend bool operator==(const ObjectID& a, const ObjectID& b) {
    return a.Word(0) == b.Word(0) && a.Word(8) == b.Word(8) && a.Word(12) == b.Word(12);
  }

  template <typename H>
  friend H AbslHashValue(H h, const ObjectID& id) {
    return H::combine(std::move(h), id.Word(0), id.Word(8), id.Word(12));
  }

 private:
  static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);
  // The 8 bytes at `at`, as they lie in memory.
  uint64_t Word(size_t at) const {
    uint64_t word;
    std::memcpy(&word, bytes_.data() + at, sizeof(word));
    return word;
  }
  // The 8 bytes at `at` as a number whose order is theirs as bytes.
  uint64_t BigEndianWord(size_t at) const {
    if constexpr (std::endian::native == std::endian::little) return __builtin_bswap64(Word(at));
    return Word(at);
  }

  std::array<uint8_t, kSize> bytes_;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_OBJECT_ID_H_
