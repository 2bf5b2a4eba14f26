#include "bench-mpi/common/size_units.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include "protocol/base/byte_size.h"
#include "protocol/base/status.h"

namespace rplasma::bench {

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  ASSIGN_OR_RETURN(uint64_t bytes, ParseByteSize(text));
  if (bytes == 0) return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("size '%s' is zero", text));
  return bytes;
}

absl::StatusOr<std::vector<uint64_t>> ParseSizeList(absl::string_view text) {
  std::vector<uint64_t> sizes;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(uint64_t size, ParseSize(part));
    sizes.push_back(size);
  }
  if (sizes.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("size list '%s' is empty", text));
  }
  return sizes;
}

}  // namespace rplasma::bench
