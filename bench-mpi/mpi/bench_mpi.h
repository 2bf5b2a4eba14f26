// BenchMpi: one rplasma-bench-mpi run on one rank. Setup (collective): rank 0 picks the run's
// nonce, starts redis-server (--start-redis) and writes the shared secret, and broadcasts all
// three; every rank starts its node (a store, a manager with --auto-threshold, and clients) and
// connects its clients. The sweep's get and pin lanes force their protocol per fetch
// (Client::Fetch's ForcedProtocol), the auto lane leaves it to the manager, so the protocols are
// measured interleaved, round by round, in the same processes: two nodes that ran the very same
// protocol differed by up to 12% for a whole run (the VM's memory and scheduling), more than
// auto's 5% margin. The tuner does the same, restarting that manager with the file it wrote for
// its check. --node_per_protocol runs one node per protocol instead (its own store, and a manager
// whose --pin-threshold forces that protocol). Then either the measurement sweep (patterns x
// concurrency x sizes, the protocols interleaved at each point, and the TCP stream peer) or the
// tuner (tuner.h). Rank 0 prints, writes the CSV and plots.
//
// Node names: the shared node and the `auto` node are --node_name (rank0, ...: the name a tuned
// file's peer lines use); the `get` and `pin` nodes are <name>-get and <name>-pin. With --attach
// there is one node (the running one), shared.
//
// Thread-safety: main thread only.
#ifndef RPLASMA_BENCH_MPI_MPI_BENCH_MPI_H_
#define RPLASMA_BENCH_MPI_MPI_BENCH_MPI_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/redis_server.h"
#include "bench-mpi/mpi/bench_mpi_options.h"
#include "bench-mpi/mpi/mpi_world.h"
#include "bench-mpi/mpi/rank_node.h"
#include "bench-mpi/mpi/result_table.h"
#include "client/client.h"

namespace rplasma::bench {

class BenchMpi {
 public:
  BenchMpi(const MpiWorld& world, BenchMpiOptions options) : world_(world), options_(std::move(options)) {}

  // Collective. The error (the same on every rank) says which rank failed and why.
  absl::Status Run();

  // For the tuner: the pieces of a run it drives.
  const MpiWorld& world() const { return world_; }
  const BenchMpiOptions& options() const { return options_; }
  // The node (and its clients) that runs `protocol` (the shared one, when shared). REQUIRES:
  // HasNode(protocol).
  bool HasNode(FetchProtocol protocol) const;
  RankNode& node(FetchProtocol protocol);
  const std::vector<std::unique_ptr<Client>>& clients(FetchProtocol protocol) const;
  // This rank's --node_name (the `auto` node's name; the key of a tuned file's peer lines).
  const std::string& node_name() const { return node_name_; }
  const std::string& nonce() const { return nonce_; }
  // What a lane of `protocol` forces on its fetches: get and pin on a shared node; nothing where
  // the node's own threshold decides (its own node, or auto).
  ForcedProtocol ForcedFor(FetchProtocol protocol) const;
  // Every protocol runs on one node (not --node_per_protocol).
  bool shared_node() const { return shared_node_; }
  // Restarts every rank's manager of the `protocol` node with `threshold` (collective).
  absl::Status StartManagers(FetchProtocol protocol, const std::string& threshold);
  // The --pin-threshold value for a protocol.
  std::string ThresholdFor(FetchProtocol protocol) const;
  std::string transport_label() const { return transport_label_; }
  // Rank 0 writes the CSV, prints the table and plots.
  absl::Status Report(const std::vector<ResultRow>& rows);

 private:
  // A node: its store and manager, and the clients that fetch through it; for `protocol`, or for
  // every protocol when shared_node_.
  struct ProtocolNode {
    FetchProtocol protocol;
    std::unique_ptr<RankNode> node;
    std::vector<std::unique_ptr<Client>> clients;
  };

  absl::Status Setup();
  absl::Status StartNodes(const std::vector<FetchProtocol>& protocols);
  absl::Status Sweep(std::vector<ResultRow>* rows);
  // One (pattern, concurrency, size) point: every protocol that can move `size`, interleaved.
  absl::Status SweepPoint(FetchPattern pattern, int concurrency, uint64_t size, std::vector<ResultRow>* rows);
  uint64_t StoreMemory() const;
  const ProtocolNode* Find(FetchProtocol protocol) const;

  const MpiWorld& world_;
  BenchMpiOptions options_;
  std::string nonce_;
  std::string transport_label_;
  std::unique_ptr<RedisServer> redis_;  // rank 0 with --start-redis
  ScratchDir scratch_;
  std::string node_name_;
  std::vector<ProtocolNode> nodes_;
  bool shared_node_ = false;  // nodes_ is one node (kAuto's) that runs every protocol
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_BENCH_MPI_H_
