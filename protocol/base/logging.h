// Minimal LOG/CHECK with the names of newer abseil (absl/log), which 20220623 lacks.
//
// LOG(INFO|WARNING|ERROR|FATAL) << ...; writes one line to stderr ("I 12:00:00.123 file:line] msg").
// CHECK(cond) is for internal invariants only — never for bytes that came from outside.
// The minimum severity printed is read once from RPLASMA_LOG_LEVEL: a name (debug, info, warning,
// error, fatal; any case; debug prints what info does, there being nothing below info) or a
// number (0 info .. 3 fatal). Default info; an unknown value is reported once on stderr and the
// default is used.
#ifndef RPLASMA_PROTOCOL_BASE_LOGGING_H_
#define RPLASMA_PROTOCOL_BASE_LOGGING_H_

#include <optional>
#include <sstream>
#include <string_view>

namespace rplasma::logging {

enum Severity { INFO = 0, WARNING = 1, ERROR = 2, FATAL = 3 };

class LogMessage {
 public:
  LogMessage(const char* file, int line, Severity severity);
  ~LogMessage();  // Writes the line; aborts after a FATAL one.
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int line_;
  Severity severity_;
  std::ostringstream stream_;
};

// Swallows a stream expression when the condition is false.
struct Voidify {
  void operator&(std::ostream&) {}
};

bool ShouldLog(Severity severity);

// RPLASMA_LOG_LEVEL's value as a minimum severity; nullopt for an unknown value. Pure.
std::optional<Severity> ParseLogLevel(std::string_view text);

}  // namespace rplasma::logging

#define LOG(severity)                                          \
  !::rplasma::logging::ShouldLog(::rplasma::logging::severity) \
      ? (void)0                                                \
      : ::rplasma::logging::Voidify() &                        \
            ::rplasma::logging::LogMessage(__FILE__, __LINE__, ::rplasma::logging::severity).stream()

#define CHECK(cond)                                                                                   \
  (cond) ? (void)0                                                                                    \
         : ::rplasma::logging::Voidify() &                                                            \
               ::rplasma::logging::LogMessage(__FILE__, __LINE__, ::rplasma::logging::FATAL).stream() \
                   << "Check failed: " #cond " "

#endif  // RPLASMA_PROTOCOL_BASE_LOGGING_H_
