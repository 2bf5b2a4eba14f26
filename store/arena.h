// Arena: the one shared-memory region that holds every object's bytes.
//
// Default: a memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING) of the requested size, allocated up front
// (fallocate), sealed with F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL so no client holding the fd
// can resize it (ftruncate fails with EPERM), and mapped with MAP_POPULATE so every page is
// resident before the first object is written. With a hugepages directory: a file on hugetlbfs,
// unlinked right after open (hugetlbfs does not support seals; its size is fixed by the mapping).
//
// Before either is created, the size is checked against what the host (and the store's cgroup)
// can back (store/memory_budget.h): too large is kOutOfMemory, with nothing reserved.
//
// The fd is passed to each client once (SCM_RIGHTS); clients map it themselves.
// Thread-safety: immutable after Create; base() may be read from any thread.
#ifndef RPLASMA_STORE_ARENA_H_
#define RPLASMA_STORE_ARENA_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "protocol/base/unique_fd.h"

namespace rplasma {

class Arena {
 public:
  // `size` is rounded up to the page size (or the huge page size with `hugepages_dir`).
  static absl::StatusOr<std::unique_ptr<Arena>> Create(uint64_t size, const std::string& hugepages_dir = "");
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  int fd() const { return fd_.get(); }
  uint8_t* base() const { return base_; }
  uint64_t size() const { return size_; }

 private:
  Arena(UniqueFd fd, uint8_t* base, uint64_t size) : fd_(std::move(fd)), base_(base), size_(size) {}

  UniqueFd fd_;
  uint8_t* base_;
  uint64_t size_;
};

}  // namespace rplasma

#endif  // RPLASMA_STORE_ARENA_H_
