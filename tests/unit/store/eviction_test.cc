// LRU eviction in ObjectTable: what is evicted, in which order, and how much.
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/object_table.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::ElementsAre;

constexpr ClientId kWriter = 1;
constexpr ClientId kReader = 2;
constexpr uint64_t kUnit = 1024;  // object size; the arena holds 10

class EvictionTest : public ::testing::Test {
 protected:
  EvictionTest()
      : table_(10 * kUnit, 1, [this](EventKind kind, const ObjectInfo& info) {
          if (kind == EventKind::kEvicted) evicted_.push_back(Index(info.id));
        }) {
    for (int i = 0; i < 20; ++i) ids_.push_back(ObjectID::FromLabel(absl::StrCat("evict-", i)));
  }
  int Index(const ObjectID& id) const {
    return static_cast<int>(std::find(ids_.begin(), ids_.end(), id) - ids_.begin());
  }
  // Creates, seals and releases object i: it becomes evictable, most recently used.
  void Put(int i, uint64_t size = kUnit) {
    ASSERT_OK(table_.Create(kWriter, ids_[i], size, 0, false));
    ASSERT_OK(table_.Seal(kWriter, ids_[i], 0));
    ASSERT_OK(table_.Release(kWriter, ids_[i]));
  }

  std::vector<ObjectID> ids_;
  std::vector<int> evicted_;
  ObjectTable table_;
};

TEST_F(EvictionTest, EvictsLeastRecentlyReleasedFirst) {
  for (int i = 0; i < 4; ++i) Put(i);
  // Using object 0 makes it the most recently used once released.
  ASSERT_OK(table_.Get(kReader, ids_[0]));
  ASSERT_OK(table_.Release(kReader, ids_[0]));
  EvictResult r = table_.Evict(2 * kUnit);
  EXPECT_EQ(r.objects, 2u);
  EXPECT_EQ(r.bytes, 2 * kUnit);
  EXPECT_THAT(evicted_, ElementsAre(1, 2));
  EXPECT_EQ(table_.stats().evictions, 2u);
  EXPECT_EQ(table_.stats().evicted_bytes, 2 * kUnit);
}

TEST_F(EvictionTest, NeverEvictsReferencedOrUnsealedObjects) {
  Put(0);
  ASSERT_OK(table_.Get(kReader, ids_[0]));                      // referenced
  ASSERT_OK(table_.Create(kWriter, ids_[1], kUnit, 0, false));  // unsealed
  Put(2);
  EvictResult r = table_.Evict(100 * kUnit);
  EXPECT_EQ(r.objects, 1u);
  EXPECT_THAT(evicted_, ElementsAre(2));
  EXPECT_TRUE(table_.Find(ids_[0]).has_value());
  EXPECT_TRUE(table_.Find(ids_[1]).has_value());
  // Once released, object 0 becomes evictable.
  ASSERT_OK(table_.Release(kReader, ids_[0]));
  EXPECT_EQ(table_.Evict(1).objects, 1u);
  EXPECT_THAT(evicted_, ElementsAre(2, 0));
  ASSERT_OK(table_.Abort(kWriter, ids_[1]));
  EXPECT_EQ(table_.allocator().used_bytes(), 0u);
}

TEST_F(EvictionTest, CreateWithEvictIfFullFreesEnoughInOneGo) {
  for (int i = 0; i < 10; ++i) Put(i);
  EXPECT_EQ(table_.allocator().free_bytes(), 0u);
  // Needs three units: the three oldest objects go, no more.
  ASSERT_OK(table_.Create(kWriter, ids_[10], 3 * kUnit, 0, true));
  EXPECT_THAT(evicted_, ElementsAre(0, 1, 2));
  EXPECT_EQ(table_.allocator().free_bytes(), 0u);
  EXPECT_TRUE(table_.Find(ids_[3]).has_value());
}

TEST_F(EvictionTest, CreateWithoutEvictIfFullIsOutOfMemory) {
  for (int i = 0; i < 10; ++i) Put(i);
  EXPECT_THAT(table_.Create(kWriter, ids_[10], kUnit, 0, false), HasErrorCode(ErrorCode::kOutOfMemory));
  EXPECT_TRUE(evicted_.empty());
}

TEST_F(EvictionTest, CreateIsOutOfMemoryWhenEverythingIsReferenced) {
  for (int i = 0; i < 10; ++i) {
    Put(i);
    ASSERT_OK(table_.Get(kReader, ids_[i]));
  }
  EXPECT_THAT(table_.Create(kWriter, ids_[10], kUnit, 0, true), HasErrorCode(ErrorCode::kOutOfMemory));
  EXPECT_TRUE(evicted_.empty());
  table_.RemoveClient(kReader);
  EXPECT_THAT(table_.Create(kWriter, ids_[10], kUnit, 0, true), ::rplasma::testing::IsOk());
  EXPECT_EQ(evicted_.size(), 1u);  // which one: the order in which the reader's refs were dropped
}

TEST_F(EvictionTest, CreateKeepsEvictingWhenFreedSpaceIsFragmented) {
  for (int i = 0; i < 10; ++i) Put(i);
  // Pin every other object so freed units are not adjacent.
  for (int i = 1; i < 10; i += 2) ASSERT_OK(table_.Get(kReader, ids_[i]));
  EXPECT_THAT(table_.Create(kWriter, ids_[10], 2 * kUnit, 0, true), HasErrorCode(ErrorCode::kOutOfMemory));
  // Everything unpinned was evicted trying, and the space is still in 1-unit holes.
  EXPECT_THAT(evicted_, ElementsAre(0, 2, 4, 6, 8));
  EXPECT_EQ(table_.allocator().largest_free_block(), kUnit);
  EXPECT_GT(table_.allocator().fragmentation(), 0.7);
  for (int i = 1; i < 10; i += 2) ASSERT_OK(table_.Release(kReader, ids_[i]));
  // Now unpinned: 1 is the oldest, evicting it joins 0..2 into 3 units.
  ASSERT_OK(table_.Create(kWriter, ids_[10], 2 * kUnit, 0, true));
  EXPECT_THAT(evicted_, ElementsAre(0, 2, 4, 6, 8, 1));
}

TEST_F(EvictionTest, EvictOfZeroBytesEvictsNothing) {
  Put(0);
  EXPECT_EQ(table_.Evict(0).objects, 0u);
  EXPECT_TRUE(evicted_.empty());
}

}  // namespace
}  // namespace rplasma
