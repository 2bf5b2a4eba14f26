// Two real nodes (rplasma-store + rplasma-manager each, one redis-server): fetches of several
// sizes by both peer protocols with every byte checked, the protocol a caller forces, and an
// integrity sweep.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

class ManagerFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
    TestNodeOptions options;
    options.store_memory = 320u << 20;  // the largest sweep object (256 MiB) + room
    ASSERT_OK_AND_ASSIGN(a_, cluster_->AddNode(options));
    ASSERT_OK_AND_ASSIGN(b_, cluster_->AddNode(options));
  }

  // Waits until the directory knows `id` (A's publisher is asynchronous), by fetching on B.
  std::unique_ptr<ManagerTestCluster> cluster_;
  TestNode* a_ = nullptr;
  TestNode* b_ = nullptr;
};

TEST_F(ManagerFetchTest, ObjectsOfSeveralSizesArriveIntactByBothProtocols) {
  const std::vector<uint64_t> sizes = {0, 1, 100, 4096, 65536, 65537, 1u << 20, (8u << 20) + 13};
  std::vector<ObjectID> ids;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("sizes-", i)));
    ASSERT_OK(PutTestObject(*a_->client, ids.back(), i, sizes[i], i % 2 ? "some metadata" : ""));
  }
  // Fetch through Client::Fetch's protocol on B (not-yet-published ids are waited for).
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b_->client_socket, ids, absl::Seconds(30)));
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_OK(result[i]) << "size " << sizes[i];
    EXPECT_OK(CheckTestObject(*b_->client, ids[i], i, sizes[i], i % 2 ? "some metadata" : "")) << "size " << sizes[i];
  }
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats, ParsedStatsVia(b_->client_socket));
  // One fetch of eight ids from one source: one batch, the small ones inline and the large ones
  // pinned in the same reply.
  EXPECT_EQ(stats.at("by_protocol").at("get").at("objects").get<uint64_t>(), 5u)
      << "sizes up to 64 KiB by Get: " << stats;
  EXPECT_EQ(stats.at("by_protocol").at("pin").at("objects").get<uint64_t>(), 3u)
      << "larger ones by Pin/Read: " << stats;
  EXPECT_EQ(stats.at("batch_transfers").get<uint64_t>(), 1u) << stats;
  // The threshold explains itself, per peer.
  ASSERT_EQ(stats.at("peer_policy").size(), 1u) << stats;
  const nlohmann::json& policy = stats.at("peer_policy").begin().value();
  EXPECT_EQ(policy.at("threshold").get<uint64_t>(), 65536u) << stats;
  EXPECT_EQ(policy.at("flips").get<uint64_t>(), 0u) << stats;
  EXPECT_NE(policy.at("reason").get<std::string>().find("fixed"), std::string::npos) << stats;
  // A second fetch of the same ids is a local no-op.
  ASSERT_OK_AND_ASSIGN(result, FetchVia(b_->client_socket, ids, absl::Seconds(5)));
  for (const absl::Status& s : result) EXPECT_OK(s);
  ASSERT_OK_AND_ASSIGN(stats, ParsedStatsVia(b_->client_socket));
  EXPECT_EQ(stats.at("fetch_local").get<uint64_t>(), sizes.size()) << stats;
  // And the owner holds no leases after all of it: they end off the fetch's path, right after it.
  EXPECT_OK(WaitNoLeases(a_->client_socket, absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(stats, ParsedStatsVia(b_->client_socket));
  EXPECT_GT(stats.at("peer_unpins").at("ended").get<uint64_t>(), 0u) << "the Pin transfers' leases: " << stats;
  EXPECT_EQ(stats.at("peer_unpins").at("failed").get<uint64_t>(), 0u) << stats;
}

// Client::Fetch's ForcedProtocol overrides the 64 KiB threshold both ways, and the stats tell
// the forced objects apart.
TEST_F(ManagerFetchTest, TheProtocolACallerForcesMovesItsObjectsWhateverTheirSize) {
  const ObjectID small_by_pin = ObjectID::FromLabel("small by pin");
  const ObjectID large_by_get = ObjectID::FromLabel("large by get");
  const ObjectID left_to_the_threshold = ObjectID::FromLabel("left to the threshold");
  ASSERT_OK(PutTestObject(*a_->client, small_by_pin, 1, 1000, ""));
  ASSERT_OK(PutTestObject(*a_->client, large_by_get, 2, 1u << 20, ""));
  ASSERT_OK(PutTestObject(*a_->client, left_to_the_threshold, 3, 1000, ""));
  // The directory learns of them asynchronously: the first fetch waits for it.
  ASSERT_OK(b_->client->Fetch({&small_by_pin, 1}, absl::Seconds(30), {}, ForcedProtocol::kPin));
  ASSERT_OK(b_->client->Fetch({&large_by_get, 1}, absl::Seconds(30), {}, ForcedProtocol::kGet));
  ASSERT_OK(b_->client->Fetch({&left_to_the_threshold, 1}, absl::Seconds(30)));
  EXPECT_OK(CheckTestObject(*b_->client, small_by_pin, 1, 1000, ""));
  EXPECT_OK(CheckTestObject(*b_->client, large_by_get, 2, 1u << 20, ""));
  EXPECT_OK(CheckTestObject(*b_->client, left_to_the_threshold, 3, 1000, ""));
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats, ParsedStatsVia(b_->client_socket));
  const nlohmann::json& by = stats.at("by_protocol");
  EXPECT_EQ(by.at("pin").at("objects").get<uint64_t>(), 1u) << stats;
  EXPECT_EQ(by.at("pin").at("forced_objects").get<uint64_t>(), 1u) << stats;
  EXPECT_EQ(by.at("get").at("objects").get<uint64_t>(), 2u) << stats;
  EXPECT_EQ(by.at("get").at("forced_objects").get<uint64_t>(), 1u) << "the third went by the threshold: " << stats;
  EXPECT_OK(WaitNoLeases(a_->client_socket, absl::Seconds(5)));
}

TEST_F(ManagerFetchTest, IntegritySweepOfLogUniformSizesByBothProtocols) {
  // RPLASMA_MANAGER_SWEEP_COUNT sets the count; sanitizer builds default to 100 (sizes stay
  // 1 B .. 256 MiB), plain builds to 1000.
#if defined(ABSL_HAVE_ADDRESS_SANITIZER) || defined(ABSL_HAVE_THREAD_SANITIZER)
  int count = 100;
#else
  int count = 1000;
#endif
  if (const char* env = std::getenv("RPLASMA_MANAGER_SWEEP_COUNT")) count = std::max(1, std::atoi(env));
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<double> log_size(0.0, std::log(256.0 * 1024 * 1024));
  int by_get = 0;
  int by_pin = 0;
  for (int i = 0; i < count; ++i) {
    const uint64_t size = std::max<uint64_t>(1, static_cast<uint64_t>(std::exp(log_size(rng))));
    const ObjectID id = ObjectID::FromLabel(absl::StrCat("sweep-", i));
    ASSERT_OK(PutTestObject(*a_->client, id, 1000 + i, size)) << "put #" << i << " of " << size;
    ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b_->client_socket, {id}, absl::Seconds(60)));
    ASSERT_OK(result[0]) << "fetch #" << i << " of " << size << " bytes";
    ASSERT_OK(CheckTestObject(*b_->client, id, 1000 + i, size)) << "fetch #" << i << " of " << size << " bytes";
    (size <= 65536 ? by_get : by_pin)++;
    // Keep both stores small: drop the object on both sides.
    ASSERT_OK(a_->client->Delete({id}));
    ASSERT_OK(b_->client->Delete({id}));
  }
  if (count >= 100) {
    EXPECT_GT(by_get, 0);
    EXPECT_GT(by_pin, 0);
  }
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats, ParsedStatsVia(b_->client_socket));
  std::cout << "manager stats after the sweep: " << stats << "\n";
  EXPECT_EQ(stats.at("checksum_mismatches").get<uint64_t>(), 0u) << stats;
  EXPECT_EQ(stats.at("fetch_failures").get<uint64_t>(), 0u) << stats;
}

}  // namespace
}  // namespace rplasma::testing

namespace rplasma::testing {
namespace {

TEST(ManagerAutoThresholdTest, FirstConnectProbesThePeerAndTheChosenThresholdShowsInStats) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ManagerTestCluster> cluster, ManagerTestCluster::Start());
  TestNodeOptions options;
  options.store_memory = 128u << 20;
  ASSERT_OK_AND_ASSIGN(TestNode * a, cluster->AddNode(options));
  options.threshold = "auto";
  ASSERT_OK_AND_ASSIGN(TestNode * b, cluster->AddNode(options));
  std::vector<ObjectID> ids;
  const std::vector<uint64_t> sizes = {10, 5000, 300000, 6u << 20};
  for (size_t i = 0; i < sizes.size(); ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("auto-", i)));
    ASSERT_OK(PutTestObject(*a->client, ids.back(), 40 + i, sizes[i]));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b->client_socket, ids, absl::Seconds(30)));
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_OK(result[i]);
    EXPECT_OK(CheckTestObject(*b->client, ids[i], 40 + i, sizes[i]));
  }
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats, ParsedStatsVia(b->client_socket));
  EXPECT_EQ(stats.at("calibrations").get<uint64_t>(), 1u) << stats;
  EXPECT_GT(stats.at("peer_thresholds").at(a->node_id).get<uint64_t>(), 0u) << "a threshold for the peer: " << stats;
  EXPECT_EQ(stats.at("threshold_mode"), "auto") << stats;
  // The probe left nothing behind on either side.
  ASSERT_OK_AND_ASSIGN(nlohmann::json owner, ParsedStatsVia(a->client_socket));
  EXPECT_EQ(owner.at("peer_service").at("leases_live").get<uint64_t>(), 0u) << owner;
  ASSERT_OK_AND_ASSIGN(StatsReply store_b, b->client->Stats());
  EXPECT_EQ(store_b.objects_created, 0u) << "the probe scratch object was aborted";
}

}  // namespace
}  // namespace rplasma::testing
