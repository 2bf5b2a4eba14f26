// rplasma-bench-mpi end to end under mpirun on one machine over TCP: every pattern with every
// protocol at small sizes, every fetched byte verified, the raw TCP stream peer alongside, and a
// CSV (DESIGN.md's columns plus the MPI ones) and a PNG plot written by rank 0.
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "tests/integration/bench_mpi_run.h"

namespace rplasma::testing {
namespace {

constexpr char kHeader[] =
    "benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us,pattern,ranks,"
    "concurrency,mean_us,p95_us,rank,aggregate,auto_vs_best";

// Checks the CSV and returns the set of "system/protocol/pattern/size/concurrency" of aggregate rows.
// Every aggregate `auto` row (get and pin ran at the same point, interleaved) carries auto / best
// fixed (a positive number: no bound on it, that would be a timed assertion); no other row does.
std::set<std::string> CheckCsv(const std::string& csv, int ranks) {
  std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  std::set<std::string> seen;
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) return seen;
  EXPECT_EQ(lines[0], kHeader);
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    EXPECT_EQ(f.size(), 17u) << lines[i];
    if (f.size() != 17) continue;
    double gbps = 0, p50 = 0, p99 = 0;
    EXPECT_TRUE(absl::SimpleAtod(f[6], &gbps) && gbps > 0) << lines[i];
    EXPECT_TRUE(absl::SimpleAtod(f[7], &p50) && p50 > 0) << lines[i];
    EXPECT_TRUE(absl::SimpleAtod(f[8], &p99) && p99 >= p50) << lines[i];
    EXPECT_EQ(f[10], std::to_string(ranks)) << lines[i];
    EXPECT_EQ(f[2], "tcp") << lines[i];
    if (f[15] == "1" && f[1] == "rplasma" && f[3] == "auto") {
      double ratio = 0;
      EXPECT_TRUE(absl::SimpleAtod(f[16], &ratio) && ratio > 0) << "auto_vs_best missing: " << lines[i];
    } else {
      EXPECT_EQ(f[16], "") << lines[i];
    }
    if (f[15] == "1") seen.insert(f[1] + "/" + f[3] + "/" + f[9] + "/" + f[4] + "/" + f[11]);
  }
  return seen;
}

void RunAndCheck(int ranks, const std::vector<std::string>& concurrency_list, const std::string& concurrency) {
  RPLASMA_SKIP_IF_NO_MPI();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  MpiRun run = RunBenchMpi(
      dir, ranks,
      {"--sizes=1K,64K,256K", "--protocols=get,pin,auto", "--concurrency=" + concurrency, "--warmup=1", "--repeat=3",
       "--fetch_timeout=20s", "--csv=" + dir.Join("out.csv"), "--png=" + dir.Join("out.png")});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Every phase reported verified bytes, and none failed verification.
  EXPECT_TRUE(absl::StrContains(run.output, "verified")) << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "verified 0 bytes")) << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "bytes differ")) << run.output;
  const std::set<std::string> seen = CheckCsv(bench::ReadWholeFile(dir.Join("out.csv")), ranks);
  for (const char* pattern : {"pairs", "broadcast", "gather", "alltoall"}) {
    for (const char* protocol : {"get", "pin", "auto"}) {
      for (const char* size : {"1024", "65536", "262144"}) {
        for (const std::string& c : concurrency_list) {
          EXPECT_TRUE(seen.count(absl::StrCat("rplasma/", protocol, "/", pattern, "/", size, "/", c)))
              << pattern << " " << protocol << " " << size << " c=" << c;
        }
      }
    }
  }
  EXPECT_TRUE(seen.count("tcp_stream/-/pairs/65536/1")) << "the raw TCP peer is missing";
  // The summary: one auto/best line per point, then the verdict against 0.95.
  EXPECT_TRUE(absl::StrContains(run.output, "auto/best worst case")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, ": PASS\n") || absl::StrContains(run.output, ": SHORT\n")) << run.output;
  if (HaveGnuplot()) {
    const std::string png = bench::ReadWholeFile(dir.Join("out.png"));
    ASSERT_GT(png.size(), 8u) << run.output;
    EXPECT_EQ(png.substr(1, 3), "PNG");
  } else {
    EXPECT_TRUE(absl::StrContains(run.output, "plot: skipped")) << run.output;
  }
}

TEST(BenchMpiPatternsTest, TwoRanksRunEveryPatternAndProtocolWithEveryByteVerified) {
  RunAndCheck(2, {"1", "2"}, "1,2");
}

TEST(BenchMpiPatternsTest, FourRanksRunEveryPatternAndProtocolWithEveryByteVerified) { RunAndCheck(4, {"1"}, "1"); }

TEST(BenchMpiPatternsTest, BatchFetchesManyIdsPerCallAndVerifiesEveryOne) {
  RPLASMA_SKIP_IF_NO_MPI();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  MpiRun run = RunBenchMpi(
      dir, 2,
      {"--batch=8", "--sizes=1K,256K", "--patterns=pairs", "--protocols=get,pin", "--concurrency=2", "--warmup=1",
       "--repeat=2", "--notcp_baseline", "--fetch_timeout=20s", "--csv=" + dir.Join("out.csv"), "--png="});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "batch 8 ids per Fetch call")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "[pairs c=2 batch=8 1KiB]")) << run.output;
  // Rank 1 fetches 2 threads x 8 ids = 16 objects a round, 3 rounds (1 warm-up + 2), all verified.
  EXPECT_TRUE(absl::StrContains(run.output, absl::StrCat("verified ", 16 * 3 * 1024, " bytes"))) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, absl::StrCat("verified ", 16 * 3 * 256 * 1024, " bytes"))) << run.output;
  const std::set<std::string> seen = CheckCsv(bench::ReadWholeFile(dir.Join("out.csv")), 2);
  EXPECT_TRUE(seen.count("rplasma/get/pairs/1024/2")) << run.output;
  EXPECT_TRUE(seen.count("rplasma/pin/pairs/262144/2")) << run.output;
}

TEST(BenchMpiPatternsTest, BatchBelowOneIsAUsageError) {
  RPLASMA_SKIP_IF_NO_MPI();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  MpiRun run = RunBenchMpi(dir, 2, {"--batch=0", "--csv=" + dir.Join("out.csv")}, absl::Seconds(60));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "--batch: 0 ids per Fetch call; must be at least 1")) << run.output;
}

}  // namespace
}  // namespace rplasma::testing
