// The target arithmetic of rplasma-bench: ratios from the right rows, PASS/SHORT on the right
// side of each limit, SKIPPED (with a reason) when a row is missing.
#include "bench-mpi/local/target_summary.h"

#include <gtest/gtest.h>

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
