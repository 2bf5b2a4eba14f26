// FakeClock: a Clock for unit tests. Its time stands still until SleepFor or Advance moves it;
// SleepFor returns at once, so a retry loop with back-off runs its whole course in no real time
// and the same way every run. `on_sleep`, when set, runs after each SleepFor has moved the time:
// the place for a test to make something happen "while the code under test waits".
//
// Thread-safety: thread-safe; on_sleep runs on the sleeping thread, without the clock's lock.
#ifndef RPLASMA_TESTS_SUPPORT_FAKE_CLOCK_H_
#define RPLASMA_TESTS_SUPPORT_FAKE_CLOCK_H_

#include <functional>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "protocol/base/clock.h"
#include "protocol/base/mutex_lock.h"

namespace rplasma::testing {

class FakeClock final : public Clock {
 public:
  // Starts at the real time, so deadlines it yields also make sense to code on the real clock.
  explicit FakeClock(absl::Time start = absl::Now()) : now_(start) {}

  absl::Time Now() const override {
    MutexLock lock(&mu_);
    return now_;
  }

  void SleepFor(absl::Duration duration) override {
    Advance(duration);
    std::function<void()> hook;
    {
      MutexLock lock(&mu_);
      ++sleeps_;
      hook = on_sleep_;
    }
    if (hook) hook();
  }

  void Advance(absl::Duration duration) {
    MutexLock lock(&mu_);
    if (duration > absl::ZeroDuration()) now_ += duration;
  }

  void set_on_sleep(std::function<void()> hook) {
    MutexLock lock(&mu_);
    on_sleep_ = std::move(hook);
  }

  int sleeps() const {
    MutexLock lock(&mu_);
    return sleeps_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  int sleeps_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> on_sleep_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_FAKE_CLOCK_H_
