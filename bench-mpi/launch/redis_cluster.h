// RedisCluster: a private, throw-away Redis Cluster on loopback, for tests of the directory in
// cluster mode — `masters` masters with `replicas_per_master` replicas each, every node a
// RedisServer (redis_server.h: free port, no persistence, scratch directory) started with cluster
// support and an explicit free cluster-bus port.
//
// Start() assigns the slots in equal ranges to the masters (node i, i < masters, serves range i),
// introduces the nodes (CLUSTER MEET), makes node masters + r * masters + i a replica of master i,
// and returns once every node reports cluster_state:ok, knows every node, and each replica's link
// to its master is up: about a second. Kill(i) SIGKILLs one node (its replica takes over after
// node_timeout and an election, a few seconds). require-full-coverage is off: a slot left without
// a master fails on its own, the rest of the cluster keeps serving.
//
// Thread-safety: not thread-safe; use from the thread that started it.
#ifndef RPLASMA_BENCH_MPI_LAUNCH_REDIS_CLUSTER_H_
#define RPLASMA_BENCH_MPI_LAUNCH_REDIS_CLUSTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "bench-mpi/launch/redis_server.h"

namespace rplasma::bench {

struct RedisClusterOptions {
  int masters = 3;              // 1..16
  int replicas_per_master = 1;  // 0..4
  // cluster-node-timeout: how long a node may not answer before it is suspected failed.
  absl::Duration node_timeout = absl::Milliseconds(1000);
  // Bound on Start() once the servers run (cluster formed, replicas linked).
  absl::Duration form_timeout = absl::Seconds(20);
  // Each node's server options; the cluster's own arguments are appended to extra_args.
  RedisServerOptions server;

  absl::Status Validate() const;
};

class RedisCluster {
 public:
  // kUnavailable if redis-server is missing or the cluster does not form in time (the message
  // says which step and which node).
  static absl::StatusOr<std::unique_ptr<RedisCluster>> Start(const RedisClusterOptions& options = {});

  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  RedisServer& node(int i) { return *nodes_[static_cast<size_t>(i)]; }
  // The node's cluster id (CLUSTER MYID).
  const std::string& node_id(int i) const { return ids_[static_cast<size_t>(i)]; }
  // Every node's address, comma-separated: a seed list.
  std::string seeds() const;

  // SIGKILL + reap of node i.
  void Kill(int i) { node(i).Kill(); }
  // The node serving `slot` as the running node `asked` sees it (CLUSTER NODES), or -1.
  absl::StatusOr<int> MasterOf(int slot, int asked);
  // Waits until each running replica has applied everything its master wrote (equal replication
  // offsets): what a replica promoted after that holds.
  absl::Status WaitForReplicasInSync(absl::Duration timeout);
  // Waits until every running node reports cluster_state:ok and sees `slot` served by a running
  // node (after a failover or a slot reassignment).
  absl::Status WaitForSlotServed(int slot, absl::Duration timeout);
  // One command to node i (RedisServer::Command).
  absl::StatusOr<std::string> Command(int i, const std::vector<std::string>& args) { return node(i).Command(args); }

 private:
  explicit RedisCluster(RedisClusterOptions options) : options_(std::move(options)) {}
  absl::Status Form();
  // Waits until `done()` holds or the form_timeout passes; kUnavailable naming `what` then.
  absl::Status WaitUntil(const std::string& what, const std::function<absl::StatusOr<bool>()>& done,
                         absl::Duration timeout);

  RedisClusterOptions options_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::vector<int> bus_ports_;
  std::vector<std::string> ids_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_LAUNCH_REDIS_CLUSTER_H_
