#include "protocol/base/byte_size.h"

#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "protocol/base/status.h"

namespace rplasma {
namespace {

absl::Status BadSize(absl::string_view text, absl::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("size '", text, "': ", why));
}

// Digits after the decimal point that are honoured; more would overflow the exact arithmetic.
constexpr size_t kMaxFractionDigits = 9;

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  constexpr absl::string_view kExpected = "expected e.g. 4096, 64K, 1.5G (binary units K, M, G, T, P, E)";
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t end = 0;
  while (end < s.size() && (absl::ascii_isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) ++end;
  const absl::string_view number = s.substr(0, end);
  const std::string unit = absl::AsciiStrToLower(absl::StripLeadingAsciiWhitespace(s.substr(end)));

  int shift = 0;
  if (!unit.empty() && unit != "b") {
    static constexpr char kLetters[] = "kmgtpe";
    const char* letter = std::strchr(kLetters, unit[0]);
    const absl::string_view rest = absl::string_view(unit).substr(1);
    if (letter == nullptr || !(rest.empty() || rest == "b" || rest == "ib")) return BadSize(text, kExpected);
    shift = 10 * static_cast<int>(letter - kLetters + 1);
  }

  // Exact decimal arithmetic: bytes = (whole * 10^n + fraction) * 2^shift / 10^n.
  const size_t dot = number.find('.');
  const absl::string_view whole_text = number.substr(0, dot);
  const absl::string_view fraction_text = dot == absl::string_view::npos ? "" : number.substr(dot + 1);
  if (whole_text.empty() && fraction_text.empty()) return BadSize(text, kExpected);
  if (fraction_text.find('.') != absl::string_view::npos || fraction_text.size() > kMaxFractionDigits) {
    return BadSize(text, kExpected);
  }
  uint64_t whole = 0;
  uint64_t fraction = 0;
  if (!whole_text.empty() && !absl::SimpleAtoi(whole_text, &whole)) return BadSize(text, "too large");
  if (!fraction_text.empty() && !absl::SimpleAtoi(fraction_text, &fraction)) return BadSize(text, kExpected);
  unsigned __int128 scale = 1;
  for (size_t i = 0; i < fraction_text.size(); ++i) scale *= 10;
  const unsigned __int128 scaled = static_cast<unsigned __int128>(whole) * scale + fraction;
  const unsigned __int128 kMax128 = ~static_cast<unsigned __int128>(0);
  if (scaled > (kMax128 >> shift)) return BadSize(text, "too large");
  const unsigned __int128 product = scaled << shift;
  if (product % scale != 0) return BadSize(text, "not a whole number of bytes");
  const unsigned __int128 bytes = product / scale;
  if (bytes > UINT64_MAX) return BadSize(text, "too large");
  return static_cast<uint64_t>(bytes);
}

std::string FormatByteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrCat(bytes, kUnits[unit]);
}

}  // namespace rplasma
