// The pure parts of rplasma-bench-mpi, in process (no MPI): the tuner's cost fit and threshold
// choice, the fetch plans of each pattern, the byte pattern every fetch is verified against, and
// option validation.
#include <set>

#include "absl/strings/match.h"
#include <gtest/gtest.h>

#include "bench-mpi/common/object_pattern.h"
#include "bench-mpi/mpi/auto_ratio.h"
#include "bench-mpi/mpi/bench_mpi_options.h"
#include "bench-mpi/mpi/cost_fit.h"
#include "bench-mpi/mpi/fetch_plan.h"
#include "bench-mpi/mpi/lane_order.h"
#include "manager/fetch/threshold_file.h"
#include "tests/support/status_matchers.h"

namespace rplasma::bench {
namespace {

std::vector<uint64_t> Ladder(uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  for (uint64_t s = from; s <= to; s *= 2) out.push_back(s);
  return out;
}

TEST(CostFitTest, ExactLinearCostIsRecovered) {
  const std::vector<uint64_t> sizes = Ladder(1024, 1u << 24);
  std::vector<double> times;
  for (uint64_t s : sizes) times.push_back(50 + s / 2000.0);  // 50 us + 2 GB/s
  LinearCost fit = FitCost(sizes, times);
  EXPECT_NEAR(fit.latency_us, 50, 1e-6);
  EXPECT_NEAR(fit.us_per_byte, 1 / 2000.0, 1e-12);
  EXPECT_NEAR(fit.rms_rel_error, 0, 1e-9);
}

TEST(CostFitTest, ThresholdSitsAtTheCrossoverOfTwoLines) {
  // get: 20 us + 1 GB/s; pin: 60 us + 4 GB/s -> lines meet at 40 us / (1/1000 - 1/4000) = 53333 B.
  const std::vector<uint64_t> sizes = Ladder(1024, 1u << 22);
  std::vector<double> get, pin;
  for (uint64_t s : sizes) {
    get.push_back(20 + s / 1000.0);
    pin.push_back(60 + s / 4000.0);
  }
  ThresholdChoice c = ChooseThreshold(sizes, get, pin);
  EXPECT_NEAR(c.fit_crossover, 53333.3, 1);
  EXPECT_EQ(c.measured_crossover, 32768u);  // the last size where get is cheaper
  EXPECT_EQ(c.threshold, 65536u);           // the fit rounds to 64 KiB (nearest in log2)
  EXPECT_TRUE(c.within_one_step);
}

TEST(CostFitTest, NoisyFitIsClampedToOneStepOfTheMeasuredCrossover) {
  const std::vector<uint64_t> sizes = Ladder(1024, 1u << 20);  // 11 sizes
  // Measured: get wins up to 8 KiB; the fits would meet far above (pin's latency is huge).
  std::vector<double> get, pin;
  for (size_t i = 0; i < sizes.size(); ++i) {
    get.push_back(10 + sizes[i] / 1000.0);
    pin.push_back(i <= 3 ? 1e6 : 1);
  }
  ThresholdChoice c = ChooseThreshold(sizes, get, pin);
  EXPECT_EQ(c.measured_crossover, 8192u);
  EXPECT_LE(c.threshold, 16384u);
  EXPECT_GE(c.threshold, 4096u);
  EXPECT_TRUE(c.within_one_step);
}

TEST(CostFitTest, OneSlowOutlierDoesNotMoveTheMeasuredCrossover) {
  const std::vector<uint64_t> sizes = Ladder(1024, 1u << 20);
  std::vector<double> get, pin;
  for (uint64_t s : sizes) {
    get.push_back(20 + s / 1000.0);
    pin.push_back(60 + s / 4000.0);
  }
  get[0] = 1e5;  // 1 KiB get hit a descheduled process
  ThresholdChoice c = ChooseThreshold(sizes, get, pin);
  EXPECT_EQ(c.measured_crossover, 32768u);
}

TEST(CostFitTest, PinEverywhereGivesThresholdZero) {
  const std::vector<uint64_t> sizes = Ladder(1024, 1u << 16);
  std::vector<double> get(sizes.size(), 100), pin(sizes.size(), 10);
  ThresholdChoice c = ChooseThreshold(sizes, get, pin);
  EXPECT_EQ(c.measured_crossover, 0u);
  EXPECT_LE(c.threshold, 1024u);
}

TEST(CostFitTest, FileHasPeerLinesDefaultAndFitLinesTheManagerIgnores) {
  ThresholdChoice c;
  c.threshold = 65536;
  PeerChoice a{"rank0", "rank1", c}, b{"rank2", "rank1", c};
  b.choice.threshold = 32768;
  const std::string file = RenderThresholdFile(c, {a, b}, "# header\n");
  EXPECT_TRUE(absl::StrContains(file, "\ndefault 65536\n")) << file;
  EXPECT_TRUE(absl::StrContains(file, "\npeer rank1 32768\n")) << file;  // the smaller of two
  EXPECT_TRUE(absl::StrContains(file, "\nfit cluster ")) << file;
  EXPECT_TRUE(absl::StrContains(file, "\n# header\n")) << file;

  // The manager's parser takes the file whole, and its peer line matches any start of rank1.
  absl::StatusOr<fetch::ThresholdTable> table = fetch::ParseThresholdFile(file);
  ASSERT_TRUE(table.ok()) << table.status() << "\n" << file;
  EXPECT_EQ(table->default_bytes, 65536u);
  EXPECT_EQ(table->For("rank1.3fa9c2d1"), 32768u);
  EXPECT_EQ(table->For("rank1.0badf00d"), 32768u);
  EXPECT_EQ(table->For("rank0.3fa9c2d1"), 65536u);
}

int Count(const std::vector<ObjectID>& ids) {
  return static_cast<int>(std::set<ObjectID>(ids.begin(), ids.end()).size());
}

TEST(FetchPlanTest, EveryFetchedObjectIsPutByItsOwnerOnce) {
  for (FetchPattern pattern :
       {FetchPattern::kPairs, FetchPattern::kBroadcast, FetchPattern::kGather, FetchPattern::kAllToAll}) {
    for (int ranks : {2, 3, 4}) {
      std::vector<FetchPlan> plans;
      for (int r = 0; r < ranks; ++r) plans.push_back(MakeFetchPlan(pattern, ranks, r, 2, "p"));
      int fetched = 0;
      for (int r = 0; r < ranks; ++r) {
        for (size_t i = 0; i < plans[r].fetches.size(); ++i) {
          const int owner = plans[r].fetch_owner[i];
          ASSERT_NE(owner, r);
          const auto& puts = plans[owner].puts;
          EXPECT_EQ(std::count(puts.begin(), puts.end(), plans[r].fetches[i]), 1);
          ++fetched;
        }
      }
      EXPECT_GT(fetched, 0) << FetchPatternName(pattern) << " " << ranks;
    }
  }
}

TEST(FetchPlanTest, PatternsMoveTheExpectedNumberOfObjects) {
  EXPECT_EQ(MakeFetchPlan(FetchPattern::kBroadcast, 4, 0, 3, "p").puts.size(), 3u);
  EXPECT_EQ(MakeFetchPlan(FetchPattern::kBroadcast, 4, 2, 3, "p").fetches.size(), 3u);
  EXPECT_EQ(MakeFetchPlan(FetchPattern::kGather, 4, 0, 3, "p").fetches.size(), 9u);
  EXPECT_EQ(Count(MakeFetchPlan(FetchPattern::kAllToAll, 4, 1, 2, "p").puts), 6);
  EXPECT_EQ(MakeFetchPlan(FetchPattern::kPairs, 3, 2, 1, "p").fetches.size(), 0u);  // odd rank out idles
  FetchPlan shift = MakeShiftPlan(1, 4, 3, 1, "p");
  ASSERT_EQ(shift.fetch_owner.size(), 1u);
  EXPECT_EQ(shift.fetch_owner[0], 0);
  EXPECT_NE(MakeFetchPlan(FetchPattern::kPairs, 2, 0, 1, "a").puts,
            MakeFetchPlan(FetchPattern::kPairs, 2, 0, 1, "b").puts);
}

// The interleaved lanes' orders: each round runs every lane once; over the cycle (its wrap-around
// included) every lane holds each place equally often and, for 2 and 3 lanes, comes right after
// each other lane equally often (3 lanes: never right after itself), so no lane pays more for the
// batch before it than another.
TEST(InterleavedLaneOrdersTest, EveryLaneFollowsEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 4; ++n) {
    const std::vector<std::vector<size_t>> orders = InterleavedLaneOrders(n);
    std::vector<size_t> sequence;
    std::vector<std::vector<int>> place(n, std::vector<int>(n, 0));
    for (const std::vector<size_t>& order : orders) {
      ASSERT_EQ(std::set<size_t>(order.begin(), order.end()).size(), n) << "n=" << n;
      ASSERT_EQ(order.size(), n);
      for (size_t k = 0; k < n; ++k) {
        ASSERT_LT(order[k], n);
        ++place[order[k]][k];
        sequence.push_back(order[k]);
      }
    }
    for (size_t l = 0; l < n; ++l) {
      for (size_t k = 0; k < n; ++k) EXPECT_EQ(place[l][k], place[0][0]) << "n=" << n << " lane " << l;
    }
    if (n < 2 || n > 3) continue;
    std::vector<std::vector<int>> after(n, std::vector<int>(n, 0));  // after[lane][predecessor]
    for (size_t i = 0; i < sequence.size(); ++i) {
      ++after[sequence[i]][sequence[(i + sequence.size() - 1) % sequence.size()]];
    }
    for (size_t l = 0; l < n; ++l) {
      for (size_t m = 0; m < n; ++m) {
        if (m != l) {
          EXPECT_EQ(after[l][m], after[0][1]) << "n=" << n << ": lane " << l << " after " << m;
        }
      }
      EXPECT_EQ(after[l][l], n == 3 ? 0 : after[0][0]) << "n=" << n << ": lane " << l << " after itself";
    }
  }
}

TEST(ObjectPatternTest, FilledBytesVerifyAndAnyFlippedByteIsCaught) {
  const ObjectID id = ObjectID::FromLabel("x");
  for (size_t size : {1u, 7u, 8u, 1000u, 4099u}) {
    std::vector<uint8_t> data(size);
    FillPattern(id, absl::MakeSpan(data));
    EXPECT_OK(VerifyPattern(id, data));
    data[size - 1] ^= 1;
    EXPECT_FALSE(VerifyPattern(id, data).ok()) << size;
    data[size - 1] ^= 1;
    data[0] ^= 0x80;
    EXPECT_FALSE(VerifyPattern(id, data).ok()) << size;
  }
  std::vector<uint8_t> data(64);
  FillPattern(id, absl::MakeSpan(data));
  EXPECT_FALSE(VerifyPattern(ObjectID::FromLabel("y"), data).ok());  // another id's bytes
}

TEST(BenchMpiOptionsTest, DefaultLadderAndValidation) {
  BenchMpiOptions o;
  o.start_redis = true;
  EXPECT_OK(o.Validate());
  EXPECT_EQ(o.Sizes().front(), 1024u);
  EXPECT_EQ(o.Sizes().back(), 1u << 30);
  EXPECT_EQ(o.Sizes().size(), 21u);
  o.start_redis = false;
  EXPECT_FALSE(o.Validate().ok());  // no Redis
  o.redis = "127.0.0.1:6379";
  o.concurrency = {0};
  EXPECT_FALSE(o.Validate().ok());
  o.concurrency = {1};
  o.batch = 0;
  EXPECT_FALSE(o.Validate().ok());  // at least one id per Fetch call
  EXPECT_NE(o.Validate().message().find("--batch"), absl::string_view::npos);
  o.batch = 1000;
  EXPECT_OK(o.Validate());
  o.attach = true;
  EXPECT_FALSE(o.Validate().ok());  // attach needs sockets and one protocol
  EXPECT_FALSE(ParsePatterns("pairs,ring").ok());
  ASSERT_OK_AND_ASSIGN(auto protocols, ParseProtocols("pin,get,auto"));
  EXPECT_EQ(protocols, (std::vector<FetchProtocol>{FetchProtocol::kPin, FetchProtocol::kGet, FetchProtocol::kAuto}));
  EXPECT_EQ(FetchProtocolName(FetchProtocol::kGet), "get");
  EXPECT_EQ(FetchProtocolName(FetchProtocol::kPin), "pin");
  // The old names still parse: send = get, read = pin.
  ASSERT_OK_AND_ASSIGN(auto aliases, ParseProtocols("read,send"));
  EXPECT_EQ(aliases, (std::vector<FetchProtocol>{FetchProtocol::kPin, FetchProtocol::kGet}));
  EXPECT_FALSE(ParseProtocols("get,rdma").ok());
}

TEST(BenchMpiOptionsTest, NodeNamesExpandRankAndHostAndMustSuitTheManager) {
  EXPECT_EQ(ExpandNodeName("rank{rank}", 3, "h"), "rank3");
  EXPECT_EQ(ExpandNodeName("{host}", 3, "gpu07"), "gpu07");
  EXPECT_EQ(ExpandNodeName("{host}-{rank}", 12, "gpu07"), "gpu07-12");
  EXPECT_OK(ValidateNodeName("gpu07-12.a_b"));
  EXPECT_FALSE(ValidateNodeName("").ok());
  EXPECT_FALSE(ValidateNodeName("a b").ok());
  EXPECT_FALSE(ValidateNodeName(std::string(101, 'a')).ok());
  BenchMpiOptions o;
  o.start_redis = true;
  o.node_name = "{host}";
  EXPECT_OK(o.Validate());
  o.node_name = "rank/{rank}";
  EXPECT_FALSE(o.Validate().ok());
}

TEST(AutoRatioTest, AutoIsComparedWithTheFasterOfTheFixedProtocolsThatRan) {
  // p50s in us: throughput at the median is size / p50, so the ratio is best p50 / auto p50.
  EXPECT_DOUBLE_EQ(AutoVsBest(100, 200, 100), 1.0);
  EXPECT_DOUBLE_EQ(AutoVsBest(400, 200, 250), 0.8);
  EXPECT_DOUBLE_EQ(AutoVsBest(0, 200, 100), 2.0);  // get skipped (> 64 MiB): pin alone
  EXPECT_LT(AutoVsBest(100, 200, 0), 0);           // no auto: no ratio
  EXPECT_LT(AutoVsBest(0, 0, 100), 0);             // no fixed protocol: no ratio
}

TEST(AutoRatioTest, PairedRatioComparesRoundsOfTheSameTimeAndIgnoresAFlipOfTheMachinesSpeed) {
  // Two identical protocols whose rounds flip between a fast regime (100 us) and a slow one
  // (400 us) mid-point: each lane's median lands where the flip happens to fall (3 of 5 slow
  // rounds in get's lane against 2 of 5 in auto's), round by round they are equal.
  const std::vector<int64_t> get = {100, 400, 400, 400, 100};
  const std::vector<int64_t> same = {100, 100, 400, 400, 100};
  EXPECT_DOUBLE_EQ(AutoVsBest(400, 0, 100), 4.0);  // the medians: 400 against 100
  EXPECT_DOUBLE_EQ(PairedAutoVsBest(get, {}, same), 1.0);
  // Against the fixed protocol auto compares worst with; rounds where a rank fetched nothing skip.
  EXPECT_DOUBLE_EQ(PairedAutoVsBest({100, 100, 0}, {90, 80, 70}, {100, 100, 0}), 0.85);
  EXPECT_DOUBLE_EQ(PairedAutoVsBest({}, {200, 300}, {250, 300}), 0.9);  // get skipped: pin alone
  EXPECT_LT(PairedAutoVsBest({100}, {100}, {}), 0);                     // no auto
  EXPECT_LT(PairedAutoVsBest({}, {}, {100}), 0);                        // no fixed protocol
  EXPECT_LT(PairedAutoVsBest({0}, {}, {100}), 0);                       // nothing measured in both
}

TEST(AutoRatioTest, SummaryListsEveryPointAndSaysShortWhenOneMissesTheTarget) {
  std::vector<AutoRatioPoint> points = {
      {"pairs c=1", 4096, 100, 120, 101}, {"pairs c=1", 65536, 300, 200, 250}, {"pairs c=1", 1 << 20, 0, 0, 0}};
  const std::string summary = AutoRatioSummary(points);
  EXPECT_TRUE(absl::StrContains(summary, "auto/best 0.990")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "auto/best 0.800  (< 0.95)")) << summary;
  EXPECT_TRUE(
      absl::StrContains(summary, "auto/best worst case 0.800 (pairs c=1 64KiB), 1 of 2 points >= 0.95: SHORT\n"))
      << summary;
  points[1].auto_p50_us = 190;
  EXPECT_TRUE(absl::StrContains(AutoRatioSummary(points), "2 of 2 points >= 0.95: PASS\n")) << AutoRatioSummary(points);
  EXPECT_EQ(AutoRatioSummary({points[2]}), "");
  // A paired ratio is the point's figure; the medians' ratio is printed beside it.
  points[1].paired = 0.9;
  EXPECT_TRUE(absl::StrContains(AutoRatioSummary(points), "auto/best 0.900  medians 1.053  (< 0.95)"))
      << AutoRatioSummary(points);
}

}  // namespace
}  // namespace rplasma::bench
