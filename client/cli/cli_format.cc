#include "client/cli/cli_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "protocol/base/status.h"

namespace rplasma::cli {
namespace {

constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

}  // namespace

std::string FormatSize(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  // Rounding may print "1024.0 KiB"; move up a unit instead.
  if (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

absl::StatusOr<ObjectID> ParseObjectId(absl::string_view text) {
  absl::StatusOr<ObjectID> id = ObjectID::FromHex(text);
  if (!id.ok()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat("not an object id: '", text, "' (expected 40 hex digits, or --label TEXT)"));
  }
  return id;
}

std::string IndentJson(absl::string_view json) {
  std::string out;
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  auto newline = [&] {
    out.push_back('\n');
    out.append(2 * static_cast<size_t>(std::max(depth, 0)), ' ');
  };
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out.push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        out.push_back(c);
        break;
      case '{':
      case '[': {
        out.push_back(c);
        size_t next = json.find_first_not_of(" \t\r\n", i + 1);
        if (next != absl::string_view::npos && (json[next] == '}' || json[next] == ']')) {
          out.push_back(json[next]);  // {} or [] stays whole
          i = next;
          break;
        }
        ++depth;
        newline();
        break;
      }
      case '}':
      case ']':
        --depth;
        newline();
        out.push_back(c);
        break;
      case ',':
        out.push_back(c);
        newline();
        break;
      case ':': out.append(": "); break;
      case ' ':
      case '\t':
      case '\r':
      case '\n': break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace rplasma::cli
