// The --rdma-threshold setting and the threshold FILE the MPI tuner writes.
//
// --rdma-threshold takes: BYTES (e.g. 65536, 64KiB, 1MiB), `auto`, or the path of a FILE:
//
//   # comments run to the end of the line; blank lines are ignored
//   default 262144            # objects of at most this many bytes use Get (bytes inline)
//   peer node-b.1234 131072   # a per-peer override (node id as in the directory)
//   fit ...                   # informational lines (fit, sample, note, tuner) are ignored
//
// Sizes are decimal with an optional unit (K/KiB, M/MiB, G/GiB, powers of 1024). Exactly one
// `default` line; a peer at most once; every threshold at most transport::kMaxCallBytes. Any
// other line is an error naming its line number: a garbled file is refused, never half-used.
#ifndef RPLASMA_MANAGER_CORE_THRESHOLD_FILE_H_
#define RPLASMA_MANAGER_CORE_THRESHOLD_FILE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma::core {

struct ThresholdTable {
  uint64_t default_bytes = 0;
  std::map<std::string, uint64_t> per_peer;  // node id -> bytes
};

struct ThresholdSetting {
  enum class Mode { kFixed, kAuto, kFile };
  Mode mode = Mode::kFixed;
  ThresholdTable table;  // kFixed: default only; kFile: the file's contents; kAuto: the start value
};

// "64KiB" -> 65536. kInvalidArgument for anything else (negative, overflow, unknown unit).
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);
// The contents of a threshold file.
absl::StatusOr<ThresholdTable> ParseThresholdFile(absl::string_view contents);
// The value of --rdma-threshold (reads the file when it is neither BYTES nor `auto`).
absl::StatusOr<ThresholdSetting> ParseThresholdSetting(absl::string_view value, uint64_t auto_start_bytes);

}  // namespace rplasma::core

#endif  // RPLASMA_MANAGER_CORE_THRESHOLD_FILE_H_
