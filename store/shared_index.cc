#include "store/shared_index.h"

#include <fcntl.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma {

absl::StatusOr<std::unique_ptr<SharedIndex>> SharedIndex::Create(uint64_t entries, uint64_t slots_per_client) {
  if (!std::has_single_bit(slots_per_client) || slots_per_client < shm::kSlotWindow) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("store: slots per client must be a power of two >= ",
                                                               shm::kSlotWindow, ", not ", slots_per_client));
  }
  if (!std::has_single_bit(entries) || entries < shm::kIndexProbeWindow) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        absl::StrCat("store: index entries must be a power of two >= ", shm::kIndexProbeWindow, ", not ", entries));
  }
  ASSIGN_OR_RETURN(shm::SharedMemory index,
                   shm::SharedMemory::Create("rplasma-index", shm::ObjectIndexBytes(entries),
                                             F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL));
  ASSIGN_OR_RETURN(shm::ObjectIndexWriter writer, shm::ObjectIndexWriter::Create(index.bytes(), entries));
  return std::unique_ptr<SharedIndex>(new SharedIndex(std::move(index), writer, slots_per_client));
}

uint64_t SharedIndex::DefaultEntries(uint64_t arena_bytes) {
  return std::bit_ceil(std::clamp<uint64_t>(arena_bytes / 4096, 4096, uint64_t{1} << 20));
}

uint64_t SharedIndex::Publish(const ObjectID& id, const shm::IndexedPlacement& placement) {
  std::optional<uint64_t> entry = writer_.Insert(id, placement);
  if (!entry.has_value()) return kNotIndexed;
  ++indexed_;
  return *entry;
}

bool SharedIndex::Hide(uint64_t entry, uint64_t generation) {
  writer_.SetState(entry, shm::IndexState::kReclaiming);  // seq_cst, before any slot is looked at
  return Held(generation);
}

bool SharedIndex::Held(uint64_t generation) const {
  for (const auto& [client, slots] : clients_) {
    if (slots.view.Holds(generation)) return true;
  }
  return false;
}

uint64_t SharedIndex::HoldsOf(uint64_t generation) const {
  uint64_t held = 0;
  for (const auto& [client, slots] : clients_) held += slots.view.CountOf(generation);
  return held;
}

void SharedIndex::Unhide(uint64_t entry) { writer_.SetState(entry, shm::IndexState::kSealed); }

void SharedIndex::Remove(uint64_t entry) {
  writer_.SetState(entry, shm::IndexState::kTombstone);
  --indexed_;
}

absl::StatusOr<int> SharedIndex::AddClient(ClientId client) {
  // Sealed against resizing: a client that shrank its region would fault the store's reads.
  ASSIGN_OR_RETURN(shm::SharedMemory memory,
                   shm::SharedMemory::Create("rplasma-slots", shm::SlotRegionBytes(slots_per_client_),
                                             F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
  ASSIGN_OR_RETURN(shm::ReferenceSlotsView view, shm::ReferenceSlotsView::Format(memory.bytes(), slots_per_client_));
  auto it = clients_.insert_or_assign(client, ClientSlots{std::move(memory), view, 0}).first;
  return it->second.memory.fd();
}

void SharedIndex::RemoveClient(ClientId client) { clients_.erase(client); }

void SharedIndex::DrainAccesses(absl::FunctionRef<void(const ObjectID& id, uint64_t entry)> used) {
  for (auto& [client, slots] : clients_) {
    slots.view.DrainAccesses(&slots.access_cursor, [&](uint64_t entry) {
      if (std::optional<ObjectID> id = writer_.SealedAt(entry)) used(*id, entry);
    });
  }
}

uint64_t SharedIndex::SlotReferences() const {
  uint64_t held = 0;
  for (const auto& [client, slots] : clients_) held += slots.view.CountHeld();
  return held;
}

}  // namespace rplasma
