#include "store/allocator.h"

#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace rplasma {
namespace {

TEST(AllocatorTest, BlocksAreAlignedAndAtLeastOneAlignmentUnit) {
  EXPECT_EQ(Allocator::BlockSize(0), 64u);
  EXPECT_EQ(Allocator::BlockSize(1), 64u);
  EXPECT_EQ(Allocator::BlockSize(64), 64u);
  EXPECT_EQ(Allocator::BlockSize(65), 128u);
  Allocator a(1 << 20);
  for (uint64_t size : {1u, 63u, 100u, 4096u, 0u}) {
    std::optional<uint64_t> off = a.Allocate(size);
    ASSERT_TRUE(off.has_value());
    EXPECT_EQ(*off % 64, 0u);
  }
}

TEST(AllocatorTest, CapacityIsRoundedDownToTheAlignment) {
  Allocator a(1000);
  EXPECT_EQ(a.capacity(), 960u);
  EXPECT_FALSE(a.Allocate(961).has_value());
  EXPECT_TRUE(a.Allocate(960).has_value());
  EXPECT_EQ(a.free_bytes(), 0u);
  EXPECT_FALSE(a.Allocate(1).has_value());
}

TEST(AllocatorTest, FullArenaCanBeAllocatedAndFreedBackToOneBlock) {
  Allocator a(64 * 100);
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 100; ++i) {
    std::optional<uint64_t> off = a.Allocate(64);
    ASSERT_TRUE(off.has_value());
    offsets.push_back(*off);
  }
  EXPECT_FALSE(a.Allocate(1).has_value());
  EXPECT_EQ(a.used_bytes(), a.capacity());
  // Free every other block, then the rest: each free of the second pass merges three blocks.
  for (size_t i = 0; i < offsets.size(); i += 2) a.Free(offsets[i], 64);
  EXPECT_EQ(a.free_blocks(), 50u);
  EXPECT_EQ(a.largest_free_block(), 64u);
  for (size_t i = 1; i < offsets.size(); i += 2) a.Free(offsets[i], 64);
  EXPECT_EQ(a.free_blocks(), 1u);
  EXPECT_EQ(a.largest_free_block(), a.capacity());
  EXPECT_EQ(a.used_bytes(), 0u);
}

TEST(AllocatorTest, BestFitPrefersTheSmallestBlockThatFits) {
  Allocator a(64 * 10);
  uint64_t b0 = *a.Allocate(64 * 2);
  uint64_t b1 = *a.Allocate(64);
  uint64_t b2 = *a.Allocate(64);
  uint64_t b3 = *a.Allocate(64);
  (void)b1;
  (void)b3;
  a.Free(b0, 64 * 2);  // hole of 2 units
  a.Free(b2, 64);      // hole of 1 unit; the tail holds 5 units
  EXPECT_EQ(*a.Allocate(64), b2);
  EXPECT_EQ(*a.Allocate(100), b0);
}

TEST(AllocatorTest, FragmentationIsOneMinusLargestOverFree) {
  Allocator a(64 * 4);
  EXPECT_DOUBLE_EQ(a.fragmentation(), 0.0);
  uint64_t x = *a.Allocate(64);
  uint64_t y = *a.Allocate(64);
  uint64_t z = *a.Allocate(64);
  uint64_t w = *a.Allocate(64);
  EXPECT_DOUBLE_EQ(a.fragmentation(), 0.0);  // nothing free
  a.Free(x, 64);
  a.Free(z, 64);
  // Two free blocks of one unit each: largest / free = 1/2.
  EXPECT_DOUBLE_EQ(a.fragmentation(), 0.5);
  a.Free(w, 64);  // z and w merge: largest 2 of 3 units free
  EXPECT_NEAR(a.fragmentation(), 1.0 - 2.0 / 3.0, 1e-12);
  a.Free(y, 64);
  EXPECT_DOUBLE_EQ(a.fragmentation(), 0.0);
}

TEST(AllocatorTest, RandomAllocFreeMatchesAModelAndNeverOverlaps) {
  constexpr uint64_t kCapacity = 1 << 20;
  Allocator a(kCapacity);
  std::mt19937_64 rng(12345);
  std::map<uint64_t, uint64_t> live;  // offset -> requested size
  uint64_t model_used = 0;
  for (int step = 0; step < 200000; ++step) {
    bool alloc = live.empty() || rng() % 100 < 55;
    if (alloc) {
      uint64_t size = rng() % 3 == 0 ? rng() % 64 : rng() % 20000;
      std::optional<uint64_t> off = a.Allocate(size);
      if (!off) {
        // Only acceptable if no free block is large enough.
        ASSERT_LT(a.largest_free_block(), Allocator::BlockSize(size));
        continue;
      }
      ASSERT_EQ(*off % Allocator::kAlignment, 0u);
      ASSERT_LE(*off + Allocator::BlockSize(size), a.capacity());
      // No overlap with the neighbours in the model.
      auto next = live.lower_bound(*off);
      if (next != live.end()) {
        ASSERT_GE(next->first, *off + Allocator::BlockSize(size));
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + Allocator::BlockSize(prev->second), *off);
      }
      live.emplace(*off, size);
      model_used += Allocator::BlockSize(size);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      a.Free(it->first, it->second);
      model_used -= Allocator::BlockSize(it->second);
      live.erase(it);
    }
    ASSERT_EQ(a.used_bytes(), model_used);
    ASSERT_EQ(a.used_bytes() + a.free_bytes(), a.capacity());
  }
  for (const auto& [off, size] : live) a.Free(off, size);
  EXPECT_EQ(a.free_blocks(), 1u);
  EXPECT_EQ(a.largest_free_block(), a.capacity());
  EXPECT_EQ(a.used_bytes(), 0u);
}

TEST(AllocatorTest, FreeBlockCountMatchesTheGapsBetweenLiveBlocks) {
  Allocator a(64 * 1000);
  std::mt19937_64 rng(7);
  std::map<uint64_t, uint64_t> live;
  for (int i = 0; i < 500; ++i) {
    uint64_t size = 64 * (1 + rng() % 3);
    if (std::optional<uint64_t> off = a.Allocate(size)) live.emplace(*off, size);
  }
  for (auto it = live.begin(); it != live.end();) {
    if (rng() % 2 == 0) {
      a.Free(it->first, it->second);
      it = live.erase(it);
    } else {
      ++it;
    }
  }
  // Count maximal gaps in [0, capacity) not covered by live blocks.
  uint64_t gaps = 0;
  uint64_t cursor = 0;
  for (const auto& [off, size] : live) {
    if (off > cursor) ++gaps;
    cursor = off + size;
  }
  if (cursor < a.capacity()) ++gaps;
  EXPECT_EQ(a.free_blocks(), gaps);
}

}  // namespace
}  // namespace rplasma
