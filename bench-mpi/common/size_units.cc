#include "bench-mpi/common/size_units.h"

#include <cctype>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "protocol/base/status.h"

namespace rplasma::bench {

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  uint64_t value = 0;
  if (digits == 0 || !absl::SimpleAtoi(s.substr(0, digits), &value)) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("size '%s': expected a number", text));
  }
  std::string suffix = absl::AsciiStrToLower(s.substr(digits));
  int shift = -1;
  if (suffix.empty() || suffix == "b") shift = 0;
  if (suffix == "k" || suffix == "kb" || suffix == "kib") shift = 10;
  if (suffix == "m" || suffix == "mb" || suffix == "mib") shift = 20;
  if (suffix == "g" || suffix == "gb" || suffix == "gib") shift = 30;
  if (shift < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrFormat("size '%s': unknown unit '%s' (use B, K, M or G)", text, suffix));
  }
  if (value == 0) return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("size '%s' is zero", text));
  if (value > (std::numeric_limits<uint64_t>::max() >> shift)) {
    return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("size '%s' overflows 64 bits", text));
  }
  return value << shift;
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

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrFormat("%d%s", bytes, kUnits[unit]);
}

}  // namespace rplasma::bench
