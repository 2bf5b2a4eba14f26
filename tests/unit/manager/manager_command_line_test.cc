// rplasma-manager's command line: --pin-threshold and its old spelling --rdma-threshold.
#include "manager/daemon/manager_command_line.h"

#include <string>

#include <gtest/gtest.h>

#include "manager/manager_options.h"
#include "tests/support/status_matchers.h"

namespace rplasma::manager {
namespace {

TEST(ResolvePinThresholdTest, NeitherGivenIsTheManagerDefault) {
  ASSERT_OK_AND_ASSIGN(std::string threshold, ResolvePinThreshold("", ""));
  EXPECT_EQ(threshold, ManagerOptions().pin_threshold);
  EXPECT_EQ(threshold, "65536");
}

TEST(ResolvePinThresholdTest, PinThresholdAloneIsTaken) {
  ASSERT_OK_AND_ASSIGN(std::string threshold, ResolvePinThreshold("1MiB", ""));
  EXPECT_EQ(threshold, "1MiB");
}

TEST(ResolvePinThresholdTest, TheOldNameRdmaThresholdAloneStillWorks) {
  ASSERT_OK_AND_ASSIGN(std::string threshold, ResolvePinThreshold("", "auto"));
  EXPECT_EQ(threshold, "auto");
}

TEST(ResolvePinThresholdTest, BothGivenMustAgree) {
  ASSERT_OK_AND_ASSIGN(std::string threshold, ResolvePinThreshold("0", "0"));
  EXPECT_EQ(threshold, "0");
  absl::StatusOr<std::string> conflict = ResolvePinThreshold("0", "4096");
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(conflict.status().message().find("--rdma-threshold=4096"), std::string::npos) << conflict.status();
}

}  // namespace
}  // namespace rplasma::manager
