// ChaosCluster: the processes of the chaos test (tests/chaos/chaos_test.cc) — one redis-server and,
// per node, a real rplasma-store, a real rplasma-manager (tcp on loopback) and chaos_worker
// clients — at fixed paths in one directory, so that any of them can be SIGKILLed and started
// again in its old place: a store restarts on the same socket (its manager must find it again), a
// manager on the same client socket, Redis on the same port (empty: managers must republish).
//
// Every process's output goes to <dir>/<name>.log, appended across restarts; ScanLogs() reads
// them all for sanitizer reports, failed CHECKs and the workers' MISMATCH / STUCK lines.
// Not thread-safe: the test's main thread drives it.
#ifndef RPLASMA_TESTS_CHAOS_CHAOS_CLUSTER_H_
#define RPLASMA_TESTS_CHAOS_CHAOS_CLUSTER_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "bench-mpi/launch/redis_server.h"
#include "client/client.h"
#include "tests/support/skip.h"
#include "tests/support/wait_for.h"

namespace rplasma::chaos {

struct ChaosClusterOptions {
  int nodes = 3;
  int workers_per_node = 2;
  uint64_t store_memory = 64u << 20;
  uint64_t seed = 1;  // the workers' seeds derive from it
};

class ChaosCluster {
 public:
  // Starts Redis and every node's store and manager (not the workers).
  static absl::StatusOr<std::unique_ptr<ChaosCluster>> Start(const ChaosClusterOptions& options);
  ~ChaosCluster();

  int nodes() const { return options_.nodes; }
  int worker_slots() const { return options_.nodes * options_.workers_per_node; }

  absl::Status StartStore(int node);
  void KillStore(int node);
  bool StoreRunning(int node);
  absl::Status StartManager(int node);
  void KillManager(int node);
  bool ManagerRunning(int node);
  // SIGTERM; the exit's wait status (nullopt if it had to be SIGKILLed).
  std::optional<int> StopStore(int node);
  std::optional<int> StopManager(int node);

  // Worker slot `slot` runs on node slot / workers_per_node; each start is a new incarnation.
  absl::Status StartWorker(int slot);
  void KillWorker(int slot);
  bool WorkerRunning(int slot);
  // SIGTERM to every worker; true if all exited with status 0 within `grace`.
  bool StopWorkers(absl::Duration grace);

  // Kills Redis and starts an empty one on the same port.
  absl::Status RestartRedis();

  // A client of `node`'s store (with its manager, remote gets on).
  absl::StatusOr<std::unique_ptr<Client>> Connect(int node);
  const std::string& store_socket(int node) const { return nodes_[node].store_socket; }
  const std::string& manager_socket(int node) const { return nodes_[node].manager_socket; }
  // Open fds of the node's store / manager process (-1 if not running).
  int StoreFds(int node);
  int ManagerFds(int node);
  // What the store's and the manager's fds are, to say what a leak is.
  std::string DescribeFds(int node);
  // The manager's stats JSON (over its client socket).
  absl::StatusOr<std::string> ManagerStats(int node);

  // The sum over every worker incarnation's stats file of each counter.
  std::map<std::string, uint64_t> WorkerTotals() const;
  // Every line of every log that reports a sanitizer finding, a failed CHECK, a MISMATCH or a STUCK.
  std::vector<std::string> ScanLogs() const;
  // The last lines of a process's log: `name` is "n0.store", "n0.manager" or "n0-w1".
  std::string LogTail(const std::string& name) const;

 private:
  struct Node {
    std::string name;
    std::string store_socket, manager_socket, store_log, manager_log;
    std::optional<bench::ChildProcess> store;
    std::unique_ptr<bench::LaunchedManager> manager;  // SIGKILLed when destroyed
  };
  struct WorkerSlot {
    std::string name;  // "n<node>-w<k>"
    int incarnation = 0;
    std::optional<bench::ChildProcess> process;
  };

  explicit ChaosCluster(const ChaosClusterOptions& options) : options_(options) {}
  // Open fds of `process` (a ChildProcess or a LaunchedManager), -1 unless it runs.
  template <typename Process>
  static int CountFds(Process& process);

  ChaosClusterOptions options_;
  bench::ScratchDir temp_ = bench::ScratchDir::CreateOrDie();
  std::unique_ptr<bench::RedisServer> redis_;
  std::string secret_file_;
  std::vector<Node> nodes_;
  std::vector<WorkerSlot> workers_;
};

}  // namespace rplasma::chaos

#endif  // RPLASMA_TESTS_CHAOS_CHAOS_CLUSTER_H_
