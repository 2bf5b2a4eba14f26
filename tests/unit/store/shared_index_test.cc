// SharedIndex: the store's side of the get with no IPC (issue 13). What the memfds it hands out
// let a client do (read the index, write its own slots, nothing else), and how a slot a client
// claims in its own mapping decides Hide/Held, whatever else the client writes there.
#include "store/shared_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "tests/unit/store/store_test_clients.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

using ::rplasma::store_test::kAlice;
using ::rplasma::store_test::kBob;
using ::rplasma::store_test::kEntries;
using ::rplasma::store_test::kSlots;

shm::IndexedPlacement PlacementFor(uint64_t generation) {
  return {.offset = 4096, .data_size = 100, .metadata_size = 5, .generation = generation, .checksum = 7};
}

// The errno of a failed call, or 0 if it succeeded.
int ErrnoOf(ssize_t result) { return result == -1 ? errno : 0; }

// One client's end of its slot memfd: its own read-write mapping, as the client library makes it.
struct ClientSlots {
  shm::SharedMemory memory;
  shm::ReferenceSlots slots;
};

class SharedIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(index_, SharedIndex::Create(kEntries, kSlots));
    ASSERT_OK_AND_ASSIGN(shm::SharedMemory memory,
                         shm::SharedMemory::Map(UniqueFd(::dup(index_->index_fd())), shm::ObjectIndexBytes(kEntries),
                                                /*writable=*/false));
    ASSERT_OK_AND_ASSIGN(shm::ObjectIndexReader reader, shm::ObjectIndexReader::Open(memory.bytes()));
    reader_memory_.emplace(std::move(memory));
    reader_.emplace(reader);
  }

  // Adds `client` to the index and maps its slots the way the client does.
  std::optional<ClientSlots> Connect(ClientId client) {
    absl::StatusOr<int> fd = index_->AddClient(client);
    EXPECT_OK(fd);
    if (!fd.ok()) return std::nullopt;
    absl::StatusOr<shm::SharedMemory> memory =
        shm::SharedMemory::Map(UniqueFd(::dup(*fd)), shm::SlotRegionBytes(kSlots), /*writable=*/true);
    EXPECT_OK(memory);
    if (!memory.ok()) return std::nullopt;
    absl::StatusOr<shm::ReferenceSlots> slots = shm::ReferenceSlots::Open(memory->bytes());
    EXPECT_OK(slots);
    if (!slots.ok()) return std::nullopt;
    return ClientSlots{std::move(*memory), *slots};
  }

  std::unique_ptr<SharedIndex> index_;
  std::optional<shm::SharedMemory> reader_memory_;
  std::optional<shm::ObjectIndexReader> reader_;
  ObjectID a_ = ObjectID::FromLabel("a");
  ObjectID b_ = ObjectID::FromLabel("b");
};

TEST(SharedIndexCreateTest, EntriesAndSlotsMustBePowersOfTwoOfAtLeastAWindow) {
  EXPECT_THAT(SharedIndex::Create(0, 64), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SharedIndex::Create(8, 64), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SharedIndex::Create(100, 64), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SharedIndex::Create(64, 0), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SharedIndex::Create(64, 8), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(SharedIndex::Create(64, 48), HasErrorCode(ErrorCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SharedIndex> smallest,
                       SharedIndex::Create(shm::kIndexProbeWindow, shm::kSlotWindow));
  EXPECT_EQ(smallest->entries(), shm::kIndexProbeWindow);
  EXPECT_EQ(smallest->slots_per_client(), shm::kSlotWindow);
  EXPECT_EQ(smallest->indexed(), 0u);
  EXPECT_EQ(smallest->SlotReferences(), 0u);
}

TEST(SharedIndexCreateTest, DefaultEntriesAreOnePer4KiBAPowerOfTwoBetween4096And2To20) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  EXPECT_EQ(SharedIndex::DefaultEntries(0), 4096u);
  EXPECT_EQ(SharedIndex::DefaultEntries(kMiB), 4096u);
  EXPECT_EQ(SharedIndex::DefaultEntries(16 * kMiB), 4096u);
  EXPECT_EQ(SharedIndex::DefaultEntries(16 * kMiB + 4096), 8192u);  // rounded up
  EXPECT_EQ(SharedIndex::DefaultEntries(1024 * kMiB), 262144u);
  EXPECT_EQ(SharedIndex::DefaultEntries(3 * 1024 * kMiB), uint64_t{1} << 20);
  EXPECT_EQ(SharedIndex::DefaultEntries(uint64_t{1} << 40), uint64_t{1} << 20);
  EXPECT_EQ(SharedIndex::DefaultEntries(~uint64_t{0}), uint64_t{1} << 20);
  for (uint64_t bytes = 1; bytes < (uint64_t{1} << 45); bytes = bytes * 3 + 1) {
    const uint64_t entries = SharedIndex::DefaultEntries(bytes);
    EXPECT_TRUE(std::has_single_bit(entries)) << bytes;
    EXPECT_GE(entries, 4096u) << bytes;
    EXPECT_LE(entries, uint64_t{1} << 20) << bytes;
    EXPECT_GE(entries, std::min<uint64_t>(bytes / 4096, uint64_t{1} << 20)) << bytes;
  }
}

TEST_F(SharedIndexTest, TheIndexMemfdIsReadableButNotWritableOrResizable) {
  const int fd = index_->index_fd();
  const size_t bytes = shm::ObjectIndexBytes(kEntries);

  void* writable = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int mmap_errno = errno;
  EXPECT_EQ(writable, MAP_FAILED);
  EXPECT_EQ(mmap_errno, EPERM);
  if (writable != MAP_FAILED) ::munmap(writable, bytes);

  void* readable = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(readable, MAP_FAILED) << std::strerror(errno);
  EXPECT_EQ(static_cast<const shm::IndexHeader*>(readable)->magic.load(), shm::kIndexMagic);
  EXPECT_EQ(static_cast<const shm::IndexHeader*>(readable)->capacity.load(), kEntries);
  // Nor can a read-only mapping be made writable later.
  EXPECT_NE(ErrnoOf(::mprotect(readable, bytes, PROT_READ | PROT_WRITE)), 0);
  ::munmap(readable, bytes);

  const uint64_t garbage = 0xdeadbeef;
  EXPECT_EQ(ErrnoOf(::pwrite(fd, &garbage, sizeof(garbage), 0)), EPERM);
  EXPECT_EQ(ErrnoOf(::write(fd, &garbage, sizeof(garbage))), EPERM);
  EXPECT_EQ(ErrnoOf(::ftruncate(fd, static_cast<off_t>(bytes / 2))), EPERM);
  EXPECT_EQ(ErrnoOf(::ftruncate(fd, static_cast<off_t>(bytes * 2))), EPERM);
  // The seals themselves are sealed: nobody adds F_SEAL_WRITE and stops the store's own writes.
  EXPECT_EQ(::fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
  EXPECT_EQ(ErrnoOf(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE)), EPERM);

  // The store still writes it, through its own mapping.
  const uint64_t entry = index_->Publish(a_, PlacementFor(1000));
  ASSERT_NE(entry, SharedIndex::kNotIndexed);
  EXPECT_TRUE(reader_->FindSealed(a_).has_value());
}

TEST_F(SharedIndexTest, ASlotMemfdIsWritableByItsClientButNotResizable) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->slots.slots(), kSlots);
  ASSERT_OK_AND_ASSIGN(int fd, index_->AddClient(kBob));
  const size_t bytes = shm::SlotRegionBytes(kSlots);
  EXPECT_EQ(ErrnoOf(::ftruncate(fd, static_cast<off_t>(bytes / 2))), EPERM);
  EXPECT_EQ(ErrnoOf(::ftruncate(fd, static_cast<off_t>(bytes * 2))), EPERM);
  EXPECT_EQ(ErrnoOf(::ftruncate(fd, 0)), EPERM);
  EXPECT_EQ(::fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_EQ(ErrnoOf(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE)), EPERM);
  void* writable = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(writable, MAP_FAILED) << std::strerror(errno);
  ::munmap(writable, bytes);
}

TEST_F(SharedIndexTest, APublishedObjectIsFoundByAReaderWithItsPlacement) {
  const uint64_t entry = index_->Publish(a_, PlacementFor(1000));
  ASSERT_NE(entry, SharedIndex::kNotIndexed);
  EXPECT_EQ(index_->indexed(), 1u);
  const std::optional<shm::IndexedObject> found = reader_->FindSealed(a_);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->entry, entry);
  EXPECT_EQ(found->id, a_);
  EXPECT_EQ(found->state, shm::IndexState::kSealed);
  EXPECT_EQ(found->placement.offset, 4096u);
  EXPECT_EQ(found->placement.data_size, 100u);
  EXPECT_EQ(found->placement.metadata_size, 5u);
  EXPECT_EQ(found->placement.generation, 1000u);
  EXPECT_EQ(found->placement.checksum, 7u);
  EXPECT_FALSE(reader_->FindSealed(b_).has_value());
  EXPECT_TRUE(reader_->StillSealed(entry, 1000));
  EXPECT_FALSE(reader_->StillSealed(entry, 1001));

  // Metadata too large to index: the object goes through the socket only.
  shm::IndexedPlacement huge = PlacementFor(1001);
  huge.metadata_size = shm::kMaxIndexedMetadataSize + 1;
  EXPECT_EQ(index_->Publish(b_, huge), SharedIndex::kNotIndexed);
  EXPECT_EQ(index_->indexed(), 1u);
  EXPECT_FALSE(reader_->FindSealed(b_).has_value());

  EXPECT_FALSE(index_->Hide(entry, 1000));
  index_->Remove(entry);
  EXPECT_EQ(index_->indexed(), 0u);
  EXPECT_FALSE(reader_->FindSealed(a_).has_value());
}

TEST_F(SharedIndexTest, HideReportsTheGenerationAClientSlotHoldsUntilItIsCleared) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  ASSERT_TRUE(alice.has_value());
  const uint64_t entry = index_->Publish(a_, PlacementFor(1000));
  ASSERT_NE(entry, SharedIndex::kNotIndexed);

  // The client's get: claim, then check the entry.
  const std::optional<uint64_t> slot = alice->slots.Claim(1000);
  ASSERT_TRUE(slot.has_value());
  ASSERT_TRUE(reader_->StillSealed(entry, 1000));
  EXPECT_TRUE(index_->Held(1000));
  EXPECT_FALSE(index_->Held(1001));
  EXPECT_FALSE(index_->Held(999));
  EXPECT_EQ(index_->SlotReferences(), 1u);

  EXPECT_TRUE(index_->Hide(entry, 1000));
  // Hidden: no new get finds it or passes the check, and a release knows to tell the store.
  EXPECT_FALSE(reader_->FindSealed(a_).has_value());
  EXPECT_FALSE(reader_->StillSealed(entry, 1000));
  EXPECT_TRUE(reader_->MayBeReclaiming(entry));

  // An eviction that found it held shows it again.
  index_->Unhide(entry);
  ASSERT_TRUE(reader_->FindSealed(a_).has_value());
  EXPECT_TRUE(reader_->StillSealed(entry, 1000));
  EXPECT_FALSE(reader_->MayBeReclaiming(entry));

  EXPECT_TRUE(index_->Hide(entry, 1000));
  alice->slots.Clear(*slot);
  EXPECT_FALSE(index_->Held(1000));
  EXPECT_EQ(index_->SlotReferences(), 0u);
  index_->Remove(entry);
  EXPECT_EQ(index_->indexed(), 0u);
  EXPECT_FALSE(reader_->FindSealed(a_).has_value());
  EXPECT_FALSE(reader_->StillSealed(entry, 1000));
  EXPECT_FALSE(reader_->MayBeReclaiming(entry));
}

TEST_F(SharedIndexTest, AGenerationHeldTwiceIsHeldUntilBothSlotsAreCleared) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  ASSERT_TRUE(alice.has_value());
  const uint64_t entry = index_->Publish(a_, PlacementFor(1000));
  const uint64_t first = *alice->slots.Claim(1000);
  const uint64_t second = *alice->slots.Claim(1000);
  EXPECT_EQ(index_->SlotReferences(), 2u);
  EXPECT_TRUE(index_->Hide(entry, 1000));
  alice->slots.Clear(first);
  EXPECT_TRUE(index_->Held(1000));
  alice->slots.Clear(second);
  EXPECT_FALSE(index_->Held(1000));
  index_->Remove(entry);
}

TEST_F(SharedIndexTest, RemoveClientDropsWhatItsSlotsHeldAndOnlyThat) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  std::optional<ClientSlots> bob = Connect(kBob);
  ASSERT_TRUE(alice.has_value() && bob.has_value());
  ASSERT_TRUE(alice->slots.Claim(1000).has_value());
  ASSERT_TRUE(alice->slots.Claim(1002).has_value());
  ASSERT_TRUE(bob->slots.Claim(1001).has_value());
  ASSERT_TRUE(bob->slots.Claim(1002).has_value());
  EXPECT_EQ(index_->SlotReferences(), 4u);

  index_->RemoveClient(kAlice);
  EXPECT_FALSE(index_->Held(1000));
  EXPECT_TRUE(index_->Held(1001));
  EXPECT_TRUE(index_->Held(1002));  // Bob's claim still counts
  EXPECT_EQ(index_->SlotReferences(), 2u);
  // Whatever the departed client still writes in its mapping counts for nothing.
  ASSERT_TRUE(alice->slots.Claim(1003).has_value());
  EXPECT_FALSE(index_->Held(1003));

  index_->RemoveClient(kBob);
  EXPECT_FALSE(index_->Held(1001));
  EXPECT_FALSE(index_->Held(1002));
  EXPECT_EQ(index_->SlotReferences(), 0u);
  index_->RemoveClient(kBob);  // twice is harmless
}

TEST_F(SharedIndexTest, SlotReferencesCountsEveryClientsClaims) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  std::optional<ClientSlots> bob = Connect(kBob);
  ASSERT_TRUE(alice.has_value() && bob.has_value());
  std::vector<uint64_t> alice_claims;
  for (uint64_t g = 1; g <= 10; ++g) alice_claims.push_back(*alice->slots.Claim(g));
  for (uint64_t g = 5; g <= 7; ++g) ASSERT_TRUE(bob->slots.Claim(g).has_value());
  EXPECT_EQ(index_->SlotReferences(), 13u);
  alice->slots.Clear(alice_claims[0]);
  alice->slots.Clear(alice_claims[5]);  // generation 6: Bob still holds it
  EXPECT_EQ(index_->SlotReferences(), 11u);
  EXPECT_FALSE(index_->Held(1));
  EXPECT_TRUE(index_->Held(6));
  index_->RemoveClient(kBob);
  EXPECT_EQ(index_->SlotReferences(), 8u);
  EXPECT_FALSE(index_->Held(6));
  index_->RemoveClient(kAlice);
  EXPECT_EQ(index_->SlotReferences(), 0u);
}

// A client may write anything into its own region, header included. The store only compares words
// with generations over the slot count it kept, so this cannot crash it or make it see a hold
// on a generation the client did not write. The client CAN make Held true for any generation it
// writes, real or not: that only keeps objects longer, until its connection closes (RemoveClient).
TEST_F(SharedIndexTest, AccessRecordsNameTheObjectsReadAndGarbageCostsAtMostOneRing) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  ASSERT_TRUE(alice.has_value());
  const uint64_t entry = index_->Publish(a_, PlacementFor(1000));
  for (int i = 0; i < 3; ++i) alice->slots.RecordAccess(entry);
  alice->slots.RecordAccess(kEntries + 5);            // out of range
  alice->slots.RecordAccess((entry + 1) % kEntries);  // holds nothing
  std::vector<ObjectID> used;
  auto drain = [&] {
    used.clear();
    index_->DrainAccesses([&](const ObjectID& id, uint64_t at) {
      EXPECT_EQ(at, entry);
      used.push_back(id);
    });
  };
  drain();
  EXPECT_EQ(used, std::vector<ObjectID>(3, a_));
  drain();
  EXPECT_TRUE(used.empty()) << "each record once";

  // A client that rewrites its ring (head far ahead, every record the entry): one ring at most.
  absl::Span<uint8_t> region = alice->memory.bytes();
  auto* words = reinterpret_cast<std::atomic<uint64_t>*>(region.data() + sizeof(shm::SlotRegionHeader));
  for (uint64_t i = 0; i < shm::kAccessRing; ++i) words[kSlots + 1 + i].store(entry);
  words[kSlots].store(uint64_t{1} << 63);
  drain();
  EXPECT_EQ(used.size(), shm::kAccessRing);
  words[kSlots].store(5);  // and backwards
  drain();
  EXPECT_LE(used.size(), shm::kAccessRing);
  // A hidden (being reclaimed) object is not named.
  ASSERT_FALSE(index_->Hide(entry, 1000));
  alice->slots.RecordAccess(entry);
  drain();
  EXPECT_TRUE(used.empty());
  index_->Remove(entry);
}

TEST_F(SharedIndexTest, GarbageInASlotRegionOnlyHoldsTheGenerationsItSpells) {
  std::optional<ClientSlots> alice = Connect(kAlice);
  std::optional<ClientSlots> bob = Connect(kBob);
  ASSERT_TRUE(alice.has_value() && bob.has_value());
  const uint64_t entry = index_->Publish(a_, PlacementFor(1000));
  ASSERT_TRUE(bob->slots.Claim(2000).has_value());

  absl::Span<uint8_t> region = alice->memory.bytes();
  ASSERT_EQ(region.size(), shm::SlotRegionBytes(kSlots));
  std::memset(region.data(), 0xa5, region.size());
  constexpr uint64_t kPattern = 0xa5a5a5a5a5a5a5a5;
  EXPECT_FALSE(index_->Held(1000));
  EXPECT_TRUE(index_->Held(2000));  // Bob's hold is untouched
  EXPECT_TRUE(index_->Held(kPattern));
  // Counted over the store's own slot count, not over what the header now claims.
  EXPECT_EQ(index_->SlotReferences(), kSlots + 1);
  EXPECT_FALSE(index_->Hide(entry, 1000));
  index_->Remove(entry);

  // Random words: Held is true exactly for the generations written in their own window, and false
  // for everything else, whatever the header says.
  std::mt19937_64 rng(13);
  auto* words = reinterpret_cast<uint64_t*>(region.data());
  constexpr size_t kHeaderWords = sizeof(shm::SlotRegionHeader) / sizeof(uint64_t);
  for (int round = 0; round < 50; ++round) {
    absl::flat_hash_set<uint64_t> written;
    absl::flat_hash_set<uint64_t> in_window;
    for (size_t i = 0; i < kHeaderWords + kSlots; ++i) {
      // Small values too, so that some fall in their own window.
      words[i] = (rng() & 1) != 0 ? rng() : 1 + rng() % 64;
      written.insert(words[i]);
      const uint64_t slot = i - kHeaderWords;
      if (i >= kHeaderWords && ((slot - shm::SlotHome(words[i], kSlots)) & (kSlots - 1)) < shm::kSlotWindow) {
        in_window.insert(words[i]);
      }
    }
    for (uint64_t g : in_window) EXPECT_TRUE(index_->Held(g)) << g;
    for (size_t i = 0; i < kHeaderWords; ++i) {  // the header is not a slot
      if (!in_window.contains(words[i])) {
        EXPECT_FALSE(index_->Held(words[i])) << words[i];
      }
    }
    for (uint64_t g = 1; g <= 64; ++g) {
      if (!written.contains(g)) {
        EXPECT_FALSE(index_->Held(g)) << g;
      }
    }
    for (int probe = 0; probe < 64; ++probe) {
      const uint64_t g = rng();
      if (!written.contains(g) && g != 2000) {
        EXPECT_FALSE(index_->Held(g)) << g;
      }
    }
    EXPECT_TRUE(index_->Held(2000));
    EXPECT_EQ(index_->SlotReferences(), kSlots + 1);  // no word is 0
  }

  index_->RemoveClient(kAlice);
  EXPECT_EQ(index_->SlotReferences(), 1u);
  EXPECT_FALSE(index_->Held(kPattern));
}

}  // namespace
}  // namespace rplasma
