#include "manager/fetch/threshold_policy.h"

#include <gtest/gtest.h>

namespace rplasma::fetch {
namespace {

ThresholdPolicyOptions Options(ThresholdSetting::Mode mode, uint64_t default_bytes) {
  ThresholdPolicyOptions options;
  options.setting.mode = mode;
  options.setting.table.default_bytes = default_bytes;
  options.explore_every = 0;
  return options;
}

TEST(ThresholdPolicyTest, FixedThresholdSplitsBySizeWithPerPeerOverrides) {
  ThresholdPolicyOptions options = Options(ThresholdSetting::Mode::kFile, 65536);
  options.setting.table.per_peer["slow"] = 4096;
  ThresholdPolicy policy(options);
  EXPECT_EQ(policy.Choose("a", 65536), PeerProtocol::kGet);
  EXPECT_EQ(policy.Choose("a", 65537), PeerProtocol::kPin);
  EXPECT_EQ(policy.Choose("slow", 8192), PeerProtocol::kPin);
  EXPECT_EQ(policy.ThresholdFor("slow"), 4096u);
  // Observations never move a fixed threshold.
  for (int i = 0; i < 50; ++i) policy.Observe("a", PeerProtocol::kGet, 100000, absl::Microseconds(1));
  EXPECT_EQ(policy.ThresholdFor("a"), 65536u);
}

TEST(ThresholdPolicyTest, FileLinesByNodeNameApplyToEveryStartOfThatNode) {
  ThresholdPolicyOptions options = Options(ThresholdSetting::Mode::kFile, 65536);
  options.setting.table.per_peer["rank1"] = 4096;
  options.setting.table.per_peer["rank2.0000beef"] = 1u << 20;
  ThresholdPolicy policy(options);
  EXPECT_EQ(policy.mode(), ThresholdSetting::Mode::kFile);
  EXPECT_EQ(policy.default_threshold(), 65536u);
  // Node ids are name + "." + a suffix that changes when the peer's manager restarts.
  EXPECT_EQ(policy.ThresholdFor("rank1.3fa9c2d1"), 4096u);
  EXPECT_EQ(policy.Choose("rank1.3fa9c2d1", 8192), PeerProtocol::kPin);
  EXPECT_EQ(policy.Choose("rank1.0badf00d", 4096), PeerProtocol::kGet) << "rank1 after a restart";
  EXPECT_EQ(policy.Choose("rank1.0badf00d", 4097), PeerProtocol::kPin);
  EXPECT_EQ(policy.Choose("rank2.0000beef", 1u << 20), PeerProtocol::kGet) << "exact id";
  EXPECT_EQ(policy.Choose("rank2.12345678", 1u << 20), PeerProtocol::kPin) << "another rank2: default";
  EXPECT_EQ(policy.Choose("rank3.3fa9c2d1", 65536), PeerProtocol::kGet);
  const std::map<std::string, uint64_t> snapshot = policy.Snapshot();
  EXPECT_EQ(snapshot.at("rank1.0badf00d"), 4096u);
  EXPECT_EQ(snapshot.at("rank3.3fa9c2d1"), 65536u);
}

TEST(ThresholdPolicyTest, CalibrationPicksTheProbeCrossover) {
  ThresholdPolicy policy(Options(ThresholdSetting::Mode::kAuto, 65536));
  EXPECT_FALSE(policy.Calibrated("b"));
  std::vector<ProbeSample> samples;
  for (uint64_t bytes = 4096; bytes <= (4u << 20); bytes *= 4) {
    // Get: 10us + 1ns/B; Pin: 40us + 0.25ns/B -> crossover near 40 KB.
    const double get_us = 10 + bytes * 1e-3;
    const double pin_us = 40 + bytes * 0.25e-3;
    samples.push_back({bytes, absl::Microseconds(get_us), absl::Microseconds(pin_us)});
  }
  policy.Calibrate("b", samples);
  EXPECT_TRUE(policy.Calibrated("b"));
  EXPECT_EQ(policy.ThresholdFor("b"), 16384u);  // 16 KiB wins by Get; 64 KiB by Pin
  EXPECT_EQ(policy.Choose("b", 16384), PeerProtocol::kGet);
  EXPECT_EQ(policy.Choose("b", 65536), PeerProtocol::kPin);
}

TEST(ThresholdPolicyTest, ObservationsMoveTheThresholdOnlyPastTheHysteresis) {
  ThresholdPolicy policy(Options(ThresholdSetting::Mode::kAuto, 65536));  // T = 2^16
  // Bucket 17 (up to 128 KiB): Get only 5% faster -> inside the 15% hysteresis, no move.
  for (int i = 0; i < 10; ++i) {
    policy.Observe("c", PeerProtocol::kGet, 131072, absl::Microseconds(95));
    policy.Observe("c", PeerProtocol::kPin, 131072, absl::Microseconds(100));
  }
  EXPECT_EQ(policy.ThresholdFor("c"), 65536u);
  // Now Get is clearly faster there: T rises one bucket.
  for (int i = 0; i < 20; ++i) policy.Observe("c", PeerProtocol::kGet, 131072, absl::Microseconds(50));
  EXPECT_EQ(policy.ThresholdFor("c"), 131072u);
  // Pin clearly faster in T's bucket: T falls back.
  for (int i = 0; i < 30; ++i) policy.Observe("c", PeerProtocol::kPin, 131072, absl::Microseconds(10));
  EXPECT_EQ(policy.ThresholdFor("c"), 65536u);
}

// The policy explains itself (issue 25): per peer the threshold, its flips, why, and the estimates.
TEST(ThresholdPolicyTest, ExplainSaysWhyEachPeersThresholdIsWhatItIs) {
  ThresholdPolicy fixed(Options(ThresholdSetting::Mode::kFixed, 65536));
  fixed.Choose("f", 100);
  const PeerExplanation f = fixed.Explain().at("f");
  EXPECT_EQ(f.threshold, 65536u);
  EXPECT_EQ(f.flips, 0u);
  EXPECT_NE(f.reason.find("fixed"), std::string::npos) << f.reason;
  EXPECT_TRUE(f.estimates.empty());

  ThresholdPolicy policy(Options(ThresholdSetting::Mode::kAuto, 65536));
  policy.Choose("c", 100);
  EXPECT_NE(policy.Explain().at("c").reason.find("not calibrated"), std::string::npos);
  std::vector<ProbeSample> samples;
  for (uint64_t bytes = 4096; bytes <= (1u << 20); bytes *= 4) {
    samples.push_back({bytes, absl::Microseconds(10 + bytes * 1e-3), absl::Microseconds(40 + bytes * 0.25e-3)});
  }
  policy.Calibrate("c", samples);
  PeerExplanation c = policy.Explain().at("c");
  EXPECT_EQ(c.threshold, 16384u);
  EXPECT_EQ(c.flips, 1u) << "65536 -> 16384";
  EXPECT_NE(c.reason.find("calibrated: Pin beat Get from the 64KiB probe"), std::string::npos) << c.reason;
  ASSERT_EQ(c.estimates.size(), 5u) << "4K, 16K, 64K, 256K, 1M";
  EXPECT_EQ(c.estimates[0].bytes, 4096u);
  EXPECT_NEAR(c.estimates[0].get_us, 10 + 4.096, 0.01);
  EXPECT_NEAR(c.estimates[0].pin_us, 40 + 1.024, 0.01);
  // Get turns clearly faster for 32 KiB objects (bucket 15, just above T = 2^14): T rises.
  for (int i = 0; i < 30; ++i) policy.Observe("c", PeerProtocol::kGet, 32768, absl::Microseconds(20));
  for (int i = 0; i < 30; ++i) policy.Observe("c", PeerProtocol::kPin, 32768, absl::Microseconds(60));
  c = policy.Explain().at("c");
  EXPECT_EQ(c.threshold, 32768u);
  EXPECT_EQ(c.flips, 2u);
  EXPECT_NE(c.reason.find("raised: Get 20.0 us against Pin 60.0 us per object of up to 32KiB"), std::string::npos)
      << c.reason;
}

TEST(ThresholdPolicyTest, ExplorationSometimesTriesTheOtherProtocolNearTheThreshold) {
  ThresholdPolicyOptions options = Options(ThresholdSetting::Mode::kAuto, 65536);
  options.explore_every = 4;
  ThresholdPolicy policy(options);
  int pins = 0;
  for (int i = 0; i < 40; ++i) pins += policy.Choose("d", 60000) == PeerProtocol::kPin;
  EXPECT_EQ(pins, 10);
  int far_pins = 0;
  for (int i = 0; i < 40; ++i) far_pins += policy.Choose("d", 100) == PeerProtocol::kPin;
  EXPECT_EQ(far_pins, 0) << "no exploration far from the threshold";
  // Decide says which choices explored, and the threshold they were measured against.
  int explored = 0;
  for (int i = 0; i < 40; ++i) {
    const ThresholdPolicy::Choice choice = policy.Decide("d", 60000);
    EXPECT_EQ(choice.threshold, 65536u);
    EXPECT_EQ(choice.protocol == PeerProtocol::kPin, choice.explored) << "60000 <= 65536: Pin only when exploring";
    explored += choice.explored;
  }
  EXPECT_EQ(explored, 10);
}

// Batches cost each object differently from single transfers: each concurrency class has its own
// threshold, moved by its own transfers (issue 25).
TEST(ThresholdPolicyTest, EachConcurrencyClassFindsItsOwnCrossover) {
  ThresholdPolicy policy(Options(ThresholdSetting::Mode::kAuto, 65536));
  EXPECT_EQ(ThresholdPolicy::ConcurrencyClassOf(1), 0);
  EXPECT_EQ(ThresholdPolicy::ConcurrencyClassOf(2), 1);
  EXPECT_EQ(ThresholdPolicy::ConcurrencyClassOf(100), 2);
  EXPECT_EQ(ThresholdPolicy::ConcurrencyClassOf(1000), 3);
  // Batches of 100: per object, Pin (reads in flight) beats Get from 32 KiB on; single objects
  // keep Get up to 128 KiB.
  for (int i = 0; i < 10; ++i) {
    policy.Observe("p", PeerProtocol::kGet, 65536, absl::Microseconds(40), 100);
    policy.Observe("p", PeerProtocol::kPin, 65536, absl::Microseconds(20), 100);
    policy.Observe("p", PeerProtocol::kGet, 131072, absl::Microseconds(100));
    policy.Observe("p", PeerProtocol::kPin, 131072, absl::Microseconds(150));
  }
  EXPECT_EQ(policy.ThresholdFor("p", 100), 32768u) << "the batch class lowered its threshold";
  EXPECT_EQ(policy.ThresholdFor("p", 1), 131072u) << "the single class raised its own";
  EXPECT_EQ(policy.ThresholdFor("p", 10), 65536u) << "a class with no transfers keeps the start value";
  EXPECT_EQ(policy.BatchThreshold("p", 100), 32768u);
  const PeerExplanation e = policy.Explain().at("p");
  EXPECT_EQ(e.objects, "1");
  EXPECT_EQ(e.threshold, 131072u);
  ASSERT_EQ(e.batches.size(), 1u) << "only the classes used are explained";
  EXPECT_EQ(e.batches[0].objects, "17-256");
  EXPECT_EQ(e.batches[0].threshold, 32768u);
  EXPECT_EQ(e.batches[0].flips, 1u);
  EXPECT_NE(e.batches[0].reason.find("lowered: Pin 20.0 us against Get 40.0 us per object of up to 64KiB"),
            std::string::npos)
      << e.batches[0].reason;
  ASSERT_EQ(e.batches[0].estimates.size(), 1u);
  EXPECT_EQ(e.batches[0].estimates[0].get_samples, 10u);
}

TEST(ThresholdPolicyTest, CalibrationSeedsEveryClassAndBatchesMoveOnlyTheirs) {
  ThresholdPolicy policy(Options(ThresholdSetting::Mode::kAuto, 65536));
  std::vector<ProbeSample> samples;
  for (uint64_t bytes = 4096; bytes <= (1u << 20); bytes *= 4) {
    samples.push_back({bytes, absl::Microseconds(10 + bytes * 1e-3), absl::Microseconds(40 + bytes * 0.25e-3)});
  }
  policy.Calibrate("c", samples);
  EXPECT_EQ(policy.ThresholdFor("c", 1), 16384u);
  EXPECT_EQ(policy.ThresholdFor("c", 1000), 16384u) << "a class starts from the probes' crossover";
  // Batches of 1000 find Get clearly better at 32 KiB: that class rises, single objects do not.
  for (int i = 0; i < 5; ++i) {
    policy.Observe("c", PeerProtocol::kGet, 32768, absl::Microseconds(5), 1000);
    policy.Observe("c", PeerProtocol::kPin, 32768, absl::Microseconds(9), 1000);
  }
  EXPECT_EQ(policy.ThresholdFor("c", 1000), 32768u);
  EXPECT_EQ(policy.ThresholdFor("c", 1), 16384u);
}

// A batch explores like a single object, but only when it can go the other way as a whole.
TEST(ThresholdPolicyTest, UniformBatchesNextToTheThresholdAreExploredWhole) {
  ThresholdPolicyOptions options = Options(ThresholdSetting::Mode::kAuto, 65536);
  options.explore_every = 4;
  ThresholdPolicy policy(options);
  int explored = 0;
  for (int i = 0; i < 40; ++i) {
    // 100 objects of 40..60 KB: all inline normally (<= 64 KiB); exploring pins them all.
    const ThresholdPolicy::Choice choice = policy.DecideBatch("b", 100, 40000, 60000);
    if (choice.explored) {
      ++explored;
      EXPECT_EQ(choice.protocol, PeerProtocol::kPin);
      EXPECT_LT(choice.threshold, 40000u) << "every object of the batch is above the limit";
    } else {
      EXPECT_EQ(choice.protocol, PeerProtocol::kGet);
      EXPECT_EQ(choice.threshold, 65536u);
    }
  }
  EXPECT_EQ(explored, 10);
  // Above the threshold: exploring sends them all inline.
  int inlined = 0;
  for (int i = 0; i < 40; ++i) {
    const ThresholdPolicy::Choice choice = policy.DecideBatch("b", 100, 70000, 120000);
    if (choice.explored) {
      ++inlined;
      EXPECT_EQ(choice.protocol, PeerProtocol::kGet);
      EXPECT_GE(choice.threshold, 120000u);
    }
  }
  EXPECT_EQ(inlined, 10);
  // Never: sizes on both sides of the threshold, in two buckets, unknown sizes, or far from it.
  for (int i = 0; i < 40; ++i) {
    EXPECT_FALSE(policy.DecideBatch("b", 100, 60000, 70000).explored);
    EXPECT_FALSE(policy.DecideBatch("b", 100, 20000, 60000).explored);
    EXPECT_FALSE(policy.DecideBatch("b", 100, 0, 60000).explored);
    EXPECT_FALSE(policy.DecideBatch("b", 100, 1000, 1024).explored);
  }
  // A fixed policy never explores.
  ThresholdPolicyOptions fixed_options = Options(ThresholdSetting::Mode::kFixed, 65536);
  fixed_options.explore_every = 4;
  ThresholdPolicy fixed(fixed_options);
  for (int i = 0; i < 40; ++i) EXPECT_FALSE(fixed.DecideBatch("b", 100, 40000, 60000).explored);
}

TEST(ThresholdPolicyTest, BucketsAreCeilLog2) {
  EXPECT_EQ(ThresholdPolicy::BucketOf(0), 0);
  EXPECT_EQ(ThresholdPolicy::BucketOf(1), 0);
  EXPECT_EQ(ThresholdPolicy::BucketOf(2), 1);
  EXPECT_EQ(ThresholdPolicy::BucketOf(4096), 12);
  EXPECT_EQ(ThresholdPolicy::BucketOf(4097), 13);
}

}  // namespace
}  // namespace rplasma::fetch
