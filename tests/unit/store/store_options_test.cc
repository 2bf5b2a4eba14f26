#include "store/store_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(ParseByteSizeTest, AcceptsPlainNumbersAndBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("64K"), 64u << 10);
  EXPECT_EQ(*ParseByteSize("64m"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1u << 30);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("3MB"), 3u << 20);
  EXPECT_EQ(*ParseByteSize("1T"), 1ull << 40);
}

TEST(ParseByteSizeTest, RejectsGarbageNegativesAndOverflow) {
  for (const char* bad : {"", "M", "-1", "+5", "1.5G", "12X", "0x10", "99999999999999999999", "20000000T"}) {
    EXPECT_THAT(ParseByteSize(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST(StoreOptionsTest, ValidateNeedsASocketAndMemory) {
  StoreOptions o;
  EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
  o.socket_path = "/tmp/x/store.sock";
  EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
  o.memory_bytes = 1 << 20;
  EXPECT_OK(o.Validate());
  o.socket_path = std::string(200, 'a');
  EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(ParseHugepagesTest, AcceptsOffOnAndAPageSize) {
  for (const char* off : {"", "off"}) {
    ASSERT_OK_AND_ASSIGN(Hugepages h, ParseHugepages(off));
    EXPECT_FALSE(h.enabled) << off;
  }
  ASSERT_OK_AND_ASSIGN(Hugepages on, ParseHugepages("on"));
  EXPECT_TRUE(on.enabled);
  EXPECT_EQ(on.page_size, 0u);  // the system's default
  ASSERT_OK_AND_ASSIGN(Hugepages two, ParseHugepages("2M"));
  EXPECT_TRUE(two.enabled);
  EXPECT_EQ(two.page_size, 2u << 20);
  ASSERT_OK_AND_ASSIGN(Hugepages gig, ParseHugepages("1G"));
  EXPECT_EQ(gig.page_size, 1u << 30);
}

TEST(ParseHugepagesTest, RejectsOtherWordsSizesThatAreNoPageAndDirectoriesThatAreNoHugetlbfs) {
  for (const char* bad : {"yes", "true", "3M", "4K", "0", "-2M", "2M2", "relative/dir"}) {
    EXPECT_THAT(ParseHugepages(bad), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
  absl::StatusOr<Hugepages> tmp = ParseHugepages("/");
  ASSERT_FALSE(tmp.ok());
  EXPECT_THAT(std::string(tmp.status().message()), ::testing::HasSubstr("not a hugetlbfs mount"));
  EXPECT_FALSE(ParseHugepages("/nonexistent-rplasma-dir").ok());
}

}  // namespace
}  // namespace rplasma
