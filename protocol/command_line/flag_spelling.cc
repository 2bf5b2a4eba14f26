#include "protocol/command_line/flag_spelling.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

#include "protocol/base/status.h"
#include "protocol/command_line/build_info.h"

namespace rplasma {
namespace {

constexpr int kMaxFlagfileDepth = 10;

absl::StatusOr<std::string> ReadFlagfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoError("open", absl::StrCat("--flagfile ", path), errno);
  std::stringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return ErrnoError("read", absl::StrCat("--flagfile ", path), errno);
  return contents.str();
}

absl::Status Expand(const std::vector<std::string>& args, int depth, std::vector<std::string>* out) {
  if (depth > kMaxFlagfileDepth) {
    return MakeError(ErrorCode::kInvalidArgument, "--flagfile: nested more than 10 deep (does a file include itself?)");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      out->insert(out->end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const std::optional<FlagArg> flag = SplitFlagArg(args[i]);
    if (!flag.has_value() || flag->name != "flagfile") {
      out->push_back(args[i]);
      continue;
    }
    std::string files;
    if (flag->value.has_value()) {
      files = *flag->value;
    } else if (i + 1 < args.size()) {
      files = args[++i];
    }
    if (files.empty()) return MakeError(ErrorCode::kInvalidArgument, absl::StrCat(flag->spelled, ": needs a file"));
    for (absl::string_view file : absl::StrSplit(files, ',', absl::SkipEmpty())) {
      ASSIGN_OR_RETURN(std::string contents, ReadFlagfile(std::string(file)));
      std::vector<std::string> lines;
      for (absl::string_view line : absl::StrSplit(contents, '\n')) {
        line = absl::StripAsciiWhitespace(line);
        if (line.empty() || line.front() == '#') continue;
        lines.emplace_back(line);
      }
      RETURN_IF_ERROR(Expand(lines, depth + 1, out));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<FlagArg> SplitFlagArg(absl::string_view arg) {
  if (arg.size() < 2 || arg.front() != '-' || arg == "--") return std::nullopt;
  FlagArg flag;
  absl::string_view spelled = arg;
  if (const size_t eq = arg.find('='); eq != absl::string_view::npos) {
    flag.value = std::string(arg.substr(eq + 1));
    spelled = arg.substr(0, eq);
  }
  absl::string_view name = spelled;
  if (!absl::ConsumePrefix(&name, "--")) absl::ConsumePrefix(&name, "-");
  if (name.empty()) return std::nullopt;
  flag.spelled = std::string(spelled);
  flag.name = UnderscoredFlagName(name);
  return flag;
}

std::string UnderscoredFlagName(absl::string_view name) { return absl::StrReplaceAll(name, {{"-", "_"}}); }

std::string DashedFlagName(absl::string_view name) { return absl::StrReplaceAll(name, {{"_", "-"}}); }

absl::StatusOr<std::vector<std::string>> ExpandFlagfiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  RETURN_IF_ERROR(Expand(args, 0, &out));
  return out;
}

std::string VersionLine(absl::string_view program) {
  return absl::StrCat(program, " ", BuildVersion(), " (git ", BuildGitRevision(), ")");
}

}  // namespace rplasma
