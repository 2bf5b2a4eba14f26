// Several test files in one executable, each its own ctest test (tests/CMakeLists.txt:
// rplasma_test(<name> IN <executable> ...)). A test file costs about 3 CPU-s to compile before
// its first line (loading the precompiled header) and a link; an area's files in one executable
// compile in unity batches of 8 and link once.
//
// The ctest test names its files in RPLASMA_TEST_SOURCES and every file of the executable in
// RPLASMA_TEST_EXECUTABLE_SOURCES (file names, comma-separated); the executable's main
// (test_main.cc) then runs only the tests defined in its files. A test defined anywhere else (a
// header, a file no ctest test names) is an error, not a test that never runs.
#ifndef RPLASMA_TESTS_SUPPORT_SOURCE_FILTER_H_
#define RPLASMA_TESTS_SUPPORT_SOURCE_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rplasma::testing {

struct RegisteredTest {
  std::string full_name;  // "Suite.Name", as --gtest_filter names it
  std::string file;       // where it is defined (__FILE__)
};

// Whether `full_name` passes a --gtest_filter value: "POSITIVE[-NEGATIVE]", each a
// ':'-separated list of patterns with '*' and '?'; an empty POSITIVE passes everything.
bool MatchesGtestFilter(absl::string_view full_name, absl::string_view filter);

// The --gtest_filter value that runs the tests of `tests` defined in one of `sources` and passing
// `user_filter`. kInvalidArgument when a test is defined in none of `executable_sources` or when
// no test is defined in `sources`. Files are compared by their last path component.
absl::StatusOr<std::string> SourceFilter(const std::vector<RegisteredTest>& tests, absl::string_view sources,
                                         absl::string_view executable_sources, absl::string_view user_filter);

}  // namespace rplasma::testing

#endif  // RPLASMA_TESTS_SUPPORT_SOURCE_FILTER_H_
