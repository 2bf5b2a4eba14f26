#include "client/local_index.h"

#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma {

absl::StatusOr<std::unique_ptr<LocalIndex>> LocalIndex::Open(UniqueFd index_fd, uint64_t entries, UniqueFd slots_fd,
                                                             uint64_t slots, std::function<void()> notify) {
  // The announced counts bound the mappings: anything past what a valid region needs is refused.
  if (entries == 0 || entries > (uint64_t{1} << 36) || slots == 0 || slots > (uint64_t{1} << 24)) {
    return MakeError(ErrorCode::kProtocolError,
                     absl::StrCat("shared index: implausible sizes (", entries, " entries, ", slots, " slots)"));
  }
  ASSIGN_OR_RETURN(shm::SharedMemory index_memory,
                   shm::SharedMemory::Map(std::move(index_fd), shm::ObjectIndexBytes(entries), /*writable=*/false));
  ASSIGN_OR_RETURN(shm::ObjectIndexReader index, shm::ObjectIndexReader::Open(index_memory.bytes()));
  ASSIGN_OR_RETURN(shm::SharedMemory slots_memory,
                   shm::SharedMemory::Map(std::move(slots_fd), shm::SlotRegionBytes(slots), /*writable=*/true));
  ASSIGN_OR_RETURN(shm::ReferenceSlots reference_slots, shm::ReferenceSlots::Open(slots_memory.bytes()));
  return std::unique_ptr<LocalIndex>(
      new LocalIndex(std::move(index_memory), index, std::move(slots_memory), reference_slots, std::move(notify)));
}

std::optional<LocalIndex::Hold> LocalIndex::TryGet(const ObjectID& id) {
  if (fork_guard_.forked()) return std::nullopt;  // the socket path refuses it
  std::optional<shm::IndexedObject> found = index_.FindSealed(id);
  if (!found.has_value()) return std::nullopt;
  const uint64_t generation = found->placement.generation;
  std::optional<uint64_t> slot = slots_.Claim(generation);
  if (!slot.has_value()) return std::nullopt;
  if (!index_.StillSealed(found->entry, generation)) {
    // The store started to reclaim it, and may have seen the word: backing off is a release.
    Release(found->entry, *slot, generation);
    return std::nullopt;
  }
  slots_.RecordAccess(found->entry);  // the store's LRU counts the read
  return Hold{found->placement, found->entry, *slot};
}

void LocalIndex::Release(uint64_t entry, uint64_t slot, uint64_t generation) {
  if (fork_guard_.forked()) return;               // the parent's hold, not ours to drop
  if (!slots_.ClearIf(slot, generation)) return;  // given back already
  if (index_.MayBeReclaiming(entry)) notify_();
}

bool LocalIndex::ReleaseOne(const ObjectID& id) {
  if (fork_guard_.forked()) return false;  // the socket path refuses it
  const std::optional<shm::IndexedObject> object = index_.FindHoldable(id);
  if (!object.has_value() || !slots_.ClearAny(object->placement.generation).has_value()) return false;
  if (index_.MayBeReclaiming(object->entry)) notify_();
  return true;
}

}  // namespace rplasma
