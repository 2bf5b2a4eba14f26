// Integrity sweep over verbs (label rdma-guest: runs inside tests/rdma-vm's Soft-RoCE guest, skips
// elsewhere): two real stores and managers with `--transport verbs`; objects from 1 B to 64 MiB,
// placed around the Get/Pin threshold, around the 4 MiB read chunk and at the largest Call, are
// put on A and fetched by B, first one at a time and then all in one batch, and every byte is
// checked on B (CheckTestObject). Each size goes through both paths: once with a fixed threshold
// (small ones over SEND/RECV, large ones over RDMA READ), once with threshold 0 (everything over
// RDMA READ) and once with the largest threshold (everything over SEND/RECV, except the 64 MiB
// object, which no Call can carry: the fetcher pins anything above kMaxCallBytes - 4096; in the
// batch also the 16 MiB one, as a Get batch carries at most get_batch_bytes).
// Each run ends with a leak audit on both nodes.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/peer/peer_messages.h"
#include "manager/transport/transport.h"
#include "tests/integration/verbs_cluster_test.h"

namespace rplasma::testing {
namespace {

constexpr uint64_t kFixedThreshold = 16 * kKiB;
constexpr uint64_t kReadChunk = 4 * kMiB;
constexpr uint64_t kLargestGet = peer::kMaxInlineObjectBytes;  // FetchEngine pins anything larger
constexpr uint64_t kGetBatchBytes = 8 * kMiB;  // FetchEngineOptions::get_batch_bytes (the manager's default)

const std::vector<uint64_t>& Sizes() {
  static const std::vector<uint64_t> sizes = {1,
                                              7,
                                              4095,
                                              4096,
                                              4097,
                                              kFixedThreshold - 1,
                                              kFixedThreshold,
                                              kFixedThreshold + 1,
                                              kMiB + 3,
                                              kReadChunk,
                                              kReadChunk + 1,
                                              16 * kMiB,
                                              64 * kMiB};
  return sizes;
}

uint64_t SumOfSizes() {
  uint64_t sum = 0;
  for (uint64_t s : Sizes()) sum += s;
  return sum;  // about 89 MiB
}

struct SweepMode {
  std::string name;
  uint64_t threshold;  // objects up to it go by Get (SEND/RECV), larger ones by Pin (RDMA READ)
};

// How many of Sizes() go by Get: single fetches up to the threshold (and the largest Call), and in
// a batch also no larger than a Get batch (FetchEngine pins a larger object).
uint64_t GetCount(uint64_t threshold, bool batch) {
  const uint64_t limit = batch ? kGetBatchBytes : kLargestGet;
  uint64_t n = 0;
  for (uint64_t s : Sizes()) n += s <= threshold && s <= limit;
  return n;
}

class ManagerVerbsIntegrityTest : public VerbsClusterTestOn<::testing::TestWithParam<SweepMode>> {
 protected:
  TestNode* AddVerbsNode(uint64_t threshold) {
    // Every object once, plus room for the allocator; the guest has about 1.4 GiB and each store
    // MAP_POPULATEs its arena.
    return VerbsClusterTestOn::AddVerbsNode(absl::StrCat(threshold), SumOfSizes() + 48 * kMiB,
                                            {absl::StrCat("--read_chunk_bytes=", kReadChunk)});
  }

  static uint64_t ProtocolObjects(const nlohmann::json& stats, const std::string& protocol) {
    return stats.at("by_protocol").at(protocol).at("objects").get<uint64_t>();
  }

  // No unsealed object, no reference and no lease left (within 10 s).
  static void ExpectNoLeaks(TestNode* node, const std::string& name) {
    EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10))) << name << "'s store";
    EXPECT_OK(WaitNoLeases(node->client_socket, absl::Seconds(10))) << name;
  }
};

TEST_P(ManagerVerbsIntegrityTest, EverySizeFromOneByteTo64MiBArrivesIntactSinglyAndInOneBatch) {
  const SweepMode& mode = GetParam();
  TestNode* a = AddVerbsNode(mode.threshold);
  TestNode* b = AddVerbsNode(mode.threshold);
  ASSERT_TRUE(a && b);
  ASSERT_OK_AND_ASSIGN(StatsReply b_baseline, b->client->Stats());
  const std::vector<uint64_t>& sizes = Sizes();
  std::vector<ObjectID> ids;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("verbs-sweep-", mode.name, "-", sizes[i])));
    ASSERT_OK(PutTestObject(*a->client, ids.back(), 100 + i, sizes[i])) << "size " << sizes[i];
  }
  ASSERT_OK(cluster_->WaitPublished(*a, ids, absl::Seconds(30)));

  // One at a time; 64 MiB takes 2-7 s at the guest's 10-30 MB/s.
  const absl::Duration single_timeout = absl::Seconds(60);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const absl::Time start = absl::Now();
    ASSERT_OK(b->client->Fetch({ids[i]}, single_timeout)) << mode.name << " size " << sizes[i];
    EXPECT_LT(absl::Now() - start, single_timeout) << mode.name << " size " << sizes[i];
    EXPECT_OK(CheckTestObject(*b->client, ids[i], 100 + i, sizes[i])) << mode.name << " size " << sizes[i];
  }
  ASSERT_OK_AND_ASSIGN(nlohmann::json single, ParsedStatsVia(b->client_socket));
  const uint64_t gets = GetCount(mode.threshold, /*batch=*/false);
  EXPECT_EQ(ProtocolObjects(single, "get"), gets) << single;
  EXPECT_EQ(ProtocolObjects(single, "pin"), sizes.size() - gets) << single;
  const uint64_t batch_gets = GetCount(mode.threshold, /*batch=*/true);

  // B forgets them all, then fetches them again in one batch.
  ASSERT_OK(b->client->Delete(ids));
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<StatsReply> stats = b->client->Stats();
        return stats.ok() && stats->objects_sealed == b_baseline.objects_sealed &&
               stats->used_bytes == b_baseline.used_bytes;
      },
      absl::Seconds(10)))
      << "B's store did not drop its copies";
  const absl::Duration batch_timeout = absl::Seconds(120);
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(std::vector<absl::Status> result, FetchVia(b->client_socket, ids, batch_timeout));
  EXPECT_LT(absl::Now() - start, batch_timeout);
  ASSERT_EQ(result.size(), ids.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_OK(result[i]) << mode.name << " batch, size " << sizes[i];
    EXPECT_OK(CheckTestObject(*b->client, ids[i], 100 + i, sizes[i])) << mode.name << " batch, size " << sizes[i];
  }

  ASSERT_OK_AND_ASSIGN(nlohmann::json b_stats, ParsedStatsVia(b->client_socket));
  SCOPED_TRACE("B stats: " + b_stats.dump());
  EXPECT_EQ(b_stats.at("transport"), "verbs");
  EXPECT_EQ(ProtocolObjects(b_stats, "get"), gets + batch_gets);
  EXPECT_EQ(ProtocolObjects(b_stats, "pin"), 2 * sizes.size() - gets - batch_gets);
  EXPECT_EQ(b_stats.at("by_protocol").at("get").at("bytes").get<uint64_t>() +
                b_stats.at("by_protocol").at("pin").at("bytes").get<uint64_t>(),
            2 * SumOfSizes());
  EXPECT_GT(b_stats.at("transport_stats").at("reads").get<uint64_t>(), 0u)
      << "every mode pins at least the 64 MiB object";
  EXPECT_EQ(b_stats.at("checksum_mismatches").get<uint64_t>(), 0u);
  EXPECT_EQ(b_stats.at("fetch_failures").get<uint64_t>(), 0u);
  ExpectNoLeaks(a, "A");
  ExpectNoLeaks(b, "B");
}

INSTANTIATE_TEST_SUITE_P(BothPaths, ManagerVerbsIntegrityTest,
                         ::testing::Values(SweepMode{"FixedThreshold", kFixedThreshold}, SweepMode{"AllRdmaRead", 0},
                                           SweepMode{"AllSendRecv", transport::kMaxCallBytes}),
                         [](const ::testing::TestParamInfo<SweepMode>& info) { return info.param.name; });

}  // namespace
}  // namespace rplasma::testing
