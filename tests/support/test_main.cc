// main() of every rplasma_test executable: gtest's, plus the per-file selection of an executable
// that holds several test files (source_filter.h).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/source_filter.h"

namespace {

std::vector<rplasma::testing::RegisteredTest> RegisteredTests() {
  std::vector<rplasma::testing::RegisteredTest> tests;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(t);
      tests.push_back({std::string(info.test_suite_name()) + "." + info.name(), info.file()});
    }
  }
  return tests;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleMock(&argc, argv);
  const char* sources = std::getenv("RPLASMA_TEST_SOURCES");
  if (sources != nullptr && *sources != '\0') {
    const char* all = std::getenv("RPLASMA_TEST_EXECUTABLE_SOURCES");
    absl::StatusOr<std::string> filter =
        rplasma::testing::SourceFilter(RegisteredTests(), sources, all == nullptr ? "" : all, GTEST_FLAG_GET(filter));
    if (!filter.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[0], filter.status().ToString().c_str());
      return 2;
    }
    GTEST_FLAG_SET(filter, *filter);
  }
  return RUN_ALL_TESTS();
}
