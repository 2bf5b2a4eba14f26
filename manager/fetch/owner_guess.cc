#include "manager/fetch/owner_guess.h"

#include <algorithm>

#include "protocol/base/mutex_lock.h"

namespace rplasma::fetch {

std::string OwnerGuess::Guess() const {
  if (!enabled_) return "";
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  if (confidence_ < kConfident || now - alive_at_ > node_ttl_) return "";
  return candidate_;
}

void OwnerGuess::Learn(const std::string& node) {
  if (!enabled_ || node.empty()) return;
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  if (node == candidate_) {
    confidence_ = std::min(confidence_ + 1, kMaxConfidence);
    alive_at_ = now;
  } else if (confidence_ <= 1) {
    candidate_ = node;
    confidence_ = 1;
    alive_at_ = now;
  } else {
    --confidence_;
  }
}

void OwnerGuess::Judge(const std::string& node, size_t tried, size_t served) {
  if (!enabled_ || tried == 0) return;
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  if (node != candidate_) return;
  if (served > 0) alive_at_ = now;
  if (2 * served >= tried) {
    confidence_ = std::min(confidence_ + 1, kMaxConfidence);
  } else {
    confidence_ = std::max(confidence_ - 2, 0);
  }
}

void OwnerGuess::Forget(const std::string& node) {
  MutexLock lock(&mu_);
  if (node == candidate_) confidence_ = 0;
}

}  // namespace rplasma::fetch
