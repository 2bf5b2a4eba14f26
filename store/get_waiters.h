// GetWaiters: Get requests that wait for objects to be sealed, with their deadlines.
//
// A waiting Get keeps one entry per requested id; entries already served carry their ObjectInfo
// (and the reference the store took for them). When an id is sealed, every entry waiting on it is
// served; a Get whose entries are all served, or whose deadline passes, is handed back to the
// store to be answered (out of order with the client's other replies, matched by request_id).
// Deadlines sit in a min-heap; entries of removed Gets are skipped lazily.
//
// Thread-safety: none (owned by the store's event-loop thread).
#ifndef RPLASMA_STORE_GET_WAITERS_H_
#define RPLASMA_STORE_GET_WAITERS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "protocol/base/object_id.h"
#include "protocol/store_messages.h"
#include "store/object_table.h"

namespace rplasma {

struct PendingGet {
  ClientId client = 0;
  uint64_t request_id = 0;
  absl::Time deadline = absl::InfiniteFuture();
  std::vector<ObjectInfo> objects;  // one per requested id, in request order
  std::vector<bool> served;         // objects[i] holds a reference and valid info
};

class GetWaiters {
 public:
  // Takes a reference for `client` on the just-sealed id (ObjectTable::Get).
  using TakeRef = std::function<absl::StatusOr<ObjectInfo>(ClientId)>;

  // REQUIRES: at least one entry of `get` is not served.
  void Add(PendingGet get);
  // Serves every entry waiting on `id`; returns the Gets now complete.
  std::vector<PendingGet> OnSealed(const ObjectID& id, const TakeRef& take_ref);
  // Removes and returns the Gets whose deadline is <= now (entries not served stay unserved).
  std::vector<PendingGet> Expire(absl::Time now);
  // Forgets the Gets of a client that went away (its references are the table's business).
  void RemoveClient(ClientId client);
  // Earliest deadline of a waiting Get, if any has one.
  std::optional<absl::Time> NextDeadline();
  size_t size() const { return gets_.size(); }

 private:
  using GetId = uint64_t;
  // Unlinks the unserved entries of `get` from by_id_.
  void Unlink(GetId gid, const PendingGet& get);

  GetId next_id_ = 1;
  absl::flat_hash_map<GetId, PendingGet> gets_;
  absl::flat_hash_map<ObjectID, std::vector<std::pair<GetId, size_t>>> by_id_;  // id -> (get, entry)
  using Deadline = std::pair<absl::Time, GetId>;
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<Deadline>> deadlines_;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_GET_WAITERS_H_
