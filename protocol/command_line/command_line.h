// CommandLine: how rplasma-store, rplasma-manager and rplasma-bench-mpi read their ABSL_FLAGs,
// so the three behave alike (docs/OPERATIONS.md):
//
// - Spelling (flag_spelling.h): dashes or underscores, --flag=value or --flag value, --flagfile.
// - --help (also -h, --helpfull) prints the synopsis and every flag the binary defines (those in
//   rplasma's own sources, not abseil's) with its help text and default; --version prints
//   VersionLine(). Both exit 0.
// - Every flag and its value are checked before abseil sees them, so an unknown flag or a bad
//   value is reported under the name the user typed ("rplasma-store: --partial-frame-timeout:
//   'soon' is not a duration"); then the binary exits 2.
//
// Values that abseil keeps as strings (sizes) are converted by the binary; ByteSize() and
// Duration() parse them with the one syntax (byte_size.h, absl durations) and name the flag as
// typed in the error.
//
// Not thread-safe: call ParseOrExit from main, before any thread starts.
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_COMMAND_LINE_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_COMMAND_LINE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rplasma {

class CommandLine {
 public:
  // `program` is the binary's name ("rplasma-store"), `synopsis` the line after "usage: ".
  // Parses argv into the ABSL_FLAGs or exits (see above). argv[0] is not an operand.
  static CommandLine ParseOrExit(int argc, char** argv, absl::string_view program, absl::string_view synopsis);

  // The arguments that are not flags, in order (everything after a "--" among them).
  const std::vector<std::string>& operands() const { return operands_; }

  // The flag `name` (abseil's spelling, "max_output_bytes") as the user typed it
  // ("--max-output-bytes" or "--max_output_bytes"); "--max-output-bytes" if it was not given.
  std::string Spelling(absl::string_view name) const;

  // ParseByteSize / absl::ParseDuration of `text`, the value of flag `name`; errors say
  // "<Spelling(name)>: ...".
  absl::StatusOr<uint64_t> ByteSize(absl::string_view name, absl::string_view text) const;
  absl::StatusOr<absl::Duration> Duration(absl::string_view name, absl::string_view text) const;

  // Prints "<program>: <message>" to stderr and exits 2 (a usage error).
  [[noreturn]] void ExitWithUsageError(const absl::Status& status) const;

 private:
  explicit CommandLine(std::string program) : program_(std::move(program)) {}

  std::string program_;
  std::vector<std::string> operands_;
  std::map<std::string, std::string, std::less<>> spelled_;  // abseil name -> as typed
};

// The --help text of a binary with ABSL_FLAGs: "usage: <synopsis>", then every flag defined in
// rplasma's own sources, sorted, each with its default and help text, then --flagfile, --help
// and --version. Exposed for tests.
std::string CommandLineHelp(absl::string_view synopsis);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_COMMAND_LINE_H_
