// Flag spelling shared by every rplasma binary, whatever parses the rest of its command line
// (abseil for the daemons, hand-written parsers for rplasma-bench and the CLI):
//
// - A flag is written with dashes, as the docs write it (--max-output-bytes); underscores are
//   accepted too (--max_output_bytes), and so is a single leading dash (-memory, abseil's form).
// - "--flag=value" and "--flag value" both work (a boolean takes only the first form).
// - --flagfile=FILE[,FILE...] reads more arguments from FILE: one argument per line (e.g.
//   "--memory=1G"), surrounding whitespace dropped, blank lines and lines starting with '#'
//   skipped; a --flagfile inside one is read too.
// - "--" ends the flags; what follows is left alone.
//
// Pure functions except ExpandFlagfiles, which reads the files. Thread-safe.
#ifndef RPLASMA_PROTOCOL_COMMAND_LINE_FLAG_SPELLING_H_
#define RPLASMA_PROTOCOL_COMMAND_LINE_FLAG_SPELLING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma {

// One command-line argument that is a flag.
struct FlagArg {
  std::string spelled;               // the name part as typed, dashes included: "--max-output-bytes"
  std::string name;                  // abseil's name for it: "max_output_bytes"
  std::optional<std::string> value;  // the text after '=', if there was one
};

// The parts of `arg` if it is a flag ("-x", "--x", "--x=v"); nullopt for "-", "--" and operands.
std::optional<FlagArg> SplitFlagArg(absl::string_view arg);

std::string UnderscoredFlagName(absl::string_view name);  // "max-output-bytes" -> "max_output_bytes"
std::string DashedFlagName(absl::string_view name);       // "max_output_bytes" -> "max-output-bytes"

// `args` (without argv[0]) with every --flagfile replaced by the arguments its files hold.
// kNotFound / kPermissionDenied naming the file if one cannot be read; kInvalidArgument for a
// --flagfile without a file or nested more than 10 deep.
absl::StatusOr<std::vector<std::string>> ExpandFlagfiles(const std::vector<std::string>& args);

// What --version prints: "rplasma-store 0.1.0 (git 7eb1ec8c0a1f)" (build_info.h).
std::string VersionLine(absl::string_view program);

}  // namespace rplasma

#endif  // RPLASMA_PROTOCOL_COMMAND_LINE_FLAG_SPELLING_H_
