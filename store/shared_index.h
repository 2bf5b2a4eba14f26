// SharedIndex: the store's side of the get with no IPC (issue 13; protocol/shm_index/): the index
// of sealed objects it publishes in shared memory, and every connected client's reference slots.
//
// The object table (store/object_table.h) publishes an object when it is sealed and, before it
// frees one, hides it (kReclaiming) and asks whether any client's slot holds it: the store side of
// reference_slots.h's handshake. StoreServer adds a client's slots at Connect (the memfd goes out on
// the ConnectReply) and drops them when the connection closes, whatever the client left in them:
// a dead client's slots hold nothing.
//
// Memory the clients see: the index memfd is sealed against resizing and against every writable
// mapping but the store's own (F_SEAL_FUTURE_WRITE), so clients read it and nobody else writes it.
// A slot memfd is sealed against resizing only: its client writes it, the store only compares its
// words with generations, and keeps its own copy of the region's size, so nothing a client writes
// there can crash the store or free an object another client holds.
//
// Thread-safety: none (the store's loop thread); clients touch the same memory from their own
// processes, through atomics only.
#ifndef RPLASMA_STORE_SHARED_INDEX_H_
#define RPLASMA_STORE_SHARED_INDEX_H_

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

#include "protocol/base/object_id.h"
#include "protocol/shm_index/object_index.h"
#include "protocol/shm_index/reference_slots.h"
#include "protocol/shm_index/shared_memory.h"

namespace rplasma {

using ClientId = uint64_t;

class SharedIndex {
 public:
  static constexpr uint64_t kNotIndexed = ~uint64_t{0};

  // An index of `entries` entries and, per client, `slots_per_client` slots (powers of two,
  // >= 16; kInvalidArgument otherwise).
  static absl::StatusOr<std::unique_ptr<SharedIndex>> Create(uint64_t entries, uint64_t slots_per_client);
  // The entries the store offers by default for an arena of `arena_bytes`: one per 4 KiB, a power
  // of two between 4096 and 2^20 (64 B each: at most 1/64 of the arena, and 64 MiB).
  static uint64_t DefaultEntries(uint64_t arena_bytes);

  int index_fd() const { return index_.fd(); }
  uint64_t entries() const { return writer_.capacity(); }
  uint64_t slots_per_client() const { return slots_per_client_; }

  // ---- objects ----
  // Publishes a sealed object; its entry, or kNotIndexed (window full, metadata too large: the
  // object is then served through the socket only).
  uint64_t Publish(const ObjectID& id, const shm::IndexedPlacement& placement);
  // The entry `id` is published at (or would be), loaded ahead of a batch's Publish or Hide.
  void Prefetch(const ObjectID& id) const { writer_.Prefetch(id); }
  // Hides `entry` from new gets (kReclaiming), then says whether a client holds `generation`
  // through a slot. Not held: nobody holds it or can take it, and it may be freed (Remove).
  bool Hide(uint64_t entry, uint64_t generation);
  // Whether a client holds `generation` through a slot (for an entry hidden earlier).
  bool Held(uint64_t generation) const;
  // References to `generation` held through slots, all clients together (for List; a window's
  // look per client).
  uint64_t HoldsOf(uint64_t generation) const;
  // Shows a hidden entry again (an eviction that found its object held).
  void Unhide(uint64_t entry);
  // Frees a hidden, unheld entry for reuse. REQUIRES: !Held(generation) after Hide.
  void Remove(uint64_t entry);
  uint64_t indexed() const { return indexed_; }

  // ---- clients ----
  // Creates `client`'s slots; the memfd to send it (owned here until RemoveClient).
  absl::StatusOr<int> AddClient(ClientId client);
  // Forgets `client`'s slots: whatever they held is no longer held.
  void RemoveClient(ClientId client);
  // References held through every client's slots (a scan of every region: for Stats, not the loop).
  uint64_t SlotReferences() const;
  // Calls `used(id)` for the sealed object behind each access record clients wrote since the last
  // drain (reference_slots.h), oldest first per client.
  void DrainAccesses(absl::FunctionRef<void(const ObjectID& id, uint64_t entry)> used);

 private:
  struct ClientSlots {
    shm::SharedMemory memory;
    shm::ReferenceSlotsView view;
    uint64_t access_cursor = 0;  // access records drained so far
  };

  SharedIndex(shm::SharedMemory index, shm::ObjectIndexWriter writer, uint64_t slots_per_client)
      : index_(std::move(index)), writer_(writer), slots_per_client_(slots_per_client) {}

  shm::SharedMemory index_;
  shm::ObjectIndexWriter writer_;
  uint64_t slots_per_client_;
  uint64_t indexed_ = 0;
  absl::flat_hash_map<ClientId, ClientSlots> clients_;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_SHARED_INDEX_H_
