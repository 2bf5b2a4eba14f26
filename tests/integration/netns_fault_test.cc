// Real network faults between two nodes over TCP: each node's manager runs inside its own network
// namespace (`ip netns exec`), the two joined by a veth pair; nftables rules inside the requester's
// namespace drop the owner's packets — all of them (a full partition) or a random 20%
// (`numgen random mod 100 < 20`). Fetches end by their deadline with intact data or an error,
// succeed again once the rules are gone, and nothing leaks (leases, store references, fds).
//
// Topology (N = this test's pid % 256; one private /24, split into /30 links):
//   nsA  10.213.N.1 ─── veth (peer traffic) ─── 10.213.N.2  nsB
//   nsA  10.213.N.6 ─── veth ─── 10.213.N.5  root ns: redis-server (also on 127.0.0.1)
//   nsB 10.213.N.10 ─── veth ─── 10.213.N.9  root ns
// The rules match only the peer link's addresses, so the directory stays reachable. The stores
// run in the root namespace: they speak only Unix sockets, which every namespace shares (so does
// the test, with the stores and the managers' client sockets).
//
// Needs root, iproute2 and nftables; says which is missing and skips.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "bench-mpi/launch/manager_launcher.h"
#include "bench-mpi/launch/process_fds.h"
#include "protocol/base/socket_io.h"
#include "protocol/base/unique_fd.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/network_namespace.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

constexpr uint64_t kThreshold = 64u << 10;
constexpr int kObjects = 16;  // half below the pin threshold (Get), half above (Pin -> Read -> Unpin)
constexpr absl::Duration kLeaseTtl = absl::Seconds(2);
constexpr absl::Duration kFetchTimeout = absl::Seconds(1);
constexpr absl::Duration kSlack = absl::Milliseconds(500);  // the Unix-socket round trip, a loaded host
// After the rules go, TCP's backed-off retransmissions or the channel's dead-peer rule bring the
// link back; fetches must succeed again within this.
constexpr absl::Duration kHealBound = absl::Seconds(30);

uint64_t SizeOf(int i) { return i % 2 == 0 ? 100 + i * 3000 : kThreshold + 1 + i * 100000; }

std::string LogTail(const std::string& path) {
  const std::string log = bench::ReadWholeFile(path);
  return log.size() > 3000 ? log.substr(log.size() - 3000) : log;
}

// One node: a store (root namespace) and a manager inside `ns`.
struct NetnsNode {
  std::string name;
  std::unique_ptr<StoreProcess> store;
  std::unique_ptr<bench::LaunchedManager> manager;  // SIGKILLed when destroyed
  std::string client_socket;
  std::string log;
  std::unique_ptr<Client> client;
};

class NetnsFaultTest : public ::testing::Test {
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
    {
      // Private (0600) and >= 16 bytes, as the managers require.
      UniqueFd fd(::open(secret_file_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
      ASSERT_TRUE(fd) << ErrnoError("open", secret_file_, errno);
      const std::string secret = "netns-fault-test-secret\n";
      ASSERT_OK(WriteAll(fd.get(), secret.data(), secret.size()));
    }
    a_.name = "owner";
    ASSERT_OK(
        StartNode(a_, *ns_a_, net_ + "1", net_ + "5", {absl::StrCat("--lease_ttl=", absl::FormatDuration(kLeaseTtl))}));
    b_.name = "requester";
    ASSERT_OK(StartNode(b_, *ns_b_, net_ + "2", net_ + "9", {}));
    for (int i = 0; i < kObjects; ++i) {
      ids_.push_back(ObjectID::FromLabel(absl::StrCat("netns-fault-", i)));
      ASSERT_OK(PutTestObject(*a_.client, ids_[i], i, SizeOf(i)));
    }
    // Healthy first: every object arrives (a fetch waits for A to publish it), then B forgets it.
    ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> first, FetchVia(b_.client_socket, ids_, absl::Seconds(20)));
    for (int k = 0; k < kObjects; ++k) ASSERT_OK(first[k]) << "object " << k << " over the healthy link";
    for (int k = 0; k < kObjects; ++k) ASSERT_OK(CheckTestObject(*b_.client, ids_[k], k, SizeOf(k)));
    ASSERT_OK(b_.client->Delete(ids_));
    owner_fds_ = ManagerFds(a_);
    requester_fds_ = ManagerFds(b_);
    ASSERT_GT(owner_fds_, 0);
    ASSERT_GT(requester_fds_, 0);
  }

  void TearDown() override {
    for (NetnsNode* node : {&a_, &b_}) {
      if (node->manager) node->manager->Kill();
      const std::string log = bench::ReadWholeFile(node->log);
      for (const char* marker : {"WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:"}) {
        if (log.find(marker) != std::string::npos) ADD_FAILURE() << node->name << "'s manager log:\n" << log;
      }
    }
  }

  // Starts `node`'s store, and its manager inside `ns` listening on `host` with Redis at `redis_host`.
  absl::Status StartNode(NetnsNode& node, const NetworkNamespace& ns, const std::string& host,
                         const std::string& redis_host, const std::vector<std::string>& extra) {
    StoreProcessOptions store_options;
    store_options.memory = 128u << 20;
    ASSIGN_OR_RETURN(node.store, StoreProcess::Start(store_options));
    node.client_socket = temp_.Join(node.name + ".manager.sock");
    node.log = temp_.Join(node.name + ".manager.log");
    bench::ManagerLaunchOptions launch;
    launch.binary = std::string(RPLASMA_BIN_DIR) + "/rplasma-manager";
    launch.command_prefix = ns.Exec({});
    launch.store_socket = node.store->socket_path();
    launch.redis = absl::StrCat(redis_host, ":", redis_->port());
    launch.secret_file = secret_file_;
    launch.listen_host = host;
    launch.node_name = node.name;
    launch.transport = "";
    launch.pin_threshold = absl::StrCat(kThreshold);
    launch.extra_args = extra;
    launch.client_socket = node.client_socket;
    launch.log_path = node.log;
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

  // Fetches ids_[k] for each k in `which` on B with `timeout`: ended by the deadline; fetched =
  // intact (then deleted in B, so the next fetch moves it again); failed = absent. Returns how many
  // were fetched.
  int FetchAndCheck(const std::vector<int>& which, absl::Duration timeout = kFetchTimeout) {
    std::vector<ObjectID> asked;
    for (int k : which) asked.push_back(ids_[k]);
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<absl::Status>> result = FetchVia(b_.client_socket, asked, timeout);
    const absl::Duration took = absl::Now() - start;
    EXPECT_LE(took, timeout + kSlack) << "a fetch of " << asked.size() << " ids ended past its deadline; "
                                      << "the requester's manager log ends:\n"
                                      << LogTail(b_.log);
    EXPECT_OK(result.status()) << "the manager answers every fetch";
    if (!result.ok() || result->size() != asked.size()) return 0;
    int fetched = 0;
    for (size_t j = 0; j < asked.size(); ++j) {
      const int k = which[j];
      if ((*result)[j].ok()) {
        ++fetched;
        EXPECT_OK(CheckTestObject(*b_.client, ids_[k], k, SizeOf(k))) << "object " << k;
        EXPECT_OK(b_.client->Delete({ids_[k]}));
      } else {
        absl::StatusOr<bool> present = b_.client->Contains(ids_[k]);
        EXPECT_TRUE(present.ok() && !*present)
            << "object " << k << " failed (" << (*result)[j] << ") but is in B's store";
      }
    }
    return fetched;
  }

  // Every object fetched (singles, then one batch of all) within kHealBound of the heal.
  void ExpectHealed() {
    const absl::Time healed = absl::Now();
    EXPECT_TRUE(WaitFor(
        [&] {
          return FetchAndCheck({0, 1}) == 2;
        },
        kHealBound))
        << "fetches still fail " << absl::FormatDuration(kHealBound) << " after the heal";
    std::cout << "fetches succeed again " << absl::FormatDuration(absl::Now() - healed) << " after the heal"
              << std::endl;
    std::vector<int> all;
    for (int k = 0; k < kObjects; ++k) {
      EXPECT_EQ(FetchAndCheck({k}, absl::Seconds(5)), 1) << "object " << k << " after the heal";
      all.push_back(k);
    }
    EXPECT_EQ(FetchAndCheck(all, absl::Seconds(5)), kObjects) << "the batch after the heal";
  }

  // The manager's client socket closes a finished connection at its next accept: counted right
  // after two stats requests, a manager holds exactly one (the second's) besides its own fds.
  int ManagerFds(const NetnsNode& node) {
    for (int i = 0; i < 2; ++i) (void)StatsVia(node.client_socket);
    return bench::CountOpenFds(node.manager->pid());
  }

  uint64_t OwnerLeases() {
    absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(a_.client_socket);
    return stats.ok() ? stats->at("peer_service").at("leases_live").get<uint64_t>() : ~0ull;
  }

  // Leases lapse on the owner, no reference or unsealed object in either store, both managers back
  // to their fds (a connection the fault broke may take TCP a while to tear down).
  void ExpectNothingLeaked() {
    EXPECT_TRUE(WaitFor([&] { return OwnerLeases() == 0; }, kLeaseTtl + absl::Seconds(5)))
        << "owner leases: " << OwnerLeases();
    for (NetnsNode* node : {&a_, &b_}) {
      EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10))) << node->name << "'s store";
    }
    EXPECT_TRUE(
        WaitFor([&] { return ManagerFds(a_) <= owner_fds_ && ManagerFds(b_) <= requester_fds_; }, absl::Seconds(30)))
        << "owner manager fds (baseline " << owner_fds_ << "):\n"
        << bench::DescribeOpenFds(a_.manager->pid()) << "requester manager fds (baseline " << requester_fds_ << "):\n"
        << bench::DescribeOpenFds(b_.manager->pid());
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
  NetnsNode a_;
  NetnsNode b_;
  std::vector<ObjectID> ids_;
  int owner_fds_ = -1;
  int requester_fds_ = -1;
};

TEST_F(NetnsFaultTest, FullPartitionFailsFetchesByTheirDeadlineAndHealingRestoresThem) {
  const std::string owner = net_ + "1";
  ASSERT_OK(ns_b_->Nft("add rule inet rplasma input ip saddr " + owner + " drop"));
  ASSERT_OK(ns_b_->Nft("add rule inet rplasma output ip daddr " + owner + " drop"));
  // Singles of both kinds, then batches mixing them: every one fails, by its deadline.
  for (int k = 0; k < kObjects; ++k) EXPECT_EQ(FetchAndCheck({k}), 0) << "object " << k << " across the partition";
  EXPECT_EQ(FetchAndCheck({0, 1, 2, 3}), 0);
  EXPECT_EQ(FetchAndCheck({4, 5, 6, 7, 8, 9}), 0);

  ASSERT_OK(ns_b_->FlushRules());
  ExpectHealed();
  ExpectNothingLeaked();
}

TEST_F(NetnsFaultTest, RandomLossEndsFetchesByTheirDeadlineIntactOrFailedAndHealingRestoresThem) {
  const std::string owner = net_ + "1";
  ASSERT_OK(ns_b_->Nft("add rule inet rplasma input ip saddr " + owner + " numgen random mod 100 < 20 drop"));
  ASSERT_OK(ns_b_->Nft("add rule inet rplasma output ip daddr " + owner + " numgen random mod 100 < 20 drop"));
  int fetched = 0;
  int asked = 0;
  for (int round = 0; round < 60; ++round) {
    if (round % 3 == 2) {
      std::vector<int> batch;
      for (int j = 0; j < 4; ++j) batch.push_back((round + j) % kObjects);
      fetched += FetchAndCheck(batch);
      asked += 4;
    } else {
      fetched += FetchAndCheck({round % kObjects});
      asked += 1;
    }
  }
  std::cout << "under 20% loss: " << fetched << " of " << asked << " objects fetched" << std::endl;
  EXPECT_GT(fetched, 0) << "TCP gets some fetches through 20% loss";

  ASSERT_OK(ns_b_->FlushRules());
  ExpectHealed();
  ExpectNothingLeaked();
}

}  // namespace
}  // namespace rplasma::testing
