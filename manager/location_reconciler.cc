#include "manager/location_reconciler.h"

namespace rplasma::manager {

LocationPlan PlanReconcile(absl::Span<const ObjectInfo> sealed, const std::optional<std::vector<ObjectID>>& listed,
                           const absl::flat_hash_set<ObjectID>& dirty, bool full) {
  LocationPlan plan;
  absl::flat_hash_set<ObjectID> in_store;
  in_store.reserve(sealed.size());
  for (const ObjectInfo& o : sealed) in_store.insert(o.id);
  absl::flat_hash_set<ObjectID> in_directory;
  if (listed.has_value()) in_directory.insert(listed->begin(), listed->end());
  for (const ObjectInfo& o : sealed) {
    if (full || !listed.has_value() || !in_directory.contains(o.id) || dirty.contains(o.id)) plan.publish.push_back(o);
  }
  for (const ObjectID& id : in_directory) {
    if (!in_store.contains(id)) plan.remove.push_back(id);
  }
  // A failed remove may have left an entry the listing does not show (the per-node list and the
  // entry are written in one pipeline, but a half-applied one is possible): remove it again.
  for (const ObjectID& id : dirty) {
    if (!in_store.contains(id) && !in_directory.contains(id)) plan.remove.push_back(id);
  }
  return plan;
}

}  // namespace rplasma::manager
