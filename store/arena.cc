#include "store/arena.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "protocol/base/status.h"
#include "store/memory_budget.h"

namespace rplasma {
namespace {

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

// Before anything is reserved: an arena the host cannot back would wake the OOM killer.
absl::Status CheckHostCanBack(uint64_t size, bool hugepages) {
  ASSIGN_OR_RETURN(MemoryTexts texts, ReadMemoryTexts());
  return CheckArenaFits(size, hugepages, texts);
}

absl::StatusOr<UniqueFd> OpenMemfd(uint64_t size) {
  UniqueFd fd(::memfd_create("rplasma-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return ErrnoError("memfd_create", "rplasma-arena", errno);
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) return ErrnoError("ftruncate", "arena memfd", errno);
  // Reserve every page now: a store that cannot hold its arena fails at start, not at first write.
  int rc = ::fallocate(fd.get(), 0, 0, static_cast<off_t>(size));
  if (rc != 0) return ErrnoError("fallocate", absl::StrCat("arena memfd of ", size, " bytes"), errno);
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return ErrnoError("fcntl(F_ADD_SEALS)", "arena memfd", errno);
  }
  return fd;
}

absl::StatusOr<UniqueFd> OpenHugetlbFile(const std::string& dir, uint64_t size) {
  std::string path = dir + "/rplasma-arena-XXXXXX";
  UniqueFd fd(::mkostemp(path.data(), O_CLOEXEC));
  if (!fd) return ErrnoError("mkostemp", path, errno);
  ::unlink(path.c_str());  // only the fd names it from now on
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) return ErrnoError("ftruncate", path, errno);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Arena>> Arena::Create(uint64_t size, const std::string& hugepages_dir) {
  if (size == 0) return MakeError(ErrorCode::kInvalidArgument, "arena: size must be > 0");
  UniqueFd fd;
  if (hugepages_dir.empty()) {
    size = RoundUp(size, static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
    RETURN_IF_ERROR(CheckHostCanBack(size, /*hugepages=*/false));
    ASSIGN_OR_RETURN(fd, OpenMemfd(size));
  } else {
    struct statfs fs{};
    if (::statfs(hugepages_dir.c_str(), &fs) != 0) return ErrnoError("statfs", hugepages_dir, errno);
    // Anything else would put the arena in a disk- or tmpfs-backed file, silently.
    if (static_cast<uint64_t>(fs.f_type) != HUGETLBFS_MAGIC) {
      return MakeError(ErrorCode::kInvalidArgument,
                       absl::StrCat("--hugepages ", hugepages_dir, ": not a hugetlbfs mount"));
    }
    size = RoundUp(size, static_cast<uint64_t>(fs.f_bsize));
    RETURN_IF_ERROR(CheckHostCanBack(size, /*hugepages=*/true));
    ASSIGN_OR_RETURN(fd, OpenHugetlbFile(hugepages_dir, size));
  }
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap", absl::StrCat("arena of ", size, " bytes"), errno);
  return std::unique_ptr<Arena>(new Arena(std::move(fd), static_cast<uint8_t*>(base), size));
}

Arena::~Arena() { ::munmap(base_, size_); }

}  // namespace rplasma
