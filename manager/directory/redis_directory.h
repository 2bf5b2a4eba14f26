// RedisDirectory: the Directory kept in Redis (key schema: directory_codec.h, docs/DIRECTORY.md).
//
// Liveness: this node's record is SET with a TTL of options.node_ttl; the caller keeps it alive
// with Heartbeat() about every node_ttl / 3. Lookup returns only locations whose node record
// exists, and deletes (HDEL) the entries of nodes whose record expired. Heartbeat also sweeps all
// entries of expired nodes every options.sweep_interval.
//
// Redis: options.address names one redis-server or seeds of a Redis Cluster; RedisRouter finds out
// which and routes each command to the master of its key's slot (one pipeline per master).
//
// Redis down: an operation fails with kUnavailable naming the address, within op_timeout. After a
// failed connect no new attempt is made before a backoff (50 ms doubling to 2 s by default);
// operations in between fail at once. When a later operation reconnects, this node's record is
// re-published at once and the reconnect callback runs (see SetReconnectCallback) so the owner
// re-publishes its objects: a restarted Redis has lost them. In a cluster the same happens when a
// pipeline succeeds after a master had stopped answering (its replica took over, possibly without
// the last writes).
//
// Untrusted data: anything read from Redis is bounded and checked; malformed entries are skipped
// and counted (stats()["garbage_values"]), never fatal. Entries are hints (directory.h).
//
// Thread-safety: thread-safe. Calls are serialized on the router; the reconnect callback runs
// on the thread of the call that reconnected, after its lock is released, and may call back in.
#ifndef RPLASMA_MANAGER_DIRECTORY_REDIS_DIRECTORY_H_
#define RPLASMA_MANAGER_DIRECTORY_REDIS_DIRECTORY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/directory/directory.h"
#include "manager/directory/directory_codec.h"
#include "manager/directory/redis_connection.h"
#include "manager/directory/redis_directory_options.h"
#include "manager/directory/redis_reply.h"
#include "manager/directory/redis_router.h"
#include "protocol/base/counter_set.h"
#include "protocol/base/mutex_lock.h"

namespace rplasma {

// What a RedisDirectory counts (docs/DIRECTORY.md); JSON only, no metrics.
struct RedisDirectoryCounters : CounterSet {
  Counter ops{this, "ops"};                                  // pipelines sent (one per round trip)
  Counter errors{this, "errors"};                            // failed operations (Redis down, timeouts, error replies)
  Counter reconnects{this, "reconnects"};                    // successful connects after the first one
  Counter garbage_values{this, "garbage_values"};            // malformed keys/values read from Redis and skipped
  Counter cleaned_entries{this, "cleaned_entries"};          // location entries of expired nodes removed
  Counter swept_nodes{this, "swept_nodes"};                  // expired nodes whose entries were swept
  Counter liveness_cache_hits{this, "liveness_cache_hits"};  // lookups' node checks answered by the liveness cache
  Counter moved_redirects{this, "moved_redirects"};          // cluster: -MOVED answers followed
  Counter ask_redirects{this, "ask_redirects"};              // cluster: -ASK answers followed
  Counter slot_map_queries{this, "slot_map_queries"};        // CLUSTER SLOTS sent (mode discovery, map refreshes)
};

// A RedisDirectoryCounters snapshot: stats()["garbage_values"].
using RedisDirectoryStats = CounterSnapshot;

class RedisDirectory : public Directory {
 public:
  // Validates `options` and connects (PING). kInvalidArgument for bad options, kUnavailable
  // naming the address if Redis does not answer within op_timeout.
  static absl::StatusOr<std::unique_ptr<RedisDirectory>> Create(const RedisDirectoryOptions& options);
  ~RedisDirectory() override;
  RedisDirectory(const RedisDirectory&) = delete;
  RedisDirectory& operator=(const RedisDirectory&) = delete;

  // Directory. Node ids must match [A-Za-z0-9._:-]{1,128}, addresses [A-Za-z0-9._:%[]-]{0,256}.
  // RegisterNode may be called again with the same node_id (new addresses); a different node_id
  // is kInvalidArgument. Publish/Remove before RegisterNode are kInvalidArgument; a location's
  // node_id must be empty (filled in) or this node's id.
  absl::Status RegisterNode(const NodeRecord& node) override;
  absl::Status Heartbeat() override;
  absl::Status UnregisterNode() override;
  absl::Status PublishObject(const ObjectID& id, const ObjectLocation& location) override;
  absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) override;
  absl::Status RemoveObject(const ObjectID& id) override;
  absl::Status RemoveObjects(absl::Span<const ObjectID> ids) override;
  absl::StatusOr<std::vector<std::vector<ObjectLocation>>> Lookup(absl::Span<const ObjectID> ids) override;
  // SSCAN of this node's node-objects set, a page of up to 1000 ids per round trip; malformed
  // members are skipped (garbage_values). kInvalidArgument before RegisterNode.
  absl::StatusOr<std::vector<ObjectID>> ListOwnObjects() override;
  absl::StatusOr<NodeRecord> GetNode(const std::string& node_id) override;

  // Runs after a reconnect (Redis came back, possibly empty) or when Heartbeat finds this node's
  // record gone (it expired or was flushed); the record itself is already re-published. The
  // owner re-publishes its objects (PublishObjects). Replaces any earlier callback; {} clears.
  void SetReconnectCallback(std::function<void()> callback) ABSL_LOCKS_EXCLUDED(mu_);

  // Removes every entry of each registered node whose record expired (not this node's).
  absl::Status SweepExpiredNodes() ABSL_LOCKS_EXCLUDED(mu_);

  RedisDirectoryStats stats() const;
  const RedisDirectoryOptions& options() const { return options_; }

 private:
  RedisDirectory(const RedisDirectoryOptions& options, std::vector<std::string> seeds);

  // One public operation's hold on the connection: holds mu_ for its scope and, on leaving (after
  // mu_ is released and the operation's result is made), runs the reconnect callback if the
  // operation reconnected; the callback may call back in.
  class ABSL_SCOPED_LOCKABLE Session {
   public:
    explicit Session(RedisDirectory* directory)
        ABSL_EXCLUSIVE_LOCK_FUNCTION(directory->mu_) ABSL_NO_THREAD_SAFETY_ANALYSIS : directory_(directory) {
      lock_.emplace(&directory->mu_);
    }
    ~Session() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      lock_.reset();
      directory_->FireReconnectCallbackIfPending();
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

   private:
    RedisDirectory* const directory_;
    std::optional<MutexLock> lock_;
  };

  // Runs `commands` as one pipeline (one per master in a cluster): connects first if needed (and
  // allowed by the backoff); an idle connection found dead is replaced once within the same
  // op_timeout.
  absl::StatusOr<std::vector<RedisReply>> Run(absl::Span<const RedisCommand> commands)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `commands` in pipelines of at most max_pipeline; replies in order.
  absl::StatusOr<std::vector<RedisReply>> RunChunked(absl::Span<const RedisCommand> commands)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ConnectLocked(absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a cluster master was replaced: re-publishes the node record and asks for re-publication.
  void RecoverAfterFailover(absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a failed (re)connect: no new attempt before the (doubled) backoff. Returns `status`.
  absl::Status BackOff(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes commands (HSET/SADD/SET/...) whose keys may hold a value of the wrong type (written by
  // someone else): such keys are deleted and the command re-run. Checks every reply.
  absl::Status RunWrites(std::vector<RedisCommand> commands, absl::string_view op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<RedisCommand> NodeRecordCommands(const NodeRecord& node) const;
  // Deletes every location entry of `node_id` and its node-objects set; the number removed.
  absl::StatusOr<uint64_t> CleanNodeLocked(const std::string& node_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::string> OwnNodeId(absl::string_view op) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts and logs (rate-limited) a malformed value read from Redis.
  void NoteGarbage(absl::string_view what);
  // The object ids among `members` (an array reply of set `set_key`); garbage members are noted and
  // skipped.
  std::vector<ObjectID> DecodeObjectMembers(RedisReplyView members, const std::string& set_key);
  // Lookup: whether a node is alive, and what an EXISTS reply about it says (kUnknown: garbage,
  // noted), kept in the liveness cache as of `now`.
  enum class Liveness { kAlive, kExpired, kUnknown };
  Liveness NoteLiveness(const std::string& node, const RedisReplyView& reply, absl::string_view key, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the reconnect callback if a reconnect happened (Session does, on leaving). REQUIRES: mu_ not held.
  void FireReconnectCallbackIfPending() ABSL_LOCKS_EXCLUDED(mu_);

  const RedisDirectoryOptions options_;
  const DirectoryCodec codec_;

  mutable absl::Mutex mu_;
  RedisDirectoryCounters counters_;
  RedisRouter router_ ABSL_GUARDED_BY(mu_);
  bool ever_connected_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::Time next_connect_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string last_connect_error_ ABSL_GUARDED_BY(mu_);
  std::optional<NodeRecord> node_ ABSL_GUARDED_BY(mu_);
  absl::Time last_sweep_ ABSL_GUARDED_BY(mu_) = options_.clock->Now();
  bool reconnect_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> reconnect_callback_ ABSL_GUARDED_BY(mu_);
  // Lookup's liveness cache: node id -> until when it counts as alive without asking Redis.
  static constexpr size_t kMaxCachedNodes = 4096;
  absl::flat_hash_map<std::string, absl::Time> alive_until_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_REDIS_DIRECTORY_H_
