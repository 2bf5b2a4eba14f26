#include "protocol/command_line/command_line.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "protocol/base/byte_size.h"
#include "protocol/base/status.h"
#include "protocol/command_line/flag_spelling.h"

namespace rplasma {
namespace {

// Flags defined in abseil itself (--flagfile, --fromenv, --helpfull, ...) are not the binary's.
bool IsOwnFlag(const absl::CommandLineFlag& flag) {
  return !absl::StrContains(flag.Filename(), "absl/") && !flag.IsRetired();
}

template <typename T>
bool Parses(const absl::CommandLineFlag& flag, absl::string_view value, std::string* error) {
  if (!flag.IsOfType<T>()) return false;
  T parsed{};
  if (!absl::ParseFlag(value, &parsed, error) && error->empty()) *error = "bad value";
  return true;
}

// Empty if `value` is a valid value for `flag`, else why not. Types abseil parses that are not
// listed here are left to abseil (none of rplasma's flags has one).
std::string CheckValue(const absl::CommandLineFlag& flag, absl::string_view value) {
  std::string error;
  (void)(Parses<bool>(flag, value, &error) || Parses<int>(flag, value, &error) ||
         Parses<int64_t>(flag, value, &error) || Parses<uint32_t>(flag, value, &error) ||
         Parses<uint64_t>(flag, value, &error) || Parses<double>(flag, value, &error) ||
         Parses<absl::Duration>(flag, value, &error));
  if (error.empty()) return "";
  if (flag.IsOfType<absl::Duration>()) return absl::StrCat("'", value, "' is not a duration (e.g. 500ms, 5s, 2m)");
  if (flag.IsOfType<bool>()) return absl::StrCat("'", value, "' is not true or false");
  return absl::StrCat("'", value, "' is not valid (", error, ")");
}

// `text` as lines of at most `width` characters, each starting with `indent`.
std::string Wrap(absl::string_view text, size_t width, absl::string_view indent) {
  std::string out;
  size_t line = 0;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line > 0 && line + 1 + word.size() > width) {
      out += "\n";
      line = 0;
    }
    if (line == 0) {
      absl::StrAppend(&out, indent, word);
      line = indent.size() + word.size();
    } else {
      absl::StrAppend(&out, " ", word);
      line += 1 + word.size();
    }
  }
  return out + "\n";
}

enum class Action { kRun, kHelp, kVersion };

struct Prepared {
  Action action = Action::kRun;
  std::vector<std::string> absl_args;  // argv[0], then "--name=value" for each flag
  std::vector<std::string> operands;
  std::map<std::string, std::string, std::less<>> spelled;
};

absl::StatusOr<Prepared> Prepare(int argc, char** argv) {
  ASSIGN_OR_RETURN(std::vector<std::string> args, ExpandFlagfiles(std::vector<std::string>(argv + 1, argv + argc)));
  Prepared out;
  out.absl_args.push_back(argc > 0 ? argv[0] : "rplasma");
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      out.operands.insert(out.operands.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    std::optional<FlagArg> arg = SplitFlagArg(args[i]);
    if (!arg.has_value()) {
      out.operands.push_back(args[i]);
      continue;
    }
    if (arg->name == "help" || arg->name == "h" || arg->name == "helpfull") {
      out.action = Action::kHelp;
      return out;
    }
    if (arg->name == "version") {
      out.action = Action::kVersion;
      return out;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(arg->name);
    bool negated = false;
    if ((flag == nullptr || flag->IsRetired()) && absl::StartsWith(arg->name, "no") && !arg->value.has_value()) {
      flag = absl::FindCommandLineFlag(arg->name.substr(2));
      negated = flag != nullptr && flag->IsOfType<bool>();
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr || flag->IsRetired()) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(arg->spelled, ": unknown flag (see --help)"));
    }
    out.spelled[std::string(flag->Name())] = arg->spelled;
    std::string value;
    if (negated) {
      value = "false";
    } else if (arg->value.has_value()) {
      value = *arg->value;
    } else if (flag->IsOfType<bool>()) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(arg->spelled, ": needs a value"));
    }
    if (std::string why = CheckValue(*flag, value); !why.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(arg->spelled, ": ", why));
    }
    out.absl_args.push_back(absl::StrCat("--", flag->Name(), "=", value));
  }
  return out;
}

}  // namespace

CommandLine CommandLine::ParseOrExit(int argc, char** argv, absl::string_view program, absl::string_view synopsis) {
  CommandLine command_line{std::string(program)};
  absl::StatusOr<Prepared> prepared = Prepare(argc, argv);
  if (!prepared.ok()) command_line.ExitWithUsageError(prepared.status());
  if (prepared->action == Action::kHelp) {
    std::fputs(CommandLineHelp(synopsis).c_str(), stdout);
    std::exit(0);
  }
  if (prepared->action == Action::kVersion) {
    std::printf("%s\n", VersionLine(program).c_str());
    std::exit(0);
  }
  // Every flag was checked above, so abseil only stores the values.
  std::vector<char*> absl_argv;
  for (std::string& a : prepared->absl_args) absl_argv.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(absl_argv.size()), absl_argv.data());
  command_line.operands_ = std::move(prepared->operands);
  command_line.spelled_ = std::move(prepared->spelled);
  return command_line;
}

std::string CommandLine::Spelling(absl::string_view name) const {
  if (auto it = spelled_.find(name); it != spelled_.end()) return it->second;
  return absl::StrCat("--", DashedFlagName(name));
}

absl::StatusOr<uint64_t> CommandLine::ByteSize(absl::string_view name, absl::string_view text) const {
  absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok())
    return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(Spelling(name), ": ", bytes.status().message()));
  return bytes;
}

absl::StatusOr<absl::Duration> CommandLine::Duration(absl::string_view name, absl::string_view text) const {
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     absl::StrCat(Spelling(name), ": '", text, "' is not a duration (e.g. 500ms, 5s, 2m)"));
  }
  return duration;
}

void CommandLine::ExitWithUsageError(const absl::Status& status) const {
  std::fprintf(stderr, "%s: %s\n", program_.c_str(), std::string(status.message()).c_str());
  std::exit(2);
}

std::string CommandLineHelp(absl::string_view synopsis) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOwnFlag(*flag)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(), [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string out = absl::StrCat("usage: ", synopsis,
                                 "\n\nflags (--some-flag and --some_flag are one flag; "
                                 "--flag=VALUE or --flag VALUE):\n");
  for (const absl::CommandLineFlag* flag : flags) {
    std::string default_value = flag->DefaultValue();
    if (flag->IsOfType<std::string>()) default_value = absl::StrCat("\"", default_value, "\"");
    absl::StrAppend(&out, "  --", DashedFlagName(flag->Name()), "  (default ", default_value, ")\n",
                    Wrap(flag->Help(), 100, "      "));
  }
  absl::StrAppend(&out,
                  "\n  --flagfile=FILE[,FILE]  read flags from FILE: one --flag=value per line, '#' starts a comment\n"
                  "  --help                  this text\n"
                  "  --version               the version and git revision\n"
                  "\nSizes: 4096, 64K, 1.5G (binary units K M G T). Durations: 500ms, 5s, 2m.\n");
  return out;
}

}  // namespace rplasma
