// Byte sizes as operators type them: the one syntax every rplasma binary and the CLI accept
// (--memory 1.5G, --max-output-bytes 64M, `rplasma evict 1.5M`, --sizes 4K,1M).
//
//   "4096"  "64K"  "64k"  "64KB"  "64KiB"  "1.5G"  "1.5 GiB"  "2T"  " 12 B "
//
// Units are binary (K = 1024) from K to E, case-insensitive, optionally followed by "B" or "iB"
// and optionally separated from the number by spaces. A decimal point is accepted when the product
// is a whole number of bytes ("1.5K" = 1536; "0.3" is not). Zero is a size; callers that need a
// positive one say so. kInvalidArgument, quoting the text, for anything else (a sign, an unknown
// unit, more than 2^64 - 1 bytes). Callers prefix the flag's name.
//
// Pure; thread-safe.
#ifndef RPLASMA_PROTOCOL_BASE_BYTE_SIZE_H_
#define RPLASMA_PROTOCOL_BASE_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma {

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);
// The exact text of `bytes` in the largest binary unit that divides it, which ParseByteSize reads
// back: 16 -> "16B", 4096 -> "4KiB", 1536 -> "1536B", 64 << 20 -> "64MiB" (up to EiB).
std::string FormatByteSize(uint64_t bytes);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_BASE_BYTE_SIZE_H_
