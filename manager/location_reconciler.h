// PlanReconcile: what the directory must be told so that this node's entries match its store.
//
// The store is the truth: every sealed object it lists should have an entry of this node, and
// every id the directory lists for this node that the store no longer holds is stale. Pure logic
// (no I/O): the ObjectPublisher lists both sides and applies the plan.
//
// Ordering: the publisher runs the plan on its own thread between store events, so an event that
// arrives while it lists (a seal, a delete) is applied after the plan; each kind of event then
// overwrites what the plan did for that id, which is why a plan made from either order of the two
// listings is safe.
#ifndef RPLASMA_MANAGER_LOCATION_RECONCILER_H_
#define RPLASMA_MANAGER_LOCATION_RECONCILER_H_

#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"

#include "protocol/base/object_id.h"
#include "protocol/store_messages.h"

namespace rplasma::manager {

struct LocationPlan {
  std::vector<ObjectInfo> publish;  // sealed objects to (re)publish
  std::vector<ObjectID> remove;     // this node's entries to remove
};

// `sealed`: the store's sealed objects. `listed`: the ids the directory holds for this node, or
// nullopt when it cannot list them (then everything is published and nothing removed). `dirty`:
// ids whose last update failed (republished even if listed: the listed entry may be older;
// removed again if the store no longer holds them).
// `full`: publish every sealed object (the directory may have lost entries while keeping its
// per-node list, e.g. other nodes cleaned them while this node's record had expired).
LocationPlan PlanReconcile(absl::Span<const ObjectInfo> sealed, const std::optional<std::vector<ObjectID>>& listed,
                           const absl::flat_hash_set<ObjectID>& dirty, bool full);

}  // namespace rplasma::manager

#endif  // RPLASMA_MANAGER_LOCATION_RECONCILER_H_
