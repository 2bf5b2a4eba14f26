// TransportOptions checks that concern the verbs transport (host-runnable: no device needed).
#include <gtest/gtest.h>

#include "manager/transport/transport.h"
#include "manager/transport/verbs/endpoint.h"
#include "tests/support/status_matchers.h"

namespace rplasma::transport {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(VerbsOptionsTest, DefaultCqSpinIsAShortValidWindow) {
  TransportOptions o;
  EXPECT_OK(o.Validate());
  EXPECT_GT(o.cq_spin, absl::ZeroDuration());
  EXPECT_LE(o.cq_spin, absl::Milliseconds(1));
}

TEST(VerbsOptionsTest, CqSpinOfZeroMeansBlockAtOnceAndIsValid) {
  TransportOptions o;
  o.cq_spin = absl::ZeroDuration();
  EXPECT_OK(o.Validate());
  o.cq_spin = absl::Milliseconds(10);
  EXPECT_OK(o.Validate());
}

TEST(VerbsOptionsTest, NegativeOrHugeOrInfiniteCqSpinIsRefused) {
  for (absl::Duration bad : {absl::Microseconds(-1), absl::Milliseconds(10) + absl::Nanoseconds(1), absl::Seconds(5),
                             absl::InfiniteDuration(), -absl::InfiniteDuration()}) {
    TransportOptions o;
    o.cq_spin = bad;
    EXPECT_THAT(o.Validate(), HasErrorCode(ErrorCode::kInvalidArgument)) << bad;
  }
}

TEST(VerbsOptionsTest, AdaptiveSpinWindowGrowsToSixteenTimesCqSpinButNotPastTwoMilliseconds) {
  EXPECT_EQ(verbs::SpinWindowCap(absl::ZeroDuration()), absl::ZeroDuration());
  EXPECT_EQ(verbs::SpinWindowCap(absl::Microseconds(50)), absl::Microseconds(800));
  EXPECT_EQ(verbs::SpinWindowCap(absl::Microseconds(500)), absl::Milliseconds(2));
  EXPECT_EQ(verbs::SpinWindowCap(absl::Milliseconds(10)), absl::Milliseconds(10));
}

}  // namespace
}  // namespace rplasma::transport
