// Fuzzes the --pin-threshold setting (manager/fetch/threshold_file.h): the threshold file the MPI
// tuner writes and anyone with write access to it may edit, read both from memory and through
// ParseThresholdSetting from a real file; and the byte sizes inside it.
//
// Invariants: a parsed table printed back as a file parses to the same table; reading the bytes
// from a file gives the same result as parsing them; every threshold is at most
// transport::kMaxCallBytes; a size prints back to digits that parse to it; a node id's name is a
// prefix of it.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "manager/fetch/threshold_file.h"
#include "manager/transport/transport.h"
#include "protocol/base/logging.h"

namespace rplasma::fetch {
namespace {

std::string Print(const ThresholdTable& table) {
  std::string out = absl::StrCat("default ", table.default_bytes, "\n");
  for (const auto& [peer, bytes] : table.per_peer) absl::StrAppend(&out, "peer ", peer, " ", bytes, "\n");
  return out;
}

bool SameTable(const ThresholdTable& a, const ThresholdTable& b) {
  return a.default_bytes == b.default_bytes && a.per_peer == b.per_peer;
}

// One scratch file for the whole run (the fuzzer is single-threaded).
const std::string& ScratchPath() {
  static const std::string path = [] {
    std::string p = "/tmp/rplasma-threshold-fuzz-XXXXXX";
    const int fd = mkstemp(p.data());
    CHECK(fd >= 0) << "mkstemp(" << p << ")";
    close(fd);
    return p;
  }();
  return path;
}

void CheckFile(absl::string_view contents) {
  absl::StatusOr<ThresholdTable> table = ParseThresholdFile(contents);
  {
    const int fd = open(ScratchPath().c_str(), O_WRONLY | O_TRUNC);
    CHECK(fd >= 0);
    CHECK(write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()));
    close(fd);
  }
  absl::StatusOr<ThresholdSetting> setting = ParseThresholdSetting(ScratchPath(), 65536);
  CHECK(setting.ok() == table.ok()) << setting.status() << " vs " << table.status();
  if (!table.ok()) return;
  CHECK(setting->mode == ThresholdSetting::Mode::kFile);
  CHECK(SameTable(setting->table, *table));

  CHECK(table->default_bytes <= transport::kMaxCallBytes);
  for (const auto& [peer, bytes] : table->per_peer) {
    CHECK(bytes <= transport::kMaxCallBytes);
    CHECK(table->For(peer) == bytes);
  }
  absl::StatusOr<ThresholdTable> again = ParseThresholdFile(Print(*table));
  CHECK(again.ok()) << again.status();
  CHECK(SameTable(*again, *table));
}

void CheckByteSize(absl::string_view text) {
  absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) return;
  absl::StatusOr<uint64_t> again = ParseByteSize(absl::StrCat(*bytes));
  CHECK(again.ok() && *again == *bytes) << text;
}

// A --pin-threshold value that names no file (a size or `auto`; a path is CheckFile's).
void CheckSettingValue(absl::string_view value) {
  if (value != "auto" && (value.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(value[0])))) return;
  absl::StatusOr<ThresholdSetting> setting = ParseThresholdSetting(value, 65536);
  if (!setting.ok()) return;
  CHECK(setting->mode != ThresholdSetting::Mode::kFile || ParseByteSize(value).ok() == false);
  CHECK(setting->table.default_bytes <= transport::kMaxCallBytes);
}

}  // namespace
}  // namespace rplasma::fetch

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  rplasma::fetch::CheckFile(input);
  const absl::string_view first_line = input.substr(0, input.find('\n'));
  rplasma::fetch::CheckByteSize(first_line);
  rplasma::fetch::CheckSettingValue(first_line);
  CHECK(absl::StartsWith(first_line, rplasma::fetch::NodeNameOfId(first_line)));
  return 0;
}
