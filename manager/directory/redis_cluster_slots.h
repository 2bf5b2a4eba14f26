// Redis Cluster's hash slots: every key belongs to one of 16384 slots, CRC16 (XMODEM: polynomial
// 0x1021, initial value 0, no reflection) of the key modulo 16384. A key holding a hash tag, the
// bytes between its first '{' and the first '}' after it when they are not empty, is hashed by that
// tag alone, so keys sharing a tag share a slot. Pure functions: no I/O.
//
// Thread-safety: stateless; safe from any thread.
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_CLUSTER_SLOTS_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_CLUSTER_SLOTS_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace rplasma {

inline constexpr int kRedisClusterSlots = 16384;

// CRC16-XMODEM of `bytes` ("123456789" -> 0x31C3).
uint16_t Crc16Xmodem(absl::string_view bytes);

// The part of `key` that decides its slot: the hash tag if it has a non-empty one, else the key.
absl::string_view HashTagOf(absl::string_view key);

// The hash slot of `key`, 0..16383 (what CLUSTER KEYSLOT answers).
int KeyHashSlot(absl::string_view key);

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_CLUSTER_SLOTS_H_
