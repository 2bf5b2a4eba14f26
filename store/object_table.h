// ObjectTable: every object of the store, its lifecycle, references and LRU eviction.
//
// Lifecycle of one id (per-id state machine):
//
//            Create                 Seal (creator)
//   (absent) ───────► CREATED ──────────────────► SEALED ──┐ Get: ref+1 / Release: ref-1
//      ▲                 │ Abort (creator) or                │
//      │                 │ creator disconnects               │ Delete: refs == 0 → removed now,
//      └─────────────────┘                                   │   else hidden, removed at last release
//      └─────────────────────────────────────────────────────┘ Evict (LRU; only refs == 0)
//
// The creator holds one reference from Create on; Seal keeps it (the creator releases it when it
// is done). Each client's references are counted per id, so a client that disconnects gives back
// exactly what it held. A SEALED object with no references sits in the LRU list and may be
// evicted; nothing referenced is ever freed, so its bytes are never reused under a reader.
//
// With a SharedIndex (store/shared_index.h), a sealed object is also published there, and clients
// may hold it through their reference slots without the table counting them (a get with no IPC).
// Before the table frees an indexed object it hides it and looks at every client's slots: an
// eviction passes over an object a slot holds (it goes to the young end of the LRU list), and a
// deleted one waits, invisible, until no slot holds it (RetryReclaims, called when a client says
// it let go of a slot or its connection closed).
//
// Events (seal, delete, evict) go to the EventSink given at construction, synchronously.
//
// Thread-safety: none (owned by the store's single event-loop thread).
#ifndef RPLASMA_STORE_OBJECT_TABLE_H_
#define RPLASMA_STORE_OBJECT_TABLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include "protocol/base/object_id.h"
#include "protocol/base/status.h"
#include "protocol/store_messages.h"
#include "store/allocator.h"
#include "store/shared_index.h"

namespace rplasma {

// The table's private row for one object: plain data, with the table's bookkeeping (LRU tick,
// creator, pending delete). What the store tells clients about an object is an ObjectInfo
// (protocol/store_messages.h), built from this row.
struct ObjectEntry {
  uint64_t offset = 0;
  uint64_t data_size = 0;
  uint64_t metadata_size = 0;
  uint64_t generation = 0;
  uint64_t checksum = 0;
  uint64_t lru_tick = 0;  // key in the LRU index while evictable, else 0
  ClientId creator = 0;
  int32_t ref_count = 0;
  uint64_t index_entry = SharedIndex::kNotIndexed;  // its entry in the shared index, once sealed
  ObjectState state = ObjectState::kCreated;
  bool delete_pending = false;  // deleted while referenced: invisible, freed at the last release
};

struct EvictResult {
  uint64_t bytes = 0;  // bytes of the evicted objects (data + metadata)
  uint64_t objects = 0;
};

struct TableStats {
  uint64_t objects_created = 0;  // unsealed
  uint64_t objects_sealed = 0;
  uint64_t ref_count = 0;
  uint64_t evictions = 0;
  uint64_t evicted_bytes = 0;
  uint64_t evictions_skipped = 0;  // LRU candidates passed over because a slot held them
};

class ObjectTable {
 public:
  using EventSink = std::function<void(EventKind, const ObjectInfo&)>;

  // `capacity`: arena bytes. `generation_seed`: the first generation handed out (the store seeds
  // it from the clock so generations differ across restarts). `index`: where sealed objects are
  // published for gets with no IPC (not owned; may be null: no index).
  ObjectTable(uint64_t capacity, uint64_t generation_seed, EventSink sink, SharedIndex* index = nullptr);

  // Creates `id`; the creator holds one reference. With evict_if_full, unreferenced sealed objects
  // are evicted in LRU order until the object fits. ObjectExists, OutOfMemory.
  absl::StatusOr<ObjectInfo> Create(ClientId client, const ObjectID& id, uint64_t data_size, uint64_t metadata_size,
                                    bool evict_if_full);
  // ObjectNotFound, NotCreator, ObjectAlreadySealed.
  absl::Status Seal(ClientId client, const ObjectID& id, uint64_t checksum);
  // Discards an unsealed object. ObjectNotFound, NotCreator, ObjectAlreadySealed.
  absl::Status Abort(ClientId client, const ObjectID& id);
  // A reference on a sealed object (ref+1). ObjectNotFound, ObjectNotSealed (no reference taken).
  absl::StatusOr<ObjectInfo> Get(ClientId client, const ObjectID& id);
  // Drops one of `client`'s references. ObjectNotFound (unknown id), ObjectNotSealed (the creator's
  // reference before seal: abort instead), InvalidArgument (client holds no reference).
  absl::Status Release(ClientId client, const ObjectID& id);
  // kOk if present and sealed, kObjectNotSealed if created, else kObjectNotFound.
  ErrorCode Contains(const ObjectID& id) const;
  // Deletes a sealed object now, or hides it and frees it at its last release (kOk either way).
  // kObjectNotFound, kObjectNotSealed (unsealed objects are aborted by their creator).
  ErrorCode Delete(const ObjectID& id);
  // Evicts unreferenced sealed objects in LRU order until at least `bytes` are freed or none is left.
  EvictResult Evict(uint64_t bytes);
  // Counts the reads clients made through the shared index since the last call as uses (LRU):
  // each read object that is evictable moves to the young end. Evict and an evicting Create call
  // it first; the store's loop calls it on every turn, so the order follows the reads.
  void DrainAccesses();
  // Drops every reference of `client` and aborts its unsealed objects.
  void RemoveClient(ClientId client);
  // Frees the deleted objects that waited for slots nobody holds any more (after a client let go
  // of a slot, or its slots were dropped).
  void RetryReclaims();
  // Deleted objects still waiting for a slot to let go of them.
  uint64_t reclaims_waiting() const { return reclaim_waiting_.size(); }

  // Visible objects with ids > start_after (all if nullopt), in id order, at most `limit`.
  // `more` is set when further objects follow.
  std::vector<ObjectInfo> List(const std::optional<ObjectID>& start_after, uint32_t limit, bool* more) const;
  // Starts loading what a request about `id` touches (its row, its shared-index entry), so that a
  // batch handling it a few objects later does not wait for those cache lines.
  void Prefetch(const ObjectID& id) const {
    objects_.prefetch(id);
    if (index_ != nullptr) index_->Prefetch(id);
  }
  // Info of a visible object (no reference taken).
  std::optional<ObjectInfo> Find(const ObjectID& id) const;

  const TableStats& stats() const { return stats_; }
  const Allocator& allocator() const { return allocator_; }
  uint64_t size() const { return objects_.size(); }
  // References `client` holds on `id` (for tests and audits).
  uint32_t ClientRefs(ClientId client, const ObjectID& id) const;

 private:
  // Hashed: every request looks its ids up here. Iterators are not kept across an insertion.
  using Map = absl::flat_hash_map<ObjectID, ObjectEntry>;

  static ObjectInfo Info(const ObjectID& id, const ObjectEntry& e);
  void AddRef(ClientId client, Map::iterator it);
  // Removes one reference; frees the object if it was delete-pending and this was the last.
  void DropRef(ClientId client, Map::iterator it);
  // A deleted object with no table reference left: frees it, unless a slot holds it (it then
  // waits in reclaim_waiting_).
  void ReclaimDeleted(Map::iterator it);
  // Whether an LRU candidate may go now: not indexed, or hidden with no slot holding it.
  bool MayEvict(ObjectEntry& e);
  void LruInsert(const ObjectID& id, ObjectEntry& e);
  void LruErase(ObjectEntry& e);
  // Frees the object's bytes and forgets it.
  void Erase(Map::iterator it);
  bool EvictOne(EvictResult* result);

  Allocator allocator_;
  uint64_t next_generation_;
  EventSink sink_;
  SharedIndex* index_;
  Map objects_;
  absl::btree_set<ObjectID> order_;          // the ids of objects_, in order (List)
  absl::btree_map<uint64_t, ObjectID> lru_;  // lru_tick -> id; oldest first
  uint64_t next_tick_ = 1;
  // Per client: id -> references held.
  absl::flat_hash_map<ClientId, absl::flat_hash_map<ObjectID, uint32_t>> client_refs_;
  TableStats stats_;
  // Deleted objects no table reference holds, kept for a slot that still does.
  absl::btree_set<ObjectID> reclaim_waiting_;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_OBJECT_TABLE_H_
