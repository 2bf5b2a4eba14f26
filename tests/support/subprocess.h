// Subprocess: a child process started with posix_spawn, owned by this object. Destruction kills
// it (SIGKILL) and reaps it, so a failing test never leaks processes.
#ifndef RPLASMA_TESTS_SUPPORT_SUBPROCESS_H_
#define RPLASMA_TESTS_SUPPORT_SUBPROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rplasma::testing {

class Subprocess {
 public:
  // Starts argv[0] (a path) with `argv`. stdout/stderr go to `log_path` if given, else inherit.
  static absl::StatusOr<Subprocess> Start(const std::vector<std::string>& argv,
                                          const std::string& log_path = "");
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // Sends `signal`; no-op once reaped.
  void Signal(int signal);
  // Waits for exit up to `timeout`; returns the wait status, or nullopt if still running.
  std::optional<int> Wait(absl::Duration timeout = absl::InfiniteDuration());
  // SIGKILL + reap.
  void Kill();
  bool running();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

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

// Number of open fds of this process (/proc/self/fd), for leak audits.
int CountOpenFds();

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_SUBPROCESS_H_
