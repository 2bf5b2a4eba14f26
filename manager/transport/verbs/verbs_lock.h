// VerbsLock and CondVar waits that ThreadSanitizer can follow.
//
// Debian's abseil is not built with -fsanitize=thread, so TSan cannot see absl::Mutex order
// memory and reports false races on everything it guards. VerbsLock is absl::MutexLock plus
// __tsan_acquire/__tsan_release on the mutex address (and around CondVar waits, which release and
// re-acquire the mutex). Outside TSan builds the annotations compile away.
#ifndef RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_LOCK_H_
#define RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_LOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define RPLASMA_VERBS_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define RPLASMA_VERBS_TSAN_RELEASE(addr) __tsan_release(addr)
#else
#define RPLASMA_VERBS_TSAN_ACQUIRE(addr) ((void)(addr))
#define RPLASMA_VERBS_TSAN_RELEASE(addr) ((void)(addr))
#endif

namespace rplasma::transport::verbs {

class ABSL_SCOPED_LOCKABLE VerbsLock {
 public:
  explicit VerbsLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
    RPLASMA_VERBS_TSAN_ACQUIRE(mu_);
  }
  ~VerbsLock() ABSL_UNLOCK_FUNCTION() {
    RPLASMA_VERBS_TSAN_RELEASE(mu_);
    mu_->Unlock();
  }
  VerbsLock(const VerbsLock&) = delete;
  VerbsLock& operator=(const VerbsLock&) = delete;

 private:
  absl::Mutex* const mu_;
};

// cv.Wait(mu) / cv.WaitWithDeadline(mu, deadline) with the release/re-acquire made visible.
// REQUIRES: mu held. WaitWithDeadline returns true on timeout (like absl).
inline void Wait(absl::CondVar& cv, absl::Mutex* mu) {
  RPLASMA_VERBS_TSAN_RELEASE(mu);
  cv.Wait(mu);
  RPLASMA_VERBS_TSAN_ACQUIRE(mu);
}
inline bool WaitWithDeadline(absl::CondVar& cv, absl::Mutex* mu, absl::Time deadline) {
  RPLASMA_VERBS_TSAN_RELEASE(mu);
  bool timed_out = cv.WaitWithDeadline(mu, deadline);
  RPLASMA_VERBS_TSAN_ACQUIRE(mu);
  return timed_out;
}

}  // namespace rplasma::transport::verbs

#endif  // RPLASMA_MANAGER_TRANSPORT_VERBS_VERBS_LOCK_H_
