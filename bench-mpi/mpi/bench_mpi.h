// BenchMpi: one rplasma-bench-mpi run on one rank. Setup (collective): rank 0 picks the run's
// nonce, starts redis-server (--start-redis) and writes the shared secret, and broadcasts all
// three; every rank starts its node (store, then a manager per protocol) and connects its
// clients. Then either the measurement sweep (patterns x sizes x protocols x concurrency, and the
// TCP stream peer) or the tuner (tuner.h). Rank 0 prints, writes the CSV and plots.
//
// Thread-safety: main thread only.
#ifndef RPLASMA_BENCH_MPI_MPI_BENCH_MPI_H_
#define RPLASMA_BENCH_MPI_MPI_BENCH_MPI_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench-mpi/common/bench_redis_server.h"
#include "bench-mpi/common/child_process.h"
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
  RankNode& node() { return *node_; }
  const std::vector<std::unique_ptr<Client>>& clients() const { return clients_; }
  const std::string& nonce() const { return nonce_; }
  // Restarts every rank's manager with `threshold` (collective).
  absl::Status StartManagers(const std::string& threshold);
  // The --rdma-threshold value for a protocol.
  std::string ThresholdFor(FetchProtocol protocol) const;
  std::string transport_label() const { return transport_label_; }
  // Rank 0 writes the CSV, prints the table and plots.
  absl::Status Report(const std::vector<ResultRow>& rows);

 private:
  absl::Status Setup();
  absl::Status Sweep(std::vector<ResultRow>* rows);
  uint64_t StoreMemory() const;

  const MpiWorld& world_;
  BenchMpiOptions options_;
  std::string nonce_;
  std::string transport_label_;
  std::unique_ptr<BenchRedisServer> redis_;  // rank 0 with --start-redis
  ScratchDir scratch_;
  std::unique_ptr<RankNode> node_;
  std::vector<std::unique_ptr<Client>> clients_;
};

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_BENCH_MPI_H_
