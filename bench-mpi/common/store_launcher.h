// LaunchedStore: an rplasma-store that a benchmark starts for itself.
//
// Start() spawns (ChildProcess) `rplasma-store --socket <dir>/store.sock --memory <bytes>` from the same
// bin directory as the running benchmark (build/bin), in a private ScratchDir that also holds its
// log, and returns once the socket accepts connections. Destruction stops the store (SIGTERM,
// then SIGKILL) and removes the directory. Not thread-safe.
#ifndef RPLASMA_BENCH_MPI_COMMON_STORE_LAUNCHER_H_
#define RPLASMA_BENCH_MPI_COMMON_STORE_LAUNCHER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench-mpi/common/child_process.h"

namespace rplasma::bench {

struct StoreLaunchOptions {
  std::string binary;               // "" = <ExecutableDir()>/rplasma-store
  uint64_t memory_bytes = 1u << 30;  // --memory: the arena size
  std::vector<std::string> extra_args;
  absl::Duration start_timeout = absl::Seconds(20);  // pre-faulting a large arena takes a while

  absl::Status Validate() const;
};

class LaunchedStore {
 public:
  // kUnavailable (with the store's log) if it exits or never listens.
  static absl::StatusOr<std::unique_ptr<LaunchedStore>> Start(const StoreLaunchOptions& options);
  ~LaunchedStore() = default;

  const std::string& socket_path() const { return socket_path_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return process_.pid(); }
  bool Running() { return process_.Running(); }

 private:
  LaunchedStore() = default;

  ScratchDir dir_;
  std::string socket_path_;
  std::string log_path_;
  ChildProcess process_;
};

// The pid of the process listening on Unix socket `path` (SO_PEERCRED of a short connection), so
// an attached store can be measured too.
absl::StatusOr<pid_t> UnixSocketPeerPid(const std::string& path);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_STORE_LAUNCHER_H_
