// Flag spelling shared by every binary: dashes or underscores, --flagfile, --version's line.
#include "protocol/command_line/flag_spelling.h"

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench-mpi/launch/child_process.h"
#include "protocol/command_line/build_info.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::ElementsAre;

TEST(FlagSpellingTest, DashesAndUnderscoresNameTheSameFlag) {
  std::optional<FlagArg> dashed = SplitFlagArg("--max-output-bytes=64M");
  ASSERT_TRUE(dashed.has_value());
  EXPECT_EQ(dashed->name, "max_output_bytes");
  EXPECT_EQ(dashed->spelled, "--max-output-bytes");
  EXPECT_EQ(dashed->value, "64M");
  std::optional<FlagArg> underscored = SplitFlagArg("--max_output_bytes");
  ASSERT_TRUE(underscored.has_value());
  EXPECT_EQ(underscored->name, "max_output_bytes");
  EXPECT_EQ(underscored->spelled, "--max_output_bytes");
  EXPECT_FALSE(underscored->value.has_value());
}

TEST(FlagSpellingTest, ValuesKeepTheirDashesAndOneLeadingDashIsAFlagToo) {
  std::optional<FlagArg> flag = SplitFlagArg("--node-name=rank-1_a");
  ASSERT_TRUE(flag.has_value());
  EXPECT_EQ(flag->value, "rank-1_a");
  std::optional<FlagArg> single = SplitFlagArg("-memory=1G");
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(single->name, "memory");
  EXPECT_EQ(single->spelled, "-memory");
}

TEST(FlagSpellingTest, OperandsAreNotFlags) {
  EXPECT_FALSE(SplitFlagArg("store.sock").has_value());
  EXPECT_FALSE(SplitFlagArg("-").has_value());
  EXPECT_FALSE(SplitFlagArg("--").has_value());
  EXPECT_FALSE(SplitFlagArg("--=x").has_value());
}

TEST(FlagSpellingTest, NamesConvertBothWays) {
  EXPECT_EQ(UnderscoredFlagName("store-socket"), "store_socket");
  EXPECT_EQ(DashedFlagName("store_socket"), "store-socket");
}

TEST(FlagSpellingTest, FlagfilesExpandInPlaceSkippingCommentsAndBlankLines) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  {
    std::ofstream(dir.Join("inner.flags")) << "--name=inner\n";
    std::ofstream(dir.Join("store.flags"))
        << "# the store\n\n  --memory=1G  \n--flagfile=" << dir.Join("inner.flags") << "\n--max-output-bytes\n8M\n";
  }
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> args,
                       ExpandFlagfiles({"--socket=/s", "--flagfile", dir.Join("store.flags"), "--name=last", "--",
                                        "--flagfile=not-read"}));
  EXPECT_THAT(args, ElementsAre("--socket=/s", "--memory=1G", "--name=inner", "--max-output-bytes", "8M", "--name=last",
                                "--", "--flagfile=not-read"));
}

TEST(FlagSpellingTest, AMissingOrSelfIncludingFlagfileIsAnError) {
  bench::ScratchDir dir = bench::ScratchDir::CreateOrDie();
  absl::StatusOr<std::vector<std::string>> missing = ExpandFlagfiles({"--flagfile=" + dir.Join("nope")});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), ::testing::HasSubstr(dir.Join("nope")));
  std::ofstream(dir.Join("loop.flags")) << "--flagfile=" << dir.Join("loop.flags") << "\n";
  EXPECT_THAT(ExpandFlagfiles({"--flagfile=" + dir.Join("loop.flags")}), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ExpandFlagfiles({"--flagfile"}), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(FlagSpellingTest, VersionLineNamesTheProgramVersionAndRevision) {
  EXPECT_EQ(VersionLine("rplasma-store"),
            std::string("rplasma-store ") + BuildVersion() + " (git " + BuildGitRevision() + ")");
  EXPECT_STREQ(BuildVersion(), RPLASMA_TEST_PROJECT_VERSION);
  EXPECT_FALSE(std::string(BuildGitRevision()).empty());
}

}  // namespace
}  // namespace rplasma
