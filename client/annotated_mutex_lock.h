// AnnotatedMutexLock: absl::MutexLock that also shows ThreadSanitizer the happens-before edges of
// the lock, including the release and re-acquire inside a CondVar wait and around a temporary
// Unlock. Debian's abseil is not built with -fsanitize=thread, so TSan cannot see absl::Mutex
// synchronise and would report false races on everything it guards. Outside TSan builds this is
// exactly absl::MutexLock. Private to the client library.
//
// (The manager has the same helper in two places; one shared copy in protocol/ would be better.)
//
// Thread-safety: like absl::MutexLock (scoped, not movable).
#ifndef RPLASMA_CLIENT_ANNOTATED_MUTEX_LOCK_H_
#define RPLASMA_CLIENT_ANNOTATED_MUTEX_LOCK_H_

#include "absl/base/config.h"
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#if defined(ABSL_HAVE_THREAD_SANITIZER) || defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define RPLASMA_CLIENT_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define RPLASMA_CLIENT_TSAN_RELEASE(addr) __tsan_release(addr)
#else
#define RPLASMA_CLIENT_TSAN_ACQUIRE(addr) ((void)(addr))
#define RPLASMA_CLIENT_TSAN_RELEASE(addr) ((void)(addr))
#endif

namespace rplasma::client_internal {

class ABSL_SCOPED_LOCKABLE AnnotatedMutexLock {
 public:
  explicit AnnotatedMutexLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { Lock(); }
  ~AnnotatedMutexLock() ABSL_UNLOCK_FUNCTION() { Unlock(); }
  AnnotatedMutexLock(const AnnotatedMutexLock&) = delete;
  AnnotatedMutexLock& operator=(const AnnotatedMutexLock&) = delete;

  // Waits on `cv`; the mutex is released meanwhile.
  void Wait(absl::CondVar* cv) {
    RPLASMA_CLIENT_TSAN_RELEASE(mu_);
    cv->Wait(mu_);
    RPLASMA_CLIENT_TSAN_ACQUIRE(mu_);
  }
  // A temporary release inside the scope; REQUIRES: Lock() again before the scope ends.
  void Unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    RPLASMA_CLIENT_TSAN_RELEASE(mu_);
    mu_->Unlock();
  }
  void Lock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    mu_->Lock();
    RPLASMA_CLIENT_TSAN_ACQUIRE(mu_);
  }

 private:
  absl::Mutex* const mu_;
};

}  // namespace rplasma::client_internal

#endif  // RPLASMA_CLIENT_ANNOTATED_MUTEX_LOCK_H_
