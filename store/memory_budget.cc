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

absl::StatusOr<uint64_t> UsableArenaBytes(const MemoryTexts& texts, uint64_t hugepage_size) {
  if (hugepage_size != 0) {
    uint64_t free_pages = 0, reserved = 0;
    if (!texts.free_hugepages.empty()) {
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(texts.free_hugepages), &free_pages)) {
        return MakeError(ErrorCode::kInternal, absl::StrCat("free_hugepages: not a number: ", texts.free_hugepages));
      }
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(texts.resv_hugepages), &reserved)) reserved = 0;
    } else {
      ASSIGN_OR_RETURN(uint64_t default_size, MeminfoBytes(texts.meminfo, "Hugepagesize"));
      if (default_size != hugepage_size) {
        return MakeError(ErrorCode::kInternal,
                         absl::StrCat("no free page count for huge pages of ", hugepage_size, " bytes"));
      }
      ASSIGN_OR_RETURN(free_pages, MeminfoBytes(texts.meminfo, "HugePages_Free"));
      // Pages a mapping reserved but has not touched yet still count as free.
      reserved = MeminfoBytes(texts.meminfo, "HugePages_Rsvd").value_or(0);
    }
    return (free_pages - std::min(reserved, free_pages)) * hugepage_size;
  }
  ASSIGN_OR_RETURN(uint64_t available, MeminfoBytes(texts.meminfo, "MemAvailable"));
  uint64_t max = 0, current = 0;
  if (absl::SimpleAtoi(absl::StripAsciiWhitespace(texts.cgroup_max), &max) &&
      absl::SimpleAtoi(absl::StripAsciiWhitespace(texts.cgroup_current), &current)) {
    available = std::min(available, max > current ? max - current : 0);
  }
  return available - std::min(available / 8, kMaxReserve);
}

absl::Status CheckArenaFits(uint64_t bytes, uint64_t hugepage_size, const MemoryTexts& texts) {
  ASSIGN_OR_RETURN(uint64_t usable, UsableArenaBytes(texts, hugepage_size));
  const bool hugepages = hugepage_size != 0;
  if (bytes <= usable) return absl::OkStatus();
  return MakeError(ErrorCode::kOutOfMemory,
                   absl::StrCat("--memory ", bytes, " bytes: this host",
                                hugepages ? absl::StrCat("'s free huge pages of ", hugepage_size, " bytes") : "",
                                " can back only ", usable, " bytes",
                                hugepages ? ""
                                          : " (MemAvailable or the cgroup's memory.max - memory.current, "
                                            "less a reserve for the rest of the host)",
                                "; refusing to start rather than have the OOM killer end other processes"));
}

absl::StatusOr<MemoryTexts> ReadMemoryTexts(uint64_t hugepage_size) {
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
  if (hugepage_size != 0) {
    const std::string pool = absl::StrCat("/sys/kernel/mm/hugepages/hugepages-", hugepage_size >> 10, "kB");
    texts.free_hugepages = ReadText(pool + "/free_hugepages");
    texts.resv_hugepages = ReadText(pool + "/resv_hugepages");
    if (texts.free_hugepages.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat("--hugepages: this kernel offers no huge pages of ",
                                                                 hugepage_size, " bytes (no ", pool, ")"));
    }
  }
  return texts;
}

absl::StatusOr<uint64_t> ReadDefaultHugepageSize() {
  const std::string meminfo = ReadText("/proc/meminfo");
  absl::StatusOr<uint64_t> size = MeminfoBytes(meminfo, "Hugepagesize");
  if (!size.ok() || *size == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "--hugepages on: this kernel has no huge pages (no Hugepagesize)");
  }
  return size;
}

}  // namespace rplasma
