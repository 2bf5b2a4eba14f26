#include "protocol/shm_index/reference_slots.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma::shm {
namespace {

constexpr uint64_t kMaxSlots = uint64_t{1} << 24;

bool ValidSlots(uint64_t slots) { return slots >= kSlotWindow && slots <= kMaxSlots && (slots & (slots - 1)) == 0; }

std::atomic<uint64_t>* WordsOf(uint8_t* region) {
  return reinterpret_cast<std::atomic<uint64_t>*>(region + sizeof(SlotRegionHeader));
}

}  // namespace

size_t SlotRegionBytes(uint64_t slots) {
  return sizeof(SlotRegionHeader) + (slots + 1 + kAccessRing) * sizeof(uint64_t);
}

uint64_t SlotHome(uint64_t generation, uint64_t slots) {
  uint64_t h = generation * 0x9e3779b97f4a7c15;
  h ^= h >> 29;
  return h & (slots - 1);
}

absl::StatusOr<ReferenceSlots> ReferenceSlots::Open(absl::Span<uint8_t> region) {
  if (region.size() < sizeof(SlotRegionHeader) || reinterpret_cast<uintptr_t>(region.data()) % 64 != 0) {
    return MakeError(ErrorCode::kProtocolError, "reference slots: region too small for its header");
  }
  const auto* header = reinterpret_cast<const SlotRegionHeader*>(region.data());
  if (header->magic.load(std::memory_order_acquire) != kSlotsMagic) {
    return MakeError(ErrorCode::kProtocolError, "reference slots: bad magic");
  }
  const uint64_t slots = header->slots.load(std::memory_order_relaxed);
  if (!ValidSlots(slots) || SlotRegionBytes(slots) > region.size()) {
    return MakeError(ErrorCode::kProtocolError,
                     absl::StrCat("reference slots: ", slots, " slots do not fit ", region.size(), " bytes"));
  }
  return ReferenceSlots(WordsOf(region.data()), slots);
}

std::optional<uint64_t> ReferenceSlots::Claim(uint64_t generation) {
  if (generation == 0) return std::nullopt;
  const uint64_t home = SlotHome(generation, slots_);
  for (size_t i = 0; i < kSlotWindow; ++i) {
    const uint64_t at = (home + i) & (slots_ - 1);
    uint64_t expected = 0;
    if (words_[at].load(std::memory_order_relaxed) == 0 &&
        words_[at].compare_exchange_strong(expected, generation, std::memory_order_seq_cst)) {
      return at;
    }
  }
  return std::nullopt;
}

void ReferenceSlots::Clear(uint64_t slot) { words_[slot & (slots_ - 1)].store(0, std::memory_order_seq_cst); }

void ReferenceSlots::RecordAccess(uint64_t entry) {
  std::atomic<uint64_t>* ring = words_ + slots_;  // head, then the records
  const uint64_t at = ring[0].fetch_add(1, std::memory_order_relaxed);
  ring[1 + (at & (kAccessRing - 1))].store(entry, std::memory_order_relaxed);
}

bool ReferenceSlots::ClearIf(uint64_t slot, uint64_t generation) {
  uint64_t expected = generation;
  return generation != 0 && words_[slot & (slots_ - 1)].compare_exchange_strong(expected, 0, std::memory_order_seq_cst);
}

std::optional<uint64_t> ReferenceSlots::ClearAny(uint64_t generation) {
  if (generation == 0) return std::nullopt;
  const uint64_t home = SlotHome(generation, slots_);
  for (size_t i = 0; i < kSlotWindow; ++i) {
    const uint64_t at = (home + i) & (slots_ - 1);
    if (words_[at].load(std::memory_order_relaxed) == generation && ClearIf(at, generation)) return at;
  }
  return std::nullopt;
}

absl::StatusOr<ReferenceSlotsView> ReferenceSlotsView::Format(absl::Span<uint8_t> region, uint64_t slots) {
  if (!ValidSlots(slots)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("reference slots: ", slots, " is not a power of two in [", kSlotWindow, ", ", kMaxSlots, "]"));
  }
  if (region.size() < SlotRegionBytes(slots) || reinterpret_cast<uintptr_t>(region.data()) % 64 != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("reference slots: a region of ", region.size(), " bytes cannot hold ", slots));
  }
  auto* header = reinterpret_cast<SlotRegionHeader*>(region.data());
  header->slots.store(slots, std::memory_order_relaxed);
  header->magic.store(kSlotsMagic, std::memory_order_release);
  return ReferenceSlotsView(WordsOf(region.data()), slots);
}

bool ReferenceSlotsView::Holds(uint64_t generation) const {
  const uint64_t home = SlotHome(generation, slots_);
  for (size_t i = 0; i < kSlotWindow; ++i) {
    if (words_[(home + i) & (slots_ - 1)].load(std::memory_order_seq_cst) == generation) return true;
  }
  return false;
}

uint64_t ReferenceSlotsView::CountOf(uint64_t generation) const {
  if (generation == 0) return 0;
  const uint64_t home = SlotHome(generation, slots_);
  uint64_t held = 0;
  for (size_t i = 0; i < kSlotWindow; ++i) {
    held += words_[(home + i) & (slots_ - 1)].load(std::memory_order_relaxed) == generation ? 1 : 0;
  }
  return held;
}

void ReferenceSlotsView::DrainAccesses(uint64_t* cursor, absl::FunctionRef<void(uint64_t entry)> accessed) const {
  const std::atomic<uint64_t>* ring = words_ + slots_;
  const uint64_t head = ring[0].load(std::memory_order_acquire);
  // A head that went backwards or jumped (a client rewriting its own ring) costs at most one ring.
  uint64_t from = *cursor;
  if (head < from || head - from > kAccessRing) from = head - std::min(head, kAccessRing);
  for (uint64_t i = from; i < head; ++i) accessed(ring[1 + (i & (kAccessRing - 1))].load(std::memory_order_relaxed));
  *cursor = head;
}

uint64_t ReferenceSlotsView::CountHeld() const {
  uint64_t held = 0;
  for (uint64_t i = 0; i < slots_; ++i) held += words_[i].load(std::memory_order_relaxed) != 0 ? 1 : 0;
  return held;
}

}  // namespace rplasma::shm
