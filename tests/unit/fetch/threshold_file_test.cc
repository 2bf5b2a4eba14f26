#include "manager/fetch/threshold_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "tests/support/status_matchers.h"

namespace rplasma::fetch {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(ThresholdFileTest, ByteSizesAcceptUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("64KiB"), 65536u);
  EXPECT_EQ(*ParseByteSize("1M"), 1u << 20);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ull << 30);
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_FALSE(ParseByteSize("12 parsecs").ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999").ok());
  EXPECT_FALSE(ParseByteSize("17179869184G").ok()) << "overflow";
}

TEST(ThresholdFileTest, TunerOutputWithCommentsAndFitLinesParses) {
  ASSERT_OK_AND_ASSIGN(ThresholdTable table, ParseThresholdFile("# written by rplasma-bench-mpi --tune\n"
                                                                "fit get: 12.5us + 0.31ns/B; pin: 30us + 0.08ns/B\n"
                                                                "\n"
                                                                "default 262144   # crossover\n"
                                                                "peer node-b.42 128KiB\n"
                                                                "sample 4096 get=10us pin=31us\n"));
  EXPECT_EQ(table.default_bytes, 262144u);
  ASSERT_EQ(table.per_peer.size(), 1u);
  EXPECT_EQ(table.per_peer.at("node-b.42"), 131072u);
}

TEST(ThresholdFileTest, GarbageIsRejectedWithItsLineNumber) {
  absl::StatusOr<ThresholdTable> bad = ParseThresholdFile("default 1024\nthreshold is 5\n");
  EXPECT_THAT(bad, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find("line 2"), absl::string_view::npos) << bad.status();
  EXPECT_FALSE(ParseThresholdFile("peer a 1024\n").ok()) << "no default";
  EXPECT_FALSE(ParseThresholdFile("default 1024\ndefault 2048\n").ok()) << "two defaults";
  EXPECT_FALSE(ParseThresholdFile("default 1024 extra\n").ok());
  EXPECT_FALSE(ParseThresholdFile("default lots\n").ok());
  EXPECT_FALSE(ParseThresholdFile("default 1024\npeer a 1\npeer a 2\n").ok()) << "peer twice";
  EXPECT_FALSE(ParseThresholdFile("default 1024\npeer bad/id 1\n").ok());
  EXPECT_FALSE(ParseThresholdFile("default 1GiB\n").ok()) << "above the largest Call";
  EXPECT_FALSE(ParseThresholdFile(std::string("default 1\0\n", 11)).ok());
}

// A hostile or corrupt --pin-threshold file: refused with a clear error, never read forever.
TEST(ThresholdFileTest, DevicesFifosAndHugeFilesAreRefusedNotReadOn) {
  EXPECT_THAT(ParseThresholdSetting("/dev/zero", 65536), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseThresholdSetting("/dev/null", 65536), HasErrorCode(ErrorCode::kInvalidArgument));
  const std::string dir = ::testing::TempDir();
  const std::string fifo = dir + "/threshold-fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ParseThresholdSetting(fifo, 65536), HasErrorCode(ErrorCode::kInvalidArgument))
      << "no writer: never opened";
  ::unlink(fifo.c_str());
  const std::string huge = dir + "/threshold-huge";
  {
    std::ofstream out(huge);
    out << "default 64K\n";
    const std::string comment = "# " + std::string(1000, 'x') + "\n";
    for (size_t written = 0; written <= kMaxThresholdFileBytes; written += comment.size()) out << comment;
  }
  absl::StatusOr<ThresholdSetting> refused = ParseThresholdSetting(huge, 65536);
  EXPECT_THAT(refused, HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_NE(refused.status().message().find("larger than"), absl::string_view::npos) << refused.status();
  {
    std::ofstream out(huge, std::ios::trunc);
    out << "default 64K\npeer rank1 4K  # a tuner line\n";
  }
  ASSERT_OK_AND_ASSIGN(ThresholdSetting ok, ParseThresholdSetting(huge, 65536));
  EXPECT_EQ(ok.mode, ThresholdSetting::Mode::kFile);
  EXPECT_EQ(ok.table.default_bytes, 65536u);
  ::unlink(huge.c_str());
}

TEST(ThresholdFileTest, NodeNameOfIdStripsTheRandomSuffixOnly) {
  EXPECT_EQ(NodeNameOfId("rank1.3fa9c2d1"), "rank1");
  EXPECT_EQ(NodeNameOfId("host.example.0123abcd"), "host.example");
  EXPECT_EQ(NodeNameOfId("rank1"), "rank1") << "no suffix";
  EXPECT_EQ(NodeNameOfId("rank1.3fa9c2d"), "rank1.3fa9c2d") << "7 digits is part of the name";
  EXPECT_EQ(NodeNameOfId("rank1.3fa9c2dz"), "rank1.3fa9c2dz") << "not hex";
  EXPECT_EQ(NodeNameOfId(".3fa9c2d1"), ".3fa9c2d1") << "an empty name is no name";
  EXPECT_EQ(NodeNameOfId(""), "");
}

TEST(ThresholdFileTest, PeerLinesMatchTheExactIdFirstThenTheNodeName) {
  ASSERT_OK_AND_ASSIGN(ThresholdTable table, ParseThresholdFile("default 64KiB\n"
                                                                "peer rank1 16KiB\n"
                                                                "peer rank2.0000beef 4KiB\n"
                                                                "peer rank2 1MiB\n"));
  EXPECT_EQ(table.For("rank1.3fa9c2d1"), 16384u) << "any start of rank1";
  EXPECT_EQ(table.For("rank1.77777777"), 16384u);
  EXPECT_EQ(table.For("rank1"), 16384u);
  EXPECT_EQ(table.For("rank2.0000beef"), 4096u) << "the exact id wins over the name";
  EXPECT_EQ(table.For("rank2.0000cafe"), 1u << 20);
  EXPECT_EQ(table.For("rank3.3fa9c2d1"), 65536u) << "unknown node: default";
  EXPECT_EQ(table.For("rank10.3fa9c2d1"), 65536u) << "a name matches whole, not by prefix";
}

TEST(ThresholdFileTest, SettingIsBytesAutoOrAFile) {
  ASSERT_OK_AND_ASSIGN(ThresholdSetting fixed, ParseThresholdSetting("64KiB", 1));
  EXPECT_EQ(fixed.mode, ThresholdSetting::Mode::kFixed);
  EXPECT_EQ(fixed.table.default_bytes, 65536u);
  ASSERT_OK_AND_ASSIGN(ThresholdSetting automatic, ParseThresholdSetting("auto", 777));
  EXPECT_EQ(automatic.mode, ThresholdSetting::Mode::kAuto);
  EXPECT_EQ(automatic.table.default_bytes, 777u);

  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  std::ofstream(dir.Join("t.txt")) << "default 8192\npeer x 4096\n";
  ASSERT_OK_AND_ASSIGN(ThresholdSetting file, ParseThresholdSetting(dir.Join("t.txt"), 1));
  EXPECT_EQ(file.mode, ThresholdSetting::Mode::kFile);
  EXPECT_EQ(file.table.per_peer.at("x"), 4096u);
  EXPECT_FALSE(ParseThresholdSetting(dir.Join("missing.txt"), 1).ok());
  EXPECT_FALSE(ParseThresholdSetting("1GiB", 1).ok());
}

}  // namespace
}  // namespace rplasma::fetch
