#include "protocol/shm_index/reference_slots.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "tests/unit/shm_index/aligned_region.h"

namespace rplasma::shm {
namespace {

struct Slots {
  explicit Slots(uint64_t slots) : memory(SlotRegionBytes(slots)) {
    region = memory.span(SlotRegionBytes(slots));
    view.emplace(*ReferenceSlotsView::Format(region, slots));
    client.emplace(*ReferenceSlots::Open(region));
  }
  AlignedRegion memory;
  absl::Span<uint8_t> region;
  std::optional<ReferenceSlotsView> view;
  std::optional<ReferenceSlots> client;
};

TEST(ReferenceSlotsTest, AClaimedGenerationIsHeldUntilCleared) {
  Slots slots(256);
  EXPECT_FALSE(slots.view->Holds(77));
  const std::optional<uint64_t> slot = slots.client->Claim(77);
  ASSERT_TRUE(slot.has_value());
  EXPECT_TRUE(slots.view->Holds(77));
  EXPECT_FALSE(slots.view->Holds(78));
  EXPECT_EQ(slots.view->CountHeld(), 1u);
  slots.client->Clear(*slot);
  EXPECT_FALSE(slots.view->Holds(77));
  EXPECT_EQ(slots.view->CountHeld(), 0u);
}

TEST(ReferenceSlotsTest, AnObjectHeldTwiceIsHeldUntilBothAreCleared) {
  Slots slots(256);
  const uint64_t first = *slots.client->Claim(5);
  const uint64_t second = *slots.client->Claim(5);
  EXPECT_NE(first, second);
  slots.client->Clear(first);
  EXPECT_TRUE(slots.view->Holds(5));
  slots.client->Clear(second);
  EXPECT_FALSE(slots.view->Holds(5));
}

TEST(ReferenceSlotsTest, AFullWindowRefusesAClaim) {
  Slots slots(kSlotWindow);
  std::vector<uint64_t> claimed;
  for (size_t i = 0; i < kSlotWindow; ++i) claimed.push_back(*slots.client->Claim(1000 + i));
  EXPECT_FALSE(slots.client->Claim(2000).has_value());
  for (size_t i = 0; i < kSlotWindow; ++i) EXPECT_TRUE(slots.view->Holds(1000 + i)) << i;
  slots.client->Clear(claimed[3]);
  EXPECT_TRUE(slots.client->Claim(2000).has_value());
  EXPECT_TRUE(slots.view->Holds(2000));
  EXPECT_FALSE(slots.client->Claim(0).has_value());  // 0 means free
}

TEST(ReferenceSlotsTest, FormatAndOpenRefuseWhatDoesNotFit) {
  AlignedRegion memory(SlotRegionBytes(64));
  uint8_t* base = memory.span(SlotRegionBytes(64)).data();
  EXPECT_FALSE(ReferenceSlots::Open({base, SlotRegionBytes(64)}).ok());  // not formatted
  EXPECT_FALSE(ReferenceSlotsView::Format({base, SlotRegionBytes(64)}, 48).ok());
  EXPECT_FALSE(ReferenceSlotsView::Format({base, SlotRegionBytes(64) - 8}, 64).ok());
  ASSERT_OK_AND_ASSIGN(ReferenceSlotsView view, ReferenceSlotsView::Format({base, SlotRegionBytes(64)}, 64));
  EXPECT_FALSE(ReferenceSlots::Open({base, SlotRegionBytes(32)}).ok());
  // A client that rewrites its header changes nothing for the store, which kept its own count.
  reinterpret_cast<SlotRegionHeader*>(base)->slots.store(uint64_t{1} << 40);
  EXPECT_FALSE(ReferenceSlots::Open({base, SlotRegionBytes(64)}).ok());
  EXPECT_EQ(view.slots(), 64u);
  EXPECT_FALSE(view.Holds(12345));
}

}  // namespace
}  // namespace rplasma::shm
