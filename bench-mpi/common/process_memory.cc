#include "bench-mpi/common/process_memory.h"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include "protocol/base/status.h"

namespace rplasma::bench {

absl::StatusOr<ProcessMemory> ParseProcStatus(absl::string_view text) {
  ProcessMemory m;
  bool have_rss = false;
  bool have_anon = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(':', 1));
    uint64_t* field = nullptr;
    if (kv.first == "VmRSS") field = &m.vm_rss, have_rss = true;
    if (kv.first == "RssAnon") field = &m.rss_anon, have_anon = true;
    if (kv.first == "RssFile") field = &m.rss_file;
    if (kv.first == "RssShmem") field = &m.rss_shmem;
    if (field == nullptr) continue;
    absl::string_view value = absl::StripAsciiWhitespace(kv.second);
    value = absl::StripSuffix(value, "kB");
    uint64_t kib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &kib)) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrFormat("proc status: bad line '%s'", line));
    }
    *field = kib * 1024;
  }
  if (!have_rss || !have_anon) {
    return MakeError(ErrorCode::kInvalidArgument, "proc status: no VmRSS/RssAnon lines");
  }
  return m;
}

absl::StatusOr<ProcessMemory> ReadProcessMemory(pid_t pid) {
  std::string path = absl::StrFormat("/proc/%d/status", pid);
  std::ifstream in(path);
  if (!in) return ErrnoError("open", path, errno);
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseProcStatus(ss.str());
}

}  // namespace rplasma::bench
