// Clock: where library code gets the time and sleeps, so tests can drive time instead of waiting
// for it (LevelDB's Env, reduced to time).
//
// Production code takes a `Clock&` (or `Clock*`) from whoever builds it; binaries pass
// `Clock::Real()`. Unit tests pass a FakeClock (tests/support/fake_clock.h) whose SleepFor moves
// its time forward at once.
//
// What stays on the real clock: waits the kernel or abseil times out by themselves (poll/epoll
// timeouts, a socket's SO_RCVTIMEO, Mutex::AwaitWithTimeout). Code that waits that way converts its
// deadline into a timeout with `deadline - clock.Now()`, so a fake clock's deadline still bounds it.
//
// Thread-safety: implementations are thread-safe.
#ifndef RPLASMA_PROTOCOL_BASE_CLOCK_H_
#define RPLASMA_PROTOCOL_BASE_CLOCK_H_

#include "absl/time/time.h"

namespace rplasma {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() const = 0;
  virtual void SleepFor(absl::Duration duration) = 0;

  // absl::Now / absl::SleepFor. One immutable object for the whole process: it has no state.
  static Clock& Real();
};

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_CLOCK_H_
