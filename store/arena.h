// Arena: the one shared-memory region that holds every object's bytes.
//
// A memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING, plus MFD_HUGETLB and the page size with huge pages)
// of the requested size, allocated up front (fallocate), sealed with F_SEAL_SHRINK | F_SEAL_GROW |
// F_SEAL_SEAL so no client holding the fd can resize it (ftruncate fails with EPERM), and mapped
// with MAP_POPULATE so every page is resident before the first object is written. The huge page
// arena is sealed the same way (a file opened on a hugetlbfs mount could not be, so none is used).
//
// Before it is created, the size is checked against what the host (and the store's cgroup), or
// the pool of free huge pages of the chosen size, can back (store/memory_budget.h): too large is
// kOutOfMemory, with nothing reserved.
//
// Not defended by the seals: a client may punch a hole (fallocate) into the arena, which zeroes
// bytes like any write would; with huge pages the next touch needs a page from the pool again
// (SIGBUS if it is empty by then).
//
// The fd is passed to each client once (SCM_RIGHTS); clients map it themselves.
// Thread-safety: immutable after Create; base() may be read from any thread.
#ifndef RPLASMA_STORE_ARENA_H_
#define RPLASMA_STORE_ARENA_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

#include "protocol/base/unique_fd.h"

namespace rplasma {

// Which pages back the arena (rplasma-store --hugepages; parsed by ParseHugepages).
struct Hugepages {
  bool enabled = false;
  // With `enabled`: the huge page size in bytes (a power of two the kernel offers, see
  // /sys/kernel/mm/hugepages); 0 means the system's default (Hugepagesize in /proc/meminfo).
  uint64_t page_size = 0;
};

class Arena {
 public:
  // `size` is rounded up to the page size (the huge page size with `hugepages`). kInvalidArgument
  // for a huge page size the kernel does not offer; kOutOfMemory if the host cannot back it.
  static absl::StatusOr<std::unique_ptr<Arena>> Create(uint64_t size, Hugepages hugepages = {});
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  int fd() const { return fd_.get(); }
  uint8_t* base() const { return base_; }
  uint64_t size() const { return size_; }
  // The size of the pages backing it (a huge page size with huge pages).
  uint64_t page_size() const { return page_size_; }

 private:
  Arena(UniqueFd fd, uint8_t* base, uint64_t size, uint64_t page_size)
      : fd_(std::move(fd)), base_(base), size_(size), page_size_(page_size) {}

  UniqueFd fd_;
  uint8_t* base_;
  uint64_t size_;
  uint64_t page_size_;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_ARENA_H_
