// The auto calibration against a peer that answers its probes with garbage, with the wrong kind
// of reply, with hostile sizes, or never (issue 25): a clear error within the deadline, the scratch
// object aborted, and the policy left on its start value.
#include "manager/fetch/threshold_prober.h"

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "manager/peer/peer_messages.h"
#include "tests/support/fake_clock.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/peer/peer_fakes.h"

namespace rplasma::fetch {
namespace {

using ::rplasma::testing::FakeLocalStore;
using ::rplasma::testing::HasErrorCode;

// A channel whose every Call is answered by `answer` (the request's bytes in, the reply's out).
class ScriptedChannel : public transport::Channel {
 public:
  using Answer = std::function<absl::StatusOr<std::string>(absl::string_view request)>;
  explicit ScriptedChannel(Answer answer) : answer_(std::move(answer)) {}
  absl::StatusOr<std::string> Call(absl::string_view request, absl::Time deadline) override { return answer_(request); }
  absl::Status Read(const transport::RemoteRegion& region, uint8_t* dst, absl::Time deadline) override {
    return absl::OkStatus();
  }
  bool healthy() const override { return true; }
  const std::string& peer_address() const override { return address_; }

 private:
  Answer answer_;
  std::string address_ = "scripted";
};

class ThresholdProberTest : public ::testing::Test {
 protected:
  ThresholdProberTest() : store_(16u << 20) {}

  // Probes through `answer`; checks the scratch object is gone whatever happened.
  absl::Status Probe(ScriptedChannel::Answer answer) {
    ScriptedChannel channel(std::move(answer));
    absl::StatusOr<std::vector<ProbeSample>> samples =
        ProbeThreshold(channel, store_, clock_.Now() + absl::Seconds(5), clock_);
    EXPECT_EQ(store_.unsealed(), 0) << "the probe's scratch object was aborted";
    EXPECT_EQ(store_.total_refs(), 0);
    return samples.status();
  }

  testing::FakeClock clock_;
  FakeLocalStore store_;
};

TEST_F(ThresholdProberTest, GarbageRepliesAreAProtocolError) {
  for (const std::string& garbage : {std::string("nonsense"), std::string(100, '\0'), std::string()}) {
    EXPECT_THAT(Probe([&](absl::string_view) { return garbage; }), HasErrorCode(ErrorCode::kProtocolError));
  }
}

TEST_F(ThresholdProberTest, AWellFormedReplyOfTheWrongKindOrSizeIsAProtocolError) {
  // A Pin reply to the Get probe.
  const std::string pin = peer::EncodePinReply(peer::PinReply{});
  EXPECT_THAT(Probe([&](absl::string_view) { return pin; }), HasErrorCode(ErrorCode::kProtocolError));
  // A Get reply of another size than asked (a hostile peer claiming less, or more).
  const std::vector<uint8_t> ten(10, 'x');
  ObjectDescription ten_bytes;
  ten_bytes.data_size = ten.size();
  const std::string short_get = peer::EncodeGetReply(ten_bytes, ten, {});
  EXPECT_THAT(Probe([&](absl::string_view) { return short_get; }), HasErrorCode(ErrorCode::kProtocolError));
}

TEST_F(ThresholdProberTest, APeerThatNeverAnswersFailsByTheDeadline) {
  // The transport ends a Call that gets no answer with kDeadlineExceeded (transport.h).
  int calls = 0;
  EXPECT_THAT(Probe([&](absl::string_view) -> absl::StatusOr<std::string> {
                ++calls;
                return MakeError(ErrorCode::kDeadlineExceeded, "no answer");
              }),
              HasErrorCode(ErrorCode::kDeadlineExceeded));
  EXPECT_EQ(calls, 1) << "the first unanswered probe ends the calibration";
}

TEST_F(ThresholdProberTest, AFailedProbeLeavesThePolicyOnItsStartValue) {
  ThresholdPolicyOptions options;
  options.setting.mode = ThresholdSetting::Mode::kAuto;
  options.setting.table.default_bytes = 65536;
  options.explore_every = 0;  // Choose then says what the threshold alone decides
  ThresholdPolicy policy(options);
  ASSERT_FALSE(Probe([](absl::string_view) { return std::string("garbage"); }).ok());
  // ChannelCache::MaybeCalibrate calibrates only with samples: the policy is not touched.
  EXPECT_FALSE(policy.Calibrated("peer"));
  EXPECT_EQ(policy.ThresholdFor("peer"), 65536u);
  EXPECT_EQ(policy.Choose("peer", 65536), peer::PeerProtocol::kGet);
  EXPECT_EQ(policy.Choose("peer", 65537), peer::PeerProtocol::kPin);
}

}  // namespace
}  // namespace rplasma::fetch
