#include "store/memory_budget.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::IsOk;

const char kMeminfo[] =
    "MemTotal:        8000000 kB\n"
    "MemAvailable:    4194304 kB\n"  // 4 GiB
    "HugePages_Total:      8\n"
    "HugePages_Free:       3\n"
    "Hugepagesize:       2048 kB\n";

TEST(MemoryBudgetTest, MemAvailableLessAReserveIsUsable) {
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes({kMeminfo, "", ""}, false));
  EXPECT_EQ(usable, (4ull << 30) - (256ull << 20));
  EXPECT_THAT(CheckArenaFits(1ull << 30, false, {kMeminfo, "", ""}), IsOk());
  EXPECT_THAT(CheckArenaFits(4ull << 30, false, {kMeminfo, "", ""}), HasErrorCode(ErrorCode::kOutOfMemory));
}

TEST(MemoryBudgetTest, ACgroupLimitBelowMemAvailableBinds) {
  const MemoryTexts texts{kMeminfo, "1073741824\n", "536870912\n"};  // 1 GiB max, 512 MiB used
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes(texts, false));
  EXPECT_EQ(usable, (512ull << 20) - (64ull << 20));
  EXPECT_THAT(CheckArenaFits(600ull << 20, false, texts), HasErrorCode(ErrorCode::kOutOfMemory));
  // "max" means no limit.
  ASSERT_OK_AND_ASSIGN(usable, UsableArenaBytes({kMeminfo, "max\n", "536870912\n"}, false));
  EXPECT_EQ(usable, (4ull << 30) - (256ull << 20));
  // A cgroup already over its limit leaves nothing.
  ASSERT_OK_AND_ASSIGN(usable, UsableArenaBytes({kMeminfo, "100\n", "200\n"}, false));
  EXPECT_EQ(usable, 0u);
}

TEST(MemoryBudgetTest, HugepagesCountFreeHugePagesOnly) {
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes({kMeminfo, "", ""}, true));
  EXPECT_EQ(usable, 3ull * (2u << 20));
  EXPECT_THAT(CheckArenaFits(8ull << 20, true, {kMeminfo, "", ""}), HasErrorCode(ErrorCode::kOutOfMemory));
}

TEST(MemoryBudgetTest, MeminfoWithoutTheNeededLineIsAnError) {
  EXPECT_THAT(UsableArenaBytes({"MemTotal: 1 kB\n", "", ""}, false), HasErrorCode(ErrorCode::kInternal));
  EXPECT_THAT(UsableArenaBytes({"garbage", "", ""}, true), HasErrorCode(ErrorCode::kInternal));
}

}  // namespace
}  // namespace rplasma
