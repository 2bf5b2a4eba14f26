// WaitFor: polls a condition until it holds or a timeout passes — how tests wait for a condition
// (published, sealed, released, exited) instead of for a fixed time.
#ifndef RPLASMA_TESTS_SUPPORT_WAIT_FOR_H_
#define RPLASMA_TESTS_SUPPORT_WAIT_FOR_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace rplasma::testing {

// Polls `predicate` every few ms until it is true or `timeout` passes.
template <typename Pred>
bool WaitFor(Pred predicate, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (predicate()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return predicate();
}

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_WAIT_FOR_H_
