// The automatic protocol switch follows a change of the link (issue 25), with real processes: the
// requester's manager (`--pin-threshold=auto`) fetches objects of three sizes from the owner, one
// at a time, over a veth between two network namespaces (netns_pair.h). Mid-run, every packet the
// requester sends the owner that carries a request (TCP PSH set: a bare ACK never has it) is
// shaped to a low rate (an HTB class, chosen by an nftables rule setting the packet's priority):
// each request now waits on the wire while the data and the ACKs flow as before. A Pin costs three
// requests (FetchBatch, Read, Unpin) where a Get costs one, so Get becomes the better protocol at
// every size of the run (2.5-4x), and the threshold must rise above the largest within a bound of
// traffic, stay there, and say why; with the shaping gone it must come down again. Two shapes:
//   * 16 kbit/s (~75 ms a request) with 1, 4 and 16 MiB: a change so large that Get wins even at
//     16 MiB (which it copies for 66-90 ms here); a transfer then takes 100-400 ms;
//   * 120 kbit/s (~10 ms a request) with 256 KiB, 1 and 4 MiB: transfers of 10-35 ms, as a link
//     that is busy but not crawling carries them, so that "within 1 s of traffic" (the issue's
//     target) can be seen on the clock as well as counted (the way up only: see Shape).
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include <gtest/gtest.h>

#include "tests/integration/netns_pair.h"

namespace rplasma::testing {
namespace {

// One shape of the slower request path, and the sizes the run moves (smallest first).
struct Shape {
  const char* rate;  // tc's notation
  std::vector<uint64_t> sizes;
  // Whether the healed link must bring the threshold below the largest size: only where Pin then
  // wins there by far (16 MiB: Pin 8 ms against Get 66-90 ms). At 4 MiB they are within 1.3x of
  // each other here, inside the hysteresis, and the threshold may stay.
  bool comes_back;
};
// How long the threshold may take to follow, counted in transfers after the change (the issue's
// target is 1 s of traffic; the policy counts transfers, and a shaped one here takes 10-400 ms).
constexpr int kFollowTransfers = 400;
// After following, it must hold for this many transfers.
constexpr int kHoldTransfers = 100;

class NetnsLinkChangeTest : public NetnsPairTest {
 protected:
  void SetUp() override {
    NetnsPairTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(StartNode(/*a=*/true, "owner", "65536", {}));
    ASSERT_OK(StartNode(/*a=*/false, "requester", "auto", {}));
    ASSERT_OK_AND_ASSIGN(owner_id_, a_.client->ManagerNodeId());
  }

  // The owner puts one object of each size; B fetches them once (the manager calibrates).
  void PutObjects(const std::vector<uint64_t>& sizes) {
    sizes_ = sizes;
    for (size_t i = 0; i < sizes_.size(); ++i) {
      ids_.push_back(ObjectID::FromLabel(absl::StrCat("link-change-", i)));
      ASSERT_OK(PutTestObject(*a_.client, ids_[i], i, sizes_[i]));
    }
    ASSERT_OK(FetchVia(b_.client_socket, ids_, absl::Seconds(20)).status());
    ASSERT_OK(b_.client->Delete(ids_));
  }

  // One transfer: object `i` fetched on B (intact), then deleted there.
  void FetchOne(size_t i) {
    ASSERT_OK(b_.client->Fetch({ids_[i]}, absl::Seconds(20)));
    ASSERT_OK(CheckTestObject(*b_.client, ids_[i], i, sizes_[i]));
    ASSERT_OK(b_.client->Delete({ids_[i]}));
  }

  nlohmann::json Stats() {
    absl::StatusOr<nlohmann::json> stats = ParsedStatsVia(b_.client_socket);
    EXPECT_OK(stats.status());
    return stats.ok() ? *stats : nlohmann::json::object();
  }
  uint64_t Threshold() {
    const nlohmann::json stats = Stats();
    return stats.contains("peer_thresholds") && stats["peer_thresholds"].contains(owner_id_)
               ? stats["peer_thresholds"][owner_id_].get<uint64_t>()
               : 0;
  }
  std::string Policy() { return Stats()["peer_policy"][owner_id_].dump(); }

  // Fetches the sizes in turn until `done(threshold)` or `limit` transfers; the transfers it took
  // (limit + 1 if never).
  template <typename Done>
  int FetchUntil(Done done, int limit) {
    const int count = static_cast<int>(sizes_.size());
    for (int n = 0; n < limit; ++n) {
      FetchOne(n % count);
      if (HasFatalFailure()) return limit + 1;
      if (n % count == count - 1 && done(Threshold())) return n + 1;
    }
    return limit + 1;
  }

  // Requests from B to A (the packets that carry data: PSH set; bare ACKs never have it) through a
  // class of `rate` with no burst to speak of.
  absl::Status ShapeRequests(const char* rate) {
    const std::string dev = absl::StrCat("rp", ::getpid(), "pb");
    RETURN_IF_ERROR(ns_b_->Tc(absl::StrCat("qdisc add dev ", dev, " root handle 1: htb default 20 r2q 1")));
    RETURN_IF_ERROR(ns_b_->Tc(
        absl::StrCat("class add dev ", dev, " parent 1: classid 1:10 htb rate ", rate, " burst 64b cburst 64b")));
    RETURN_IF_ERROR(ns_b_->Tc(absl::StrCat("class add dev ", dev, " parent 1: classid 1:20 htb rate 10gbit")));
    return ns_b_->Nft(absl::StrCat("add rule inet rplasma output ip daddr ", OwnerAddress(),
                                   " tcp flags & psh == psh meta priority set 1:10"));
  }
  absl::Status Unshape() {
    RETURN_IF_ERROR(ns_b_->FlushRules());
    return ns_b_->Tc(absl::StrCat("qdisc del dev rp", ::getpid(), "pb root"));
  }

  // The run: settle on the healthy link, shape the requests, follow, hold, heal (and follow back).
  void FollowAndComeBack(const Shape& shape);

  std::string owner_id_;
  std::vector<uint64_t> sizes_;
  std::vector<ObjectID> ids_;
};

void NetnsLinkChangeTest::FollowAndComeBack(const Shape& shape) {
  PutObjects(shape.sizes);
  if (HasFatalFailure()) return;
  const uint64_t largest = sizes_.back();
  const int count = static_cast<int>(sizes_.size());
  // Healthy: settle, and see where the switch stands.
  FetchUntil([](uint64_t) { return false; }, 20 * count);
  const uint64_t healthy = Threshold();
  std::cout << "healthy link: threshold " << healthy << "\n" << Policy() << std::endl;
  if (healthy >= largest) GTEST_SKIP() << "Get already wins at every size here: no move to see";

  ASSERT_OK(ShapeRequests(shape.rate));
  const absl::Time shaped = absl::Now();
  const int followed = FetchUntil([&](uint64_t t) { return t >= largest; }, kFollowTransfers);
  std::cout << "shaped: threshold " << Threshold() << " after " << followed << " transfers ("
            << absl::FormatDuration(absl::Now() - shaped) << ")\n"
            << Policy() << std::endl;
  EXPECT_LE(followed, kFollowTransfers) << "the threshold did not rise above " << largest << ": " << Policy();
  const int fell = FetchUntil([&](uint64_t t) { return t < largest; }, kHoldTransfers);
  EXPECT_GT(fell, kHoldTransfers) << "the threshold fell back while the link stayed slow: " << Policy();
  // The explanation names the estimates behind the move, and the recent transfers went by it: Get
  // for every size (the threshold is above them all), Pin only to explore, and each says so.
  const nlohmann::json stats = Stats();
  const nlohmann::json& policy = stats["peer_policy"][owner_id_];
  EXPECT_GE(policy["flips"].get<uint64_t>(), 2u) << "calibrated, then raised";
  EXPECT_GE(policy["link_changes"].get<uint64_t>(), 1u) << "it saw the link change";
  EXPECT_NE(policy["reason"].get<std::string>().find("raised: Get"), std::string::npos) << policy.dump();
  int gets = 0;
  for (const nlohmann::json& fetch : stats["recent_fetches"]) {
    const std::string why = fetch["why"].get<std::string>();
    if (fetch["protocol"] == "get") {
      ++gets;
      EXPECT_NE(why.find(" <= the threshold "), std::string::npos) << fetch.dump();
    } else {
      EXPECT_NE(why.find("exploring"), std::string::npos) << fetch.dump();
    }
  }
  EXPECT_GE(gets, 24) << "of the last 32 transfers: " << stats["recent_fetches"].dump();

  ASSERT_OK(Unshape());
  if (!shape.comes_back) return;
  const absl::Time healed = absl::Now();
  const int back = FetchUntil([&](uint64_t t) { return t < largest; }, kFollowTransfers);
  std::cout << "healed: threshold " << Threshold() << " after " << back << " transfers ("
            << absl::FormatDuration(absl::Now() - healed) << ")\n"
            << Policy() << std::endl;
  EXPECT_LE(back, kFollowTransfers) << "the threshold did not come down: " << Policy();
}

TEST_F(NetnsLinkChangeTest, TheThresholdFollowsACrawlingRequestPathAndComesBack) {
  FollowAndComeBack(Shape{"16kbit", {1u << 20, 4u << 20, 16u << 20}, /*comes_back=*/true});
}

TEST_F(NetnsLinkChangeTest, TheThresholdFollowsABusyRequestPath) {
  FollowAndComeBack(Shape{"120kbit", {256u << 10, 1u << 20, 4u << 20}, /*comes_back=*/false});
}

}  // namespace
}  // namespace rplasma::testing
