#include "client/cli/cli_format.h"

#include <gtest/gtest.h>

#include "client/cli/command.h"
#include "tests/support/status_matchers.h"

namespace rplasma::cli {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(FormatSizeTest, SmallSizesAreWholeBytes) {
  EXPECT_EQ(FormatSize(0), "0 B");
  EXPECT_EQ(FormatSize(1), "1 B");
  EXPECT_EQ(FormatSize(1023), "1023 B");
}

TEST(FormatSizeTest, LargerSizesUseBinaryUnitsWithOneDecimal) {
  EXPECT_EQ(FormatSize(1024), "1.0 KiB");
  EXPECT_EQ(FormatSize(1536), "1.5 KiB");
  EXPECT_EQ(FormatSize(64ull << 20), "64.0 MiB");
  EXPECT_EQ(FormatSize(3ull << 30), "3.0 GiB");
  EXPECT_EQ(FormatSize(5ull << 40), "5.0 TiB");
}

TEST(FormatSizeTest, RoundingUpMovesToTheNextUnit) { EXPECT_EQ(FormatSize((1ull << 20) - 1), "1.0 MiB"); }

TEST(CliParseByteSizeTest, AcceptsPlainBytesAndBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("4k"), 4096u);
  EXPECT_EQ(*ParseByteSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseByteSize("4 KB"), 4096u);
  EXPECT_EQ(*ParseByteSize("64MiB"), 64ull << 20);
  EXPECT_EQ(*ParseByteSize("1.5 MiB"), 3ull << 19);
  EXPECT_EQ(*ParseByteSize("2g"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("1T"), 1ull << 40);
  EXPECT_EQ(*ParseByteSize(" 12 B "), 12u);
}

TEST(CliParseByteSizeTest, RejectsGarbageOverflowAndFractionsOfBytes) {
  EXPECT_THAT(ParseByteSize(""), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("MiB"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("12 apples"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("-5"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("99999999999999999999"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("20000000E"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("0.3"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("1.2.3k"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(CliParseByteSizeTest, RoundTripsWhatFormatSizePrintsForWholeUnits) {
  for (uint64_t v : {1ull << 10, 3ull << 20, 7ull << 30}) EXPECT_EQ(*ParseByteSize(FormatSize(v)), v);
}

TEST(ParseObjectIdTest, AcceptsFortyHexDigitsInEitherCase) {
  const ObjectID id = ObjectID::FromLabel("x");
  ASSERT_OK_AND_ASSIGN(ObjectID lower, ParseObjectId(id.Hex()));
  EXPECT_EQ(lower, id);
  std::string upper = id.Hex();
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_OK_AND_ASSIGN(ObjectID from_upper, ParseObjectId(upper));
  EXPECT_EQ(from_upper, id);
}

TEST(ParseObjectIdTest, RejectsWrongLengthAndNonHex) {
  EXPECT_THAT(ParseObjectId("abc"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseObjectId(std::string(40, 'g')), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(TakeObjectIdTest, LabelsAndHexConsumeTheirWords) {
  const std::vector<std::string> words = {"--label", "hello", ObjectID::FromLabel("y").Hex(), "rest"};
  absl::Span<const std::string> args(words);
  ASSERT_OK_AND_ASSIGN(ObjectID first, TakeObjectId(args));
  EXPECT_EQ(first, ObjectID::FromLabel("hello"));
  ASSERT_OK_AND_ASSIGN(ObjectID second, TakeObjectId(args));
  EXPECT_EQ(second, ObjectID::FromLabel("y"));
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0], "rest");
}

TEST(TakeObjectIdTest, MissingOrBadIdsAreUsageErrors) {
  std::vector<std::string> words = {"--label"};
  absl::Span<const std::string> args(words);
  EXPECT_TRUE(IsUsageError(TakeObjectId(args).status()));
  words = {"nothex"};
  args = absl::Span<const std::string>(words);
  EXPECT_TRUE(IsUsageError(TakeObjectId(args).status()));
}

TEST(IndentJsonTest, PutsOneMemberPerLineAndLeavesStringsAlone) {
  EXPECT_EQ(IndentJson(R"({"a":[1,2],"b":{},"c":[]})"),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}");
  // Brackets, commas, colons and escaped quotes inside strings are text, not structure.
  EXPECT_EQ(IndentJson(R"({"k":"x,{y}:[z] \"q\" \\"})"), "{\n  \"k\": \"x,{y}:[z] \\\"q\\\" \\\\\"\n}");
  EXPECT_EQ(IndentJson("{ \"n\" : 1 }"), "{\n  \"n\": 1\n}");
}

TEST(CommandTableTest, HasTheDocumentedCommandsOnce) {
  std::vector<std::string> names;
  for (const Command& c : AllCommands()) names.push_back(c.name);
  for (const char* expected : {"put", "get", "list", "stats", "delete"}) {
    EXPECT_EQ(std::count(names.begin(), names.end(), expected), 1) << expected;
  }
}

}  // namespace
}  // namespace rplasma::cli
