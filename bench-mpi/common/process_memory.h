// Memory use of a process, from /proc/<pid>/status, for the store's per-object overhead.
//
// The store's arena is a memfd (shmem) mapping: its pages count in RssShmem, never in RssAnon.
// RssAnon is therefore the store's own heap (object table, allocator, client state): the honest
// measure of per-object bookkeeping, independent of how much of the arena the objects touched.
#ifndef RPLASMA_BENCH_MPI_COMMON_PROCESS_MEMORY_H_
#define RPLASMA_BENCH_MPI_COMMON_PROCESS_MEMORY_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma::bench {

struct ProcessMemory {
  uint64_t vm_rss = 0;     // resident, all kinds
  uint64_t rss_anon = 0;   // resident private anonymous memory (heap, stacks)
  uint64_t rss_file = 0;   // resident file-backed pages (binary, libraries)
  uint64_t rss_shmem = 0;  // resident shared memory (the arena)
};

// Parses the text of a /proc/<pid>/status file (fields are "kB"). kInvalidArgument if VmRSS or
// RssAnon is missing.
absl::StatusOr<ProcessMemory> ParseProcStatus(absl::string_view text);
// Reads /proc/<pid>/status.
absl::StatusOr<ProcessMemory> ReadProcessMemory(pid_t pid);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_PROCESS_MEMORY_H_
