// TsanMutexLock: absl::MutexLock that also shows ThreadSanitizer the happens-before edges of the
// lock, including the release/re-acquire inside Await. Debian's abseil is not built with
// -fsanitize=thread, so TSan cannot see absl::Mutex synchronise and would report false races on
// everything it guards. Outside TSan builds this is exactly absl::MutexLock (+ Await helpers).
//
// (The same idea exists as rplasma::AnnotatedMutexLock in manager/directory/; a single shared
// copy in protocol/ would be better — see docs/TRANSPORT.md.)
//
// Thread-safety: like absl::MutexLock (scoped, not movable).
#ifndef RPLASMA_MANAGER_TRANSPORT_TCP_TSAN_MUTEX_LOCK_H_
#define RPLASMA_MANAGER_TRANSPORT_TCP_TSAN_MUTEX_LOCK_H_

#include "absl/base/config.h"
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#if defined(ABSL_HAVE_THREAD_SANITIZER) || defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define RPLASMA_TCP_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define RPLASMA_TCP_TSAN_RELEASE(addr) __tsan_release(addr)
#else
#define RPLASMA_TCP_TSAN_ACQUIRE(addr) ((void)(addr))
#define RPLASMA_TCP_TSAN_RELEASE(addr) ((void)(addr))
#endif

namespace rplasma::transport::tcp {

class ABSL_SCOPED_LOCKABLE TsanMutexLock {
 public:
  explicit TsanMutexLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
    RPLASMA_TCP_TSAN_ACQUIRE(mu_);
  }
  ~TsanMutexLock() ABSL_UNLOCK_FUNCTION() {
    RPLASMA_TCP_TSAN_RELEASE(mu_);
    mu_->Unlock();
  }
  TsanMutexLock(const TsanMutexLock&) = delete;
  TsanMutexLock& operator=(const TsanMutexLock&) = delete;

  // mu_->Await / AwaitWithDeadline: the mutex is released while waiting.
  void Await(const absl::Condition& cond) {
    RPLASMA_TCP_TSAN_RELEASE(mu_);
    mu_->Await(cond);
    RPLASMA_TCP_TSAN_ACQUIRE(mu_);
  }
  bool AwaitWithDeadline(const absl::Condition& cond, absl::Time deadline) {
    RPLASMA_TCP_TSAN_RELEASE(mu_);
    bool satisfied = mu_->AwaitWithDeadline(cond, deadline);
    RPLASMA_TCP_TSAN_ACQUIRE(mu_);
    return satisfied;
  }

 private:
  absl::Mutex* const mu_;
};

}  // namespace rplasma::transport::tcp

#endif  // RPLASMA_MANAGER_TRANSPORT_TCP_TSAN_MUTEX_LOCK_H_
