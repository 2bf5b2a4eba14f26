// rplasma-bench's command line: the spec's flags, defaults, and clear errors for bad input.
#include "bench-mpi/local/local_bench_options.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/base/status.h"
#include "tests/support/status_matchers.h"

namespace rplasma::bench {
namespace {

using ::rplasma::testing::HasErrorCode;

absl::StatusOr<LocalBenchOptions> Parse(std::vector<std::string> args, bool* help = nullptr) {
  std::vector<char*> argv = {const_cast<char*>("rplasma-bench")};
  for (std::string& a : args) argv.push_back(a.data());
  bool ignored = false;
  return ParseLocalBenchOptions(static_cast<int>(argv.size()), argv.data(), help ? help : &ignored);
}

TEST(LocalBenchOptionsTest, DefaultsMatchTheSpec) {
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions o, Parse({}));
  EXPECT_EQ(o.mode, "local");
  EXPECT_EQ(o.sizes, (std::vector<uint64_t>{16, 4096, 65536, 1u << 20, 64u << 20, 256u << 20}));
  EXPECT_EQ(o.redis, RedisMode::kAuto);
  EXPECT_EQ(o.objects_overhead, 1000000);
  EXPECT_EQ(o.rounds, 1);
  EXPECT_TRUE(o.store_socket.empty());
  // Room for two of the largest objects and a million 64-byte slots.
  EXPECT_GE(o.DefaultMemoryBytes(), 512u * (1u << 20) + 64000000u);
}

TEST(LocalBenchOptionsTest, ParsesEveryFlagInBothSpellings) {
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions o,
                       Parse({"--mode", "local", "--sizes=16,1M", "--iterations", "7", "--duration", "0.5", "--csv",
                              "/tmp/x.csv", "--store-socket", "/tmp/s.sock", "--no-redis", "--objects-overhead=0",
                              "--batch", "10", "--memory", "2G", "--rounds=3"}));
  EXPECT_EQ(o.sizes, (std::vector<uint64_t>{16, 1u << 20}));
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.duration, absl::Milliseconds(500));
  EXPECT_EQ(o.csv_path, "/tmp/x.csv");
  EXPECT_EQ(o.store_socket, "/tmp/s.sock");
  EXPECT_EQ(o.redis, RedisMode::kOff);
  EXPECT_EQ(o.objects_overhead, 0);
  EXPECT_EQ(o.batch, 10);
  EXPECT_EQ(o.rounds, 3);
  EXPECT_EQ(o.memory_bytes, uint64_t{2} << 30);
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions r, Parse({"--redis"}));
  EXPECT_EQ(r.redis, RedisMode::kOn);
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions m,
                       Parse({"--mode=fetch", "--manager-arg=--guess-owner=false", "--manager-arg", "--cq-spin=0"}));
  EXPECT_EQ(m.manager_args, (std::vector<std::string>{"--guess-owner=false", "--cq-spin=0"}));
}

TEST(LocalBenchOptionsTest, PinThresholdAcceptsItsOldNameRdmaThreshold) {
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions defaults, Parse({"--mode=fetch"}));
  EXPECT_EQ(defaults.pin_threshold, "65536");
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions pin, Parse({"--mode=fetch", "--pin-threshold", "1M"}));
  EXPECT_EQ(pin.pin_threshold, "1M");
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions alias, Parse({"--mode=fetch", "--rdma-threshold=auto"}));
  EXPECT_EQ(alias.pin_threshold, "auto");
  EXPECT_NE(LocalBenchUsage().find("--pin-threshold"), std::string::npos);
}

TEST(LocalBenchOptionsTest, DirectoryModeHasItsOwnDefaultsAndBounds) {
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions d, Parse({"--mode=directory"}));
  EXPECT_EQ(d.nodes, 8);
  EXPECT_EQ(d.batch, LocalBenchOptions::kDirectoryBatch);
  EXPECT_EQ(d.duration, LocalBenchOptions::kDirectoryDuration);
  EXPECT_EQ(d.replicas, 1);
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions given,
                       Parse({"--mode", "directory", "--nodes", "3", "--batch=64", "--duration", "500ms"}));
  EXPECT_EQ(given.nodes, 3);
  EXPECT_EQ(given.batch, 64);
  EXPECT_EQ(given.duration, absl::Milliseconds(500));
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--mode=directory", "--nodes", "0"},
                                              {"--mode=directory", "--nodes", "257"},
                                              {"--mode=directory", "--nodes", "x"},
                                              {"--mode=directory", "--batch", "0"},
                                              {"--mode=directory", "--batch", "65537"},
                                              {"--mode=directory", "--duration", "0"},
                                              {"--mode=directory", "--replicas", "5"}}) {
    EXPECT_THAT(Parse(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad[1] << " " << bad[2];
  }
}

TEST(LocalBenchOptionsTest, HelpIsReportedNotAnError) {
  bool help = false;
  EXPECT_OK(Parse({"--help"}, &help).status());
  EXPECT_TRUE(help);
  EXPECT_NE(LocalBenchUsage().find("--objects-overhead"), std::string::npos);
}

TEST(LocalBenchOptionsTest, BadInputIsAnInvalidArgumentNamingTheFlag) {
  auto unknown = Parse({"--bogus"});
  EXPECT_THAT(unknown, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_NE(unknown.status().message().find("--bogus"), absl::string_view::npos);
  EXPECT_THAT(Parse({"--iterations", "many"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--iterations", "0"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--rounds", "0"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--duration", "-1"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--sizes", "16,zz"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--mode", "mpi"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--csv"}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(Parse({"--mode=fetch", "--batch", "0"}), HasErrorCode(ErrorCode::kInvalidArgument));
  auto no_bytes = Parse({"--mode=fetch", "--batch", "10", "--batch-bytes", "0"});
  EXPECT_THAT(no_bytes, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_NE(no_bytes.status().message().find("--batch-bytes"), absl::string_view::npos);
}

TEST(LocalBenchOptionsTest, FetchModeRunsNoBatchRowsUnlessAskedAndFiveRoundsOfThem) {
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions plain, Parse({"--mode", "fetch"}));
  EXPECT_EQ(plain.batch, 1);  // today's fetch output, single-id rows only
  EXPECT_EQ(plain.rounds, 5);
  EXPECT_EQ(plain.batch_bytes, uint64_t{256} << 20);
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions batched,
                       Parse({"--mode", "fetch", "--batch", "1000", "--rounds=3", "--batch-bytes", "64M"}));
  EXPECT_EQ(batched.batch, 1000);
  EXPECT_EQ(batched.rounds, 3);
  EXPECT_EQ(batched.batch_bytes, uint64_t{64} << 20);
  // Local mode keeps its own defaults.
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions local, Parse({}));
  EXPECT_EQ(local.batch, 1000);
  EXPECT_EQ(local.rounds, 1);
  EXPECT_NE(LocalBenchUsage().find("--batch-bytes"), std::string::npos);
}

TEST(LocalBenchOptionsTest, BatchCountIsCappedByBatchBytesButNeverZero) {
  ASSERT_OK_AND_ASSIGN(LocalBenchOptions o, Parse({"--mode", "fetch", "--batch", "1000"}));
  EXPECT_EQ(o.BatchCount(1024), 1000);     // 1000 KiB fits in 256 MiB
  EXPECT_EQ(o.BatchCount(1u << 20), 256);  // 1000 MiB does not: 256 x 1 MiB
  EXPECT_EQ(o.BatchCount(16u << 20), 16);
  EXPECT_EQ(o.BatchCount(uint64_t{1} << 30), 1);  // one object larger than the cap still runs
  o.batch = 100;
  EXPECT_EQ(o.BatchCount(1u << 20), 100);
}

}  // namespace
}  // namespace rplasma::bench
