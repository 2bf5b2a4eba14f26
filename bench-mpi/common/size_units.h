// Object sizes as people type and read them: "16", "4K", "64KiB", "1M", "256MiB", "1G".
//
// Parsing is ParseByteSize's (protocol/base/byte_size.h: binary units, decimals such as 1.5M)
// and also rejects zero: a benchmark size or count of 0 measures nothing. Errors are
// kInvalidArgument and quote the offending text. Sizes are printed by FormatByteSize ("4KiB").
#ifndef RPLASMA_BENCH_MPI_COMMON_SIZE_UNITS_H_
#define RPLASMA_BENCH_MPI_COMMON_SIZE_UNITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "protocol/base/byte_size.h"

namespace rplasma::bench {

// "4K" -> 4096, "1.5M" -> 1572864; "0" is an error.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);
// "16,4K,1M" -> {16, 4096, 1048576}, in the order given.
absl::StatusOr<std::vector<uint64_t>> ParseSizeList(absl::string_view text);

}  // namespace rplasma::bench

#endif  // RPLASMA_BENCH_MPI_COMMON_SIZE_UNITS_H_
