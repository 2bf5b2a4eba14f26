#include "store/allocator.h"

#include <iterator>

#include "protocol/base/logging.h"

namespace rplasma {

Allocator::Allocator(uint64_t capacity) : capacity_(capacity / kAlignment * kAlignment), free_bytes_(capacity_) {
  if (capacity_ > 0) InsertFree(0, capacity_);
}

uint64_t Allocator::BlockSize(uint64_t size) {
  if (size == 0) return kAlignment;
  return (size + kAlignment - 1) / kAlignment * kAlignment;
}

std::optional<uint64_t> Allocator::Allocate(uint64_t size) {
  if (size > capacity_) return std::nullopt;
  uint64_t need = BlockSize(size);
  auto fit = by_size_.lower_bound({need, 0});
  if (fit == by_size_.end()) return std::nullopt;
  auto [block_size, offset] = *fit;
  EraseFree(by_offset_.find(offset));
  if (block_size > need) InsertFree(offset + need, block_size - need);
  free_bytes_ -= need;
  return offset;
}

void Allocator::Free(uint64_t offset, uint64_t size) {
  uint64_t length = BlockSize(size);
  CHECK(offset % kAlignment == 0 && offset + length <= capacity_) << "Free(" << offset << ", " << size << ")";
  uint64_t start = offset;
  uint64_t end = offset + length;
  auto next = by_offset_.lower_bound(offset);
  // Double frees and overlapping frees are bugs in the caller: the neighbours must not overlap.
  CHECK(next == by_offset_.end() || next->first >= end) << "Free overlaps a free block at " << next->first;
  bool has_prev = next != by_offset_.begin();
  uint64_t prev_offset = has_prev ? std::prev(next)->first : 0;
  if (next != by_offset_.end() && next->first == end) {
    end += next->second;
    EraseFree(next);  // invalidates iterators: find the predecessor again below
  }
  if (has_prev) {
    auto prev = by_offset_.find(prev_offset);
    CHECK(prev->first + prev->second <= start) << "Free overlaps a free block at " << prev->first;
    if (prev->first + prev->second == start) {
      start = prev->first;
      EraseFree(prev);
    }
  }
  free_bytes_ += length;
  InsertFree(start, end - start);
}

void Allocator::InsertFree(uint64_t offset, uint64_t size) {
  by_offset_.emplace(offset, size);
  by_size_.emplace(size, offset);
}

void Allocator::EraseFree(absl::btree_map<uint64_t, uint64_t>::iterator it) {
  by_size_.erase({it->second, it->first});
  by_offset_.erase(it);
}

uint64_t Allocator::largest_free_block() const { return by_size_.empty() ? 0 : std::prev(by_size_.end())->first; }

double Allocator::fragmentation() const {
  if (free_bytes_ == 0) return 0;
  return 1.0 - static_cast<double>(largest_free_block()) / static_cast<double>(free_bytes_);
}

}  // namespace rplasma
