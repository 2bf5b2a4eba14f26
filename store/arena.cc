#include "store/arena.h"

#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"
#include "store/memory_budget.h"

namespace rplasma {
namespace {

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

// `huge_page`: 0 for normal pages, else the huge page size (a power of two).
absl::StatusOr<UniqueFd> OpenMemfd(uint64_t size, uint64_t huge_page) {
  unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  if (huge_page != 0) flags |= MFD_HUGETLB | (static_cast<unsigned int>(std::countr_zero(huge_page)) << MFD_HUGE_SHIFT);
  const std::string what =
      huge_page == 0 ? std::string("arena memfd") : absl::StrCat("arena memfd of ", huge_page, "-byte huge pages");
  UniqueFd fd(::memfd_create("rplasma-arena", flags));
  if (!fd) {
    absl::Status error = ErrnoError("memfd_create", what, errno);
    if (huge_page == 0 || errno != EINVAL) return error;
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat(error.message(), " (a sealable hugetlb memfd needs Linux >= 4.16)"));
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) return ErrnoError("ftruncate", what, errno);
  // Reserve every page now: a store that cannot hold its arena fails at start, not at first write.
  if (::fallocate(fd.get(), 0, 0, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    absl::Status error = ErrnoError("fallocate", absl::StrCat(what, ", ", size, " bytes"), err);
    if (huge_page == 0 || err != ENOSPC) return error;
    return MakeError(ErrorCode::kOutOfMemory, absl::StrCat(error.message(), " (not enough free huge pages)"));
  }
  // Clients receive this fd: none of them may resize the arena under the store.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return ErrnoError("fcntl(F_ADD_SEALS)", what, errno);
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Arena>> Arena::Create(uint64_t size, Hugepages hugepages) {
  if (size == 0) return MakeError(ErrorCode::kInvalidArgument, "arena: size must be > 0");
  uint64_t huge_page = 0;
  if (hugepages.enabled) {
    huge_page = hugepages.page_size;
    if (huge_page == 0) {
      ASSIGN_OR_RETURN(huge_page, ReadDefaultHugepageSize());
    }
    if (!std::has_single_bit(huge_page)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       absl::StrCat("--hugepages: page size ", huge_page, " is not a power of two"));
    }
  }
  const uint64_t page = huge_page != 0 ? huge_page : static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  size = RoundUp(size, page);
  // Before anything is reserved: an arena the host cannot back would wake the OOM killer.
  ASSIGN_OR_RETURN(MemoryTexts texts, ReadMemoryTexts(huge_page));
  RETURN_IF_ERROR(CheckArenaFits(size, huge_page, texts));
  ASSIGN_OR_RETURN(UniqueFd fd, OpenMemfd(size, huge_page));
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap", absl::StrCat("arena of ", size, " bytes"), errno);
  return std::unique_ptr<Arena>(new Arena(std::move(fd), static_cast<uint8_t*>(base), size, page));
}

Arena::~Arena() { ::munmap(base_, size_); }

}  // namespace rplasma
