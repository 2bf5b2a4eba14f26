// How a manager finds objects, with real processes (three nodes over tcp, one redis-server): a
// warm fetch goes straight to the owner that served it before, a hinted one to the node the caller
// names, a cold one to the usual producer, and a stale cache entry or a wrong hint or guess costs
// one attempt — never wrong bytes or a failed
// fetch the directory could serve. Fetched copies are published lazily. Verbs: the same engine
// over the other transport runs in the guest (manager_verbs_test).
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

class ManagerRoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
    TestNodeOptions options;
    options.store_memory = 64u << 20;
    for (TestNode** node : {&a_, &b_, &c_}) {
      options.name = node == &a_ ? "a" : node == &b_ ? "b" : "c";
      options.extra_manager_args = node == &b_ ? BManagerArgs() : std::vector<std::string>{};
      ASSERT_OK_AND_ASSIGN(*node, cluster_->AddNode(options));
    }
  }
  void TearDown() override {
    for (TestNode* node : {a_, b_, c_}) {
      if (node != nullptr) {
        EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10)));
      }
    }
  }

  virtual std::vector<std::string> BManagerArgs() const { return {}; }

  uint64_t Counter(const TestNode& node, const std::string& name) {
    absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(node.client_socket);
    EXPECT_OK(stats.status());
    return stats.ok() ? stats->at(name).get<uint64_t>() : 0;
  }

  std::unique_ptr<ManagerTestCluster> cluster_;
  TestNode* a_ = nullptr;
  TestNode* b_ = nullptr;
  TestNode* c_ = nullptr;
};

// B holds its fetched copies' seal events for a minute, so the test's deletes always come first,
// however slow the machine (with the default 500 ms a loaded CI run published one copy).
class ManagerRoutingDeferredTest : public ManagerRoutingTest {
 protected:
  std::vector<std::string> BManagerArgs() const override { return {"--copy-publish-delay=60s"}; }
};

TEST_F(ManagerRoutingDeferredTest, AWarmFetchAsksNoDirectoryAndBringsEveryByte) {
  std::vector<ObjectID> ids;
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 40; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("warm-", i)));
    sizes.push_back(i == 0 ? (3u << 20) : 1000 + i);  // one by Pin, the rest by Get
    ASSERT_OK(PutTestObject(*a_->client, ids.back(), i, sizes.back()));
  }
  ASSERT_OK(cluster_->WaitPublished(*a_, ids));
  ASSERT_OK(b_->client->Fetch(ids, absl::Seconds(20)));
  const uint64_t lookups = Counter(*b_, "directory_lookups");
  EXPECT_GE(lookups, ids.size());
  ASSERT_OK(b_->client->Delete(ids));  // B's copies dropped
  ASSERT_OK(b_->client->Fetch(ids, absl::Seconds(20)));
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_OK(CheckTestObject(*b_->client, ids[i], i, sizes[i]));
  EXPECT_EQ(Counter(*b_, "directory_lookups"), lookups) << "warm: no directory call";
  EXPECT_EQ(Counter(*b_, "location_cache_hits"), ids.size());
  EXPECT_EQ(Counter(*b_, "location_cache_stale"), 0u);
  // Copies deleted within the publish delay were never published, so never removed either.
  ASSERT_OK(b_->client->Delete(ids));
  ASSERT_OK(a_->client->Delete(ids));
  EXPECT_TRUE(WaitFor([&] { return Counter(*b_, "copies_never_published") == 2 * ids.size(); }, absl::Seconds(5)))
      << Counter(*b_, "copies_never_published");
  EXPECT_EQ(Counter(*b_, "objects_published"), 0u);
  EXPECT_OK(WaitNoLeases(a_->client_socket, absl::Seconds(10)));
}

TEST_F(ManagerRoutingTest, AnObjectMovedToAThirdNodeIsFetchedFromThereInItsNewVersion) {
  const ObjectID id = ObjectID::FromLabel("moved");
  ASSERT_OK(PutTestObject(*a_->client, id, 1, 5000));
  ASSERT_OK(cluster_->WaitPublished(*a_, {id}));
  ASSERT_OK(b_->client->Fetch({id}, absl::Seconds(20)));
  ASSERT_OK(b_->client->Delete({id}));
  ASSERT_OK(a_->client->Delete({id}));  // gone from A, now on C with other bytes
  ASSERT_OK(PutTestObject(*c_->client, id, 2, 7000));
  ASSERT_OK(cluster_->WaitPublished(*c_, {id}));
  ASSERT_OK(b_->client->Fetch({id}, absl::Seconds(20)));
  EXPECT_OK(CheckTestObject(*b_->client, id, 2, 7000));
  EXPECT_EQ(Counter(*b_, "location_cache_stale"), 1u) << "one attempt at A, then the directory";
  ASSERT_OK(b_->client->Delete({id}));
  ASSERT_OK(c_->client->Delete({id}));
}

TEST_F(ManagerRoutingTest, AnOwnerRestartedUnderANewNodeIdIsFoundThroughTheDirectory) {
  const ObjectID id = ObjectID::FromLabel("owner restarted");
  ASSERT_OK(PutTestObject(*a_->client, id, 3, 2000));
  ASSERT_OK(cluster_->WaitPublished(*a_, {id}));
  ASSERT_OK(b_->client->Fetch({id}, absl::Seconds(20)));
  ASSERT_OK(b_->client->Delete({id}));
  const std::string old_node = a_->node_id;
  ASSERT_OK(cluster_->RestartManager(a_));  // the store keeps the object; the new manager republishes it
  ASSERT_NE(a_->node_id, old_node);
  ASSERT_OK(cluster_->WaitPublished(*a_, {id}));
  ASSERT_OK(b_->client->Fetch({id}, absl::Seconds(20)));
  EXPECT_OK(CheckTestObject(*b_->client, id, 3, 2000));
  EXPECT_EQ(Counter(*b_, "location_cache_stale"), 1u);
  ASSERT_OK(b_->client->Delete({id}));
  ASSERT_OK(a_->client->Delete({id}));
}

TEST_F(ManagerRoutingTest, HintsRightWrongAndMalformed) {
  std::vector<ObjectID> on_a, on_c;
  for (int i = 0; i < 10; ++i) {
    on_a.push_back(ObjectID::FromLabel(absl::StrCat("hint a ", i)));
    ASSERT_OK(PutTestObject(*a_->client, on_a.back(), 10 + i, 800));
    on_c.push_back(ObjectID::FromLabel(absl::StrCat("hint c ", i)));
    ASSERT_OK(PutTestObject(*c_->client, on_c.back(), 20 + i, 900));
  }
  ASSERT_OK_AND_ASSIGN(const std::string node_a, a_->client->ManagerNodeId());
  EXPECT_EQ(node_a, a_->node_id);
  // Right hint: straight from A, published or not.
  ASSERT_OK(b_->client->Fetch(on_a, absl::Seconds(20), node_a));
  EXPECT_EQ(Counter(*b_, "hinted_fetches"), on_a.size());
  EXPECT_EQ(Counter(*b_, "hint_misses"), 0u);
  // A batch held by two owners, hinted at one: the other's ids go through the directory.
  ASSERT_OK(b_->client->Delete(on_a));
  ASSERT_OK(cluster_->WaitPublished(*c_, on_c));
  std::vector<ObjectID> both = on_a;
  both.insert(both.end(), on_c.begin(), on_c.end());
  ASSERT_OK(b_->client->Fetch(both, absl::Seconds(20), node_a));
  for (int i = 0; i < 10; ++i) {
    EXPECT_OK(CheckTestObject(*b_->client, on_a[i], 10 + i, 800));
    EXPECT_OK(CheckTestObject(*b_->client, on_c[i], 20 + i, 900));
  }
  EXPECT_EQ(Counter(*b_, "hint_misses"), on_c.size());
  // B has fetched those before: its cache, not a hint, routes them now.
  ASSERT_OK(b_->client->Delete(both));
  ASSERT_OK(b_->client->Fetch(both, absl::Seconds(20), "no-such-node.123"));
  EXPECT_EQ(Counter(*b_, "hinted_fetches"), on_a.size() + on_c.size()) << "the first two fetches' only";
  // A hint naming a node that does not exist, for ids B never fetched.
  std::vector<ObjectID> fresh;
  for (int i = 0; i < 5; ++i) {
    fresh.push_back(ObjectID::FromLabel(absl::StrCat("hint fresh ", i)));
    ASSERT_OK(PutTestObject(*c_->client, fresh.back(), 30 + i, 700));
  }
  ASSERT_OK(cluster_->WaitPublished(*c_, fresh));
  ASSERT_OK(b_->client->Fetch(fresh, absl::Seconds(20), "no-such-node.123"));
  for (int i = 0; i < 5; ++i) EXPECT_OK(CheckTestObject(*b_->client, fresh[i], 30 + i, 700));
  EXPECT_EQ(Counter(*b_, "hint_misses"), on_c.size() + fresh.size());
  ASSERT_OK(b_->client->Delete(fresh));
  ASSERT_OK(c_->client->Delete(fresh));
  // Not a node id at all: refused before anything is sent.
  EXPECT_THAT(b_->client->Fetch(on_c, absl::Seconds(5), "bad hint/"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(FetchVia(b_->client_socket, on_c, absl::Seconds(5), std::string(200, 'x')).status(),
              HasErrorCode(ErrorCode::kInvalidArgument))
      << "the manager refuses it too";
  ASSERT_OK(a_->client->Delete(on_a));
  ASSERT_OK(b_->client->Delete(both));
  ASSERT_OK(c_->client->Delete(on_c));
}

// No hint, no cached location: once two lookups found A's objects on A, B guesses A for the next new
// ones (not even published yet); a wrong guess costs one attempt.
TEST_F(ManagerRoutingTest, AColdFetchFromTheUsualProducerGoesThereWithoutTheDirectory) {
  std::vector<ObjectID> ids;
  for (int i = 0; i < 2; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("usual producer ", i)));
    ASSERT_OK(PutTestObject(*a_->client, ids.back(), 40 + i, 1200));
    ASSERT_OK(cluster_->WaitPublished(*a_, {ids.back()}));
    ASSERT_OK(b_->client->Fetch({ids.back()}, absl::Seconds(20)));
  }
  const uint64_t lookups = Counter(*b_, "directory_lookups");
  ids.push_back(ObjectID::FromLabel("usual producer, unpublished"));
  ASSERT_OK(PutTestObject(*a_->client, ids.back(), 42, 1300));
  ASSERT_OK(b_->client->Fetch({ids.back()}, absl::Seconds(20)));
  EXPECT_OK(CheckTestObject(*b_->client, ids.back(), 42, 1300));
  EXPECT_EQ(Counter(*b_, "directory_lookups"), lookups) << "guessed: no directory call";
  EXPECT_EQ(Counter(*b_, "guessed_fetches"), 1u);
  const ObjectID elsewhere = ObjectID::FromLabel("usual producer, not this time");
  ASSERT_OK(PutTestObject(*c_->client, elsewhere, 43, 1400));
  ASSERT_OK(cluster_->WaitPublished(*c_, {elsewhere}));
  ASSERT_OK(b_->client->Fetch({elsewhere}, absl::Seconds(20)));
  EXPECT_OK(CheckTestObject(*b_->client, elsewhere, 43, 1400));
  EXPECT_EQ(Counter(*b_, "guess_misses"), 1u);
  EXPECT_EQ(Counter(*b_, "directory_lookups"), lookups + 1);
  ASSERT_OK(b_->client->Delete(ids));
  ASSERT_OK(b_->client->Delete({elsewhere}));
  ASSERT_OK(a_->client->Delete(ids));
  ASSERT_OK(c_->client->Delete({elsewhere}));
}

TEST_F(ManagerRoutingTest, AKeptCopyIsPublishedWithinASecondAndServesOthers) {
  const ObjectID id = ObjectID::FromLabel("kept copy");
  ASSERT_OK(PutTestObject(*a_->client, id, 5, 3000));
  ASSERT_OK(cluster_->WaitPublished(*a_, {id}));
  ASSERT_OK(b_->client->Fetch({id}, absl::Seconds(20)));
  const absl::Time fetched = absl::Now();
  ASSERT_OK(cluster_->WaitPublished(*b_, {id}, absl::Seconds(5)));
  // Published after the 500 ms delay (within a second on an idle machine; the bound leaves a loaded
  // one room), not by the 30 s reconcile.
  EXPECT_LT(absl::Now() - fetched, absl::Seconds(3)) << "a copy is published by its delay";
  EXPECT_EQ(Counter(*b_, "copies_deferred"), 1u);
  ASSERT_OK(a_->client->Delete({id}));  // the original goes; B's copy serves C
  ASSERT_OK(c_->client->Fetch({id}, absl::Seconds(20)));
  EXPECT_OK(CheckTestObject(*c_->client, id, 5, 3000));
  for (TestNode* node : {b_, c_}) ASSERT_OK(node->client->Delete({id}));
}

TEST_F(ManagerRoutingTest, TheCliSaysItsNodeIdAndFetchesWithAHintAndAForcedProtocol) {
  const std::string out = cluster_->dir() + "/cli.out";
  auto cli = [&](const TestNode& node, const std::string& args) {
    const std::string command = absl::StrCat(RPLASMA_BIN_DIR, "/rplasma --store-socket ", node.store->socket_path(),
                                             " --manager-socket ", node.client_socket, " ", args, " >", out, " 2>&1");
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  ASSERT_EQ(cli(*a_, "node-id"), 0) << bench::ReadWholeFile(out);
  EXPECT_EQ(bench::ReadWholeFile(out), a_->node_id + "\n");
  const ObjectID id = ObjectID::FromLabel("cli hint");
  ASSERT_OK(PutTestObject(*a_->client, id, 9, 1500));
  ASSERT_EQ(cli(*b_, absl::StrCat("fetch ", id.Hex(), " --hint ", a_->node_id)), 0) << bench::ReadWholeFile(out);
  EXPECT_OK(CheckTestObject(*b_->client, id, 9, 1500));
  EXPECT_EQ(Counter(*b_, "hinted_fetches"), 1u);
  EXPECT_NE(cli(*b_, absl::StrCat("fetch ", id.Hex(), " --hint 'bad/hint'")), 0);
  EXPECT_THAT(bench::ReadWholeFile(out), ::testing::HasSubstr("node id"));
  ASSERT_OK(b_->client->Delete({id}));
  // --protocol forces the peer protocol: 1500 bytes go by Pin.
  ASSERT_EQ(cli(*b_, absl::StrCat("fetch ", id.Hex(), " --hint ", a_->node_id, " --protocol pin")), 0)
      << bench::ReadWholeFile(out);
  EXPECT_OK(CheckTestObject(*b_->client, id, 9, 1500));
  ASSERT_OK_AND_ASSIGN(nlohmann::json stats, ParsedStatsVia(b_->client_socket));
  EXPECT_EQ(stats.at("by_protocol").at("pin").at("forced_objects").get<uint64_t>(), 1u) << stats;
  EXPECT_NE(cli(*b_, absl::StrCat("fetch ", id.Hex(), " --protocol rdma")), 0);
  EXPECT_THAT(bench::ReadWholeFile(out), ::testing::HasSubstr("--protocol needs get, pin or none"));
  ASSERT_OK(b_->client->Delete({id}));
  ASSERT_OK(a_->client->Delete({id}));
}

}  // namespace
}  // namespace rplasma::testing
