// StoreProcess: a real rplasma-store that a benchmark or a test starts for itself — the one store
// launcher (tests/support/store_process.h only supplies the tests' defaults).
//
// Start() spawns (ChildProcess) `rplasma-store --socket <dir>/store/store.sock --memory <bytes>`
// in a private ScratchDir that also holds its log (<dir>/store.log), and returns once the store
// logged that it listens — no probe connection is made, so OpenFdCount() right after Start is a
// clean baseline; with INFO logs off (RPLASMA_LOG_LEVEL > 0) it probes the socket instead.
// Destruction kills the store (SIGKILL) and removes the directory. Not thread-safe.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_STORE_PROCESS_H_
#define RPLASMA_BENCH_MPI_LAUNCH_STORE_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "bench-mpi/launch/child_process.h"

namespace rplasma::bench {

struct StoreProcessOptions {
  std::string binary;                   // "" = <ExecutableDir()>/rplasma-store
  uint64_t memory = 1u << 30;           // --memory: the arena size
  std::vector<std::string> extra_args;  // appended to the command line
  // Generous: the store pre-faults its whole arena before it listens, which takes seconds under
  // sanitizers, in an emulated guest, or on a loaded CI machine.
  absl::Duration start_timeout = absl::Seconds(30);

  absl::Status Validate() const;
};

class StoreProcess {
 public:
  // kUnavailable (with the store's log) if it exits at start; kDeadlineExceeded if it never listens.
  static absl::StatusOr<std::unique_ptr<StoreProcess>> Start(const StoreProcessOptions& options);
  virtual ~StoreProcess() = default;
  StoreProcess(const StoreProcess&) = delete;
  StoreProcess& operator=(const StoreProcess&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  const std::string& log_path() const { return log_path_; }
  const std::string& dir() const { return dir_.path(); }
  pid_t pid() const { return process_.pid(); }
  bool running() { return process_.running(); }

  // SIGKILL + reap.
  void Kill() { process_.Kill(); }
  // SIGTERM, then waits up to `timeout` for exit; returns the wait status (kills it on timeout).
  absl::StatusOr<int> Stop(absl::Duration timeout = absl::Seconds(10));
  // Stop that must end in exit status 0 (in sanitizer builds that also means no finding and no
  // leak); else an error saying how it ended. The TearDown check of the store tests.
  absl::Status StopCleanly(absl::Duration timeout = absl::Seconds(10));
  // Open fds of the store process (/proc/<pid>/fd), -1 if it cannot be read.
  int OpenFdCount() const;
  // The store's log so far.
  std::string ReadLog() const { return ReadWholeFile(log_path_); }

 protected:
  StoreProcess() = default;
  // Start's work, for a subclass that supplies its own defaults (tests/support/store_process.h).
  absl::Status Launch(const StoreProcessOptions& options);

 private:
  ScratchDir dir_;
  std::string socket_path_;
  std::string log_path_;
  ChildProcess process_;
};

// The pid of the process listening on Unix socket `path` (SO_PEERCRED of a short connection), so
// an attached store can be measured too.
absl::StatusOr<pid_t> UnixSocketPeerPid(const std::string& path);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_STORE_PROCESS_H_
