// ObjectTable with a SharedIndex (issue 13): sealed objects are published for gets with no IPC,
// and an object a client holds through a reference slot, with no table reference, is never freed
// under it: eviction passes over it, a delete hides it at once and frees it once no slot (and no
// socket reference) holds it.
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/object_table.h"
#include "store/shared_index.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/store/store_test_clients.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr ClientId kWriter = 1;
using ::rplasma::store_test::kAlice;
using ::rplasma::store_test::kBob;
constexpr uint64_t kUnit = 1024;  // object size; the arena holds 4
using ::rplasma::store_test::kEntries;
using ::rplasma::store_test::kSlots;

struct Event {
  EventKind kind;
  ObjectID id;
};

// An object a client holds through a slot, as the client library's get takes it.
struct SlotHold {
  uint64_t entry = 0;
  uint64_t generation = 0;
  uint64_t slot = 0;
};

class ObjectTableSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(index_, SharedIndex::Create(kEntries, kSlots));
    table_.emplace(
        4 * kUnit, 1000,
        [this](EventKind kind, const ObjectInfo& info) {
          events_.push_back({kind, info.id});
        },
        index_.get());
    ASSERT_OK_AND_ASSIGN(shm::SharedMemory index_memory,
                         shm::SharedMemory::Map(UniqueFd(::dup(index_->index_fd())), shm::ObjectIndexBytes(kEntries),
                                                /*writable=*/false));
    ASSERT_OK_AND_ASSIGN(shm::ObjectIndexReader reader, shm::ObjectIndexReader::Open(index_memory.bytes()));
    index_memory_.emplace(std::move(index_memory));
    reader_.emplace(reader);
    ASSERT_OK_AND_ASSIGN(int slots_fd, index_->AddClient(kAlice));
    ASSERT_OK_AND_ASSIGN(shm::SharedMemory slots_memory,
                         shm::SharedMemory::Map(UniqueFd(::dup(slots_fd)), shm::SlotRegionBytes(kSlots),
                                                /*writable=*/true));
    ASSERT_OK_AND_ASSIGN(shm::ReferenceSlots slots, shm::ReferenceSlots::Open(slots_memory.bytes()));
    slots_memory_.emplace(std::move(slots_memory));
    slots_.emplace(slots);
    for (int i = 0; i < 8; ++i) ids_.push_back(ObjectID::FromLabel(absl::StrCat("slots-", i)));
  }

  // Creates, seals and releases object i: published, no table reference, evictable.
  void Put(int i, uint64_t size = kUnit) {
    ASSERT_OK(table_->Create(kWriter, ids_[i], size, 0, false));
    ASSERT_OK(table_->Seal(kWriter, ids_[i], 7));
    ASSERT_OK(table_->Release(kWriter, ids_[i]));
  }
  // Alice's get with no IPC: find, claim, check (reference_slots.h); nullopt if it backed off.
  std::optional<SlotHold> SlotGet(const ObjectID& id) {
    std::optional<shm::IndexedObject> found = reader_->FindSealed(id);
    if (!found) return std::nullopt;
    std::optional<uint64_t> slot = slots_->Claim(found->placement.generation);
    if (!slot) return std::nullopt;
    if (!reader_->StillSealed(found->entry, found->placement.generation)) {
      slots_->Clear(*slot);
      return std::nullopt;
    }
    return SlotHold{found->entry, found->placement.generation, *slot};
  }
  int CountEvents(EventKind kind, const ObjectID& id) const {
    return static_cast<int>(
        std::count_if(events_.begin(), events_.end(), [&](const Event& e) { return e.kind == kind && e.id == id; }));
  }
  std::vector<int> Evicted() const {
    std::vector<int> out;
    for (const Event& e : events_) {
      if (e.kind == EventKind::kEvicted)
        out.push_back(static_cast<int>(std::find(ids_.begin(), ids_.end(), e.id) - ids_.begin()));
    }
    return out;
  }
  // The leak audit: nothing left in the table, the arena, the index or the slots.
  void ExpectBackAtBaseline() {
    EXPECT_EQ(table_->size(), 0u);
    EXPECT_EQ(table_->allocator().used_bytes(), 0u);
    EXPECT_EQ(table_->allocator().free_blocks(), 1u);
    EXPECT_EQ(table_->stats().ref_count, 0u);
    EXPECT_EQ(table_->stats().objects_sealed, 0u);
    EXPECT_EQ(table_->reclaims_waiting(), 0u);
    EXPECT_EQ(index_->indexed(), 0u);
    EXPECT_EQ(index_->SlotReferences(), 0u);
  }

  std::unique_ptr<SharedIndex> index_;
  std::vector<Event> events_;
  std::optional<ObjectTable> table_;  // after index_: it points at it
  std::optional<shm::SharedMemory> index_memory_;
  std::optional<shm::ObjectIndexReader> reader_;
  std::optional<shm::SharedMemory> slots_memory_;
  std::optional<shm::ReferenceSlots> slots_;
  std::vector<ObjectID> ids_;
};

TEST_F(ObjectTableSlotsTest, SealPublishesTheObjectWithItsPlacement) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo created, table_->Create(kWriter, ids_[0], 100, 5, false));
  EXPECT_FALSE(reader_->FindSealed(ids_[0]).has_value());  // not before it is sealed
  EXPECT_EQ(index_->indexed(), 0u);
  ASSERT_OK(table_->Seal(kWriter, ids_[0], 77));
  EXPECT_EQ(index_->indexed(), 1u);
  const std::optional<shm::IndexedObject> found = reader_->FindSealed(ids_[0]);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, ids_[0]);
  EXPECT_EQ(found->state, shm::IndexState::kSealed);
  EXPECT_EQ(found->placement.offset, created.offset);
  EXPECT_EQ(found->placement.data_size, 100u);
  EXPECT_EQ(found->placement.metadata_size, 5u);
  EXPECT_EQ(found->placement.generation, created.generation);
  EXPECT_EQ(found->placement.checksum, 77u);
  // An aborted object was never published.
  ASSERT_OK(table_->Create(kWriter, ids_[1], 100, 0, false));
  ASSERT_OK(table_->Abort(kWriter, ids_[1]));
  EXPECT_FALSE(reader_->FindSealed(ids_[1]).has_value());

  ASSERT_OK(table_->Release(kWriter, ids_[0]));
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  EXPECT_FALSE(reader_->FindSealed(ids_[0]).has_value());
  EXPECT_FALSE(reader_->StillSealed(found->entry, found->placement.generation));
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, EvictionPassesOverAnObjectASlotHolds) {
  for (int i = 0; i < 4; ++i) Put(i);
  const std::optional<SlotHold> hold = SlotGet(ids_[0]);  // the oldest
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(table_->Find(ids_[0])->ref_count, 0);  // the table does not count it

  EvictResult result = table_->Evict(kUnit);
  EXPECT_EQ(result.objects, 1u);
  EXPECT_EQ(result.bytes, kUnit);
  EXPECT_THAT(Evicted(), ElementsAre(1));
  EXPECT_EQ(table_->stats().evictions, 1u);
  EXPECT_EQ(table_->stats().evictions_skipped, 1u);
  // The held object is still there, and still sealed for other gets; the evicted one is gone.
  EXPECT_EQ(table_->Contains(ids_[0]), ErrorCode::kOk);
  ASSERT_TRUE(reader_->FindSealed(ids_[0]).has_value());
  EXPECT_TRUE(reader_->StillSealed(hold->entry, hold->generation));
  EXPECT_FALSE(reader_->FindSealed(ids_[1]).has_value());
  EXPECT_EQ(table_->Contains(ids_[1]), ErrorCode::kObjectNotFound);
  EXPECT_EQ(index_->indexed(), 3u);

  // Passed over, it went to the young end: 2 and 3 go before it.
  result = table_->Evict(2 * kUnit);
  EXPECT_EQ(result.objects, 2u);
  EXPECT_THAT(Evicted(), ElementsAre(1, 2, 3));
  EXPECT_EQ(table_->Evict(kUnit).objects, 0u);  // only the held one is left
  EXPECT_EQ(table_->Contains(ids_[0]), ErrorCode::kOk);

  slots_->Clear(hold->slot);
  EXPECT_EQ(table_->Evict(kUnit).objects, 1u);
  EXPECT_THAT(Evicted(), ElementsAre(1, 2, 3, 0));
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 0);
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, CreateIsOutOfMemoryWhenOnlySlotHeldObjectsCouldMakeRoom) {
  std::vector<SlotHold> holds;
  for (int i = 0; i < 4; ++i) {
    Put(i);
    std::optional<SlotHold> hold = SlotGet(ids_[i]);
    ASSERT_TRUE(hold.has_value());
    holds.push_back(*hold);
  }
  EXPECT_EQ(table_->allocator().free_bytes(), 0u);
  const uint64_t skipped = table_->stats().evictions_skipped;
  EXPECT_THAT(table_->Create(kWriter, ids_[4], kUnit, 0, /*evict_if_full=*/true),
              HasErrorCode(ErrorCode::kOutOfMemory));
  EXPECT_GE(table_->stats().evictions_skipped, skipped + 4);  // each looked at, each passed over
  EXPECT_EQ(table_->stats().evictions, 0u);
  EXPECT_THAT(Evicted(), IsEmpty());
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(reader_->StillSealed(holds[i].entry, holds[i].generation)) << i;
    EXPECT_EQ(table_->Contains(ids_[i]), ErrorCode::kOk) << i;
  }

  // Let go of object 2: it alone can make room, and it is the one evicted.
  slots_->Clear(holds[2].slot);
  ASSERT_OK(table_->Create(kWriter, ids_[4], kUnit, 0, /*evict_if_full=*/true));
  EXPECT_THAT(Evicted(), ElementsAre(2));
  ASSERT_OK(table_->Abort(kWriter, ids_[4]));

  for (int i : {0, 1, 3}) slots_->Clear(holds[i].slot);
  EXPECT_EQ(table_->Evict(4 * kUnit).objects, 3u);
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, DeleteOfASlotHeldObjectHidesItAtOnceAndFreesItAfterTheSlotIsCleared) {
  Put(0);
  Put(1);
  const std::optional<SlotHold> hold = SlotGet(ids_[0]);
  ASSERT_TRUE(hold.has_value());
  const uint64_t used = table_->allocator().used_bytes();

  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  // Hidden at once, everywhere.
  EXPECT_FALSE(reader_->FindSealed(ids_[0]).has_value());
  EXPECT_FALSE(reader_->StillSealed(hold->entry, hold->generation));
  EXPECT_TRUE(reader_->MayBeReclaiming(hold->entry));  // the release will tell the store
  EXPECT_EQ(table_->Contains(ids_[0]), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(table_->Find(ids_[0]).has_value());
  EXPECT_THAT(table_->Get(kBob, ids_[0]), HasErrorCode(ErrorCode::kObjectNotFound));
  bool more = true;
  std::vector<ObjectInfo> listed = table_->List(std::nullopt, 10, &more);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, ids_[1]);
  EXPECT_FALSE(more);
  // But not freed: the slot still holds its bytes.
  EXPECT_EQ(table_->reclaims_waiting(), 1u);
  EXPECT_EQ(table_->allocator().used_bytes(), used);
  EXPECT_EQ(table_->size(), 2u);
  // Nor evictable, and its id cannot be taken again yet.
  EXPECT_EQ(table_->Evict(4 * kUnit).objects, 1u);  // object 1 only
  EXPECT_THAT(Evicted(), ElementsAre(1));
  EXPECT_EQ(table_->allocator().used_bytes(), used - kUnit);
  EXPECT_THAT(table_->Create(kWriter, ids_[0], kUnit, 0, false), HasErrorCode(ErrorCode::kObjectExists));
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kObjectNotFound);
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 1);

  table_->RetryReclaims();  // the slot still holds it
  EXPECT_EQ(table_->reclaims_waiting(), 1u);
  EXPECT_EQ(table_->allocator().used_bytes(), kUnit);

  slots_->Clear(hold->slot);
  EXPECT_EQ(table_->reclaims_waiting(), 1u);  // nothing happens until the store is told
  table_->RetryReclaims();
  EXPECT_EQ(table_->reclaims_waiting(), 0u);
  EXPECT_EQ(table_->size(), 0u);
  EXPECT_EQ(index_->indexed(), 0u);
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 1);
  EXPECT_EQ(CountEvents(EventKind::kEvicted, ids_[0]), 0);
  ExpectBackAtBaseline();

  // The id is free again.
  Put(0);
  EXPECT_TRUE(reader_->FindSealed(ids_[0]).has_value());
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, ADroppedClientNoLongerHoldsADeletedObject) {
  Put(0);
  const std::optional<SlotHold> hold = SlotGet(ids_[0]);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  EXPECT_EQ(table_->reclaims_waiting(), 1u);
  EXPECT_EQ(table_->allocator().used_bytes(), kUnit);

  // The connection closes with the slot still claimed: the store drops the client's slots.
  table_->RemoveClient(kAlice);
  index_->RemoveClient(kAlice);
  EXPECT_EQ(table_->reclaims_waiting(), 1u);
  table_->RetryReclaims();
  EXPECT_EQ(table_->reclaims_waiting(), 0u);
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 1);
  ExpectBackAtBaseline();
}

// A deleted object held both through the socket (a table reference) and through a slot is freed
// when the last of them goes, whichever it is.
TEST_F(ObjectTableSlotsTest, ADeleteWaitsForTheSocketReferenceThenTheSlot) {
  Put(0);
  ASSERT_OK(table_->Get(kBob, ids_[0]));
  const std::optional<SlotHold> hold = SlotGet(ids_[0]);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  EXPECT_FALSE(reader_->FindSealed(ids_[0]).has_value());

  ASSERT_OK(table_->Release(kBob, ids_[0]));
  EXPECT_EQ(table_->size(), 1u);
  EXPECT_EQ(table_->reclaims_waiting(), 1u);
  EXPECT_EQ(table_->allocator().used_bytes(), kUnit);

  slots_->Clear(hold->slot);
  table_->RetryReclaims();
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 1);
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, ADeleteWaitsForTheSlotThenTheSocketReference) {
  Put(0);
  ASSERT_OK(table_->Get(kBob, ids_[0]));
  const std::optional<SlotHold> hold = SlotGet(ids_[0]);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);

  slots_->Clear(hold->slot);
  table_->RetryReclaims();
  EXPECT_EQ(table_->size(), 1u);  // Bob still holds it
  EXPECT_EQ(table_->allocator().used_bytes(), kUnit);
  EXPECT_EQ(table_->Evict(4 * kUnit).objects, 0u);
  EXPECT_FALSE(reader_->FindSealed(ids_[0]).has_value());

  ASSERT_OK(table_->Release(kBob, ids_[0]));
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 1);
  EXPECT_THAT(Evicted(), IsEmpty());
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, ASocketClientThatLeavesLetsASlotHeldDeleteWaitForTheSlot) {
  Put(0);
  ASSERT_OK(table_->Get(kBob, ids_[0]));
  const std::optional<SlotHold> hold = SlotGet(ids_[0]);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  table_->RemoveClient(kBob);
  EXPECT_EQ(table_->reclaims_waiting(), 1u);
  EXPECT_EQ(table_->allocator().used_bytes(), kUnit);
  slots_->Clear(hold->slot);
  table_->RetryReclaims();
  ExpectBackAtBaseline();
}

// Generations are unique: an entry reused by a later object never vouches for the old one, so a
// client that found the old object just before it went backs off instead of reading new bytes.
TEST_F(ObjectTableSlotsTest, AFreedEntryIsReusedAndItsOldGenerationNeverPassesTheCheck) {
  Put(0);
  const std::optional<SlotHold> old_hold = SlotGet(ids_[0]);
  ASSERT_TRUE(old_hold.has_value());
  const std::optional<shm::IndexedObject> stale = reader_->FindSealed(ids_[0]);  // a get that is late
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  slots_->Clear(old_hold->slot);
  table_->RetryReclaims();
  ASSERT_EQ(table_->size(), 0u);

  // Another id whose probe window starts at the same entry takes the tombstone.
  ObjectID other;
  for (int i = 0;; ++i) {
    other = ObjectID::FromLabel(absl::StrCat("same-home-", i));
    if (shm::IndexHome(other, kEntries) == shm::IndexHome(ids_[0], kEntries)) break;
  }
  ASSERT_EQ(old_hold->entry, shm::IndexHome(ids_[0], kEntries));  // the first object took its home
  ASSERT_OK(table_->Create(kWriter, other, kUnit, 0, false));
  ASSERT_OK(table_->Seal(kWriter, other, 7));
  ASSERT_OK(table_->Release(kWriter, other));
  const std::optional<shm::IndexedObject> reused = reader_->FindSealed(other);
  ASSERT_TRUE(reused.has_value());
  EXPECT_EQ(reused->entry, old_hold->entry);
  EXPECT_NE(reused->placement.generation, old_hold->generation);
  EXPECT_TRUE(reader_->StillSealed(reused->entry, reused->placement.generation));
  EXPECT_FALSE(reader_->StillSealed(old_hold->entry, old_hold->generation));
  EXPECT_FALSE(reader_->FindSealed(ids_[0]).has_value());

  // The late get claims the old generation, fails the check, and gives the slot back.
  const std::optional<uint64_t> slot = slots_->Claim(stale->placement.generation);
  ASSERT_TRUE(slot.has_value());
  EXPECT_FALSE(reader_->StillSealed(stale->entry, stale->placement.generation));
  slots_->Clear(*slot);

  // The same id again: a new generation in the old entry's window.
  Put(0);
  const std::optional<shm::IndexedObject> again = reader_->FindSealed(ids_[0]);
  ASSERT_TRUE(again.has_value());
  EXPECT_GT(again->placement.generation, reused->placement.generation);
  EXPECT_FALSE(reader_->StillSealed(again->entry, old_hold->generation));

  EXPECT_EQ(table_->Delete(other), ErrorCode::kOk);
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 2);
  EXPECT_EQ(CountEvents(EventKind::kDeleted, other), 1);
  EXPECT_THAT(Evicted(), IsEmpty());
  ExpectBackAtBaseline();
}

TEST_F(ObjectTableSlotsTest, AnIndexedObjectWithNoSlotIsDeletedAndEvictedAsBefore) {
  Put(0);
  Put(1);
  EXPECT_EQ(table_->Delete(ids_[0]), ErrorCode::kOk);
  EXPECT_EQ(table_->reclaims_waiting(), 0u);
  EXPECT_EQ(table_->size(), 1u);
  EXPECT_EQ(table_->Evict(kUnit).objects, 1u);
  EXPECT_EQ(table_->stats().evictions_skipped, 0u);
  EXPECT_EQ(CountEvents(EventKind::kDeleted, ids_[0]), 1);
  EXPECT_EQ(CountEvents(EventKind::kEvicted, ids_[0]), 0);
  EXPECT_THAT(Evicted(), ElementsAre(1));
  ExpectBackAtBaseline();
}

}  // namespace
}  // namespace rplasma
