// rplasma-bench end to end: the binary starts its own store (and redis-server when installed),
// runs every local benchmark at tiny sizes and writes a CSV whose header has the shared columns and
// whose rows carry positive measurements, from which scripts/bench-targets.py judges the targets.
// Fetch mode likewise, with and without --batch; directory mode on a redis-server and a Redis Cluster.
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "tests/support/skip.h"
#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

constexpr char kHeader[] = "benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us";

struct BenchRun {
  int exit_code = -1;
  std::string output;
  std::string csv;
};

// Runs rplasma-bench with `args` (plus --csv into `dir`) and waits for it.
BenchRun RunBench(const bench::ScratchDir& dir, std::vector<std::string> args) {
  BenchRun run;
  std::vector<std::string> argv = {std::string(RPLASMA_BIN_DIR) + "/rplasma-bench", "--csv", dir.Join("out.csv")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto process = bench::ChildProcess::Start(argv, dir.Join("bench.log"));
  EXPECT_OK(process.status());
  if (!process.ok()) return run;
  std::optional<int> status = process->Wait(absl::Seconds(150));
  EXPECT_TRUE(status.has_value()) << "rplasma-bench did not finish";
  if (status.has_value() && WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
  run.output = bench::ReadWholeFile(dir.Join("bench.log"));
  run.csv = bench::ReadWholeFile(dir.Join("out.csv"));
  return run;
}

// scripts/bench-targets.py on the CSV of `run` (in `dir`): its output, "" if it failed.
std::string JudgeTargets(const bench::ScratchDir& dir) {
  const std::string log = dir.Join("targets.log");
  auto process = bench::ChildProcess::Start(
      {std::string(RPLASMA_SOURCE_DIR) + "/scripts/bench-targets.py", dir.Join("out.csv")}, log);
  EXPECT_OK(process.status());
  if (!process.ok()) return "";
  std::optional<int> status = process->Wait(absl::Seconds(30));
  EXPECT_TRUE(status.has_value()) << "bench-targets.py did not finish";
  const std::string output = bench::ReadWholeFile(log);
  const bool exited_zero = status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
  EXPECT_TRUE(exited_zero) << output;
  return exited_zero ? output : "";
}

// Checks every data row and returns the set of "benchmark/system" names seen.
std::set<std::string> CheckRows(const std::string& csv) {
  std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  std::set<std::string> seen;
  EXPECT_GE(lines.size(), 2u);
  if (lines.empty()) return seen;
  EXPECT_EQ(lines[0].substr(0, sizeof(kHeader) - 1), kHeader);
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    EXPECT_GE(f.size(), 9u) << lines[i];
    if (f.size() < 9) continue;
    uint64_t size = 0;
    double ops = 0, gbps = -1, p50 = 0, p99 = 0;
    EXPECT_TRUE(absl::SimpleAtoi(f[4], &size)) << lines[i];
    EXPECT_TRUE(absl::SimpleAtod(f[5], &ops)) << lines[i];
    EXPECT_TRUE(absl::SimpleAtod(f[6], &gbps)) << lines[i];
    EXPECT_TRUE(absl::SimpleAtod(f[7], &p50)) << lines[i];
    EXPECT_TRUE(absl::SimpleAtod(f[8], &p99)) << lines[i];
    EXPECT_GT(size, 0u) << lines[i];
    EXPECT_GT(ops, 0) << lines[i];
    EXPECT_GE(gbps, 0) << lines[i];
    EXPECT_GT(p50, 0) << lines[i];
    EXPECT_GE(p99, p50) << lines[i];
    seen.insert(f[0] + "/" + f[1]);
  }
  return seen;
}

TEST(BenchSmokeTest, LocalRunWritesCsvWithEveryBenchmarkThatTheTargetScriptJudges) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  BenchRun run = RunBench(dir, {"--sizes", "16,4K", "--iterations", "20", "--duration", "0.05", "--objects-overhead",
                                "2000", "--batch", "50", "--no-redis"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> seen = CheckRows(run.csv);
  for (const char* expected :
       {"ping_pong/unix_socket", "copy/memcpy", "create_write_seal/rplasma", "get/rplasma", "release/rplasma",
        "get_release/rplasma", "batch_get/rplasma", "create_seal_get/rplasma", "memory_per_object/rplasma"}) {
    EXPECT_TRUE(seen.count(expected)) << expected << " missing from\n" << run.csv;
  }
  EXPECT_FALSE(seen.count("set_get/redis")) << "--no-redis still measured Redis";
  const std::string targets = JudgeTargets(dir);
  EXPECT_NE(targets.find("Targets"), std::string::npos) << targets;
  EXPECT_NE(targets.find("get latency"), std::string::npos) << targets;
}

TEST(BenchSmokeTest, RedisPeerIsMeasuredAgainstItsOwnRedisServer) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  BenchRun run = RunBench(dir, {"--sizes", "16,64K", "--iterations", "10", "--duration", "0.05", "--objects-overhead",
                                "0", "--batch", "10", "--redis"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> seen = CheckRows(run.csv);
  EXPECT_TRUE(seen.count("set/redis")) << run.csv;
  EXPECT_TRUE(seen.count("get/redis")) << run.csv;
  EXPECT_TRUE(seen.count("set_get/redis")) << run.csv;
  const std::string targets = JudgeTargets(dir);
  EXPECT_NE(targets.find("small round trip"), std::string::npos) << targets;
}

TEST(BenchSmokeTest, FetchModeMeasuresFetchStreamAndRedisAcrossTwoLocalNodes) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  // 1 KiB takes the Get path, 128 KiB the Pin path (threshold 64 KiB).
  BenchRun run = RunBench(dir, {"--mode", "fetch", "--sizes", "1K,128K", "--iterations", "5", "--duration", "0.05"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> seen = CheckRows(run.csv);
  EXPECT_TRUE(seen.count("fetch/rplasma")) << run.csv;
  EXPECT_TRUE(seen.count("stream/tcp_stream")) << run.csv;
  EXPECT_TRUE(seen.count("get/redis")) << run.csv;
  const std::string targets = JudgeTargets(dir);
  EXPECT_NE(targets.find("small fetch latency"), std::string::npos) << targets;
}

TEST(BenchSmokeTest, FetchModeBatchRowsFetchManyIdsInOneCallAgainstMgetAndTheStream) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  BenchRun run = RunBench(dir, {"--mode", "fetch", "--batch", "50", "--sizes", "1K", "--rounds", "1", "--iterations",
                                "5", "--duration", "0.05"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> seen = CheckRows(run.csv);
  EXPECT_TRUE(seen.count("fetch/rplasma")) << "the single-id rows still run\n" << run.csv;
  for (const char* expected : {"batch_fetch/rplasma", "batch_mget/redis", "batch_stream/tcp_stream"}) {
    EXPECT_TRUE(seen.count(expected)) << expected << " missing from\n" << run.csv;
  }
  // The fetch row says its batch and carries both ratios.
  bool fetch_row = false;
  for (absl::string_view line : absl::StrSplit(run.csv, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "batch_fetch,")) continue;
    fetch_row = true;
    EXPECT_TRUE(absl::StrContains(line, "batch=50;")) << line;
    EXPECT_TRUE(absl::StrContains(line, "ratio_vs_mget=")) << line;
    EXPECT_TRUE(absl::StrContains(line, "ratio_vs_stream=")) << line;
  }
  EXPECT_TRUE(fetch_row) << run.csv;
  EXPECT_TRUE(absl::StrContains(run.output, "batch fetch: one Client::Fetch")) << run.output;
  const std::string targets = JudgeTargets(dir);
  EXPECT_TRUE(absl::StrContains(targets, "batch of 50, not 1000")) << targets;
}

// The value of `key` in a CSV line's detail (k=v;k=v), -1 if absent.
double DetailValue(absl::string_view line, absl::string_view key) {
  const std::string needle = absl::StrCat(key, "=");
  const size_t at = line.find(needle);
  if (at == absl::string_view::npos) return -1;
  absl::string_view rest = line.substr(at + needle.size());
  double value = -1;
  return absl::SimpleAtod(rest.substr(0, rest.find_first_of(";,\"")), &value) ? value : -1;
}

TEST(BenchSmokeTest, DirectoryModeMeasuresSealsAndLookupsOnOneRedisAndOnACluster) {
  RPLASMA_SKIP_IF_NO_REDIS_SERVER();
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  BenchRun run = RunBench(dir, {"--mode", "directory", "--nodes", "2", "--batch", "16", "--duration", "0.1"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> seen = CheckRows(run.csv);
  for (const char* expected : {"directory_seal/redis", "directory_lookup/redis", "directory_seal/redis_cluster",
                               "directory_lookup/redis_cluster"}) {
    EXPECT_TRUE(seen.count(expected)) << expected << " missing from\n" << run.csv;
  }
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(run.csv, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "directory_")) continue;
    ++rows;
    const bool cluster = absl::StrContains(line, ",redis_cluster,");
    EXPECT_GT(DetailValue(line, "commands_per_id"), 0) << line;
    EXPECT_GT(DetailValue(line, "pipelines_per_call"), 0) << line;
    EXPECT_EQ(DetailValue(line, "masters"), cluster ? 3 : 1) << line;
    if (cluster) {
      EXPECT_GT(DetailValue(line, "ratio_vs_redis"), 0) << line;
    }
    if (absl::StartsWith(line, "directory_seal,")) {
      // One hash per sealed id, spread over the masters by hash slot: each master holds some.
      EXPECT_GT(DetailValue(line, "keys_min"), 0) << line;
      EXPECT_GE(DetailValue(line, "key_balance"), 1) << line;
    } else {
      EXPECT_EQ(DetailValue(line, "found"), 1) << "every id looked up was sealed by a live node\n" << line;
    }
  }
  EXPECT_EQ(rows, 6) << "seal, lookup of 1 and of 16, on each system\n" << run.csv;
  const std::string targets = JudgeTargets(dir);
  EXPECT_TRUE(absl::StrContains(targets, "directory seals")) << targets;
  EXPECT_TRUE(absl::StrContains(targets, "keys per master")) << targets;
}

TEST(BenchSmokeTest, DirectoryModeRefusesZeroNodes) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  BenchRun run = RunBench(dir, {"--mode", "directory", "--nodes", "0"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "--nodes: must be 1..256")) << run.output;
}

TEST(BenchSmokeTest, UnknownFlagIsAUsageErrorWithExitCodeTwo) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  BenchRun run = RunBench(dir, {"--no-such-flag"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("unknown flag"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace rplasma::testing
