// ChannelCache over a fake transport whose channels reach a real PeerService: a peer is probed
// once in auto mode, over a channel of the probe's own that is released afterwards, so the shared
// channel that carries the transfers carries none of the probe's traffic (issue 25: the probe's
// 4 MiB replies left a TCP connection slower for later 256 KiB Gets).
#include "manager/fetch/channel_cache.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "manager/peer/peer_service.h"
#include "tests/support/fake_clock.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/fetch/fetch_fakes.h"
#include "tests/unit/peer/peer_fakes.h"

namespace rplasma::fetch {
namespace {

using ::rplasma::testing::FakeChannel;
using ::rplasma::testing::FakeLocalStore;

class AddressedDirectory : public testing::FakeDirectory {
 public:
  absl::StatusOr<NodeRecord> GetNode(const std::string& node_id) override {
    return NodeRecord{node_id, "owner:1", "", 1};
  }
};

// Connect shares one channel; ConnectPrivate makes a new one each time.
class FakeTransport : public transport::Transport {
 public:
  FakeTransport(transport::RequestHandler* handler, FakeLocalStore* owner) : handler_(handler), owner_(owner) {}
  absl::string_view name() const override { return "fake"; }
  absl::Status RegisterArena(uint8_t*, uint64_t) override { return absl::OkStatus(); }
  transport::RemoteRegion RegionFor(uint64_t offset, uint64_t length) const override { return {offset, length, 0}; }
  absl::StatusOr<std::string> Listen(const std::string&, transport::RequestHandler*) override { return "fake:0"; }
  absl::StatusOr<std::shared_ptr<transport::Channel>> Connect(const std::string&, absl::Time) override {
    if (shared == nullptr) shared = std::make_shared<FakeChannel>(handler_, owner_, 1);
    return std::shared_ptr<transport::Channel>(shared);
  }
  absl::StatusOr<std::shared_ptr<transport::Channel>> ConnectPrivate(const std::string&, absl::Time) override {
    auto channel = std::make_shared<FakeChannel>(handler_, owner_, 2 + privates.size());
    privates.push_back(channel);
    return std::shared_ptr<transport::Channel>(channel);
  }
  transport::TransportStats stats() const override { return {}; }
  void Shutdown() override {}

  std::shared_ptr<FakeChannel> shared;
  std::vector<std::weak_ptr<FakeChannel>> privates;

 private:
  transport::RequestHandler* handler_;
  FakeLocalStore* owner_;
};

class ChannelCacheTest : public ::testing::Test {
 protected:
  ChannelCacheTest() : owner_(64u << 20), local_(64u << 20) {
    service_ = *peer::PeerService::Create(peer::PeerServiceOptions{}, &owner_, testing::ArenaRegion);
    transport_ = std::make_unique<FakeTransport>(service_.get(), &owner_);
  }
  ~ChannelCacheTest() override {
    transport_.reset();
    service_->Shutdown();
  }

  std::unique_ptr<ThresholdPolicy> Policy(ThresholdSetting::Mode mode) {
    ThresholdPolicyOptions options;
    options.setting.mode = mode;
    options.setting.table.default_bytes = 65536;
    return std::make_unique<ThresholdPolicy>(options);
  }

  testing::FakeClock clock_;
  FakeLocalStore owner_;
  FakeLocalStore local_;
  std::unique_ptr<peer::PeerService> service_;
  std::unique_ptr<FakeTransport> transport_;
  AddressedDirectory directory_;
  manager::ManagerStats stats_;
};

TEST_F(ChannelCacheTest, AutoModeProbesThePeerOnceOverItsOwnChannelAndReleasesIt) {
  std::unique_ptr<ThresholdPolicy> policy = Policy(ThresholdSetting::Mode::kAuto);
  ChannelCache cache(transport_.get(), /*verbs=*/false, &directory_, policy.get(), &local_, &stats_, &clock_);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<transport::Channel> channel,
                       cache.ChannelTo("owner", clock_.Now() + absl::Seconds(5)));
  EXPECT_EQ(channel.get(), transport_->shared.get());
  EXPECT_TRUE(policy->Calibrated("owner"));
  EXPECT_EQ(stats_.calibrations.load(), 1u);
  ASSERT_EQ(transport_->privates.size(), 1u) << "one channel of the probe's own";
  EXPECT_TRUE(transport_->privates[0].expired()) << "released once the probe is done";
  EXPECT_EQ(transport_->shared->calls.load(), 0) << "no probe traffic on the shared channel";
  EXPECT_EQ(transport_->shared->reads.load(), 0);
  EXPECT_EQ(service_->stats()["leases_live"], 0u);
  // Calibrated: the next channel request probes nothing.
  ASSERT_OK(cache.ChannelTo("owner", clock_.Now() + absl::Seconds(5)).status());
  EXPECT_EQ(transport_->privates.size(), 1u);
  EXPECT_EQ(stats_.calibrations.load(), 1u);
}

TEST_F(ChannelCacheTest, FixedModeOpensNoProbeChannel) {
  std::unique_ptr<ThresholdPolicy> policy = Policy(ThresholdSetting::Mode::kFixed);
  ChannelCache cache(transport_.get(), /*verbs=*/false, &directory_, policy.get(), &local_, &stats_, &clock_);
  ASSERT_OK(cache.ChannelTo("owner", clock_.Now() + absl::Seconds(5)).status());
  EXPECT_TRUE(transport_->privates.empty());
  EXPECT_EQ(stats_.calibrations.load(), 0u);
}

}  // namespace
}  // namespace rplasma::fetch
