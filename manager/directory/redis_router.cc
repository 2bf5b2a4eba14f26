#include "manager/directory/redis_router.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "manager/directory/redis_cluster_slots.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

constexpr size_t kMaxSeeds = 64;
// Pause before re-sending after -TRYAGAIN, -CLUSTERDOWN or a master that did not answer.
constexpr absl::Duration kFirstPause = absl::Milliseconds(5);
constexpr absl::Duration kMaxPause = absl::Milliseconds(100);
// Rounds of redirections followed at once before pausing between rounds too.
constexpr int kRoundsBeforePausing = 4;
// Connections kept before those to nodes that are no master of the map (-ASK targets) are closed.
constexpr size_t kMaxConnections = 256;
constexpr size_t kMaxQuoted = 120;

std::string Quote(absl::string_view text) { return absl::CHexEscape(text.substr(0, kMaxQuoted)); }

std::string HostOf(absl::string_view address) {
  absl::StatusOr<RedisAddress> parsed = ParseRedisAddress(address);
  return parsed.ok() ? parsed->host : std::string();
}

// A server state that passes (a node loading its data, a cluster without quorum), not an answer
// saying what the server is: the seed is tried again later, not taken for a single server.
bool IsTransient(RedisReplyView error) {
  return absl::StartsWith(error.str(), "CLUSTERDOWN") ||
         ErrorCodeOf(RedisErrorReplyStatus(error, "", "")) == ErrorCode::kUnavailable;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseRedisSeeds(absl::string_view seeds) {
  std::vector<std::string> parsed;
  for (absl::string_view seed : absl::StrSplit(seeds, ',')) {
    if (seed.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("redis seeds \"%s\": empty entry", Quote(seeds)));
    }
    RETURN_IF_ERROR(ParseRedisAddress(seed).status());
    if (parsed.size() == kMaxSeeds) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("redis seeds: more than %d", kMaxSeeds));
    }
    parsed.emplace_back(seed);
  }
  return parsed;
}

RedisRouter::RedisRouter(std::vector<std::string> seeds, absl::Duration connect_timeout, Clock& clock,
                         RedisRouterCounters counters)
    : seeds_(std::move(seeds)), connect_timeout_(connect_timeout), clock_(clock), counters_(counters) {}

std::string RedisRouter::Describe() const { return absl::StrFormat("redis cluster %s", absl::StrJoin(seeds_, ",")); }

absl::StatusOr<RedisSlotMap> RedisRouter::QuerySlotMap(RedisConnection& connection, absl::Time deadline,
                                                       std::optional<RedisReply>* error_reply) {
  counters_.slot_map_queries.fetch_add(1);
  ASSIGN_OR_RETURN(std::vector<RedisReply> replies, connection.Pipeline({RedisCommand{"CLUSTER", "SLOTS"}}, deadline));
  if (replies[0].view().is_error()) {
    const std::string text = Quote(replies[0].view().str());
    *error_reply = std::move(replies[0]);
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrFormat("redis %s: CLUSTER SLOTS: %s", connection.address(), text));
  }
  absl::StatusOr<RedisSlotMap> map = RedisSlotMap::Parse(replies[0].view(), HostOf(connection.address()));
  if (!map.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     absl::StrFormat("redis %s: %s", connection.address(), map.status().message()));
  }
  return map;
}

absl::Status RedisRouter::Connect(absl::Time deadline) {
  Disconnect();
  absl::Status last = MakeError(ErrorCode::kUnavailable, absl::StrFormat("%s: no time left to connect", Describe()));
  for (const std::string& seed : seeds_) {
    const absl::Time now = clock_.Now();
    if (now >= deadline) break;
    absl::StatusOr<std::unique_ptr<RedisConnection>> connection =
        RedisConnection::Connect(seed, std::min(deadline - now, connect_timeout_), clock_);
    if (!connection.ok()) {
      last = connection.status();
      continue;  // a dead seed: try the next
    }
    std::optional<RedisReply> error_reply;
    absl::StatusOr<RedisSlotMap> map = QuerySlotMap(**connection, deadline, &error_reply);
    if (error_reply.has_value() && !IsTransient(error_reply->view())) {
      // Not a cluster (cluster support disabled): the one server, as before clusters existed.
      single_ = std::move(connection).value();
      mode_ = Mode::kSingle;
      return absl::OkStatus();
    }
    if (!map.ok()) {
      last = map.status();
      continue;
    }
    map_ = *std::move(map);
    const std::vector<std::string>& masters = map_.masters();
    if (std::find(masters.begin(), masters.end(), seed) != masters.end()) {
      connections_[seed] = std::move(connection).value();
    }
    mode_ = Mode::kCluster;
    return absl::OkStatus();
  }
  return last;
}

void RedisRouter::Disconnect() {
  mode_ = Mode::kNone;
  single_.reset();
  connections_.clear();
  map_ = RedisSlotMap();
  lost_master_ = false;  // the owner treats a new Connect as a reconnect anyway
  recovered_ = false;
}

bool RedisRouter::TakeRecovered() { return std::exchange(recovered_, false); }

absl::StatusOr<std::vector<RedisReply>> RedisRouter::Pipeline(absl::Span<const RedisCommand> commands,
                                                              absl::Time deadline) {
  switch (mode_) {
    case Mode::kNone: return MakeError(ErrorCode::kInternal, "RedisRouter::Pipeline before Connect");
    case Mode::kSingle: {
      counters_.pipelines.fetch_add(1);
      absl::StatusOr<std::vector<RedisReply>> replies = single_->Pipeline(commands, deadline);
      if (!replies.ok()) Disconnect();
      return replies;
    }
    case Mode::kCluster: return ClusterPipeline(commands, deadline);
  }
  return MakeError(ErrorCode::kInternal, "RedisRouter: unknown mode");
}

const std::string* RedisRouter::TargetOf(const RedisCommand& command, int* slot) const {
  if (command.size() >= 2) {
    *slot = KeyHashSlot(command[1]);
    return map_.MasterOf(*slot);
  }
  // A keyless command (PING): a serving master already connected to, else any serving master.
  *slot = 0;
  const std::string* any = nullptr;
  const std::string* previous = nullptr;  // slots come in ranges: ask about each master once per range
  for (int s = 0; s < kRedisClusterSlots; ++s) {
    const std::string* master = map_.MasterOf(s);
    if (master == nullptr || master == previous) continue;
    previous = master;
    auto open = connections_.find(*master);
    if (open != connections_.end() && !open->second->broken()) return master;
    if (any == nullptr) any = master;
  }
  return any;
}

absl::StatusOr<RedisConnection*> RedisRouter::ConnectionTo(const std::string& address, absl::Time deadline) {
  auto it = connections_.find(address);
  if (it != connections_.end() && !it->second->broken()) return it->second.get();
  const absl::Time now = clock_.Now();
  if (now >= deadline) {
    return MakeError(ErrorCode::kUnavailable, absl::StrFormat("redis %s: no time left to connect", address));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RedisConnection> connection,
                   RedisConnection::Connect(address, std::min(deadline - now, connect_timeout_), clock_));
  RedisConnection* raw = connection.get();
  connections_[address] = std::move(connection);
  return raw;
}

void RedisRouter::PruneConnections() {
  if (connections_.size() < kMaxConnections) return;
  const std::vector<std::string>& masters = map_.masters();
  absl::erase_if(connections_, [&](const auto& entry) {
    return entry.second->broken() || std::find(masters.begin(), masters.end(), entry.first) == masters.end();
  });
}

absl::Status RedisRouter::RefreshSlotMap(absl::Time deadline) {
  // Open connections first (no connect to pay), then every node the map names, then the seeds.
  std::vector<std::string> candidates;
  for (const auto& [address, connection] : connections_) {
    if (!connection->broken()) candidates.push_back(address);
  }
  for (std::vector<std::string> more : {map_.KnownAddresses(), seeds_}) {
    for (std::string& address : more) {
      if (std::find(candidates.begin(), candidates.end(), address) == candidates.end()) {
        candidates.push_back(std::move(address));
      }
    }
  }
  absl::Status last = MakeError(ErrorCode::kUnavailable, absl::StrFormat("%s: no time left to refresh", Describe()));
  for (const std::string& address : candidates) {
    if (clock_.Now() >= deadline) break;
    absl::StatusOr<RedisConnection*> connection = ConnectionTo(address, deadline);
    if (!connection.ok()) {
      last = connection.status();
      continue;
    }
    std::optional<RedisReply> error_reply;
    absl::StatusOr<RedisSlotMap> map = QuerySlotMap(**connection, deadline, &error_reply);
    if (!map.ok()) {
      if ((*connection)->broken()) connections_.erase(address);
      last = map.status();
      continue;
    }
    // A master that served slots and serves none now was replaced (failover), or emptied by a
    // resharding: either way what it held may be older elsewhere, so the owner republishes.
    const std::vector<std::string> serving = map->ServingMasters();
    for (const std::string& before : map_.ServingMasters()) {
      if (std::find(serving.begin(), serving.end(), before) == serving.end()) lost_master_ = true;
    }
    map_ = *std::move(map);
    const std::vector<std::string>& masters = map_.masters();
    absl::erase_if(connections_, [&](const auto& entry) {
      return entry.second->broken() || std::find(masters.begin(), masters.end(), entry.first) == masters.end();
    });
    return absl::OkStatus();
  }
  return MakeError(ErrorCode::kUnavailable,
                   absl::StrFormat("%s: no node answered CLUSTER SLOTS; last error: %s", Describe(), last.message()));
}

absl::Status RedisRouter::Send(Flight& flight, absl::Span<const RedisCommand> commands, absl::Time deadline) {
  ASSIGN_OR_RETURN(flight.connection, ConnectionTo(flight.address, deadline));
  flight.batch.reserve(flight.share.size());  // copies: a pipeline takes one span of commands
  for (const Pending& p : flight.share) {
    if (!p.ask.empty()) flight.batch.push_back(RedisCommand{"ASKING"});
    flight.batch.push_back(commands[p.index]);
  }
  counters_.pipelines.fetch_add(1);
  return flight.connection->Send(flight.batch, deadline);
}

absl::StatusOr<std::vector<RedisReply>> RedisRouter::ClusterPipeline(absl::Span<const RedisCommand> commands,
                                                                     absl::Time deadline) {
  std::vector<std::optional<RedisReply>> replies(commands.size());
  std::vector<Pending> pending;
  pending.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) pending.push_back(Pending{i, ""});
  absl::Duration pause = kFirstPause;
  bool refreshed_for_unserved = false;
  std::string last_error = "none";

  for (int round = 0; !pending.empty(); ++round) {
    bool refresh = false;
    bool wait = round >= kRoundsBeforePausing;  // nodes that keep redirecting (a loop) are paced
    int unserved_slot = -1;
    std::vector<Pending> again;
    // Each node's share, in the caller's order; std::map: a stable order of pipelines.
    std::map<std::string, std::vector<Pending>> by_node;
    for (Pending& p : pending) {
      if (!p.ask.empty()) {
        by_node[p.ask].push_back(std::move(p));
        continue;
      }
      int slot = 0;
      const std::string* master = TargetOf(commands[p.index], &slot);
      if (master == nullptr) {
        unserved_slot = slot;
        again.push_back(std::move(p));
        continue;
      }
      by_node[*master].push_back(std::move(p));
    }

    // Every node's pipeline is sent before any reply is read: one round trip for them all.
    PruneConnections();
    std::vector<Flight> flights;
    flights.reserve(by_node.size());
    for (auto& [address, share] : by_node) {
      Flight& flight = flights.emplace_back();
      flight.address = address;
      flight.share = std::move(share);
      flight.sent = Send(flight, commands, deadline);
    }
    for (Flight& flight : flights) {
      absl::StatusOr<std::vector<RedisReply>> answered =
          flight.sent.ok() ? flight.connection->Receive(flight.batch, deadline) : flight.sent;
      if (!answered.ok()) {
        // The node is gone or hung: forget its connection, learn the map anew, try again.
        connections_.erase(flight.address);
        lost_master_ = true;
        last_error = std::string(answered.status().message());
        refresh = true;
        wait = true;
        for (Pending& p : flight.share) again.push_back(Pending{p.index, ""});
        continue;
      }
      const std::string& address = flight.address;
      const std::string host = HostOf(address);
      size_t r = 0;
      for (Pending& p : flight.share) {
        if (!p.ask.empty()) ++r;  // ASKING's +OK
        RedisReply& reply = (*answered)[r++];
        RedisReplyView view = reply.view();
        if (!view.is_error()) {
          replies[p.index] = std::move(reply);
          continue;
        }
        if (std::optional<RedisRedirect> redirect = ParseRedirect(view.str(), host); redirect.has_value()) {
          if (redirect->ask) {
            counters_.ask_redirects.fetch_add(1);
            again.push_back(Pending{p.index, redirect->address});
          } else {
            counters_.moved_redirects.fetch_add(1);
            map_.Assign(redirect->slot, redirect->address);
            refresh = true;  // a moved slot rarely moves alone (resharding, failover)
            again.push_back(Pending{p.index, ""});
          }
        } else if (absl::StartsWith(view.str(), "TRYAGAIN") || absl::StartsWith(view.str(), "CLUSTERDOWN")) {
          last_error = absl::StrFormat("%s answered %s", address, Quote(view.str()));
          wait = true;
          refresh = refresh || absl::StartsWith(view.str(), "CLUSTERDOWN");
          again.push_back(Pending{p.index, p.ask});
        } else {
          replies[p.index] = std::move(reply);  // the caller's to read (WRONGTYPE, ...)
        }
      }
    }
    // Re-sent in the caller's order, so commands on one key keep their order.
    std::sort(again.begin(), again.end(), [](const Pending& x, const Pending& y) { return x.index < y.index; });
    pending = std::move(again);
    if (pending.empty()) break;

    if (clock_.Now() >= deadline) {
      return MakeError(ErrorCode::kUnavailable,
                       absl::StrFormat("%s: %d of %d commands unanswered at the deadline; last error: %s", Describe(),
                                       pending.size(), commands.size(), last_error));
    }
    if (unserved_slot >= 0) {
      if (refreshed_for_unserved) {
        return MakeError(ErrorCode::kUnavailable,
                         absl::StrFormat("%s: hash slot %d is served by no master", Describe(), unserved_slot));
      }
      refreshed_for_unserved = true;
      refresh = true;
    }
    if (refresh) {
      absl::Status refreshed = RefreshSlotMap(deadline);
      if (!refreshed.ok() && clock_.Now() < deadline && connections_.empty()) {
        // No node answered at all: start over from the seeds (the owner reconnects, with backoff).
        Disconnect();
        return refreshed;
      }
      if (!refreshed.ok()) last_error = std::string(refreshed.message());
    }
    if (wait) {
      clock_.SleepFor(std::min(pause, deadline - clock_.Now()));
      pause = std::min(2 * pause, kMaxPause);
    }
  }

  if (lost_master_) {
    lost_master_ = false;
    recovered_ = true;
  }
  std::vector<RedisReply> ordered;
  ordered.reserve(replies.size());
  for (std::optional<RedisReply>& reply : replies) ordered.push_back(*std::move(reply));
  return ordered;
}

}  // namespace rplasma
