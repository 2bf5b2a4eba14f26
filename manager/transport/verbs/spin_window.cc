#include "manager/transport/verbs/spin_window.h"

#include <algorithm>

namespace rplasma::transport::verbs {
namespace {

constexpr int kSpinGrowth = 16;
constexpr absl::Duration kSpinCapLimit = absl::Milliseconds(2);

}  // namespace

absl::Duration SpinWindowCap(absl::Duration cq_spin) {
  return std::max(cq_spin, std::min(cq_spin * kSpinGrowth, kSpinCapLimit));
}

void SpinWindow::RanDry(absl::Time last_completion) {
  if (dry_since_ == absl::InfinitePast()) dry_since_ = last_completion;
}

void SpinWindow::Completed(absl::Time now) {
  if (dry_since_ == absl::InfinitePast()) return;
  const absl::Duration quiet = now - dry_since_;
  const absl::Duration cap = SpinWindowCap(cq_spin_);
  window_ = quiet <= cap ? std::min(cap, window_ * 2) : std::max(cq_spin_, window_ / 2);
  dry_since_ = absl::InfinitePast();
}

}  // namespace rplasma::transport::verbs
