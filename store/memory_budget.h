// MemoryBudget: whether the machine (and the store's cgroup) can back an arena, checked before
// anything is reserved, so an oversized --memory is refused at start instead of waking the OOM
// killer, which would kill other processes on the host.
//
// The pure part reads the texts of /proc/meminfo and of the cgroup v2 files; the reader gathers
// them. Usable memory: MemAvailable, or less if the cgroup's memory.max - memory.current is
// smaller, minus a reserve (an eighth of it, at most 256 MiB) left to the rest of the host. With
// huge pages of a size: that size's free pages not already reserved by a mapping (free - resv) x
// the size (a dedicated pool, no reserve).
#ifndef RPLASMA_STORE_MEMORY_BUDGET_H_
#define RPLASMA_STORE_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rplasma {

struct MemoryTexts {
  std::string meminfo;         // /proc/meminfo
  std::string cgroup_max;      // the store's cgroup memory.max ("max" or bytes); empty: none
  std::string cgroup_current;  // its memory.current; empty: none
  // The pool of the requested huge page size: /sys/kernel/mm/hugepages/hugepages-<kB>kB/
  // free_hugepages and resv_hugepages. Empty: not read; meminfo's HugePages_Free and
  // HugePages_Rsvd then count, if the size is its Hugepagesize.
  std::string free_hugepages;
  std::string resv_hugepages;
};

// Bytes an arena may take; `hugepage_size` 0 means normal pages, else the huge page size.
// kInternal if the texts lack the needed lines.
absl::StatusOr<uint64_t> UsableArenaBytes(const MemoryTexts& texts, uint64_t hugepage_size);
// OK if `bytes` fits; else kOutOfMemory naming what was asked and what is usable.
absl::Status CheckArenaFits(uint64_t bytes, uint64_t hugepage_size, const MemoryTexts& texts);
// Reads /proc/meminfo, for a cgroup v2 found in /proc/self/cgroup its memory files, and with a
// `hugepage_size` that size's pool (kInvalidArgument if the kernel offers no such size).
absl::StatusOr<MemoryTexts> ReadMemoryTexts(uint64_t hugepage_size = 0);
// The system's default huge page size (Hugepagesize in /proc/meminfo).
absl::StatusOr<uint64_t> ReadDefaultHugepageSize();

}  // namespace rplasma

#endif  // RPLASMA_STORE_MEMORY_BUDGET_H_
