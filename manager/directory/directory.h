// Directory: the cluster-wide map of nodes and object locations (Redis in production:
// redis_directory.h; a fake in unit tests of the manager core).
//
// Everything read from a directory is a hint: a location may be stale (the object was deleted,
// evicted or re-created since); the owner's reply is the truth (generation, checksum, rkey).
// Nodes have a heartbeat TTL; locations of nodes whose record expired are never returned.
//
// Thread-safety: implementations are thread-safe.
#ifndef RPLASMA_MANAGER_DIRECTORY_DIRECTORY_H_
#define RPLASMA_MANAGER_DIRECTORY_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "protocol/base/object_id.h"
#include "protocol/object_description.h"

namespace rplasma {

struct NodeRecord {
  std::string node_id;        // unique per manager process (name + random suffix): [A-Za-z0-9._:-]{1,128}
  std::string tcp_address;    // "host:port" of the peer listener for the tcp transport ("" = none)
  std::string verbs_address;  // "host:port" of the rdma_cm listener ("" = no verbs)
  uint64_t epoch = 0;         // start time (ms since epoch) of the manager process
};

// One directory entry: node `node_id` held the object described by `object` when it published it
// (a hint; the owner's reply is the truth).
struct ObjectLocation {
  std::string node_id;
  ObjectDescription object;
};

class Directory {
 public:
  virtual ~Directory() = default;

  // Publishes this node's record with the heartbeat TTL; call again (Heartbeat) before it expires.
  virtual absl::Status RegisterNode(const NodeRecord& node) = 0;
  virtual absl::Status Heartbeat() = 0;
  // Removes this node's record and every location it published (clean shutdown).
  virtual absl::Status UnregisterNode() = 0;

  // This node holds `id` (sealed). Replaces an older entry of this node for the id.
  virtual absl::Status PublishObject(const ObjectID& id, const ObjectLocation& location) = 0;
  // Many at once (pipelined); used to republish everything after Redis comes back.
  virtual absl::Status PublishObjects(absl::Span<const std::pair<ObjectID, ObjectLocation>> objects) = 0;
  // This node no longer holds `id`.
  virtual absl::Status RemoveObject(const ObjectID& id) = 0;
  // Many at once; this default removes them one by one (RedisDirectory pipelines them).
  virtual absl::Status RemoveObjects(absl::Span<const ObjectID> ids) {
    absl::Status first;
    for (const ObjectID& id : ids) {
      absl::Status s = RemoveObject(id);
      if (first.ok()) first = s;
    }
    return first;
  }

  // The ids this node has published and not removed since (its own entries), to reconcile them
  // with the store. This default says the directory cannot list them (kUnimplemented); the caller
  // then publishes everything and removes nothing.
  virtual absl::StatusOr<std::vector<ObjectID>> ListOwnObjects() {
    return absl::UnimplementedError("ListOwnObjects: this directory cannot list a node's objects");
  }

  // Locations of each id on live nodes (other than none filtered: includes this node if it holds
  // it), one vector per id, in order. Pipelined, so the cost does not grow with the batch: one
  // round trip for the locations, a second to ask whether their nodes are alive (skipped for nodes
  // seen alive recently), and a third only when entries of expired nodes are to be cleaned.
  virtual absl::StatusOr<std::vector<std::vector<ObjectLocation>>> Lookup(absl::Span<const ObjectID> ids) = 0;
  // A live node's record; ObjectNotFound if it expired or never existed.
  virtual absl::StatusOr<NodeRecord> GetNode(const std::string& node_id) = 0;
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_DIRECTORY_H_
