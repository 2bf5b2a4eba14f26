#include "store/memory_budget.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "protocol/base/status.h"

namespace rplasma {
namespace {

constexpr uint64_t kMaxReserve = 256ull << 20;

// The value of `key` in /proc/meminfo ("MemAvailable:   123 kB"), in bytes.
absl::StatusOr<uint64_t> MeminfoBytes(const std::string& meminfo, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    const bool kb = absl::ConsumeSuffix(&line, "kB");
    uint64_t value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) break;
    return kb ? value << 10 : value;
  }
  return MakeError(ErrorCode::kInternal, absl::StrCat("/proc/meminfo: no ", key));
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

absl::StatusOr<uint64_t> UsableArenaBytes(const MemoryTexts& texts, bool hugepages) {
  if (hugepages) {
    ASSIGN_OR_RETURN(uint64_t free_pages, MeminfoBytes(texts.meminfo, "HugePages_Free"));
    ASSIGN_OR_RETURN(uint64_t page, MeminfoBytes(texts.meminfo, "Hugepagesize"));
    return free_pages * page;
  }
  ASSIGN_OR_RETURN(uint64_t available, MeminfoBytes(texts.meminfo, "MemAvailable"));
  uint64_t max = 0, current = 0;
  if (absl::SimpleAtoi(absl::StripAsciiWhitespace(texts.cgroup_max), &max) &&
      absl::SimpleAtoi(absl::StripAsciiWhitespace(texts.cgroup_current), &current)) {
    available = std::min(available, max > current ? max - current : 0);
  }
  return available - std::min(available / 8, kMaxReserve);
}

absl::Status CheckArenaFits(uint64_t bytes, bool hugepages, const MemoryTexts& texts) {
  ASSIGN_OR_RETURN(uint64_t usable, UsableArenaBytes(texts, hugepages));
  if (bytes <= usable) return absl::OkStatus();
  return MakeError(ErrorCode::kOutOfMemory,
                   absl::StrCat("--memory ", bytes, " bytes: this host", hugepages ? "'s free huge pages" : "",
                                " can back only ", usable, " bytes",
                                hugepages ? "" : " (MemAvailable or the cgroup's memory.max - memory.current, "
                                                 "less a reserve for the rest of the host)",
                                "; refusing to start rather than have the OOM killer end other processes"));
}

absl::StatusOr<MemoryTexts> ReadMemoryTexts() {
  MemoryTexts texts;
  texts.meminfo = ReadText("/proc/meminfo");
  if (texts.meminfo.empty()) return MakeError(ErrorCode::kInternal, "read(/proc/meminfo): empty or unreadable");
  // cgroup v2: the line "0::/path".
  for (absl::string_view line : absl::StrSplit(ReadText("/proc/self/cgroup"), '\n')) {
    if (!absl::ConsumePrefix(&line, "0::")) continue;
    const std::string dir = absl::StrCat("/sys/fs/cgroup", line == "/" ? "" : line);
    texts.cgroup_max = ReadText(dir + "/memory.max");
    texts.cgroup_current = ReadText(dir + "/memory.current");
  }
  return texts;
}

}  // namespace rplasma
