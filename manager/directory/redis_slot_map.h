// RedisSlotMap: which master serves each hash slot of a Redis Cluster, as its CLUSTER SLOTS reply
// says, and the redirections (-MOVED, -ASK) a node answers with for a key it does not serve.
// Pure parsing of untrusted replies: every count, number and address is bounded and checked;
// malformed input is kProtocolError, never a crash.
//
// Thread-safety: a value type; const methods are safe to share.
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_SLOT_MAP_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_SLOT_MAP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "manager/directory/redis_cluster_slots.h"
#include "manager/directory/redis_reply.h"

namespace rplasma {

class RedisSlotMap {
 public:
  // Most slot ranges and nodes per range read from one reply (a cluster has far fewer).
  static constexpr size_t kMaxRanges = kRedisClusterSlots;
  static constexpr size_t kMaxNodesPerRange = 64;

  // Every slot unserved.
  RedisSlotMap();

  // Parses a CLUSTER SLOTS reply from the node at `queried_host`, whose name stands in for a
  // node listed with an empty host (Redis does so for the node that answers). Ranges of a node
  // with an unknown endpoint ("?") are left unserved.
  static absl::StatusOr<RedisSlotMap> Parse(RedisReplyView reply, absl::string_view queried_host);

  // "host:port" of the master serving `slot`, or nullptr when no master serves it.
  // REQUIRES: 0 <= slot < kRedisClusterSlots.
  const std::string* MasterOf(int slot) const;
  // Serves `slot` from `address` from now on (a -MOVED answer), adding the master if new (while
  // fewer than kRedisClusterSlots are known; beyond, the slot becomes unserved until a refresh).
  void Assign(int slot, const std::string& address);
  // Every master and replica address the map knows, masters first, each once.
  std::vector<std::string> KnownAddresses() const;
  // Every master address the map has known (some may serve no slot any more).
  const std::vector<std::string>& masters() const { return masters_; }
  // The masters that serve at least one slot.
  std::vector<std::string> ServingMasters() const;
  // The number of slots some master serves.
  int ServedSlots() const;

 private:
  int IndexOf(const std::string& address);

  std::vector<std::string> masters_;
  std::vector<std::string> replicas_;
  std::vector<int16_t> owner_;  // slot -> index in masters_, -1 when unserved
};

// A redirection answer: "-MOVED <slot> <host>:<port>" (the slot now lives there) or
// "-ASK <slot> <host>:<port>" (this one command goes there, after ASKING).
struct RedisRedirect {
  bool ask = false;
  int slot = 0;
  std::string address;  // "host:port"; an empty host is replaced by the default host
};

// The redirection `error` (an error reply's text) describes; std::nullopt if it is not one or is
// malformed. `default_host` is the host of the node that answered.
std::optional<RedisRedirect> ParseRedirect(absl::string_view error, absl::string_view default_host);

// "host:port", bracketing an IPv6 host.
std::string JoinHostPort(absl::string_view host, int port);

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_SLOT_MAP_H_
