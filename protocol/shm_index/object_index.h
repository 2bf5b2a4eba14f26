// ObjectIndex: the store's index of its sealed objects in shared memory, so that a client can find
// an object with no message to the store (issue 13: a local get with no IPC). The store is its one
// writer; every client maps it read-only and looks ids up with no syscall.
//
// Layout: an IndexHeader, then `capacity` IndexEntry, each one cache line of eight atomic words:
//   0  seq         sequence lock: even when stable, odd while the store rewrites the entry
//   1  id[0..8)    2  id[8..16)
//   3  id[16..20) | state << 32 | metadata_size << 40   (metadata_size < 2^24)
//   4  offset      5  data_size      6  generation      7  checksum
// A reader copies the words and keeps the copy only if seq was even and unchanged around it, so it
// never takes a torn entry. Every word is an atomic, so a copy racing the writer is no data race.
//
// Placement: open addressing. An id lives in one of the kIndexProbeWindow entries from Home(id); a
// lookup scans that window and stops early at an entry that was never used. Insert takes the first
// entry of the window that is never-used or a tombstone; if there is none, the object is simply not
// indexed and clients reach it through the socket, as before.
//
// States: kSealed (clients may take it), kReclaiming (the store is deciding whether to free it, or it
// was deleted while referenced: clients must not take it), kTombstone (free for reuse).
//
// An object is named by (entry, generation): generations are unique for the store's life
// (store/object_table.h), so an entry reused for another object never passes a check for the old
// one. How a client takes a reference without a message, and how the store knows, is in
// reference_slots.h.
//
// The store hands clients the index as a memfd sealed against writes through new mappings
// (F_SEAL_FUTURE_WRITE), so no client can write it; a reader still checks everything it uses
// (entry numbers against the capacity, placements against the arena) before touching memory.
//
// Thread-safety: one ObjectIndexWriter (the store's loop thread); any number of readers in any
// number of processes and threads.
#ifndef RPLASMA_PROTOCOL_SHM_INDEX_OBJECT_INDEX_H_
#define RPLASMA_PROTOCOL_SHM_INDEX_OBJECT_INDEX_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "protocol/base/object_id.h"

namespace rplasma::shm {

inline constexpr uint64_t kIndexMagic = 0x3178646e49504c52;  // "RLPIndx1"
inline constexpr size_t kIndexProbeWindow = 16;
inline constexpr uint64_t kMaxIndexedMetadataSize = (uint64_t{1} << 24) - 1;

enum class IndexState : uint8_t { kNeverUsed = 0, kSealed = 1, kReclaiming = 2, kTombstone = 3 };

struct alignas(64) IndexEntry {
  std::atomic<uint64_t> words[8];
};
static_assert(sizeof(IndexEntry) == 64);

struct alignas(64) IndexHeader {
  std::atomic<uint64_t> magic;
  std::atomic<uint64_t> capacity;  // entries; a power of two
  std::atomic<uint64_t> reserved[6];
};
static_assert(sizeof(IndexHeader) == 64);

// Where a sealed object's bytes are, as the index publishes it.
struct IndexedPlacement {
  uint64_t offset = 0;
  uint64_t data_size = 0;
  uint64_t metadata_size = 0;
  uint64_t generation = 0;
  uint64_t checksum = 0;
};

// A consistent copy of one entry.
struct IndexedObject {
  uint64_t entry = 0;
  ObjectID id;
  IndexState state = IndexState::kNeverUsed;
  IndexedPlacement placement;
};

// The first entry of `id`'s probe window in an index of `capacity` entries (a power of two).
uint64_t IndexHome(const ObjectID& id, uint64_t capacity);

// Bytes of a region holding an index of `capacity` entries.
size_t ObjectIndexBytes(uint64_t capacity);

// The store's side.
class ObjectIndexWriter {
 public:
  // `region`: ObjectIndexBytes(capacity) zero-filled bytes (a fresh memfd mapping), 64-byte aligned.
  // kInvalidArgument unless capacity is a power of two >= kIndexProbeWindow and region fits it.
  static absl::StatusOr<ObjectIndexWriter> Create(absl::Span<uint8_t> region, uint64_t capacity);

  // Publishes the sealed object `id` and returns its entry; nullopt if its probe window is full or
  // its metadata is too large to index (the object is then reachable through the socket only).
  // REQUIRES: `id` is not indexed already (the store indexes an id once per object).
  std::optional<uint64_t> Insert(const ObjectID& id, const IndexedPlacement& placement);

  // Moves `entry` to `state`: kReclaiming and back to kSealed, or kTombstone (the entry is free).
  // The state word is written with a seq_cst store, which reference_slots.h's handshake needs.
  void SetState(uint64_t entry, IndexState state);
  // The sealed object `entry` holds now (the writer's own view); nullopt for an entry out of range
  // or not holding a sealed object.
  std::optional<ObjectID> SealedAt(uint64_t entry) const;
  // Starts loading the entry `id` would be inserted at (or is found at) for writing, so that a
  // batch's Insert or SetState a few objects later does not wait for that cache line.
  void Prefetch(const ObjectID& id) const { __builtin_prefetch(&entries_[IndexHome(id, capacity_)], 1, 3); }

  uint64_t capacity() const { return capacity_; }

 private:
  ObjectIndexWriter(IndexEntry* entries, uint64_t capacity) : entries_(entries), capacity_(capacity) {}

  IndexEntry* entries_;
  uint64_t capacity_;
};

// A client's side, over the read-only mapping.
class ObjectIndexReader {
 public:
  // kProtocolError unless the region holds a well-formed header and every entry it announces.
  static absl::StatusOr<ObjectIndexReader> Open(absl::Span<const uint8_t> region);

  // The sealed object `id`: nullopt if it is not indexed, not sealed, or its entry stayed busy.
  std::optional<IndexedObject> FindSealed(const ObjectID& id) const;
  // The object `id` that a client may still hold: sealed, or being reclaimed (deleted or evicted
  // while held). nullopt if it is in neither state or its entry stayed busy.
  std::optional<IndexedObject> FindHoldable(const ObjectID& id) const;

  // Starts loading the first entry of `id`'s window into the cache (a batch of lookups overlaps
  // its memory latency by prefetching a few ids ahead). No effect on correctness.
  void Prefetch(const ObjectID& id) const { __builtin_prefetch(&entries_[IndexHome(id, capacity_)]); }

  // Whether `entry` still holds the object of `generation`, sealed: a consistent read with seq_cst
  // loads, as the get side of reference_slots.h's handshake needs. False when in doubt (an entry out
  // of range, or one the writer kept busy), which only sends the caller to the socket.
  bool StillSealed(uint64_t entry, uint64_t generation) const;

  // Whether `entry`'s state word says kReclaiming: one seq_cst load, for the release side of the
  // handshake, which must never miss a reclaim that waits for it; it may answer true for another
  // object that reused the entry (the store then finds nothing to do).
  bool MayBeReclaiming(uint64_t entry) const;

  uint64_t capacity() const { return capacity_; }

 private:
  ObjectIndexReader(const IndexEntry* entries, uint64_t capacity) : entries_(entries), capacity_(capacity) {}

  const IndexEntry* entries_;
  uint64_t capacity_;
};

}  // namespace rplasma::shm

#endif  // RPLASMA_PROTOCOL_SHM_INDEX_OBJECT_INDEX_H_
