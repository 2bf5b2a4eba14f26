#include "tests/support/source_filter.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace rplasma::testing {
namespace {

// gtest's wildcard match: '*' any run of characters, '?' any one.
bool MatchesPattern(absl::string_view name, absl::string_view pattern) {
  size_t n = 0, p = 0;
  size_t star = absl::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++n;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool MatchesAny(absl::string_view name, absl::string_view patterns) {
  for (absl::string_view pattern : absl::StrSplit(patterns, ':', absl::SkipEmpty())) {
    if (MatchesPattern(name, pattern)) return true;
  }
  return false;
}

absl::string_view FileName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

absl::flat_hash_set<absl::string_view> FileNames(absl::string_view list) {
  absl::flat_hash_set<absl::string_view> names;
  for (absl::string_view file : absl::StrSplit(list, ',', absl::SkipEmpty())) names.insert(FileName(file));
  return names;
}

}  // namespace

bool MatchesGtestFilter(absl::string_view full_name, absl::string_view filter) {
  const size_t dash = filter.find('-');
  const absl::string_view positive = filter.substr(0, dash);
  const absl::string_view negative = dash == absl::string_view::npos ? absl::string_view() : filter.substr(dash + 1);
  if (!positive.empty() && !MatchesAny(full_name, positive)) return false;
  return !MatchesAny(full_name, negative);
}

absl::StatusOr<std::string> SourceFilter(const std::vector<RegisteredTest>& tests, absl::string_view sources,
                                         absl::string_view executable_sources, absl::string_view user_filter) {
  const absl::flat_hash_set<absl::string_view> mine = FileNames(sources);
  const absl::flat_hash_set<absl::string_view> all = FileNames(executable_sources);
  std::vector<absl::string_view> selected;
  bool any_mine = false;
  for (const RegisteredTest& test : tests) {
    const absl::string_view file = FileName(test.file);
    if (!all.contains(file)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "test ", test.full_name, " is defined in ", test.file,
          ", which no ctest test of this executable names (RPLASMA_TEST_EXECUTABLE_SOURCES=", executable_sources,
          "): it would never run"));
    }
    if (!mine.contains(file)) continue;
    any_mine = true;
    if (MatchesGtestFilter(test.full_name, user_filter)) selected.push_back(test.full_name);
  }
  if (!any_mine) {
    return absl::InvalidArgumentError(
        absl::StrCat("no test of this executable is defined in RPLASMA_TEST_SOURCES=", sources));
  }
  // A user's filter that leaves none runs none, as gtest's own filter does.
  if (selected.empty()) return std::string("-*");
  return absl::StrJoin(selected, ":");
}

}  // namespace rplasma::testing
