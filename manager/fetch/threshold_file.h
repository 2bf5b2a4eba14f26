// The --pin-threshold setting and the threshold FILE the MPI tuner writes.
//
// --pin-threshold takes: BYTES (e.g. 65536, 64KiB, 1MiB), `auto`, or the path of a FILE:
//
//   # comments run to the end of the line; blank lines are ignored
//   default 262144            # objects of at most this many bytes use Get (bytes inline)
//   peer rank1 131072         # a per-peer override, by the peer's --node_name
//   peer rank2.3fa9c2d1 65536 # ... or by one node id exactly (valid until that manager restarts)
//   fit ...                   # informational lines (fit, sample, note, tuner) are ignored
//
// A manager's node id is `<node_name>.<8 hex digits>`, new at every start (manager.cc), so peer
// lines written by the tuner name nodes: they keep matching after restarts. The threshold for a
// peer is its exact node id's line if there is one, else its node name's, else `default`.
//
// Sizes are ParseByteSize's (protocol/base/byte_size.h: 65536, 64K, 1.5M, ...). Exactly one
// `default` line; a peer at most once; every threshold at most transport::kMaxCallBytes. Any
// other line is an error naming its line number: a garbled file is refused, never half-used.
#ifndef RPLASMA_MANAGER_FETCH_THRESHOLD_FILE_H_
#define RPLASMA_MANAGER_FETCH_THRESHOLD_FILE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "protocol/base/byte_size.h"  // ParseByteSize, the size syntax of the file and the flag

namespace rplasma::fetch {

// "rank1.3fa9c2d1" -> "rank1": the node name a node id was made from (the id minus a final "."
// and 8 hex digits). An id without that suffix is its own name.
absl::string_view NodeNameOfId(absl::string_view node_id);

struct ThresholdTable {
  uint64_t default_bytes = 0;
  std::map<std::string, uint64_t> per_peer;  // node name (or one exact node id) -> bytes

  // The threshold for objects from `node_id`: its exact entry, else its node name's, else default.
  uint64_t For(const std::string& node_id) const;
};

struct ThresholdSetting {
  enum class Mode { kFixed, kAuto, kFile };
  Mode mode = Mode::kFixed;
  ThresholdTable table;  // kFixed: default only; kFile: the file's contents; kAuto: the start value
};

// The largest threshold file read (a tuner's file is a line per peer: about 60 bytes each).
inline constexpr size_t kMaxThresholdFileBytes = 4u << 20;

// The contents of a threshold file.
absl::StatusOr<ThresholdTable> ParseThresholdFile(absl::string_view contents);
// The value of --pin-threshold (reads the file when it is neither BYTES nor `auto`: a regular file
// of at most kMaxThresholdFileBytes; a device, a FIFO or a larger file is refused, never read on).
absl::StatusOr<ThresholdSetting> ParseThresholdSetting(absl::string_view value, uint64_t auto_start_bytes);

}  // namespace rplasma::fetch

#endif  // RPLASMA_MANAGER_FETCH_THRESHOLD_FILE_H_
