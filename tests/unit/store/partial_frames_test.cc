#include "store/partial_frames.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rplasma {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(PartialFramesTest, AStalledFrameExpiresOnceItsTimeoutHasPassed) {
  PartialFrames frames(absl::Seconds(5));
  frames.Update(1, 100, 0, kT0);
  EXPECT_EQ(frames.NextDeadline(), kT0 + absl::Seconds(5));
  // More bytes of the same frame do not restart its clock.
  frames.Update(1, 200, 0, kT0 + absl::Seconds(3));
  EXPECT_THAT(frames.Expired(kT0 + absl::Seconds(4)), IsEmpty());
  EXPECT_THAT(frames.Expired(kT0 + absl::Seconds(5)), ElementsAre(1u));
  EXPECT_EQ(frames.total_bytes(), 200u);
}

TEST(PartialFramesTest, CompletingAFrameRestartsTheClockAndAnEmptyBufferStopsTracking) {
  PartialFrames frames(absl::Seconds(5));
  frames.Update(1, 100, 0, kT0);
  frames.Update(1, 30, 1, kT0 + absl::Seconds(4));  // one frame done, the next one begun
  EXPECT_EQ(frames.NextDeadline(), kT0 + absl::Seconds(9));
  EXPECT_THAT(frames.Expired(kT0 + absl::Seconds(8)), IsEmpty());
  frames.Update(1, 0, 2, kT0 + absl::Seconds(6));
  EXPECT_EQ(frames.NextDeadline(), std::nullopt);
  EXPECT_EQ(frames.size(), 0u);
  EXPECT_EQ(frames.total_bytes(), 0u);
}

TEST(PartialFramesTest, TotalAndLargestFollowEverySession) {
  PartialFrames frames(absl::Seconds(5));
  EXPECT_EQ(frames.Largest(), std::nullopt);
  frames.Update(1, 100, 0, kT0);
  frames.Update(2, 700, 0, kT0 + absl::Seconds(1));
  frames.Update(3, 50, 0, kT0 + absl::Seconds(2));
  EXPECT_EQ(frames.total_bytes(), 850u);
  EXPECT_EQ(frames.Largest(), 2u);
  frames.Remove(2);
  EXPECT_EQ(frames.total_bytes(), 150u);
  EXPECT_EQ(frames.Largest(), 1u);
  EXPECT_THAT(frames.Expired(kT0 + absl::Seconds(10)), ElementsAre(1u, 3u));
  frames.Remove(1);
  frames.Remove(3);
  frames.Remove(3);  // twice is harmless
  EXPECT_EQ(frames.total_bytes(), 0u);
  EXPECT_EQ(frames.size(), 0u);
}

}  // namespace
}  // namespace rplasma
