// Real network faults between two nodes over TCP: each node's manager runs inside its own network
// namespace (`ip netns exec`), the two joined by a veth pair; nftables rules inside the requester's
// namespace drop the owner's packets — all of them (a full partition) or a random 20%
// (`numgen random mod 100 < 20`). Fetches end by their deadline with intact data or an error,
// succeed again once the rules are gone, and nothing leaks (leases, store references, fds).
//
// The two namespaces, the links and Redis: netns_pair.h.
//
// Needs root, iproute2 and nftables; says which is missing and skips.
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/process_fds.h"
#include "tests/integration/netns_pair.h"

namespace rplasma::testing {
namespace {

constexpr uint64_t kThreshold = 64u << 10;
constexpr int kObjects = 16;  // half below the pin threshold (Get), half above (Pin -> Read -> Unpin)
constexpr absl::Duration kLeaseTtl = absl::Seconds(2);
constexpr absl::Duration kFetchTimeout = absl::Seconds(1);
constexpr absl::Duration kSlack = absl::Milliseconds(500);  // the Unix-socket round trip, a loaded host
// After the rules go, fetches must succeed again within this. A connection the loss left in TCP's
// backed-off retransmissions may stay silent for up to the dead-peer timeout (30 s); new fetches
// leave it for a fresh one after TcpTuning::retire_stalled_after (2 s).
constexpr absl::Duration kHealBound = absl::Seconds(10);

uint64_t SizeOf(int i) { return i % 2 == 0 ? 100 + i * 3000 : kThreshold + 1 + i * 100000; }

std::string LogTail(const std::string& path) {
  const std::string log = bench::ReadWholeFile(path);
  return log.size() > 3000 ? log.substr(log.size() - 3000) : log;
}

class NetnsFaultTest : public NetnsPairTest {
 protected:
  void SetUp() override {
    NetnsPairTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(StartNode(/*a=*/true, "owner", absl::StrCat(kThreshold),
                        {absl::StrCat("--lease_ttl=", absl::FormatDuration(kLeaseTtl))}));
    ASSERT_OK(StartNode(/*a=*/false, "requester", absl::StrCat(kThreshold), {}));
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
                                      << LogTail(b_.manager_log);
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
  int ManagerFds(const TestNode& node) {
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
    for (TestNode* node : {&a_, &b_}) {
      EXPECT_OK(WaitStoreReleasedEverything(*node->client, absl::Seconds(10))) << node->name << "'s store";
    }
    EXPECT_TRUE(
        WaitFor([&] { return ManagerFds(a_) <= owner_fds_ && ManagerFds(b_) <= requester_fds_; }, absl::Seconds(30)))
        << "owner manager fds (baseline " << owner_fds_ << "):\n"
        << bench::DescribeOpenFds(a_.manager->pid()) << "requester manager fds (baseline " << requester_fds_ << "):\n"
        << bench::DescribeOpenFds(b_.manager->pid());
  }

  std::vector<ObjectID> ids_;
  int owner_fds_ = -1;
  int requester_fds_ = -1;
};

TEST_F(NetnsFaultTest, FullPartitionFailsFetchesByTheirDeadlineAndHealingRestoresThem) {
  const std::string owner = OwnerAddress();
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
  const std::string owner = OwnerAddress();
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
