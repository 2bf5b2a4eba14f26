// ChildProcess: a helper process (rplasma-store, redis-server, rplasma-manager) that a benchmark
// starts (vfork + execve, like posix_spawn: nothing is copied, so it is safe after ibv_reg_mr) and
// owns. Destruction stops it (SIGTERM, then SIGKILL after a grace period) and reaps it. The child
// also gets PR_SET_PDEATHSIG = SIGKILL, so it dies with the thread that spawned it even when this
// process is SIGKILLed (an MPI rank killed by mpirun leaves no store or manager behind); a child
// whose parent died before the prctl took effect exits without running. Move-only; not thread-safe.
//
// REQUIRES: spawn from a thread that outlives the child (the kernel's "parent" for PDEATHSIG is the
// spawning thread, not the process) — in the benchmarks, the main thread.
#ifndef RPLASMA_BENCH_MPI_COMMON_CHILD_PROCESS_H_
#define RPLASMA_BENCH_MPI_COMMON_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rplasma::bench {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with `argv`; stdout and stderr are appended to `log_path`. An exec
  // failure (missing binary, unwritable log) is this call's error.
  static absl::StatusOr<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                            const std::string& log_path);
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // False once the child exited (it is reaped then).
  bool Running();
  // SIGTERM; waits up to `grace`; SIGKILL; reaps. No-op when not running.
  void Stop(absl::Duration grace = absl::Seconds(3));

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// The directory holding this executable (/proc/self/exe), e.g. ".../build/bin".
absl::StatusOr<std::string> ExecutableDir();

// A private (0700) directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class ScratchDir {
 public:
  static absl::StatusOr<ScratchDir> Create(const std::string& prefix);
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

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_CHILD_PROCESS_H_
