// LocationCache: where this manager last found each remote object, so that fetching it again (or
// fetching what the same owner produced a moment ago) needs no directory call.
//
// An entry names the node that served the object and the owner's description of it (its size
// picks the protocol; its generation tells a re-created object from the one cached). Entries come
// from owners' replies (Put, after a verified transfer). Like the directory's, an entry is a hint:
// the owner's reply is the truth, so a stale entry costs one failed attempt and a lookup, never
// wrong bytes.
//
// A node's entries are trusted while the node proved alive within `node_ttl` (the directory's
// node record lifetime): by answering with an object, or by a directory lookup that listed it
// (NodeSeen). After that they are misses until it proves alive again, as a node whose record
// expired drops out of directory lookups. ForgetNode drops a node's entries at once (its channel
// failed, or the directory no longer knows it); Forget drops one id (its owner no longer has it).
//
// Bounded: at most `capacity` entries, the oldest Put leaves first, except that an entry Put again
// since it was queued is moved to the back when eviction reaches it (a second chance: re-fetching
// the same ids over and over renews their entries with no queue traffic); capacity 0 turns the
// cache off (every Find misses, nothing is kept).
//
// Thread-safety: thread-safe; each call takes one mutex once, batches included.
#ifndef RPLASMA_MANAGER_FETCH_LOCATION_CACHE_H_
#define RPLASMA_MANAGER_FETCH_LOCATION_CACHE_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "manager/directory/directory.h"
#include "protocol/base/clock.h"
#include "protocol/base/object_id.h"

namespace rplasma::fetch {

struct LocationCacheOptions {
  size_t capacity = size_t{1} << 18;           // entries (about 100 bytes each)
  absl::Duration node_ttl = absl::Seconds(5);  // how long a node's proof of life lasts
};

class LocationCache {
 public:
  // `clock` is borrowed and outlives the cache.
  LocationCache(LocationCacheOptions options, Clock* clock) : options_(options), clock_(clock) {}

  // The cached location of each id, in order; nullopt where there is none (or its node has not
  // proved alive within node_ttl).
  std::vector<std::optional<ObjectLocation>> Find(absl::Span<const ObjectID> ids);
  // `id` is at `location` (its node just answered with it): replaces any entry for the id, and
  // counts as the node's proof of life.
  void Put(const ObjectID& id, const ObjectLocation& location);
  // Put of each (id, object) on `node_id`: one lock and one node lookup for a whole batch.
  void PutMany(const std::string& node_id, absl::Span<const std::pair<ObjectID, ObjectDescription>> objects);
  // A directory lookup listed objects on `node_id`: its entries are trusted for node_ttl more.
  void NodeSeen(const std::string& node_id);
  void Forget(const ObjectID& id);
  void ForgetNode(const std::string& node_id);

  size_t size() const;

 private:
  struct Node {
    uint64_t epoch = 0;  // bumped by ForgetNode: entries of an older epoch are gone
    absl::Time seen = absl::InfinitePast();
  };
  using NodeSlot = std::pair<const std::string, Node>;  // an element of nodes_: id and state
  struct Entry {
    const NodeSlot* node;  // stable: nodes_ is node-based, and cleared only with entries_
    uint64_t node_epoch;
    ObjectDescription object;
    uint64_t seq;  // of its latest Put (its place in order_ may be older: see PutMany)
  };

  NodeSlot& NodeLocked(const std::string& node_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const LocationCacheOptions options_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  absl::node_hash_map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<ObjectID, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<ObjectID, uint64_t>> order_ ABSL_GUARDED_BY(mu_);  // (id, seq) by queueing time
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_LOCATION_CACHE_H_
