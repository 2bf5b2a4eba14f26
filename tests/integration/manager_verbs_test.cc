// The whole stack over verbs (label rdma-guest: runs inside tests/rdma-vm's Soft-RoCE guest, skips
// elsewhere): redis-server, two real rplasma-stores and two real rplasma-managers with
// `--transport verbs` listening on the RDMA netdev's address. Objects put on node A through the
// client library are fetched by node B's Client (manager_socket) and checked byte by byte, with a
// fixed threshold that sends small objects over SEND/RECV (get) and large ones over RDMA READ (pin),
// and with `--pin-threshold auto`. A serving manager SIGKILLed mid-READ must give B an error
// within the fetch deadline and leave nothing visible or leaked in B's store. A reader stopped
// (SIGSTOP) mid-READ past its lease must discard what it read and fetch again, while the owner
// drops the lease's store reference on its own. Batches over verbs (issue 10): a mixed batch
// (both protocols, duplicates, absent ids) in one fetch, 2,048 small ids in one Client::Fetch
// whose Get batch replies exceed message_bytes (the verbs Call splits them), and the owner killed
// mid Pin batch (what was sealed stays intact, the rest fails, nothing partial, no leaks).
#include <csignal>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/integration/verbs_cluster_test.h"

namespace rplasma::testing {
namespace {

// Fetches by `protocol` ("get" or "pin") in a manager's parsed stats.
uint64_t ProtocolFetches(const nlohmann::json& stats, const std::string& protocol) {
  return stats.at("by_protocol").at(protocol).at("fetches").get<uint64_t>();
}

// The transport's counter `key` in a manager's parsed stats.
uint64_t TransportStat(const nlohmann::json& stats, const std::string& key) {
  return stats.at("transport_stats").at(key).get<uint64_t>();
}

class ManagerVerbsTest : public VerbsClusterTest {
 protected:
  TestNode* AddVerbsNode(const std::string& threshold, const std::vector<std::string>& extra = {}) {
    return VerbsClusterTest::AddVerbsNode(threshold, 64 * kMiB, extra);
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

  // No unsealed object and no store reference left in `node`'s store (within 10 s).
  static void ExpectNoLeaks(TestNode* node, const std::string& name) {
    EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10))) << name << "'s store";
  }
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

TEST_F(ManagerVerbsTest, WarmAndHintedFetchesOverVerbsSkipTheDirectoryWithEveryByteIntact) {
  TestNode* a = AddVerbsNode("16384");
  TestNode* b = AddVerbsNode("16384");
  ASSERT_TRUE(a && b);
  // Warm: both protocols again after B's copies went; no directory call.
  PutFetchAndCheckAllSizes(a, b, "warm");
  const std::vector<uint64_t> sizes = {1, 4 * kKiB, 64 * kKiB, 1 * kMiB, 4 * kMiB};
  std::vector<ObjectID> ids;
  for (uint64_t size : sizes) ids.push_back(ObjectID::FromLabel(absl::StrCat("warm-", size)));
  ASSERT_OK_AND_ASSIGN(nlohmann::json before, ParsedStatsVia(b->client_socket));
  ASSERT_OK(b->client->Delete(ids));
  ASSERT_OK(b->client->Fetch(ids, absl::Seconds(30)));
  for (size_t i = 0; i < sizes.size(); ++i)
    EXPECT_OK(CheckTestObject(*b->client, ids[i], i + 1, sizes[i], "meta-warm"));
  ASSERT_OK_AND_ASSIGN(nlohmann::json after, ParsedStatsVia(b->client_socket));
  SCOPED_TRACE("B stats: " + after.dump());
  EXPECT_EQ(after.at("directory_lookups"), before.at("directory_lookups"));
  EXPECT_EQ(after.at("location_cache_hits").get<uint64_t>(), sizes.size());
  // Hinted: straight from A. Their sizes are unknown here, so A applies the 16 KiB threshold to
  // their true sizes: the two small ones inline (SEND/RECV), the 2 MiB one pinned (RDMA READ).
  std::vector<ObjectID> hinted;
  std::vector<uint64_t> hinted_sizes = {100, 2 * kKiB, 2 * kMiB};
  for (size_t i = 0; i < hinted_sizes.size(); ++i) {
    hinted.push_back(ObjectID::FromLabel(absl::StrCat("hinted-", i)));
    ASSERT_OK(PutTestObject(*a->client, hinted.back(), 50 + i, hinted_sizes[i]));
  }
  ASSERT_OK(b->client->Fetch(hinted, absl::Seconds(30), a->node_id));
  for (size_t i = 0; i < hinted.size(); ++i) EXPECT_OK(CheckTestObject(*b->client, hinted[i], 50 + i, hinted_sizes[i]));
  ASSERT_OK_AND_ASSIGN(after, ParsedStatsVia(b->client_socket));
  EXPECT_EQ(after.at("hinted_fetches").get<uint64_t>(), hinted.size());
  EXPECT_EQ(after.at("hint_misses").get<uint64_t>(), 0u) << after;
  ExpectNoLeaks(a, "A");
  ExpectNoLeaks(b, "B");
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
               stats->slot_references == baseline.slot_references && stats->used_bytes == baseline.used_bytes;
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
  // The lease's reference (a slot of A's manager, or a store reference) is released without
  // waiting for the store: give it a moment.
  uint64_t a_refs = 0;
  const bool reclaimed = WaitFor(
      [&] {
        absl::StatusOr<StatsReply> stats = a->client->Stats();
        if (stats.ok()) a_refs = stats->ref_count;  // slot references included
        return stats.ok() && a_refs == a_baseline.ref_count;
      },
      absl::Seconds(5));
  b->manager->Signal(SIGCONT);
  fetcher.join();
  EXPECT_TRUE(reading) << "B never started reading";
  EXPECT_TRUE(expired) << "A's lease did not expire while B was stopped: " << a_stats;
  EXPECT_TRUE(reclaimed) << "A's store still holds " << a_refs << " references (baseline " << a_baseline.ref_count
                         << ") for the stopped reader";
  // The reader discards what it read under the lapsed lease, then fetches again under a new one.
  EXPECT_OK(result);
  EXPECT_OK(CheckTestObject(*b->client, id, 11, size));
  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  EXPECT_GE(b_stats.at("lease_lapses").get<uint64_t>(), 1u) << b_stats;
  EXPECT_EQ(b_stats.at("checksum_mismatches").get<uint64_t>(), 0u) << b_stats;
  EXPECT_GE(ProtocolFetches(b_stats, "pin"), 1u) << b_stats;
}

TEST_F(ManagerVerbsTest, AMixedBatchInOneFetchArrivesIntactWithAbsentIdsFailingAlone) {
  TestNode* a = AddVerbsNode("16384");
  TestNode* b = AddVerbsNode("16384", {"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  // Up to 16 KiB (data + metadata) by a Get batch (SEND/RECV), the rest by a Pin batch (RDMA READ).
  const std::vector<uint64_t> sizes = {0, 100, 1 * kKiB, 16 * kKiB, 64 * kKiB, 65537, 1 * kMiB, 4 * kMiB + 7};
  std::vector<ObjectID> ids;
  std::vector<uint64_t> size_of;
  std::vector<std::string> metadata_of;
  uint64_t pinned = 0;
  for (size_t i = 0; i < 2 * sizes.size(); ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("verbs-mixed-", i)));
    size_of.push_back(sizes[i % sizes.size()]);
    metadata_of.push_back(i < sizes.size() ? "" : absl::StrCat("meta-", i));
    ASSERT_OK(PutTestObject(*a->client, ids.back(), i, size_of.back(), metadata_of.back()));
    if (size_of.back() + metadata_of.back().size() > 16 * kKiB) ++pinned;
  }
  ASSERT_OK(cluster_->WaitPublished(*a, ids));

  std::vector<ObjectID> asked = ids;
  asked.push_back(ids[7]);  // duplicates: a Pin one and a Get one
  asked.insert(asked.begin() + 3, ids[2]);
  const ObjectID absent1 = ObjectID::FromLabel("verbs never put 1");
  const ObjectID absent2 = ObjectID::FromLabel("verbs never put 2");
  asked.insert(asked.begin() + 5, absent1);
  asked.push_back(absent2);
  // The absent ids wait for the whole deadline: long enough for ~11 MiB at the guest's 10-30 MB/s.
  const absl::Duration deadline = absl::Seconds(8);
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b->client_socket, asked, deadline));
  EXPECT_LT(absl::Now() - start, deadline + absl::Seconds(4)) << "an answer by the deadline (and its grace)";
  ExpectOnlyAbsentFailed(asked, result, {absent1, absent2});
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_OK(CheckTestObject(*b->client, ids[i], i, size_of[i], metadata_of[i]))
        << "object " << i << " of " << size_of[i] << " bytes";
  }
  EXPECT_FALSE(*b->client->Contains(absent1));

  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  ASSERT_OK_AND_ASSIGN(nlohmann::json a_stats, ParsedStatsVia(a->client_socket));
  SCOPED_TRACE("B stats: " + b_stats.dump() + "\nA stats: " + a_stats.dump());
  EXPECT_EQ(b_stats.at("transport"), "verbs");
  EXPECT_EQ(b_stats.at("batch_transfers").get<uint64_t>(), 1u) << "one round trip for both sides of the threshold";
  EXPECT_EQ(b_stats.at("by_protocol").at("get").at("objects").get<uint64_t>(), ids.size() - pinned);
  EXPECT_EQ(b_stats.at("by_protocol").at("pin").at("objects").get<uint64_t>(), pinned);
  EXPECT_GE(TransportStat(b_stats, "reads"), pinned) << "B read the pinned objects with RDMA READ";
  EXPECT_GE(TransportStat(b_stats, "read_bytes"), 2 * (2 * 64 * kKiB + 1 + 5 * kMiB + 7));
  EXPECT_EQ(b_stats.at("checksum_mismatches").get<uint64_t>(), 0u);
  EXPECT_EQ(a_stats.at("peer_service").at("fetch_batches").get<uint64_t>(), 1u);
  EXPECT_EQ(a_stats.at("peer_service").at("pins").get<uint64_t>(), pinned) << "pinned in the same reply";
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(a->client_socket);
        return stats.ok() && stats->at("peer_service").at("leases_live").get<uint64_t>() == 0;
      },
      absl::Seconds(5)))
      << "the owner still holds leases after the batch was sealed";
  ExpectNoLeaks(a, "A");
  ExpectNoLeaks(b, "B");
}

TEST_F(ManagerVerbsTest, TwoThousandSmallIdsInOneClientFetchArriveThroughSplitMessages) {
  TestNode* a = AddVerbsNode("16384");
  TestNode* b = AddVerbsNode("16384");
  ASSERT_TRUE(a && b);
  constexpr int kCount = 2048;
  // 600..1599 bytes each: a Get batch of a few hundred of them is a reply far above the verbs
  // transport's 64 KiB message_bytes, so every batch reply travels split into several messages.
  std::vector<ObjectID> ids;
  for (int i = 0; i < kCount; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("verbs-two-thousand-", i)));
    ASSERT_OK(PutTestObject(*a->client, ids.back(), i, 600 + i % 1000));
  }
  ASSERT_OK(cluster_->WaitPublished(*a, ids, absl::Seconds(30)));
  ASSERT_OK(b->client->Fetch(ids, absl::Seconds(60)));  // as an application calls it: once
  for (int i = 0; i < kCount; ++i) ASSERT_OK(CheckTestObject(*b->client, ids[i], i, 600 + i % 1000)) << i;

  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  ASSERT_OK_AND_ASSIGN(nlohmann::json a_stats, ParsedStatsVia(a->client_socket));
  SCOPED_TRACE("B stats: " + b_stats.dump() + "\nA stats: " + a_stats.dump());
  const nlohmann::json& service = a_stats.at("peer_service");
  EXPECT_EQ(service.at("gets").get<uint64_t>(), static_cast<uint64_t>(kCount));
  const uint64_t batches = service.at("fetch_batches").get<uint64_t>();
  ASSERT_GE(batches, 1u);
  EXPECT_LE(batches, 16u) << "batches, not one request per id";
  EXPECT_GT(service.at("get_bytes").get<uint64_t>() / batches, 64 * kKiB)
      << "the average Get batch reply exceeds one 64 KiB verbs message: replies were split";
  EXPECT_GT(TransportStat(b_stats, "rx_messages"), 2 * batches) << "B received the replies in fragments";
  EXPECT_EQ(b_stats.at("checksum_mismatches").get<uint64_t>(), 0u);
  EXPECT_EQ(b_stats.at("fetch_failures").get<uint64_t>(), 0u);
  ExpectNoLeaks(a, "A");
  ExpectNoLeaks(b, "B");
}

TEST_F(ManagerVerbsTest, OwnerKilledMidBatchKeepsWhatWasSealedAndFailsTheRestCleanly) {
  TestNode* a = AddVerbsNode("16384", {"--node_ttl=1s"});
  TestNode* b = AddVerbsNode("16384", {"--read_chunk_bytes=1048576"});
  ASSERT_TRUE(a && b);
  // One batch: 16 small objects inline and 8 x 4 MiB pinned in the same reply; the READs take a
  // second or more at the guest's 10-30 MB/s. The inline bytes are in hand before the kill.
  std::vector<ObjectID> ids;
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 24; ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("verbs-kill-batch-", i)));
    sizes.push_back(i < 16 ? 1000 + i : 4 * kMiB);
    ASSERT_OK(PutTestObject(*a->client, ids.back(), i, sizes.back()));
  }
  ASSERT_OK(cluster_->WaitPublished(*a, ids));

  std::vector<absl::Status> result;
  const absl::Duration deadline = absl::Seconds(20);
  const absl::Time start = absl::Now();
  std::thread fetcher([&] {
    absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b->client_socket, ids, deadline);
    result = r.ok() ? *r : std::vector<absl::Status>(ids.size(), r.status());
  });
  // Kill once B has begun reading the Pin batch (its transport counts the 1 MiB chunks it read).
  const bool reading = WaitUntilReading(b);
  const absl::Duration killed_at = absl::Now() - start;
  a->manager->Kill();
  fetcher.join();
  const absl::Duration took = absl::Now() - start;
  std::cerr << "[ manager_verbs ] SIGKILL at " << absl::FormatDuration(killed_at) << " after the batch began"
            << (reading ? " (B mid-READ)" : " (no READ seen yet)") << "; fetch returned after "
            << absl::FormatDuration(took) << "\n";
  EXPECT_TRUE(reading) << "B never started reading";
  EXPECT_LT(took, deadline + absl::Seconds(2)) << "every id answered within the fetch deadline";
  const int sealed = ExpectSealedIntactAndFailedAbsent(*b->client, ids, sizes, result);
  EXPECT_LT(sealed, static_cast<int>(ids.size())) << "the kill came before the Pin batch was sealed";
  EXPECT_GT(sealed, 0) << "the small objects came inline, before any READ";
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed, b->client->List());
  EXPECT_EQ(listed.size(), static_cast<size_t>(sealed));
  ExpectNoLeaks(b, "B");
  EXPECT_OK(StatsVia(b->client_socket).status()) << "B's manager is alive";
}

}  // namespace
}  // namespace rplasma::testing
