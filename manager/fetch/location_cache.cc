#include "manager/fetch/location_cache.h"

#include <algorithm>

#include "protocol/base/mutex_lock.h"

namespace rplasma::fetch {
namespace {

// Node ids are never reused (a restarted manager takes a new one), so the table of nodes only
// grows; past this many it starts over (every entry goes: a cold fetch each, nothing wrong).
constexpr size_t kMaxNodes = 4096;

}  // namespace

LocationCache::NodeSlot& LocationCache::NodeLocked(const std::string& node_id) {
  if (nodes_.size() >= kMaxNodes && !nodes_.contains(node_id)) {
    nodes_.clear();
    entries_.clear();
    order_.clear();
  }
  return *nodes_.try_emplace(node_id).first;
}

std::vector<std::optional<ObjectLocation>> LocationCache::Find(absl::Span<const ObjectID> ids) {
  std::vector<std::optional<ObjectLocation>> out(ids.size());
  if (options_.capacity == 0) return out;
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = entries_.find(ids[i]);
    if (it == entries_.end()) continue;
    const Entry& entry = it->second;
    const Node& node = entry.node->second;
    if (entry.node_epoch != node.epoch || now - node.seen > options_.node_ttl) continue;
    out[i] = ObjectLocation{entry.node->first, entry.object};
  }
  return out;
}

void LocationCache::Put(const ObjectID& id, const ObjectLocation& location) {
  const std::pair<ObjectID, ObjectDescription> one(id, location.object);
  PutMany(location.node_id, absl::MakeConstSpan(&one, 1));
}

void LocationCache::PutMany(const std::string& node_id,
                            absl::Span<const std::pair<ObjectID, ObjectDescription>> objects) {
  if (options_.capacity == 0 || objects.empty()) return;
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  NodeSlot& node = NodeLocked(node_id);
  node.second.seen = now;
  for (const auto& [id, object] : objects) {
    const uint64_t seq = next_seq_++;
    // A re-Put only renews the entry's seq: its place in order_ is moved when eviction reaches it
    // (so fetching the same ids again and again costs no queue traffic).
    const bool inserted = entries_.insert_or_assign(id, Entry{&node, node.second.epoch, object, seq}).second;
    if (inserted) order_.emplace_back(id, seq);
  }
  while (entries_.size() > options_.capacity && !order_.empty()) {
    const auto [oldest, queued_seq] = order_.front();
    order_.pop_front();
    auto it = entries_.find(oldest);
    if (it == entries_.end()) continue;  // forgotten
    if (it->second.seq == queued_seq) {
      entries_.erase(it);
    } else {
      order_.emplace_back(oldest, it->second.seq);  // Put again since it was queued: to the back
    }
  }
  if (order_.size() > 2 * options_.capacity + 64) {
    // Forgets (and re-Puts after them) leave dead places behind: keep only the live ones, in order.
    order_.clear();
    for (const auto& [entry_id, entry] : entries_) order_.emplace_back(entry_id, entry.seq);
    std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  }
}

void LocationCache::NodeSeen(const std::string& node_id) {
  if (options_.capacity == 0) return;
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  NodeLocked(node_id).second.seen = now;
}

void LocationCache::Forget(const ObjectID& id) {
  MutexLock lock(&mu_);
  entries_.erase(id);
}

void LocationCache::ForgetNode(const std::string& node_id) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  ++it->second.epoch;
  it->second.seen = absl::InfinitePast();
}

size_t LocationCache::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace rplasma::fetch
