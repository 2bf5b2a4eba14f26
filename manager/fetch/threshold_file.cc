#include "manager/fetch/threshold_file.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "manager/transport/transport.h"
#include "protocol/base/node_id.h"
#include "protocol/base/status.h"

namespace rplasma::fetch {
namespace {

absl::Status Invalid(absl::string_view message) { return MakeError(ErrorCode::kInvalidArgument, message); }

bool IsInformational(absl::string_view keyword) {
  return keyword == "fit" || keyword == "sample" || keyword == "note" || keyword == "tuner";
}

absl::StatusOr<uint64_t> ParseThreshold(absl::string_view text) {
  ASSIGN_OR_RETURN(uint64_t bytes, ParseByteSize(text));
  if (bytes > transport::kMaxCallBytes) {
    return Invalid(
        absl::StrCat("threshold ", text, " exceeds the largest Call (", transport::kMaxCallBytes, " bytes)"));
  }
  return bytes;
}

}  // namespace

absl::string_view NodeNameOfId(absl::string_view node_id) {
  constexpr size_t kSuffix = 8;  // hex digits after the final '.'
  if (node_id.size() < kSuffix + 2 || node_id[node_id.size() - kSuffix - 1] != '.') return node_id;
  for (char c : node_id.substr(node_id.size() - kSuffix)) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return node_id;
  }
  return node_id.substr(0, node_id.size() - kSuffix - 1);
}

uint64_t ThresholdTable::For(const std::string& node_id) const {
  if (auto it = per_peer.find(node_id); it != per_peer.end()) return it->second;
  const absl::string_view name = NodeNameOfId(node_id);
  if (name.size() != node_id.size()) {
    if (auto it = per_peer.find(std::string(name)); it != per_peer.end()) return it->second;
  }
  return default_bytes;
}

absl::StatusOr<ThresholdTable> ParseThresholdFile(absl::string_view contents) {
  ThresholdTable table;
  bool have_default = false;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> words = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty() || IsInformational(words[0])) continue;
    auto error = [&](absl::string_view what) {
      return Invalid(absl::StrCat("threshold file line ", line_number, ": ", what));
    };
    if (words[0] == "default") {
      if (words.size() != 2) return error("expected 'default <bytes>'");
      if (have_default) return error("a second 'default' line");
      absl::StatusOr<uint64_t> bytes = ParseThreshold(words[1]);
      if (!bytes.ok()) return error(bytes.status().message());
      table.default_bytes = *bytes;
      have_default = true;
    } else if (words[0] == "peer") {
      if (words.size() != 3) return error("expected 'peer <node_name> <bytes>'");
      if (!IsValidNodeId(words[1])) return error(absl::StrCat("invalid node name '", words[1], "'"));
      absl::StatusOr<uint64_t> bytes = ParseThreshold(words[2]);
      if (!bytes.ok()) return error(bytes.status().message());
      if (!table.per_peer.emplace(std::string(words[1]), *bytes).second) {
        return error(absl::StrCat("peer '", words[1], "' listed twice"));
      }
    } else {
      return error(absl::StrCat("unknown keyword '", words[0], "'"));
    }
  }
  if (!have_default) return Invalid("threshold file: no 'default <bytes>' line");
  return table;
}

absl::StatusOr<ThresholdSetting> ParseThresholdSetting(absl::string_view value, uint64_t auto_start_bytes) {
  ThresholdSetting setting;
  if (value == "auto") {
    setting.mode = ThresholdSetting::Mode::kAuto;
    setting.table.default_bytes = auto_start_bytes;
    return setting;
  }
  if (!value.empty() && absl::ascii_isdigit(static_cast<unsigned char>(value[0]))) {
    absl::StatusOr<uint64_t> bytes = ParseThreshold(value);
    if (bytes.ok()) {
      setting.mode = ThresholdSetting::Mode::kFixed;
      setting.table.default_bytes = *bytes;
      return setting;
    }
    if (ParseByteSize(value).ok()) return bytes.status();  // a size, but too large
  }
  // Only a regular file, and only so much of it: a device (/dev/zero) or a FIFO would never end.
  std::error_code error;
  if (!std::filesystem::is_regular_file(std::string(value), error)) {
    return Invalid(absl::StrCat("--pin-threshold: '", value, "' is not a size, 'auto' or a readable regular file"));
  }
  std::ifstream file{std::string(value), std::ios::binary};
  if (!file) return Invalid(absl::StrCat("--pin-threshold: '", value, "' is not a size, 'auto' or a readable file"));
  std::string contents(kMaxThresholdFileBytes + 1, '\0');
  file.read(contents.data(), static_cast<std::streamsize>(contents.size()));
  contents.resize(static_cast<size_t>(file.gcount()));
  if (contents.size() > kMaxThresholdFileBytes) {
    return Invalid(absl::StrCat(value, ": larger than ", kMaxThresholdFileBytes, " bytes, not a threshold file"));
  }
  absl::StatusOr<ThresholdTable> table = ParseThresholdFile(contents);
  if (!table.ok()) return Invalid(absl::StrCat(value, ": ", table.status().message()));
  setting.mode = ThresholdSetting::Mode::kFile;
  setting.table = *std::move(table);
  return setting;
}

}  // namespace rplasma::fetch
