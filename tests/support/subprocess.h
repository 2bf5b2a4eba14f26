// Subprocess: the tests' name for bench-mpi/launch's ChildProcess, the one child-process launcher
// (vfork + execve, PR_SET_PDEATHSIG, log file, Wait with a timeout, Stop/Kill). Started with
// Subprocess::Start(argv, log_path); destruction kills the child (SIGKILL) and reaps it, so a
// failing test never leaks processes.
#ifndef RPLASMA_TESTS_SUPPORT_SUBPROCESS_H_
#define RPLASMA_TESTS_SUPPORT_SUBPROCESS_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench-mpi/launch/child_process.h"

namespace rplasma::testing {

using Subprocess = ::rplasma::bench::ChildProcess;

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
