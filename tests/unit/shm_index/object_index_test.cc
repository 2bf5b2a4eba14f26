#include "protocol/shm_index/object_index.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "tests/unit/shm_index/aligned_region.h"

namespace rplasma::shm {
namespace {

IndexedPlacement PlacementFor(uint64_t generation) {
  return {.offset = generation * 64,
          .data_size = generation + 1,
          .metadata_size = 3,
          .generation = generation,
          .checksum = generation * 7};
}

struct Index {
  explicit Index(uint64_t capacity) : region(ObjectIndexBytes(capacity)) {
    absl::Span<uint8_t> bytes = region.span(ObjectIndexBytes(capacity));
    writer.emplace(*ObjectIndexWriter::Create(bytes, capacity));
    reader.emplace(*ObjectIndexReader::Open(bytes));
  }
  AlignedRegion region;
  std::optional<ObjectIndexWriter> writer;
  std::optional<ObjectIndexReader> reader;
};

TEST(ObjectIndexTest, ASealedObjectIsFoundWithItsPlacement) {
  Index index(1024);
  const ObjectID id = ObjectID::FromLabel("a");
  const std::optional<uint64_t> entry = index.writer->Insert(id, PlacementFor(41));
  ASSERT_TRUE(entry.has_value());
  const std::optional<IndexedObject> found = index.reader->FindSealed(id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->entry, *entry);
  EXPECT_EQ(found->id, id);
  EXPECT_EQ(found->state, IndexState::kSealed);
  EXPECT_EQ(found->placement.offset, 41u * 64);
  EXPECT_EQ(found->placement.data_size, 42u);
  EXPECT_EQ(found->placement.metadata_size, 3u);
  EXPECT_EQ(found->placement.generation, 41u);
  EXPECT_EQ(found->placement.checksum, 41u * 7);
  EXPECT_TRUE(index.reader->StillSealed(*entry, 41));
  EXPECT_FALSE(index.reader->StillSealed(*entry, 40));
  EXPECT_FALSE(index.reader->FindSealed(ObjectID::FromLabel("b")).has_value());
}

TEST(ObjectIndexTest, OnlySealedEntriesAreTaken) {
  Index index(64);
  const ObjectID id = ObjectID::FromLabel("reclaimed");
  const uint64_t entry = *index.writer->Insert(id, PlacementFor(7));
  index.writer->SetState(entry, IndexState::kReclaiming);
  EXPECT_FALSE(index.reader->FindSealed(id).has_value());
  EXPECT_FALSE(index.reader->StillSealed(entry, 7));
  EXPECT_TRUE(index.reader->MayBeReclaiming(entry));
  index.writer->SetState(entry, IndexState::kSealed);  // an eviction that found it held
  EXPECT_TRUE(index.reader->FindSealed(id).has_value());
  EXPECT_FALSE(index.reader->MayBeReclaiming(entry));
  index.writer->SetState(entry, IndexState::kTombstone);
  EXPECT_FALSE(index.reader->FindSealed(id).has_value());
  EXPECT_FALSE(index.reader->StillSealed(entry, 7));
  EXPECT_FALSE(index.reader->MayBeReclaiming(entry));
}

// With capacity == the probe window, every id shares one window: the table fills, refuses, and
// reuses a tombstone for the next object, which the old generation never passes for.
TEST(ObjectIndexTest, AFullWindowRefusesAndATombstoneIsReused) {
  Index index(kIndexProbeWindow);
  std::vector<uint64_t> entries;
  for (uint64_t i = 0; i < kIndexProbeWindow; ++i) {
    const std::optional<uint64_t> entry =
        index.writer->Insert(ObjectID::FromLabel(absl::StrCat(i)), PlacementFor(100 + i));
    ASSERT_TRUE(entry.has_value()) << i;
    entries.push_back(*entry);
  }
  EXPECT_FALSE(index.writer->Insert(ObjectID::FromLabel("one too many"), PlacementFor(500)).has_value());
  index.writer->SetState(entries[5], IndexState::kTombstone);
  const ObjectID next = ObjectID::FromLabel("next");
  const std::optional<uint64_t> reused = index.writer->Insert(next, PlacementFor(501));
  ASSERT_TRUE(reused.has_value());
  EXPECT_EQ(*reused, entries[5]);
  EXPECT_FALSE(index.reader->StillSealed(entries[5], 105));
  EXPECT_TRUE(index.reader->StillSealed(entries[5], 501));
  EXPECT_FALSE(index.reader->FindSealed(ObjectID::FromLabel("5")).has_value());
  EXPECT_EQ(index.reader->FindSealed(next)->placement.generation, 501u);
  for (uint64_t i = 0; i < kIndexProbeWindow; ++i) {
    if (i == 5) continue;
    EXPECT_TRUE(index.reader->FindSealed(ObjectID::FromLabel(absl::StrCat(i))).has_value()) << i;
  }
}

// A lookup passes over entries by the first word of their id: ids that share it (and a window:
// the index holds kIndexProbeWindow entries) are still told apart by the rest.
TEST(ObjectIndexTest, IdsSharingTheirFirstWordAreToldApart) {
  Index index(kIndexProbeWindow);
  std::vector<ObjectID> ids;
  for (uint8_t i = 0; i < 4; ++i) {
    ObjectID id = ObjectID::FromLabel("shared first word");
    id.mutable_data()[ObjectID::kSize - 1] = i;
    ids.push_back(id);
  }
  std::vector<uint64_t> entries;
  for (size_t i = 0; i < 3; ++i) entries.push_back(*index.writer->Insert(ids[i], PlacementFor(10 + i)));
  for (size_t i = 0; i < 3; ++i) {
    const std::optional<IndexedObject> found = index.reader->FindSealed(ids[i]);
    ASSERT_TRUE(found.has_value()) << i;
    EXPECT_EQ(found->id, ids[i]);
    EXPECT_EQ(found->placement.generation, 10 + i);
  }
  EXPECT_FALSE(index.reader->FindSealed(ids[3]).has_value());
  index.writer->SetState(entries[1], IndexState::kTombstone);
  EXPECT_FALSE(index.reader->FindSealed(ids[1]).has_value());
  EXPECT_EQ(index.reader->FindSealed(ids[2])->placement.generation, 12u);
}

// At half load a few random ids can meet a full window (they stay on the socket path); every id
// that was indexed is found with its own placement.
TEST(ObjectIndexTest, AtHalfLoadAlmostEveryObjectIsIndexedAndEachIsFound) {
  constexpr uint64_t kCapacity = 4096;
  Index index(kCapacity);
  std::vector<std::pair<ObjectID, uint64_t>> indexed;
  for (uint64_t i = 0; i < kCapacity / 2; ++i) {
    const ObjectID id = ObjectID::Random();
    if (index.writer->Insert(id, PlacementFor(1000 + i)).has_value()) indexed.emplace_back(id, 1000 + i);
  }
  EXPECT_GE(indexed.size(), kCapacity / 2 * 99 / 100);
  for (const auto& [id, generation] : indexed) {
    const std::optional<IndexedObject> found = index.reader->FindSealed(id);
    ASSERT_TRUE(found.has_value()) << generation;
    EXPECT_EQ(found->placement.generation, generation);
  }
}

TEST(ObjectIndexTest, MetadataTooLargeToIndexIsLeftToTheSocket) {
  Index index(64);
  IndexedPlacement placement = PlacementFor(9);
  placement.metadata_size = kMaxIndexedMetadataSize + 1;
  EXPECT_FALSE(index.writer->Insert(ObjectID::FromLabel("big metadata"), placement).has_value());
  placement.metadata_size = kMaxIndexedMetadataSize;
  const ObjectID id = ObjectID::FromLabel("largest metadata");
  ASSERT_TRUE(index.writer->Insert(id, placement).has_value());
  EXPECT_EQ(index.reader->FindSealed(id)->placement.metadata_size, kMaxIndexedMetadataSize);
}

TEST(ObjectIndexTest, CreateAndOpenRefuseWhatDoesNotFit) {
  AlignedRegion region(ObjectIndexBytes(64));
  EXPECT_FALSE(ObjectIndexWriter::Create(region.span(ObjectIndexBytes(64)), 48).ok());  // not a power of two
  EXPECT_FALSE(ObjectIndexWriter::Create(region.span(ObjectIndexBytes(64)), 8).ok());   // below the window
  EXPECT_FALSE(ObjectIndexWriter::Create(region.span(ObjectIndexBytes(64) - 1), 64).ok());
  EXPECT_FALSE(ObjectIndexReader::Open(region.span(ObjectIndexBytes(64))).ok());  // no magic yet
  ASSERT_OK(ObjectIndexWriter::Create(region.span(ObjectIndexBytes(64)), 64).status());
  EXPECT_OK(ObjectIndexReader::Open(region.span(ObjectIndexBytes(64))).status());
  // A mapping shorter than the capacity the header announces is refused, not read past its end.
  EXPECT_FALSE(ObjectIndexReader::Open(region.span(ObjectIndexBytes(32))).ok());
  EXPECT_FALSE(ObjectIndexReader::Open(region.span(16)).ok());
  ObjectIndexReader reader = *ObjectIndexReader::Open(region.span(ObjectIndexBytes(64)));
  EXPECT_FALSE(reader.StillSealed(64, 1));
  EXPECT_FALSE(reader.MayBeReclaiming(1u << 30));
}

}  // namespace
}  // namespace rplasma::shm
