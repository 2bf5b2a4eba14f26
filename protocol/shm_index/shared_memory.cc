#include "protocol/shm_index/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma::shm {

absl::StatusOr<SharedMemory> SharedMemory::Create(const char* name, size_t bytes, unsigned int seals) {
  if (bytes == 0) return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(name, ": size must be > 0"));
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return ErrnoError("memfd_create", name, errno);
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) return ErrnoError("ftruncate", name, errno);
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap", name, errno);
  SharedMemory region(std::move(fd), static_cast<uint8_t*>(base), bytes);
  if (seals != 0 && ::fcntl(region.fd(), F_ADD_SEALS, seals) != 0) return ErrnoError("fcntl(F_ADD_SEALS)", name, errno);
  return region;
}

absl::StatusOr<SharedMemory> SharedMemory::Map(UniqueFd fd, size_t bytes, bool writable) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("fstat", "shared region", errno);
  if (bytes == 0 || static_cast<uint64_t>(st.st_size) != bytes) {
    return MakeError(ErrorCode::kProtocolError,
                     absl::StrCat("shared region: announced ", bytes, " bytes, the file has ", st.st_size));
  }
  const int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  void* base = ::mmap(nullptr, bytes, prot, MAP_SHARED, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap", "shared region", errno);
  return SharedMemory(std::move(fd), static_cast<uint8_t*>(base), bytes);
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : fd_(std::move(other.fd_)), base_(std::exchange(other.base_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, size_);
    fd_ = std::move(other.fd_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() {
  if (base_ != nullptr) ::munmap(base_, size_);
}

}  // namespace rplasma::shm
