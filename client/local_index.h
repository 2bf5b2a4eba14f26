// LocalIndex: a client's side of the get with no IPC (issue 13; protocol/shm_index/). It maps the
// store's index of sealed objects read-only and this client's own reference slots read-write, both
// received on the ConnectReply, and takes or gives back a reference with no message to the store.
//
// A get looks the id up in the index, claims a slot word for the object's generation, then checks
// that the entry still holds that generation, sealed: the handshake of reference_slots.h, which
// guarantees the store frees nothing a slot holds. Anything short of that (id not indexed, not
// sealed yet, slots full, the store reclaiming it) answers nullopt, and the caller uses the socket,
// which is never wrong. A release clears the word and, if the store may be waiting for it, calls
// the `notify` given at Open (the client sends a SlotsReleased message).
//
// Thread-safety: thread-safe (atomics only); `notify` may be called from any thread.
#ifndef RPLASMA_CLIENT_LOCAL_INDEX_H_
#define RPLASMA_CLIENT_LOCAL_INDEX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"

#include "client/fork_guard.h"
#include "protocol/base/object_id.h"
#include "protocol/base/unique_fd.h"
#include "protocol/shm_index/object_index.h"
#include "protocol/shm_index/reference_slots.h"
#include "protocol/shm_index/shared_memory.h"

namespace rplasma {

class LocalIndex {
 public:
  // An object held through a slot: where its bytes are, and what Release needs.
  struct Hold {
    shm::IndexedPlacement placement;
    uint64_t entry = 0;
    uint64_t slot = 0;
  };

  // Maps the index of `entries` entries and the region of `slots` slots the store announced
  // (kProtocolError if the fds do not match what it announced, or hold no well-formed region).
  static absl::StatusOr<std::unique_ptr<LocalIndex>> Open(UniqueFd index_fd, uint64_t entries, UniqueFd slots_fd,
                                                          uint64_t slots, std::function<void()> notify);

  // A reference on the sealed object `id`, taken with no message; nullopt: take the socket path.
  std::optional<Hold> TryGet(const ObjectID& id);
  // True if the index shows `id` sealed now (no reference taken); false also when it is not indexed.
  // In a forked child (fork_guard.h) every call here does nothing: TryGet answers nullopt.
  bool IndexedAsSealed(const ObjectID& id) const { return index_.FindSealed(id).has_value(); }
  // Brings `id`'s index entry towards the cache ahead of its TryGet (batches).
  void Prefetch(const ObjectID& id) const { index_.Prefetch(id); }
  // Gives back a Hold: its word, if it still holds the object's generation (Client::Release(id)
  // may have given back a reference of the same object already).
  void Release(const Hold& hold) { Release(hold.entry, hold.slot, hold.placement.generation); }
  void Release(uint64_t entry, uint64_t slot, uint64_t generation);
  // Gives back one reference to `id` held through a slot, whichever get took it; false if this
  // client holds none (or the index cannot say: then the socket path answers).
  bool ReleaseOne(const ObjectID& id);

 private:
  LocalIndex(shm::SharedMemory index_memory, shm::ObjectIndexReader index, shm::SharedMemory slots_memory,
             shm::ReferenceSlots slots, std::function<void()> notify)
      : index_memory_(std::move(index_memory)),
        slots_memory_(std::move(slots_memory)),
        index_(index),
        slots_(slots),
        notify_(std::move(notify)) {}

  shm::SharedMemory index_memory_;
  shm::SharedMemory slots_memory_;
  shm::ObjectIndexReader index_;
  shm::ReferenceSlots slots_;
  std::function<void()> notify_;
  const ForkGuard fork_guard_;  // in a forked child the slots are the parent's: hands off
};

}  // namespace rplasma

#endif  // RPLASMA_CLIENT_LOCAL_INDEX_H_
