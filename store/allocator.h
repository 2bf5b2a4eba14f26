// Allocator: hands out 64-byte aligned byte ranges inside the arena, as offsets.
//
// Free space is a set of maximal free blocks kept twice: by offset (to find neighbours and
// coalesce on free) and by (size, offset) (best fit on allocate). Both operations are O(log n)
// in the number of free blocks. Allocated blocks are not tracked here: the caller remembers the
// offset and the size it asked for (the object table does) and passes both back to Free.
//
// Invariants: free blocks never overlap and never touch (adjacent free blocks are merged); every
// block offset and size is a multiple of kAlignment; used_bytes() + free_bytes() == capacity().
// A range is handed out again only after Free: memory still referenced is never reused.
//
// Thread-safety: none (owned by the store's single event-loop thread).
#ifndef RPLASMA_STORE_ALLOCATOR_H_
#define RPLASMA_STORE_ALLOCATOR_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"

namespace rplasma {

class Allocator {
 public:
  static constexpr uint64_t kAlignment = 64;

  // Manages [0, capacity rounded down to kAlignment).
  explicit Allocator(uint64_t capacity);

  // The bytes a request of `size` occupies: rounded up to kAlignment, at least kAlignment.
  static uint64_t BlockSize(uint64_t size);

  // Offset of a free range of BlockSize(size) bytes (best fit, lowest offset among equals), or
  // nullopt if no free block is large enough.
  std::optional<uint64_t> Allocate(uint64_t size);
  // Returns the range Allocate(size) gave at `offset`, merging it with free neighbours.
  // REQUIRES: (offset, size) came from Allocate and has not been freed since.
  void Free(uint64_t offset, uint64_t size);

  uint64_t capacity() const { return capacity_; }
  uint64_t used_bytes() const { return capacity_ - free_bytes_; }
  uint64_t free_bytes() const { return free_bytes_; }
  uint64_t free_blocks() const { return by_offset_.size(); }
  uint64_t largest_free_block() const;
  // 1 - largest_free_block / free_bytes; 0 when nothing is free.
  double fragmentation() const;

 private:
  void InsertFree(uint64_t offset, uint64_t size);
  void EraseFree(absl::btree_map<uint64_t, uint64_t>::iterator it);

  uint64_t capacity_;
  uint64_t free_bytes_;
  absl::btree_map<uint64_t, uint64_t> by_offset_;           // offset -> size
  absl::btree_set<std::pair<uint64_t, uint64_t>> by_size_;  // (size, offset)
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_ALLOCATOR_H_
