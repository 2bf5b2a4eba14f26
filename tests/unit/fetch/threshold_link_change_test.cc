// The estimator in a simulated link: the threshold follows a change of the link's costs, from
// anywhere in the sweep, without flapping on the VM's wake-up noise (issue 25). The policy's own
// cases are threshold_policy_test.cc.
#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "absl/time/time.h"
#include <gtest/gtest.h>

#include "manager/fetch/threshold_policy.h"
#include "tests/unit/fetch/threshold_policy_options.h"

namespace rplasma::fetch {
namespace {

// A simulated link: each protocol's cost is a fixed part plus bytes over a rate. The policy only
// sees the costs of the transfers it chose (exploration included), as in a manager.
struct SimulatedLink {
  double get_fixed_us, get_ns_per_byte, pin_fixed_us, pin_ns_per_byte;
  absl::Duration Cost(PeerProtocol p, uint64_t bytes) const {
    const double us = p == PeerProtocol::kGet ? get_fixed_us + bytes * get_ns_per_byte * 1e-3
                                              : pin_fixed_us + bytes * pin_ns_per_byte * 1e-3;
    return absl::Microseconds(us);
  }
  // The largest power of two where Get is no slower than Pin.
  uint64_t Crossover() const {
    uint64_t t = 1024;
    while (t < (64u << 20) && Cost(PeerProtocol::kGet, 2 * t) <= Cost(PeerProtocol::kPin, 2 * t)) t *= 2;
    return t;
  }
};

// Runs up to `transfers` single fetches of sizes cycling over 1 KiB .. 4 MiB through the policy,
// stopping early once `done` holds; returns how many ran.
int Drive(
    ThresholdPolicy& policy, const SimulatedLink& link, int transfers,
    const std::function<bool()>& done = [] { return false; }) {
  uint64_t size = 1024;
  for (int i = 0; i < transfers; ++i) {
    if (done()) return i;
    const PeerProtocol p = policy.Choose("link", size);
    policy.Observe("link", p, size, link.Cost(p, size));
    size = size >= (4u << 20) ? 1024 : size * 2;
  }
  return transfers;
}

// The same, over `sizes` in turn.
int DriveSizes(ThresholdPolicy& policy, const SimulatedLink& link, const std::vector<uint64_t>& sizes, int transfers,
               const std::function<bool()>& done) {
  for (int i = 0; i < transfers; ++i) {
    if (done()) return i;
    const uint64_t size = sizes[i % sizes.size()];
    const PeerProtocol p = policy.Choose("link", size);
    policy.Observe("link", p, size, link.Cost(p, size));
  }
  return transfers;
}

// The estimator follows a change of the link: after a step the threshold moves to the new
// crossover (within one size class, the hysteresis), on traffic alone (issue 25).
TEST(ThresholdPolicyTest, TheThresholdFollowsAStepChangeOfTheLink) {
  ThresholdPolicy policy(Exploring(65536));
  // Get pays a copy per byte; Pin a round trip more. Crossover near 64 KiB.
  const SimulatedLink fast{20, 1.0, 80, 0.1};
  // The same link with a tenth of the rate for Get's bytes (say, a loaded CPU copying them):
  // the crossover falls to about 8 KiB.
  const SimulatedLink slow_copy{20, 10.0, 80, 0.1};
  ASSERT_GE(fast.Crossover(), 32768u);
  ASSERT_LE(slow_copy.Crossover(), 8192u);
  Drive(policy, fast, 3000);
  const auto near = [](uint64_t threshold, uint64_t crossover) {
    return threshold >= crossover / 2 && threshold <= crossover * 2;
  };
  EXPECT_TRUE(near(policy.ThresholdFor("link"), fast.Crossover()))
      << policy.ThresholdFor("link") << " vs " << fast.Crossover();
  const uint64_t flips_before = policy.Explain().at("link").flips;
  // Four size classes below the old crossover: each step down needs the exploration of the class
  // at the threshold to gather min_samples of Pin (one in explore_every of its transfers).
  const int down =
      Drive(policy, slow_copy, 20000, [&] { return near(policy.ThresholdFor("link"), slow_copy.Crossover()); });
  EXPECT_TRUE(near(policy.ThresholdFor("link"), slow_copy.Crossover()))
      << policy.ThresholdFor("link") << " vs " << slow_copy.Crossover() << ": " << policy.Explain().at("link").reason;
  EXPECT_GT(policy.Explain().at("link").flips, flips_before);
  // And back, once the link recovers.
  const int up = Drive(policy, fast, 20000, [&] { return near(policy.ThresholdFor("link"), fast.Crossover()); });
  EXPECT_TRUE(near(policy.ThresholdFor("link"), fast.Crossover()))
      << policy.ThresholdFor("link") << " vs " << fast.Crossover();
  // A manager moves thousands of objects a second: both changes are followed well within 1 s of
  // traffic (the one-class-at-a-time rule alone took 2,501 and 7,897 transfers here).
  EXPECT_LE(down, 500);
  EXPECT_LE(up, 2000);
  // Once the estimates the change left stale have caught up, a steady link does not flap.
  Drive(policy, fast, 5000);
  const uint64_t flips_steady = policy.Explain().at("link").flips;
  Drive(policy, fast, 10000);
  EXPECT_EQ(policy.Explain().at("link").flips, flips_steady) << policy.Explain().at("link").reason;
  EXPECT_TRUE(near(policy.ThresholdFor("link"), fast.Crossover()));
}

// The sizes a workload moves need not include the buckets next to the threshold: here 1, 4 and
// 16 MiB only, the threshold at 1 MiB. When requests get dear (each costs 7 ms more; Pin makes
// three), Get becomes the better way at 4 and 16 MiB, buckets away from the threshold whose Get
// estimates were never measured. Six costs in a row that are far from their estimates, in any of
// the sizes, mark the change; each bucket then tries Get at once, and again at every transfer while
// its Get costs are clearly below Pin's, and the threshold follows (netns_link_change_test does
// this with real processes).
TEST(ThresholdPolicyTest, AChangeOfTheLinkIsFollowedWhereNoTrafficIsNextToTheThreshold) {
  ThresholdPolicy policy(Exploring(1u << 20));
  const SimulatedLink healthy{100, 1.5, 1000, 0.8};
  const SimulatedLink dear_requests{7100, 1.5, 22000, 0.8};
  ASSERT_EQ(healthy.Crossover(), 1u << 20);
  ASSERT_EQ(dear_requests.Crossover(), 16u << 20);
  const std::vector<uint64_t> sizes = {1u << 20, 4u << 20, 16u << 20};
  const auto drive = [&](const SimulatedLink& link, int transfers, const std::function<bool()>& done) {
    return DriveSizes(policy, link, sizes, transfers, done);
  };
  drive(healthy, 600, [] { return false; });
  EXPECT_EQ(policy.ThresholdFor("link"), 1u << 20) << policy.Explain().at("link").reason;
  EXPECT_EQ(policy.Explain().at("link").link_changes, 0u);
  // 23 transfers here. Six far costs in one bucket to see the change, then one in four of each
  // bucket's decisions for min_samples (3) Gets, took 50; one in explore_every (32) of the 4 MiB
  // transfers, min_samples times, took ~290 (and old estimates then moved it back and forth).
  const int followed = drive(dear_requests, 1000, [&] { return policy.ThresholdFor("link") >= (16u << 20); });
  EXPECT_LE(followed, 30) << policy.Explain().at("link").reason;
  EXPECT_GE(policy.Explain().at("link").link_changes, 1u);
  const uint64_t flips = policy.Explain().at("link").flips;
  drive(dear_requests, 3000, [] { return false; });
  EXPECT_EQ(policy.Explain().at("link").flips, flips) << "it holds: " << policy.Explain().at("link").reason;
  EXPECT_EQ(policy.ThresholdFor("link"), 16u << 20);
  // And back: 32 transfers (59 before). Healed, 16 MiB by Get is only 1.3x cheaper (no surprise),
  // so the change shows in the 1 MiB bucket's streak alone.
  const int back = drive(healthy, 1000, [&] { return policy.ThresholdFor("link") <= (2u << 20); });
  EXPECT_LE(back, 45) << policy.Explain().at("link").reason;
}

// The probes set the threshold and no estimate. Where they put it a few buckets off (the guest's
// noisy probes: 16 KiB, 20% cheaper by Get, went 61 of 62 transfers by Pin), a size away from the
// threshold learns the other way one transfer in 4, a few times, and the threshold follows; where
// the other way's first try costs far more (16 MiB by Get here), it is not tried again soon.
TEST(ThresholdPolicyTest, ASizeTheProbesMisjudgedFarFromTheThresholdIsLearntInAFewTransfers) {
  ThresholdPolicy policy(Exploring(4096));
  const SimulatedLink link{100, 1.2, 300, 0.5};  // Get cheaper up to 256 KiB; 2.3x Pin at 16 MiB
  ASSERT_EQ(link.Crossover(), 256u << 10);
  const int followed =
      DriveSizes(policy, link, {16u << 10}, 1000, [&] { return policy.ThresholdFor("link") >= (16u << 10); });
  EXPECT_LE(followed, 20) << policy.Explain().at("link").reason;  // ~100 at one in explore_every
  int explored = 0;
  for (int i = 0; i < 24; ++i) {
    const ThresholdPolicy::Choice choice = policy.Decide("link", 16u << 20);
    explored += choice.explored;
    policy.Observe("link", choice.protocol, 16u << 20, link.Cost(choice.protocol, 16u << 20));
  }
  EXPECT_EQ(explored, 1) << "one try, 2.3x dearer: no more in 24 (learning it: 3)";
}

// A change the used protocol feels less than 2x (no surprise) while the other way changes a lot:
// the shaped link of the last test heals on a machine where copying is slow, so Get at every size
// gets only 1.8x cheaper while Pin, unmeasured above the threshold, gets 4-10x cheaper. Get's
// estimates moving 1.5x or more from what they were when Pin's were measured make those stale
// (netns_link_change_test on a slow CI machine: the threshold stayed up for 400 transfers).
TEST(ThresholdPolicyTest, AChangeTheUsedProtocolFeelsLessThanTwiceIsStillFollowed) {
  ThresholdPolicy policy(Exploring(2u << 20));
  const SimulatedLink healthy{300, 1.8, 3000, 1.0};
  const SimulatedLink shaped{400, 3.4, 40000, 3.0};
  ASSERT_EQ(healthy.Crossover(), 2u << 20);
  ASSERT_EQ(shaped.Crossover(), 64u << 20);
  const std::vector<uint64_t> sizes = {1u << 20, 4u << 20, 16u << 20};
  for (uint64_t size : sizes) {
    const double ratio =
        absl::FDivDuration(shaped.Cost(PeerProtocol::kGet, size), healthy.Cost(PeerProtocol::kGet, size));
    ASSERT_GT(ratio, 1.5);
    ASSERT_LT(ratio, 2.0) << "no cost of Get is a surprise";
  }
  const auto drive = [&](const SimulatedLink& link, int transfers, const std::function<bool()>& done) {
    return DriveSizes(policy, link, sizes, transfers, done);
  };
  drive(healthy, 600, [] { return false; });
  ASSERT_EQ(policy.ThresholdFor("link"), 2u << 20) << policy.Explain().at("link").reason;
  const int raised = drive(shaped, 1000, [&] { return policy.ThresholdFor("link") >= (16u << 20); });
  ASSERT_LE(raised, 50) << policy.Explain().at("link").reason;  // 33 (47 before the quick tries)
  drive(shaped, 300, [] { return false; });
  const uint64_t changes = policy.Explain().at("link").link_changes;
  const int back = drive(healthy, 1000, [&] { return policy.ThresholdFor("link") < (16u << 20); });
  EXPECT_LE(back, 200) << policy.Explain().at("link").reason;
  EXPECT_GT(policy.Explain().at("link").link_changes, changes);
}

// A link with the development VM's kind of noise (one transfer in 20 pays a 60 us wake-up,
// whichever protocol): the threshold still finds the crossover from far away, and moves rarely.
TEST(ThresholdPolicyTest, WakeUpNoiseDoesNotMakeTheThresholdFlap) {
  ThresholdPolicy noisy(Exploring(4096));
  const SimulatedLink link{20, 1.0, 80, 0.1};
  std::mt19937 random(12345);
  std::uniform_int_distribution<int> one_in_20(0, 19);
  uint64_t size = 1024;
  for (int i = 0; i < 20000; ++i) {
    const PeerProtocol p = noisy.Choose("link", size);
    const absl::Duration cost =
        link.Cost(p, size) + (one_in_20(random) == 0 ? absl::Microseconds(60) : absl::ZeroDuration());
    noisy.Observe("link", p, size, cost);
    size = size >= (4u << 20) ? 1024 : size * 2;
  }
  const PeerExplanation e = noisy.Explain().at("link");
  EXPECT_GE(e.threshold, link.Crossover() / 2) << e.reason;
  EXPECT_LE(e.threshold, link.Crossover() * 2) << e.reason;
  EXPECT_GE(e.flips, 1u) << "it had to move from 4 KiB";
  EXPECT_LE(e.flips, 6u) << e.reason;
  EXPECT_EQ(e.link_changes, 0u) << "lone spikes are not a change of the link";
}

// The same noise, larger: one transfer in 10 costs 2.5x (on this VM a descheduled vCPU does that
// to a 256 KiB Get). Such lone costs are no change of the link, so they must not raise the rate of
// exploration: next to the crossover the other way is 1.6x dearer, and exploring it one in 4
// instead of one in 32 would cost auto 15% of the better protocol (issue 25: >= 0.95x).
TEST(ThresholdPolicyTest, LoneFarCostsDoNotMakeExplorationDear) {
  ThresholdPolicy policy(Exploring(65536));
  const SimulatedLink link{20, 1.0, 80, 0.1};  // crossover 64 KiB: Pin is 1.6x cheaper at 128 KiB
  ASSERT_EQ(link.Crossover(), 65536u);
  std::mt19937 random(777);
  std::uniform_int_distribution<int> one_in_10(0, 9);
  const std::vector<uint64_t> sizes = {65536, 131072};  // the two buckets next to the threshold
  std::vector<double> chosen_us(sizes.size()), best_us(sizes.size());
  int explored = 0;
  constexpr int kWarmUp = 2000, kMeasured = 8000;
  for (int i = 0; i < kWarmUp + kMeasured; ++i) {
    const size_t s = i % sizes.size();
    const ThresholdPolicy::Choice choice = policy.Decide("link", sizes[s]);
    const absl::Duration cost = link.Cost(choice.protocol, sizes[s]);
    policy.Observe("link", choice.protocol, sizes[s], one_in_10(random) == 0 ? cost * 2.5 : cost);
    if (i < kWarmUp) continue;
    explored += choice.explored;
    chosen_us[s] += absl::ToDoubleMicroseconds(cost);
    best_us[s] += absl::ToDoubleMicroseconds(
        std::min(link.Cost(PeerProtocol::kGet, sizes[s]), link.Cost(PeerProtocol::kPin, sizes[s])));
  }
  const PeerExplanation e = policy.Explain().at("link");
  EXPECT_EQ(e.link_changes, 0u) << "lone far costs are not a change of the link";
  EXPECT_LE(explored, 2 * kMeasured / 32) << "about one in explore_every (32), not one in 4";
  for (size_t s = 0; s < sizes.size(); ++s) {
    EXPECT_GE(best_us[s] / chosen_us[s], 0.95) << sizes[s] << " B: " << e.reason;
  }
}

// After a change of the link the buckets next to the threshold try the other way quickly, but
// only until it has min_samples costs of the new link: every try pays the dearer way's price, and
// trying one in 4 for all of the boost's 256 decisions sent a quarter of auto's transfers the
// dearer way (bench-mpi: 95 of 404 at 64 and 256 KiB, auto 0.76 of get).
TEST(ThresholdPolicyTest, ExplorationAfterALinkChangeStopsOnceTheOtherWayIsMeasured) {
  ThresholdPolicy policy(Exploring(65536));
  const SimulatedLink before{20, 1.0, 80, 0.1};
  const SimulatedLink after{60, 3.0, 240, 0.3};  // everything 3x dearer: the same crossover
  ASSERT_EQ(before.Crossover(), 65536u);
  ASSERT_EQ(after.Crossover(), 65536u);
  const std::vector<uint64_t> sizes = {65536, 131072};
  const auto run = [&](const SimulatedLink& link, int decisions) {
    int explored = 0;
    for (int i = 0; i < decisions; ++i) {
      const uint64_t size = sizes[i % sizes.size()];
      const ThresholdPolicy::Choice choice = policy.Decide("link", size);
      explored += choice.explored;
      policy.Observe("link", choice.protocol, size, link.Cost(choice.protocol, size));
    }
    return explored;
  };
  run(before, 2000);
  ASSERT_EQ(policy.Explain().at("link").link_changes, 0u);
  const int explored = run(after, 256);
  const PeerExplanation e = policy.Explain().at("link");
  EXPECT_GE(e.link_changes, 1u) << "every cost 3x its estimate is a change of the link";
  EXPECT_EQ(policy.ThresholdFor("link"), 65536u) << e.reason;
  // Per bucket: min_samples (3) tries at one in 4 (about 12 decisions), then one in 32.
  EXPECT_LE(explored, 2 * 3 + 256 / 32 + 2) << "not one in 4 for all 256 decisions (64)";
  EXPECT_GE(explored, 2 * 3) << "each bucket re-measures the other way";
}

// Far above the threshold, where Get costs 15x Pin (16 MiB on loopback TCP: 66 ms against 4 ms),
// one fresh sample of Get says enough: the bucket tries it again only once that goes stale or the
// link changes, and then once, not min_samples times (bench-mpi pairs 16 MiB: 9 Gets in 202
// transfers, two detected link changes, auto 0.947 of Pin).
TEST(ThresholdPolicyTest, AFarBucketDoesNotReMeasureAWayThatIsFarDearer) {
  ThresholdPolicy policy(Exploring(1u << 20));
  const SimulatedLink before{20, 4.0, 80, 0.25};
  const SimulatedLink after{60, 12.0, 240, 0.75};  // everything 3x dearer
  const uint64_t size = 16u << 20;
  ASSERT_GE(before.Cost(PeerProtocol::kGet, size), 15 * before.Cost(PeerProtocol::kPin, size));
  const auto run = [&](const SimulatedLink& link, int decisions) {
    int explored = 0;
    for (int i = 0; i < decisions; ++i) {
      const ThresholdPolicy::Choice choice = policy.Decide("link", size);
      explored += choice.explored;
      policy.Observe("link", choice.protocol, size, link.Cost(choice.protocol, size));
    }
    return explored;
  };
  const int explored_before = run(before, 2048);
  EXPECT_LE(explored_before, 2048 / 256 + 2) << "one Get per 256 transfers (its sample going stale), no more";
  ASSERT_EQ(policy.Explain().at("link").link_changes, 0u);
  const int explored_after = run(after, 200);
  const PeerExplanation e = policy.Explain().at("link");
  EXPECT_GE(e.link_changes, 1u) << "every cost 3x its estimate is a change of the link";
  EXPECT_GE(explored_after, 1) << "the change makes the bucket measure Get again";
  EXPECT_LE(explored_after, 2) << "once is enough where Get costs 15 Pins";
  EXPECT_EQ(policy.ThresholdFor("link"), 1u << 20) << e.reason;
}

// A threshold the probes set one class too low (Pin won a 1 MiB probe by noise) is corrected on
// the first transfers of the class above it: with no Get cost measured there yet, that bucket tries
// Get one transfer in 4, not one in explore_every (the third Get sample, which moves it, then came
// after about 100 transfers by the slower Pin: bench-mpi gather 1 MiB, 97 of 202 by Pin, auto 0.87
// of get).
TEST(ThresholdPolicyTest, AProbeThatSetTheThresholdTooLowIsCorrectedQuickly) {
  ThresholdPolicy policy(Exploring(512 << 10));
  const SimulatedLink link{100, 1.0, 1000, 0.4};  // Get 1.15 ms, Pin 1.42 ms at 1 MiB; crossover 1 MiB
  ASSERT_EQ(link.Crossover(), 1u << 20);
  int slower = 0;
  int transfers = 0;
  for (; transfers < 400 && policy.ThresholdFor("link") < (1u << 20); ++transfers) {
    const ThresholdPolicy::Choice choice = policy.Decide("link", 1u << 20);
    slower += choice.protocol == PeerProtocol::kPin;
    policy.Observe("link", choice.protocol, 1u << 20, link.Cost(choice.protocol, 1u << 20));
  }
  EXPECT_GE(policy.ThresholdFor("link"), 1u << 20) << policy.Explain().at("link").reason;
  EXPECT_LE(transfers, 16) << "min_samples (3) Get tries at one in 4";
  EXPECT_LE(slower, 13);
}

}  // namespace
}  // namespace rplasma::fetch
