// The target arithmetic of rplasma-bench: ratios from the right rows, PASS/SHORT on the right
// side of each limit, SKIPPED (with a reason) when a row is missing.
#include "bench-mpi/local/target_summary.h"

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"

#include <sstream>

#include "tests/support/status_matchers.h"

namespace rplasma::bench {
namespace {

using Outcome = TargetCheck::Outcome;

LatencySummary Latency(double p50_us) {
  LatencyRecorder r;
  for (int i = 0; i < 10; ++i) r.Record(static_cast<int64_t>(p50_us * 1000));
  return r.Summarize();
}

void Add(ResultReporter& reporter, const std::string& benchmark, const std::string& system, uint64_t size,
         double p50_us, std::map<std::string, double> metrics = {}) {
  BenchResult r = MakeResult(benchmark, system, "unix", "store", size, Latency(p50_us));
  r.metrics = std::move(metrics);
  ASSERT_OK(reporter.Add(std::move(r)));
}

const TargetCheck& Named(const std::vector<TargetCheck>& checks, const std::string& name) {
  for (const TargetCheck& c : checks) {
    if (c.name == name) return c;
  }
  static const TargetCheck missing;
  ADD_FAILURE() << "no check named " << name;
  return missing;
}

TEST(TargetSummaryTest, LocalTargetsComputeRatiosAndOutcomes) {
  ASSERT_OK_AND_ASSIGN(auto reporter, ResultReporter::Create("", nullptr));
  const uint64_t mib64 = uint64_t{64} << 20;
  Add(*reporter, "ping_pong", "unix_socket", 96, 4.0);
  Add(*reporter, "get", "rplasma", 16, 5.0);        // 1.25x ping-pong: PASS
  Add(*reporter, "get", "rplasma", mib64, 7.0);     // 1.4x get(16): SHORT
  Add(*reporter, "create_write_seal", "rplasma", mib64, 80000);  // shown, not judged
  Add(*reporter, "put", "rplasma", mib64, 40000);
  Add(*reporter, "copy", "memcpy", mib64, 20000);   // put 0.5x memcpy: SHORT
  Add(*reporter, "create_seal_get", "rplasma", 16, 2.0);
  Add(*reporter, "set_get", "redis", 16, 12.0);     // 6x Redis: PASS
  Add(*reporter, "batch_get", "rplasma", 16, 0.5, {{"batch", 1000}});
  Add(*reporter, "memory_per_object", "rplasma", 16, 20, {{"anon_bytes_per_object", 250}});
  std::vector<TargetCheck> checks = EvaluateLocalTargets(*reporter, {16, mib64});
  ASSERT_EQ(checks.size(), 6u);
  EXPECT_NEAR(Named(checks, "get latency").ratio, 1.25, 1e-9);
  EXPECT_EQ(Named(checks, "get latency").outcome, Outcome::kPass);
  EXPECT_NEAR(Named(checks, "get size-independent").ratio, 1.4, 1e-9);
  EXPECT_EQ(Named(checks, "get size-independent").outcome, Outcome::kShort);
  EXPECT_NEAR(Named(checks, "write bandwidth").ratio, 0.5, 1e-9);
  EXPECT_EQ(Named(checks, "write bandwidth").outcome, Outcome::kShort);
  EXPECT_NE(Named(checks, "write bandwidth").measured.find("= 0.25x"), std::string::npos)
      << Named(checks, "write bandwidth").measured;
  EXPECT_NEAR(Named(checks, "small round trip").ratio, 6.0, 1e-9);
  EXPECT_EQ(Named(checks, "small round trip").outcome, Outcome::kPass);
  EXPECT_EQ(Named(checks, "batch get").outcome, Outcome::kPass);
  EXPECT_EQ(Named(checks, "memory per object").outcome, Outcome::kShort);

  std::ostringstream out;
  PrintTargets(checks, out);
  EXPECT_NE(out.str().find("PASS"), std::string::npos);
  EXPECT_NE(out.str().find("SHORT"), std::string::npos);
}

TEST(TargetSummaryTest, RoundsCombineIntoTheMedianRatioJudgedAgainstTheSameLimit) {
  auto check = [](std::string name, double ratio, double limit, bool at_most) {
    TargetCheck c;
    c.name = std::move(name);
    c.goal = "goal";
    c.measured = absl::StrFormat("round with %.1f", ratio);
    c.ratio = ratio;
    c.limit = limit;
    c.at_most = at_most;
    c.outcome = (at_most ? ratio <= limit : ratio >= limit) ? Outcome::kPass : Outcome::kShort;
    return c;
  };
  TargetCheck skipped;
  skipped.name = "memory per object";
  skipped.measured = "not in this round";
  std::vector<std::vector<TargetCheck>> rounds = {
      {check("get latency", 1.2, 1.3, true), check("write bandwidth", 0.5, 0.7, false), skipped},
      {check("get latency", 9.0, 1.3, true), check("write bandwidth", 0.8, 0.7, false), skipped},
      {check("get latency", 1.6, 1.3, true), check("write bandwidth", 0.9, 0.7, false),
       check("memory per object", 163, 200, true)},
  };
  std::vector<TargetCheck> combined = CombineRounds(rounds);
  ASSERT_EQ(combined.size(), 3u);
  // 1.2, 9.0 (a flipped round), 1.6: the median 1.6 is SHORT, though one round passed.
  EXPECT_DOUBLE_EQ(Named(combined, "get latency").ratio, 1.6);
  EXPECT_EQ(Named(combined, "get latency").outcome, Outcome::kShort);
  EXPECT_NE(Named(combined, "get latency").measured.find("median of 3 rounds"), std::string::npos);
  EXPECT_NE(Named(combined, "get latency").measured.find("round with 1.6"), std::string::npos);
  // At-least targets keep their direction: median 0.8 >= 0.7.
  EXPECT_DOUBLE_EQ(Named(combined, "write bandwidth").ratio, 0.8);
  EXPECT_EQ(Named(combined, "write bandwidth").outcome, Outcome::kPass);
  // Measured in one round only: that round's value.
  EXPECT_DOUBLE_EQ(Named(combined, "memory per object").ratio, 163);
  EXPECT_EQ(Named(combined, "memory per object").outcome, Outcome::kPass);

  std::vector<TargetCheck> never = CombineRounds({{skipped}, {skipped}});
  ASSERT_EQ(never.size(), 1u);
  EXPECT_EQ(never[0].outcome, Outcome::kSkipped);
}

TEST(TargetSummaryTest, MissingMeasurementsAreSkippedNotFailed) {
  ASSERT_OK_AND_ASSIGN(auto reporter, ResultReporter::Create("", nullptr));
  Add(*reporter, "get", "rplasma", 16, 5.0);
  std::vector<TargetCheck> checks = EvaluateLocalTargets(*reporter, {16});
  for (const TargetCheck& c : checks) {
    EXPECT_EQ(c.outcome, Outcome::kSkipped) << c.name;
    EXPECT_FALSE(c.measured.empty()) << c.name << " gives no reason";
  }
  std::vector<TargetCheck> fetch = EvaluateFetchTargets(*reporter);
  ASSERT_EQ(fetch.size(), 3u);
  for (const TargetCheck& c : fetch) EXPECT_EQ(c.outcome, Outcome::kSkipped);
}

TEST(TargetSummaryTest, FetchTargetsUseSixtyFourMebibyteAndOneKibibyteRows) {
  ASSERT_OK_AND_ASSIGN(auto reporter, ResultReporter::Create("", nullptr));
  const uint64_t mib64 = uint64_t{64} << 20;
  Add(*reporter, "fetch", "rplasma", 1024, 20.0);
  Add(*reporter, "stream", "tcp_stream", 1024, 10.0);   // 2x the round trip: PASS
  Add(*reporter, "fetch", "rplasma", mib64, 100000);
  Add(*reporter, "stream", "tcp_stream", mib64, 90000); // 0.9x the stream: PASS
  Add(*reporter, "get", "redis", mib64, 300000);        // 3x Redis: SHORT
  std::vector<TargetCheck> checks = EvaluateFetchTargets(*reporter);
  EXPECT_NEAR(Named(checks, "small fetch latency").ratio, 2.0, 1e-9);
  EXPECT_EQ(Named(checks, "small fetch latency").outcome, Outcome::kPass);
  EXPECT_NEAR(Named(checks, "fetch vs stream").ratio, 0.9, 1e-9);
  EXPECT_EQ(Named(checks, "fetch vs stream").outcome, Outcome::kPass);
  EXPECT_NEAR(Named(checks, "fetch vs redis").ratio, 3.0, 1e-9);
  EXPECT_EQ(Named(checks, "fetch vs redis").outcome, Outcome::kShort);
}

}  // namespace
}  // namespace rplasma::bench
