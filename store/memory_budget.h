// MemoryBudget: whether the machine (and the store's cgroup) can back an arena, checked before
// anything is reserved, so an oversized --memory is refused at start instead of waking the OOM
// killer, which would kill other processes on the host.
//
// The pure part reads the texts of /proc/meminfo and of the cgroup v2 files; the reader gathers
// them. Usable memory: MemAvailable, or less if the cgroup's memory.max - memory.current is
// smaller, minus a reserve (an eighth of it, at most 256 MiB) left to the rest of the host. With
// hugepages: HugePages_Free x Hugepagesize (a dedicated pool, no reserve).
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
};

// Bytes an arena may take. kInternal if meminfo lacks the needed lines.
absl::StatusOr<uint64_t> UsableArenaBytes(const MemoryTexts& texts, bool hugepages);
// OK if `bytes` fits; else kOutOfMemory naming what was asked and what is usable.
absl::Status CheckArenaFits(uint64_t bytes, bool hugepages, const MemoryTexts& texts);
// Reads /proc/meminfo and, for a cgroup v2 found in /proc/self/cgroup, its memory files.
absl::StatusOr<MemoryTexts> ReadMemoryTexts();

}  // namespace rplasma

#endif  // RPLASMA_STORE_MEMORY_BUDGET_H_
