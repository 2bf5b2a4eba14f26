// LaunchedManager: an rplasma-manager that a benchmark starts for itself, next to a store it
// also started (store_process.h).
//
// Start() spawns (ChildProcess) `rplasma-manager --store_socket S --redis HOST:PORT --listen 127.0.0.1:0
// --client_socket <dir>/manager.sock --secret_file F --transport T --pin_threshold N
// --node_name NAME` (absl flag spelling) from the bench's bin directory, and returns once it printed its ready line and
// its client socket accepts connections. Destruction stops it. Not thread-safe.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_MANAGER_LAUNCHER_H_
#define RPLASMA_BENCH_MPI_LAUNCH_MANAGER_LAUNCHER_H_

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

struct ManagerLaunchOptions {
  std::string binary;        // "" = <ExecutableDir()>/rplasma-manager
  std::string store_socket;  // required
  std::string redis;         // required: HOST:PORT
  std::string secret_file;   // required
  std::string node_name = "bench";
  std::string transport = "tcp";
  std::string pin_threshold = "65536";
  std::string listen_host = "127.0.0.1";  // the peer listener binds listen_host:0 (verbs: the RDMA netdev's IP)
  std::vector<std::string> extra_args;
  absl::Duration start_timeout = absl::Seconds(20);

  absl::Status Validate() const;
};

class LaunchedManager {
 public:
  // kUnavailable (with the manager's log) if it exits or never becomes ready.
  static absl::StatusOr<std::unique_ptr<LaunchedManager>> Start(const ManagerLaunchOptions& options);
  ~LaunchedManager() = default;

  const std::string& client_socket() const { return client_socket_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return process_.pid(); }

 private:
  LaunchedManager() = default;

  ScratchDir dir_;
  std::string client_socket_;
  std::string log_path_;
  ChildProcess process_;
};

// Writes a random shared secret (hex) into a new 0600 file `path`.
absl::Status WriteRandomSecret(const std::string& path);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_MANAGER_LAUNCHER_H_
