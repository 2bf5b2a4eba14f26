// SpinWindow: how long a thread polling an endpoint's CQ keeps spinning without a completion
// before it lets go (arms the CQ and blocks), adapted to the endpoint's traffic.
//
// The window starts at cq_spin and stays within [cq_spin, SpinWindowCap(cq_spin)]. When a spin ran
// dry and the next completion still came within the cap, the spin gave up too early: the window
// doubles. When the CQ then stayed quiet longer than the cap, traffic is sparse: it halves.
//
// Not thread-safe: the endpoint calls it under its mutex. Device-free; time is passed in.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_SPIN_WINDOW_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_SPIN_WINDOW_H_

#include "absl/time/time.h"

namespace rplasma::transport::verbs {

// The longest window: 16 x cq_spin, at most 2 ms (or cq_spin itself if that is longer).
absl::Duration SpinWindowCap(absl::Duration cq_spin);

class SpinWindow {
 public:
  explicit SpinWindow(absl::Duration cq_spin) : cq_spin_(cq_spin), window_(cq_spin) {}

  absl::Duration get() const { return window_; }
  // A spin gave up: nothing completed for the window after `last_completion`. The quiet period
  // counts from the first such spin until the next completion.
  void RanDry(absl::Time last_completion);
  // A spin ran dry and no completion came since: the next one adapts the window. (Lets the caller
  // skip reading the clock for every completion.)
  bool dry() const { return dry_since_ != absl::InfinitePast(); }
  // Completions were polled at `now`; after a dry spin this adapts the window.
  void Completed(absl::Time now);

 private:
  const absl::Duration cq_spin_;
  absl::Duration window_;
  absl::Time dry_since_ = absl::InfinitePast();  // start of the quiet period a spin gave up in
};

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_SPIN_WINDOW_H_
