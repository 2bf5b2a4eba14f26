// Delay and loss on the wire under verbs (label rdma-guest: runs inside tests/rdma-vm's Soft-RoCE
// guest as root, skips elsewhere): two real stores and managers, each on its own rxe device at one
// end of a veth pair (VerbsVethLink: rxe0's own traffic never crosses a qdisc), with `tc netem`
// on both ends. With 10 ms delay and 5% loss each way, fetches of several sizes over SEND/RECV and
// RDMA READ end by their deadline with every byte intact or with an error (never a partial
// object); once the qdisc is gone every fetch succeeds; nothing leaks (leases, references,
// unsealed objects back to zero).
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/integration/manager_test_cluster.h"
#include "tests/integration/verbs_veth_link.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/transport_verbs/verbs_test_env.h"

namespace rplasma::testing {
namespace {

class ManagerVerbsNetemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_REQUIRE_VERBS_IP(ip);
    if (::geteuid() != 0) RPLASMA_SKIP_TEST("root", "tc netem and veth need root (the rdma-vm guest runs as root)");
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
    ASSERT_OK_AND_ASSIGN(link_, VerbsVethLink::Create(cluster_->dir() + "/veth-link.log"));
  }

  void TearDown() override {
    if (HasFailure()) {
      for (TestNode* node : nodes_) {
        std::cerr << "--- " << node->name << "'s manager log (tail) ---\n"
                  << bench::FileTail(node->manager_log, 3000) << "\n";
      }
    }
    cluster_.reset();  // the managers go before their devices
    link_.reset();
  }

  TestNode* AddNode(const std::string& ip, const std::string& device) {
    TestNodeOptions options;
    options.threshold = "16384";
    options.store_memory = 64 * kMiB;
    options.extra_manager_args = {"--transport=verbs", "--listen=" + ip + ":0", "--rdma_device=" + device,
                                  "--read_chunk_bytes=1048576"};
    absl::StatusOr<TestNode*> node = cluster_->AddNode(options);
    EXPECT_OK(node.status());
    if (!node.ok()) return nullptr;
    nodes_.push_back(*node);
    return *node;
  }

  // No unsealed object, no store reference and no lease left on `node` (within 20 s).
  static void ExpectNoLeaks(TestNode* node, const std::string& name) {
    EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(20))) << name << "'s store";
    EXPECT_OK(WaitNoLeases(node->client_socket, absl::Seconds(20))) << name;
  }

  std::unique_ptr<ManagerTestCluster> cluster_;
  std::unique_ptr<VerbsVethLink> link_;
  std::vector<TestNode*> nodes_;
};

TEST_F(ManagerVerbsNetemTest, DelayAndLossOnTheWireEndFetchesByTheirDeadlineAndHealingRestoresThem) {
  TestNode* a = AddNode(VerbsVethLink::ip_a(), VerbsVethLink::device_a());
  TestNode* b = AddNode(VerbsVethLink::ip_b(), VerbsVethLink::device_b());
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->listen_address.find(VerbsVethLink::ip_a()), std::string::npos) << a->listen_address;
  // 1 KiB and 16 KiB by Get (SEND/RECV), 64 KiB, 1 MiB and 4 MiB by Pin (RDMA READ).
  const std::vector<uint64_t> sizes = {1 * kKiB, 16 * kKiB, 64 * kKiB, 1 * kMiB, 4 * kMiB};
  std::vector<ObjectID> lossy, healed;
  for (size_t i = 0; i < sizes.size(); ++i) {
    lossy.push_back(ObjectID::FromLabel(absl::StrCat("netem-lossy-", sizes[i])));
    healed.push_back(ObjectID::FromLabel(absl::StrCat("netem-healed-", sizes[i])));
    ASSERT_OK(PutTestObject(*a->client, lossy.back(), i, sizes[i]));
    ASSERT_OK(PutTestObject(*a->client, healed.back(), 50 + i, sizes[i]));
  }
  std::vector<ObjectID> all = lossy;
  all.insert(all.end(), healed.begin(), healed.end());
  ASSERT_OK(cluster_->WaitPublished(*a, all));

  // The traffic crosses the veth (so netem is on its path): a warm-up fetch moves its bytes out of
  // A's end.
  const ObjectID warm = ObjectID::FromLabel("netem-warm-up");
  ASSERT_OK(PutTestObject(*a->client, warm, 99, 256 * kKiB));
  ASSERT_OK(cluster_->WaitPublished(*a, {warm}));
  const uint64_t tx_before = VerbsVethLink::TxBytesA();
  ASSERT_OK(b->client->Fetch({warm}, absl::Seconds(30)));
  ASSERT_OK(CheckTestObject(*b->client, warm, 99, 256 * kKiB));
  EXPECT_GE(VerbsVethLink::TxBytesA() - tx_before, 256 * kKiB) << "the RDMA READ did not cross the veth pair";

  ASSERT_OK(link_->SetNetem({"delay", "10ms", "loss", "5%"}));
  const absl::Duration deadline = absl::Seconds(30);
  int ok = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b->client_socket, {lossy[i]}, deadline);
    const absl::Duration took = absl::Now() - start;
    const absl::Status result = !r.ok() ? r.status() : r->size() == 1 ? (*r)[0] : absl::InternalError("reply size");
    std::cerr << "[ netem ] " << sizes[i] << " B under 10 ms delay and 5% loss: " << result << " after "
              << absl::FormatDuration(took) << "\n";
    EXPECT_LT(took, deadline + absl::Seconds(2)) << "size " << sizes[i] << " ended past its deadline";
    if (result.ok()) {
      ++ok;
      EXPECT_OK(CheckTestObject(*b->client, lossy[i], i, sizes[i])) << "size " << sizes[i];
      // Request and reply each cross a 10 ms qdisc: no fetch can be faster than one round trip.
      EXPECT_GE(took, absl::Milliseconds(20)) << "size " << sizes[i] << " did not see the delay";
    } else {
      ASSERT_OK_AND_ASSIGN(bool contains, b->client->Contains(lossy[i]));
      EXPECT_FALSE(contains) << "a failed fetch left object " << sizes[i] << " visible";
    }
  }
  std::cerr << "[ netem ] " << ok << " of " << sizes.size() << " fetches succeeded under delay and loss\n";

  ASSERT_OK(link_->ClearNetem());
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_OK(b->client->Fetch({healed[i]}, absl::Seconds(30))) << "healed, size " << sizes[i];
    EXPECT_OK(CheckTestObject(*b->client, healed[i], 50 + i, sizes[i])) << "healed, size " << sizes[i];
  }
  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  EXPECT_EQ(b_stats.at("checksum_mismatches").get<uint64_t>(), 0u) << b_stats;
  ExpectNoLeaks(a, "A");
  ExpectNoLeaks(b, "B");
}

}  // namespace
}  // namespace rplasma::testing
