// NetnsPairTest: a fixture of two nodes whose managers run in their own network namespaces, joined
// by a veth pair, for tests that change the link between them (netns_fault_test: partitions and
// loss; netns_link_change_test: a slower link).
//
// Topology (N = this test's pid % 256; one private /24, split into /30 links):
//   nsA  10.213.N.1 ─── veth (peer traffic) ─── 10.213.N.2  nsB
//   nsA  10.213.N.6 ─── veth ─── 10.213.N.5  root ns: redis-server (also on 127.0.0.1)
//   nsB 10.213.N.10 ─── veth ─── 10.213.N.9  root ns
// Rules that match only the peer link's addresses leave the directory reachable. The stores run in
// the root namespace: they speak only Unix sockets, which every namespace shares (so does the test,
// with the stores and the managers' client sockets).
//
// SetUp builds the namespaces, links, Redis and the secret (skipping without root, iproute2,
// nftables or redis-server); a test then starts its nodes with StartNode (a TestNode each, of
// manager_test_cluster.h: the store in the root namespace, the manager inside its own). TearDown kills the
// managers and fails the test if a manager's log holds a sanitizer report.
#ifndef RPLASMA_TESTS_INTEGRATION_NETNS_PAIR_H_
#define RPLASMA_TESTS_INTEGRATION_NETNS_PAIR_H_

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/unique_fd.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/network_namespace.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {

class NetnsPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    const std::string unavailable = NetworkNamespaceUnavailableReason();
    if (!unavailable.empty()) {
      RPLASMA_SKIP_TEST("netns", "this test needs root, iproute2 and nftables: " + unavailable);
    }
    const int pid = static_cast<int>(::getpid());
    net_ = absl::StrCat("10.213.", pid % 256, ".");
    ASSERT_OK_AND_ASSIGN(ns_a_, NetworkNamespace::Create(absl::StrCat("rplasma-a-", pid)));
    ASSERT_OK_AND_ASSIGN(ns_b_, NetworkNamespace::Create(absl::StrCat("rplasma-b-", pid)));
    ASSERT_OK_AND_ASSIGN(peer_link_, VethPair::Create(absl::StrCat("rp", pid, "p"), ns_a_.get(), net_ + "1/30",
                                                      ns_b_.get(), net_ + "2/30"));
    ASSERT_OK_AND_ASSIGN(
        link_a_, VethPair::Create(absl::StrCat("rp", pid, "x"), nullptr, net_ + "5/30", ns_a_.get(), net_ + "6/30"));
    ASSERT_OK_AND_ASSIGN(
        link_b_, VethPair::Create(absl::StrCat("rp", pid, "y"), nullptr, net_ + "9/30", ns_b_.get(), net_ + "10/30"));
    bench::RedisServerOptions redis_options;
    redis_options.extra_args = {"--bind", "127.0.0.1", net_ + "5", net_ + "9"};
    ASSERT_OK_AND_ASSIGN(redis_, bench::RedisServer::Start(redis_options));
    secret_file_ = temp_.Join("secret");
    // Private (0600) and >= 16 bytes, as the managers require.
    UniqueFd fd(::open(secret_file_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd) << ErrnoError("open", secret_file_, errno);
    const std::string secret = "netns-pair-test-secret\n";
    ASSERT_OK(WriteAll(fd.get(), secret.data(), secret.size()));
  }

  void TearDown() override {
    for (TestNode* node : {&a_, &b_}) {
      if (node->manager) node->manager->Kill();
      const std::string log = bench::ReadWholeFile(node->manager_log);
      for (const char* marker : {"WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:"}) {
        if (log.find(marker) != std::string::npos) ADD_FAILURE() << node->name << "'s manager log:\n" << log;
      }
    }
  }

  // The owner's address on the peer link (node A's), and the requester's (node B's).
  std::string OwnerAddress() const { return net_ + "1"; }
  std::string RequesterAddress() const { return net_ + "2"; }

  // Starts node A (`a`: true; namespace A) or B: its store, and its manager inside the namespace
  // with `pin_threshold` and `extra` arguments.
  absl::Status StartNode(bool a, const std::string& name, const std::string& pin_threshold,
                         const std::vector<std::string>& extra) {
    TestNode& node = a ? a_ : b_;
    const NetworkNamespace& ns = a ? *ns_a_ : *ns_b_;
    node.name = name;
    StoreProcessOptions store_options;
    store_options.memory = 128u << 20;
    ASSIGN_OR_RETURN(node.store, StoreProcess::Start(store_options));
    node.client_socket = temp_.Join(node.name + ".manager.sock");
    node.manager_log = temp_.Join(node.name + ".manager.log");
    bench::ManagerLaunchOptions launch;
    launch.binary = std::string(RPLASMA_BIN_DIR) + "/rplasma-manager";
    launch.command_prefix = ns.Exec({});
    launch.store_socket = node.store->socket_path();
    launch.redis = absl::StrCat(a ? net_ + "5" : net_ + "9", ":", redis_->port());
    launch.secret_file = secret_file_;
    launch.listen_host = a ? OwnerAddress() : RequesterAddress();
    launch.node_name = node.name;
    launch.transport = "";
    launch.pin_threshold = pin_threshold;
    launch.extra_args = extra;
    launch.client_socket = node.client_socket;
    launch.log_path = node.manager_log;
    launch.probe_client_socket = false;  // a probe from the root namespace; the ready line suffices
    launch.start_timeout = absl::Seconds(15);
    launch.stop_grace = absl::ZeroDuration();
    absl::StatusOr<std::unique_ptr<bench::LaunchedManager>> manager = bench::LaunchedManager::Start(launch);
    if (!manager.ok()) {
      return MakeError(ErrorCode::kUnavailable, absl::StrCat("manager ", node.name, " did not start in ", ns.name(),
                                                             ": ", manager.status().message()));
    }
    node.manager = std::move(*manager);
    ClientOptions client_options;
    client_options.store_socket = node.store->socket_path();
    client_options.manager_socket = node.client_socket;
    client_options.client_name = "test " + node.name;
    ASSIGN_OR_RETURN(node.client, Client::Connect(client_options));
    return absl::OkStatus();
  }

  // Declared in acquisition order: the namespaces go last, with whatever is inside them.
  bench::ScratchDir temp_ = bench::ScratchDir::CreateOrDie();
  std::string net_;
  std::unique_ptr<NetworkNamespace> ns_a_;
  std::unique_ptr<NetworkNamespace> ns_b_;
  std::unique_ptr<VethPair> peer_link_;
  std::unique_ptr<VethPair> link_a_;
  std::unique_ptr<VethPair> link_b_;
  std::unique_ptr<bench::RedisServer> redis_;
  std::string secret_file_;
  TestNode a_;
  TestNode b_;
};

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_INTEGRATION_NETNS_PAIR_H_
