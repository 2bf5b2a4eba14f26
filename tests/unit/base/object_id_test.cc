#include "protocol/base/object_id.h"

#include <gtest/gtest.h>

#include "absl/container/flat_hash_set.h"
#include "tests/support/status_matchers.h"

namespace rplasma {
namespace {

using ::rplasma::testing::HasErrorCode;

TEST(ObjectIDTest, HexRoundTrips) {
  ObjectID id = ObjectID::Random();
  ASSERT_OK_AND_ASSIGN(ObjectID back, ObjectID::FromHex(id.Hex()));
  EXPECT_EQ(id, back);
  EXPECT_EQ(id.Hex().size(), 40u);
}

TEST(ObjectIDTest, MalformedHexIsRejected) {
  EXPECT_THAT(ObjectID::FromHex("abc"), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ObjectID::FromHex(std::string(40, 'z')), HasErrorCode(ErrorCode::kInvalidArgument));
  EXPECT_THAT(ObjectID::FromBinary("short"), HasErrorCode(ErrorCode::kInvalidArgument));
}

TEST(ObjectIDTest, LabelsAreDeterministicAndDistinct) {
  EXPECT_EQ(ObjectID::FromLabel("a"), ObjectID::FromLabel("a"));
  absl::flat_hash_set<ObjectID> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(ObjectID::FromLabel("obj-" + std::to_string(i)));
  EXPECT_EQ(seen.size(), 10000u);
}

}  // namespace
}  // namespace rplasma
