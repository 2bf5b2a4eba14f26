// StoreOptions: everything rplasma-store is configured with (the flags of store_main.cc map onto
// these fields), plus ParseHugepages for --hugepages. Sizes are parsed by ParseByteSize
// (protocol/base/byte_size.h, included here for the store's callers).
#ifndef RPLASMA_STORE_STORE_OPTIONS_H_
#define RPLASMA_STORE_STORE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "protocol/base/byte_size.h"
#include "protocol/frame.h"
#include "protocol/metrics/metrics_exporter.h"
#include "store/arena.h"

namespace rplasma {

struct StoreOptions {
  // The Unix socket to listen on (rplasma-store's default: DefaultStoreSocket()). Its parent
  // directory is created 0700 if missing; a parent that others can enter is accepted with a warning.
  std::string socket_path;
  // Arena bytes (rounded up to the page size). Required, > 0.
  uint64_t memory_bytes = 0;
  // Huge pages for the arena (a sealed hugetlb memfd) instead of normal pages. Off by default.
  Hugepages hugepages;
  // Reported to clients in ConnectReply and used in logs.
  std::string name = "rplasma-store";
  // Largest request frame accepted (the header is checked before any allocation).
  uint32_t max_frame_bytes = kDefaultMaxFrameBytes;
  // A client whose queued replies/events exceed this is disconnected (a subscriber that fell
  // too far behind, or a client that stopped reading).
  uint64_t max_output_bytes = 64ull << 20;
  // While a client has more than this queued, the store stops reading its requests.
  uint64_t pause_input_bytes = 1ull << 20;
  // A client that started a request frame and has not completed it within this is disconnected
  // (half a frame, then a stall).
  absl::Duration partial_frame_timeout = absl::Seconds(5);
  // Cap on the bytes of incomplete frames buffered across all clients; past it, the client
  // buffering the most is disconnected. At least max_frame_bytes.
  uint64_t max_partial_frame_bytes = 64ull << 20;
  // Handle SIGTERM/SIGINT (blocked and read through a signalfd) as a clean shutdown.
  bool handle_signals = true;
  // The shared-memory index of sealed objects that lets clients get and release with no message
  // (docs/STORE.md): its entries (a power of two >= 16; 0 turns gets with no IPC off; unset: one
  // per 4 KiB of arena, SharedIndex::DefaultEntries), and each client's reference slots (a power
  // of two >= 16: references a client can hold that way at once; beyond them it uses the socket).
  std::optional<uint64_t> index_entries;
  uint64_t slots_per_client = 4096;
  // Prometheus metrics (--metrics-port, --metrics-address, --metrics-file...; docs/METRICS.md). Off by default.
  MetricsExportOptions metrics;

  absl::Status Validate() const;
};

// The --hugepages flag: "" or "off" (normal pages), "on" (the system's default huge page size),
// a page size ("2M", "1G": a power of two; whether the kernel offers it is checked at start), or,
// kept for compatibility, a hugetlbfs mount directory (an absolute path) whose page size is used:
// nothing is created in it. kInvalidArgument for anything else, or a path that is not a hugetlbfs
// mount (this last case reads the filesystem: statfs).
absl::StatusOr<Hugepages> ParseHugepages(absl::string_view text);

}  // namespace rplasma

#endif  // RPLASMA_STORE_STORE_OPTIONS_H_
