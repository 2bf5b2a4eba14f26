// ChildProcess: a helper process (rplasma-store, rplasma-manager, redis-server, a test's worker)
// that a benchmark or a test starts (vfork + execve, like posix_spawn: nothing is copied, so it is
// safe after ibv_reg_mr) and owns. The one child-process launcher of the project: benchmarks and
// tests (tests/support) both use it.
//
// By default the child gets PR_SET_PDEATHSIG = SIGKILL, so it dies with the thread that spawned it
// even when this process is SIGKILLed (an MPI rank killed by mpirun, a test killed by its timeout,
// leaves no store or manager behind); a child whose parent died before the prctl took effect exits
// without running. Destruction ends a child still running (SpawnOptions::stop_grace) and reaps it.
// Move-only; not thread-safe.
//
// REQUIRES: with a death signal, spawn from a thread that outlives the child (the kernel's "parent"
// for PDEATHSIG is the spawning thread, not the process) — in benchmarks and tests, the main thread.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_CHILD_PROCESS_H_
#define RPLASMA_BENCH_MPI_LAUNCH_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rplasma::bench {

struct SpawnOptions {
  // stdout and stderr are appended to this file (created 0600); "" = inherited from this process.
  // stdin is always /dev/null.
  std::string log_path = {};
  // NAME=VALUE entries added to this process's environment (replacing entries of the same NAME).
  std::vector<std::string> env = {};
  // Sent to the child when the spawning thread dies (PR_SET_PDEATHSIG); 0 = none.
  int death_signal = SIGKILL;
  // How destruction ends a child that still runs: SIGTERM, up to this long to exit, then SIGKILL.
  // Zero (the default) = SIGKILL at once, like a crash: a failing test never waits.
  absl::Duration stop_grace = absl::ZeroDuration();
};

class ChildProcess {
 public:
  // Starts argv[0] (a path) with `argv`. An exec failure (missing binary, unwritable log) is this
  // call's error.
  static absl::StatusOr<ChildProcess> Start(const std::vector<std::string>& argv, const SpawnOptions& options);
  // Start with stdout and stderr appended to `log_path` ("" = inherited) and the other defaults.
  static absl::StatusOr<ChildProcess> Start(const std::vector<std::string>& argv, const std::string& log_path = "");

  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // The child's pid; -1 once it has been reaped (or if none was started).
  pid_t pid() const { return pid_; }
  // False once the child exited (it is reaped then, and its wait status kept for Wait/Stop).
  bool running();
  // Sends `signal`; no-op once reaped.
  void Signal(int signal);
  // Waits up to `timeout` for the child to exit; its wait status (also when it was reaped
  // before), or nullopt if it still runs or none was started.
  std::optional<int> Wait(absl::Duration timeout = absl::InfiniteDuration());
  // SIGKILL + reap. No-op once reaped.
  void Kill();
  // SIGTERM; waits up to `grace`; SIGKILL if it still runs. The wait status if the child exited
  // by itself (now or before), nullopt if it had to be killed or none was started.
  std::optional<int> Stop(absl::Duration grace = absl::Seconds(3));

 private:
  ChildProcess(pid_t pid, absl::Duration stop_grace) : pid_(pid), stop_grace_(stop_grace) {}
  // Reaps the child if `status` came from waitpid for it.
  void Reaped(int status);

  pid_t pid_ = -1;
  std::optional<int> wait_status_;  // set once reaped
  absl::Duration stop_grace_ = absl::ZeroDuration();
};

// The directory holding this executable (/proc/self/exe), e.g. ".../build/bin".
absl::StatusOr<std::string> ExecutableDir();
// The rplasma binary `name` to launch: `configured` if set, else ExecutableDir()/name.
// kUnavailable naming the path when it is not an executable file.
absl::StatusOr<std::string> RplasmaBinary(const std::string& configured, absl::string_view name);

// A private (0700) directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class ScratchDir {
 public:
  static absl::StatusOr<ScratchDir> Create(const std::string& prefix);
  // Create for test fixtures and bodies, which cannot return a status: a directory that cannot be
  // made aborts the process (CHECK) at once.
  static ScratchDir CreateOrDie(const std::string& prefix = "rplasma-test");
  ScratchDir() = default;
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir& operator=(ScratchDir&& other) noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The last `max_bytes` of a (log) file, for error messages; "" if unreadable.
std::string FileTail(const std::string& path, size_t max_bytes = 2000);
// The whole of a (log) file; "" if unreadable.
std::string ReadWholeFile(const std::string& path);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_CHILD_PROCESS_H_
