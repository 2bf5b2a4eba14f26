// ParseByteSize: the one size syntax of every binary and the CLI. The cases gathered here were
// the tests of the four parsers it replaced (store, CLI, threshold file, benchmarks).
#include "protocol/base/byte_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(ByteSizeTest, PlainNumbersAreBytes) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("16"), 16u);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("16B"), 16u);
  EXPECT_EQ(*ParseByteSize(" 12 B "), 12u);
  EXPECT_EQ(*ParseByteSize("18446744073709551615"), UINT64_MAX);
}

TEST(ByteSizeTest, SuffixesAreBinaryAndCaseInsensitiveWithOptionalBOrIB) {
  EXPECT_EQ(*ParseByteSize("4k"), 4096u);
  EXPECT_EQ(*ParseByteSize("64K"), 64u << 10);
  EXPECT_EQ(*ParseByteSize("64KiB"), 65536u);
  EXPECT_EQ(*ParseByteSize("64kib"), 65536u);
  EXPECT_EQ(*ParseByteSize("4 KB"), 4096u);
  EXPECT_EQ(*ParseByteSize("64m"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("3MB"), 3u << 20);
  EXPECT_EQ(*ParseByteSize(" 256MiB "), 256u << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1u << 30);
  EXPECT_EQ(*ParseByteSize("2g"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("1T"), 1ull << 40);
  EXPECT_EQ(*ParseByteSize("1P"), 1ull << 50);
  EXPECT_EQ(*ParseByteSize("15E"), 15ull << 60);
}

TEST(ByteSizeTest, DecimalsAreAcceptedWhenTheyComeToWholeBytes) {
  EXPECT_EQ(*ParseByteSize("1.5G"), 3ull << 29);
  EXPECT_EQ(*ParseByteSize("1.5 MiB"), 3ull << 19);
  EXPECT_EQ(*ParseByteSize("1.5M"), 1572864u);
  EXPECT_EQ(*ParseByteSize("0.5K"), 512u);
  EXPECT_EQ(*ParseByteSize(".25K"), 256u);
  EXPECT_EQ(*ParseByteSize("2.0"), 2u);
  EXPECT_EQ(*ParseByteSize("0.001953125K"), 2u);
  EXPECT_THAT(ParseByteSize("0.3"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("1.1K"), HasErrorCode(ErrorCode::kInvalidArgument));  // 1126.4 bytes
  EXPECT_THAT(ParseByteSize("1.2.3K"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ParseByteSize("."), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(ByteSizeTest, RejectsGarbageSignsUnknownUnitsAndOverflow) {
  for (const char* bad : {"",
                          "M",
                          "MiB",
                          "K",
                          "-1",
                          "-5",
                          "-4K",
                          "+5",
                          "12X",
                          "12Q",
                          "0x10",
                          "12 apples",
                          "12 parsecs",
                          "4KK",
                          "4Kb2",
                          "99999999999999999999",
                          "18446744073709551616",
                          "20000000T",
                          "17179869184G",
                          "99999999999999G",
                          "20000000E",
                          "16E",
                          "1.5E1"}) {
    EXPECT_THAT(ParseByteSize(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST(ByteSizeTest, TheErrorQuotesTheText) {
  absl::StatusOr<uint64_t> bad = ParseByteSize("12 apples");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("'12 apples'"));
}

TEST(ByteSizeTest, FormatsWithTheLargestExactUnitAndParsesBack) {
  EXPECT_EQ(FormatByteSize(0), "0B");
  EXPECT_EQ(FormatByteSize(16), "16B");
  EXPECT_EQ(FormatByteSize(4096), "4KiB");
  EXPECT_EQ(FormatByteSize(1536), "1536B");
  EXPECT_EQ(FormatByteSize(64u << 20), "64MiB");
  EXPECT_EQ(FormatByteSize(uint64_t{3} << 30), "3GiB");
  EXPECT_EQ(FormatByteSize(uint64_t{1} << 63), "8EiB");
  for (uint64_t bytes :
       {uint64_t{0}, uint64_t{1}, uint64_t{1536}, uint64_t{4} << 20, ~uint64_t{0}, uint64_t{1} << 63}) {
    const absl::StatusOr<uint64_t> back = ParseByteSize(FormatByteSize(bytes));
    ASSERT_TRUE(back.ok()) << FormatByteSize(bytes) << ": " << back.status();
    EXPECT_EQ(*back, bytes);
  }
}

}  // namespace
}  // namespace rplasma
