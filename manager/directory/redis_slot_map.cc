#include "manager/directory/redis_slot_map.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

#include "manager/directory/redis_connection.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

constexpr size_t kMaxHostLength = 255;

absl::Status Malformed(absl::string_view why) {
  return ProtocolError(absl::StrFormat("CLUSTER SLOTS: malformed reply: %s", why));
}

bool IsSlot(int64_t n) { return n >= 0 && n < kRedisClusterSlots; }

// The address of a node entry [host, port, id, ...]; "" for a node whose endpoint is unknown.
absl::StatusOr<std::string> NodeAddress(RedisReplyView node, absl::string_view queried_host) {
  if (!node.is_array() || node.size() < 2) return Malformed(absl::StrCat("node entry ", node.Describe()));
  RedisReplyView host = node.element(0);
  RedisReplyView port = node.element(1);
  if (!host.is_string() || host.str().size() > kMaxHostLength) return Malformed("node host");
  if (!port.is_integer() || port.integer() < 1 || port.integer() > 65535) return Malformed("node port");
  if (host.str() == "?") return std::string();
  const std::string address =
      JoinHostPort(host.str().empty() ? queried_host : host.str(), static_cast<int>(port.integer()));
  if (!ParseRedisAddress(address).ok()) return Malformed("node address");
  return address;
}

}  // namespace

std::string JoinHostPort(absl::string_view host, int port) {
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

RedisSlotMap::RedisSlotMap() : owner_(kRedisClusterSlots, -1) {}

absl::StatusOr<RedisSlotMap> RedisSlotMap::Parse(RedisReplyView reply, absl::string_view queried_host) {
  if (!reply.is_array()) return Malformed(reply.Describe());
  if (reply.size() > kMaxRanges) return Malformed(absl::StrFormat("%d ranges", reply.size()));
  RedisSlotMap map;
  for (size_t r = 0; r < reply.size(); ++r) {
    RedisReplyView range = reply.element(r);
    if (!range.is_array() || range.size() < 3) return Malformed(absl::StrCat("range ", range.Describe()));
    const int64_t first = range.element(0).integer();
    const int64_t last = range.element(1).integer();
    if (!range.element(0).is_integer() || !range.element(1).is_integer() || !IsSlot(first) || !IsSlot(last) ||
        first > last) {
      return Malformed(absl::StrFormat("range %d..%d", first, last));
    }
    ASSIGN_OR_RETURN(std::string master, NodeAddress(range.element(2), queried_host));
    const size_t nodes = std::min(range.size(), kMaxNodesPerRange);
    for (size_t n = 3; n < nodes; ++n) {
      ASSIGN_OR_RETURN(std::string replica, NodeAddress(range.element(n), queried_host));
      if (!replica.empty() && std::find(map.replicas_.begin(), map.replicas_.end(), replica) == map.replicas_.end()) {
        map.replicas_.push_back(std::move(replica));
      }
    }
    if (master.empty()) continue;
    const int16_t index = static_cast<int16_t>(map.IndexOf(master));
    std::fill(map.owner_.begin() + first, map.owner_.begin() + last + 1, index);
  }
  return map;
}

int RedisSlotMap::IndexOf(const std::string& address) {
  auto it = std::find(masters_.begin(), masters_.end(), address);
  if (it != masters_.end()) return static_cast<int>(it - masters_.begin());
  masters_.push_back(address);
  return static_cast<int>(masters_.size() - 1);
}

const std::string* RedisSlotMap::MasterOf(int slot) const {
  const int16_t index = owner_[static_cast<size_t>(slot)];
  return index < 0 ? nullptr : &masters_[static_cast<size_t>(index)];
}

void RedisSlotMap::Assign(int slot, const std::string& address) {
  // At most one master per slot ever: a node naming ever new addresses cannot grow the map.
  if (masters_.size() >= kRedisClusterSlots && std::find(masters_.begin(), masters_.end(), address) == masters_.end()) {
    owner_[static_cast<size_t>(slot)] = -1;
    return;
  }
  owner_[static_cast<size_t>(slot)] = static_cast<int16_t>(IndexOf(address));
}

std::vector<std::string> RedisSlotMap::KnownAddresses() const {
  std::vector<std::string> all = masters_;
  for (const std::string& replica : replicas_) {
    if (std::find(all.begin(), all.end(), replica) == all.end()) all.push_back(replica);
  }
  return all;
}

std::vector<std::string> RedisSlotMap::ServingMasters() const {
  std::vector<bool> serving(masters_.size(), false);
  for (int16_t index : owner_) {
    if (index >= 0) serving[static_cast<size_t>(index)] = true;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < masters_.size(); ++i) {
    if (serving[i]) out.push_back(masters_[i]);
  }
  return out;
}

int RedisSlotMap::ServedSlots() const {
  return static_cast<int>(std::count_if(owner_.begin(), owner_.end(), [](int16_t index) { return index >= 0; }));
}

std::optional<RedisRedirect> ParseRedirect(absl::string_view error, absl::string_view default_host) {
  RedisRedirect redirect;
  if (absl::ConsumePrefix(&error, "MOVED ")) {
    redirect.ask = false;
  } else if (absl::ConsumePrefix(&error, "ASK ")) {
    redirect.ask = true;
  } else {
    return std::nullopt;
  }
  const size_t space = error.find(' ');
  if (space == absl::string_view::npos || space == 0 || space > 5) return std::nullopt;
  int slot = 0;
  if (!absl::SimpleAtoi(error.substr(0, space), &slot) || !IsSlot(slot)) return std::nullopt;
  absl::string_view endpoint = error.substr(space + 1);
  const size_t colon = endpoint.rfind(':');
  if (colon == absl::string_view::npos || endpoint.size() > kMaxHostLength + 8) return std::nullopt;
  absl::string_view host = endpoint.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(endpoint.substr(colon + 1), &port) || port < 1 || port > 65535) return std::nullopt;
  if (absl::ConsumePrefix(&host, "[")) {
    if (!absl::ConsumeSuffix(&host, "]")) return std::nullopt;
  }
  redirect.slot = slot;
  redirect.address = JoinHostPort(host.empty() ? default_host : host, port);
  if (!ParseRedisAddress(redirect.address).ok()) return std::nullopt;
  return redirect;
}

}  // namespace rplasma
