#include "store/memory_budget.h"

#include <string>

#include "absl/strings/str_cat.h"
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::rplasma::testing::IsOk;

constexpr uint64_t kNormalPages = 0;
constexpr uint64_t k2M = 2u << 20;

MemoryTexts Texts(const std::string& meminfo, const std::string& cgroup_max, const std::string& cgroup_current) {
  MemoryTexts texts;
  texts.meminfo = meminfo;
  texts.cgroup_max = cgroup_max;
  texts.cgroup_current = cgroup_current;
  return texts;
}

const char kMeminfo[] =
    "MemTotal:        8000000 kB\n"
    "MemAvailable:    4194304 kB\n"  // 4 GiB
    "HugePages_Total:      8\n"
    "HugePages_Free:       3\n"
    "Hugepagesize:       2048 kB\n";

TEST(MemoryBudgetTest, MemAvailableLessAReserveIsUsable) {
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes(Texts(kMeminfo, "", ""), kNormalPages));
  EXPECT_EQ(usable, (4ull << 30) - (256ull << 20));
  EXPECT_THAT(CheckArenaFits(1ull << 30, kNormalPages, Texts(kMeminfo, "", "")), IsOk());
  EXPECT_THAT(CheckArenaFits(4ull << 30, kNormalPages, Texts(kMeminfo, "", "")), HasErrorCode(ErrorCode::kOutOfMemory));
}

TEST(MemoryBudgetTest, ACgroupLimitBelowMemAvailableBinds) {
  const MemoryTexts texts = Texts(kMeminfo, "1073741824\n", "536870912\n");  // 1 GiB max, 512 MiB used
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes(texts, kNormalPages));
  EXPECT_EQ(usable, (512ull << 20) - (64ull << 20));
  EXPECT_THAT(CheckArenaFits(600ull << 20, kNormalPages, texts), HasErrorCode(ErrorCode::kOutOfMemory));
  // "max" means no limit.
  ASSERT_OK_AND_ASSIGN(usable, UsableArenaBytes(Texts(kMeminfo, "max\n", "536870912\n"), kNormalPages));
  EXPECT_EQ(usable, (4ull << 30) - (256ull << 20));
  // A cgroup already over its limit leaves nothing.
  ASSERT_OK_AND_ASSIGN(usable, UsableArenaBytes(Texts(kMeminfo, "100\n", "200\n"), kNormalPages));
  EXPECT_EQ(usable, 0u);
}

TEST(MemoryBudgetTest, HugepagesCountFreeHugePagesOnly) {
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes(Texts(kMeminfo, "", ""), k2M));
  EXPECT_EQ(usable, 3ull * (2u << 20));
  EXPECT_THAT(CheckArenaFits(8ull << 20, k2M, Texts(kMeminfo, "", "")), HasErrorCode(ErrorCode::kOutOfMemory));
}

TEST(MemoryBudgetTest, HugePagesReservedByAMappingAreNotFree) {
  const std::string meminfo = absl::StrCat(kMeminfo, "HugePages_Rsvd:       2\n");
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes(Texts(meminfo, "", ""), k2M));
  EXPECT_EQ(usable, 1ull * (2u << 20));
  EXPECT_THAT(CheckArenaFits(4ull << 20, k2M, Texts(meminfo, "", "")), HasErrorCode(ErrorCode::kOutOfMemory));
}

TEST(MemoryBudgetTest, AHugePageSizeOtherThanTheDefaultCountsItsOwnPool) {
  const uint64_t k1G = 1ull << 30;
  MemoryTexts texts = Texts(kMeminfo, "", "");
  texts.free_hugepages = "4\n";
  texts.resv_hugepages = "1\n";
  ASSERT_OK_AND_ASSIGN(uint64_t usable, UsableArenaBytes(texts, k1G));
  EXPECT_EQ(usable, 3ull << 30);
  EXPECT_THAT(CheckArenaFits(3ull << 30, k1G, texts), IsOk());
  EXPECT_THAT(CheckArenaFits(4ull << 30, k1G, texts), HasErrorCode(ErrorCode::kOutOfMemory));
  // Without its pool's counts, meminfo (which counts the default size only) cannot answer.
  EXPECT_THAT(UsableArenaBytes(Texts(kMeminfo, "", ""), k1G), HasErrorCode(ErrorCode::kInternal));
  texts.free_hugepages = "many";
  EXPECT_THAT(UsableArenaBytes(texts, k1G), HasErrorCode(ErrorCode::kInternal));
}

TEST(MemoryBudgetTest, MeminfoWithoutTheNeededLineIsAnError) {
  EXPECT_THAT(UsableArenaBytes(Texts("MemTotal: 1 kB\n", "", ""), kNormalPages), HasErrorCode(ErrorCode::kInternal));
  EXPECT_THAT(UsableArenaBytes(Texts("garbage", "", ""), k2M), HasErrorCode(ErrorCode::kInternal));
}

}  // namespace
}  // namespace rplasma
