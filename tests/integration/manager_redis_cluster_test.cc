// Two managers whose directory is a Redis Cluster (3 masters, 3 replicas): fetches across, single
// and batched, before and after a master is killed and its replica takes over. While the slots of
// the dead master have no master, a fetch that needs them fails (kUnavailable, never wrong bytes);
// once the replica serves them, fetches succeed with what it had, and objects sealed since are
// published and fetched as before.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

class ManagerRedisClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::StartWithRedisCluster());
    TestNodeOptions options;
    options.store_memory = 64u << 20;
    options.name = "a";
    ASSERT_OK_AND_ASSIGN(a_, cluster_->AddNode(options));
    options.name = "b";
    ASSERT_OK_AND_ASSIGN(b_, cluster_->AddNode(options));
  }
  void TearDown() override {
    for (TestNode* node : {a_, b_}) {
      if (node != nullptr) {
        EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10)));
      }
    }
  }

  // `count` objects put on `node`, "<label>-<i>" with TestBytes(seed_base + i, SizeOf(i)).
  std::vector<ObjectID> Put(TestNode& node, const std::string& label, int count, uint64_t seed_base) {
    std::vector<ObjectID> ids;
    for (int i = 0; i < count; ++i) {
      ids.push_back(ObjectID::FromLabel(absl::StrCat(label, "-", i)));
      EXPECT_OK(PutTestObject(*node.client, ids.back(), seed_base + i, SizeOf(i)));
    }
    return ids;
  }
  static uint64_t SizeOf(int i) { return i == 1 ? (2u << 20) : 1000 + i; }  // one by Pin, the rest by Get

  void ExpectIntact(TestNode& node, const std::vector<ObjectID>& ids, uint64_t seed_base) {
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_OK(CheckTestObject(*node.client, ids[i], seed_base + i, SizeOf(static_cast<int>(i))));
    }
  }

  std::unique_ptr<ManagerTestCluster> cluster_;
  TestNode* a_ = nullptr;
  TestNode* b_ = nullptr;
};

TEST_F(ManagerRedisClusterTest, FetchesAcrossWorkSingleAndBatchedBeforeAndAfterAMastersFailover) {
  const std::vector<ObjectID> before = Put(*a_, "before", 20, 0);
  const std::vector<ObjectID> during = Put(*a_, "during", 20, 100);
  std::vector<ObjectID> all = before;
  all.insert(all.end(), during.begin(), during.end());
  ASSERT_OK(cluster_->WaitPublished(*a_, all));
  ASSERT_OK(b_->client->Fetch({before[0]}, absl::Seconds(20)));
  ASSERT_OK(b_->client->Fetch(before, absl::Seconds(20)));
  ExpectIntact(*b_, before, 0);

  // Kill a master once its replica holds every entry; b fetches ids it never fetched (a directory
  // lookup each time) until the replica serves the dead master's slots.
  ASSERT_OK(cluster_->redis_cluster().WaitForReplicasInSync(absl::Seconds(5)));
  cluster_->redis_cluster().Kill(0);
  const absl::Time killed = absl::Now();
  absl::Status fetched;
  int failed_attempts = 0;
  do {
    fetched = b_->client->Fetch(during, absl::Seconds(5));
    if (!fetched.ok()) {
      ++failed_attempts;
      EXPECT_THAT(fetched, HasErrorCode(ErrorCode::kUnavailable)) << fetched;
    }
  } while (!fetched.ok() && absl::Now() - killed < absl::Seconds(15));
  ASSERT_OK(fetched) << "after " << failed_attempts << " failed attempts";
  RecordProperty("failed_attempts_during_failover", failed_attempts);
  EXPECT_LT(absl::Now() - killed, absl::Seconds(10));
  ExpectIntact(*b_, during, 100);

  // Sealed after the failover: published through the new master, fetched single and batched.
  const std::vector<ObjectID> after = Put(*a_, "after", 20, 200);
  ASSERT_OK(cluster_->WaitPublished(*a_, after, absl::Seconds(15)));
  ASSERT_OK(b_->client->Fetch({after[0]}, absl::Seconds(20)));
  ASSERT_OK(b_->client->Fetch(after, absl::Seconds(20)));
  ExpectIntact(*b_, after, 200);

  for (TestNode* node : {a_, b_}) {
    ASSERT_OK(node->client->Delete(all));
    ASSERT_OK(node->client->Delete(after));
  }
  EXPECT_OK(WaitNoLeases(a_->client_socket, absl::Seconds(10)));
}

}  // namespace
}  // namespace rplasma::testing
