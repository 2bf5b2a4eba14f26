// RedisRouter: sends pipelines of single-key commands to one redis-server or to a Redis Cluster,
// whichever the seeds turn out to be. RedisDirectory's only way to Redis.
//
// Modes, decided by Connect() from the first seed that answers CLUSTER SLOTS:
//   kNone     not connected (before Connect, after Disconnect, after losing every node)
//   kSingle   the seed answered an error (cluster support disabled; not a passing state such
//             as LOADING or CLUSTERDOWN, after which the next seed is tried): one RedisConnection
//             to it, used exactly as before clusters existed. A failed pipeline breaks it and the
//             router is kNone again; reconnecting (and backing off) is the caller's decision.
//   kCluster  the seed answered a slot map: one RedisConnection per master, opened on first use.
//
// Cluster pipelines: each command goes to the master of the hash slot of its key (argument 1;
// commands without a key go to any master), each master involved gets one pipeline, all of them
// sent before any reply is read (a batch costs about one round trip, not one per master), and the
// replies come back in the caller's order. Within the deadline the router follows
//   -MOVED  the slot moved: the map is updated (and refreshed) and the command re-sent there;
//   -ASK    the slot is being migrated: ASKING + the command go to the named node, map unchanged;
//   -TRYAGAIN, -CLUSTERDOWN: re-sent after a short pause (5 ms doubling to 100 ms);
//   a master that does not answer: its connection is dropped, the map refreshed from the nodes
//   known and the seeds (dead ones skipped), the command re-sent after a pause.
// A slot that no master serves, even after a refresh, fails at once with kUnavailable naming the
// slot. Nothing outlasts the deadline: kUnavailable saying how many commands were unanswered.
// When no known node answers a refresh, the router disconnects (kNone).
//
// Replies are returned as RedisConnection does: error replies other than those above are the
// caller's to read. Everything read is untrusted and bounded (redis_slot_map.h).
//
// Thread-safety: not thread-safe; the owner serializes calls (RedisDirectory holds its lock).
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_ROUTER_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_ROUTER_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/directory/redis_connection.h"
#include "manager/directory/redis_reply.h"
#include "manager/directory/redis_slot_map.h"
#include "protocol/base/clock.h"
#include "protocol/base/counter_set.h"

namespace rplasma {

// "host:port" or "unix:/path", or several comma-separated seeds of one cluster; each checked by
// ParseRedisAddress. kInvalidArgument for an empty list, an empty entry or more than 64 seeds.
absl::StatusOr<std::vector<std::string>> ParseRedisSeeds(absl::string_view seeds);

// The owner's counters the router adds to (borrowed; they outlive the router).
struct RedisRouterCounters {
  Counter& pipelines;         // pipelines sent to a node (one round trip each)
  Counter& moved_redirects;   // -MOVED answers followed
  Counter& ask_redirects;     // -ASK answers followed
  Counter& slot_map_queries;  // CLUSTER SLOTS sent (mode discovery and map refreshes)
};

class RedisRouter {
 public:
  enum class Mode { kNone, kSingle, kCluster };

  // No I/O. `connect_timeout` bounds one connect; `clock` (borrowed) gives deadlines and pauses.
  // REQUIRES: !seeds.empty(), each a valid address.
  RedisRouter(std::vector<std::string> seeds, absl::Duration connect_timeout, Clock& clock,
              RedisRouterCounters counters);
  RedisRouter(const RedisRouter&) = delete;
  RedisRouter& operator=(const RedisRouter&) = delete;

  // Tries the seeds in order until one answers CLUSTER SLOTS, and takes the mode it implies.
  // kUnavailable (the last seed's error) when none does before `deadline`.
  absl::Status Connect(absl::Time deadline);
  // Drops every connection and the slot map.
  void Disconnect();
  bool connected() const { return mode_ != Mode::kNone; }
  Mode mode() const { return mode_; }

  // Sends `commands` (see above); one reply per command, in order. REQUIRES: connected().
  absl::StatusOr<std::vector<RedisReply>> Pipeline(absl::Span<const RedisCommand> commands, absl::Time deadline);

  // True (once) when a pipeline succeeded after a master had stopped answering, or after a map
  // refresh found a master that served slots serving none: a replica took over, or the master
  // came back, and either may lack the latest writes (a resharding that empties a master counts
  // too: a needless but harmless re-publication).
  bool TakeRecovered();

 private:
  // One command still to be sent, and where an -ASK sent it ("" = its slot's master).
  struct Pending {
    size_t index;
    std::string ask;
  };
  absl::StatusOr<std::vector<RedisReply>> ClusterPipeline(absl::Span<const RedisCommand> commands, absl::Time deadline);
  // One node's pipeline within a round: its share of the commands, what was sent (ASKING before
  // each asked command), on which connection, and whether sending worked.
  struct Flight {
    std::string address;
    std::vector<Pending> share;
    std::vector<RedisCommand> batch;
    RedisConnection* connection = nullptr;  // owned by connections_
    absl::Status sent;
  };
  // Connects if needed and sends `flight`'s share; its replies are read later.
  absl::Status Send(Flight& flight, absl::Span<const RedisCommand> commands, absl::Time deadline);
  // Where `command` goes: its slot's master, or for a keyless command a serving master, one
  // already connected to if any; nullptr when its slot has no master (`slot` says which).
  const std::string* TargetOf(const RedisCommand& command, int* slot) const;
  // An open connection to `address`, opened if needed within the deadline. Never closes another
  // (a round holds pointers to the connections it sent on).
  absl::StatusOr<RedisConnection*> ConnectionTo(const std::string& address, absl::Time deadline);
  // Closes connections to nodes that are no master of the map once there are too many of them
  // (-ASK targets). Between rounds only.
  void PruneConnections();
  // Asks the nodes known (open connections, masters and replicas of the map, seeds) in turn for
  // the slot map; kUnavailable if none answers.
  absl::Status RefreshSlotMap(absl::Time deadline);
  // CLUSTER SLOTS on `connection`: the map, or the reply if it was an error (single mode).
  absl::StatusOr<RedisSlotMap> QuerySlotMap(RedisConnection& connection, absl::Time deadline,
                                            std::optional<RedisReply>* error_reply);
  std::string Describe() const;

  const std::vector<std::string> seeds_;
  const absl::Duration connect_timeout_;
  Clock& clock_;
  RedisRouterCounters counters_;

  Mode mode_ = Mode::kNone;
  std::unique_ptr<RedisConnection> single_;                                         // kSingle
  RedisSlotMap map_;                                                                // kCluster
  absl::flat_hash_map<std::string, std::unique_ptr<RedisConnection>> connections_;  // kCluster, by address
  bool lost_master_ = false;
  bool recovered_ = false;
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_ROUTER_H_
