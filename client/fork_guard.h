// ForkGuard: whether this process is a fork of the one that made the guard.
//
// A client's connection, its shared-index slots and its manager connections are the parent's
// after fork(): the same socket (a child's request would interleave with the parent's and its
// releases would drop the parent's references) and the same slot memory (a child's release would
// clear a word the parent's buffer holds, and the store could then reuse bytes the parent still
// reads). So every way a client touches them asks its guard first, and in a child refuses
// (ForkedError) or does nothing (a buffer's release). A child connects its own Client.
//
// Cost: one relaxed atomic load and a compare; the count is bumped by a pthread_atfork child
// handler, registered once per process.
//
// Thread-safety: thread-safe.
#ifndef RPLASMA_CLIENT_FORK_GUARD_H_
#define RPLASMA_CLIENT_FORK_GUARD_H_

#include <cstdint>

#include "absl/status/status.h"

namespace rplasma {

class ForkGuard {
 public:
  ForkGuard();
  bool forked() const;

 private:
  uint64_t generation_;  // the process's fork count when the guard was made
};

// kInvalidArgument: `what` was used in a child of the process that connected it.
absl::Status ForkedError(const char* what);

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_FORK_GUARD_H_
