#include "store/store_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

// ParseByteSize's cases are in tests/unit/base/byte_size_test.cc.

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

TEST(StoreOptionsTest, IndexEntriesAreZeroOrAPowerOfTwoAndSlotsAPowerOfTwo) {
  StoreOptions o;
  o.socket_path = "/tmp/x/store.sock";
  o.memory_bytes = 1 << 20;
  for (uint64_t good : {uint64_t{0}, uint64_t{16}, uint64_t{4096}, uint64_t{1} << 24}) {
    o.index_entries = good;
    EXPECT_OK(o.Validate()) << good;
  }
  for (uint64_t bad : {uint64_t{8}, uint64_t{1000}, uint64_t{1} << 25}) {
    o.index_entries = bad;
    EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
  o.index_entries.reset();  // auto
  for (uint64_t bad : {uint64_t{0}, uint64_t{8}, uint64_t{100}, uint64_t{1} << 25}) {
    o.slots_per_client = bad;
    EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
  o.slots_per_client = 16;
  EXPECT_OK(o.Validate());
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
