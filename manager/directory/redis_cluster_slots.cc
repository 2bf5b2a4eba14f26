#include "manager/directory/redis_cluster_slots.h"

#include <array>

namespace rplasma {
namespace {

constexpr uint16_t kPolynomial = 0x1021;

// One byte's CRC contribution, shifted through the polynomial MSB first (XMODEM is not reflected).
constexpr uint16_t ByteRemainder(uint8_t byte) {
  uint16_t crc = static_cast<uint16_t>(byte << 8);
  for (int bit = 0; bit < 8; ++bit) {
    crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ kPolynomial) : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

constexpr std::array<uint16_t, 256> MakeTable() {
  std::array<uint16_t, 256> table{};
  for (int i = 0; i < 256; ++i) table[static_cast<size_t>(i)] = ByteRemainder(static_cast<uint8_t>(i));
  return table;
}

constexpr std::array<uint16_t, 256> kTable = MakeTable();
static_assert(kTable[1] == kPolynomial, "the table is built from the XMODEM polynomial");
static_assert((kRedisClusterSlots & (kRedisClusterSlots - 1)) == 0, "slot = crc & (slots - 1) needs a power of two");

}  // namespace

uint16_t Crc16Xmodem(absl::string_view bytes) {
  uint16_t crc = 0;
  for (char c : bytes) {
    const uint8_t index = static_cast<uint8_t>((crc >> 8) ^ static_cast<uint8_t>(c));
    crc = static_cast<uint16_t>((crc << 8) ^ kTable[index]);
  }
  return crc;
}

absl::string_view HashTagOf(absl::string_view key) {
  const size_t open = key.find('{');
  if (open == absl::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  if (close == absl::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

int KeyHashSlot(absl::string_view key) { return Crc16Xmodem(HashTagOf(key)) & (kRedisClusterSlots - 1); }

}  // namespace rplasma
