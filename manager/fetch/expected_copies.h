// ExpectedCopies: the ids this manager's fetches are about to seal in the local store, so that the
// publisher (manager/object_publisher.h) can tell a fetched copy's seal event from an
// application's and publish the copy lazily, off the fetch's critical path.
//
// The fetch engine adds ids before it transfers them; the publisher takes each id when its seal
// event arrives. Each Add of an id expects one seal: an id fetched again (its copy deleted) before
// the publisher saw the first copy's seal is taken twice, so neither copy is published at once.
// An id whose transfer failed is never taken: it is forgotten `keep` after its last Add, and at
// most `capacity` ids are remembered (past that the oldest half goes). Forgetting an id only
// means its copy is published at once, like any object; wrongly taking an id (an application
// sealed it after a failed fetch) only delays its publication.
//
// Thread-safety: thread-safe.
#ifndef RPLASMA_MANAGER_FETCH_EXPECTED_COPIES_H_
#define RPLASMA_MANAGER_FETCH_EXPECTED_COPIES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "protocol/base/clock.h"
#include "protocol/base/object_id.h"

namespace rplasma::fetch {

class ExpectedCopies {
 public:
  // `clock` is borrowed and outlives this.
  explicit ExpectedCopies(Clock* clock, absl::Duration keep = absl::Seconds(60), size_t capacity = size_t{1} << 20)
      : clock_(clock), keep_(keep), capacity_(capacity) {}

  void Add(absl::Span<const ObjectID> ids);
  // For each id in order: true if it was added within `keep` and not taken as often as it was
  // added (each mention takes one Add). One lock for them all.
  std::vector<bool> TakeMany(absl::Span<const ObjectID> ids);
  // Ids with an Add not taken yet.
  size_t size() const;

 private:
  void TrimLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const absl::Duration keep_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  struct Expected {
    uint32_t seals = 0;  // Adds not taken yet
    absl::Time added;    // the last Add
  };
  absl::flat_hash_map<ObjectID, Expected> ids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_EXPECTED_COPIES_H_
