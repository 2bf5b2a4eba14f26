// MutexLock: absl::MutexLock that ThreadSanitizer can follow, for every rplasma thread.
//
// Debian's abseil is not built with -fsanitize=thread, so TSan cannot see absl::Mutex order
// memory and would report false races on everything a mutex guards. In TSan builds this lock
// adds __tsan_acquire/__tsan_release on the mutex address at lock, unlock, and around the waits
// that release and re-acquire the mutex (Await*, CondVar waits). Elsewhere it is exactly
// absl::MutexLock: the annotations compile away.
//
// Use it instead of absl::MutexLock everywhere (and its Await/Wait instead of calling the mutex's
// or CondVar's own, which would hide the release from TSan).
//
// Thread-safety: like absl::MutexLock (scoped, not movable).
#ifndef RPLASMA_PROTOCOL_BASE_MUTEX_LOCK_H_
#define RPLASMA_PROTOCOL_BASE_MUTEX_LOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define RPLASMA_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define RPLASMA_TSAN_RELEASE(addr) __tsan_release(addr)
#else
#define RPLASMA_TSAN_ACQUIRE(addr) ((void)(addr))
#define RPLASMA_TSAN_RELEASE(addr) ((void)(addr))
#endif

namespace rplasma::mutex_lock_internal {
// Under ThreadSanitizer, which finds lock-order inversions itself, abseil's own lock-order graph is
// turned off at the first lock: it is updated under a spin lock inside the uninstrumented abseil,
// so two threads locking two different mutexes looked like a race on the graph.
inline void LeaveLockOrderToTsan() {
#if defined(__SANITIZE_THREAD__)
  static const bool once = [] {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    return true;
  }();
  (void)once;
#endif
}
}  // namespace rplasma::mutex_lock_internal

namespace rplasma {

// abseil checks the order of every Mutex acquisition at run time (a process-wide graph of locks,
// updated under one global spin lock on each Lock and each Mutex's destruction) unless abseil
// itself was built with NDEBUG, which Debian's is not. A release binary (NDEBUG) calls this first
// in main and leaves that check to the Debug build of the ASan stage (TSan has its own). Not called
// by the client library: the mode is the whole process's, which belongs to the application.
inline void UseReleaseMutexChecks() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // mu->Await* with the release while waiting made visible. Return like absl's.
  void Await(const absl::Condition& cond) {
    RPLASMA_TSAN_RELEASE(mu_);
    mu_->Await(cond);
    RPLASMA_TSAN_ACQUIRE(mu_);
  }
  bool AwaitWithTimeout(const absl::Condition& cond, absl::Duration timeout) {
    RPLASMA_TSAN_RELEASE(mu_);
    bool satisfied = mu_->AwaitWithTimeout(cond, timeout);
    RPLASMA_TSAN_ACQUIRE(mu_);
    return satisfied;
  }
  bool AwaitWithDeadline(const absl::Condition& cond, absl::Time deadline) {
    RPLASMA_TSAN_RELEASE(mu_);
    bool satisfied = mu_->AwaitWithDeadline(cond, deadline);
    RPLASMA_TSAN_ACQUIRE(mu_);
    return satisfied;
  }
  // cv->Wait / WaitWithDeadline on this lock's mutex. WaitWithDeadline returns true on timeout.
  void Wait(absl::CondVar* cv) {
    RPLASMA_TSAN_RELEASE(mu_);
    cv->Wait(mu_);
    RPLASMA_TSAN_ACQUIRE(mu_);
  }
  bool WaitWithDeadline(absl::CondVar* cv, absl::Time deadline) {
    RPLASMA_TSAN_RELEASE(mu_);
    bool timed_out = cv->WaitWithDeadline(mu_, deadline);
    RPLASMA_TSAN_ACQUIRE(mu_);
    return timed_out;
  }
  // cv->WaitWithTimeout on this lock's mutex; true on timeout.
  bool WaitWithTimeout(absl::CondVar* cv, absl::Duration timeout) {
    RPLASMA_TSAN_RELEASE(mu_);
    bool timed_out = cv->WaitWithTimeout(mu_, timeout);
    RPLASMA_TSAN_ACQUIRE(mu_);
    return timed_out;
  }

  // A temporary release inside the scope. REQUIRES: Lock() again before the scope ends.
  void Unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    RPLASMA_TSAN_RELEASE(mu_);
    mu_->Unlock();
  }
  void Lock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    mutex_lock_internal::LeaveLockOrderToTsan();
    mu_->Lock();
    RPLASMA_TSAN_ACQUIRE(mu_);
  }

 private:
  absl::Mutex* const mu_;
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_MUTEX_LOCK_H_
