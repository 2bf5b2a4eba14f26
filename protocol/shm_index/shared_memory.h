// SharedMemory: a memfd and one mapping of it, closed and unmapped together — the regions the
// store shares with its clients beside the arena (the object index, each client's reference slots).
//
// The store creates a region (Create: a zero-filled memfd mapped read-write, then sealed) and
// passes its fd on the socket; a client maps what it received (Map), read-only or read-write,
// checking the size the store announced against the file's own before it touches a byte.
//
// Thread-safety: immutable after construction; bytes() may be read from any thread.
#ifndef RPLASMA_PROTOCOL_SHM_INDEX_SHARED_MEMORY_H_
#define RPLASMA_PROTOCOL_SHM_INDEX_SHARED_MEMORY_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "protocol/base/unique_fd.h"

namespace rplasma::shm {

class SharedMemory {
 public:
  // A memfd named `name` of `bytes` (> 0) zero bytes, mapped read-write, then sealed with `seals`
  // (F_SEAL_* bits; F_SEAL_FUTURE_WRITE keeps this mapping writable and refuses every later
  // writable one, in this process or another).
  static absl::StatusOr<SharedMemory> Create(const char* name, size_t bytes, unsigned int seals);
  // Maps `fd` (taken over), which must be exactly `bytes` long: kProtocolError otherwise. Shared,
  // read-only unless `writable`.
  static absl::StatusOr<SharedMemory> Map(UniqueFd fd, size_t bytes, bool writable);

  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  int fd() const { return fd_.get(); }
  absl::Span<uint8_t> bytes() const { return {base_, size_}; }

 private:
  SharedMemory(UniqueFd fd, uint8_t* base, size_t size) : fd_(std::move(fd)), base_(base), size_(size) {}

  UniqueFd fd_;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace rplasma::shm

#endif  // RPLASMA_PROTOCOL_SHM_INDEX_SHARED_MEMORY_H_
