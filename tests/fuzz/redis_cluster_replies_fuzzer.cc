// Fuzzes what a Redis Cluster node answers the router (manager/directory/redis_router.h): the
// input is RESP bytes, parsed as one reply (RedisReply::Parse), then read as a CLUSTER SLOTS map
// (redis_slot_map.h) and, if it is an error reply, as a -MOVED/-ASK redirection. The raw input is
// also hashed as a key (redis_cluster_slots.h).
//
// Invariants: a parsed map serves at most every slot, each from an address that parses, names as
// serving masters exactly those that serve a slot, and lists every address once; a redirection names a slot in range
// and an address that parses; a key's slot is in range and is the slot of its hash tag.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "manager/directory/redis_cluster_slots.h"
#include "manager/directory/redis_connection.h"
#include "manager/directory/redis_reply.h"
#include "manager/directory/redis_slot_map.h"
#include "protocol/base/logging.h"

namespace rplasma {
namespace {

void CheckSlotMap(RedisReplyView reply) {
  absl::StatusOr<RedisSlotMap> map = RedisSlotMap::Parse(reply, "10.0.0.9");
  if (!map.ok()) return;
  CHECK(map->ServedSlots() >= 0 && map->ServedSlots() <= kRedisClusterSlots);
  const std::vector<std::string> serving = map->ServingMasters();
  std::set<std::string> seen_serving;
  for (int slot = 0; slot < kRedisClusterSlots; ++slot) {
    const std::string* master = map->MasterOf(slot);
    if (master == nullptr) continue;
    CHECK(ParseRedisAddress(*master).ok()) << *master;
    seen_serving.insert(*master);
  }
  CHECK(std::set<std::string>(serving.begin(), serving.end()) == seen_serving);
  CHECK(serving.size() == seen_serving.size());
  const std::vector<std::string> known = map->KnownAddresses();
  CHECK(std::set<std::string>(known.begin(), known.end()).size() == known.size());
  for (const std::string& address : known) CHECK(ParseRedisAddress(address).ok()) << address;
}

void CheckRedirect(RedisReplyView reply) {
  if (!reply.is_error()) return;
  std::optional<RedisRedirect> redirect = ParseRedirect(reply.str(), "10.0.0.9");
  if (!redirect.has_value()) return;
  CHECK(redirect->slot >= 0 && redirect->slot < kRedisClusterSlots);
  CHECK(ParseRedisAddress(redirect->address).ok()) << redirect->address;
}

void CheckKey(absl::string_view key) {
  const int slot = KeyHashSlot(key);
  CHECK(slot >= 0 && slot < kRedisClusterSlots);
  CHECK(slot == KeyHashSlot(HashTagOf(key)));
}

}  // namespace
}  // namespace rplasma

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  rplasma::CheckKey(input);
  absl::StatusOr<rplasma::RedisReply> reply = rplasma::RedisReply::Parse(input);
  if (!reply.ok()) return 0;
  rplasma::CheckSlotMap(reply->view());
  rplasma::CheckRedirect(reply->view());
  return 0;
}
