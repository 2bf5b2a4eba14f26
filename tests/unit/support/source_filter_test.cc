#include "tests/support/source_filter.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma::testing {
namespace {

using ::testing::HasSubstr;

TEST(MatchesGtestFilterTest, FollowsGtestPatterns) {
  EXPECT_TRUE(MatchesGtestFilter("Suite.Name", ""));
  EXPECT_TRUE(MatchesGtestFilter("Suite.Name", "*"));
  EXPECT_TRUE(MatchesGtestFilter("Suite.Name", "Suite.*"));
  EXPECT_TRUE(MatchesGtestFilter("Suite.Name", "Other.*:Suite.N?me"));
  EXPECT_TRUE(MatchesGtestFilter("Prefix/Suite.Name/3", "*Suite.*"));
  EXPECT_FALSE(MatchesGtestFilter("Suite.Name", "Suite"));
  EXPECT_FALSE(MatchesGtestFilter("Suite.Name", "Suite.Name?"));
  EXPECT_FALSE(MatchesGtestFilter("Suite.Name", "Other.*"));
  EXPECT_FALSE(MatchesGtestFilter("Suite.Name", "-Suite.*"));
  EXPECT_FALSE(MatchesGtestFilter("Suite.Name", "*-*Name"));
  EXPECT_TRUE(MatchesGtestFilter("Suite.Name", "S*e.*e-Other.*"));
  EXPECT_TRUE(MatchesGtestFilter("aXbXc", "a*b*c"));
  EXPECT_FALSE(MatchesGtestFilter("aXbXd", "a*b*c"));
}

const std::vector<RegisteredTest> kTests = {
    {"Fetch.One", "/src/tests/integration/manager_fetch_test.cc"},
    {"Fetch.Two", "/src/tests/integration/manager_fetch_test.cc"},
    {"Fault.Kill", "/src/tests/integration/manager_fault_test.cc"},
    {"Cluster.Up", "manager_redis_cluster_test.cc"},
};
constexpr char kAll[] = "manager_fetch_test.cc,manager_fault_test.cc,manager_redis_cluster_test.cc";

TEST(SourceFilterTest, RunsTheTestsOfItsFilesOnly) {
  EXPECT_THAT(SourceFilter(kTests, "manager_fetch_test.cc", kAll, "*"),
              IsOkAndHolds(std::string("Fetch.One:Fetch.Two")));
  EXPECT_THAT(SourceFilter(kTests, "manager_fault_test.cc,manager_redis_cluster_test.cc", kAll, ""),
              IsOkAndHolds(std::string("Fault.Kill:Cluster.Up")));
}

TEST(SourceFilterTest, KeepsTheUsersFilter) {
  EXPECT_THAT(SourceFilter(kTests, "manager_fetch_test.cc", kAll, "*Two"), IsOkAndHolds(std::string("Fetch.Two")));
  EXPECT_THAT(SourceFilter(kTests, "manager_fetch_test.cc", kAll, "Fault.*"), IsOkAndHolds(std::string("-*")));
}

TEST(SourceFilterTest, ATestOfAFileNoCtestTestNamesIsAnError) {
  absl::StatusOr<std::string> filter =
      SourceFilter(kTests, "manager_fetch_test.cc", "manager_fetch_test.cc,manager_fault_test.cc", "*");
  EXPECT_THAT(filter, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(filter.status().message(), HasSubstr("Cluster.Up"));
}

TEST(SourceFilterTest, AFileWithNoTestIsAnError) {
  EXPECT_THAT(SourceFilter(kTests, "manager_fetch_tset.cc", kAll, "*"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace rplasma::testing
