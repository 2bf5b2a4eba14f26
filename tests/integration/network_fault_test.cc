// Network faults at the transport seam: the requesting node's manager is faulty-manager
// (tests/support/fault_injecting_transport.h), which loses 20% of its peer messages and delays the
// rest by 0-50 ms. Hundreds of fetches, single and batched, on both sides of the pin threshold,
// each end by their deadline with intact data or an error; after the requester restarts without
// faults every fetch succeeds; leases, store references and manager fds come back to baseline.
//
// The seed is printed; RPLASMA_FAULT_SEED=N replays its draws (thread timing still varies).
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/process_fds.h"
#include "tests/integration/manager_test_cluster.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

constexpr uint64_t kThreshold = 64u << 10;
constexpr int kObjects = 48;  // half below the pin threshold (Get), half above (Pin -> Read -> Unpin)
constexpr int kThreads = 4;
constexpr int kRoundsPerThread = 60;
constexpr absl::Duration kLeaseTtl = absl::Seconds(2);
constexpr absl::Duration kFetchTimeout = absl::Milliseconds(750);
// What a fetch may take beyond its deadline: the Unix-socket round trip and a loaded 2-core host.
constexpr absl::Duration kSlack = absl::Seconds(1);
// The healed phase's deadline: every fetch must succeed there, the first over a new channel.
constexpr absl::Duration kHealedFetchTimeout = absl::Seconds(5);

uint64_t SizeOf(int i) { return i % 2 == 0 ? 100 + i * 1300 : kThreshold + 1 + i * 40000; }

uint64_t FaultSeed() {
  const char* env = std::getenv("RPLASMA_FAULT_SEED");
  if (env != nullptr) return std::strtoull(env, nullptr, 10);
  return static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
}

class NetworkFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RPLASMA_SKIP_IF_NO_REDIS_SERVER();
    ASSERT_OK_AND_ASSIGN(cluster_, ManagerTestCluster::Start());
    TestNodeOptions owner;
    owner.name = "owner";
    owner.extra_manager_args = {absl::StrCat("--lease_ttl=", absl::FormatDuration(kLeaseTtl))};
    ASSERT_OK_AND_ASSIGN(a_, cluster_->AddNode(owner));
    seed_ = FaultSeed();
    std::cout << "fault seed " << seed_ << " (RPLASMA_FAULT_SEED replays it)" << std::endl;
    RecordProperty("fault_seed", std::to_string(seed_));
    faulty_.name = "requester";
    faulty_.manager_binary = FAULTY_MANAGER;
    faulty_.extra_manager_args = {"--loss=0.2", "--min_delay=0ms", "--max_delay=50ms",
                                  absl::StrCat("--fault_seed=", seed_)};
    ASSERT_OK_AND_ASSIGN(b_, cluster_->AddNode(faulty_));
    for (int i = 0; i < kObjects; ++i) {
      ids_.push_back(ObjectID::FromLabel(absl::StrCat("network-fault-", i)));
      ASSERT_OK(PutTestObject(*a_->client, ids_[i], i, SizeOf(i)));
    }
    ASSERT_OK(cluster_->WaitPublished(*a_, ids_));
  }

  // Fetches ids_[k] for each k in `which` on B and checks each outcome: ended by the deadline;
  // fetched = intact in B's store (then deleted there, so the next round fetches it again);
  // failed = absent. Counts outcomes in ok_ / failed_.
  void FetchAndCheck(const std::vector<int>& which, absl::Duration timeout = kFetchTimeout) {
    std::vector<ObjectID> asked;
    for (int k : which) asked.push_back(ids_[k]);
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<absl::Status>> result = FetchVia(b_->client_socket, asked, timeout);
    const absl::Duration took = absl::Now() - start;
    EXPECT_LE(took, timeout + kSlack) << "a fetch of " << asked.size() << " ids ended past its deadline";
    ASSERT_OK(result.status()) << "the manager answers every fetch";
    ASSERT_EQ(result->size(), asked.size());
    for (size_t j = 0; j < asked.size(); ++j) {
      const int k = which[j];
      if ((*result)[j].ok()) {
        ok_.fetch_add(1);
        EXPECT_OK(CheckTestObject(*b_->client, ids_[k], k, SizeOf(k))) << "object " << k;
        EXPECT_OK(b_->client->Delete({ids_[k]}));
      } else {
        failed_.fetch_add(1);
        absl::StatusOr<bool> present = b_->client->Contains(ids_[k]);
        ASSERT_OK(present.status());
        EXPECT_FALSE(*present) << "object " << k << " failed (" << (*result)[j] << ") but is in B's store";
      }
    }
  }

  // The manager's client socket closes a finished connection at its next accept: counted right
  // after two stats requests, a manager holds exactly one (the second's) besides its own fds.
  int ManagerFds(const TestNode* node) {
    for (int i = 0; i < 2; ++i) (void)StatsVia(node->client_socket);
    return bench::CountOpenFds(node->manager->pid());
  }

  uint64_t OwnerLeases() {
    absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(a_->client_socket);
    return stats.ok() ? stats->at("peer_service").at("leases_live").get<uint64_t>() : ~0ull;
  }

  void ExpectStoreAtBaseline(TestNode* node) {
    EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10))) << node->name << "'s store";
  }

  std::unique_ptr<ManagerTestCluster> cluster_;
  TestNode* a_ = nullptr;
  TestNode* b_ = nullptr;
  TestNodeOptions faulty_;
  uint64_t seed_ = 0;
  std::vector<ObjectID> ids_;
  std::atomic<int> ok_{0};
  std::atomic<int> failed_{0};
};

TEST_F(NetworkFaultTest, LossyDelayedFetchesEndByTheirDeadlineIntactOrFailedAndNothingLeaks) {
  // Warm-up: one small and one large object through the lossy network, so the channel between the
  // managers exists when the fd baselines are taken.
  bool warm = false;
  for (int attempt = 0; attempt < 50 && !warm; ++attempt) {
    absl::StatusOr<std::vector<absl::Status>> r = FetchVia(b_->client_socket, {ids_[0], ids_[1]}, kFetchTimeout);
    ASSERT_OK(r.status());
    warm = (*r)[0].ok() && (*r)[1].ok();
  }
  ASSERT_TRUE(warm) << "no fetch got through 20% loss in 50 attempts";
  ASSERT_OK(b_->client->Delete({ids_[0], ids_[1]}));
  const int owner_fds = ManagerFds(a_);
  const int requester_fds = ManagerFds(b_);
  ASSERT_GT(owner_fds, 0);
  ASSERT_GT(requester_fds, 0);
  const std::string owner_fds_were = bench::DescribeOpenFds(a_->manager->pid());
  const std::string requester_fds_were = bench::DescribeOpenFds(b_->manager->pid());

  // Thread t owns the ids Owned(t, j), j < 12 (six pairs of a Get-sized and a Pin-sized one), so
  // a delete never races another thread's check. Every third round is a batch of four of them (two
  // of each kind), the others are single fetches.
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      constexpr int kOwned = kObjects / kThreads;
      auto owned = [t](int j) { return 2 * (t + kThreads * ((j % kOwned) / 2)) + j % 2; };
      for (int round = 0; round < kRoundsPerThread; ++round) {
        if (round % 3 == 2) {
          FetchAndCheck({owned(round), owned(round + 1), owned(round + 2), owned(round + 3)});
        } else {
          FetchAndCheck({owned(round)});
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::cout << "under faults: " << ok_.load() << " objects fetched, " << failed_.load() << " failed" << std::endl;
  EXPECT_GT(ok_.load(), 0) << "some fetches get through 20% loss";
  EXPECT_GT(failed_.load(), 0) << "20% loss fails some fetches (is the fault injection on?)";

  // Leak audit under faults: leases lapse on the owner, no reference or unsealed object anywhere,
  // and both managers back to their fds.
  EXPECT_TRUE(WaitFor([&] { return OwnerLeases() == 0; }, kLeaseTtl + absl::Seconds(5)))
      << "owner leases: " << OwnerLeases();
  ExpectStoreAtBaseline(a_);
  ExpectStoreAtBaseline(b_);
  EXPECT_TRUE(
      WaitFor([&] { return ManagerFds(a_) <= owner_fds && ManagerFds(b_) <= requester_fds; }, absl::Seconds(10)))
      << "owner manager fds now:\n"
      << bench::DescribeOpenFds(a_->manager->pid()) << "were:\n"
      << owner_fds_were << "requester manager fds now:\n"
      << bench::DescribeOpenFds(b_->manager->pid()) << "were:\n"
      << requester_fds_were;

  // Healed: the requester restarts without faults, and every fetch succeeds.
  TestNodeOptions healthy = faulty_;
  healthy.manager_binary = "";
  healthy.extra_manager_args.clear();
  ASSERT_OK(cluster_->RestartManager(b_, healthy));
  ok_ = 0;
  failed_ = 0;
  for (int k = 0; k < kObjects; ++k) FetchAndCheck({k}, kHealedFetchTimeout);
  std::vector<int> all;
  for (int k = 0; k < kObjects; ++k) all.push_back(k);
  FetchAndCheck(all, kHealedFetchTimeout);
  EXPECT_EQ(ok_.load(), 2 * kObjects);
  EXPECT_EQ(failed_.load(), 0);
  EXPECT_TRUE(WaitFor([&] { return OwnerLeases() == 0; }, kLeaseTtl + absl::Seconds(5)))
      << "owner leases: " << OwnerLeases();
  ExpectStoreAtBaseline(a_);
  ExpectStoreAtBaseline(b_);
  // The restarted requester's one channel replaced the old one on the owner.
  EXPECT_TRUE(WaitFor([&] { return ManagerFds(a_) <= owner_fds; }, absl::Seconds(10)))
      << "owner manager fds now:\n"
      << bench::DescribeOpenFds(a_->manager->pid()) << "were:\n"
      << owner_fds_were;
}

}  // namespace
}  // namespace rplasma::testing
