#include "protocol/base/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace rplasma::logging {
namespace {

int MinSeverity() {
  static const int level = [] {
    const char* env = std::getenv("RPLASMA_LOG_LEVEL");
    return env != nullptr ? std::atoi(env) : 0;
  }();
  return level;
}

}  // namespace

bool ShouldLog(Severity severity) { return severity >= FATAL || severity >= MinSeverity(); }

LogMessage::LogMessage(const char* file, int line, Severity severity)
    : file_(file), line_(line), severity_(severity) {}

LogMessage::~LogMessage() {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  struct tm tm;
  localtime_r(&tv.tv_sec, &tm);
  const char* base = std::strrchr(file_, '/');
  base = base != nullptr ? base + 1 : file_;
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "%c %02d:%02d:%02d.%03d %d ", "IWEF"[severity_], tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(tv.tv_usec / 1000), static_cast<int>(getpid()));
  std::string out = std::string(prefix) + base + ":" + std::to_string(line_) + "] " + stream_.str() + "\n";
  // One write(2) so lines from several threads or processes do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());
  (void)ignored;
  if (severity_ == FATAL) std::abort();
}

}  // namespace rplasma::logging
