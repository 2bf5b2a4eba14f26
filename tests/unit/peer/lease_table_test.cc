#include "manager/peer/lease_table.h"

#include <memory>

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace rplasma::peer {
namespace {

using ::rplasma::testing::HasErrorCode;

// Counts how many pinned objects were released.
class CountingPin : public PinnedObject {
 public:
  explicit CountingPin(int* released) : released_(released) {}
  ~CountingPin() override { ++*released_; }
  const ObjectInfo& info() const override { return info_; }
  const uint8_t* base() const override { return nullptr; }

 private:
  int* released_;
  ObjectInfo info_;
};

const absl::Time kT0 = absl::FromUnixSeconds(1000);
const transport::RemoteRegion kRegion{4096, 1000, 7};

LeaseTable MakeTable() { return LeaseTable(LeaseTableOptions{absl::Seconds(10), 3}); }

TEST(LeaseTableTest, ReadInsideALiveLeaseOfTheSameConnectionIsAllowed) {
  int released = 0;
  LeaseTable table = MakeTable();
  ASSERT_OK_AND_ASSIGN(uint64_t lease, table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0));
  EXPECT_NE(lease, 0u);
  EXPECT_TRUE(table.AllowRead(1, kRegion, kT0));
  EXPECT_TRUE(table.AllowRead(1, {4096 + 100, 900, 7}, kT0));
  EXPECT_FALSE(table.AllowRead(2, kRegion, kT0)) << "another connection";
  EXPECT_FALSE(table.AllowRead(1, {4096, 1001, 7}, kT0)) << "past the end";
  EXPECT_FALSE(table.AllowRead(1, {4095, 10, 7}, kT0)) << "before the start";
  EXPECT_FALSE(table.AllowRead(1, {4096, 10, 8}, kT0)) << "another rkey";
  EXPECT_FALSE(table.AllowRead(1, {4096 + 500, ~uint64_t{0}, 7}, kT0)) << "overflowing length";
  EXPECT_EQ(released, 0);
}

TEST(LeaseTableTest, UnpinOnlyByTheOwningConnectionReleasesTheReference) {
  int released = 0;
  LeaseTable table = MakeTable();
  ASSERT_OK_AND_ASSIGN(uint64_t lease, table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0));
  EXPECT_FALSE(table.Remove(2, lease));
  EXPECT_EQ(released, 0);
  EXPECT_TRUE(table.Remove(1, lease));
  EXPECT_EQ(released, 1);
  EXPECT_FALSE(table.Remove(1, lease)) << "twice";
  EXPECT_FALSE(table.AllowRead(1, kRegion, kT0));
}

TEST(LeaseTableTest, ExpiredLeasesAreReleasedAndNoLongerAllowReads) {
  int released = 0;
  LeaseTable table = MakeTable();
  ASSERT_OK(table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0).status());
  ASSERT_OK(table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0 + absl::Seconds(5)).status());
  EXPECT_FALSE(table.AllowRead(1, kRegion, kT0 + absl::Seconds(20)));
  EXPECT_EQ(table.Expire(kT0 + absl::Seconds(9)), 0u);
  EXPECT_EQ(table.Expire(kT0 + absl::Seconds(10)), 1u);
  EXPECT_EQ(released, 1);
  EXPECT_TRUE(table.AllowRead(1, kRegion, kT0 + absl::Seconds(12)));
  EXPECT_EQ(table.Expire(kT0 + absl::Seconds(15)), 1u);
  EXPECT_EQ(released, 2);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.expired_total(), 2u);
}

TEST(LeaseTableTest, DisconnectDropsOnlyThatConnectionsLeases) {
  int released = 0;
  LeaseTable table = MakeTable();
  ASSERT_OK(table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0).status());
  ASSERT_OK(table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0).status());
  ASSERT_OK(table.Add(2, kRegion, std::make_unique<CountingPin>(&released), kT0).status());
  EXPECT_EQ(table.DropConnection(1), 2u);
  EXPECT_EQ(released, 2);
  EXPECT_TRUE(table.AllowRead(2, kRegion, kT0));
  EXPECT_EQ(table.size(), 1u);
}

TEST(LeaseTableTest, TooManyLeasesForOneConnectionAreRefusedAndReleased) {
  int released = 0;
  LeaseTable table = MakeTable();
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0).status());
  }
  EXPECT_THAT(table.Add(1, kRegion, std::make_unique<CountingPin>(&released), kT0),
              HasErrorCode(ErrorCode::kOutOfMemory));
  EXPECT_EQ(released, 1) << "the refused pin's reference is dropped";
  EXPECT_OK(table.Add(2, kRegion, std::make_unique<CountingPin>(&released), kT0).status());
}

}  // namespace
}  // namespace rplasma::peer
