// LaunchedManager: a real rplasma-manager that a benchmark or a test starts for itself, next to a
// store it also started (store_process.h) — the one manager launcher of benchmarks and tests.
//
// Start() spawns (ChildProcess) `[command_prefix...] rplasma-manager --store_socket=S --redis=HOST:PORT
// --secret_file=F --client_socket=C [--listen=HOST:0] [--transport=T] [--pin_threshold=N]
// [--node_name=NAME] [extra_args...]` and returns once the manager printed its ready line (after
// its client socket listens) — and, with probe_client_socket, once that socket accepts a
// connection. The client socket and the log are in a private ScratchDir unless the caller names
// them; the log is appended to, so a manager restarted on the same log reads only its own lines.
// Destruction ends a manager still running (SIGTERM and stop_grace, or SIGKILL at once). Not
// thread-safe.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_MANAGER_LAUNCHER_H_
#define RPLASMA_BENCH_MPI_LAUNCH_MANAGER_LAUNCHER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
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
  // Each of the next four is passed only when not "".
  std::string node_name = "bench";
  std::string transport = "tcp";
  std::string pin_threshold = "65536";
  std::string listen_host = "127.0.0.1";  // the peer listener binds listen_host:0 (verbs: the RDMA netdev's IP)
  std::vector<std::string> extra_args;    // appended to the command line
  // Run before the binary, e.g. {"ip", "netns", "exec", NAME} (tests/support/network_namespace.h).
  std::vector<std::string> command_prefix;
  // "" = <private dir>/manager.sock and <private dir>/manager.log.
  std::string client_socket;
  std::string log_path;
  // Ready also means that a connection to the client socket succeeded (one short connection).
  bool probe_client_socket = true;
  absl::Duration start_timeout = absl::Seconds(20);
  // How destruction ends a manager that still runs: SIGTERM, up to this long to exit, then
  // SIGKILL; zero = SIGKILL at once, like a crash.
  absl::Duration stop_grace = absl::Seconds(3);

  absl::Status Validate() const;
};

class LaunchedManager {
 public:
  // kUnavailable (with the manager's log) if it exits or never becomes ready.
  static absl::StatusOr<std::unique_ptr<LaunchedManager>> Start(const ManagerLaunchOptions& options);
  ~LaunchedManager() = default;
  LaunchedManager(const LaunchedManager&) = delete;
  LaunchedManager& operator=(const LaunchedManager&) = delete;

  const std::string& client_socket() const { return client_socket_; }
  const std::string& log_path() const { return log_path_; }
  // From the ready line: the node id the manager registered, its peer listener ("HOST:PORT").
  const std::string& node_id() const { return node_id_; }
  const std::string& listen_address() const { return listen_address_; }

  // The process (ChildProcess's contract): -1 once reaped.
  pid_t pid() const { return process_.pid(); }
  bool running() { return process_.running(); }
  void Signal(int signal) { process_.Signal(signal); }
  std::optional<int> Wait(absl::Duration timeout = absl::InfiniteDuration()) { return process_.Wait(timeout); }
  void Kill() { process_.Kill(); }
  std::optional<int> Stop(absl::Duration grace = absl::Seconds(3)) { return process_.Stop(grace); }

 private:
  LaunchedManager() = default;

  ScratchDir dir_;  // empty when the caller named both the client socket and the log
  std::string client_socket_;
  std::string log_path_;
  std::string node_id_;
  std::string listen_address_;
  ChildProcess process_;
};

// The command line Start() runs for `options` (binary resolved, `client_socket` filled in), for a
// caller that runs a manager expected to fail.
absl::StatusOr<std::vector<std::string>> ManagerCommandLine(const ManagerLaunchOptions& options,
                                                            const std::string& client_socket);

// Writes a random shared secret (hex) into a new 0600 file `path`.
absl::Status WriteRandomSecret(const std::string& path);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_MANAGER_LAUNCHER_H_
