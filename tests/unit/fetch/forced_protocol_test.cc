// A fetch whose caller forces the peer protocol (FetchCall::protocol): every transfer it leads
// goes that way whatever the threshold says, the stats count it as forced, and the auto policy
// learns nothing from it. Part of fetch_unit_test (FetchEngineTest's fixture).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "tests/support/status_matchers.h"
#include "tests/unit/fetch/fetch_engine_fixture.h"

namespace rplasma::fetch {
namespace {

class ForcedProtocolTest : public FetchEngineTest {
 protected:
  ForcedProtocolTest() {
    ThresholdPolicyOptions policy_options;
    policy_options.setting.mode = ThresholdSetting::Mode::kAuto;
    policy_options.setting.table.default_bytes = 4096;
    policy_options.explore_every = 1;  // the policy alone would explore at every chance
    UsePolicy(policy_options);
  }

  // `n` objects of `size` bytes put on "b", fetched here with `protocol` forced; their bytes checked.
  void FetchForced(const std::string& label, int n, size_t size, PeerProtocol protocol) {
    std::vector<ObjectID> ids;
    for (int k = 0; k < n; ++k) {
      ids.push_back(ObjectID::FromLabel(absl::StrCat(label, " ", k)));
      PutRemote(ids.back(), testing::TestBytes(k, size));
    }
    for (const absl::Status& s : engine_->Fetch(ids, absl::Seconds(5), FetchCall{"", false, protocol})) ASSERT_OK(s);
    for (int k = 0; k < n; ++k) EXPECT_EQ(local_.Bytes(ids[k]), testing::TestBytes(k, size)) << label << " " << k;
  }

  nlohmann::json Stats() { return nlohmann::json::parse(stats_.ToJson({})); }
};

TEST_F(ForcedProtocolTest, ABatchGoesByTheForcedProtocolOnBothSidesOfTheThreshold) {
  FetchForced("small by pin", 20, 1000, PeerProtocol::kPin);  // <= 4 KiB: Get by the threshold
  EXPECT_EQ(service_->stats()["pins"], 20u);
  EXPECT_EQ(service_->stats()["gets"], 0u);
  FetchForced("large by get", 20, 9000, PeerProtocol::kGet);  // > 4 KiB: Pin by the threshold
  EXPECT_EQ(service_->stats()["gets"], 20u);
  EXPECT_EQ(service_->stats()["pins"], 20u) << "no more pins";
  EXPECT_EQ(owner_.total_refs(), 0) << "no lease left behind";
  const nlohmann::json json = Stats();
  EXPECT_EQ(json.at("by_protocol").at("get").at("forced_objects"), 20) << json;
  EXPECT_EQ(json.at("by_protocol").at("pin").at("forced_objects"), 20) << json;
  EXPECT_EQ(json.at("explored_transfers"), 0) << "nothing decided, so nothing explored";
  const nlohmann::json& recent = json.at("recent_fetches");
  ASSERT_EQ(recent.size(), 2u) << recent;
  EXPECT_EQ(recent[0].at("why"), "batch of 20: by pin, as the caller asked") << recent;
  EXPECT_EQ(recent[1].at("protocol"), "get");
}

TEST_F(ForcedProtocolTest, ASingleObjectGoesByTheForcedProtocolAndSaysWhy) {
  FetchForced("one small", 1, 1000, PeerProtocol::kPin);
  FetchForced("one large", 1, 300000, PeerProtocol::kGet);
  EXPECT_EQ(service_->stats()["pins"], 1u);
  EXPECT_EQ(service_->stats()["gets"], 1u);
  const nlohmann::json recent = Stats().at("recent_fetches");
  ASSERT_EQ(recent.size(), 2u) << recent;
  EXPECT_EQ(recent[0].at("protocol"), "pin");
  EXPECT_EQ(recent[0].at("why"), "the caller asked for pin");
  EXPECT_EQ(recent[1].at("protocol"), "get");
}

TEST_F(ForcedProtocolTest, ForcedTransfersTeachThePolicyNothing) {
  FetchForced("single", 1, 3000, PeerProtocol::kPin);
  FetchForced("batch", 20, 3000, PeerProtocol::kPin);
  FetchForced("batch by get", 20, 9000, PeerProtocol::kGet);
  const auto explained = policy_->Explain();
  if (const auto it = explained.find("b"); it != explained.end()) {
    EXPECT_TRUE(it->second.estimates.empty());
    for (const PeerExplanation& c : it->second.batches) EXPECT_TRUE(c.estimates.empty()) << c.objects;
  }
  // The same fetch left to the policy does teach it (so the check above could fail).
  std::vector<ObjectID> ids;
  for (int k = 0; k < 20; ++k) {
    ids.push_back(ObjectID::FromLabel(absl::StrCat("by the policy ", k)));
    PutRemote(ids.back(), testing::TestBytes(k, 3000));
  }
  for (const absl::Status& s : engine_->Fetch(ids, absl::Seconds(5))) ASSERT_OK(s);
  const PeerExplanation e = policy_->Explain().at("b");
  ASSERT_EQ(e.batches.size(), 1u);
  EXPECT_FALSE(e.batches[0].estimates.empty());
}

}  // namespace
}  // namespace rplasma::fetch
