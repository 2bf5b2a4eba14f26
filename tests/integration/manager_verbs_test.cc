// The whole stack over verbs (label rdma-guest: runs inside tests/rdma-vm's Soft-RoCE guest, skips
// elsewhere): redis-server, two real rplasma-stores and two real rplasma-managers with
// `--transport verbs` listening on the RDMA netdev's address. Objects put on node A through the
// client library are fetched by node B's Client (manager_socket) and checked byte by byte, with a
// fixed threshold that sends small objects over SEND/RECV (get) and large ones over RDMA READ (pin),
// and with `--pin-threshold auto`. A serving manager SIGKILLed mid-READ must give B an error
// within the fetch deadline and leave nothing visible or leaked in B's store. A reader stopped
// (SIGSTOP) mid-READ past its lease must discard what it read and fetch again, while the owner
// drops the lease's store reference on its own.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/transport_verbs/verbs_test_env.h"

namespace rplasma::testing {
namespace {

constexpr uint64_t kKiB = 1u << 10;
constexpr uint64_t kMiB = 1u << 20;

// Fetches by `protocol` ("get" or "pin") in a manager's parsed stats.
uint64_t ProtocolFetches(const nlohmann::json& stats, const std::string& protocol) {
  return stats.at("by_protocol").at(protocol).at("fetches").get<uint64_t>();
}

// The transport's counter `key` in a manager's parsed stats.
uint64_t TransportStat(const nlohmann::json& stats, const std::string& key) {
  return stats.at("transport_stats").at(key).get<uint64_t>();
}

class ManagerVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_REQUIRE_VERBS_IP(ip);
    ip_ = ip;
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
  }

  // A node whose manager speaks verbs on the RDMA netdev (later flags override the fixture's).
  TestNode* AddVerbsNode(const std::string& threshold, std::vector<std::string> extra = {}) {
    TestNodeOptions options;
    options.threshold = threshold;
    // The store MAP_POPULATEs its arena: keep it small, the guest may run under TCG.
    options.store_memory = 64 * kMiB;
    options.extra_manager_args = {"--transport=verbs", "--listen=" + ip_ + ":0"};
    options.extra_manager_args.insert(options.extra_manager_args.end(), extra.begin(), extra.end());
    absl::StatusOr<TestNode*> node = cluster_->AddNode(options);
    EXPECT_OK(node.status());
    return node.ok() ? *node : nullptr;
  }

  // Puts objects of every size on A, fetches them all from B, checks every byte on B.
  void PutFetchAndCheckAllSizes(TestNode* a, TestNode* b, const std::string& tag) {
    const std::vector<uint64_t> sizes = {1, 4 * kKiB, 64 * kKiB, 1 * kMiB, 4 * kMiB};
    std::vector<ObjectID> ids;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ids.push_back(ObjectID::FromLabel(absl::StrCat(tag, "-", sizes[i])));
      ASSERT_OK(PutTestObject(*a->client, ids.back(), i + 1, sizes[i], "meta-" + tag));
    }
    ASSERT_OK(cluster_->WaitPublished(*a, ids));
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_OK(b->client->Fetch({ids[i]}, absl::Seconds(20))) << tag << " size " << sizes[i];
      EXPECT_OK(CheckTestObject(*b->client, ids[i], i + 1, sizes[i], "meta-" + tag)) << tag << " size " << sizes[i];
    }
  }

  // A thread fetching `id` through `node`'s manager; its outcome lands in `*result`.
  static std::thread FetchInBackground(TestNode* node, const ObjectID& id, absl::Duration timeout,
                                       absl::Status* result) {
    return std::thread([socket = node->client_socket, id, timeout, result] {
      absl::StatusOr<std::vector<absl::Status>> r = FetchVia(socket, {id}, timeout);
      *result = !r.ok() ? r.status() : r->size() == 1 ? (*r)[0] : absl::InternalError("reply size");
    });
  }

  // True once `node`'s transport has completed a READ (within 10 s).
  static bool WaitUntilReading(TestNode* node) {
    return WaitFor(
        [&] {
          absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(node->client_socket);
          return stats.ok() && TransportStat(*stats, "reads") > 0;
        },
        absl::Seconds(10));
  }

  std::string ip_;
  std::unique_ptr<ManagerTestCluster> cluster_;
};

TEST_F(ManagerVerbsTest, FetchesEverySizeOverSendRecvAndRdmaReadWithEveryByteIntact) {
  TestNode* a = AddVerbsNode("16384");
  TestNode* b = AddVerbsNode("16384");
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->listen_address.find(ip_), std::string::npos) << a->listen_address;
  PutFetchAndCheckAllSizes(a, b, "fixed");

  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  ASSERT_OK_AND_ASSIGN(nlohmann::json a_stats, ParsedStatsVia(a->client_socket));
  SCOPED_TRACE("B stats: " + b_stats.dump() + "\nA stats: " + a_stats.dump());
  EXPECT_EQ(b_stats.at("transport"), "verbs");
  EXPECT_EQ(a_stats.at("transport"), "verbs");
  EXPECT_EQ(ProtocolFetches(b_stats, "get"), 2u) << "1 B and 4 KiB go over SEND/RECV";
  EXPECT_EQ(ProtocolFetches(b_stats, "pin"), 3u) << "64 KiB, 1 MiB and 4 MiB go over RDMA READ";
  EXPECT_GE(TransportStat(b_stats, "reads"), 3u) << "B issued RDMA READs";
  EXPECT_GE(TransportStat(b_stats, "read_bytes"), 64 * kKiB + 5 * kMiB);
  EXPECT_EQ(b_stats.at("fetch_failures").get<uint64_t>(), 0u);
  EXPECT_EQ(a_stats.at("peer_service").at("gets").get<uint64_t>(), 2u) << "A served two inline gets";
  EXPECT_EQ(a_stats.at("peer_service").at("pins").get<uint64_t>(), 3u) << "A leased three regions for READ";
}

TEST_F(ManagerVerbsTest, AutoThresholdFetchesSucceedOverVerbs) {
  TestNode* a = AddVerbsNode("auto");
  TestNode* b = AddVerbsNode("auto");
  ASSERT_TRUE(a && b);
  PutFetchAndCheckAllSizes(a, b, "auto");
  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  SCOPED_TRACE("B stats: " + b_stats.dump());
  EXPECT_EQ(b_stats.at("transport"), "verbs");
  EXPECT_EQ(b_stats.at("threshold_mode"), "auto");
  EXPECT_EQ(b_stats.at("calibrations").get<uint64_t>(), 1u) << "one probe of the one peer";
  EXPECT_EQ(ProtocolFetches(b_stats, "get") + ProtocolFetches(b_stats, "pin"), 5u);
  EXPECT_EQ(b_stats.at("fetch_failures").get<uint64_t>(), 0u);
}

TEST_F(ManagerVerbsTest, ServingManagerKilledMidReadGivesAnErrorAndLeavesNothingOnTheFetcher) {
  TestNode* a = AddVerbsNode("16384");
  TestNode* b = AddVerbsNode("16384", {"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  ASSERT_OK_AND_ASSIGN(StatsReply baseline, b->client->Stats());
  const ObjectID id = ObjectID::FromLabel("killed-mid-read");
  const uint64_t size = 24 * kMiB;  // a second or more at the guest's 10-30 MB/s
  ASSERT_OK(PutTestObject(*a->client, id, 9, size));
  ASSERT_OK(cluster_->WaitPublished(*a, {id}));

  absl::Status result;
  const absl::Duration deadline = absl::Seconds(20);
  const absl::Time start = absl::Now();
  std::thread fetcher = FetchInBackground(b, id, deadline, &result);
  // Kill once B has begun reading (its transport counts the 1 MiB chunks it has read).
  const bool reading = WaitUntilReading(b);
  const absl::Duration killed_at = absl::Now() - start;
  a->manager->Kill();
  fetcher.join();
  const absl::Duration took = absl::Now() - start;
  std::cerr << "[ manager_verbs ] SIGKILL at " << absl::FormatDuration(killed_at) << " after the fetch began"
            << (reading ? " (B mid-READ)" : " (no READ seen yet)") << "; fetch returned after "
            << absl::FormatDuration(took) << ": " << result << "\n";
  EXPECT_TRUE(reading) << "B never started reading";
  EXPECT_FALSE(result.ok()) << "the fetch must fail: its owner died mid-READ";
  EXPECT_LT(took, deadline + absl::Seconds(2)) << "the error arrives within the fetch deadline";
  ASSERT_OK_AND_ASSIGN(bool contains, b->client->Contains(id));
  EXPECT_FALSE(contains) << "a partial object must never be visible";
  EXPECT_FALSE(b->client->GetOne(id, absl::Milliseconds(100)).ok());
  StatsReply now;
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<StatsReply> stats = b->client->Stats();
        if (stats.ok()) now = *stats;
        return stats.ok() && stats->objects_created == baseline.objects_created &&
               stats->objects_sealed == baseline.objects_sealed && stats->ref_count == baseline.ref_count &&
               stats->used_bytes == baseline.used_bytes;
      },
      absl::Seconds(10)))
      << "B's store is back to baseline: created " << now.objects_created << " sealed " << now.objects_sealed
      << " refs " << now.ref_count << " used " << now.used_bytes << " (baseline used " << baseline.used_bytes << ")";
  EXPECT_OK(StatsVia(b->client_socket).status()) << "B's manager is alive";
}

TEST_F(ManagerVerbsTest, LeaseExpiredWhileTheReaderIsStoppedIsDiscardedAndTheOwnerReclaims) {
  // An 8 s lease covers a normal read of the object (1-3 s at the guest's 10-30 MB/s), not a
  // reader stopped for longer; A's reaper runs every TTL/4.
  TestNode* a = AddVerbsNode("16384", {"--lease_ttl=8s"});
  TestNode* b = AddVerbsNode("16384", {"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  ASSERT_OK_AND_ASSIGN(StatsReply a_baseline, a->client->Stats());
  const ObjectID id = ObjectID::FromLabel("stopped-reader");
  const uint64_t size = 24 * kMiB;
  ASSERT_OK(PutTestObject(*a->client, id, 11, size));
  ASSERT_OK(cluster_->WaitPublished(*a, {id}));

  absl::Status result;
  std::thread fetcher = FetchInBackground(b, id, absl::Seconds(60), &result);
  const bool reading = WaitUntilReading(b);
  b->manager->Signal(SIGSTOP);
  // The owner reclaims: the lease expires and its store reference is dropped, with B still stopped.
  nlohmann::json a_stats;
  const bool expired = WaitFor(
      [&] {
        absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(a->client_socket);
        if (!stats.ok()) return false;
        a_stats = *stats;
        const nlohmann::json& service = stats->at("peer_service");
        return service.at("leases_expired").get<uint64_t>() >= 1 && service.at("leases_live").get<uint64_t>() == 0;
      },
      absl::Seconds(14));
  // The lease's store reference is released without waiting for the store: give it a moment.
  uint64_t a_refs = 0;
  const bool reclaimed = WaitFor(
      [&] {
        absl::StatusOr<StatsReply> stats = a->client->Stats();
        if (stats.ok()) a_refs = stats->ref_count;
        return stats.ok() && stats->ref_count == a_baseline.ref_count;
      },
      absl::Seconds(5));
  b->manager->Signal(SIGCONT);
  fetcher.join();
  EXPECT_TRUE(reading) << "B never started reading";
  EXPECT_TRUE(expired) << "A's lease did not expire while B was stopped: " << a_stats;
  EXPECT_TRUE(reclaimed) << "A's store still holds " << a_refs << " references (baseline "
                         << a_baseline.ref_count << ") for the stopped reader";
  // The reader discards what it read under the lapsed lease, then fetches again under a new one.
  EXPECT_OK(result);
  EXPECT_OK(CheckTestObject(*b->client, id, 11, size));
  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  EXPECT_GE(b_stats.at("lease_lapses").get<uint64_t>(), 1u) << b_stats;
  EXPECT_EQ(b_stats.at("checksum_mismatches").get<uint64_t>(), 0u) << b_stats;
  EXPECT_GE(ProtocolFetches(b_stats, "pin"), 1u) << b_stats;
}

}  // namespace
}  // namespace rplasma::testing
