// The benchmark common library's pure parts: size units, latency statistics, CSV output, and
// parsing of /proc/<pid>/status.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "bench-mpi/common/csv_writer.h"
#include "bench-mpi/common/latency_recorder.h"
#include "bench-mpi/common/median.h"
#include "bench-mpi/common/process_memory.h"
#include "bench-mpi/common/result_reporter.h"
#include "bench-mpi/common/size_units.h"
#include "bench-mpi/launch/child_process.h"
#include "protocol/base/status.h"
#include "tests/support/status_matchers.h"

namespace rplasma::bench {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(SizeUnitsTest, ParsesBinaryUnitsInAnyCase) {
  EXPECT_EQ(*ParseSize("16"), 16u);
  EXPECT_EQ(*ParseSize("16B"), 16u);
  EXPECT_EQ(*ParseSize("4K"), 4096u);
  EXPECT_EQ(*ParseSize("64kib"), 65536u);
  EXPECT_EQ(*ParseSize("1M"), 1u << 20);
  EXPECT_EQ(*ParseSize(" 256MiB "), 256u << 20);
  EXPECT_EQ(*ParseSize("2g"), uint64_t{2} << 30);
}

TEST(SizeUnitsTest, RejectsGarbageZeroAndOverflow) {
  EXPECT_THAT(ParseSize(""), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("K"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("12Q"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("0"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("-4K"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSize("99999999999999G"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(SizeUnitsTest, ParsesListsInOrderAndRejectsEmptyOnes) {
  auto sizes = ParseSizeList("16,4K,1M");
  ASSERT_OK(sizes.status());
  EXPECT_EQ(*sizes, (std::vector<uint64_t>{16, 4096, 1u << 20}));
  EXPECT_THAT(ParseSizeList(""), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseSizeList("16,x"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(LatencyRecorderTest, PercentilesAreNearestRankOverAllSamples) {
  LatencyRecorder r;
  for (int i = 100; i >= 1; --i) r.Record(i * 1000);  // 1..100 us, out of order
  LatencySummary s = r.Summarize();
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
  EXPECT_DOUBLE_EQ(s.p50_us, 50);
  EXPECT_DOUBLE_EQ(s.p95_us, 95);
  EXPECT_DOUBLE_EQ(s.p99_us, 99);
  EXPECT_NEAR(s.ops_per_s(), 100 / 5050e-6, 1e-6);
}

TEST(LatencyRecorderTest, EmptyRecorderSummarizesToZeros) {
  LatencySummary s = LatencyRecorder().Summarize();
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.p99_us, 0);
  EXPECT_EQ(s.ops_per_s(), 0);
}

TEST(LatencyRecorderTest, PerItemDividesTimesAndMultipliesCount) {
  LatencyRecorder r;
  r.Record(10000);
  LatencySummary s = r.Summarize().PerItem(1000);
  EXPECT_EQ(s.count, 1000);
  EXPECT_DOUBLE_EQ(s.p50_us, 0.01);
  EXPECT_NEAR(s.ops_per_s(), 1e8, 1);  // 1000 items in 10 us
}

TEST(MedianTest, MiddleValueOrTheMeanOfTheTwoMiddleOnesInAnyOrder) {
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

TEST(CsvWriterTest, HeaderHasTheSharedColumnsThenTheExtraOnes) {
  EXPECT_EQ(CsvHeader({}), "benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us");
  EXPECT_EQ(CsvHeader({"mean_us", "a,b"}),
            "benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us,mean_us,\"a,b\"");
}

TEST(CsvWriterTest, QuotesFieldsWithCommasAndQuotes) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(CsvWriterTest, WritesHeaderAndRowsToTheFile) {
  ScratchDir dir = ScratchDir::CreateOrDie();
  const std::string path = dir.Join("out.csv");
  ASSERT_OK_AND_ASSIGN(auto writer, CsvWriter::Open(path, {"note"}));
  CsvRow row{"get", "rplasma", "unix", "store", 16, 1000, 0.000016, 1.5, 3.25, {"x;y"}};
  ASSERT_OK(writer->Write(row));
  row.extra = {"a", "b"};
  EXPECT_THAT(writer->Write(row), HasErrorCode(ErrorCode::kInvalidArgument));
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(),
            "benchmark,system,transport,protocol,object_size,ops_per_s,gb_per_s,p50_us,p99_us,note\n"
            "get,rplasma,unix,store,16,1000.000,0.000016,1.500,3.250,x;y\n");
}

TEST(CsvWriterTest, OpenOfAnUnwritablePathFails) { EXPECT_FALSE(CsvWriter::Open("/nonexistent-dir/out.csv").ok()); }

TEST(ResultReporterTest, ThroughputFollowsFromLatencyAndSize) {
  LatencyRecorder r;
  for (int i = 0; i < 4; ++i) r.Record(1000000);  // 1 ms each
  BenchResult result = MakeResult("copy", "memcpy", "memory", "-", 1000000, r.Summarize());
  EXPECT_NEAR(result.ops_per_s, 1000, 1e-6);
  EXPECT_NEAR(result.gb_per_s, 1.0, 1e-9);
  ASSERT_OK_AND_ASSIGN(auto reporter, ResultReporter::Create("", nullptr));
  ASSERT_OK(reporter->Add(result));
  EXPECT_NE(reporter->Find("copy", "memcpy", 1000000), nullptr);
  EXPECT_EQ(reporter->Find("copy", "memcpy", 16), nullptr);
}

TEST(ResultReporterTest, ATagIsAddedToEveryLaterResultButNotOverAResultsOwnMetric) {
  LatencyRecorder r;
  r.Record(1000);
  ASSERT_OK_AND_ASSIGN(auto reporter, ResultReporter::Create("", nullptr));
  ASSERT_OK(reporter->Add(MakeResult("get", "rplasma", "unix", "store", 16, r.Summarize())));
  reporter->SetTag("round", 2);
  ASSERT_OK(reporter->Add(MakeResult("get", "rplasma", "unix", "store", 32, r.Summarize())));
  BenchResult own = MakeResult("get", "rplasma", "unix", "store", 64, r.Summarize());
  own.metrics["round"] = 7;
  ASSERT_OK(reporter->Add(own));
  ASSERT_EQ(reporter->results().size(), 3u);
  EXPECT_EQ(reporter->results()[0].Metric("round", -1), -1);
  EXPECT_EQ(reporter->results()[1].Metric("round", -1), 2);
  EXPECT_EQ(reporter->results()[2].Metric("round", -1), 7);
}

TEST(ProcessMemoryTest, ParsesKilobyteFieldsOfProcStatus) {
  ASSERT_OK_AND_ASSIGN(ProcessMemory m, ParseProcStatus("Name:\tx\nVmRSS:\t  1000 kB\nRssAnon:\t 200 kB\n"
                                                        "RssFile:\t 300 kB\nRssShmem:\t 500 kB\n"));
  EXPECT_EQ(m.vm_rss, 1000u * 1024);
  EXPECT_EQ(m.rss_anon, 200u * 1024);
  EXPECT_EQ(m.rss_file, 300u * 1024);
  EXPECT_EQ(m.rss_shmem, 500u * 1024);
}

TEST(ProcessMemoryTest, MissingOrMalformedFieldsAreErrors) {
  EXPECT_THAT(ParseProcStatus("Name:\tx\n"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseProcStatus("VmRSS:\tlots kB\nRssAnon:\t1 kB\n"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(ProcessMemoryTest, ReadsThisProcess) {
  ASSERT_OK_AND_ASSIGN(ProcessMemory m, ReadProcessMemory(::getpid()));
  EXPECT_GT(m.vm_rss, 0u);
  EXPECT_GT(m.rss_anon, 0u);
}

}  // namespace
}  // namespace rplasma::bench
