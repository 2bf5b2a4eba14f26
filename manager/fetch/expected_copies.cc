#include "manager/fetch/expected_copies.h"

#include <algorithm>
#include <vector>

#include "protocol/base/mutex_lock.h"

namespace rplasma::fetch {

void ExpectedCopies::Add(absl::Span<const ObjectID> ids) {
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  for (const ObjectID& id : ids) {
    Expected& expected = ids_[id];
    ++expected.seals;
    expected.added = now;
  }
  if (ids_.size() > capacity_) TrimLocked(now);
}

std::vector<bool> ExpectedCopies::TakeMany(absl::Span<const ObjectID> ids) {
  std::vector<bool> taken(ids.size(), false);
  if (ids.empty()) return taken;
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = ids_.find(ids[i]);
    if (it == ids_.end()) continue;
    taken[i] = now - it->second.added <= keep_;
    if (!taken[i] || --it->second.seals == 0) ids_.erase(it);
  }
  return taken;
}

size_t ExpectedCopies::size() const {
  MutexLock lock(&mu_);
  return ids_.size();
}

void ExpectedCopies::TrimLocked(absl::Time now) {
  absl::erase_if(ids_, [&](const auto& entry) { return now - entry.second.added > keep_; });
  if (ids_.size() <= capacity_ / 2) return;
  // Still too many fresh ones: keep the newer half.
  std::vector<absl::Time> times;
  times.reserve(ids_.size());
  for (const auto& [id, expected] : ids_) times.push_back(expected.added);
  auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), middle, times.end());
  const absl::Time cut = *middle;
  absl::erase_if(ids_, [&](const auto& entry) { return entry.second.added <= cut; });
}

}  // namespace rplasma::fetch
