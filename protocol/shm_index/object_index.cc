#include "protocol/shm_index/object_index.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma::shm {
namespace {

constexpr int kSeq = 0, kIdLow = 1, kIdMid = 2, kIdHighStateMeta = 3, kOffset = 4, kDataSize = 5, kGeneration = 6,
              kChecksum = 7;
// A reader gives up on an entry the writer keeps busy for this many tries (then the client takes
// the socket path); the writer holds an entry for a few stores, so one retry is almost always enough.
constexpr int kReadAttempts = 64;
constexpr uint64_t kMaxCapacity = uint64_t{1} << 36;

uint64_t PackIdHighStateMeta(const ObjectID& id, IndexState state, uint64_t metadata_size) {
  uint32_t high = 0;
  std::memcpy(&high, id.data() + 16, sizeof(high));
  return uint64_t{high} | (uint64_t{static_cast<uint8_t>(state)} << 32) | (metadata_size << 40);
}

IndexState StateOf(uint64_t word) { return static_cast<IndexState>((word >> 32) & 0xff); }

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Copies `entry` into `words` if it is stable. The payload loads are acquire (or seq_cst, where
// the reference handshake needs it), so the second look at seq cannot move before them; a payload
// word written after the writer's odd seq carries that seq with it. No standalone fences (TSan
// does not model them). False if the writer kept the entry busy.
bool ReadEntry(const IndexEntry& entry, uint64_t (&words)[8], std::memory_order order) {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const uint64_t before = entry.words[kSeq].load(std::memory_order_acquire);
    if ((before & 1) != 0) {
      CpuRelax();
      continue;
    }
    for (int i = 1; i < 8; ++i) words[i] = entry.words[i].load(order);
    if (entry.words[kSeq].load(std::memory_order_relaxed) == before) {
      words[kSeq] = before;
      return true;
    }
  }
  return false;
}

// The sequence-lock write: readers that overlap it see an odd or changed seq and retry. Each
// payload word is a release store, so the odd seq is visible to whoever sees the word; the state
// word is stored seq_cst (reference_slots.h). On x86 both are plain stores but the seq_cst one.
void WriteEntry(IndexEntry& entry, const uint64_t (&words)[8]) {
  const uint64_t seq = entry.words[kSeq].load(std::memory_order_relaxed);
  entry.words[kSeq].store(seq + 1, std::memory_order_relaxed);
  for (int i = 1; i < 8; ++i) {
    entry.words[i].store(words[i], i == kIdHighStateMeta ? std::memory_order_seq_cst : std::memory_order_release);
  }
  entry.words[kSeq].store(seq + 2, std::memory_order_release);
}

IndexedObject Decode(uint64_t entry, const uint64_t (&words)[8]) {
  IndexedObject object;
  object.entry = entry;
  uint8_t* id = object.id.mutable_data();
  std::memcpy(id, &words[kIdLow], 8);
  std::memcpy(id + 8, &words[kIdMid], 8);
  const uint32_t high = static_cast<uint32_t>(words[kIdHighStateMeta]);
  std::memcpy(id + 16, &high, sizeof(high));
  object.state = StateOf(words[kIdHighStateMeta]);
  object.placement.metadata_size = words[kIdHighStateMeta] >> 40;
  object.placement.offset = words[kOffset];
  object.placement.data_size = words[kDataSize];
  object.placement.generation = words[kGeneration];
  object.placement.checksum = words[kChecksum];
  return object;
}

bool ValidCapacity(uint64_t capacity) {
  return capacity >= kIndexProbeWindow && capacity <= kMaxCapacity && (capacity & (capacity - 1)) == 0;
}

}  // namespace

size_t ObjectIndexBytes(uint64_t capacity) { return sizeof(IndexHeader) + capacity * sizeof(IndexEntry); }

uint64_t IndexHome(const ObjectID& id, uint64_t capacity) {
  uint64_t low = 0, mid = 0;
  uint32_t high = 0;
  std::memcpy(&low, id.data(), 8);
  std::memcpy(&mid, id.data() + 8, 8);
  std::memcpy(&high, id.data() + 16, 4);
  uint64_t h = low ^ (mid * 0x9e3779b97f4a7c15) ^ (uint64_t{high} << 17);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccd;
  h ^= h >> 33;
  return h & (capacity - 1);
}

absl::StatusOr<ObjectIndexWriter> ObjectIndexWriter::Create(absl::Span<uint8_t> region, uint64_t capacity) {
  if (!ValidCapacity(capacity)) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("index capacity ", capacity, ": not a power of two in [",
                                                               kIndexProbeWindow, ", ", kMaxCapacity, "]"));
  }
  if (region.size() < ObjectIndexBytes(capacity) || reinterpret_cast<uintptr_t>(region.data()) % 64 != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("index region of ", region.size(), " bytes cannot hold ", capacity, " entries"));
  }
  auto* header = reinterpret_cast<IndexHeader*>(region.data());
  header->capacity.store(capacity, std::memory_order_relaxed);
  header->magic.store(kIndexMagic, std::memory_order_release);
  return ObjectIndexWriter(reinterpret_cast<IndexEntry*>(region.data() + sizeof(IndexHeader)), capacity);
}

std::optional<uint64_t> ObjectIndexWriter::Insert(const ObjectID& id, const IndexedPlacement& placement) {
  if (placement.metadata_size > kMaxIndexedMetadataSize) return std::nullopt;
  const uint64_t home = IndexHome(id, capacity_);
  for (size_t i = 0; i < kIndexProbeWindow; ++i) {
    const uint64_t at = (home + i) & (capacity_ - 1);
    IndexEntry& entry = entries_[at];
    // Only this thread writes entries, so its own relaxed reads are current.
    const bool never_used = entry.words[kSeq].load(std::memory_order_relaxed) == 0;
    if (!never_used &&
        StateOf(entry.words[kIdHighStateMeta].load(std::memory_order_relaxed)) != IndexState::kTombstone) {
      continue;
    }
    uint64_t words[8] = {};
    std::memcpy(&words[kIdLow], id.data(), 8);
    std::memcpy(&words[kIdMid], id.data() + 8, 8);
    words[kIdHighStateMeta] = PackIdHighStateMeta(id, IndexState::kSealed, placement.metadata_size);
    words[kOffset] = placement.offset;
    words[kDataSize] = placement.data_size;
    words[kGeneration] = placement.generation;
    words[kChecksum] = placement.checksum;
    WriteEntry(entry, words);
    return at;
  }
  return std::nullopt;
}

std::optional<ObjectID> ObjectIndexWriter::SealedAt(uint64_t entry) const {
  if (entry >= capacity_) return std::nullopt;
  uint64_t words[8];
  if (!ReadEntry(entries_[entry], words, std::memory_order_relaxed) || words[kSeq] == 0) return std::nullopt;
  const IndexedObject object = Decode(entry, words);
  if (object.state != IndexState::kSealed) return std::nullopt;
  return object.id;
}

void ObjectIndexWriter::SetState(uint64_t entry_number, IndexState state) {
  // WriteEntry's sequence lock around the one word that changes (the others stay as they are).
  IndexEntry& entry = entries_[entry_number & (capacity_ - 1)];
  const uint64_t seq = entry.words[kSeq].load(std::memory_order_relaxed);
  entry.words[kSeq].store(seq + 1, std::memory_order_relaxed);
  const uint64_t word = entry.words[kIdHighStateMeta].load(std::memory_order_relaxed);
  entry.words[kIdHighStateMeta].store((word & ~(uint64_t{0xff} << 32)) | (uint64_t{static_cast<uint8_t>(state)} << 32),
                                      std::memory_order_seq_cst);
  entry.words[kSeq].store(seq + 2, std::memory_order_release);
}

absl::StatusOr<ObjectIndexReader> ObjectIndexReader::Open(absl::Span<const uint8_t> region) {
  if (region.size() < sizeof(IndexHeader) || reinterpret_cast<uintptr_t>(region.data()) % 64 != 0) {
    return MakeError(ErrorCode::kProtocolError, "object index: region too small for its header");
  }
  const auto* header = reinterpret_cast<const IndexHeader*>(region.data());
  if (header->magic.load(std::memory_order_acquire) != kIndexMagic) {
    return MakeError(ErrorCode::kProtocolError, "object index: bad magic");
  }
  const uint64_t capacity = header->capacity.load(std::memory_order_relaxed);
  if (!ValidCapacity(capacity) || ObjectIndexBytes(capacity) > region.size()) {
    return MakeError(ErrorCode::kProtocolError,
                     absl::StrCat("object index: capacity ", capacity, " does not fit ", region.size(), " bytes"));
  }
  return ObjectIndexReader(reinterpret_cast<const IndexEntry*>(region.data() + sizeof(IndexHeader)), capacity);
}

namespace {

// The first entry of `id`'s window in one of `states`.
template <typename Accept>
std::optional<IndexedObject> FindIn(const IndexEntry* entries, uint64_t capacity, const ObjectID& id, Accept accept) {
  const uint64_t home = IndexHome(id, capacity);
  uint64_t low = 0;
  std::memcpy(&low, id.data(), sizeof(low));
  for (size_t i = 0; i < kIndexProbeWindow; ++i) {
    const uint64_t at = (home + i) & (capacity - 1);
    const IndexEntry& entry = entries[at];
    // Never used: nothing was ever placed beyond it.
    if (entry.words[kSeq].load(std::memory_order_acquire) == 0) break;
    // Most entries of a window hold other ids (or tombstones of them): the id's first word tells,
    // without the whole read. An entry the writer is changing to or from `id` right now may be
    // passed over: the lookup then ran just before the insert or just after the delete.
    if (entry.words[kIdLow].load(std::memory_order_relaxed) != low) continue;
    uint64_t words[8];
    if (!ReadEntry(entry, words, std::memory_order_acquire)) continue;  // busy: not this lookup's
    IndexedObject object = Decode(at, words);
    if (accept(object.state) && object.id == id) return object;
  }
  return std::nullopt;
}

}  // namespace

std::optional<IndexedObject> ObjectIndexReader::FindSealed(const ObjectID& id) const {
  return FindIn(entries_, capacity_, id, [](IndexState state) { return state == IndexState::kSealed; });
}

std::optional<IndexedObject> ObjectIndexReader::FindHoldable(const ObjectID& id) const {
  return FindIn(entries_, capacity_, id,
                [](IndexState state) { return state == IndexState::kSealed || state == IndexState::kReclaiming; });
}

bool ObjectIndexReader::StillSealed(uint64_t entry, uint64_t generation) const {
  if (entry >= capacity_) return false;
  uint64_t words[8];
  if (!ReadEntry(entries_[entry], words, std::memory_order_seq_cst)) return false;
  return words[kSeq] != 0 && words[kGeneration] == generation &&
         StateOf(words[kIdHighStateMeta]) == IndexState::kSealed;
}

bool ObjectIndexReader::MayBeReclaiming(uint64_t entry) const {
  if (entry >= capacity_) return false;
  return StateOf(entries_[entry].words[kIdHighStateMeta].load(std::memory_order_seq_cst)) == IndexState::kReclaiming;
}

}  // namespace rplasma::shm
