// ManagerTestCluster: real processes for manager integration tests — one redis-server (or a Redis
// Cluster: StartWithRedisCluster), and per
// node a real rplasma-store plus a real rplasma-manager (tcp on loopback) with a client socket.
// Helpers speak the manager's client protocol directly (FetchVia/StatsVia) and build
// deterministic object contents that can be checked byte by byte.
//
// Thread-safety: not thread-safe; use from the test's main thread (FetchVia may run on others).
#ifndef RPLASMA_TESTS_INTEGRATION_MANAGER_TEST_CLUSTER_H_
#define RPLASMA_TESTS_INTEGRATION_MANAGER_TEST_CLUSTER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "bench-mpi/launch/redis_cluster.h"
#include "bench-mpi/launch/redis_server.h"
#include "client/client.h"
#include "nlohmann/json.hpp"
#include "protocol/manager_messages.h"
#include "tests/support/skip.h"
#include "tests/support/store_process.h"
#include "tests/support/test_bytes.h"
#include "tests/support/wait_for.h"

namespace rplasma::testing {

inline constexpr uint64_t kKiB = 1u << 10;
inline constexpr uint64_t kMiB = 1u << 20;

struct TestNodeOptions {
  std::string name = "node";
  uint64_t store_memory = 256u << 20;
  std::string threshold = "65536";
  std::vector<std::string> extra_manager_args;
  std::vector<std::string> extra_store_args;  // e.g. --metrics-port=P
  // The manager binary; "" = RPLASMA_BIN_DIR/rplasma-manager. A test-only manager takes the same flags.
  std::string manager_binary;
  std::string secret = "cluster-secret-of-the-tests";  // >= auth::kMinSecretBytes
};

struct TestNode {
  std::string name;
  std::unique_ptr<StoreProcess> store;
  std::unique_ptr<bench::LaunchedManager> manager;  // SIGKILLed when destroyed
  std::string client_socket;
  std::string manager_log;
  std::string node_id;
  std::string listen_address;      // the peer listener ("127.0.0.1:PORT")
  std::unique_ptr<Client> client;  // connected to the store (manager_socket set)
};

class ManagerTestCluster {
 public:
  // Starts redis-server (kUnavailable if missing: callers skip first).
  static absl::StatusOr<std::unique_ptr<ManagerTestCluster>> Start();
  // The same with a Redis Cluster (bench::RedisCluster defaults: 3 masters, 3 replicas) as the
  // directory; managers get every node as a seed.
  static absl::StatusOr<std::unique_ptr<ManagerTestCluster>> StartWithRedisCluster();
  // Stops each running manager with SIGTERM and fails the test unless it exits 0 (so LeakSanitizer
  // checks it under ASan), then fails it if a manager's log holds a sanitizer report.
  ~ManagerTestCluster();

  // Starts a store and a manager; waits until the manager's client socket answers.
  absl::StatusOr<TestNode*> AddNode(const TestNodeOptions& options);
  // Restarts the manager of `node` (same store, same flags).
  absl::Status RestartManager(TestNode* node);
  // Restarts the manager of `node` (same store) with `options`' manager binary and flags, kept for
  // later restarts; options.store_memory and options.name are ignored.
  absl::Status RestartManager(TestNode* node, const TestNodeOptions& options);
  absl::Status StartManager(TestNode* node);

  // Waits until the directory lists every id in `ids` on `node` (its publisher has announced
  // them): a fetch started before that would wait for the announcement. kDeadlineExceeded naming
  // the first id still missing after `timeout`.
  absl::Status WaitPublished(const TestNode& node, const std::vector<ObjectID>& ids,
                             absl::Duration timeout = absl::Seconds(10));

  // REQUIRES: started by Start() (one redis-server).
  bench::RedisServer& redis() { return *redis_; }
  // REQUIRES: started by StartWithRedisCluster().
  bench::RedisCluster& redis_cluster() { return *redis_cluster_; }
  // What managers are given as --redis: the server's address, or the cluster's seeds.
  std::string redis_address() const { return redis_ != nullptr ? redis_->address() : redis_cluster_->seeds(); }
  const std::string& dir() const { return temp_.path(); }

 private:
  ManagerTestCluster() = default;
  bench::ScratchDir temp_ = bench::ScratchDir::CreateOrDie();
  std::unique_ptr<bench::RedisServer> redis_;
  std::unique_ptr<bench::RedisCluster> redis_cluster_;
  std::vector<std::unique_ptr<TestNode>> nodes_;
  std::vector<TestNodeOptions> node_options_;
};

// Fetch through the manager's client socket: one status per id. `hint`: the request's hint_node.
absl::StatusOr<std::vector<absl::Status>> FetchVia(const std::string& client_socket, const std::vector<ObjectID>& ids,
                                                   absl::Duration timeout, const std::string& hint = "");
// The manager's stats JSON.
absl::StatusOr<std::string> StatsVia(const std::string& client_socket);
// The manager's stats JSON, parsed (kInternal if it is not JSON): stats.at("peer_service").at("gets").
absl::StatusOr<nlohmann::json> ParsedStatsVia(const std::string& client_socket);
// The integer of the first member named `key` in `json` (document order, at any depth), or -1 (also
// when `json` does not parse). Prefer ParsedStatsVia and a path, which says which member is meant.
int64_t JsonInt(const std::string& json, const std::string& key);

// Leak audits. Waits up to `within` until `client`'s store holds no unsealed object and no
// reference; kDeadlineExceeded saying what is left otherwise.
absl::Status WaitStoreReleasedEverything(Client& client, absl::Duration within);
// Waits up to `within` until the manager at `client_socket` holds no lease for a peer.
absl::Status WaitNoLeases(const std::string& client_socket, absl::Duration within);

// Creates `id` in `client`'s store with TestBytes(seed, size) and `metadata`, sealed.
absl::Status PutTestObject(Client& client, const ObjectID& id, uint64_t seed, uint64_t size,
                           const std::string& metadata = "");
// Gets `id` from `client`'s store and compares every byte with TestBytes(seed, size) + metadata.
absl::Status CheckTestObject(Client& client, const ObjectID& id, uint64_t seed, uint64_t size,
                             const std::string& metadata = "");

// The outcome of one batch fetch: `result[k]` for `asked[k]`. Expects (gtest) DeadlineExceeded for
// the ids in `absent` (never put anywhere) and OK for every other.
void ExpectOnlyAbsentFailed(const std::vector<ObjectID>& asked, const std::vector<absl::Status>& result,
                            const std::vector<ObjectID>& absent);
// The outcome of a batch fetch cut short (its owner killed): `result[i]` for ids[i], put with
// PutTestObject(seed i, sizes[i]). Expects (gtest) every id that succeeded intact in `client`'s
// store, every one that failed absent, and the store to list only sealed objects. Returns how
// many succeeded.
int ExpectSealedIntactAndFailedAbsent(Client& client, const std::vector<ObjectID>& ids,
                                      const std::vector<uint64_t>& sizes, const std::vector<absl::Status>& result);

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_MANAGER_TEST_CLUSTER_H_
