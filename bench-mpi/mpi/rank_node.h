// RankNode: the rplasma node one MPI rank stands for — its rplasma-store and rplasma-manager.
//
// Start() spawns a private store (StoreProcess); StartManager() (re)starts the manager with
// a given --pin-threshold, so one run can measure each protocol on fresh managers, and returns
// once the manager printed its ready line (node id, listen address). Attach() uses a store and a
// manager that are already running (no restarts). The rank process itself only ever is a client:
// it never registers memory, and ChildProcess (vfork + execve) copies no mappings anyway. Its
// children die with it (PR_SET_PDEATHSIG).
//
// Destruction stops the manager, then the store. Not thread-safe: main thread only.
#ifndef RPLASMA_BENCH_MPI_MPI_RANK_NODE_H_
#define RPLASMA_BENCH_MPI_MPI_RANK_NODE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "bench-mpi/launch/store_process.h"
#include "nlohmann/json.hpp"

namespace rplasma::bench {

struct RankNodeOptions {
  std::string bin_dir;  // holds rplasma-store and rplasma-manager
  uint64_t store_memory = 1u << 30;
  std::string node_name;  // manager --node_name (e.g. "rank3")
  std::string redis;      // HOST:PORT
  std::string secret_file;
  std::string transport = "tcp";
  std::string listen_host = "127.0.0.1";
  std::string rdma_device;
};

class RankNode {
 public:
  static absl::StatusOr<std::unique_ptr<RankNode>> Start(const RankNodeOptions& options);
  static absl::StatusOr<std::unique_ptr<RankNode>> Attach(const std::string& store_socket,
                                                          const std::string& manager_socket);
  ~RankNode();

  // Stops the running manager (if this node started it) and starts one with --pin-threshold
  // `threshold`. kUnavailable with the manager's log if it does not come up.
  absl::Status StartManager(const std::string& threshold);

  const std::string& store_socket() const { return store_socket_; }
  const std::string& manager_socket() const { return manager_socket_; }
  // The running manager's node id ("" when attached and not yet asked).
  const std::string& node_id() const { return node_id_; }
  const std::string& manager_log() const { return manager_log_; }
  // The manager's --node_name ("" when attached): the key of the tuner's per-peer lines.
  const std::string& node_name() const { return options_.node_name; }

 private:
  RankNode() = default;

  RankNodeOptions options_;
  std::unique_ptr<StoreProcess> store_;
  ScratchDir dir_;
  std::unique_ptr<LaunchedManager> manager_;  // stopped (SIGTERM, 3 s) when replaced or destroyed
  int manager_starts_ = 0;
  std::string store_socket_;
  std::string manager_socket_;
  std::string manager_log_;
  std::string node_id_;
};

// The manager's StatsReply JSON, asked on its --client-socket, parsed (kProtocolError if it is not
// JSON).
absl::StatusOr<nlohmann::json> QueryManagerStats(const std::string& manager_socket);

// Top-level member `key` of `doc` as text: a string's value, any other value as JSON; "" if absent.
std::string MemberText(const nlohmann::json& doc, const std::string& key);
// Top-level member `key` of `doc` as a number; 0 if absent or not a number.
double MemberNumber(const nlohmann::json& doc, const std::string& key);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_MPI_RANK_NODE_H_
