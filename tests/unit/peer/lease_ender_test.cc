// LeaseEnder: a reader's leases end on the ender's thread, grouped per channel, bounded, and
// drained at Stop; over a real PeerService (its lease table and store references) through an
// in-process channel.
#include "manager/peer/lease_ender.h"

#include <atomic>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "manager/peer/peer_messages.h"
#include "manager/peer/peer_service.h"
#include "protocol/base/notification.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_bytes.h"
#include "tests/support/wait_for.h"
#include "tests/unit/peer/peer_fakes.h"

namespace rplasma::peer {
namespace {

using ::rplasma::testing::WaitFor;

constexpr uint64_t kConn = 1;

class LeaseEnderTest : public ::testing::Test {
 protected:
  LeaseEnderTest() : owner_(16 << 20) {
    PeerServiceOptions options;
    options.leases.ttl = absl::Seconds(30);
    service_ = *PeerService::Create(options, &owner_, testing::ArenaRegion);
    channel_ = std::make_shared<testing::FakeChannel>(service_.get(), &owner_, kConn);
  }
  ~LeaseEnderTest() override {
    channel_.reset();
    service_->Shutdown();
  }

  // `n` objects pinned on the owner by this channel's connection: their lease ids.
  std::vector<uint64_t> Pin(int n) {
    std::vector<uint64_t> leases;
    for (int i = 0; i < n; ++i) {
      const ObjectID id = ObjectID::FromLabel(absl::StrCat("leased ", pinned_++));
      owner_.Put(id, testing::TestBytes(i, 3000));
      const std::string wire = service_->HandleCall(kConn, EncodeRequest(PinRequest{id})).Flatten();
      absl::StatusOr<PeerReplyView> reply = DecodeReply(wire);
      const auto* pin = reply.ok() ? std::get_if<PinReply>(&*reply) : nullptr;
      EXPECT_NE(pin, nullptr);
      if (pin != nullptr) leases.push_back(pin->lease_id);
    }
    return leases;
  }
  // The channel's first Call waits for `open_` (the ones after it do not).
  void HoldTheFirstCall() {
    channel_->before_call = [this] {
      if (held_calls_.fetch_add(1) == 0) open_.WaitForNotification();
    };
  }
  uint64_t LeasesLive() { return service_->stats()["leases_live"]; }

  int pinned_ = 0;
  std::atomic<int> held_calls_{0};
  Notification open_;
  testing::FakeLocalStore owner_;
  std::unique_ptr<PeerService> service_;
  std::shared_ptr<testing::FakeChannel> channel_;
};

TEST_F(LeaseEnderTest, LeasesEndOnTheEndersThreadWhileTheCallerGoesOn) {
  LeaseEnder ender(LeaseEnderOptions{}, Clock::Real());
  HoldTheFirstCall();
  ender.End(channel_, Pin(3));  // returns while the Unpin is held on the ender's thread
  EXPECT_TRUE(WaitFor([&] { return held_calls_.load() == 1; }, absl::Seconds(5)));
  EXPECT_EQ(LeasesLive(), 3u) << "nothing ended yet: the Unpin is held";
  EXPECT_EQ(owner_.total_refs(), 3);
  open_.Notify();
  EXPECT_TRUE(WaitFor([&] { return ender.ended() == 3; }, absl::Seconds(5)));
  EXPECT_EQ(LeasesLive(), 0u);
  EXPECT_EQ(owner_.total_refs(), 0) << "every lease's store reference dropped";
  EXPECT_EQ(ender.failed(), 0u);
}

TEST_F(LeaseEnderTest, WhatWaitsForOneChannelGoesOutAsOneUnpinBatch) {
  LeaseEnder ender(LeaseEnderOptions{}, Clock::Real());
  HoldTheFirstCall();
  ender.End(channel_, Pin(1));
  EXPECT_TRUE(WaitFor([&] { return held_calls_.load() == 1; }, absl::Seconds(5)));
  for (int i = 0; i < 4; ++i) ender.End(channel_, Pin(2));  // queued behind the held one
  open_.Notify();
  EXPECT_TRUE(WaitFor([&] { return ender.ended() == 9; }, absl::Seconds(5)));
  EXPECT_EQ(channel_->calls.load(), 2) << "the held Unpin, then one for the four that waited";
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(LeaseEnderTest, MoreLeasesThanOneBatchTakesAreSplit) {
  LeaseEnder ender(LeaseEnderOptions{}, Clock::Real());
  ender.End(channel_, Pin(static_cast<int>(kMaxBatchIds) + 5));
  EXPECT_TRUE(WaitFor([&] { return ender.ended() == kMaxBatchIds + 5; }, absl::Seconds(10)));
  EXPECT_EQ(channel_->calls.load(), 2) << "no UnpinBatch past kMaxBatchIds leases";
  EXPECT_EQ(LeasesLive(), 0u);
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(LeaseEnderTest, AFullQueueSendsOnTheCallersThread) {
  LeaseEnderOptions options;
  options.max_queued = 2;
  LeaseEnder ender(options, Clock::Real());
  HoldTheFirstCall();
  ender.End(channel_, Pin(2));  // taken by the thread and held there: the queue is empty again
  EXPECT_TRUE(WaitFor([&] { return held_calls_.load() == 1; }, absl::Seconds(5)));
  ender.End(channel_, Pin(2));  // waits in the queue (2 of 2)
  ender.End(channel_, Pin(1));  // no room: sent here, before End returns
  EXPECT_EQ(ender.ended(), 1u);
  EXPECT_EQ(LeasesLive(), 4u) << "the held two and the queued two";
  open_.Notify();
  EXPECT_TRUE(WaitFor([&] { return ender.ended() == 5; }, absl::Seconds(5)));
  EXPECT_EQ(owner_.total_refs(), 0);
}

TEST_F(LeaseEnderTest, AFailedUnpinIsCountedAndLeftToTheOwner) {
  LeaseEnder ender(LeaseEnderOptions{}, Clock::Real());
  channel_->fail_calls = true;
  ender.End(channel_, Pin(3));
  EXPECT_TRUE(WaitFor([&] { return ender.failed() == 3; }, absl::Seconds(5)));
  EXPECT_EQ(ender.ended(), 0u);
  EXPECT_EQ(LeasesLive(), 3u) << "the owner keeps them until their TTL or the connection's end";
  service_->OnDisconnect(kConn);
  EXPECT_EQ(owner_.total_refs(), 0) << "the connection's end drops them";
}

TEST_F(LeaseEnderTest, StopSendsWhatWaitsAndLaterLeasesEndAtOnce) {
  LeaseEnder ender(LeaseEnderOptions{}, Clock::Real());
  for (int i = 0; i < 5; ++i) ender.End(channel_, Pin(1));
  ender.Stop();
  EXPECT_EQ(ender.ended(), 5u) << "drained before Stop returned";
  ender.End(channel_, Pin(2));
  EXPECT_EQ(ender.ended(), 7u) << "after Stop, End sends on the caller's thread";
  ender.Stop();  // idempotent
  EXPECT_EQ(LeasesLive(), 0u);
  EXPECT_EQ(owner_.total_refs(), 0);
}

}  // namespace
}  // namespace rplasma::peer
