// AnnotatedMutexLock: absl::MutexLock that also shows ThreadSanitizer the happens-before edge of
// the lock. Debian's abseil is not built with -fsanitize=thread, so TSan cannot see absl::Mutex
// synchronize and reports false races on whatever it guards (here: the hiredis context's
// buffers). Outside TSan builds this is exactly absl::MutexLock.
//
// Thread-safety: like absl::MutexLock (scoped, not movable).
#ifndef RPLASMA_MANAGER_DIRECTORY_ANNOTATED_MUTEX_LOCK_H_
#define RPLASMA_MANAGER_DIRECTORY_ANNOTATED_MUTEX_LOCK_H_

#include "absl/base/config.h"
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#if defined(ABSL_HAVE_THREAD_SANITIZER) || defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define RPLASMA_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define RPLASMA_TSAN_RELEASE(addr) __tsan_release(addr)
#else
#define RPLASMA_TSAN_ACQUIRE(addr) ((void)(addr))
#define RPLASMA_TSAN_RELEASE(addr) ((void)(addr))
#endif

namespace rplasma {

class ABSL_SCOPED_LOCKABLE AnnotatedMutexLock {
 public:
  explicit AnnotatedMutexLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
    RPLASMA_TSAN_ACQUIRE(mu_);
  }
  ~AnnotatedMutexLock() ABSL_UNLOCK_FUNCTION() {
    RPLASMA_TSAN_RELEASE(mu_);
    mu_->Unlock();
  }
  AnnotatedMutexLock(const AnnotatedMutexLock&) = delete;
  AnnotatedMutexLock& operator=(const AnnotatedMutexLock&) = delete;

 private:
  absl::Mutex* const mu_;
};

}  // namespace rplasma

#endif  // RPLASMA_MANAGER_DIRECTORY_ANNOTATED_MUTEX_LOCK_H_
