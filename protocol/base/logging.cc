#include "protocol/base/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <cctype>
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
    if (env == nullptr || *env == '\0') return static_cast<int>(INFO);
    if (std::optional<Severity> parsed = ParseLogLevel(env)) return static_cast<int>(*parsed);
    // Said once: this runs once per process (a function-local static).
    std::string warning = std::string("rplasma: RPLASMA_LOG_LEVEL='") + env +
                          "' is not a log level (debug, info, warning, error, fatal or 0..3); using info\n";
    ssize_t ignored = ::write(STDERR_FILENO, warning.data(), warning.size());
    (void)ignored;
    return static_cast<int>(INFO);
  }();
  return level;
}

}  // namespace

std::optional<Severity> ParseLogLevel(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "debug" || lower == "info" || lower == "0") return INFO;
  if (lower == "warning" || lower == "warn" || lower == "1") return WARNING;
  if (lower == "error" || lower == "2") return ERROR;
  if (lower == "fatal" || lower == "3") return FATAL;
  return std::nullopt;
}

bool ShouldLog(Severity severity) { return severity >= FATAL || severity >= MinSeverity(); }

LogMessage::LogMessage(const char* file, int line, Severity severity) : file_(file), line_(line), severity_(severity) {}

LogMessage::~LogMessage() {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  struct tm tm;
  localtime_r(&tv.tv_sec, &tm);
  const char* base = std::strrchr(file_, '/');
  base = base != nullptr ? base + 1 : file_;
  char prefix[64];
  std::snprintf(prefix, sizeof(prefix), "%c %02d:%02d:%02d.%03d %d ", "IWEF"[severity_], tm.tm_hour, tm.tm_min,
                tm.tm_sec, static_cast<int>(tv.tv_usec / 1000), static_cast<int>(getpid()));
  std::string out = std::string(prefix) + base + ":" + std::to_string(line_) + "] " + stream_.str() + "\n";
  // One write(2) so lines from several threads or processes do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());
  (void)ignored;
  if (severity_ == FATAL) std::abort();
}

}  // namespace rplasma::logging
